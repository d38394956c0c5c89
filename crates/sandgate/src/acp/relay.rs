//! The relay: every message of each side passed to the other unchanged,
//! except the few this module answers or holds.
//!
//! From the agent:
//! - `session/request_permission` is judged with the policy (see
//!   [`super::judge`]): a DENY is answered at once with the reject option,
//!   an ALLOW with the allow-once option, and only an ASK (or a call
//!   sandgate does not gate) reaches the editor; its answer is logged.
//! - `fs/read_text_file`, `fs/write_text_file` and `terminal/create` are
//!   judged like the hooks' file and shell tools: a DENY is answered with a
//!   JSON-RPC error giving the reason, an ASK becomes sandgate's own
//!   permission request to the editor first, and the method is passed on
//!   only when allowed.
//! - `session/update` tool calls are followed, so that a question sandgate
//!   asks belongs to the tool call in flight.
//!
//! From the editor: the answers to sandgate's own questions are taken;
//! `session/new`, `session/load`, `session/resume` and `session/prompt`
//! are followed (each session's working directory, asked about once when it
//! lies outside every workspace; the turn in progress).
//!
//! A message that is not a JSON object is passed on as it is; one over the
//! size limit is answered with a JSON-RPC error (to its sender when it is a
//! request, to the side awaiting it when it is a response).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use sandgate_policy::ask::{Question, SubjectKind};
use sandgate_policy::{Context, Verdict};
use serde_json::{json, Map, Value};

use super::editor::{About, Asking, Editor};
use super::frame::{scan_head, Line, Out};
use super::judge;
use crate::agentcall::map::Gate;
use crate::audit::Outcome;
use crate::hook::Decisions;
use crate::setup::GlobalArgs;

/// The audit log's name for this surface.
pub const SURFACE: &str = "acp";

/// The JSON-RPC error code of a method sandgate refused.
pub const REFUSED: i64 = -32001;

/// How long the person has to answer about a session directory outside
/// the workspace.
const SESSION_DIR_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The JSON-RPC error code of a message over the size limit.
pub const TOO_LARGE: i64 = -32600;

/// Which side a message came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The editor (sandgate's stdin).
    Editor,
    /// The agent (its stdout).
    Agent,
}

/// A request of the editor that the relay follows until its response.
#[derive(Debug, Clone)]
enum Followed {
    /// `session/new` in this directory.
    New { cwd: String },
    /// `session/load` (or `session/resume`) of this session in this directory.
    Load { session: String, cwd: String },
    /// `session/prompt` of this session.
    Prompt { session: String },
}

/// A tool call the agent reported.
#[derive(Debug, Clone)]
struct Call {
    id: String,
    fields: Map<String, Value>,
}

/// What the relay knows of the sessions.
#[derive(Default)]
struct Sessions {
    /// Each session's working directory.
    cwd: HashMap<String, String>,
    /// The editor's requests followed, by id (as JSON text).
    followed: HashMap<String, Followed>,
    /// Each session's tool calls in flight, oldest first.
    calls: HashMap<String, Vec<Call>>,
    /// The session whose turn began last.
    latest: Option<String>,
    /// The agent's own permission requests passed to the editor: the
    /// decisions to log when the answer comes.
    forwarded: HashMap<String, Forwarded>,
}

struct Forwarded {
    session: String,
    tool_call: Option<String>,
    options: Vec<Value>,
    decided: Option<Decisions>,
}

/// The relay between one editor and one agent.
pub struct Relay {
    /// To the agent's stdin.
    pub to_agent: Arc<Out>,
    /// To the editor (sandgate's stdout).
    pub to_editor: Arc<Out>,
    /// The editor, as sandgate asks it.
    pub editor: Arc<Editor>,
    global: GlobalArgs,
    /// Where sandgate started (the session's directory when it is unknown).
    cwd: String,
    sessions: Mutex<Sessions>,
    /// Judging and its audit records, one at a time (the audit log's session
    /// and tool call are process-wide).
    judging: Mutex<()>,
    /// The run's workspaces (canonical), and its answers once it is confined.
    workspaces: Vec<PathBuf>,
    grants: Mutex<Confinement>,
    /// The session directories outside every workspace already asked about.
    asked_dirs: Mutex<Vec<PathBuf>>,
}

/// Whether the run is confined, as far as the relay knows yet.
enum Confinement {
    /// Not known yet (the agent runs, but the supervisor has not started):
    /// the sessions begun meanwhile, whose directories are judged once it
    /// has. An agent that is never confined leaves them here.
    Unknown(Vec<(String, String)>),
    /// Confined, with the run's answers.
    Confined(sandgate_confine::Grants),
}

fn key(id: &Value) -> String {
    id.to_string()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Relay {
    /// A relay for an editor that started sandgate in `cwd`.
    pub fn new(
        to_agent: Arc<Out>,
        to_editor: Arc<Out>,
        editor: Arc<Editor>,
        global: GlobalArgs,
        cwd: PathBuf,
        workspaces: Vec<PathBuf>,
    ) -> Relay {
        Relay {
            to_agent,
            to_editor,
            editor,
            global,
            cwd: cwd.to_string_lossy().into_owned(),
            sessions: Mutex::new(Sessions::default()),
            judging: Mutex::new(()),
            workspaces,
            grants: Mutex::new(Confinement::Unknown(Vec::new())),
            asked_dirs: Mutex::new(Vec::new()),
        }
    }

    /// The confined run's answers: a session directory outside every
    /// workspace can then be granted. The sessions begun before the
    /// supervisor started are judged now, so none of them passes unasked.
    pub fn confined(self: &Arc<Self>, grants: sandgate_confine::Grants) {
        let begun = match std::mem::replace(&mut *lock(&self.grants), Confinement::Confined(grants))
        {
            Confinement::Unknown(begun) => begun,
            Confinement::Confined(_) => Vec::new(),
        };
        for (session, cwd) in begun {
            self.session_dir(&session, &cwd);
        }
    }

    /// A session in `cwd` began (`session/new` or `session/load`): a
    /// directory outside every workspace of a confined run is asked about
    /// once, through the editor, in a thread of its own; allowed, the agent
    /// may write beneath it for the rest of the run ("always": and in later
    /// runs, from the workspace's `sandbox.json`). Sessions that begin
    /// together in the same directory (or beneath one asked about) share the
    /// one question and its answer: the directory is marked asked under the
    /// lock before the question goes out, and the answer is the run's, not
    /// the session's. Until it comes, their writes there are asked about one
    /// by one, as any other.
    fn session_dir(self: &Arc<Self>, session: &str, cwd: &str) {
        let grants = {
            let mut confinement = lock(&self.grants);
            match &mut *confinement {
                Confinement::Unknown(begun) => {
                    begun.push((session.to_string(), cwd.to_string()));
                    return;
                }
                Confinement::Confined(grants) => grants.clone(),
            }
        };
        let dir = std::fs::canonicalize(cwd).unwrap_or_else(|_| PathBuf::from(cwd));
        if self.workspaces.iter().any(|w| dir.starts_with(w)) {
            return;
        }
        {
            let mut asked = lock(&self.asked_dirs);
            if asked.iter().any(|a| dir.starts_with(a)) {
                return;
            }
            asked.push(dir.clone());
        }
        let relay = Arc::clone(self);
        let session = session.to_string();
        std::thread::spawn(move || {
            let subject = dir.to_string_lossy().into_owned();
            let question = Question {
                tool: "session directory".into(),
                kind: SubjectKind::Path,
                subject: subject.clone(),
                reason: format!(
                    "the session's working directory is outside the workspace ({}); \
                     allow the agent to write beneath it?",
                    relay
                        .workspaces
                        .iter()
                        .map(|w| w.to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                timeout: SESSION_DIR_TIMEOUT,
            };
            let about = About {
                session,
                tool_call: None,
                kind: "edit",
                paths: vec![subject.clone()],
            };
            let resolution = relay.editor.ask(&question, &about);
            match resolution.answer() {
                Some(answer) if answer.verdict() == Verdict::Allow => {
                    grants.allow(&dir);
                    if answer.persists().is_some() {
                        if let Some(ws) = relay.workspaces.first() {
                            let file = sandgate_confine::SandboxFile::of(ws);
                            if let Err(e) =
                                file.persist(sandgate_confine::ListKind::Allow, &subject)
                            {
                                eprintln!(
                                    "sandgate: the answer about `{subject}` was not kept: {e}"
                                );
                            }
                        }
                    }
                    eprintln!("sandgate: the session directory `{subject}` is writable ({answer})");
                }
                _ => eprintln!(
                    "sandgate: the session directory `{subject}` stays outside the workspace: \
                     its writes are asked about one by one"
                ),
            }
        });
    }

    fn out(&self, to: Side) -> &Out {
        match to {
            Side::Editor => &self.to_editor,
            Side::Agent => &self.to_agent,
        }
    }

    /// Handles one line read from `from`.
    pub fn line(self: &Arc<Self>, from: Side, line: Line) {
        let to = match from {
            Side::Editor => Side::Agent,
            Side::Agent => Side::Editor,
        };
        let bytes = match line {
            Line::TooLong { head, len } => return self.too_long(from, to, &head, len),
            Line::Message(bytes) => bytes,
        };
        let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(&bytes) else {
            // Not ours to understand: passed on as it is.
            let _ = self.out(to).send(&bytes);
            return;
        };
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").filter(|i| !i.is_null());
        let handled = match (from, method, id) {
            (Side::Agent, Some(method), Some(id)) => {
                self.agent_request(method, id, &message, &bytes)
            }
            (Side::Agent, Some("session/update"), None) => {
                self.follow_update(&message);
                false
            }
            (Side::Agent, None, Some(id)) => {
                self.agent_response(id, &message);
                false
            }
            (Side::Editor, Some(method), Some(id)) => {
                self.editor_request(method, id, &message);
                false
            }
            (Side::Editor, None, Some(id)) => self.editor_response(id, &message),
            _ => false,
        };
        if !handled {
            let _ = self.out(to).send(&bytes);
        }
    }

    /// A message over the limit: the JSON-RPC error goes to whoever waits.
    fn too_long(&self, from: Side, to: Side, head: &[u8], len: usize) {
        let head = scan_head(head);
        let who = match from {
            Side::Editor => "the editor",
            Side::Agent => "the agent",
        };
        let text = format!(
            "sandgate did not relay a message of {len} bytes from {who}: over the limit of {} \
             bytes (`{}`)",
            super::frame::max_message(),
            super::frame::MAX_MESSAGE_ENV
        );
        eprintln!("sandgate: {text}");
        let id = head.id.clone().unwrap_or(Value::Null);
        let error = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": TOO_LARGE, "message": text},
        });
        // A request (or a message that cannot be told): its sender waits
        // for the answer. A response: the other side waits for it.
        let target = if head.method || head.id.is_none() {
            from
        } else {
            to
        };
        // The editor's oversized answer to a question of sandgate's own.
        if target == Side::Agent && from == Side::Editor && self.editor.answered(&id, error.clone())
        {
            return;
        }
        let _ = self.out(target).send_json(&error);
    }

    /// A request of the agent; `true` when the relay answered or holds it.
    fn agent_request(
        self: &Arc<Self>,
        method: &str,
        id: &Value,
        message: &Map<String, Value>,
        bytes: &[u8],
    ) -> bool {
        let empty = Map::new();
        let params = message
            .get("params")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        if method == "session/request_permission" {
            return self.permission(id, params);
        }
        let session = params
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let cwd = self.cwd_of(&session);
        let Some(gate) = judge::client_method(method, params, &cwd) else {
            return false;
        };
        self.client_method(method, id, bytes.to_vec(), params, &session, &cwd, gate);
        true
    }

    /// The agent's own permission request, judged. `false`: passed to the editor.
    fn permission(&self, id: &Value, params: &Map<String, Value>) -> bool {
        let session = params
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let options: Vec<Value> = params
            .get("options")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let asked = params
            .get("toolCall")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let tool_call = asked
            .get("toolCallId")
            .and_then(Value::as_str)
            .map(str::to_string);
        // What the agent said of this call before, with what it says now.
        let call = {
            let mut sessions = lock(&self.sessions);
            let calls = sessions.calls.entry(session.clone()).or_default();
            match tool_call
                .as_ref()
                .and_then(|t| calls.iter_mut().find(|c| &c.id == t))
            {
                Some(known) => {
                    merge(&mut known.fields, &asked);
                    known.fields.clone()
                }
                None => {
                    if let Some(t) = &tool_call {
                        calls.push(Call {
                            id: t.clone(),
                            fields: asked.clone(),
                        });
                    }
                    asked.clone()
                }
            }
        };
        let cwd = self.cwd_of(&session);
        let _judging = lock(&self.judging);
        crate::auditlog::set_tool_call(tool_call.as_deref());
        let decided = judge::tool_call(&call, &cwd)
            .and_then(|gate| crate::hook::decide_in(gate, &cwd, Some(&session), &self.global));
        let pass = |decided: Option<Decisions>| {
            lock(&self.sessions).forwarded.insert(
                key(id),
                Forwarded {
                    session: session.clone(),
                    tool_call: tool_call.clone(),
                    options: options.clone(),
                    decided,
                },
            );
            false
        };
        let decisions = match decided {
            Ok(Some((decisions, _policy))) => decisions,
            // Not a call sandgate gates: the editor decides.
            Ok(None) => return pass(None),
            Err(e) => {
                // Cannot be judged: the person can still answer.
                eprintln!(
                    "sandgate: the agent's permission request cannot be judged ({e}); the editor asks"
                );
                return pass(None);
            }
        };
        let verdict = decisions.strictest.1.verdict;
        let (kinds, outcome): (&[&str], Outcome) = match verdict {
            Verdict::Deny => (
                &["reject_once", "reject_always"],
                Outcome {
                    became: "denied",
                    answered_by: "policy",
                },
            ),
            Verdict::Allow => (
                &["allow_once"],
                Outcome {
                    became: "allowed",
                    answered_by: "policy",
                },
            ),
            Verdict::Ask => return pass(Some(decisions)),
        };
        let chosen = kinds.iter().find_map(|k| {
            options
                .iter()
                .find(|o| o["kind"].as_str() == Some(k))
                .and_then(|o| o["optionId"].as_str())
        });
        let Some(option) = chosen else {
            // No option of that kind to give: the person decides.
            return pass(Some(decisions));
        };
        let (call, decision) = &decisions.strictest;
        let reason = match verdict {
            Verdict::Deny => crate::hook::deny_reason(call, decision),
            _ => format!(
                "sandgate allows {}: {}",
                crate::hook::describe(call, decision),
                decision.reason
            ),
        };
        decisions.record(SURFACE, outcome);
        let answer = json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": {
                "outcome": {"outcome": "selected", "optionId": option},
                "_meta": {"sandgate": {"verdict": verdict.as_str(), "reason": reason}},
            }
        });
        let _ = self.to_agent.send_json(&answer);
        true
    }

    /// `fs/*` or `terminal/create`, judged; passed on only when allowed.
    #[allow(clippy::too_many_arguments)]
    fn client_method(
        self: &Arc<Self>,
        method: &str,
        id: &Value,
        message: Vec<u8>,
        params: &Map<String, Value>,
        session: &str,
        cwd: &str,
        gate: Result<Gate, crate::agentcall::InputError>,
    ) {
        let tool_call = self.in_flight(session);
        let judged = {
            let _judging = lock(&self.judging);
            crate::auditlog::set_tool_call(tool_call.as_deref());
            gate.and_then(|gate| crate::hook::decide_in(gate, cwd, Some(session), &self.global))
        };
        let (decisions, policy) = match judged {
            Ok(Some(found)) => found,
            Ok(None) => {
                let _ = self.to_editor.send(&message);
                return;
            }
            Err(e) => {
                let reason = format!("sandgate cannot check `{method}`: {e}");
                self.refuse(id, &reason);
                return;
            }
        };
        let (call, decision) = decisions.strictest.clone();
        match decision.verdict {
            Verdict::Allow => {
                let _judging = lock(&self.judging);
                crate::auditlog::set_session(Some(session));
                crate::auditlog::set_tool_call(tool_call.as_deref());
                decisions.record(
                    SURFACE,
                    Outcome {
                        became: "allowed",
                        answered_by: "policy",
                    },
                );
                let _ = self.to_editor.send(&message);
            }
            Verdict::Deny => {
                {
                    let _judging = lock(&self.judging);
                    crate::auditlog::set_session(Some(session));
                    crate::auditlog::set_tool_call(tool_call.as_deref());
                    decisions.record(
                        SURFACE,
                        Outcome {
                            became: "denied",
                            answered_by: "policy",
                        },
                    );
                }
                self.refuse(id, &crate::hook::deny_reason(&call, &decision));
            }
            Verdict::Ask => {
                // Asked in a thread of its own: the relay goes on meanwhile.
                let relay = Arc::clone(self);
                let id = id.clone();
                let session = session.to_string();
                let cwd = cwd.to_string();
                let paths: Vec<String> = params
                    .get("path")
                    .and_then(Value::as_str)
                    .map(|p| vec![p.to_string()])
                    .unwrap_or_default();
                let kind = match method {
                    "fs/read_text_file" => "read",
                    "fs/write_text_file" => "edit",
                    _ => "execute",
                };
                std::thread::spawn(move || {
                    let about = About {
                        session: session.clone(),
                        tool_call: tool_call.clone(),
                        kind,
                        paths,
                    };
                    relay.settle(&id, message, &session, &cwd, &decisions, policy, about);
                });
            }
        }
    }

    /// An ASK of the policy put to the person in the editor; the method is
    /// passed on when they allow it.
    #[allow(clippy::too_many_arguments)]
    fn settle(
        &self,
        id: &Value,
        message: Vec<u8>,
        session: &str,
        cwd: &str,
        decisions: &Decisions,
        policy: sandgate_policy::Policy,
        about: About,
    ) {
        let asking = Asking {
            editor: &self.editor,
            about,
        };
        let (call, asked) = &decisions.strictest;
        let settled = if decisions.asks.len() == 1 {
            match Context::new(std::path::Path::new(cwd), &policy_home()) {
                Ok(ctx) => {
                    sandgate_tools::resolver::settle(&policy, &ctx, &call.tool, asked, &asking)
                        .decision
                }
                Err(e) => sandgate_policy::Decision::new(
                    Verdict::Deny,
                    asked.subject.clone(),
                    format!("sandgate cannot ask: {e}"),
                ),
            }
        } else {
            // Several parts asked: one question for all; an "always" answer
            // counts once.
            let reason: Vec<String> = decisions
                .asks
                .iter()
                .map(|(c, d)| format!("{} ({})", crate::hook::describe(c, d), d.reason))
                .collect();
            let question = Question {
                tool: call.tool.clone(),
                kind: SubjectKind::of_tool(&call.tool).unwrap_or(SubjectKind::Command),
                subject: asked.subject.clone(),
                reason: reason.join("; "),
                timeout: decisions.settings.prompt_timeout,
            };
            let resolution = sandgate_policy::ask::Resolver::resolve(&asking, &question);
            resolution.decision(asked.subject.clone(), &asked.reason)
        };
        let allowed = settled.verdict == Verdict::Allow;
        {
            let _judging = lock(&self.judging);
            crate::auditlog::set_session(Some(session));
            crate::auditlog::set_tool_call(asking.about.tool_call.as_deref());
            crate::audit::record_in(
                SURFACE,
                &call.tool,
                &settled,
                Some(Outcome {
                    became: if allowed {
                        "allowed by the person in the editor"
                    } else {
                        "denied in the editor"
                    },
                    answered_by: if settled.reason.contains("by a human") {
                        "human"
                    } else {
                        "editor"
                    },
                }),
                None,
            );
        }
        drop(policy);
        if allowed {
            let _ = self.to_editor.send(&message);
        } else {
            self.refuse(
                id,
                &format!(
                    "sandgate blocked {}: {}",
                    crate::hook::describe(call, asked),
                    settled.reason
                ),
            );
        }
    }

    /// Answers the agent's request `id` with sandgate's refusal.
    fn refuse(&self, id: &Value, reason: &str) {
        let error = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": REFUSED, "message": reason, "data": {"sandgate": "refused"}},
        });
        let _ = self.to_agent.send_json(&error);
    }

    /// A `session/update`: the tool calls are followed.
    fn follow_update(&self, message: &Map<String, Value>) {
        let params = message.get("params").unwrap_or(&Value::Null);
        let (Some(session), Some(update)) = (
            params["sessionId"].as_str(),
            params.get("update").and_then(Value::as_object),
        ) else {
            return;
        };
        let kind = update.get("sessionUpdate").and_then(Value::as_str);
        if !matches!(kind, Some("tool_call" | "tool_call_update")) {
            return;
        }
        let Some(id) = update.get("toolCallId").and_then(Value::as_str) else {
            return;
        };
        let mut sessions = lock(&self.sessions);
        let calls = sessions.calls.entry(session.to_string()).or_default();
        let ended = matches!(
            update.get("status").and_then(Value::as_str),
            Some("completed" | "failed")
        );
        match calls.iter().position(|c| c.id == id) {
            Some(i) if ended => {
                calls.remove(i);
            }
            Some(i) => merge(&mut calls[i].fields, update),
            None if ended => {}
            None => calls.push(Call {
                id: id.to_string(),
                fields: update.clone(),
            }),
        }
    }

    /// A response of the agent to the editor: the sessions it makes, the
    /// turns it ends.
    fn agent_response(self: &Arc<Self>, id: &Value, message: &Map<String, Value>) {
        let mut sessions = lock(&self.sessions);
        match sessions.followed.remove(&key(id)) {
            Some(Followed::New { cwd }) => {
                if let Some(s) = message
                    .get("result")
                    .and_then(|r| r.get("sessionId"))
                    .and_then(Value::as_str)
                {
                    sessions.cwd.insert(s.to_string(), cwd.clone());
                    sessions.latest = Some(s.to_string());
                    drop(sessions);
                    self.session_dir(s, &cwd);
                }
            }
            // Loaded (a `result`, `null` in older protocol versions), not
            // refused.
            Some(Followed::Load { session, cwd }) if message.get("error").is_none() => {
                drop(sessions);
                self.session_dir(&session, &cwd);
            }
            Some(Followed::Load { .. }) => {}
            Some(Followed::Prompt { session }) => {
                // The turn is over: no tool call of it is in flight.
                sessions.calls.remove(&session);
            }
            None => {}
        }
    }

    /// A request of the editor: sessions and turns are followed.
    fn editor_request(&self, method: &str, id: &Value, message: &Map<String, Value>) {
        let params = message.get("params").unwrap_or(&Value::Null);
        let mut sessions = lock(&self.sessions);
        match method {
            "session/new" => {
                if let Some(cwd) = params["cwd"].as_str() {
                    sessions.followed.insert(
                        key(id),
                        Followed::New {
                            cwd: cwd.to_string(),
                        },
                    );
                }
            }
            "session/load" | "session/resume" => {
                if let (Some(s), Some(cwd)) = (params["sessionId"].as_str(), params["cwd"].as_str())
                {
                    sessions.cwd.insert(s.to_string(), cwd.to_string());
                    sessions.latest = Some(s.to_string());
                    sessions.followed.insert(
                        key(id),
                        Followed::Load {
                            session: s.to_string(),
                            cwd: cwd.to_string(),
                        },
                    );
                }
            }
            "session/prompt" => {
                if let Some(s) = params["sessionId"].as_str() {
                    sessions.latest = Some(s.to_string());
                    sessions.followed.insert(
                        key(id),
                        Followed::Prompt {
                            session: s.to_string(),
                        },
                    );
                }
            }
            _ => {}
        }
    }

    /// A response of the editor: an answer to sandgate's own question is
    /// taken (`true`); the answer to the agent's own permission request is
    /// logged and passed on.
    fn editor_response(&self, id: &Value, message: &Map<String, Value>) -> bool {
        if self.editor.answered(id, Value::Object(message.clone())) {
            return true;
        }
        let Some(forwarded) = lock(&self.sessions).forwarded.remove(&key(id)) else {
            return false;
        };
        let Some(decisions) = forwarded.decided else {
            return false;
        };
        let outcome = &message
            .get("result")
            .map(|r| r["outcome"].clone())
            .unwrap_or(Value::Null);
        let kind = match outcome["outcome"].as_str() {
            Some("selected") => forwarded
                .options
                .iter()
                .find(|o| o["optionId"] == outcome["optionId"])
                .and_then(|o| o["kind"].as_str())
                .unwrap_or("unknown"),
            Some("cancelled") => "cancelled",
            _ => "unknown",
        };
        let became = match kind {
            "allow_once" | "allow_always" => "allowed by the person in the editor",
            "cancelled" => "denied: the turn was cancelled",
            _ => "denied in the editor",
        };
        let _judging = lock(&self.judging);
        crate::auditlog::set_session(Some(&forwarded.session));
        crate::auditlog::set_tool_call(forwarded.tool_call.as_deref());
        decisions.record(
            SURFACE,
            Outcome {
                became,
                answered_by: "human",
            },
        );
        false
    }

    /// The session's working directory: from `session/new` or
    /// `session/load`, else where sandgate started.
    pub fn cwd_of(&self, session: &str) -> String {
        lock(&self.sessions)
            .cwd
            .get(session)
            .cloned()
            .unwrap_or_else(|| self.cwd.clone())
    }

    /// The tool call in flight in `session`: the latest one not ended.
    pub fn in_flight(&self, session: &str) -> Option<String> {
        lock(&self.sessions)
            .calls
            .get(session)
            .and_then(|c| c.last())
            .map(|c| c.id.clone())
    }

    /// As [`Relay::asking_session`], but with no tool call in flight, waits
    /// up to `wait` for one: an agent may start a command before its
    /// `tool_call` update has reached sandgate (Codex's adapter sends it
    /// as the process starts, and the process may write first).
    pub fn asking_session_within(
        &self,
        wait: std::time::Duration,
    ) -> Option<(String, Option<String>)> {
        let deadline = std::time::Instant::now() + wait;
        loop {
            let found = self.asking_session();
            if matches!(found, Some((_, Some(_)))) || std::time::Instant::now() >= deadline {
                return found;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// The session a question about the agent's processes belongs to: the
    /// one with the latest tool call in flight, else the one whose turn
    /// began last; and that tool call.
    pub fn asking_session(&self) -> Option<(String, Option<String>)> {
        let sessions = lock(&self.sessions);
        if let Some(latest) = &sessions.latest {
            if let Some(call) = sessions.calls.get(latest).and_then(|c| c.last()) {
                return Some((latest.clone(), Some(call.id.clone())));
            }
        }
        for (session, calls) in &sessions.calls {
            if let Some(call) = calls.last() {
                return Some((session.clone(), Some(call.id.clone())));
            }
        }
        sessions.latest.clone().map(|s| (s, None))
    }
}

/// The home directory the policy expands `~` to.
fn policy_home() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// `update`'s fields written over `into`'s (`null` ones left out).
fn merge(into: &mut Map<String, Value>, update: &Map<String, Value>) {
    for (k, v) in update {
        if !v.is_null() {
            into.insert(k.clone(), v.clone());
        }
    }
}
