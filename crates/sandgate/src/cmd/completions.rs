//! `sandgate completions bash|zsh|fish`.

use std::process::ExitCode;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

/// Print a completion script for a shell.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_parser = ["bash", "zsh", "fish"])]
    pub shell: String,
}

/// Run `completions`.
pub fn run(args: CompletionsArgs) -> ExitCode {
    let shell = match args.shell.as_str() {
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        _ => Shell::Bash,
    };
    let mut command = crate::cli::Cli::command();
    clap_complete::generate(shell, &mut command, "sandgate", &mut std::io::stdout());
    ExitCode::SUCCESS
}
