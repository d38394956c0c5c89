//! Questions put to the person through the editor's own permission dialog:
//! sandgate sends the editor a `session/request_permission` of its own (its
//! id a string `sandgate-N`, which no agent request uses) and waits for the
//! answer, which the relay hands back here instead of passing it on.
//!
//! One question is open at a time: questions that come together (several
//! writes of one command, a read and a write) are asked one after the other,
//! none lost. The four options are sandgate's four answers; a `cancelled`
//! outcome (the editor cancelled the turn) is a reject once, an error or an
//! option sandgate did not offer a refusal, and no answer within the
//! policy's prompt timeout a refusal too. Without an editor (`--no-ui`, or
//! once it has closed the connection) nothing is asked: refused at once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};

use sandgate_policy::ask::{Answer, Question, Resolution, Resolver};
use serde_json::{json, Value};

use super::frame::Out;

/// The prefix of the ids of sandgate's own requests to the editor.
pub const ID_PREFIX: &str = "sandgate-";

/// The editor, as sandgate asks it.
pub struct Editor {
    out: Arc<Out>,
    next: AtomicU64,
    waiting: Mutex<HashMap<String, mpsc::Sender<Value>>>,
    /// Held while a question is open.
    turn: Mutex<()>,
    /// Why nobody can be asked, once that is so.
    gone: Mutex<Option<String>>,
    no_ui: AtomicBool,
}

/// What a question is about, for the editor's dialog.
#[derive(Debug, Clone)]
pub struct About {
    /// The session the question belongs to.
    pub session: String,
    /// The agent's tool call it belongs to, when one is known.
    pub tool_call: Option<String>,
    /// The ACP tool kind shown (`edit`, `read`, `execute`, …).
    pub kind: &'static str,
    /// The paths, shown as the call's locations.
    pub paths: Vec<String>,
}

impl Editor {
    /// Questions written to `out`; none when `no_ui`.
    pub fn new(out: Arc<Out>, no_ui: bool) -> Editor {
        Editor {
            out,
            next: AtomicU64::new(1),
            waiting: Mutex::new(HashMap::new()),
            turn: Mutex::new(()),
            gone: Mutex::new(None),
            no_ui: AtomicBool::new(no_ui),
        }
    }

    /// The editor closed the connection: open questions end unanswered and
    /// none is asked any more.
    pub fn close(&self, why: &str) {
        *self.gone.lock().unwrap_or_else(PoisonError::into_inner) = Some(why.to_string());
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// A response from the editor to one of sandgate's questions: taken
    /// (`true`), or not one of them (`false`: the relay passes it on).
    pub fn answered(&self, id: &Value, message: Value) -> bool {
        let Some(id) = id.as_str().filter(|i| i.starts_with(ID_PREFIX)) else {
            return false;
        };
        let waiter = self
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        match waiter {
            Some(tx) => {
                let _ = tx.send(message);
                true
            }
            // A late answer to a question that timed out: not the agent's.
            None => id[ID_PREFIX.len()..].parse::<u64>().is_ok(),
        }
    }

    /// Asks `question` about `about` in the editor's dialog, and waits.
    pub fn ask(&self, question: &Question, about: &About) -> Resolution {
        if self.no_ui.load(Ordering::Relaxed) {
            return Resolution::Unavailable {
                reason: "--no-ui: sandgate asks nothing through the editor".into(),
            };
        }
        let _turn = self.turn.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(why) = self
            .gone
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            return Resolution::Unavailable { reason: why };
        }
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = format!("{ID_PREFIX}{n}");
        let (tx, rx) = mpsc::channel();
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), tx);
        let request = request(&id, question, about);
        if let Err(e) = self.out.send_json(&request) {
            self.forget(&id);
            return Resolution::Unavailable {
                reason: format!("the editor cannot be written to: {e}"),
            };
        }
        match rx.recv_timeout(question.timeout) {
            Ok(message) => resolution(&message),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.forget(&id);
                Resolution::TimedOut {
                    reason: format!(
                        "no answer in the editor within {}",
                        humantime::format_duration(question.timeout)
                    ),
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Resolution::Unavailable {
                reason: "the editor closed the connection".into(),
            },
        }
    }

    fn forget(&self, id: &str) {
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }
}

/// The option ids and names sandgate offers, one of each ACP kind.
const OPTIONS: [(Answer, &str, &str); 4] = [
    (Answer::AllowOnce, "allow_once", "Allow once"),
    (Answer::AllowAlways, "allow_always", "Allow always"),
    (Answer::DenyOnce, "reject_once", "Reject once"),
    (Answer::DenyAlways, "reject_always", "Reject always"),
];

/// sandgate's `session/request_permission`.
fn request(id: &str, question: &Question, about: &About) -> Value {
    let tool_call = about
        .tool_call
        .clone()
        .unwrap_or_else(|| format!("{id}-call"));
    let title = format!(
        "sandgate: {} `{}`: {}",
        question.tool, question.subject, question.reason
    );
    let options: Vec<Value> = OPTIONS
        .iter()
        .map(|(_, kind, name)| json!({"optionId": kind, "name": name, "kind": kind}))
        .collect();
    let locations: Vec<Value> = about.paths.iter().map(|p| json!({ "path": p })).collect();
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "session/request_permission",
        "params": {
            "sessionId": about.session,
            "toolCall": {
                "toolCallId": tool_call,
                "title": title,
                "kind": about.kind,
                "status": "pending",
                "locations": locations,
                "content": [{"type": "content", "content": {"type": "text", "text": question.reason}}],
            },
            "options": options,
        }
    })
}

/// How the editor's response ends the question.
fn resolution(message: &Value) -> Resolution {
    if let Some(error) = message.get("error") {
        return Resolution::Declined {
            reason: format!("the editor answered with an error: {error}"),
        };
    }
    let outcome = &message["result"]["outcome"];
    match outcome["outcome"].as_str() {
        // The turn was cancelled: a reject once.
        Some("cancelled") => Resolution::Answered(Answer::DenyOnce),
        Some("selected") => {
            let chosen = outcome["optionId"].as_str().unwrap_or_default();
            match OPTIONS.iter().find(|(_, id, _)| *id == chosen) {
                Some((answer, _, _)) => Resolution::Answered(*answer),
                None => Resolution::Declined {
                    reason: format!("the editor chose `{chosen}`, which sandgate did not offer"),
                },
            }
        }
        _ => Resolution::Declined {
            reason: format!("the editor's answer has no outcome sandgate knows: {message}"),
        },
    }
}

/// The editor as a [`Resolver`], for one subject.
pub struct Asking<'a> {
    /// The editor.
    pub editor: &'a Editor,
    /// What the question is about.
    pub about: About,
}

impl Resolver for Asking<'_> {
    fn resolve(&self, question: &Question) -> Resolution {
        self.editor.ask(question, &self.about)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_outcome_is_one_answer_and_anything_else_a_refusal() {
        for (id, answer) in [
            ("allow_once", Answer::AllowOnce),
            ("allow_always", Answer::AllowAlways),
            ("reject_once", Answer::DenyOnce),
            ("reject_always", Answer::DenyAlways),
        ] {
            let m = json!({"result": {"outcome": {"outcome": "selected", "optionId": id}}});
            assert_eq!(resolution(&m), Resolution::Answered(answer));
        }
        let cancelled = json!({"result": {"outcome": {"outcome": "cancelled"}}});
        assert_eq!(
            resolution(&cancelled),
            Resolution::Answered(Answer::DenyOnce)
        );
        for m in [
            json!({"result": {"outcome": {"outcome": "selected", "optionId": "yes"}}}),
            json!({"error": {"code": -32603, "message": "x"}}),
            json!({"result": {}}),
        ] {
            assert!(matches!(resolution(&m), Resolution::Declined { .. }), "{m}");
        }
    }
}
