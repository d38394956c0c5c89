//! The fast path for write-opens: a small preload library (`shim/preload.c`,
//! built by `build.rs`) that every dynamically linked confined program loads
//! through `LD_PRELOAD`.
//!
//! It wraps the libc open family and marks each `openat` it issues with
//! [`MARKER`]; the seccomp filter lets a marked `openat` through unnotified,
//! so the Landlock floor alone decides it, and the library retries a write
//! that Landlock refused without the marker, which the supervisor then
//! decides as usual. Only the common case (Landlock allows it) skips the
//! round trip to the supervisor. The marker is no secret: forging it only
//! gets a program Landlock's decision without a question.
//!
//! The library file lives beneath `~/.sandgate/` (protected: the confined
//! program cannot write it, so it cannot plant code into later runs), under
//! a content-addressed name, written atomically and reused when identical.
//!
//! This module contains `unsafe` code: one `geteuid` call.

#![allow(unsafe_code)]

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::plan::{RunPlan, RunPlanExt};
use super::settings::STATE_DIR;

include!(concat!(env!("OUT_DIR"), "/preload.rs"));

/// The environment variable through which the library is loaded.
pub const VARIABLE: &str = "LD_PRELOAD";

/// The library's file name: its content hash, so that sandgate builds with
/// different libraries never share a file.
pub fn file_name() -> String {
    format!("preload-{LIBRARY_HASH:016x}.so")
}

/// The directory for the library: `lib/` in the protected state directory
/// of the home (`~/.sandgate/`), never one the program may write.
pub fn library_dir(plan: &RunPlan) -> Option<PathBuf> {
    let in_workspace = |p: &Path| plan.workspaces.iter().any(|w| *p == w.join(STATE_DIR));
    let state_dirs = || {
        plan.held()
            .into_iter()
            .filter(|p| p.file_name() == Some(OsStr::new(STATE_DIR)))
    };
    // `~/.sandgate` is the one that is not a workspace's own `.sandgate`
    // (unless the home is itself a workspace: then they are one directory).
    let home_state = state_dirs()
        .find(|p| !in_workspace(p))
        .or_else(|| state_dirs().next_back())?;
    let dir = home_state.join("lib");
    plan.is_protected(&dir).then_some(dir)
}

/// Writes the library into `dir` (created if missing) unless an identical
/// copy is there already, and returns its path. `None` on targets without a
/// library.
pub fn materialise(dir: &Path) -> io::Result<Option<PathBuf>> {
    let Some(bytes) = LIBRARY else {
        return Ok(None);
    };
    let path = dir.join(file_name());
    if holds(&path, bytes) {
        return private(dir).map(|()| Some(path));
    }
    if let Some(state) = dir.parent() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(state)?;
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)?;
    private(dir)?;
    let temp = dir.join(format!(".{}.{}.tmp", file_name(), std::process::id()));
    // Left by an earlier sandgate with this pid that did not finish.
    let _ = fs::remove_file(&temp);
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o755)
        .open(&temp)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            // Readable by every user the program may switch to, whatever the umask.
            file.set_permissions(fs::Permissions::from_mode(0o755))
        });
    // Another sandgate may have put the same bytes there meanwhile: the
    // rename replaces them atomically, so a reader never sees a partial file.
    let renamed = written.and_then(|()| fs::rename(&temp, &path));
    if renamed.is_err() {
        let _ = fs::remove_file(&temp);
    }
    renamed.map(|()| Some(path))
}

/// The effective user id of this process.
fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Fails unless `dir` is a real directory of this user that no one else
/// may write: anyone who could would swap the library after the check.
fn private(dir: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(dir)?;
    if !meta.is_dir() || meta.uid() != euid() || meta.mode() & 0o022 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "`{}` is not a directory that only its owner, this user, can write",
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// Whether `path` is a regular file (not a symlink) of this user, writable
/// by no one else, holding exactly `bytes`.
fn holds(path: &Path, bytes: &[u8]) -> bool {
    let Ok(mut file) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    else {
        return false;
    };
    let trusted = File::metadata(&file).is_ok_and(|m| {
        m.is_file() && m.uid() == euid() && m.mode() & 0o022 == 0 && m.len() == bytes.len() as u64
    });
    let mut content = Vec::with_capacity(bytes.len());
    trusted && file.read_to_end(&mut content).is_ok() && content == bytes
}

/// The `LD_PRELOAD` value that adds `library` to `existing`, or `None` when
/// the library's path cannot be listed there (the loader splits the list at
/// spaces and colons).
///
/// The library goes last: a preload the user chose keeps wrapping `open` as
/// before and reaches this library as the next definition.
pub fn variable(library: &Path, existing: Option<&OsStr>) -> Option<OsString> {
    let bytes = library.as_os_str().as_bytes();
    if !library.is_absolute() || bytes.iter().any(|b| matches!(b, b' ' | b':' | b'\t')) {
        return None;
    }
    let existing = existing.filter(|e| !e.is_empty());
    let Some(existing) = existing else {
        return Some(library.as_os_str().to_owned());
    };
    let listed = existing
        .as_bytes()
        .split(|b| matches!(b, b' ' | b':'))
        .any(|entry| entry == bytes);
    if listed {
        return Some(existing.to_owned());
    }
    let mut value = existing.to_owned();
    value.push(":");
    value.push(library.as_os_str());
    Some(value)
}

/// Sets `LD_PRELOAD` on `cmd` so that the program takes the fast path, and
/// returns the library's path; `None` (and `cmd` untouched) when the library
/// cannot be put in place: the program then runs without the fast path,
/// which is just as confined, only slower.
pub fn arm(cmd: &mut Command, plan: &RunPlan) -> Option<PathBuf> {
    let dir = library_dir(plan)?;
    let library = materialise(&dir).ok()??;
    let existing: Option<OsString> = match cmd.get_envs().find(|(k, _)| *k == VARIABLE) {
        Some((_, set)) => set.map(OsStr::to_owned),
        None => std::env::var_os(VARIABLE),
    };
    let value = variable(&library, existing.as_deref())?;
    cmd.env(VARIABLE, value);
    Some(library)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::{RunPlanInputs, SandboxSettings};

    #[test]
    fn the_variable_keeps_an_existing_preload_first() {
        let lib = Path::new("/h/.sandgate/lib/preload-1.so");
        let table: &[(Option<&str>, Option<&str>)] = &[
            (None, Some("/h/.sandgate/lib/preload-1.so")),
            (Some(""), Some("/h/.sandgate/lib/preload-1.so")),
            (
                Some("/usr/lib/x.so"),
                Some("/usr/lib/x.so:/h/.sandgate/lib/preload-1.so"),
            ),
            (
                Some("a.so b.so"),
                Some("a.so b.so:/h/.sandgate/lib/preload-1.so"),
            ),
            (
                Some("/h/.sandgate/lib/preload-1.so:/x.so"),
                Some("/h/.sandgate/lib/preload-1.so:/x.so"),
            ),
        ];
        for (existing, want) in table {
            let got = variable(lib, existing.map(OsStr::new));
            assert_eq!(got.as_deref(), want.map(OsStr::new), "{existing:?}");
        }
        for unlisted in ["/my home/.sandgate/lib/p.so", "/a:b/p.so", "relative/p.so"] {
            assert_eq!(variable(Path::new(unlisted), None), None, "{unlisted}");
        }
    }

    #[test]
    fn the_library_is_written_once_then_reused_and_repaired() {
        let Some(bytes) = LIBRARY else {
            eprintln!("skipping: no preload library on this target");
            return;
        };
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".sandgate/lib");
        let path = materialise(&dir).unwrap().unwrap();
        assert_eq!(path, dir.join(file_name()));
        assert_eq!(fs::read(&path).unwrap(), bytes);
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        let state = fs::metadata(home.path().join(".sandgate")).unwrap();
        assert_eq!(state.permissions().mode() & 0o777, 0o700);

        // Reused: the same inode stays.
        let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&fs::metadata(p).unwrap());
        let before = inode(&path);
        materialise(&dir).unwrap();
        assert_eq!(inode(&path), before);

        // A damaged copy is replaced, and no temp file is left behind.
        fs::write(&path, b"not a library").unwrap();
        materialise(&dir).unwrap();
        assert_eq!(fs::read(&path).unwrap(), bytes);
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from(file_name())]);

        // A library directory others may write is not used.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(
            materialise(&dir).unwrap_err().kind(),
            io::ErrorKind::PermissionDenied
        );
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        // Nor a library file others may write: it is replaced.
        fs::set_permissions(&path, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(!holds(&path, bytes));
        materialise(&dir).unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o755
        );
        // A temp file left by an unfinished run with this pid is no obstacle.
        fs::remove_file(&path).unwrap();
        let stale = dir.join(format!(".{}.{}.tmp", file_name(), std::process::id()));
        fs::write(&stale, b"half").unwrap();
        materialise(&dir).unwrap();
        assert!(!stale.exists());
        assert_eq!(fs::read(&path).unwrap(), bytes);

        // A symlink in its place is not trusted.
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/bin/sh", &path).unwrap();
        assert!(!holds(&path, bytes));
        materialise(&dir).unwrap();
        assert!(fs::symlink_metadata(&path).unwrap().is_file());
    }

    #[test]
    fn the_library_dir_is_protected_and_not_in_the_workspace() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let ws = root.join("ws");
        let home = root.join("home");
        fs::create_dir_all(&ws).unwrap();
        fs::create_dir_all(&home).unwrap();
        let plan_with = |home: &Path| {
            RunPlan::build(&RunPlanInputs {
                workspaces: vec![ws.clone()],
                home: home.to_path_buf(),
                tmpdir: None,
                policy_cache: None,
                credentials: Vec::new(),
                settings: SandboxSettings {
                    allow: vec!["~".into()],
                    ..SandboxSettings::default()
                },
            })
        };
        let plan = plan_with(&home);
        assert_eq!(library_dir(&plan), Some(home.join(".sandgate/lib")));
        // The home is a workspace: its `.sandgate` is both, still protected.
        let plan = plan_with(&ws);
        assert_eq!(library_dir(&plan), Some(ws.join(".sandgate/lib")));
    }
}
