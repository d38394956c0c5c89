//! `sandgate acp`: stands between an editor and an ACP agent (the Agent
//! Client Protocol: JSON-RPC, one message per line, over the agent's stdio)
//! and gates what the agent does with the same policy as the hooks.
//!
//! The editor starts `sandgate acp -- AGENT ARGS…`; sandgate starts the
//! agent with its stdin and stdout on pipes (stderr stays the editor's) and
//! relays the messages both ways ([`relay`]): unchanged, except that the
//! agent's own permission requests are answered from the policy where it
//! decides, and the file and terminal methods the agent asks the editor to
//! perform are judged first ([`judge`]). Questions sandgate itself asks go
//! to the editor's permission dialog ([`editor`]).
//!
//! **Why serde_json and not the `agent-client-protocol` crate.** The relay
//! must pass every message on as it came, fields it does not know (newer
//! protocol versions, `_meta`, extensions) and messages it cannot parse
//! included, so each message is read as a [`serde_json::Value`] and written
//! back from its own bytes; only half a dozen fields are ever looked at.
//! The crate's typed messages would re-serialise what they pass on, drop
//! what its version does not know, and bring an async runtime and an API
//! that changes between releases for no field the relay needs.
//!
//! The editor closing sandgate's stdin closes the agent's; an agent still
//! running [`GRACE`] later is sent `SIGTERM`, and `SIGKILL` after as long
//! again. Signals sent to sandgate are passed on to the agent, and
//! sandgate exits with the agent's exit code.

pub mod editor;
pub mod frame;
pub mod judge;
pub mod relay;

use std::ffi::OsString;
use std::io::BufReader;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use clap::Args;
use sandgate_confine as confine;

use crate::setup::GlobalArgs;
use crate::{EXIT_CANNOT_CHECK, EXIT_FAILED};

use self::editor::Editor;
use self::frame::{Lines, Out};
use self::relay::{Relay, Side};

/// How long the agent has to end after the editor closed the connection,
/// before it is sent `SIGTERM` (and as long again before `SIGKILL`).
pub const GRACE: Duration = Duration::from_secs(3);

/// Arguments of `sandgate acp`.
#[derive(Debug, Args)]
pub struct AcpArgs {
    /// A workspace root the agent may write, besides the editor's working
    /// directory and the sessions' (repeatable).
    #[arg(long = "workspace", value_name = "DIR")]
    pub workspaces: Vec<PathBuf>,
    /// Never ask through the editor: what would be asked is refused and logged.
    #[arg(long)]
    pub no_ui: bool,
    /// The ACP agent and its arguments (after `--`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "AGENT"
    )]
    pub agent: Vec<OsString>,
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("sandgate: {message}");
    ExitCode::from(EXIT_CANNOT_CHECK)
}

/// Runs `sandgate acp`.
pub fn run(global: &GlobalArgs, args: AcpArgs) -> ExitCode {
    let ctx = match crate::setup::context(global) {
        Ok(ctx) => ctx,
        Err(code) => return code,
    };
    let Some((program, program_args)) = args.agent.split_first() else {
        return fail(
            "no agent to run; usage: sandgate acp [--workspace DIR]... -- AGENT [ARGS]...",
        );
    };
    let no_ui = args.no_ui || crate::prompt::no_ui_by_env();
    let mut command = Command::new(program);
    command
        .args(program_args)
        .current_dir(&ctx.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Err(e) = confine::hold_forwarded(&mut command) {
        eprintln!("sandgate: signals sent to sandgate right at the start may end it: {e}");
    }
    let child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!(
                "sandgate: cannot start `{}`: {e}",
                program.to_string_lossy()
            );
            return ExitCode::from(EXIT_FAILED);
        }
    };
    relay_until_exit(child, global, ctx.cwd.clone(), no_ui)
}

/// Relays between sandgate's stdio and `child`'s until the child ends, and
/// gives its exit code.
fn relay_until_exit(mut child: Child, global: &GlobalArgs, cwd: PathBuf, no_ui: bool) -> ExitCode {
    if let Err(e) = confine::forward_signals(&child) {
        eprintln!("sandgate: signals sent to sandgate will not reach the agent: {e}");
    }
    let (Some(agent_in), Some(agent_out)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return fail("the agent's stdio could not be opened");
    };
    let to_agent = Arc::new(Out::new(Box::new(agent_in)));
    let to_editor = Arc::new(Out::new(Box::new(std::io::stdout())));
    let editor = Arc::new(Editor::new(Arc::clone(&to_editor), no_ui));
    let relay = Arc::new(Relay::new(
        Arc::clone(&to_agent),
        to_editor,
        Arc::clone(&editor),
        global.clone(),
        cwd,
    ));
    let max = frame::max_message();
    let (closed_tx, closed_rx) = mpsc::channel::<()>();
    let from_editor = Arc::clone(&relay);
    std::thread::spawn(move || {
        let mut lines = Lines::new(BufReader::new(std::io::stdin()), max);
        loop {
            match lines.next_line() {
                Ok(Some(line)) => from_editor.line(Side::Editor, line),
                Ok(None) => break,
                Err(e) => {
                    eprintln!("sandgate: cannot read from the editor: {e}");
                    break;
                }
            }
        }
        from_editor.editor.close("the editor closed the connection");
        from_editor.to_agent.close();
        let _ = closed_tx.send(());
    });
    let from_agent = Arc::clone(&relay);
    let agent_reader = std::thread::spawn(move || {
        let mut lines = Lines::new(BufReader::new(agent_out), max);
        while let Ok(Some(line)) = lines.next_line() {
            from_agent.line(Side::Agent, line);
        }
    });
    let status = wait(&mut child, &closed_rx);
    // What the agent wrote before it ended still reaches the editor (unless
    // a process it left behind holds its stdout open).
    let deadline = Instant::now() + Duration::from_secs(1);
    while !agent_reader.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    match status {
        Ok(status) => exit_code(status),
        Err(e) => {
            eprintln!("sandgate: cannot wait for the agent: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// Waits for the agent; once the editor has gone, for [`GRACE`] before
/// `SIGTERM` and as long again before `SIGKILL`.
fn wait(child: &mut Child, closed: &mpsc::Receiver<()>) -> std::io::Result<ExitStatus> {
    let mut since: Option<Instant> = None;
    let mut termed = false;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if since.is_none() && !matches!(closed.try_recv(), Err(mpsc::TryRecvError::Empty)) {
            since = Some(Instant::now());
        }
        if let Some(at) = since {
            if !termed && at.elapsed() >= GRACE {
                signal(child, nix::sys::signal::Signal::SIGTERM);
                termed = true;
            } else if at.elapsed() >= GRACE * 2 {
                let _ = child.kill();
                return child.wait();
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, signal: nix::sys::signal::Signal) {
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal);
    }
}

/// The agent's exit code, or 128 + the signal that ended it.
fn exit_code(status: ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(i32::from(EXIT_FAILED));
    ExitCode::from(u8::try_from(code).unwrap_or(EXIT_FAILED))
}
