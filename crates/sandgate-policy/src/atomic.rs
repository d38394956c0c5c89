//! Replacing a file atomically: the one helper every writer of sandgate uses
//! (policy rules, the compiled-policy cache, the file tools, hook installs,
//! grant merges, `sandbox.json`).
//!
//! The new bytes go to a temporary file beside the target (`.<name>.XXXXXX.tmp`),
//! which gets its mode, is flushed to disk and renamed over the target; then
//! the directory is flushed, so the rename itself survives a crash. A reader
//! sees the old file or the new one, never half of either. A failed write
//! removes its temporary file.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The mode of the replaced file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The target's current permission bits; `new` when there is no target yet.
    Keep {
        /// The mode of a file that did not exist.
        new: u32,
    },
    /// Exactly these permission bits.
    Set(u32),
}

/// A step of the replacement that failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} `{}`: {source}", path.display())]
pub struct ReplaceError {
    /// What was being done: `create a temporary file in`, `write`,
    /// `set the mode of`, `flush` or `replace`.
    pub action: &'static str,
    /// The path it was done to.
    pub path: PathBuf,
    /// The cause.
    #[source]
    pub source: io::Error,
}

/// The prefix of the temporary files a replacement of `file` makes (with the
/// suffix [`TEMP_SUFFIX`]), for callers that clean up after writers that died.
pub fn temp_prefix(file: &Path) -> String {
    format!(
        ".{}.",
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file".into())
    )
}

/// The suffix of the temporary files (see [`temp_prefix`]).
pub const TEMP_SUFFIX: &str = ".tmp";

/// Replace `file` (its parent directory must exist) with `bytes`, atomically.
pub fn atomic_replace(file: &Path, bytes: &[u8], mode: Mode) -> Result<(), ReplaceError> {
    let err = |action, path: &Path| {
        let path = path.to_path_buf();
        move |source| ReplaceError {
            action,
            path,
            source,
        }
    };
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let bits = match mode {
        Mode::Set(bits) => bits,
        Mode::Keep { new } => current_mode(file).unwrap_or(new),
    };
    let mut temp = tempfile::Builder::new()
        .prefix(&temp_prefix(file))
        .suffix(TEMP_SUFFIX)
        .tempfile_in(dir)
        .map_err(err("create a temporary file in", dir))?;
    temp.write_all(bytes).map_err(err("write", temp.path()))?;
    set_mode(temp.as_file(), bits).map_err(err("set the mode of", temp.path()))?;
    temp.as_file()
        .sync_all()
        .map_err(err("flush", temp.path()))?;
    temp.persist(file).map_err(|e| ReplaceError {
        action: "replace",
        path: file.to_path_buf(),
        source: e.error,
    })?;
    // The rename is durable only once the directory entry is on disk.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(unix)]
fn current_mode(file: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(file)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn current_mode(_file: &Path) -> Option<u32> {
    None
}

#[cfg(unix)]
fn set_mode(file: &File, bits: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(bits))
}

#[cfg(not(unix))]
fn set_mode(_file: &File, _bits: u32) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode_of(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_new_file_gets_the_new_mode_and_an_old_one_keeps_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.yaml");
        atomic_replace(&file, b"one", Mode::Keep { new: 0o640 }).unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"one");
        assert_eq!(mode_of(&file), 0o640);
        fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
        atomic_replace(&file, b"two", Mode::Keep { new: 0o644 }).unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"two");
        assert_eq!(mode_of(&file), 0o600);
        atomic_replace(&file, b"three", Mode::Set(0o644)).unwrap();
        assert_eq!(mode_of(&file), 0o644);
        // No temporary file is left behind.
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.yaml"]);
    }

    #[test]
    fn a_failed_replacement_names_the_step_and_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a non-empty directory: the rename fails.
        let target = dir.path().join("t");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("inside"), "x").unwrap();
        let e = atomic_replace(&target, b"new", Mode::Set(0o644)).unwrap_err();
        assert_eq!(e.action, "replace");
        assert!(e.to_string().starts_with("cannot replace `"), "{e}");
        assert!(target.join("inside").exists());
        let left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["t"]);
        // A missing directory fails at the first step.
        let e = atomic_replace(&dir.path().join("no/such/f"), b"", Mode::Set(0o644)).unwrap_err();
        assert_eq!(e.action, "create a temporary file in");
    }
}
