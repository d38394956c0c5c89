//! What a metadata change (`chmod`, `chown`, timestamps, extended
//! attributes, inode flags; decoded as [`Meta`]) acts on.
//!
//! Landlock does not cover them, so there is no floor: `sandgate run`
//! decides each one from the canonical path it would act on, resolved by the
//! kernel (the path opened `O_PATH`, following the final symlink exactly
//! when the system call would, then read back from `/proc/self/fd`), or from
//! the descriptor's path for the `f*` variants. An allowed change is then
//! performed by the kernel as asked.
//!
//! This module contains `unsafe` code: the `O_PATH` open of a metadata call's
//! target.

#![allow(unsafe_code)]

use std::ffi::CString;
use std::fs;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::callerpath::canonicalize_as_caller;
use super::decode::{Meta, MetaTarget};
use crate::notify::read_cstring;

/// What a metadata call acts on, as far as the supervisor can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acting {
    /// The file at this canonical path.
    On(PathBuf),
    /// Nothing any path reaches: a missing path (the kernel fails the call),
    /// a pipe or socket, a file deleted with no name left.
    Nowhere,
    /// Something the supervisor cannot name, so cannot judge: a path
    /// relative to a removed directory, or a file whose path does not read
    /// back as itself. The call fails.
    Unknown,
}

impl Meta {
    /// What the change would act on, read now.
    pub fn acting_on(&self, pid: u32) -> Acting {
        match self.target {
            MetaTarget::Fd(fd) => match named(pid, fd) {
                Named::Path(path) => Acting::On(path),
                Named::Nameless | Named::Removed => Acting::Nowhere,
                Named::Unknown => Acting::Unknown,
            },
            MetaTarget::Path {
                at,
                follow,
                empty_is_dir,
            } => {
                let dirfd = at.dirfd;
                let Ok(raw) = read_cstring(pid, at.addr) else {
                    // The kernel cannot read it either: the call fails.
                    return Acting::Nowhere;
                };
                if raw.is_empty() {
                    return if empty_is_dir {
                        Meta {
                            change: self.change,
                            target: MetaTarget::Fd(dirfd),
                        }
                        .acting_on(pid)
                    } else {
                        Acting::Nowhere
                    };
                }
                let raw = Path::new(std::ffi::OsStr::from_bytes(&raw));
                let absolute = if raw.is_absolute() {
                    raw.to_path_buf()
                } else {
                    match named(pid, dirfd) {
                        Named::Path(base) => base.join(raw),
                        // `ENOTDIR` or `EBADF` from the kernel.
                        Named::Nameless => return Acting::Nowhere,
                        // `..` from a removed directory still leads somewhere.
                        Named::Removed | Named::Unknown => return Acting::Unknown,
                    }
                };
                // `/proc/self` is the caller's, not ours: resolve it first.
                let Some(canonical) = canonicalize_as_caller(&absolute, follow, pid) else {
                    return Acting::Unknown;
                };
                kernel_path(&canonical, follow).map_or(Acting::Nowhere, Acting::On)
            }
        }
    }
}

/// What a descriptor of the caller (or its working directory) names.
enum Named {
    /// A path that reads back as the same file.
    Path(PathBuf),
    /// No file with a path: no such descriptor, a pipe, a socket, an
    /// anonymous inode, or a file deleted with no link left.
    Nameless,
    /// A directory that was removed (its `..` still leads to its parent).
    Removed,
    /// A file whose path cannot be read back as itself (renamed since, or
    /// deleted at this name while another link remains).
    Unknown,
}

/// The path of descriptor `fd` of `pid` (`AT_FDCWD`: its working
/// directory). The link's text is trusted only when it names the very
/// file the descriptor holds: a directory may be called `d (deleted)`, and
/// a removed one reads the same way.
fn named(pid: u32, fd: i32) -> Named {
    use std::os::unix::fs::MetadataExt;
    let link = if fd == libc::AT_FDCWD {
        PathBuf::from(format!("/proc/{pid}/cwd"))
    } else {
        PathBuf::from(format!("/proc/{pid}/fd/{fd}"))
    };
    let (Ok(path), Ok(held)) = (fs::read_link(&link), fs::metadata(&link)) else {
        return Named::Nameless;
    };
    if !path.is_absolute() {
        // `pipe:[…]`, `socket:[…]`, `anon_inode:[…]`.
        return Named::Nameless;
    }
    let same =
        fs::symlink_metadata(&path).is_ok_and(|m| m.dev() == held.dev() && m.ino() == held.ino());
    if same {
        Named::Path(path)
    } else if held.nlink() == 0 && held.is_dir() {
        Named::Removed
    } else if held.nlink() == 0 {
        Named::Nameless
    } else {
        Named::Unknown
    }
}

/// Where `path` leads, resolved by the kernel.
fn kernel_path(path: &Path, follow: bool) -> Option<PathBuf> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    let flags = libc::O_PATH | libc::O_CLOEXEC | if follow { 0 } else { libc::O_NOFOLLOW };
    // SAFETY: `c` is NUL-terminated and outlives the call.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `open` just returned this descriptor; we own it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_path_follows_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::write(root.join("file"), "").unwrap();
        std::os::unix::fs::symlink(root.join("file"), root.join("link")).unwrap();
        assert_eq!(
            kernel_path(&root.join("link"), true),
            Some(root.join("file"))
        );
        assert_eq!(
            kernel_path(&root.join("link"), false),
            Some(root.join("link"))
        );
        assert_eq!(
            kernel_path(&root.join("sub/../file"), true),
            None,
            "a missing component fails as in the kernel"
        );
        assert_eq!(kernel_path(&root.join("missing"), true), None);
    }

    #[test]
    fn descriptors_name_only_what_reads_back_as_itself() {
        let me = std::process::id();
        let (reader, _writer) = std::io::pipe().unwrap();
        use std::os::fd::AsRawFd as _;
        assert!(matches!(named(me, reader.as_raw_fd()), Named::Nameless));
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        // A directory whose name looks like a removed one is still itself.
        let odd = root.join("d (deleted)");
        fs::create_dir(&odd).unwrap();
        let held = fs::File::open(&odd).unwrap();
        assert!(matches!(named(me, held.as_raw_fd()), Named::Path(p) if p == odd));
        // Removed, it is no base for a relative path.
        fs::remove_dir(&odd).unwrap();
        assert!(matches!(named(me, held.as_raw_fd()), Named::Removed));
        // A file deleted with no link left reaches nothing; one with a
        // link left elsewhere cannot be named.
        let file = root.join("f");
        fs::write(&file, "").unwrap();
        let open = fs::File::open(&file).unwrap();
        fs::hard_link(&file, root.join("other")).unwrap();
        fs::remove_file(&file).unwrap();
        assert!(matches!(named(me, open.as_raw_fd()), Named::Unknown));
        fs::remove_file(root.join("other")).unwrap();
        assert!(matches!(named(me, open.as_raw_fd()), Named::Nameless));
        assert!(matches!(named(me, 9999), Named::Nameless));
    }
}
