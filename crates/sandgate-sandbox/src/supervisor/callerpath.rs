//! Resolving a path as the calling thread would.
//!
//! The supervisor judges paths it reads from another process. Resolving them
//! with the supervisor's own system calls would get `/proc/self` and
//! `/proc/thread-self` wrong: there they are the supervisor, not the caller
//! (GNU tar's `chmod("/proc/self/fd/N")` then names one of the supervisor's
//! descriptors, and a metadata change, which has no Landlock floor, would be
//! judged on the wrong file). So the path is walked here component by
//! component, following symbolic links as the kernel does, and each time the
//! walk stands in `/proc` and meets `self` or `thread-self`, it goes to the
//! caller's `/proc/TGID` or `/proc/TGID/task/TID` instead. That holds however
//! `/proc/self` is reached: spelled out, from a working directory in `/proc`,
//! or through a symbolic link.
//!
//! `fs::canonicalize` cannot be told to do this, hence the walk.
//!
//! This module contains `unsafe` code: one `gettid` call, to tell the
//! supervisor's own thread from the caller's in `/proc/thread-self`.

#![allow(unsafe_code)]

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// The most symbolic links one resolution follows, as the kernel's limit.
const MAX_LINKS: u32 = 40;

/// The thread group (process) of thread `tid`.
fn tgid_of(tid: u32) -> Option<u32> {
    let status = fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

fn push_components(pending: &mut VecDeque<OsString>, path: &Path) {
    for component in path.components().rev() {
        match component {
            Component::Normal(name) => pending.push_front(name.to_os_string()),
            Component::ParentDir => pending.push_front(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
}

/// Where `path` (absolute) leads for thread `tid`: every symbolic link
/// followed (the last one only with `follow`), `/proc/self` and
/// `/proc/thread-self` standing for the caller. Components past the first
/// missing one are kept as written, with `.` and `..` collapsed.
///
/// `None` when the path leads to something no path reaches (a pipe, a
/// socket, an anonymous inode, a deleted file, seen through a
/// `/proc/…/fd/N` link), or through too many links.
pub fn canonicalize_as_caller(path: &Path, follow: bool, tid: u32) -> Option<PathBuf> {
    let mut pending = VecDeque::new();
    push_components(&mut pending, path);
    let mut out = PathBuf::from("/");
    let mut links = 0;
    let mut missing = false;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            out.pop();
            continue;
        }
        if !missing && out == Path::new("/proc") {
            if name == "self" {
                out.push(tgid_of(tid)?.to_string());
                continue;
            }
            if name == "thread-self" {
                out.push(tgid_of(tid)?.to_string());
                out.push("task");
                out.push(tid.to_string());
                continue;
            }
        }
        let candidate = out.join(&name);
        if missing {
            out = candidate;
            continue;
        }
        let last = pending.is_empty();
        match fs::symlink_metadata(&candidate) {
            Err(_) => {
                missing = true;
                out = candidate;
            }
            Ok(meta) if meta.file_type().is_symlink() && (follow || !last) => {
                links += 1;
                if links > MAX_LINKS {
                    return None;
                }
                let target = fs::read_link(&candidate).ok()?;
                if in_proc(&candidate) && !target.is_absolute() {
                    // A magic link to something without a path: `pipe:[…]`,
                    // `socket:[…]`, `anon_inode:[…]`.
                    return None;
                }
                if target.as_os_str().as_bytes().ends_with(b" (deleted)") && in_proc(&candidate) {
                    return None;
                }
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                push_components(&mut pending, &target);
            }
            Ok(_) => out = candidate,
        }
    }
    Some(out)
}

fn in_proc(path: &Path) -> bool {
    path.starts_with("/proc")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> (u32, u32) {
        // SAFETY: plain system calls without arguments.
        let tid = unsafe { libc::gettid() } as u32;
        (std::process::id(), tid)
    }

    #[test]
    fn proc_self_means_the_caller() {
        let (pid, tid) = me();
        // The parent process stands in for a caller other than ourselves.
        let parent = std::os::unix::process::parent_id();
        assert_eq!(
            canonicalize_as_caller(Path::new("/proc/self/status"), true, parent),
            Some(PathBuf::from(format!("/proc/{parent}/status")))
        );
        assert_eq!(
            canonicalize_as_caller(Path::new("/proc/./self/../self/status"), true, parent),
            Some(PathBuf::from(format!("/proc/{parent}/status")))
        );
        assert_eq!(
            canonicalize_as_caller(Path::new("/proc/thread-self/comm"), true, tid),
            Some(PathBuf::from(format!("/proc/{pid}/task/{tid}/comm")))
        );
    }

    #[test]
    fn descriptors_of_the_caller_lead_to_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::write(root.join("file"), "x").unwrap();
        std::os::unix::fs::symlink("/proc/self/fd", root.join("fds")).unwrap();
        let file = fs::File::open(root.join("file")).unwrap();
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        let (_, tid) = me();
        assert_eq!(
            canonicalize_as_caller(Path::new(&format!("/proc/self/fd/{fd}")), true, tid),
            Some(root.join("file"))
        );
        // Through a symbolic link to /proc/self, too.
        assert_eq!(
            canonicalize_as_caller(&root.join(format!("fds/{fd}")), true, tid),
            Some(root.join("file"))
        );
        // Not following the last link keeps it.
        assert_eq!(
            canonicalize_as_caller(Path::new(&format!("/proc/self/fd/{fd}")), false, tid),
            Some(PathBuf::from(format!(
                "/proc/{}/fd/{fd}",
                std::process::id()
            )))
        );
        // A pipe has no path.
        let (reader, _writer) = std::io::pipe().unwrap();
        let fd = reader.as_raw_fd();
        assert_eq!(
            canonicalize_as_caller(Path::new(&format!("/proc/self/fd/{fd}")), true, tid),
            None
        );
    }

    #[test]
    fn missing_tails_stay_lexical_and_loops_end() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir(root.join("d")).unwrap();
        std::os::unix::fs::symlink("d", root.join("l")).unwrap();
        let (_, tid) = me();
        assert_eq!(
            canonicalize_as_caller(&root.join("l/new/./x/../y"), true, tid),
            Some(root.join("d/new/y"))
        );
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        assert_eq!(
            canonicalize_as_caller(&root.join("loop/x"), true, tid),
            None
        );
    }
}
