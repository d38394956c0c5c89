//! Reading the audit log back: `audit.jsonl.1`, then `audit.jsonl`, one
//! record a line.
//!
//! A line that is not a record (not JSON, cut short by a full disk, a field of
//! the wrong type, a verdict that is not `allow`, `ask` or `deny`) is skipped
//! and counted, with the first few places named, so a damaged log is still
//! read. Only the fields every version has written are required; `cwd`,
//! `session` and `outcome` came later and may be missing.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::final_outcome;
use crate::auditlog::rotated_path;

/// The longest line read as a record; a longer one is skipped.
const MAX_LINE_BYTES: usize = 1024 * 1024;

/// How many broken lines are named one by one.
const NAMED_BROKEN: usize = 3;

/// One record of the log, as read.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Entry {
    /// When it was decided (RFC 3339).
    #[serde(default)]
    pub time: Option<String>,
    /// Where: `check`, `hook claude`, `mcp`, `exec prompt`, …
    #[serde(default)]
    pub surface: Option<String>,
    /// The gated tool (`exec_run`, `file_read`, …).
    pub tool: String,
    /// The command or canonical path.
    pub subject: String,
    /// `allow`, `ask` or `deny`.
    pub verdict: VerdictWord,
    /// The rule that decided it.
    #[serde(default)]
    pub rule: Option<String>,
    /// Its list.
    #[serde(default)]
    pub list: Option<String>,
    /// Its origin.
    #[serde(default)]
    pub origin: Option<String>,
    /// Why.
    #[serde(default)]
    pub reason: Option<String>,
    /// What the answer made of it.
    #[serde(default)]
    pub became: Option<String>,
    /// Who settled it.
    #[serde(default)]
    pub answered_by: Option<String>,
    /// The final outcome, as written (see [`Entry::outcome`]).
    #[serde(default, rename = "outcome")]
    pub written_outcome: Option<String>,
    /// The working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The agent's session id.
    #[serde(default)]
    pub session: Option<String>,
}

/// A verdict as written in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VerdictWord {
    /// `allow`.
    Allow,
    /// `ask`.
    Ask,
    /// `deny`.
    Deny,
}

impl VerdictWord {
    /// The word.
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictWord::Allow => "allow",
            VerdictWord::Ask => "ask",
            VerdictWord::Deny => "deny",
        }
    }
}

impl Entry {
    /// What the call finally got: `allow`, `deny` or `ask` (put to the
    /// agent's own dialog, or answered on a later line). Lines written before
    /// the field existed get it from `became` and the verdict.
    pub fn outcome(&self) -> &str {
        match self.written_outcome.as_deref() {
            Some(o @ ("allow" | "deny" | "ask")) => o,
            _ => final_outcome(self.verdict.as_str(), self.became.as_deref()),
        }
    }

    /// Whether a human answered, and allowed.
    pub fn allowed_by_a_human(&self) -> bool {
        self.answered_by.as_deref() == Some("human") && self.outcome() == "allow"
    }

    /// Whether the log shows the call refused on its merits: by a rule or the
    /// floor, or by a human's answer. A question nobody answered, or one a
    /// setting turned into a deny, does not count.
    pub fn denied(&self) -> bool {
        match self.answered_by.as_deref() {
            None | Some("policy") => self.verdict == VerdictWord::Deny,
            Some("human") => self.outcome() == "deny",
            Some(_) => false,
        }
    }
}

/// A line that was not a record.
#[derive(Debug, Clone, Serialize)]
pub struct Broken {
    /// The file.
    pub file: PathBuf,
    /// 1-based line number.
    pub line: usize,
    /// Why it was skipped.
    pub why: String,
}

/// The records of both files, oldest first.
#[derive(Debug, Default)]
pub struct Log {
    /// The files that were read, oldest first.
    pub files: Vec<PathBuf>,
    /// Every record.
    pub entries: Vec<Entry>,
    /// How many lines were skipped.
    pub skipped: usize,
    /// The first few of them.
    pub broken: Vec<Broken>,
    /// Where reading `audit.jsonl` ended, for following it from there.
    pub end: Option<End>,
}

/// The file `audit.jsonl` was when it was read, and how far it was read
/// (to the end of its last complete line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct End {
    /// Its inode.
    pub inode: u64,
    /// The bytes read.
    pub offset: u64,
}

impl Log {
    /// The note about skipped lines, or `None` when there were none.
    pub fn skipped_note(&self) -> Option<String> {
        if self.skipped == 0 {
            return None;
        }
        let places: Vec<String> = self
            .broken
            .iter()
            .map(|b| format!("{}:{} ({})", b.file.display(), b.line, b.why))
            .collect();
        let more = if self.skipped > self.broken.len() {
            format!(", and {} more", self.skipped - self.broken.len())
        } else {
            String::new()
        };
        let what = if self.skipped == 1 {
            "1 line that is not an audit record".to_string()
        } else {
            format!("{} lines that are not audit records", self.skipped)
        };
        Some(format!("skipped {what}: {}{more}", places.join("; ")))
    }
}

/// Read `path.1` and `path`, either of which may be missing. Anything but a
/// regular file in their place is an error naming it.
pub fn read(path: &Path) -> Result<Log, String> {
    let mut log = Log::default();
    for file in [rotated_path(path), path.to_path_buf()] {
        let opened = match sandgate_policy::load::open_regular(&file) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(format!(
                    "cannot read the audit log `{}`: {e}",
                    file.display()
                ))
            }
        };
        let inode = opened.metadata().map(|m| m.ino()).unwrap_or(0);
        let read = read_file(opened, &file, &mut log)
            .map_err(|e| format!("cannot read the audit log `{}`: {e}", file.display()))?;
        if file == path {
            log.end = Some(End {
                inode,
                offset: read,
            });
        }
        log.files.push(file);
    }
    Ok(log)
}

/// Read the records of one file into `log`; the bytes read up to the end of
/// its last complete line.
fn read_file(file: std::fs::File, path: &Path, log: &mut Log) -> std::io::Result<u64> {
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    let mut line = Vec::with_capacity(512);
    let mut number = 0;
    let mut offset = 0u64;
    loop {
        line.clear();
        let read =
            Read::take(&mut reader, MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(offset);
        }
        number += 1;
        let complete = line.last() == Some(&b'\n');
        if complete {
            offset += read as u64;
        }
        if !complete && line.len() > MAX_LINE_BYTES {
            offset += read as u64 + skip_line(&mut reader)?;
            skip(
                log,
                path,
                number,
                format!("longer than {MAX_LINE_BYTES} bytes"),
            );
            continue;
        }
        let text = trim_line(&line);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Entry>(text) {
            Ok(entry) => log.entries.push(entry),
            Err(e) => skip(log, path, number, json_why(&e)),
        }
    }
}

/// Skip to just past the next newline without holding the line; the bytes skipped.
fn skip_line(reader: &mut impl BufRead) -> std::io::Result<u64> {
    let mut skipped = 0u64;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(skipped);
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                reader.consume(i + 1);
                return Ok(skipped + i as u64 + 1);
            }
            None => {
                let n = buf.len();
                reader.consume(n);
                skipped += n as u64;
            }
        }
    }
}

fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn skip(log: &mut Log, file: &Path, line: usize, why: String) {
    log.skipped += 1;
    if log.broken.len() < NAMED_BROKEN {
        log.broken.push(Broken {
            file: file.to_path_buf(),
            line,
            why,
        });
    }
}

/// serde_json's message without its position (the line is named already).
fn json_why(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rsplit_once(" at line ") {
        Some((head, _)) => head.to_string(),
        None => text,
    }
}

/// Control characters shown escaped, so a subject cannot move the cursor or
/// start a new line in the terminal.
pub fn printable(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .flat_map(|c| -> Box<dyn Iterator<Item = char>> {
            if c.is_control() {
                Box::new(c.escape_default())
            } else {
                Box::new(std::iter::once(c))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(line: &str) -> Entry {
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn old_lines_get_their_outcome_from_became_and_the_verdict() {
        let old = entry(
            r#"{"time":"t","surface":"hook claude","tool":"exec_run","subject":"make","verdict":"ask","rule":null,"list":null,"origin":null,"reason":"r","became":"denied: Codex CLI hooks cannot ask","answered_by":"nobody: the agent cannot ask"}"#,
        );
        assert_eq!(old.outcome(), "deny");
        assert!(
            !old.denied(),
            "a setting's deny is not a refusal on the merits"
        );
        let asked = entry(
            r#"{"tool":"exec_run","subject":"make","verdict":"ask","became":"asked in the agent","answered_by":"agent"}"#,
        );
        assert_eq!(asked.outcome(), "ask");
        let human = entry(
            r#"{"tool":"exec_run","subject":"make","verdict":"allow","became":"allowed by a human","answered_by":"human"}"#,
        );
        assert!(human.allowed_by_a_human());
        let refused = entry(
            r#"{"tool":"exec_run","subject":"make","verdict":"deny","became":"denied by a human","answered_by":"human"}"#,
        );
        assert!(refused.denied());
        let ruled = entry(r#"{"tool":"exec_run","subject":"git push","verdict":"deny"}"#);
        assert!(ruled.denied());
        let timeout = entry(
            r#"{"tool":"exec_run","subject":"x","verdict":"deny","became":"denied: nobody answered in time","answered_by":"timeout"}"#,
        );
        assert!(!timeout.denied());
    }

    #[test]
    fn broken_lines_are_skipped_counted_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let good = r#"{"tool":"exec_run","subject":"ls","verdict":"allow"}"#;
        let text = format!(
            "{good}\nnot json\n{{\"tool\":\"exec_run\",\"subject\":\"ls\",\"verdict\":\"maybe\"}}\n\n{good}\r\n{{\"tool\":1}}\n{{\"tool\":\"exec_run\",\"subj"
        );
        std::fs::write(&path, text).unwrap();
        let log = read(&path).unwrap();
        assert_eq!(log.entries.len(), 2);
        assert_eq!(log.skipped, 4);
        let lines: Vec<usize> = log.broken.iter().map(|b| b.line).collect();
        assert_eq!(lines, [2, 3, 6]);
        let note = log.skipped_note().unwrap();
        assert!(
            note.starts_with("skipped 4 lines that are not audit records: "),
            "{note}"
        );
        assert!(note.contains("audit.jsonl:2 (expected ident"), "{note}");
        assert!(note.ends_with(", and 1 more"), "{note}");
    }

    #[test]
    fn the_older_file_comes_first_and_a_missing_one_is_normal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        assert!(read(&path).unwrap().entries.is_empty());
        std::fs::write(
            &path,
            "{\"tool\":\"t\",\"subject\":\"new\",\"verdict\":\"ask\"}\n",
        )
        .unwrap();
        std::fs::write(
            rotated_path(&path),
            "{\"tool\":\"t\",\"subject\":\"old\",\"verdict\":\"ask\"}\n",
        )
        .unwrap();
        let log = read(&path).unwrap();
        let subjects: Vec<&str> = log.entries.iter().map(|e| e.subject.as_str()).collect();
        assert_eq!(subjects, ["old", "new"]);
    }

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(printable("a\u{1b}[2Jb\nc"), "a\\u{1b}[2Jb\\nc");
        assert_eq!(printable("plain"), "plain");
    }
}
