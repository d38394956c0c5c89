//! `sandgate acp`: stands between an editor and an ACP agent (the Agent
//! Client Protocol: JSON-RPC, one message per line, over the agent's stdio)
//! and gates what the agent does with the same policy as the hooks.
//!
//! The editor starts `sandgate acp -- AGENT ARGS…`; sandgate starts the
//! agent as `sandgate run` starts a program (confined when the workspace is
//! armed; see `crate::cmd::run::run_hosted`), with its stdin and stdout on
//! pipes (stderr stays the editor's), and relays the messages both ways
//! ([`relay`]): unchanged, except that the
//! agent's own permission requests are answered from the policy where it
//! decides, and the file and terminal methods the agent asks the editor to
//! perform are judged first ([`judge`]). Questions sandgate itself asks go
//! to the editor's permission dialog ([`editor`]): the policy's asks about
//! those methods, and the run's questions about writes outside the
//! workspace, in the session whose tool call is in flight (`Asker`).
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
use sandgate_policy::ask::{NoHuman, Question, Resolution, Resolver, SubjectKind, NETWORK_TOOL};

use crate::cmd::run::{Host, RunArgs};
use crate::setup::GlobalArgs;
use crate::EXIT_CANNOT_CHECK;

use self::editor::{About, Editor};
use self::frame::{Lines, Out};
use self::relay::{Relay, Side};

/// How long the agent has to end after the editor closed the connection,
/// before it is sent `SIGTERM` (and as long again before `SIGKILL`).
pub const GRACE: Duration = Duration::from_secs(3);

/// How long a question about a write waits for the agent's tool call to be
/// reported when none is in flight (see `Relay::asking_session_within`).
pub const CALL_WAIT: Duration = Duration::from_secs(1);

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

/// Runs `sandgate acp`: the agent confined as `sandgate run` confines a
/// program (when the workspace is armed), with the editor's working
/// directory and every `--workspace` as the workspace, served by the relay.
pub fn run(global: &GlobalArgs, args: AcpArgs) -> ExitCode {
    let ctx = match crate::setup::context(global) {
        Ok(ctx) => ctx,
        Err(code) => return code,
    };
    if args.agent.is_empty() {
        return fail(
            "no agent to run; usage: sandgate acp [--workspace DIR]... -- AGENT [ARGS]...",
        );
    }
    let no_ui = args.no_ui || crate::prompt::no_ui_by_env();
    let mut workspaces = vec![ctx.cwd.clone()];
    workspaces.extend(args.workspaces);
    let canonical = workspaces
        .iter()
        .map(|w| std::fs::canonicalize(ctx.cwd.join(w)).unwrap_or_else(|_| w.clone()))
        .collect();
    let run_args = RunArgs {
        workspaces,
        no_ui,
        dry_run: false,
        program: args.agent,
    };
    let mut host = Editorial {
        global: global.clone(),
        cwd: ctx.cwd.clone(),
        no_ui,
        workspaces: canonical,
        relay: None,
        closed: None,
        agent_reader: None,
    };
    crate::cmd::run::run_hosted(global, run_args, Some(&mut host))
}

/// The run's host: the editor, over the relay.
struct Editorial {
    global: GlobalArgs,
    cwd: PathBuf,
    no_ui: bool,
    /// The workspaces, canonical.
    workspaces: Vec<PathBuf>,
    relay: Option<Arc<Relay>>,
    /// Told when the editor closes the connection.
    closed: Option<mpsc::Receiver<()>>,
    agent_reader: Option<std::thread::JoinHandle<()>>,
}

impl Host for Editorial {
    fn prepare(&mut self, command: &mut Command) {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
    }

    fn start(&mut self, child: &mut Child) -> Arc<dyn Resolver> {
        let (Some(agent_in), Some(agent_out)) = (child.stdin.take(), child.stdout.take()) else {
            eprintln!("sandgate: the agent's stdio could not be opened");
            let _ = child.kill();
            return Arc::new(NoHuman {
                reason: "the agent's stdio could not be opened".into(),
            });
        };
        let to_agent = Arc::new(Out::new(Box::new(agent_in)));
        let to_editor = Arc::new(Out::new(Box::new(std::io::stdout())));
        let editor = Arc::new(Editor::new(Arc::clone(&to_editor), self.no_ui));
        let relay = Arc::new(Relay::new(
            to_agent,
            to_editor,
            editor,
            self.global.clone(),
            self.cwd.clone(),
            self.workspaces.clone(),
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
        self.agent_reader = Some(std::thread::spawn(move || {
            let mut lines = Lines::new(BufReader::new(agent_out), max);
            while let Ok(Some(line)) = lines.next_line() {
                from_agent.line(Side::Agent, line);
            }
        }));
        self.closed = Some(closed_rx);
        self.relay = Some(Arc::clone(&relay));
        Arc::new(Asker { relay })
    }

    fn supervising(&mut self, grants: sandgate_confine::Grants) {
        if let Some(relay) = &self.relay {
            relay.confined(grants);
        }
    }

    fn wait(&mut self, child: &mut Child) -> std::io::Result<ExitStatus> {
        let status = match &self.closed {
            Some(closed) => wait(child, closed),
            None => child.wait(),
        };
        // What the agent wrote before it ended still reaches the editor
        // (unless a process it left behind holds its stdout open).
        let deadline = Instant::now() + Duration::from_secs(1);
        if let Some(reader) = &self.agent_reader {
            while !reader.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        status
    }
}

/// The run's questions (a write outside the workspace, waiting at its
/// system call) put to the editor, in the session whose tool call is in
/// flight.
struct Asker {
    relay: Arc<Relay>,
}

impl Resolver for Asker {
    fn resolve(&self, question: &Question) -> Resolution {
        let Some((session, tool_call)) = self.relay.asking_session_within(CALL_WAIT) else {
            return Resolution::Unavailable {
                reason: "no ACP session to ask in yet".into(),
            };
        };
        let (kind, paths) = shown(question);
        let about = About {
            session,
            tool_call,
            kind,
            paths,
        };
        self.relay.editor.ask(question, &about)
    }
}

/// How a question of the run is shown in the editor: a path (a write
/// outside the workspace) as an `edit` at that location; a question about
/// the network (a host the allow-list does not list, its tool `network`) as
/// a `fetch`, and anything else as `other`, with no location (the subject
/// is in the title either way).
fn shown(question: &Question) -> (&'static str, Vec<String>) {
    if matches!(question.kind, SubjectKind::Path) {
        ("edit", vec![question.subject.clone()])
    } else if matches!(question.kind, SubjectKind::Host) || question.tool == NETWORK_TOOL {
        ("fetch", Vec::new())
    } else {
        ("other", Vec::new())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn question(tool: &str, kind: SubjectKind, subject: &str) -> Question {
        Question {
            tool: tool.into(),
            kind,
            subject: subject.into(),
            reason: "why".into(),
            timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn a_write_is_an_edit_at_its_path_and_a_host_a_fetch() {
        assert_eq!(
            shown(&question("run", SubjectKind::Path, "/x/a")),
            ("edit", vec!["/x/a".to_string()])
        );
        assert_eq!(
            shown(&question("network", SubjectKind::Host, "example.org:443")),
            ("fetch", Vec::new())
        );
        assert_eq!(
            shown(&question("exec_run", SubjectKind::Command, "ls")),
            ("other", Vec::new())
        );
    }
}
