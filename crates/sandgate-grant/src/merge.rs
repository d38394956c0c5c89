//! Merging a grant into a harness settings file (`.claude/settings.local.json`).
//!
//! The file belongs to the user as much as to us: the merge only adds rules to
//! `permissions.allow` and `permissions.deny`, keeps every other key and rule,
//! and refuses — writing nothing — when the file is not what it expects,
//! unless told to `--force` (which first keeps a `.bak` copy).
//!
//! Key order is kept by `serde_json`'s `preserve_order` feature: objects
//! keep the order the file wrote them in, and a repeated key keeps its first
//! place and its last value, so the merge does not reorder what it did not
//! touch.

use sandgate_policy::atomic::{atomic_replace, Mode};
use sandgate_policy::request::json_type;
use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::rules::Grant;

/// Claude Code's file tools: a rule naming one of them with no path, or with a
/// path that is everything, lets it read or write anywhere.
const FILE_TOOL_NAMES: [&str; 8] = [
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "Glob",
    "Grep",
    "LS",
];

/// Path specifiers that cover every file (or every file of the home directory).
const EVERYWHERE: [&str; 7] = ["", "*", "**", "//**", "~", "~/**", "//*"];

/// What a merge did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeOutcome {
    /// The settings file.
    pub path: PathBuf,
    /// How many rules the grant requires, allow and deny together (the same
    /// on every identical run).
    pub required: usize,
    /// How many of them are allow rules.
    pub allow: usize,
    /// How many of them are deny rules.
    pub deny: usize,
    /// How many of them were not in the file before.
    pub added: usize,
    /// Allow rules already in the file that give a file tool every path
    /// (`Read`, `Write`, `Edit(//**)`, …): the grant's scoped rules do not
    /// narrow them, so the caller must say so.
    pub broad: Vec<String>,
    /// Whether the file was (re)written.
    pub written: bool,
    /// Where the unusable original was kept, when `force` replaced it.
    pub backup: Option<PathBuf>,
    /// The merged settings, pretty-printed with a trailing newline.
    pub json: String,
}

impl MergeOutcome {
    /// `wrote N permission rule(s) to PATH (A allow, D deny)`.
    pub fn summary(&self) -> String {
        format!(
            "wrote {} permission rule(s) to {} ({} allow, {} deny)",
            self.required,
            self.path.display(),
            self.allow,
            self.deny
        )
    }
}

/// Why a merge wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// The file exists but could not be read.
    #[error("cannot read `{path}`: {source}")]
    Read {
        /// The settings file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The file is not JSON.
    #[error("`{path}` is not valid JSON: {message}; nothing was written (use --force to keep a .bak copy and start afresh)")]
    Parse {
        /// The settings file.
        path: PathBuf,
        /// The parser's message with line and column.
        message: String,
    },
    /// The top level is not an object.
    #[error("`{path}` holds {found} at the top level, not an object; nothing was written (use --force to keep a .bak copy and start afresh)")]
    RootNotObject {
        /// The settings file.
        path: PathBuf,
        /// What is there instead.
        found: &'static str,
    },
    /// `permissions` is not an object.
    #[error("`permissions` in `{path}` is {found}, not an object; nothing was written (fix or remove it by hand)")]
    PermissionsNotObject {
        /// The settings file.
        path: PathBuf,
        /// What is there instead.
        found: &'static str,
    },
    /// `permissions.allow` or `permissions.deny` is not an array.
    #[error("`permissions.{list}` in `{path}` is {found}, not an array; nothing was written (fix or remove it by hand)")]
    ListNotArray {
        /// The settings file.
        path: PathBuf,
        /// `allow` or `deny`.
        list: &'static str,
        /// What is there instead.
        found: &'static str,
    },
    /// Writing the file or its backup failed.
    #[error("cannot write `{path}`: {source}")]
    Write {
        /// The file being written.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

/// Add the grant's rules to `permissions.allow` and `permissions.deny` in the
/// JSON file at `path`.
///
/// Additive and idempotent: existing rules and unrelated keys stay, `permissions`,
/// `allow` and `deny` are created when absent, and a run that adds nothing to an
/// existing file leaves it untouched. Both lists are checked before either is
/// changed, so a refusal writes nothing. Parent directories are created.
pub fn merge_into(path: &Path, grant: &Grant, force: bool) -> Result<MergeOutcome, MergeError> {
    let existing = match fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(MergeError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
    };

    let mut backup = None;
    let mut root = match existing.as_deref() {
        None => Map::new(),
        Some(text) if text.trim().is_empty() => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(entries)) => entries,
            Ok(_) if force => {
                backup = Some(keep_backup(path)?);
                Map::new()
            }
            Ok(other) => {
                return Err(MergeError::RootNotObject {
                    path: path.to_path_buf(),
                    found: json_type(&other),
                })
            }
            Err(_) if force => {
                backup = Some(keep_backup(path)?);
                Map::new()
            }
            Err(e) => {
                return Err(MergeError::Parse {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })
            }
        },
    };

    let permissions = root
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    let found = json_type(permissions);
    let Value::Object(permissions) = permissions else {
        return Err(MergeError::PermissionsNotObject {
            path: path.to_path_buf(),
            found,
        });
    };
    for list in ["allow", "deny"] {
        if let Some(found) = permissions.get(list).filter(|v| !v.is_array()) {
            return Err(MergeError::ListNotArray {
                path: path.to_path_buf(),
                list,
                found: json_type(found),
            });
        }
    }
    let mut added = 0;
    for (list, rules) in [("allow", &grant.allow), ("deny", &grant.deny)] {
        if rules.is_empty() {
            continue;
        }
        let entry = permissions
            .entry(list)
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(entries) = entry {
            added += add_missing(entries, rules);
        }
    }
    let broad = match permissions.get("allow") {
        Some(Value::Array(entries)) => entries
            .iter()
            .filter_map(Value::as_str)
            .filter(|rule| is_broad_file_rule(rule))
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };

    let mut json =
        serde_json::to_string_pretty(&Value::Object(root)).map_err(|e| MergeError::Write {
            path: path.to_path_buf(),
            source: io::Error::other(e),
        })?;
    json.push('\n');

    let written = existing.is_none() || added > 0 || backup.is_some();
    if written {
        write_atomically(path, &json)?;
    }
    Ok(MergeOutcome {
        path: path.to_path_buf(),
        required: grant.len(),
        allow: grant.allow.len(),
        deny: grant.deny.len(),
        added,
        broad,
        written,
        backup,
        json,
    })
}

/// Append to `entries` each of `rules` it does not hold yet; how many were added.
fn add_missing(entries: &mut Vec<Value>, rules: &BTreeSet<String>) -> usize {
    let present: BTreeSet<String> = entries
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let mut added = 0;
    for rule in rules {
        if !present.contains(rule) {
            entries.push(Value::String(rule.clone()));
            added += 1;
        }
    }
    added
}

/// Whether `rule` lets a Claude Code file tool reach every path: the tool
/// alone, or with a pattern that is everything.
pub fn is_broad_file_rule(rule: &str) -> bool {
    let (tool, spec) = match rule.split_once('(') {
        Some((tool, rest)) => match rest.strip_suffix(')') {
            Some(spec) => (tool, spec.trim()),
            None => return false,
        },
        None => (rule, ""),
    };
    FILE_TOOL_NAMES.contains(&tool.trim()) && EVERYWHERE.contains(&spec)
}

/// Copy `path` to `path.bak` (or `.bak.1`, `.bak.2`, … when that exists).
fn keep_backup(path: &Path) -> Result<PathBuf, MergeError> {
    let base = path.as_os_str().to_owned();
    let mut candidate = PathBuf::from({
        let mut s = base.clone();
        s.push(".bak");
        s
    });
    let mut n = 1;
    while candidate.exists() {
        let mut s = base.clone();
        s.push(format!(".bak.{n}"));
        candidate = PathBuf::from(s);
        n += 1;
    }
    fs::copy(path, &candidate).map_err(|source| MergeError::Write {
        path: candidate.clone(),
        source,
    })?;
    Ok(candidate)
}

/// Write through a temporary sibling and rename, so a crash never leaves half a file.
fn write_atomically(path: &Path, contents: &str) -> Result<(), MergeError> {
    let err = |source| MergeError::Write {
        path: path.to_path_buf(),
        source,
    };
    // Write through a symlink to the file it points at, rather than replacing the link.
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(err)?;
    atomic_replace(&target, contents.as_bytes(), Mode::Keep { new: 0o644 })
        .map_err(|e| err(e.source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_survives_a_round_trip() {
        let text = r#"{"z": 1, "a": {"y": [true, null, 1.5], "b": "x"}, "m": -3}"#;
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            serde_json::to_string(&value).unwrap(),
            r#"{"z":1,"a":{"y":[true,null,1.5],"b":"x"},"m":-3}"#
        );
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_last_value() {
        let value: Value = serde_json::from_str(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        assert_eq!(serde_json::to_string(&value).unwrap(), r#"{"a":3,"b":2}"#);
    }

    #[test]
    fn a_missing_key_is_appended_after_the_others() {
        let mut object: Map<String, Value> = serde_json::from_str(r#"{"x": null}"#).unwrap();
        *object.entry("y").or_insert(Value::Bool(false)) = Value::Bool(true);
        assert_eq!(
            *object.entry("x").or_insert(Value::Bool(false)),
            Value::Null
        );
        assert_eq!(
            serde_json::to_string(&object).unwrap(),
            r#"{"x":null,"y":true}"#
        );
    }

    #[test]
    fn a_merge_keeps_the_files_key_order_and_appends_new_rules() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        fs::write(
            &file,
            r#"{"z": 1, "permissions": {"deny": [], "allow": ["Bash(ls)"], "ask": []}, "a": 2}"#,
        )
        .unwrap();
        let grant = Grant {
            allow: ["Bash(git status)".to_string()].into(),
            deny: ["Read(~/.ssh/**)".to_string()].into(),
        };
        let outcome = merge_into(&file, &grant, false).unwrap();
        assert_eq!(outcome.added, 2);
        let keys: Vec<&str> = outcome
            .json
            .lines()
            .filter_map(|l| l.trim().strip_prefix('"'))
            .filter_map(|l| l.split_once("\":").map(|(k, _)| k))
            .collect();
        assert_eq!(keys, ["z", "permissions", "deny", "allow", "ask", "a"]);
        assert!(outcome
            .json
            .contains("\"Bash(ls)\",\n      \"Bash(git status)\""));
        assert!(outcome
            .json
            .contains("\"deny\": [\n      \"Read(~/.ssh/**)\"\n    ]"));
    }

    #[test]
    fn broad_file_rules_are_told_apart_from_scoped_ones() {
        for broad in [
            "Read",
            "Write",
            "Edit",
            "Glob",
            "Grep",
            "MultiEdit",
            "NotebookEdit",
            "LS",
            "Read()",
            "Edit(**)",
            "Read(//**)",
            "Edit(~/**)",
            "Read(*)",
            "Write( ** )",
        ] {
            assert!(is_broad_file_rule(broad), "{broad}");
        }
        for scoped in [
            "Read(//srv/loop/**)",
            "Edit(./src/**)",
            "Read(~/.ssh/**)",
            "Bash",
            "Bash(cat:*)",
            "WebFetch",
            "Reader",
            "Read(//**",
            "mcp__x__Read",
        ] {
            assert!(!is_broad_file_rule(scoped), "{scoped}");
        }
    }
}
