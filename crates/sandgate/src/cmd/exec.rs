//! `sandgate exec [--no-ui] [--] CMD…`: one command through the gate.
//!
//! The arguments are joined with spaces into one command string, which is
//! gated like an `exec_run` call. An ASK goes to the terminal prompt. An
//! allowed command runs under `/bin/sh -c` in the working directory with
//! stdin, stdout and stderr passed through; sandgate exits with its exit code.
//! A denied command does not run: the reason goes to stderr and the exit code is 1.

use std::path::Path;
use std::process::{Command, ExitCode, ExitStatus};

use clap::Args;
use sandgate_policy::{Decision, Policy, ToolCall, Verdict};
use sandgate_tools::resolver::settle;
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::prompt::TerminalPrompt;
use crate::EXIT_FAILED;

/// The tool name an `exec` is gated and audited as.
const TOOL: &str = "exec_run";

/// Run one command through the gate.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Never prompt: an ASK is an immediate DENY (also `SANDGATE_NO_UI=1`).
    #[arg(long)]
    pub no_ui: bool,
    /// The command and its arguments, joined with spaces and run by `/bin/sh -c`.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<String>,
}

/// Run `exec`.
pub fn run(global: &GlobalArgs, args: ExecArgs) -> ExitCode {
    let command = args.command.join(" ");
    let loaded = match crate::load(global) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let call = ToolCall::new(TOOL, json!({ "command": command }));
    let decision = loaded.policy.evaluate(&call, &loaded.ctx);
    crate::audit::record("exec", TOOL, &decision);
    let decision = match decision.verdict {
        Verdict::Ask => {
            let prompt = TerminalPrompt::new(args.no_ui);
            let settled = settle(&loaded.policy, &loaded.ctx, TOOL, &decision, &prompt);
            crate::audit::record("exec prompt", TOOL, &settled.decision);
            if let Some(Err(e)) = &settled.always {
                eprintln!("sandgate: warning: {e}");
            }
            settled.decision
        }
        _ => decision,
    };
    if decision.verdict != Verdict::Allow {
        report_denied(&decision);
        return ExitCode::from(EXIT_FAILED);
    }
    match spawn(&loaded.policy, &command, &loaded.ctx.cwd) {
        Ok(status) => ExitCode::from(exit_code(status)),
        Err(e) => {
            eprintln!("sandgate: cannot run `{command}`: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn report_denied(decision: &Decision) {
    eprintln!("sandgate: denied: {}", decision.reason);
}

/// Run an allowed command and wait for it: `/bin/sh -c COMMAND` in `cwd`,
/// with stdin, stdout and stderr inherited.
///
/// This is the one place a gated command is started; OS isolation of the
/// command (from `policy.settings().isolation`) hooks in here.
pub fn spawn(policy: &Policy, command: &str, cwd: &Path) -> std::io::Result<ExitStatus> {
    let _ = policy;
    Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .status()
}

/// The exit code sandgate passes on: the command's, or 128 + the signal that ended it.
fn exit_code(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(EXIT_FAILED),
        (None, Some(signal)) => u8::try_from((128 + signal) & 0xff).unwrap_or(EXIT_FAILED),
        (None, None) => EXIT_FAILED,
    }
}
