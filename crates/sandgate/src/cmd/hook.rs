//! `sandgate hook claude|codex|gemini` and `sandgate hook install|uninstall AGENT`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::cli::GlobalArgs;
use crate::hook::install::{self, Outcome, Scope};
use crate::hook::Agent;
use crate::{EXIT_CANNOT_CHECK, EXIT_FAILED};

/// The `hook` subcommands.
#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Claude Code's PreToolUse / PermissionRequest hook: payload on stdin, answer on stdout.
    Claude,
    /// Codex CLI's PreToolUse / PermissionRequest hook (Claude Code's wire format).
    Codex,
    /// Gemini CLI's BeforeTool hook.
    Gemini,
    /// Add sandgate's hook to an agent's settings file (additive, idempotent).
    Install(InstallArgs),
    /// Remove sandgate's hook (and only it) from an agent's settings file.
    Uninstall(InstallArgs),
}

/// Which agent, and which of its settings files.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The agent.
    #[arg(value_enum)]
    pub agent: Agent,
    /// The project's settings file (under the working directory).
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// The user's settings file (under the home directory); the default.
    #[arg(long)]
    pub user: bool,
}

/// Run a `hook` subcommand.
pub fn run(global: &GlobalArgs, command: HookCommand) -> ExitCode {
    match command {
        HookCommand::Claude => crate::hook::run(Agent::Claude, global),
        HookCommand::Codex => crate::hook::run(Agent::Codex, global),
        HookCommand::Gemini => crate::hook::run(Agent::Gemini, global),
        HookCommand::Install(args) => edit(global, args, true),
        HookCommand::Uninstall(args) => edit(global, args, false),
    }
}

fn edit(global: &GlobalArgs, args: InstallArgs, add: bool) -> ExitCode {
    let ctx = match crate::setup::context(global) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let scope = if args.project {
        Scope::Project
    } else {
        Scope::User
    };
    let codex_home = std::env::var_os("CODEX_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let target = install::target(
        args.agent,
        scope,
        &ctx.cwd,
        &ctx.home,
        codex_home.as_deref(),
    );
    let result = if add {
        let exe = match std::env::current_exe() {
            Ok(exe) => exe,
            Err(e) => {
                eprintln!("sandgate: cannot find the sandgate executable to install: {e}");
                return ExitCode::from(EXIT_FAILED);
            }
        };
        install::install(
            &target,
            args.agent,
            &install::hook_command(&exe, args.agent),
        )
    } else {
        install::uninstall(&target, args.agent)
    };
    let file = target.file.display();
    let agent = args.agent.display_name();
    match result {
        Ok(outcome) => {
            let message = match (add, outcome) {
                (true, Outcome::Changed) => {
                    format!("installed the sandgate hook for {agent} in {file}")
                }
                (true, Outcome::Unchanged) => {
                    format!("the sandgate hook for {agent} is already installed in {file}")
                }
                (false, Outcome::Changed) => {
                    format!("removed the sandgate hook for {agent} from {file}")
                }
                (false, Outcome::Unchanged) => {
                    format!("no sandgate hook for {agent} in {file}; nothing to remove")
                }
            };
            if global.json {
                let changed = outcome == Outcome::Changed;
                println!(
                    "{}",
                    serde_json::json!({"file": target.file, "changed": changed, "message": message})
                );
            } else {
                println!("{message}");
            }
            ExitCode::SUCCESS
        }
        Err(e @ install::InstallError::Malformed { .. }) => {
            eprintln!("sandgate: {e}");
            ExitCode::from(EXIT_CANNOT_CHECK)
        }
        Err(e) => {
            eprintln!("sandgate: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}
