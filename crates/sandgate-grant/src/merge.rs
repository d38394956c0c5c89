//! Merging a grant into a harness settings file (`.claude/settings.local.json`).
//!
//! The file belongs to the user as much as to us: the merge only adds rules to
//! `permissions.allow`, keeps every other key and rule, and refuses — writing
//! nothing — when the file is not what it expects, unless told to `--force`
//! (which first keeps a `.bak` copy).

use sandgate_policy::atomic::{atomic_replace, Mode};
use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::ordered::{entry, Json};

/// What a merge did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeOutcome {
    /// The settings file.
    pub path: PathBuf,
    /// How many rules the grant requires (the same on every identical run).
    pub required: usize,
    /// How many of them were not in the file before.
    pub added: usize,
    /// Whether the file was (re)written.
    pub written: bool,
    /// Where the unusable original was kept, when `force` replaced it.
    pub backup: Option<PathBuf>,
    /// The merged settings, pretty-printed with a trailing newline.
    pub json: String,
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
    /// `permissions.allow` is not an array.
    #[error("`permissions.allow` in `{path}` is {found}, not an array; nothing was written (fix or remove it by hand)")]
    AllowNotArray {
        /// The settings file.
        path: PathBuf,
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

/// Add `rules` to `permissions.allow` in the JSON file at `path`.
///
/// Additive and idempotent: existing rules and unrelated keys stay, `permissions`
/// and `allow` are created when absent, and a run that adds nothing to an
/// existing file leaves it untouched. Parent directories are created.
pub fn merge_into(
    path: &Path,
    rules: &BTreeSet<String>,
    force: bool,
) -> Result<MergeOutcome, MergeError> {
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
        None => Vec::new(),
        Some(text) if text.trim().is_empty() => Vec::new(),
        Some(text) => match serde_json::from_str::<Json>(text) {
            Ok(Json::Object(entries)) => entries,
            Ok(_) if force => {
                backup = Some(keep_backup(path)?);
                Vec::new()
            }
            Ok(other) => {
                return Err(MergeError::RootNotObject {
                    path: path.to_path_buf(),
                    found: other.kind(),
                })
            }
            Err(_) if force => {
                backup = Some(keep_backup(path)?);
                Vec::new()
            }
            Err(e) => {
                return Err(MergeError::Parse {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })
            }
        },
    };

    let permissions = entry(&mut root, "permissions", || Json::Object(Vec::new()));
    let found = permissions.kind();
    let Json::Object(permissions) = permissions else {
        return Err(MergeError::PermissionsNotObject {
            path: path.to_path_buf(),
            found,
        });
    };
    let allow = entry(permissions, "allow", || Json::Array(Vec::new()));
    let found = allow.kind();
    let Json::Array(allow) = allow else {
        return Err(MergeError::AllowNotArray {
            path: path.to_path_buf(),
            found,
        });
    };

    let present: BTreeSet<String> = allow
        .iter()
        .filter_map(|v| match v {
            Json::String(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    let mut added = 0;
    for rule in rules {
        if !present.contains(rule) {
            allow.push(Json::String(rule.clone()));
            added += 1;
        }
    }

    let mut json =
        serde_json::to_string_pretty(&Json::Object(root)).map_err(|e| MergeError::Write {
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
        required: rules.len(),
        added,
        written,
        backup,
        json,
    })
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
