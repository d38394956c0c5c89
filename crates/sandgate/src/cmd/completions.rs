//! `sandgate completions bash|zsh|fish`.

use std::process::ExitCode;

use clap::Args;
use clap_complete::Shell;

/// Print a completion script for a shell.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_parser = ["bash", "zsh", "fish"])]
    pub shell: String,
}

/// Run `completions` for `command`, the whole command line (`Cli`'s).
pub fn run(args: CompletionsArgs, mut command: clap::Command) -> ExitCode {
    let shell = match args.shell.as_str() {
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        _ => Shell::Bash,
    };
    clap_complete::generate(shell, &mut command, "sandgate", &mut std::io::stdout());
    ExitCode::SUCCESS
}
