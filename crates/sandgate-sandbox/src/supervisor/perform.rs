//! The one performer of calls on a supervised caller's behalf, for both
//! scopes: [`act`] makes, opens, removes, renames, links or binds a name in
//! a directory the supervisor holds open ([`At`]), once the scope has
//! resolved and judged it, and hands an opened file back to the caller.
//!
//! How the directory was reached is the scope's: exec isolation (the
//! `protect` module) resolves the caller's path in the caller's own root and
//! makes every name there, so it never lets the kernel read a path twice;
//! `sandgate run` performs the writes its policy allows but its Landlock
//! floor would not (new entries in a carved directory, "allow" answers)
//! from canonical paths ([`Op`], [`perform`]). There every path has been
//! checked against the plan; the parent directory is opened with
//! `RESOLVE_NO_SYMLINKS`, and the final component is used relative to it
//! without following symlinks ([`crate::beneath`], the walk the MCP file
//! tools use too), so a symlink swapped in after the check makes the
//! operation fail (`ELOOP`) instead of landing somewhere else. The
//! directories where this happens most (the workspace roots, which have no
//! Landlock rule of their own) are opened once, the same way, when the
//! supervisor starts ([`Anchors`]).
//!
//! This module contains `unsafe` code: the `openat` of exec isolation's
//! opens ([`LastName::NoFollow`]).

#![allow(unsafe_code)]

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::decode::Change;
use crate::beneath;
use crate::notify::{self, Listener};

/// A write, with canonical paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `open`/`openat`/`openat2`/`creat` with a write flag.
    Open {
        /// The file.
        path: std::path::PathBuf,
        /// The open flags.
        flags: i32,
        /// The creation mode.
        mode: u32,
    },
    /// `mkdir`/`mkdirat`.
    Mkdir {
        /// The new directory.
        path: std::path::PathBuf,
        /// Its mode.
        mode: u32,
    },
    /// `mknod`/`mknodat`.
    Mknod {
        /// The new node.
        path: std::path::PathBuf,
        /// Type and mode.
        mode: u32,
    },
    /// `unlink`/`rmdir`/`unlinkat`.
    Remove {
        /// The entry.
        path: std::path::PathBuf,
        /// Whether it is a directory removal.
        dir: bool,
    },
    /// `rename`/`renameat`/`renameat2`.
    Rename {
        /// The old entry.
        from: std::path::PathBuf,
        /// The new entry.
        to: std::path::PathBuf,
        /// `renameat2` flags.
        flags: u32,
    },
    /// `link`/`linkat`.
    Link {
        /// The existing file.
        from: std::path::PathBuf,
        /// The new entry.
        to: std::path::PathBuf,
    },
    /// `symlink`/`symlinkat`.
    Symlink {
        /// The link's contents.
        target: Vec<u8>,
        /// The new entry.
        path: std::path::PathBuf,
    },
    /// `bind` of a UNIX socket to a path: a socket file is a name too.
    Bind {
        /// The thread that called it.
        tid: u32,
        /// Its socket descriptor.
        fd: i32,
        /// The socket file to make.
        path: std::path::PathBuf,
    },
    /// `truncate`.
    Truncate {
        /// The file.
        path: std::path::PathBuf,
        /// The new length.
        len: i64,
    },
    /// A metadata change (`chmod`, `chown`, timestamps, extended
    /// attributes). Landlock does not restrict these: once allowed, the
    /// kernel performs them as the program asked.
    Meta {
        /// The file (canonical, as the kernel resolved it).
        path: std::path::PathBuf,
        /// What changes.
        change: Change,
    },
}

impl Op {
    /// A short name for messages.
    pub fn verb(&self) -> &'static str {
        match self {
            Op::Open { flags, .. } if flags & libc::O_CREAT != 0 => "create/write",
            Op::Open { .. } => "write",
            Op::Mkdir { .. } => "mkdir",
            Op::Mknod { .. } => "mknod",
            Op::Remove { dir: true, .. } => "rmdir",
            Op::Remove { .. } => "delete",
            Op::Rename { .. } => "rename",
            Op::Link { .. } => "link",
            Op::Symlink { .. } => "symlink",
            Op::Truncate { .. } => "truncate",
            Op::Bind { .. } => "bind",
            Op::Meta { change, .. } => change.verb(),
        }
    }
}

/// Directories opened once (`O_PATH`, without following any symlink) so
/// that writes performed in them need not walk their path again.
#[derive(Debug)]
pub struct Anchors {
    dirs: Vec<(PathBuf, OwnedFd)>,
    valid: AtomicBool,
}

impl Anchors {
    /// Opens each of `paths` that is a directory reachable without a symlink.
    pub fn open(paths: impl IntoIterator<Item = PathBuf>) -> Anchors {
        let dirs = paths
            .into_iter()
            .filter_map(|path| {
                let fd = beneath::open_dir(&path).ok()?;
                Some((path, fd))
            })
            .collect();
        Anchors {
            dirs,
            valid: AtomicBool::new(true),
        }
    }

    /// `from` is about to be renamed: if that moves an anchor, the anchors
    /// are not used again (each write then opens its parent by path).
    pub fn moving(&self, from: &Path) {
        if self.dirs.iter().any(|(dir, _)| dir.starts_with(from)) {
            self.valid.store(false, Ordering::SeqCst);
        }
    }

    fn find(&self, parent: &Path) -> Option<BorrowedFd<'_>> {
        if !self.valid.load(Ordering::SeqCst) {
            return None;
        }
        self.dirs
            .iter()
            .find(|(dir, _)| dir == parent)
            .map(|(_, fd)| fd.as_fd())
    }
}

/// An open parent directory: an anchor or one opened for this write.
enum Dir<'a> {
    Anchor(BorrowedFd<'a>),
    Opened(OwnedFd),
}

impl AsFd for Dir<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Dir::Anchor(fd) => *fd,
            Dir::Opened(fd) => fd.as_fd(),
        }
    }
}

/// The parent directory of `path`, opened without following any symlink,
/// and the final component.
fn parent_of<'a, 'p>(anchors: &'a Anchors, path: &'p Path) -> io::Result<(Dir<'a>, &'p OsStr)> {
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
    let dir = match anchors.find(parent) {
        Some(fd) => Dir::Anchor(fd),
        None => Dir::Opened(beneath::open_dir(parent)?),
    };
    Ok((dir, name))
}

/// A name in a directory the supervisor holds open: where a call is
/// performed, once the scope has resolved and judged it.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    /// The directory.
    pub dir: BorrowedFd<'a>,
    /// One name in it (no `/`, not `.` or `..`).
    pub name: &'a OsStr,
}

/// How an open treats its last name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastName {
    /// `openat` with `O_NOFOLLOW` added and the flags and mode otherwise as
    /// the caller gave them (exec isolation: the answering thread has the
    /// caller's umask). A symbolic link is `ELOOP`, for the scope to follow
    /// itself after judging where it leads.
    NoFollow,
    /// `openat2` beneath the directory without following any symbolic link
    /// ([`beneath::open_beneath`]; `sandgate run`: the mode comes with the
    /// caller's umask applied).
    Beneath,
}

/// A call performed for a caller, at places already resolved and judged.
#[derive(Debug)]
pub enum Act<'a> {
    /// An open (handing the caller the descriptor).
    Open {
        /// The file.
        at: At<'a>,
        /// The caller's open flags.
        flags: i32,
        /// The creation mode.
        mode: u32,
        /// How the last name is opened.
        last: LastName,
    },
    /// `mkdirat`.
    Mkdir {
        /// The new directory.
        at: At<'a>,
        /// Its mode.
        mode: u32,
    },
    /// `mknodat` of a regular file, FIFO or socket (a device is `EPERM`).
    Mknod {
        /// The new node.
        at: At<'a>,
        /// Its type and mode.
        mode: u32,
    },
    /// `unlinkat`.
    Remove {
        /// The entry.
        at: At<'a>,
        /// Whether it is a directory.
        dir: bool,
    },
    /// `renameat2`.
    Rename {
        /// The old name.
        from: At<'a>,
        /// The new name.
        to: At<'a>,
        /// `renameat2`'s flags.
        flags: u32,
    },
    /// `linkat` without following `from`.
    Link {
        /// The existing file.
        from: At<'a>,
        /// The new name.
        to: At<'a>,
    },
    /// A new name for an open file (`linkat` with `AT_EMPTY_PATH`), made
    /// through its `/proc/self/fd` link, which keeps its mount.
    LinkFile {
        /// The file, a copy of the caller's descriptor.
        file: BorrowedFd<'a>,
        /// The new name.
        to: At<'a>,
    },
    /// `symlinkat`.
    Symlink {
        /// The link's contents.
        target: &'a [u8],
        /// The new name.
        at: At<'a>,
    },
    /// `truncate`, through the file opened for writing beneath its
    /// directory.
    Truncate {
        /// The file.
        at: At<'a>,
        /// The new length.
        len: i64,
    },
    /// `bind` of the caller's UNIX socket to a name
    /// ([`super::caller::bind_for`]).
    Bind {
        /// The calling thread.
        tid: u32,
        /// Its socket descriptor.
        fd: i32,
        /// The socket file to make.
        at: At<'a>,
        /// The caller's umask, which gives the socket file its mode.
        umask: u32,
    },
}

/// What performing a call gave the caller.
#[derive(Debug)]
pub enum Done {
    /// The call returns 0.
    Zero,
    /// The call returns this descriptor (the scope hands it over with
    /// `SECCOMP_IOCTL_NOTIF_ADDFD`).
    Fd(OwnedFd),
    /// The call is answered already, or will be by another thread (an open
    /// of a named pipe that waits for its other end).
    Answered,
}

/// Performs `act` for the caller of notification `id`: the one performer of
/// calls on a caller's behalf, for both scopes. `Err` is the error the call
/// fails with.
pub fn act(listener: &Listener, id: u64, act: Act<'_>) -> io::Result<Done> {
    match act {
        Act::Open {
            at,
            flags,
            mode,
            last,
        } => {
            let c_name = cname(at.name)?;
            if let Some(fifo) = notify::fifo_that_waits(at.dir, &c_name, flags)? {
                notify::open_fifo_later(listener, id, fifo, flags)?;
                return Ok(Done::Answered);
            }
            let fd = match last {
                LastName::NoFollow => {
                    // SAFETY: `c_name` is NUL-terminated; the flags and mode
                    // are the caller's own, and O_NOFOLLOW keeps a link
                    // swapped in since the judgement from being followed.
                    let fd = unsafe {
                        libc::openat(
                            at.dir.as_raw_fd(),
                            c_name.as_ptr(),
                            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                            mode,
                        )
                    };
                    if fd < 0 {
                        return Err(io::Error::last_os_error());
                    }
                    // SAFETY: the kernel just returned this descriptor; we own it.
                    unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) }
                }
                LastName::Beneath => beneath::open_beneath(
                    at.dir,
                    Path::new(at.name),
                    flags & !libc::O_CLOEXEC,
                    mode,
                )?,
            };
            Ok(Done::Fd(fd))
        }
        Act::Mkdir { at, mode } => {
            beneath::mkdir_at(at.dir, at.name, mode)?;
            Ok(Done::Zero)
        }
        Act::Mknod { at, mode } => {
            beneath::mknod_at(at.dir, at.name, mode)?;
            Ok(Done::Zero)
        }
        Act::Remove { at, dir } => {
            beneath::remove_at(at.dir, at.name, dir)?;
            Ok(Done::Zero)
        }
        Act::Rename { from, to, flags } => {
            beneath::rename_at(from.dir, from.name, to.dir, to.name, flags)?;
            Ok(Done::Zero)
        }
        Act::Link { from, to } => {
            beneath::link_at(from.dir, from.name, to.dir, to.name)?;
            Ok(Done::Zero)
        }
        Act::LinkFile { file, to } => {
            beneath::link_anonymous(file, to.dir, to.name)?;
            Ok(Done::Zero)
        }
        Act::Symlink { target, at } => {
            beneath::symlink_at(target, at.dir, at.name)?;
            Ok(Done::Zero)
        }
        Act::Truncate { at, len } => {
            let file = beneath::open_beneath(at.dir, Path::new(at.name), libc::O_WRONLY, 0)?;
            beneath::truncate(file.as_fd(), len)?;
            Ok(Done::Zero)
        }
        Act::Bind { tid, fd, at, umask } => {
            super::caller::bind_for(tid, fd, at.dir, at.name, umask)
                .map_err(io::Error::from_raw_os_error)?;
            Ok(Done::Zero)
        }
    }
}

fn cname(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// Performs `op` for the program and answers notification `id`: the result
/// (or the new descriptor) is what the program's system call returns.
/// `umask` is the program's.
pub fn perform(listener: &Listener, anchors: &Anchors, id: u64, op: &Op, umask: u32) {
    match run(listener, anchors, id, op, umask) {
        Ok(Some(val)) => listener.succeed(id, val),
        Ok(None) => {}
        Err(err) => listener.fail(id, err.raw_os_error().unwrap_or(libc::EACCES)),
    }
}

/// Like [`perform`], but when the paths turn out to contain a symlink
/// (`ELOOP`) nothing is answered and `false` is returned, so the caller can
/// resolve the paths properly and decide again.
pub fn try_perform(listener: &Listener, anchors: &Anchors, id: u64, op: &Op, umask: u32) -> bool {
    match run(listener, anchors, id, op, umask) {
        Ok(Some(val)) => listener.succeed(id, val),
        Ok(None) => {}
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => return false,
        Err(err) => listener.fail(id, err.raw_os_error().unwrap_or(libc::EACCES)),
    }
    true
}

/// Runs `op` with its parents opened by path ([`parent_of`]); `Ok(None)`
/// means the answer was already sent (a descriptor).
fn run(
    listener: &Listener,
    anchors: &Anchors,
    id: u64,
    op: &Op,
    umask: u32,
) -> io::Result<Option<i64>> {
    let performed = match op {
        Op::Open { path, flags, mode } => {
            let (dir, name) = parent_of(anchors, path)?;
            let at = At {
                dir: dir.as_fd(),
                name,
            };
            let open = Act::Open {
                at,
                flags: *flags,
                mode: mode & !umask,
                last: LastName::Beneath,
            };
            match act(listener, id, open)? {
                Done::Fd(fd) => {
                    listener.send_fd(id, fd.as_fd(), flags & libc::O_CLOEXEC != 0)?;
                    return Ok(None);
                }
                done => done,
            }
        }
        Op::Mkdir { path, mode } => {
            let (dir, name) = parent_of(anchors, path)?;
            let at = At {
                dir: dir.as_fd(),
                name,
            };
            act(
                listener,
                id,
                Act::Mkdir {
                    at,
                    mode: mode & !umask,
                },
            )?
        }
        Op::Mknod { path, mode } => {
            let (dir, name) = parent_of(anchors, path)?;
            let at = At {
                dir: dir.as_fd(),
                name,
            };
            let mode = (mode & libc::S_IFMT) | (mode & !umask & 0o7777);
            act(listener, id, Act::Mknod { at, mode })?
        }
        Op::Remove { path, dir: is_dir } => {
            let (dir, name) = parent_of(anchors, path)?;
            let at = At {
                dir: dir.as_fd(),
                name,
            };
            act(listener, id, Act::Remove { at, dir: *is_dir })?
        }
        Op::Rename { from, to, flags } => {
            let (from_dir, from_name) = parent_of(anchors, from)?;
            let (to_dir, to_name) = parent_of(anchors, to)?;
            let rename = Act::Rename {
                from: At {
                    dir: from_dir.as_fd(),
                    name: from_name,
                },
                to: At {
                    dir: to_dir.as_fd(),
                    name: to_name,
                },
                flags: *flags,
            };
            act(listener, id, rename)?
        }
        Op::Link { from, to } => {
            let (from_dir, from_name) = parent_of(anchors, from)?;
            let (to_dir, to_name) = parent_of(anchors, to)?;
            let link = Act::Link {
                from: At {
                    dir: from_dir.as_fd(),
                    name: from_name,
                },
                to: At {
                    dir: to_dir.as_fd(),
                    name: to_name,
                },
            };
            act(listener, id, link)?
        }
        Op::Symlink { target, path } => {
            let (dir, name) = parent_of(anchors, path)?;
            let at = At {
                dir: dir.as_fd(),
                name,
            };
            act(listener, id, Act::Symlink { target, at })?
        }
        Op::Meta { .. } => {
            listener.allow(id);
            return Ok(None);
        }
        Op::Bind { tid, fd, path } => {
            let (dir, name) = parent_of(anchors, path)?;
            let at = At {
                dir: dir.as_fd(),
                name,
            };
            let bind = Act::Bind {
                tid: *tid,
                fd: *fd,
                at,
                umask,
            };
            act(listener, id, bind)?
        }
        Op::Truncate { path, len } => {
            let (dir, name) = parent_of(anchors, path)?;
            let at = At {
                dir: dir.as_fd(),
                name,
            };
            act(listener, id, Act::Truncate { at, len: *len })?
        }
    };
    Ok(match performed {
        Done::Zero => Some(0),
        Done::Fd(_) | Done::Answered => None,
    })
}
