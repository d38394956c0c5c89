//! The path the gate judged, and opening exactly that.
//!
//! The dispatcher pins the canonical path before the gate runs (which file is
//! there, if any), checks that the gate judged that same path, and hands the
//! tool a [`Target`]. The tool then opens the path with
//! [`sandgate_sandbox::beneath`] — from a held directory descriptor, never
//! following a symlink — so a directory swapped for a symlink after the check
//! makes the call fail instead of reaching somewhere else; and a read checks
//! that the file it opened is the one that was pinned.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use sandgate_sandbox::beneath::{self, Stat};

use crate::error::ToolError;

/// A canonical path the gate judged, and what was there when it was pinned.
#[derive(Debug, Clone)]
pub struct Target {
    /// The canonical path (absolute, no symlink, no `.` or `..`).
    pub path: PathBuf,
    /// The file at `path` when it was pinned; `None` when there was none.
    pub pinned: Option<Stat>,
}

/// The error for a path that is not what was judged any more.
pub fn changed(path: &Path) -> ToolError {
    ToolError::failed(format!(
        "`{}` changed between the check and the open (a symbolic link or another file took the \
         place of what was checked); nothing was done, call the tool again",
        path.display()
    ))
}

/// An error from the walk: a swap is [`changed`], anything else says what failed.
pub fn walk_error(action: &str, path: &Path, e: &io::Error) -> ToolError {
    if beneath::is_swapped(e) {
        changed(path)
    } else {
        ToolError::io(action, path, e)
    }
}

impl Target {
    /// Pins the canonical `path`: which file is there now (not following a
    /// symlink at its end), or none.
    pub fn pin(path: PathBuf) -> Target {
        let pinned = beneath::open(&path, libc::O_PATH | libc::O_NOFOLLOW, 0)
            .and_then(|fd| beneath::stat(fd.as_fd()))
            .ok();
        Target { path, pinned }
    }

    /// Whether `st` is the pinned file.
    fn is_pinned(&self, st: &Stat) -> bool {
        self.pinned.is_some_and(|p| p.identity() == st.identity())
    }

    /// Opens the path for reading, and checks that it is the pinned file.
    /// Never blocks (a FIFO is opened non-blocking and refused as not a
    /// regular file by the callers).
    pub fn open_read(&self, action: &str) -> Result<(File, Stat), ToolError> {
        let fd = beneath::open(
            &self.path,
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY,
            0,
        )
        .map_err(|e| walk_error(action, &self.path, &e))?;
        let st = beneath::stat(fd.as_fd()).map_err(|e| ToolError::io(action, &self.path, &e))?;
        if !self.is_pinned(&st) {
            return Err(changed(&self.path));
        }
        Ok((File::from(fd), st))
    }

    /// Opens the path as a walk's root (`O_PATH`), and checks that it is
    /// the pinned file or directory.
    pub fn open_root(&self) -> Result<(OwnedFd, Stat), ToolError> {
        if self.pinned.is_none() {
            return Err(ToolError::failed(format!(
                "cannot read `{}`: no such file or directory",
                self.path.display()
            )));
        }
        let fd = beneath::open(&self.path, libc::O_PATH, 0)
            .map_err(|e| walk_error("read", &self.path, &e))?;
        let st = beneath::stat(fd.as_fd()).map_err(|e| ToolError::io("read", &self.path, &e))?;
        if !self.is_pinned(&st) {
            return Err(changed(&self.path));
        }
        Ok((fd, st))
    }
}

/// The held root of a walk over a judged tree: every entry the walker (which
/// goes by name) reports is opened again beneath this descriptor, never
/// following a symlink, before it is shown or read.
pub struct Root {
    path: PathBuf,
    fd: OwnedFd,
}

impl Root {
    /// Opens the walk's root (see [`Target::open_root`]).
    pub fn open(target: &Target) -> Result<(Root, Stat), ToolError> {
        let (fd, st) = target.open_root()?;
        Ok((
            Root {
                path: target.path.clone(),
                fd,
            },
            st,
        ))
    }

    /// The root descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// `path` (under the root, as the walker names it) relative to the root.
    fn relative<'p>(&self, path: &'p Path) -> io::Result<&'p Path> {
        path.strip_prefix(&self.path)
            .map_err(|_| io::Error::from_raw_os_error(libc::EXDEV))
    }

    /// What is at `path` (under the root) now, not following a symlink at
    /// its end, or an error when the way there holds a symlink.
    pub fn stat(&self, path: &Path) -> io::Result<Stat> {
        let rel = self.relative(path)?;
        let fd = beneath::open_beneath(self.fd(), rel, libc::O_PATH | libc::O_NOFOLLOW, 0)?;
        beneath::stat(fd.as_fd())
    }

    /// Whether the walker's entry `path`, which it saw with inode `ino`, is
    /// still that entry beneath the held root.
    pub fn confirms(&self, path: &Path, ino: Option<u64>) -> Option<Stat> {
        let st = self.stat(path).ok()?;
        match ino {
            Some(ino) if ino != st.ino => None,
            _ => Some(st),
        }
    }

    /// Opens the regular file `path` (under the root) for reading; `Ok(None)`
    /// when it is not a regular file (any more).
    pub fn open_file(&self, path: &Path) -> io::Result<Option<(File, Stat)>> {
        let rel = self.relative(path)?;
        if rel.as_os_str().is_empty() {
            // A root that is a file is read through its target.
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let fd = beneath::open_beneath(
            self.fd(),
            rel,
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY,
            0,
        )?;
        let st = beneath::stat(fd.as_fd())?;
        if !st.is_file() {
            return Ok(None);
        }
        Ok(Some((File::from(fd), st)))
    }
}
