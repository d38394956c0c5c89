//! Writes the supervisor performs for the confined program, when the policy
//! allows them but the Landlock floor would not (new entries in a carved
//! directory, "allow" answers).
//!
//! Every path is canonical and has been checked against the plan. The parent
//! directory is opened with `RESOLVE_NO_SYMLINKS`, and the final component is
//! used relative to it without following symlinks ([`sandgate_sandbox::beneath`], the
//! walk the MCP file tools use too), so a symlink swapped in after the check
//! makes the operation fail (`ELOOP`) instead of landing somewhere else. The directories where this happens most (the workspace
//! roots, which have no Landlock rule of their own) are opened once, the
//! same way, when the supervisor starts ([`Anchors`]).

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::seccomp::Listener;
use sandgate_sandbox::{beneath, notify};

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
        change: super::metadata::Change,
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

/// Runs `op`; `Ok(None)` means the answer was already sent (a descriptor).
fn run(
    listener: &Listener,
    anchors: &Anchors,
    id: u64,
    op: &Op,
    umask: u32,
) -> io::Result<Option<i64>> {
    match op {
        Op::Open { path, flags, mode } => {
            let (dir, name) = parent_of(anchors, path)?;
            let c_name = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(name))
                .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
            if let Some(fifo) = notify::fifo_that_waits(dir.as_fd(), &c_name, *flags)? {
                notify::open_fifo_later(listener, id, fifo, *flags)?;
                return Ok(None);
            }
            let fd = beneath::open_beneath(
                dir.as_fd(),
                Path::new(name),
                flags & !libc::O_CLOEXEC,
                mode & !umask,
            )?;
            listener.send_fd(id, fd.as_fd(), flags & libc::O_CLOEXEC != 0)?;
            Ok(None)
        }
        Op::Mkdir { path, mode } => {
            let (dir, name) = parent_of(anchors, path)?;
            beneath::mkdir_at(dir.as_fd(), name, mode & !umask)?;
            Ok(Some(0))
        }
        Op::Mknod { path, mode } => {
            let (dir, name) = parent_of(anchors, path)?;
            beneath::mknod_at(
                dir.as_fd(),
                name,
                (mode & libc::S_IFMT) | (mode & !umask & 0o7777),
            )?;
            Ok(Some(0))
        }
        Op::Remove { path, dir: is_dir } => {
            let (dir, name) = parent_of(anchors, path)?;
            beneath::remove_at(dir.as_fd(), name, *is_dir)?;
            Ok(Some(0))
        }
        Op::Rename { from, to, flags } => {
            let (from_dir, from_name) = parent_of(anchors, from)?;
            let (to_dir, to_name) = parent_of(anchors, to)?;
            beneath::rename_at(from_dir.as_fd(), from_name, to_dir.as_fd(), to_name, *flags)?;
            Ok(Some(0))
        }
        Op::Link { from, to } => {
            let (from_dir, from_name) = parent_of(anchors, from)?;
            let (to_dir, to_name) = parent_of(anchors, to)?;
            beneath::link_at(from_dir.as_fd(), from_name, to_dir.as_fd(), to_name)?;
            Ok(Some(0))
        }
        Op::Symlink { target, path } => {
            let (dir, name) = parent_of(anchors, path)?;
            beneath::symlink_at(target, dir.as_fd(), name)?;
            Ok(Some(0))
        }
        Op::Meta { .. } => {
            listener.allow(id);
            Ok(None)
        }
        Op::Bind { tid, fd, path } => {
            let (dir, name) = parent_of(anchors, path)?;
            sandgate_sandbox::supervisor::caller::bind_for(*tid, *fd, dir.as_fd(), name, umask)
                .map_err(io::Error::from_raw_os_error)?;
            Ok(Some(0))
        }
        Op::Truncate { path, len } => {
            let (dir, name) = parent_of(anchors, path)?;
            let file = beneath::open_beneath(dir.as_fd(), Path::new(name), libc::O_WRONLY, 0)?;
            beneath::truncate(file.as_fd(), *len)?;
            Ok(Some(0))
        }
    }
}
