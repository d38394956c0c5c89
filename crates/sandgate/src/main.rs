//! The `sandgate` command: a permission gate and sandbox for the file and shell
//! tools of AI coding agents.

mod audit;
mod cli;
mod cmd;
mod hook;
mod mcp;
mod prompt;
mod setup;
mod warn;

use std::process::ExitCode;

use clap::Parser;

pub use setup::{load, Loaded};
pub use warn::warn_sandbox_off;

/// Exit code: a decision was reached, or the work was done.
pub const EXIT_OK: u8 = 0;
/// Exit code: the work failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code: this machine or this input cannot be checked.
pub const EXIT_CANNOT_CHECK: u8 = 2;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let global = cli.global;
    match cli.command {
        cli::Command::Check(args) => cmd::check::run(&global, args),
        cli::Command::Hook(command) => cmd::hook::run(&global, command),
        cli::Command::Import(args) => cmd::import::run(&global, args),
        cli::Command::Policy(command) => cmd::policy::run(&global, command),
        cli::Command::Completions(args) => cmd::completions::run(args),
        cli::Command::Exec(args) => cmd::exec::run(&global, args),
        cli::Command::Run(args) => cmd::run::run(&global, args),
        cli::Command::Grant(args) => cmd::grant::run(&global, args),
        cli::Command::Detect(args) => cmd::detect::run(&global, args),
        cli::Command::Mcp(args) => cmd::mcp::run(&global, args),
    }
}
