//! The link between `sandgate run` and the hooks that run inside it.
//!
//! Inside a run, an agent's hook (`sandgate hook claude|codex|gemini`) and
//! the run's supervisor see the same tool call from two sides: the hook
//! before it runs (the command, its working directory), the supervisor the
//! writes it makes. The run listens on a UNIX socket (named to its program
//! in [`SOCKET_ENV`]) and the hook tells it about each call:
//!
//! - **before** a call: the run works out itself, from the payload and the
//!   policy, which writes the call will make outside the run's allowed set.
//!   If there are any, the person is asked once. For a Claude Code `Bash`
//!   call reported by Claude Code's own hook, in Claude Code's dialog: the
//!   run registers a pending grant (the exact command, its paths, a
//!   deadline of [`GRANT_WINDOW`]) with its exec tracking
//!   ([`sandgate_confine::Lineage`]) and replies [`Reply::ask_in_agent`],
//!   and the hook answers Claude Code `"permissionDecision": "ask"` with
//!   sandgate's reason. After a "Yes", Claude Code spawns its wrapper around
//!   exactly that command as its direct child; the supervisor recognises
//!   that spawn at its first `exec`, binds the grant to it, and its writes
//!   of those paths (and its descendants') pass without a question, once.
//!   After a "No" nothing is spawned and the grant expires unused. Claude
//!   Code's dialog for a hook's question has no "always"; the run's own
//!   question and `sandbox.json` make a grant lasting. For any other call
//!   (Gemini CLI, whose shell calls run under a second `node` in a
//!   session and pseudo-terminal of its own, so that no spawn of a call is
//!   the direct child of the program; Codex CLI, which runs a call its hook
//!   asks about; Claude Code's `Write` and `Edit`, performed by Claude Code
//!   itself), the run asks the person through its own question route,
//!   naming the command and the paths, and answers the hook. "Allow once"
//!   lets those paths be written until that session's call has ended (at
//!   most [`GRANT_WINDOW`]); "always" writes them to `sandbox.json`. The
//!   supervisor then does not ask again about those writes.
//! - once a hook has spoken, a write no one foresaw is refused without a
//!   question (the hook is installed, so the agent's calls are seen before
//!   they run), and **after** a call the hook asks what was refused during
//!   it, to tell the model why ([`Reply::refusals`]).
//! - the hook's audit records, and the compiled policy it could not cache
//!   (sandgate's own files are read-only to the program), are handed to the
//!   run, which writes them.
//!
//! **Nothing that comes over this socket is an answer.** Anything the agent
//! runs can connect to it and send any request. So:
//!
//! - each request arrives with the process id of its sender, attached by
//!   the kernel (`SO_PASSCRED`, read with
//!   [`sandgate_confine::read_line_with_sender`]); it counts as Claude
//!   Code's hook only when that process, or its parent, is Claude Code's own
//!   spawn of `sandgate hook claude`, seen at its first `exec` as a direct
//!   child of the program ([`sandgate_confine::Lineage::from_claude_hook`]).
//!   Any command the agent runs has run `exec` already, and the run's
//!   filters keep anything else from becoming such a child (see
//!   `sandgate_sandbox::supervisor::lineage`). So a forged request never
//!   makes a pending grant: the run asks the person itself, as for any other
//!   agent, and a forged request can at most make the run ask the person a
//!   question the agent could have caused by writing the file, or refuse
//!   writes of its own program;
//! - a pending grant, made by the hook's request, lets nothing through by
//!   itself: only Claude Code's own spawn of exactly that command uses it,
//!   and Claude Code spawns it only after the person said "Yes" in its
//!   dialog (Claude Code 2.1.332 shows a hook's `ask` in every permission
//!   mode, bypass included). A process that `exec`s itself into Claude
//!   Code's wrapper of that command (same process id, parent and arguments,
//!   see the test
//!   `a_bash_call_that_passes_for_claude_codes_spawn_of_another_command_gets_nothing`
//!   in `tests/agent_interactive.rs`) is not at its first `exec`, and gets
//!   nothing; a write of a pending grant's path by any process the grant is
//!   not bound to is asked about by the run itself.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use sandgate_confine::{Lineage, ListKind, RunAnswers, RunPlan, RunPlanExt, SandboxFile, Standing};
use sandgate_policy::ask::{Answer, Question, Resolution, Resolver, SubjectKind};
use sandgate_policy::persist::Effect;
use sandgate_policy::{Access, Context, PartKind, ToolKind};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::agentcall::map;
use crate::setup::GlobalArgs;

/// The variable that names the run's socket to its program.
pub const SOCKET_ENV: &str = "SANDGATE_RUN_SOCKET";

/// How long an "allow once" given before a call lets its writes through
/// when the hook never says the call has ended.
pub const GRANT_WINDOW: Duration = Duration::from_secs(120);

/// The largest request read (a payload carries a whole file for `Write`).
const MAX_REQUEST: u64 = 64 * 1024 * 1024;

/// How many refusals the run keeps for the hooks to report.
const KEPT_REFUSALS: usize = 200;

/// One request of a hook.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// An audit record to append to the run's log.
    Record {
        /// The record, as the hook would have written it.
        line: Value,
    },
    /// The policy for this directory could not be cached from inside: the
    /// run compiles it from the policy files.
    Warm {
        /// The directory the hook loaded the policy for.
        cwd: String,
    },
    /// A call is about to run.
    Before {
        /// `claude`, `codex` or `gemini`.
        agent: String,
        /// The agent's tool name.
        tool: String,
        /// The tool's input.
        input: Map<String, Value>,
        /// The call's working directory.
        cwd: String,
        /// The agent's session.
        session: Option<String>,
    },
    /// A call has ended.
    After {
        /// The agent's session.
        session: Option<String>,
    },
}

/// The run's reply.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Reply {
    /// Whether the person was asked about the call's writes.
    #[serde(default)]
    pub asked: bool,
    /// Whether they allowed them (only when `asked`).
    #[serde(default)]
    pub allowed: bool,
    /// What was asked and answered, in words.
    #[serde(default)]
    pub reason: String,
    /// What was refused during the session's last call, in words.
    #[serde(default)]
    pub refusals: Vec<String>,
    /// The person is to be asked in the agent's own dialog, with `reason`:
    /// a grant waits for the agent's spawn of exactly this command.
    #[serde(default)]
    pub ask_in_agent: bool,
}

/// The run's socket, when this process runs inside `sandgate run`.
pub fn socket() -> Option<PathBuf> {
    std::env::var_os(SOCKET_ENV)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// Sends `request` to the run and waits up to `wait` for its reply; `None`
/// when there is no run or it does not answer.
pub fn send(request: &Request, wait: Duration) -> Option<Reply> {
    let path = socket()?;
    let mut stream = UnixStream::connect(path).ok()?;
    stream.set_read_timeout(Some(wait)).ok()?;
    stream
        .set_write_timeout(Some(Duration::from_secs(5)))
        .ok()?;
    let mut line = serde_json::to_vec(request).ok()?;
    line.push(b'\n');
    stream.write_all(&line).ok()?;
    let mut reply = String::new();
    BufReader::new(stream.take(MAX_REQUEST))
        .read_line(&mut reply)
        .ok()?;
    serde_json::from_str(&reply).ok()
}

/// A grant of "allow once" for one call's writes.
struct Grant {
    paths: Vec<PathBuf>,
    session: Option<String>,
    until: Instant,
}

#[derive(Default)]
struct State {
    /// Whether a hook has spoken in this run.
    hooked: bool,
    /// The number of refusals so far.
    seq: u64,
    /// The last refusals, numbered.
    refusals: Vec<(u64, String)>,
    /// Per session: the refusal number when its last call began.
    marks: HashMap<Option<String>, u64>,
    grants: Vec<Grant>,
    /// Paths the person allowed always through a hook's question.
    always: Vec<PathBuf>,
    /// Paths the person refused always through a hook's question.
    never: Vec<PathBuf>,
}

/// The run's side of the link.
pub struct Link {
    state: Mutex<State>,
    lineage: Arc<Lineage>,
    resolver: Arc<dyn Resolver>,
    plan: RunPlan,
    file: SandboxFile,
    timeout: Duration,
    global: GlobalArgs,
    home: PathBuf,
}

impl Link {
    /// The link of a run with `plan`, asking through `resolver`; `lineage`
    /// is the run's exec tracking, where grants given in Claude Code's own
    /// dialog wait for its spawn.
    pub fn new(
        lineage: Arc<Lineage>,
        resolver: Arc<dyn Resolver>,
        plan: RunPlan,
        file: SandboxFile,
        timeout: Duration,
        global: GlobalArgs,
        home: PathBuf,
    ) -> Link {
        Link {
            state: Mutex::new(State::default()),
            lineage,
            resolver,
            plan,
            file,
            timeout,
            global,
            home,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Serves the hooks on `listener`, one thread per connection. Each
    /// request arrives with the process id of its sender, which the kernel
    /// attaches (`SO_PASSCRED`).
    pub fn serve(self: &Arc<Self>, listener: UnixListener) {
        if let Err(e) = sandgate_confine::pass_credentials(listener.as_fd()) {
            eprintln!("sandgate: the run cannot tell its agent's hook from other programs ({e}); it asks every question itself");
        }
        let link = Arc::clone(self);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let link = Arc::clone(&link);
                std::thread::spawn(move || link.handle(stream));
            }
        });
    }

    fn handle(&self, stream: UnixStream) {
        let Ok((line, sender)) =
            sandgate_confine::read_line_with_sender(stream.as_fd(), MAX_REQUEST as usize)
        else {
            return;
        };
        // Claude Code's own spawn of its hook (see `supervisor::lineage`),
        // not anything else the program runs.
        let from_hook = sender.is_some_and(|pid| self.lineage.from_claude_hook(pid));
        let reply = match serde_json::from_slice::<Request>(&line) {
            Ok(Request::Record { line }) => {
                record(line);
                Reply::default()
            }
            Ok(Request::Warm { cwd }) => {
                self.warm(&cwd);
                Reply::default()
            }
            Ok(Request::Before {
                agent,
                tool,
                input,
                cwd,
                session,
            }) => self.before(&agent, &tool, &input, &cwd, session, from_hook),
            Ok(Request::After { session }) => self.after(session),
            Err(_) => return,
        };
        let mut stream = stream;
        if let Ok(mut text) = serde_json::to_vec(&reply) {
            text.push(b'\n');
            let _ = stream.write_all(&text);
        }
    }

    /// Notes a refusal of the supervisor, for the hooks to report.
    pub fn refused(&self, text: String) {
        let mut state = self.state();
        state.seq += 1;
        let seq = state.seq;
        state.refusals.push((seq, text));
        if state.refusals.len() > KEPT_REFUSALS {
            state.refusals.remove(0);
        }
    }

    fn warm(&self, cwd: &str) {
        let Ok(ctx) = Context::new(Path::new(cwd), &self.home) else {
            return;
        };
        let sources = crate::setup::sources(&self.global, &ctx);
        let _ = sandgate_policy::cache::load(&sources, &ctx);
    }

    fn before(
        &self,
        agent: &str,
        tool: &str,
        input: &Map<String, Value>,
        cwd: &str,
        session: Option<String>,
        from_hook: bool,
    ) -> Reply {
        {
            let mut state = self.state();
            state.hooked = true;
            let seq = state.seq;
            state.marks.insert(session.clone(), seq);
            // The session's earlier call has ended.
            state.grants.retain(|g| g.session != session);
        }
        let (what, paths) = self.foreseen(agent, tool, input, cwd);
        let paths: Vec<PathBuf> = {
            let state = self.state();
            paths
                .into_iter()
                .filter(|p| !state.always.iter().any(|a| p.starts_with(a)))
                .collect()
        };
        if paths.is_empty() {
            return Reply::default();
        }
        let listed = paths
            .iter()
            .map(|p| format!("`{}`", p.display()))
            .collect::<Vec<_>>()
            .join(", ");
        if let Some(p) = paths.iter().find(|p| {
            let state = self.state();
            state.never.iter().any(|n| p.starts_with(n))
        }) {
            return Reply {
                asked: true,
                allowed: false,
                reason: format!("the person refused writes to `{}` always", p.display()),
                ..Reply::default()
            };
        }
        // Claude Code's own hook, about its `Bash`: the person is asked in
        // Claude Code's dialog, and the grant waits for its spawn of exactly
        // this command (see the module documentation).
        if from_hook && agent == "claude" && tool == "Bash" {
            if let Some(command) = input.get("command").and_then(Value::as_str) {
                self.lineage
                    .register(command.to_string(), paths.clone(), GRANT_WINDOW);
                return Reply {
                    ask_in_agent: true,
                    reason: format!(
                        "sandgate asks about writing {listed}, outside the sandbox of `sandgate run`: \
                         Yes lets this one call write there; No refuses it"
                    ),
                    ..Reply::default()
                };
            }
        }
        let question = Question {
            tool: format!("run ({tool})"),
            kind: SubjectKind::Command,
            subject: what.clone(),
            reason: format!(
                "the agent's {tool} will write outside the allowed set: {listed}; the writes wait for this answer"
            ),
            timeout: self.timeout,
        };
        let resolution = self.resolver.resolve(&question);
        let answer = match &resolution {
            Resolution::Answered(answer) => *answer,
            Resolution::TimedOut { .. } => {
                return refused(format!("no answer in time about writing {listed}"))
            }
            Resolution::Unavailable { reason } | Resolution::Declined { reason } => {
                return refused(format!("no one to ask about writing {listed} ({reason})"))
            }
        };
        let mut state = self.state();
        match answer.persists() {
            Some(effect) => {
                let (list, kept) = match effect {
                    Effect::Allow => (ListKind::Allow, &mut state.always),
                    Effect::Deny => (ListKind::Deny, &mut state.never),
                };
                for path in &paths {
                    kept.push(path.clone());
                    let _ = self.file.persist(list, &path.to_string_lossy());
                }
            }
            None if answer == Answer::AllowOnce => state.grants.push(Grant {
                paths: paths.clone(),
                session,
                until: Instant::now() + GRANT_WINDOW,
            }),
            None => {}
        }
        let allowed = answer.verdict() != sandgate_policy::Verdict::Deny;
        Reply {
            asked: true,
            allowed,
            reason: format!(
                "the person was asked in sandgate run about writing {listed} and answered {}",
                answer.label()
            ),
            ..Reply::default()
        }
    }

    fn after(&self, session: Option<String>) -> Reply {
        let mut state = self.state();
        let mark = state.marks.get(&session).copied();
        let seq = state.seq;
        state.marks.insert(session.clone(), seq);
        state.grants.retain(|g| g.session != session);
        let refusals = match mark {
            Some(mark) => state
                .refusals
                .iter()
                .filter(|(n, _)| *n > mark)
                .map(|(_, text)| text.clone())
                .collect(),
            None => Vec::new(),
        };
        Reply {
            refusals,
            ..Reply::default()
        }
    }

    /// The call in words, and the paths it will write outside the run's
    /// allowed set, canonical.
    fn foreseen(
        &self,
        agent: &str,
        tool: &str,
        input: &Map<String, Value>,
        cwd: &str,
    ) -> (String, Vec<PathBuf>) {
        let what = input
            .get("command")
            .or_else(|| input.get("cmd"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("{tool} {}", Value::Object(input.clone())));
        let gate = match agent {
            "gemini" => map::gemini(tool, input, cwd),
            _ => map::claude(tool, input, cwd),
        };
        let Ok(map::Gate::Calls(checks)) = gate else {
            return (what, Vec::new());
        };
        let Ok(ctx) = Context::new(Path::new(cwd), &self.home) else {
            return (what, Vec::new());
        };
        let sources = crate::setup::sources_with_the_gate_on(&self.global, &ctx);
        let Ok(policy) = sandgate_policy::cache::load(&sources, &ctx) else {
            return (what, Vec::new());
        };
        let mut written = Vec::new();
        for check in checks {
            let dir = match &check.cwd {
                Some(dir) => expand(dir, &ctx.cwd, &self.home),
                None => ctx.cwd.clone(),
            };
            let call = &check.call;
            let access = sandgate_policy::request::gated_tool(&call.tool).and_then(|t| t.access);
            match sandgate_policy::request::tool_kind(&call.tool) {
                ToolKind::File if access == Some(Access::Write) => {
                    if let Some(path) = call.str_param("path") {
                        written.push(expand(path, &dir, &self.home));
                    }
                }
                ToolKind::Exec => {
                    let Some(command) = call.str_param("command") else {
                        continue;
                    };
                    let Ok(here) = Context::new(&dir, &self.home) else {
                        continue;
                    };
                    for part in policy.explain_command(command, &here).parts {
                        if matches!(part.kind, PartKind::Redirect | PartKind::Write) {
                            written.push(expand(&part.text, &dir, &self.home));
                        }
                    }
                }
                _ => {}
            }
        }
        let none = RunAnswers::default();
        let mut outside: Vec<PathBuf> = written
            .into_iter()
            .map(|p| sandgate_confine::canonical_or_lexical(&p))
            .filter(|p| self.plan.standing(p, true, &none) == Standing::Outside)
            .collect();
        outside.sort();
        outside.dedup();
        (what, outside)
    }
}

fn refused(reason: String) -> Reply {
    Reply {
        asked: true,
        allowed: false,
        reason,
        ..Reply::default()
    }
}

/// `raw` (`~`, relative to `dir`, or absolute) as an absolute path.
fn expand(raw: &str, dir: &Path, home: &Path) -> PathBuf {
    if raw == "~" {
        home.to_path_buf()
    } else if let Some(rest) = raw.strip_prefix("~/") {
        home.join(rest)
    } else {
        dir.join(raw)
    }
}

/// Appends a hook's record to the run's audit log, marked as sent from
/// inside the run (the program could have sent it).
fn record(line: Value) {
    let Value::Object(mut record) = line else {
        return;
    };
    record.insert("from_inside_run".into(), Value::Bool(true));
    let Some(path) = crate::auditlog::log_path() else {
        return;
    };
    if let Ok(mut text) = serde_json::to_vec(&Value::Object(record)) {
        text.push(b'\n');
        let _ = crate::auditlog::append(&path, &text, crate::auditlog::max_bytes());
    }
}

/// The run's resolver, seen by its supervisor: a write a hook's question
/// already settled is answered from that answer; once a hook has spoken, a
/// write no one foresaw is declined without a question; anything else goes
/// to the person.
pub struct Gatekeeper {
    /// The link the hooks speak to.
    pub link: Arc<Link>,
}

impl Resolver for Gatekeeper {
    fn resolve(&self, question: &Question) -> Resolution {
        let path = Path::new(&question.subject);
        {
            let mut state = self.link.state();
            let now = Instant::now();
            state.grants.retain(|g| g.until > now);
            if state.always.iter().any(|a| path.starts_with(a))
                || state
                    .grants
                    .iter()
                    .any(|g| g.paths.iter().any(|p| path.starts_with(p)))
            {
                return Resolution::Answered(Answer::AllowOnce);
            }
            if state.never.iter().any(|n| path.starts_with(n)) {
                return Resolution::Answered(Answer::DenyOnce);
            }
            // A write a grant still waits for in the agent's dialog, by a
            // process it was not bound to (a spawn the run could not match,
            // or another process): only the person can say.
            if self.link.lineage.pending_covers(path) {
                drop(state);
                return self.link.resolver.resolve(question);
            }
            if state.hooked {
                return Resolution::Declined {
                    reason: "the agent's hook did not foresee this write".into(),
                };
            }
        }
        self.link.resolver.resolve(question)
    }
}
