//! The command-line surface. Each subcommand lives in its own module under `cmd/`.

use clap::{Parser, Subcommand};

use crate::setup::GlobalArgs;

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

/// The command line of `sandgate exec` alone: [`Cli`] with only that
/// subcommand, so that the parser for a gated command is built without the
/// whole command tree. Its arguments are the same types with the same
/// attributes, so whatever it accepts [`Cli`] accepts with the same values;
/// for anything else (another subcommand, `--help`, an error) the caller
/// falls back to [`Cli`], which gives the answer and the messages.
#[derive(Debug, Parser)]
#[command(name = "sandgate", version, about, propagate_version = true)]
pub struct ExecCli {
    /// Options shared by every subcommand.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The one subcommand.
    #[command(subcommand)]
    pub command: ExecOnly,
}

/// The subcommands of [`ExecCli`].
#[derive(Debug, Subcommand)]
pub enum ExecOnly {
    /// Run one command through the gate (prompting on ASK), then pass on its exit code.
    Exec(crate::cmd::exec::ExecArgs),
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
    /// Show the open questions of running `sandgate run` sessions, each whole, and answer them.
    Answer(crate::cmd::answer::AnswerArgs),
    /// One question of a run in a window of its own (started by `sandgate run`).
    #[command(hide = true)]
    Question(crate::cmd::answer::QuestionArgs),
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
    /// Stand between an editor and an ACP agent: relay, answer from the policy, ask in the editor.
    Acp(crate::acp::AcpArgs),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `exec` parsed by the narrow parser, as text, or `None` when it refuses.
    fn narrow(args: &[&str]) -> Option<String> {
        let cli = ExecCli::try_parse_from(args).ok()?;
        let ExecOnly::Exec(exec) = cli.command;
        Some(format!("{:?} {exec:?}", cli.global))
    }

    /// The same command line parsed by the full parser.
    fn full(args: &[&str]) -> Option<String> {
        let cli = Cli::try_parse_from(args).ok()?;
        match cli.command {
            Command::Exec(exec) => Some(format!("{:?} {exec:?}", cli.global)),
            _ => None,
        }
    }

    #[test]
    fn the_exec_parser_accepts_only_what_the_full_parser_accepts_alike() {
        let lines = [
            "exec -- true",
            "exec true",
            "exec git status --short",
            "exec --no-ui --dry-run -- ls -la",
            "exec -- --no-ui",
            "exec ls --no-ui",
            "--config p.yaml exec -- true",
            "--config=p.yaml --local-config l.yaml exec x",
            "--no-sandbox --json --cwd /tmp exec x",
            "exec --json --cwd /tmp -- x",
            "exec --config exec exec",
            "exec --dry-run exec",
            // Refused by both, or not `exec` at all: the full parser answers.
            "exec",
            "exec --help",
            "exec --version",
            "--help exec x",
            "--version exec",
            "check exec",
            "policy show exec",
            "--bogus exec x",
            "exec --bogus x",
            "exe x",
        ];
        for line in lines {
            let args: Vec<&str> = std::iter::once("sandgate").chain(line.split(' ')).collect();
            let narrow = narrow(&args);
            if narrow.is_some() {
                assert_eq!(narrow, full(&args), "{line:?}");
            }
        }
        assert!(narrow(&["sandgate", "exec", "--", "true"]).is_some());
        assert!(narrow(&["sandgate", "check", "exec"]).is_none());
    }
}
