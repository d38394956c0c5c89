//! The `sandgate` command: a permission gate and sandbox for the file and shell
//! tools of AI coding agents.

#![forbid(unsafe_code)]

mod acp;
mod agentcall;
mod ask;
mod audit;
mod auditlog;
mod cli;
mod cmd;
mod hook;
mod import;
mod mcp;
mod network;
mod program;
mod prompt;
mod runlink;
mod setup;
mod warn;

use std::process::ExitCode;

use clap::Parser;

use crate::hook::Agent;
use crate::setup::GlobalArgs;

pub use setup::{load, Loaded};
pub use warn::warn_sandbox_off;

/// Exit code: a decision was reached, or the work was done.
pub const EXIT_OK: u8 = 0;
/// Exit code: the work failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code: this machine or this input cannot be checked.
pub const EXIT_CANNOT_CHECK: u8 = 2;

fn main() -> ExitCode {
    quiet_when_stdout_closes();
    // This executable is what the agents' hooks start: isolation holds it
    // read-only where it lies in a writable tree.
    sandgate_sandbox::plan::protect_own_executable();
    if let Some((agent, global)) = hook_fast_path() {
        return hook::run(agent, &global);
    }
    if let Some((global, args)) = exec_fast_path() {
        return cmd::exec::run(&global, args);
    }
    let cli = cli::Cli::parse();
    let global = cli.global;
    match cli.command {
        cli::Command::Init(args) => cmd::init::run(&global, args),
        cli::Command::Check(args) => cmd::check::run(&global, args),
        cli::Command::Hook(command) => cmd::hook::run(&global, command),
        cli::Command::Import(args) => cmd::import::run(&global, args),
        cli::Command::Policy(command) => cmd::policy::run(&global, command),
        cli::Command::Completions(args) => {
            cmd::completions::run(args, <cli::Cli as clap::CommandFactory>::command())
        }
        cli::Command::Exec(args) => cmd::exec::run(&global, args),
        cli::Command::Run(args) => cmd::run::run(&global, args),
        cli::Command::Answer(args) => cmd::answer::run(&global, args),
        cli::Command::Question(args) => cmd::answer::question(args),
        cli::Command::Grant(args) => cmd::grant::run(&global, args),
        cli::Command::Detect(args) => cmd::detect::run(&global, args),
        cli::Command::Mcp(args) => cmd::mcp::run(&global, args),
        cli::Command::Audit(command) => cmd::audit::run(&global, command),
        cli::Command::Acp(args) => acp::run(&global, args),
    }
}

/// A reader that goes away (`sandgate policy show | head -1`) ends the command
/// quietly with [`EXIT_FAILED`] instead of the standard library's "failed
/// printing to stdout" panic: the output could not be delivered, and nobody is
/// left to read a message about it. Any other panic keeps its report.
fn quiet_when_stdout_closes() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str))
            .unwrap_or("");
        let broken_pipe = text.contains("Broken pipe") || text.contains("BrokenPipe");
        if broken_pipe && stdout_closed() {
            std::process::exit(i32::from(EXIT_FAILED));
        }
        report(info);
    }));
}

/// Whether the reading end of stdout is gone (a pipe without readers, a
/// socket whose peer hung up).
fn stdout_closed() -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    let stdout = std::io::stdout();
    let mut fds = [PollFd::new(stdout.as_fd(), PollFlags::POLLOUT)];
    poll(&mut fds, PollTimeout::ZERO).is_ok()
        && fds[0]
            .revents()
            .is_some_and(|r| r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP))
}

/// `sandgate [OPTIONS] exec …`, parsed by [`cli::ExecCli`], which knows only
/// that subcommand: building the whole command tree costs more than the
/// gate's decision. `None` (the full parser then runs) unless `exec` is
/// among the arguments and the narrow parser accepts the command line.
fn exec_fast_path() -> Option<(GlobalArgs, cmd::exec::ExecArgs)> {
    if !std::env::args_os().skip(1).any(|a| a == "exec") {
        return None;
    }
    let cli = cli::ExecCli::try_parse().ok()?;
    let cli::ExecOnly::Exec(args) = cli.command;
    Some((cli.global, args))
}

/// The agent hook's command line, recognised before the argument parser is
/// built: the hook is spawned for every tool call, and building the whole
/// command tree costs more than the rest of start-up. Only the exact form
/// `sandgate hook AGENT` with usable `SANDGATE_CONFIG`/`SANDGATE_LOCAL_CONFIG`
/// values takes this path; anything else (an option, an empty variable)
/// goes through the parser, which gives the same result or the error.
fn hook_fast_path() -> Option<(Agent, GlobalArgs)> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != "hook" {
        return None;
    }
    let agent = match args.next()?.to_str()? {
        "claude" => Agent::Claude,
        "codex" => Agent::Codex,
        "gemini" => Agent::Gemini,
        _ => return None,
    };
    if args.next().is_some() {
        return None;
    }
    let path = |name: &str| match std::env::var_os(name) {
        None => Some(None),
        Some(value) if value.is_empty() => None,
        Some(value) => Some(Some(value.into())),
    };
    let global = GlobalArgs {
        config: path("SANDGATE_CONFIG")?,
        local_config: path("SANDGATE_LOCAL_CONFIG")?,
        ..GlobalArgs::default()
    };
    Some((agent, global))
}
