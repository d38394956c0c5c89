//! What the supervisor knows about each calling thread between two of its
//! system calls: its working directory and its credentials (ids, groups,
//! `CAP_DAC_OVERRIDE`, umask).
//!
//! Reading them from `/proc` costs several system calls per notification,
//! more than the write being decided on tmpfs. So they are read once per
//! thread and kept, and the system calls that change them are handed to the
//! supervisor too (`sandgate run`'s filter hands them over; they decode as
//! [`super::decode::Syscall::Context`] and [`super::decode::Syscall::Creds`]),
//! which forgets what
//! they may change before letting them run:
//!
//! - `chdir`, `fchdir`, `umask` change the working directory or umask of
//!   every thread sharing the caller's file-system context. A thread cannot
//!   race with its own `chdir`, but a sibling thread could fill the cache
//!   between the notification and the kernel's change, so a thread group
//!   seen doing that while it has more than one thread is never cached
//!   again. Renaming or removing a directory can change the path of some
//!   working directory: every cached one is forgotten.
//! - `set*id`, `setgroups`, `capset` change the calling thread's credentials:
//!   every cached credential is forgotten. (`execve` can also lower the
//!   effective capabilities, after the bounding or ambient set was narrowed;
//!   it is not intercepted, because the program's own first `execve` runs
//!   before the supervisor does. Such a program keeps the capabilities it
//!   had for the emulated file-mode check of writes sandgate performs for
//!   it, which only ever happen inside the allowed set.)
//!
//! A thread id can be reused once its thread has exited, so each entry holds
//! a pidfd of the thread it describes; an entry whose thread has exited is
//! dropped at its next use. Where the kernel gives no pidfd, nothing is
//! cached and every lookup reads `/proc`.
//!
//! This module contains `unsafe` code: `pidfd_open` and `poll` on a pidfd, and
//! reading the umask (`umask` twice).

#![allow(unsafe_code)]

use std::collections::{HashMap, HashSet};
use std::fs;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// `CAP_DAC_OVERRIDE`: file modes do not apply.
const CAP_DAC_OVERRIDE: u32 = 1;
/// `PIDFD_THREAD` (Linux 6.9): a pidfd for a thread rather than a process.
const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;
/// More cached threads than this: drop the exited ones.
const SWEEP_AT: usize = 256;

/// The credentials the kernel checks file modes against, and the umask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Creds {
    /// File-system user id.
    pub uid: u32,
    /// File-system group id.
    pub gid: u32,
    /// Supplementary groups.
    pub groups: Vec<u32>,
    /// Whether `CAP_DAC_OVERRIDE` is effective (modes do not apply).
    pub dac_override: bool,
    /// The umask.
    pub umask: u32,
}

/// What `/proc/PID/status` says about a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Status {
    creds: Creds,
    tgid: u32,
    threads: u32,
}

impl Status {
    fn parse(status: &str) -> Option<Status> {
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(str::trim)
        };
        // `Uid:` lists real, effective, saved and file-system ids; the last decides.
        let last = |s: Option<&str>| s?.split_whitespace().nth(3)?.parse().ok();
        let cap = u64::from_str_radix(field("CapEff:")?, 16).ok()?;
        let creds = Creds {
            uid: last(field("Uid:"))?,
            gid: last(field("Gid:"))?,
            groups: field("Groups:")
                .unwrap_or("")
                .split_whitespace()
                .filter_map(|g| g.parse().ok())
                .collect(),
            dac_override: cap & (1 << CAP_DAC_OVERRIDE) != 0,
            umask: u32::from_str_radix(field("Umask:").unwrap_or("0022"), 8).unwrap_or(0o022),
        };
        Some(Status {
            creds,
            tgid: field("Tgid:")?.parse().ok()?,
            threads: field("Threads:").and_then(|t| t.parse().ok()).unwrap_or(1),
        })
    }

    fn read(pid: u32) -> Option<Status> {
        let file = fs::File::open(format!("/proc/{pid}/status")).ok()?;
        let mut buf = [0u8; 8192];
        let n = file.read_at(&mut buf, 0).ok()?;
        Status::parse(&String::from_utf8_lossy(&buf[..n]))
    }
}

/// The working directory of `pid`, read now.
fn read_cwd(pid: u32) -> Option<PathBuf> {
    let path = fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
    // A removed working directory reads as "PATH (deleted)": no path to use.
    (!path.as_os_str().as_bytes().ends_with(b" (deleted)")).then_some(path)
}

struct Caller {
    pidfd: OwnedFd,
    tgid: u32,
    cwd: Option<PathBuf>,
    creds: Option<Creds>,
}

impl Caller {
    /// Whether the thread this entry describes has exited (its id may now
    /// belong to another thread).
    fn exited(&self) -> bool {
        let mut pfd = libc::pollfd {
            fd: self.pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd, count 1, no waiting.
        let rc = unsafe { libc::poll(&mut pfd, 1, 0) };
        rc != 0
    }
}

fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    for flags in [PIDFD_THREAD, 0] {
        // SAFETY: integer arguments only.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, flags) };
        if fd >= 0 {
            let fd = libc::c_int::try_from(fd).ok()?;
            // SAFETY: the kernel just returned this descriptor; we own it.
            return Some(unsafe { OwnedFd::from_raw_fd(fd) });
        }
    }
    None
}

#[derive(Default)]
struct State {
    callers: HashMap<u32, Caller>,
    /// Thread groups that changed their working directory or umask while
    /// multi-threaded: their working directory is never cached.
    uncached: HashSet<u32>,
}

/// The per-thread cache.
#[derive(Default)]
pub struct Callers {
    state: Mutex<State>,
}

impl Callers {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The entry of `pid`, created if need be (`None`: cannot cache). An
    /// entry left by an exited thread whose id was reused is replaced: even
    /// where a stale path could only make a write fail under the Landlock
    /// floor, it would fail without the question it deserves.
    fn entry(state: &mut State, pid: u32) -> Option<&mut Caller> {
        if state.callers.get(&pid).is_some_and(Caller::exited) {
            state.callers.remove(&pid);
        }
        if !state.callers.contains_key(&pid) {
            if state.callers.len() >= SWEEP_AT {
                state.callers.retain(|_, c| !c.exited());
                if state.callers.len() >= SWEEP_AT * 4 {
                    state.callers.clear();
                }
            }
            // The pidfd first: what is read after it belongs to its thread.
            let pidfd = pidfd_open(pid)?;
            let status = Status::read(pid)?;
            state.callers.insert(
                pid,
                Caller {
                    pidfd,
                    tgid: status.tgid,
                    cwd: None,
                    creds: Some(status.creds),
                },
            );
        }
        state.callers.get_mut(&pid)
    }

    /// The working directory of `pid`; `fresh` reads it from `/proc` even
    /// when it is cached (and caches what it read).
    pub fn cwd(&self, pid: u32, fresh: bool) -> Option<PathBuf> {
        let mut state = self.lock();
        let uncached = |state: &State, tgid: u32| state.uncached.contains(&tgid);
        let Some(caller) = Self::entry(&mut state, pid) else {
            return read_cwd(pid);
        };
        if !fresh {
            if let Some(cwd) = &caller.cwd {
                return Some(cwd.clone());
            }
        }
        let tgid = caller.tgid;
        let cwd = read_cwd(pid)?;
        if !uncached(&state, tgid) {
            if let Some(caller) = state.callers.get_mut(&pid) {
                caller.cwd = Some(cwd.clone());
            }
        }
        Some(cwd)
    }

    /// The credentials of `pid`.
    pub fn creds(&self, pid: u32) -> Option<Creds> {
        let mut state = self.lock();
        let Some(caller) = Self::entry(&mut state, pid) else {
            return Status::read(pid).map(|s| s.creds);
        };
        if let Some(creds) = &caller.creds {
            return Some(creds.clone());
        }
        let creds = Status::read(pid)?.creds;
        caller.creds = Some(creds.clone());
        Some(creds)
    }

    /// `pid` is about to change the working directory or umask of its
    /// file-system context.
    pub fn context_changes(&self, pid: u32) {
        let status = Status::read(pid);
        let mut state = self.lock();
        if let Some(status) = status {
            if status.threads > 1 {
                state.uncached.insert(status.tgid);
            }
        }
        for caller in state.callers.values_mut() {
            caller.cwd = None;
            caller.creds = None;
        }
    }

    /// Some directory is about to be renamed or removed.
    pub fn paths_change(&self) {
        for caller in self.lock().callers.values_mut() {
            caller.cwd = None;
        }
    }

    /// Some thread is about to change its credentials.
    pub fn creds_change(&self) {
        for caller in self.lock().callers.values_mut() {
            caller.creds = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_is_parsed() {
        let text = "Name:\tsh\nUmask:\t0027\nState:\tS\nTgid:\t41\nPid:\t42\n\
            Uid:\t1000\t1000\t1000\t1001\nGid:\t100\t100\t100\t101\nGroups:\t4 27 \n\
            Threads:\t3\nCapEff:\t0000000000000002\n";
        let status = Status::parse(text).unwrap();
        assert_eq!(status.tgid, 41);
        assert_eq!(status.threads, 3);
        assert_eq!(
            status.creds,
            Creds {
                uid: 1001,
                gid: 101,
                groups: vec![4, 27],
                dac_override: true,
                umask: 0o027,
            }
        );
    }

    #[test]
    fn own_thread_is_cached_and_forgotten() {
        let callers = Callers::default();
        let me = std::process::id();
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(callers.cwd(me, false), Some(cwd.clone()));
        assert_eq!(callers.cwd(me, false), Some(cwd));
        let creds = callers.creds(me).unwrap();
        // SAFETY: umask cannot fail; it is restored right away.
        let umask = unsafe { libc::umask(0o022) };
        // SAFETY: as above.
        unsafe { libc::umask(umask) };
        assert_eq!(creds.umask, umask as u32);
        callers.creds_change();
        callers.paths_change();
        assert!(callers
            .lock()
            .callers
            .values()
            .all(|c| c.cwd.is_none() && c.creds.is_none()));
    }

    #[test]
    fn an_exited_thread_is_not_trusted() {
        let callers = Callers::default();
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(callers.creds(pid).is_some());
        child.kill().unwrap();
        child.wait().unwrap(); // not a wait: the child was just killed
        assert!(callers.lock().callers.get(&pid).unwrap().exited());
        assert!(callers.creds(pid).is_none());
        assert!(!callers.lock().callers.contains_key(&pid));
    }
}
