//! The audit log: every decision, one JSON line each, in `~/.sandgate/audit.jsonl`.
//!
//! `SANDGATE_AUDIT=off` turns it off. A failure to write never changes a
//! decision; it is reported once per process on stderr.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use sandgate_policy::load::not_regular;
use sandgate_policy::Decision;
use serde::Serialize;

static WARNED: AtomicBool = AtomicBool::new(false);

/// One line of the log.
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

/// What became of an ASK put to a human (through an MCP client or the
/// terminal prompt): `None` for a decision the policy made.
pub fn ask_outcome(resolution: Option<&sandgate_policy::ask::Resolution>) -> Option<Outcome> {
    let resolution = resolution?;
    let became = match (resolution, resolution.verdict()) {
        (sandgate_policy::ask::Resolution::Answered(_), sandgate_policy::Verdict::Allow) => {
            "allowed by a human"
        }
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

/// Where the log is written, or `None` when it is off.
pub fn log_path() -> Option<PathBuf> {
    if std::env::var("SANDGATE_AUDIT").is_ok_and(|v| v.eq_ignore_ascii_case("off")) {
        return None;
    }
    if let Some(p) = std::env::var_os("SANDGATE_AUDIT_LOG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".sandgate/audit.jsonl"))
}

/// Append `decision` about `tool`, made through `surface` (`check`, `hook claude`, `mcp`, …).
pub fn record(surface: &str, tool: &str, decision: &Decision) {
    record_outcome(surface, tool, decision, None);
}

/// Append `decision`, and what it became (see [`Outcome`]).
pub fn record_outcome(surface: &str, tool: &str, decision: &Decision, outcome: Option<Outcome>) {
    let Some(path) = log_path() else { return };
    let record = Record {
        time: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
        surface,
        tool,
        subject: &decision.subject,
        verdict: decision.verdict.as_str(),
        rule: decision.rule.as_ref().map(|r| r.pattern.as_str()),
        list: decision.rule.as_ref().map(|r| r.list.as_str()),
        origin: decision.rule.as_ref().map(|r| r.origin.to_string()),
        reason: &decision.reason,
        became: outcome.map(|o| o.became),
        answered_by: outcome.map(|o| o.answered_by),
    };
    if let Err(e) = append(&path, &record) {
        if !WARNED.swap(true, Ordering::Relaxed) {
            eprintln!(
                "sandgate: warning: cannot write the audit log `{}`: {e}; decisions are not affected",
                path.display()
            );
        }
    }
}

fn append(path: &std::path::Path, record: &Record<'_>) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    line.push(b'\n');
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    // O_NONBLOCK: a named pipe put where the log goes must not hold a hook
    // call; it is refused on the opened descriptor below.
    let opened = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path);
    let mut file = match opened {
        Ok(f) => f,
        // A named pipe without a reader cannot be opened for writing: say what it is.
        Err(e) => {
            return Err(std::fs::metadata(path)
                .ok()
                .and_then(|m| not_regular(m.file_type()))
                .unwrap_or(e))
        }
    };
    if let Some(e) = not_regular(file.metadata()?.file_type()) {
        return Err(e);
    }
    // One write of one line: O_APPEND keeps concurrent writers' lines whole.
    file.write_all(&line)
}
