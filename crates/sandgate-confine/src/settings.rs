//! `<workspace>/.sandgate/sandbox.json`: the per-workspace switch, the allowed
//! and the denied paths that `sandgate run` persists.
//!
//! The file is JSON (it is written by sandgate, read by people). Keys sandgate
//! does not know are kept when it rewrites the file.

use sandgate_policy::atomic::{atomic_replace, Mode};
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The directory inside a workspace that holds sandgate's own files.
pub const STATE_DIR: &str = ".sandgate";
/// The file name of the sandbox settings inside [`STATE_DIR`].
pub const FILE_NAME: &str = "sandbox.json";

/// The settings of one workspace, as read from `sandbox.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxSettings {
    /// Arms `sandgate run` for this workspace.
    #[serde(default)]
    pub enabled: bool,
    /// Makes `.git` read-only to the confined program.
    #[serde(default)]
    pub strict_git: bool,
    /// Paths the program may write (each with everything beneath it).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Paths whose writes fail without asking (each with everything beneath it).
    #[serde(default)]
    pub deny: Vec<String>,
    /// Extra agent state directories, added to the built-in list.
    #[serde(default)]
    pub state_dirs: Vec<String>,
    /// More protected paths, added to the built-in list
    /// ([`sandgate_policy::protected`]); relative ones are relative to the workspace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protect: Vec<String>,
    /// UNIX sockets outside the run that the program may `connect()` to by
    /// path (a listener of its own it may always reach); relative ones are
    /// relative to the workspace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unix_sockets: Vec<String>,
    /// Keys sandgate does not know; kept on rewrite.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// Which list an "always" answer goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// The `allow` list.
    Allow,
    /// The `deny` list.
    Deny,
}

/// A problem with `sandbox.json`.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file or its directory cannot be read or written.
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        /// What was attempted.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The file is not valid settings JSON.
    #[error("`{path}`:{line}:{column}: {message}; hint: the file must be a JSON object such as {{\"enabled\": false, \"allow\": [], \"deny\": []}}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser says.
        message: String,
    },
}

/// The `sandbox.json` of one workspace.
#[derive(Debug, Clone)]
pub struct SandboxFile {
    path: PathBuf,
}

/// The most `sandbox.json` may hold; a larger file is an error.
const MAX_BYTES: u64 = 1 << 20;

/// The text of the regular file at `path`: a FIFO, a device or a directory
/// in its place is an error found without waiting on it (a named pipe a
/// program planted there cannot hang the next start), and so is a file over
/// [`MAX_BYTES`] or one that is not UTF-8.
fn read_text(path: &Path) -> io::Result<String> {
    let bytes = sandgate_policy::load::read_regular(path, MAX_BYTES)?;
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

impl SandboxFile {
    /// The settings file of `workspace`.
    pub fn of(workspace: &Path) -> SandboxFile {
        SandboxFile {
            path: workspace.join(STATE_DIR).join(FILE_NAME),
        }
    }

    /// Where the file lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the settings; creates the directory and the file (with
    /// `"enabled": false`) when they are missing.
    pub fn load_or_create(&self) -> Result<SandboxSettings, SettingsError> {
        let dir = self.dir();
        fs::create_dir_all(dir).map_err(|source| SettingsError::Io {
            action: "create",
            path: dir.to_path_buf(),
            source,
        })?;
        match read_text(&self.path) {
            Ok(text) => self.parse(&text),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                let settings = SandboxSettings::default();
                let _lock = self.lock()?;
                // Another sandgate may have created it while we waited.
                if let Ok(text) = read_text(&self.path) {
                    return self.parse(&text);
                }
                self.write(&settings)?;
                Ok(settings)
            }
            Err(source) => Err(SettingsError::Io {
                action: "read",
                path: self.path.clone(),
                source,
            }),
        }
    }

    /// Adds `entry` to the `allow` or `deny` list, under a lock, by atomic
    /// replace; an entry already present is not added twice.
    pub fn persist(&self, list: ListKind, entry: &str) -> Result<(), SettingsError> {
        let _lock = self.lock()?;
        let mut settings = match read_text(&self.path) {
            Ok(text) => self.parse(&text)?,
            Err(err) if err.kind() == io::ErrorKind::NotFound => SandboxSettings::default(),
            Err(source) => {
                return Err(SettingsError::Io {
                    action: "read",
                    path: self.path.clone(),
                    source,
                })
            }
        };
        let target = match list {
            ListKind::Allow => &mut settings.allow,
            ListKind::Deny => &mut settings.deny,
        };
        if target.iter().any(|e| e == entry) {
            return Ok(());
        }
        target.push(entry.to_string());
        self.write(&settings)
    }

    fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    fn parse(&self, text: &str) -> Result<SandboxSettings, SettingsError> {
        serde_json::from_str(text).map_err(|err| SettingsError::Parse {
            path: self.path.clone(),
            line: err.line(),
            column: err.column(),
            message: err.to_string(),
        })
    }

    /// Locks the `.sandgate` directory itself (no lock file to leave behind).
    fn lock(&self) -> Result<File, SettingsError> {
        let dir = self.dir();
        let file = File::open(dir).map_err(|source| SettingsError::Io {
            action: "open",
            path: dir.to_path_buf(),
            source,
        })?;
        file.lock().map_err(|source| SettingsError::Io {
            action: "lock",
            path: dir.to_path_buf(),
            source,
        })?;
        Ok(file)
    }

    fn write(&self, settings: &SandboxSettings) -> Result<(), SettingsError> {
        let io_err = |action, source| SettingsError::Io {
            action,
            path: self.path.clone(),
            source,
        };
        let mut text = serde_json::to_string_pretty(settings)
            .map_err(|err| io_err("encode", io::Error::other(err)))?;
        text.push('\n');
        atomic_replace(&self.path, text.as_bytes(), Mode::Set(0o644)).map_err(|e| {
            SettingsError::Io {
                action: e.action,
                path: e.path,
                source: e.source,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_disabled_file_and_keeps_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let file = SandboxFile::of(dir.path());
        let settings = file.load_or_create().unwrap();
        assert!(!settings.enabled);
        let text = fs::read_to_string(file.path()).unwrap();
        assert!(text.contains("\"enabled\": false"), "{text}");

        fs::write(
            file.path(),
            r#"{"enabled": true, "note": "mine", "allow": ["/a"]}"#,
        )
        .unwrap();
        file.persist(ListKind::Allow, "/b").unwrap();
        file.persist(ListKind::Allow, "/b").unwrap();
        file.persist(ListKind::Deny, "/c").unwrap();
        let settings = file.load_or_create().unwrap();
        assert!(settings.enabled);
        assert_eq!(settings.allow, vec!["/a", "/b"]);
        assert_eq!(settings.deny, vec!["/c"]);
        assert_eq!(settings.other.get("note"), Some(&Value::from("mine")));
    }

    #[test]
    fn broken_file_names_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let file = SandboxFile::of(dir.path());
        fs::create_dir_all(dir.path().join(STATE_DIR)).unwrap();
        fs::write(file.path(), "{\n  \"enabled\": yes\n}").unwrap();
        let err = file.load_or_create().unwrap_err().to_string();
        assert!(err.contains("sandbox.json`:2:"), "{err}");
    }
}
