//! The command-line surface. Each subcommand lives in its own module under `cmd/`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// A permission gate and sandbox for the file and shell tools of AI coding agents.
#[derive(Debug, Parser)]
#[command(name = "sandgate", version, about, propagate_version = true)]
pub struct Cli {
    /// Options shared by every subcommand.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every subcommand understands.
#[derive(Debug, Clone, Args, Default)]
pub struct GlobalArgs {
    /// Central policy file (default: ~/.sandgate/permissions.yaml).
    #[arg(long, global = true, env = "SANDGATE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Local (project) policy file (default: ./.sandgate/permissions.yaml).
    #[arg(
        long,
        global = true,
        env = "SANDGATE_LOCAL_CONFIG",
        value_name = "FILE"
    )]
    pub local_config: Option<PathBuf>,
    /// Switch the gate and the sandbox off, whatever the policy files say.
    #[arg(long, global = true)]
    pub no_sandbox: bool,
    /// Working directory that relative paths resolve against (default: the process CWD).
    #[arg(long, global = true, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a commented starter policy (a preset) to the central file, with its JSON Schema.
    Init(crate::cmd::init::InitArgs),
    /// Decide one request: `{"tool": "exec_run", "params": {"command": "git status"}}`.
    Check(crate::cmd::check::CheckArgs),
    /// Agent hooks: gate Claude Code, Codex CLI or Gemini CLI; install or uninstall the hook.
    #[command(subcommand)]
    Hook(crate::cmd::hook::HookCommand),
    /// Convert another tool's permission rules (Claude Code) into sandgate rules.
    Import(crate::cmd::import::ImportArgs),
    /// Show, explain, lint and edit the policy.
    #[command(subcommand)]
    Policy(crate::cmd::policy::PolicyCommand),
    /// Run one command through the gate (prompting on ASK), then pass on its exit code.
    Exec(crate::cmd::exec::ExecArgs),
    /// Run a program (an agent) with the writes of its whole process tree confined.
    Run(crate::cmd::run::RunArgs),
    /// Print a shell completion script.
    Completions(crate::cmd::completions::CompletionsArgs),
    /// Derive the narrowest grant from a loop config, review it, merge it into the harness settings.
    Grant(crate::cmd::grant::GrantArgs),
    /// Run a loop config's script detectors and report each verdict.
    Detect(crate::cmd::detect::DetectArgs),
    /// Read the audit log back: the last records, what was asked most, and the rules that would stop repeated asks.
    #[command(subcommand)]
    Audit(crate::cmd::audit::AuditCommand),
    /// Serve the gated file and exec tools over MCP (stdio, or streamable HTTP with --http).
    Mcp(crate::cmd::mcp::McpArgs),
}
