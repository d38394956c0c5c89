//! The audit log: every decision, one JSON line each, in `~/.sandgate/audit.jsonl`.
//!
//! `SANDGATE_AUDIT=off` turns it off. A failure to write never changes a
//! decision; it is reported once per process on stderr.
//!
//! The records are written to the log file by [`crate::auditlog`] (where it
//! is, its size bound and rotation, the lock writers share); inside
//! `sandgate run` they are handed to the run instead ([`crate::runlink`]).

pub mod read;
pub mod suggest;

use std::path::Path;
use std::time::{Duration, SystemTime};

use sandgate_policy::{Decision, Settings, Verdict};
use serde::Serialize;

use crate::auditlog::{self, DEFAULT_MAX_BYTES, MAX_BYTES_ENV};

/// One line of the log. Fields added later are optional for readers
/// ([`read::Entry`]), so older lines stay readable.
#[derive(Serialize)]
struct Record<'a> {
    time: String,
    surface: &'a str,
    tool: &'a str,
    subject: &'a str,
    verdict: &'a str,
    rule: Option<&'a str>,
    list: Option<&'a str>,
    origin: Option<String>,
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    became: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    answered_by: Option<&'a str>,
    /// What the call finally got: `allow`, `deny`, or `ask` when the question
    /// went to the agent's own dialog (sandgate does not see the answer) or its
    /// answer is recorded on a later line.
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cwd: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call: Option<&'a str>,
}

/// What a verdict became for the agent or client that asked, and who settled it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// What the agent was told, in words: `allowed`, `denied`, `asked in the
    /// agent`, `deferred to the agent's own permissions`, `denied by
    /// hooks.gemini.ask`, ….
    pub became: &'static str,
    /// Who settles it: `policy` (a rule or the floor), `setting` (a
    /// `hooks.*.ask` setting), `agent` (the agent's own dialog or rules; sandgate
    /// does not see the answer), `human`, `client declined` (an MCP client
    /// declined the question without an answer from sandgate's side),
    /// `timeout`, `headless` (nobody to ask).
    pub answered_by: &'static str,
}

/// The final outcome of a record: what `became` says it turned into, else the
/// verdict itself (shared with the reader, which applies it to old lines).
pub fn final_outcome(verdict: &str, became: Option<&str>) -> &'static str {
    match became {
        Some(b) if b.starts_with("allowed") => "allow",
        Some(b) if b.starts_with("denied") => "deny",
        Some(_) => "ask",
        None => match verdict {
            "allow" => "allow",
            "deny" => "deny",
            _ => "ask",
        },
    }
}

/// What became of an ASK put to a human (through an MCP client or the
/// terminal prompt): `None` for a decision the policy made.
pub fn ask_outcome(resolution: Option<&sandgate_policy::ask::Resolution>) -> Option<Outcome> {
    let resolution = resolution?;
    let became = match (resolution, resolution.verdict()) {
        (sandgate_policy::ask::Resolution::Answered(_), Verdict::Allow) => "allowed by a human",
        (sandgate_policy::ask::Resolution::Answered(_), _) => "denied by a human",
        (sandgate_policy::ask::Resolution::TimedOut { .. }, _) => "denied: nobody answered in time",
        (sandgate_policy::ask::Resolution::Unavailable { .. }, _) => "denied: nobody to ask",
        (sandgate_policy::ask::Resolution::Declined { .. }, _) => "denied: the client declined",
    };
    Some(Outcome {
        became,
        answered_by: resolution.answered_by(),
    })
}

/// Where the log goes and when it rotates, for `policy show`: `log` (null
/// when off), `max_bytes` and where that size comes from.
pub fn describe(settings: &Settings) -> serde_json::Value {
    let env = std::env::var(MAX_BYTES_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|n| *n >= sandgate_policy::config::MIN_AUDIT_BYTES);
    let (max, from) = match (env, settings.audit_max_bytes) {
        (Some(n), _) => (n, format!("`{MAX_BYTES_ENV}`")),
        (None, Some(n)) => (n, "`audit.max_bytes` of the policy".to_string()),
        (None, None) => (DEFAULT_MAX_BYTES, "the default".to_string()),
    };
    serde_json::json!({
        "log": auditlog::log_path(),
        "max_bytes": max,
        "max_bytes_from": from,
    })
}

/// Append `decision` about `tool`, made through `surface` (`check`, `hook claude`, `mcp`, …).
pub fn record(surface: &str, tool: &str, decision: &Decision) {
    record_outcome(surface, tool, decision, None);
}

/// Append `decision`, and what it became (see [`Outcome`]).
pub fn record_outcome(surface: &str, tool: &str, decision: &Decision, outcome: Option<Outcome>) {
    record_in(surface, tool, decision, outcome, None);
}

/// [`record_outcome`] for a call that ran in `cwd` rather than the directory
/// given to [`auditlog::configure`].
pub fn record_in(
    surface: &str,
    tool: &str,
    decision: &Decision,
    outcome: Option<Outcome>,
    cwd: Option<&Path>,
) {
    let Some(path) = auditlog::log_path() else {
        return;
    };
    let (scope_cwd, session, tool_call) = auditlog::scope();
    let cwd = cwd.map(|c| c.to_string_lossy().into_owned()).or(scope_cwd);
    let verdict = decision.verdict.as_str();
    let record = Record {
        time: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
        surface,
        tool,
        subject: &decision.subject,
        verdict,
        rule: decision.rule.as_ref().map(|r| r.pattern.as_str()),
        list: decision.rule.as_ref().map(|r| r.list.as_str()),
        origin: decision.rule.as_ref().map(|r| r.origin.to_string()),
        reason: &decision.reason,
        became: outcome.map(|o| o.became),
        answered_by: outcome.map(|o| o.answered_by),
        outcome: final_outcome(verdict, outcome.map(|o| o.became)),
        cwd: cwd.as_deref(),
        session: session.as_deref(),
        tool_call: tool_call.as_deref(),
    };
    // Inside `sandgate run` the log is read-only to this process: the run
    // writes the record (see `crate::runlink`).
    if crate::runlink::socket().is_some() {
        if let Ok(line) = serde_json::to_value(&record) {
            let request = crate::runlink::Request::Record { line };
            if crate::runlink::send(&request, Duration::from_secs(5)).is_some() {
                return;
            }
        }
    }
    let line = match serde_json::to_vec(&record) {
        Ok(mut line) => {
            line.push(b'\n');
            line
        }
        Err(e) => return auditlog::warn_write(&path, &std::io::Error::other(e)),
    };
    auditlog::write(&path, &line);
}
