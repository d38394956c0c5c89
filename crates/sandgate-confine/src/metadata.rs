//! Metadata changes: `chmod`, `chown`, timestamps and extended attributes.
//!
//! Landlock does not cover them, so there is no floor: the supervisor
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

use super::seccomp::{read_cstring, Notif, SYS_REMOVEXATTRAT, SYS_SETXATTRAT};

/// What a metadata system call changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The mode bits (`chmod`).
    Mode,
    /// The owner or group (`chown`).
    Owner,
    /// The timestamps (`utime`, `utimensat`).
    Times,
    /// An extended attribute (set or removed).
    Xattr,
    /// The inode's flags or encryption policy (`chattr`, an `ioctl`).
    Flags,
}

impl Change {
    /// A short name for messages.
    pub fn verb(self) -> &'static str {
        match self {
            Change::Mode => "chmod",
            Change::Owner => "chown",
            Change::Times => "touch",
            Change::Xattr => "setxattr",
            Change::Flags => "chattr",
        }
    }
}

/// What the system call acts on.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// A path relative to `dirfd`; an empty path means `dirfd` itself when
    /// `empty_is_dir` (`AT_EMPTY_PATH`).
    Path {
        dirfd: i32,
        addr: u64,
        follow: bool,
        empty_is_dir: bool,
    },
    /// An open descriptor (`AT_FDCWD`: the working directory).
    Fd(i32),
}

/// A decoded metadata system call.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// What it changes.
    pub change: Change,
    target: Target,
}

/// Decodes `n` if it is a metadata system call.
pub fn decode(n: &Notif) -> Option<Request> {
    let a = n.args;
    let path = |dirfd: u64, addr: u64, flags: u64| Target::Path {
        dirfd: dirfd as i32,
        addr,
        follow: flags as i32 & libc::AT_SYMLINK_NOFOLLOW == 0,
        empty_is_dir: flags as i32 & libc::AT_EMPTY_PATH != 0,
    };
    let cwd = |addr: u64, follow: bool| Target::Path {
        dirfd: libc::AT_FDCWD,
        addr,
        follow,
        empty_is_dir: false,
    };
    let (change, target) = match n.nr {
        libc::SYS_chmod => (Change::Mode, cwd(a[0], true)),
        libc::SYS_fchmod => (Change::Mode, Target::Fd(a[0] as i32)),
        libc::SYS_fchmodat => (Change::Mode, path(a[0], a[1], 0)),
        libc::SYS_fchmodat2 => (Change::Mode, path(a[0], a[1], a[3])),
        libc::SYS_chown => (Change::Owner, cwd(a[0], true)),
        libc::SYS_lchown => (Change::Owner, cwd(a[0], false)),
        libc::SYS_fchown => (Change::Owner, Target::Fd(a[0] as i32)),
        libc::SYS_fchownat => (Change::Owner, path(a[0], a[1], a[4])),
        libc::SYS_utime | libc::SYS_utimes => (Change::Times, cwd(a[0], true)),
        // A null path acts on the descriptor (how `futimes` used to work).
        libc::SYS_futimesat | libc::SYS_utimensat if a[1] == 0 => {
            (Change::Times, Target::Fd(a[0] as i32))
        }
        libc::SYS_futimesat => (Change::Times, path(a[0], a[1], 0)),
        libc::SYS_utimensat => (Change::Times, path(a[0], a[1], a[3])),
        libc::SYS_setxattr | libc::SYS_removexattr => (Change::Xattr, cwd(a[0], true)),
        libc::SYS_lsetxattr | libc::SYS_lremovexattr => (Change::Xattr, cwd(a[0], false)),
        libc::SYS_fsetxattr | libc::SYS_fremovexattr => (Change::Xattr, Target::Fd(a[0] as i32)),
        SYS_SETXATTRAT | SYS_REMOVEXATTRAT => (Change::Xattr, path(a[0], a[1], a[2])),
        libc::SYS_ioctl if super::seccomp::INODE_IOCTLS.contains(&(a[1] as u32)) => {
            (Change::Flags, Target::Fd(a[0] as i32))
        }
        _ => return None,
    };
    Some(Request { change, target })
}

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

impl Request {
    /// What the change would act on, read now.
    pub fn target(&self, pid: u32) -> Acting {
        match self.target {
            Target::Fd(fd) => match named(pid, fd) {
                Named::Path(path) => Acting::On(path),
                Named::Nameless | Named::Removed => Acting::Nowhere,
                Named::Unknown => Acting::Unknown,
            },
            Target::Path {
                dirfd,
                addr,
                follow,
                empty_is_dir,
            } => {
                let Ok(raw) = read_cstring(pid, addr) else {
                    // The kernel cannot read it either: the call fails.
                    return Acting::Nowhere;
                };
                if raw.is_empty() {
                    return if empty_is_dir {
                        Request {
                            change: self.change,
                            target: Target::Fd(dirfd),
                        }
                        .target(pid)
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
                let Some(canonical) =
                    super::callerpath::canonicalize_as_caller(&absolute, follow, pid)
                else {
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

    fn notif(nr: libc::c_long, args: [u64; 6]) -> Notif {
        Notif {
            id: 1,
            pid: 1,
            nr: i64::from(nr as i32),
            args,
        }
    }

    #[test]
    fn decode_table() {
        let at = libc::AT_FDCWD as u32 as u64;
        let nofollow = libc::AT_SYMLINK_NOFOLLOW as u64;
        let empty = libc::AT_EMPTY_PATH as u64;
        let cases: [(libc::c_long, [u64; 6], Change, &str); 10] = [
            (
                libc::SYS_chmod,
                [9, 0o600, 0, 0, 0, 0],
                Change::Mode,
                "path cwd follow",
            ),
            (
                libc::SYS_fchmod,
                [3, 0o600, 0, 0, 0, 0],
                Change::Mode,
                "fd 3",
            ),
            (
                libc::SYS_lchown,
                [9, 0, 0, 0, 0, 0],
                Change::Owner,
                "path cwd nofollow",
            ),
            (
                libc::SYS_fchownat,
                [4, 9, 0, 0, nofollow, 0],
                Change::Owner,
                "path 4 nofollow",
            ),
            (
                libc::SYS_fchownat,
                [4, 9, 0, 0, empty, 0],
                Change::Owner,
                "path 4 follow empty",
            ),
            (
                libc::SYS_utimensat,
                [5, 0, 0, 0, 0, 0],
                Change::Times,
                "fd 5",
            ),
            (
                libc::SYS_utimensat,
                [at, 9, 0, nofollow, 0, 0],
                Change::Times,
                "path cwd nofollow",
            ),
            (
                libc::SYS_lsetxattr,
                [9, 0, 0, 0, 0, 0],
                Change::Xattr,
                "path cwd nofollow",
            ),
            (
                libc::SYS_fremovexattr,
                [6, 0, 0, 0, 0, 0],
                Change::Xattr,
                "fd 6",
            ),
            (
                SYS_SETXATTRAT,
                [7, 9, nofollow, 0, 0, 0],
                Change::Xattr,
                "path 7 nofollow",
            ),
        ];
        for (nr, args, change, want) in cases {
            let request = decode(&notif(nr, args)).unwrap();
            assert_eq!(request.change, change, "{nr}");
            let got = match request.target {
                Target::Fd(fd) => format!("fd {fd}"),
                Target::Path {
                    dirfd,
                    follow,
                    empty_is_dir,
                    ..
                } => format!(
                    "path {} {}{}",
                    if dirfd == libc::AT_FDCWD {
                        "cwd".to_string()
                    } else {
                        dirfd.to_string()
                    },
                    if follow { "follow" } else { "nofollow" },
                    if empty_is_dir { " empty" } else { "" }
                ),
            };
            assert_eq!(got, want, "{nr}");
        }
        assert!(decode(&notif(libc::SYS_openat, [0; 6])).is_none());
    }

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
