//! Putting an ASK to the MCP client's user through elicitation.
//!
//! Two wire forms exist, depending on the protocol revision the client speaks:
//!
//! - up to `2025-11-25`, the server sends an `elicitation/create` request to the
//!   client while the tool call is open ([`ElicitResolver`]);
//! - from `2026-07-28` (SEP-2322, no server-to-client requests), the tool call
//!   answers with an `input_required` result carrying the elicitation, and the
//!   client calls again with the answer ([`input_required`], [`answer_from_responses`]).
//!
//! The question is one required field, `answer`, with the four answers of the
//! prompt. `2025-06-18` clients get the enum with `enumNames`; later revisions
//! get titled options (`oneOf` of `const`/`title`).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequiredResult, InputResponses, ProtocolVersion,
};
use rmcp::service::{Peer, RoleServer, ServiceError};
use sandgate_policy::ask::{Answer, Question, Resolution, Resolver, SubjectKind};
use serde_json::{json, Value};

/// The key of the one input request sandgate sends.
pub const INPUT_KEY: &str = "sandgate_permission";

/// The elicitation message for an ASK.
pub fn message(ask: &Question) -> String {
    let what = match ask.kind {
        SubjectKind::Path => format!("`{}` wants to use the path `{}`", ask.tool, ask.subject),
        SubjectKind::Command => format!("`{}` wants to run `{}`", ask.tool, ask.subject),
        SubjectKind::Host => format!("a program wants to connect to `{}`", ask.subject),
    };
    format!("sandgate: {what} ({}). Allow it?", ask.reason)
}

/// The requested schema, in the enum form `version` understands.
pub fn schema_json(version: Option<&ProtocolVersion>) -> Value {
    let legacy_enum = version.is_some_and(|v| v.as_str() <= ProtocolVersion::V_2025_06_18.as_str());
    let answer = if legacy_enum {
        json!({
            "type": "string",
            "title": "Answer",
            "description": "\"always\" adds an exact rule to the sandgate policy",
            "enum": Answer::ALL.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
            "enumNames": Answer::ALL.iter().map(|a| title(*a)).collect::<Vec<_>>(),
        })
    } else {
        json!({
            "type": "string",
            "title": "Answer",
            "description": "\"always\" adds an exact rule to the sandgate policy",
            "oneOf": Answer::ALL.iter().map(|a| json!({"const": a.as_str(), "title": title(*a)})).collect::<Vec<_>>(),
        })
    };
    json!({
        "type": "object",
        "properties": {"answer": answer},
        "required": ["answer"],
    })
}

fn title(answer: Answer) -> &'static str {
    match answer {
        Answer::AllowOnce => "Allow once",
        Answer::AllowAlways => "Allow always",
        Answer::DenyOnce => "Deny once",
        Answer::DenyAlways => "Deny always",
    }
}

/// The elicitation parameters for an ASK.
pub fn params(
    ask: &Question,
    version: Option<&ProtocolVersion>,
) -> Result<ElicitRequestParams, String> {
    let Value::Object(object) = schema_json(version) else {
        return Err("the elicitation schema is not an object".into());
    };
    let schema = ElicitationSchema::from_json_schema(object)
        .map_err(|e| format!("the elicitation schema is invalid: {e}"))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(ask),
        requested_schema: schema,
    })
}

/// Turn the client's elicitation result into a resolution. Only an accepted
/// form with one of the four answers is an answer; a decline is a DENY the
/// client gave (not a human's "deny once"), and anything else is a DENY
/// without an answer.
pub fn resolution(result: &ElicitResult) -> Resolution {
    match result.action {
        ElicitationAction::Accept => {
            let given = result
                .content
                .as_ref()
                .and_then(|c| c.get("answer"))
                .and_then(Value::as_str);
            match given.and_then(|g| Answer::ALL.into_iter().find(|a| a.as_str() == g)) {
                Some(answer) => Resolution::Answered(answer),
                None => Resolution::Unavailable {
                    reason: format!(
                        "the client's answer {} is not one of allow_once, allow_always, deny_once, deny_always",
                        result
                            .content
                            .as_ref()
                            .map(|c| format!("`{c}`"))
                            .unwrap_or_else(|| "(empty)".into())
                    ),
                },
            }
        }
        // Not an answer: Claude Code declines on its own when it runs headless,
        // so a decline is a DENY that nobody is recorded as having given.
        ElicitationAction::Decline => Resolution::Declined {
            reason: "the MCP client declined the question (by itself or by its user; it gave none of the four answers)".into(),
        },
        _ => Resolution::Unavailable {
            reason: "the question was dismissed in the MCP client".into(),
        },
    }
}

/// Asks through `elicitation/create` (protocol revisions up to `2025-11-25`).
/// Called on a thread outside the runtime (a blocking task, or a network
/// proxy's thread while an `exec_run` command runs): the request runs on
/// the runtime through `handle`, and the caller waits for its answer, at
/// most the question's timeout and a little more, whatever the runtime does.
#[derive(Clone)]
pub struct ElicitResolver {
    /// The client.
    pub peer: Peer<RoleServer>,
    /// The runtime the peer lives on.
    pub handle: tokio::runtime::Handle,
    /// The negotiated protocol revision.
    pub version: Option<ProtocolVersion>,
}

impl Resolver for ElicitResolver {
    fn resolve(&self, ask: &Question) -> Resolution {
        let params = match params(ask, self.version.as_ref()) {
            Ok(p) => p,
            Err(reason) => return Resolution::Unavailable { reason },
        };
        let (sent, answered) = std::sync::mpsc::channel();
        let peer = self.peer.clone();
        let timeout = ask.timeout;
        // On a runtime that is shutting down the task is dropped, and with
        // it the sender: the wait below ends at once.
        self.handle.spawn(async move {
            let answer = peer
                .create_elicitation_with_timeout(params, Some(timeout))
                .await;
            let _ = sent.send(answer);
        });
        let timed_out = || Resolution::TimedOut {
            reason: format!(
                "no answer from the MCP client within {} s",
                timeout.as_secs()
            ),
        };
        match answered.recv_timeout(timeout + ANSWER_SLACK) {
            Ok(Ok(result)) => resolution(&result),
            Ok(Err(ServiceError::Timeout { .. }))
            | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => timed_out(),
            Ok(Err(e)) => Resolution::Unavailable {
                reason: format!("the MCP client did not answer the question: {e}"),
            },
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Resolution::Unavailable {
                reason: "the MCP session ended before the question was answered".into(),
            },
        }
    }
}

/// How much longer than the question's timeout a caller waits for the
/// request's own timeout to end it.
const ANSWER_SLACK: std::time::Duration = std::time::Duration::from_secs(5);

/// A resolver that says why nobody can be asked when the one it wraps
/// cannot ask either (the terminal prompt behind a client that cannot
/// elicit, or with `--no-ui`).
pub struct Explained {
    /// Who is asked.
    pub inner: std::sync::Arc<dyn Resolver>,
    /// Why the client is not.
    pub why: &'static str,
}

impl Resolver for Explained {
    fn resolve(&self, ask: &Question) -> Resolution {
        match self.inner.resolve(ask) {
            Resolution::Unavailable { reason } => Resolution::Unavailable {
                reason: format!("{}, and {reason}", self.why),
            },
            other => other,
        }
    }
}

/// A resolver that gives an answer obtained earlier (the retry of a
/// `2026-07-28` tool call carrying the elicitation result).
pub struct Preanswered(pub Resolution);

impl Resolver for Preanswered {
    fn resolve(&self, _ask: &Question) -> Resolution {
        self.0.clone()
    }
}

/// Binds an answer to the call it was asked for: tool and arguments.
pub fn fingerprint(tool: &str, arguments: &Value) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    tool.hash(&mut h);
    arguments.to_string().hash(&mut h);
    format!("sandgate-ask-{:016x}", h.finish())
}

/// The `input_required` result that asks `ask` (protocol `2026-07-28`).
pub fn input_required(
    ask: &Question,
    version: Option<&ProtocolVersion>,
    state: String,
) -> Result<InputRequiredResult, String> {
    let request: ElicitRequest = ElicitRequest::new(params(ask, version)?);
    let mut requests = BTreeMap::new();
    requests.insert(INPUT_KEY.to_string(), InputRequest::Elicitation(request));
    Ok(InputRequiredResult::new(Some(requests), Some(state)))
}

/// The answer in the responses of a retried call, if it is there and parses.
pub fn answer_from_responses(responses: &InputResponses) -> Option<Resolution> {
    let value = responses.get(INPUT_KEY)?;
    match serde_json::from_value::<ElicitResult>(value.clone()) {
        Ok(result) => Some(resolution(&result)),
        Err(e) => Some(Resolution::Unavailable {
            reason: format!("the MCP client's answer cannot be read: {e}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ask() -> Question {
        Question {
            tool: "exec_run".into(),
            kind: SubjectKind::Command,
            subject: "make".into(),
            reason: "no allow rule matched the command".into(),
            timeout: Duration::from_secs(25),
        }
    }

    #[test]
    fn the_schema_follows_the_revision() {
        let old = schema_json(Some(&ProtocolVersion::V_2025_06_18));
        assert_eq!(old["properties"]["answer"]["enum"][1], "allow_always");
        assert_eq!(old["properties"]["answer"]["enumNames"][3], "Deny always");
        let new = schema_json(Some(&ProtocolVersion::V_2025_11_25));
        assert_eq!(
            new["properties"]["answer"]["oneOf"][0]["const"],
            "allow_once"
        );
        assert!(new["properties"]["answer"].get("enum").is_none());
        for v in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2026_07_28] {
            params(&ask(), Some(&v)).expect("rmcp accepts the schema");
        }
    }

    #[test]
    fn only_a_real_answer_answers() {
        let accept = |content: Value| {
            let mut r = ElicitResult::new(ElicitationAction::Accept);
            r.content = Some(content);
            resolution(&r)
        };
        assert_eq!(
            accept(json!({"answer": "allow_always"})),
            Resolution::Answered(Answer::AllowAlways)
        );
        assert_eq!(
            accept(json!({"answer": "yes"})).verdict(),
            sandgate_policy::Verdict::Deny
        );
        assert!(accept(json!({"answer": "yes"})).answer().is_none());
        let declined = resolution(&ElicitResult::new(ElicitationAction::Decline));
        assert!(
            matches!(declined, Resolution::Declined { .. }),
            "{declined:?}"
        );
        assert_eq!(declined.verdict(), sandgate_policy::Verdict::Deny);
        assert_eq!(declined.answered_by(), "client declined");
        assert!(resolution(&ElicitResult::new(ElicitationAction::Cancel))
            .answer()
            .is_none());
    }
}
