//! Reading a decoded write's paths from the caller, for a scope that judges
//! writes by canonical path (`sandgate run`): made absolute without touching
//! the file system ([`Syscall::read_op_lexically`], the fast path) or
//! canonical as the caller would resolve them ([`Syscall::read_op`]), into
//! the [`Op`] the judgement and the performer read.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sandgate_policy::canon::normalize_lexically;

use super::callerpath;
use super::callers::Callers;
use super::connect::{named, Named};
use super::decode::{PathArg, Syscall};
use super::perform::Op;
use crate::notify::{read_cstring, read_memory};

impl Syscall {
    /// Reads the paths of a write from the caller and makes them canonical.
    /// `None` when it is no write this way judges (a link of a descriptor,
    /// which names no source path; a call that is not a write) or its paths
    /// cannot be read (the Landlock floor then decides alone).
    pub fn read_op(&self, callers: &Callers, pid: u32) -> Option<Op> {
        let path = |arg: PathArg, follow: bool| locate(callers, pid, arg, follow);
        Some(match *self {
            Syscall::Open { at, flags, mode } => {
                let follow = flags & libc::O_NOFOLLOW == 0
                    && !(flags & libc::O_CREAT != 0 && flags & libc::O_EXCL != 0);
                Op::Open {
                    path: path(at, follow)?,
                    flags,
                    mode,
                }
            }
            Syscall::Mkdir { at, mode } => Op::Mkdir {
                path: path(at, false)?,
                mode,
            },
            Syscall::Mknod { at, mode } => Op::Mknod {
                path: path(at, false)?,
                mode,
            },
            Syscall::Remove { at, dir } => Op::Remove {
                path: path(at, false)?,
                dir,
            },
            Syscall::Rename { from, to, flags } => Op::Rename {
                from: path(from, false)?,
                to: path(to, false)?,
                flags,
            },
            Syscall::Link { from, to, flags } => {
                if flags & libc::AT_EMPTY_PATH != 0 {
                    return None;
                }
                Op::Link {
                    from: path(from, flags & libc::AT_SYMLINK_FOLLOW != 0)?,
                    to: path(to, false)?,
                }
            }
            Syscall::Symlink { target, at } => Op::Symlink {
                target: read_cstring(pid, target).ok()?,
                path: path(at, false)?,
            },
            Syscall::Truncate { at, len } => Op::Truncate {
                path: path(at, true)?,
                len,
            },
            Syscall::Bind { fd, addr, len } => {
                let raw = socket_path(pid, addr, len)?;
                let absolute = absolute_raw(callers, pid, libc::AT_FDCWD, &raw, true)?;
                Op::Bind {
                    tid: pid,
                    fd,
                    path: callerpath::canonicalize_as_caller(&absolute, false, pid)?,
                }
            }
            Syscall::Connect { .. }
            | Syscall::Meta(_)
            | Syscall::Context
            | Syscall::Creds
            | Syscall::Exec { .. } => return None,
        })
    }

    /// Reads the paths of a write and makes them absolute without touching
    /// the file system (the working directory as cached); `None` when a path
    /// has a `..` (or cannot be read), or the write resolves its last
    /// symbolic link (a following link, a truncate).
    pub fn read_op_lexically(&self, callers: &Callers, pid: u32) -> Option<Op> {
        // Anything but a plain absolute path (a `..`, a descriptor that
        // names no directory) takes the full way.
        let plain = |path: PathBuf| {
            (path.is_absolute()
                && !path
                    .components()
                    .any(|c| c == std::path::Component::ParentDir))
            .then(|| normalize_lexically(&path))
        };
        let path = |arg: PathArg| plain(absolute(callers, pid, arg, false)?);
        Some(match *self {
            Syscall::Open { at, flags, mode } => Op::Open {
                path: path(at)?,
                flags,
                mode,
            },
            Syscall::Mkdir { at, mode } => Op::Mkdir {
                path: path(at)?,
                mode,
            },
            Syscall::Mknod { at, mode } => Op::Mknod {
                path: path(at)?,
                mode,
            },
            Syscall::Remove { at, dir } => Op::Remove {
                path: path(at)?,
                dir,
            },
            Syscall::Rename { from, to, flags } => Op::Rename {
                from: path(from)?,
                to: path(to)?,
                flags,
            },
            // A following link and a truncate resolve the final symlink.
            Syscall::Link { flags, .. }
                if flags & (libc::AT_SYMLINK_FOLLOW | libc::AT_EMPTY_PATH) != 0 =>
            {
                return None
            }
            Syscall::Truncate { .. } => return None,
            Syscall::Link { from, to, .. } => Op::Link {
                from: path(from)?,
                to: path(to)?,
            },
            Syscall::Symlink { target, at } => Op::Symlink {
                target: read_cstring(pid, target).ok()?,
                path: path(at)?,
            },
            Syscall::Bind { fd, addr, len } => {
                let raw = socket_path(pid, addr, len)?;
                Op::Bind {
                    tid: pid,
                    fd,
                    path: plain(absolute_raw(callers, pid, libc::AT_FDCWD, &raw, false)?)?,
                }
            }
            Syscall::Connect { .. }
            | Syscall::Meta(_)
            | Syscall::Context
            | Syscall::Creds
            | Syscall::Exec { .. } => return None,
        })
    }
}

/// The path of the UNIX socket address of `len` bytes at `addr` in the
/// caller's memory; `None` for another family, an abstract or unnamed
/// address, or one that cannot be read (no name is made: the kernel goes on).
fn socket_path(pid: u32, addr: u64, len: u32) -> Option<Vec<u8>> {
    let len = (len as usize).min(std::mem::size_of::<libc::sockaddr_un>());
    let mut buf = vec![0u8; len];
    let read = read_memory(pid, addr, &mut buf).ok()?;
    buf.truncate(read);
    match named(&buf) {
        Named::Path(path) => Some(path.to_vec()),
        _ => None,
    }
}

/// `arg` made absolute against the caller's working directory (`fresh`: read
/// now, else as cached) or directory descriptor.
fn absolute(callers: &Callers, pid: u32, arg: PathArg, fresh: bool) -> Option<PathBuf> {
    let raw = read_cstring(pid, arg.addr).ok()?;
    absolute_raw(callers, pid, arg.dirfd, &raw, fresh)
}

/// The path `raw` made absolute as [`absolute`] does.
fn absolute_raw(
    callers: &Callers,
    pid: u32,
    dirfd: i32,
    raw: &[u8],
    fresh: bool,
) -> Option<PathBuf> {
    if raw.is_empty() {
        return None;
    }
    let raw = Path::new(OsStr::from_bytes(raw));
    if raw.is_absolute() {
        return Some(raw.to_path_buf());
    }
    let base = if dirfd == libc::AT_FDCWD {
        callers.cwd(pid, fresh)?
    } else {
        fs::read_link(format!("/proc/{pid}/fd/{dirfd}")).ok()?
    };
    Some(base.join(raw))
}

/// The canonical path a write to `arg` lands on, resolved as the caller
/// would (every symlink but, unless `follow`, the last one; `/proc/self` is
/// the caller). `None` when it reaches no path (a pipe through
/// `/proc/self/fd`): the Landlock floor decides.
fn locate(callers: &Callers, pid: u32, arg: PathArg, follow: bool) -> Option<PathBuf> {
    callerpath::canonicalize_as_caller(&absolute(callers, pid, arg, true)?, follow, pid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn a_socket_address_names_a_path_only_for_a_named_unix_socket() {
        let address = |family: i32, path: &[u8]| {
            let mut a = (family as u16).to_ne_bytes().to_vec();
            a.extend_from_slice(path);
            a
        };
        let pid = std::process::id();
        let path_of = |a: &[u8]| socket_path(pid, a.as_ptr() as u64, a.len() as u32);
        // With and without a terminating NUL, as callers pass both.
        assert_eq!(
            path_of(&address(libc::AF_UNIX, b"run/s.sock\0")),
            Some(b"run/s.sock".to_vec())
        );
        assert_eq!(
            path_of(&address(libc::AF_UNIX, b"s.sock")),
            Some(b"s.sock".to_vec())
        );
        // Abstract, unnamed, another family, too short: no name is made.
        assert_eq!(path_of(&address(libc::AF_UNIX, b"\0abstract")), None);
        assert_eq!(path_of(&address(libc::AF_UNIX, b"")), None);
        assert_eq!(path_of(&address(libc::AF_INET, b"\0\0\x7f\0\0\x01")), None);
        assert_eq!(path_of(&[1]), None);
    }

    #[test]
    fn a_link_of_a_descriptor_is_no_write_judged_by_path() {
        let callers = Callers::default();
        let pid = std::process::id();
        let name = CString::new("/srv/w/x").unwrap();
        let arg = PathArg {
            dirfd: libc::AT_FDCWD,
            addr: name.as_ptr() as u64,
        };
        let link = Syscall::Link {
            from: arg,
            to: arg,
            flags: libc::AT_EMPTY_PATH,
        };
        assert!(link.read_op(&callers, pid).is_none());
        assert!(link.read_op_lexically(&callers, pid).is_none());
    }

    #[test]
    fn lexical_paths_are_absolute_and_refuse_dot_dot() {
        let callers = Callers::default();
        let pid = std::process::id();
        let arg = |s: &CString| PathArg {
            dirfd: libc::AT_FDCWD,
            addr: s.as_ptr() as u64,
        };
        let plain = CString::new("/srv/./w/file").unwrap();
        let request = Syscall::Mkdir {
            at: arg(&plain),
            mode: 0o700,
        };
        assert!(matches!(
            request.read_op_lexically(&callers, pid),
            Some(Op::Mkdir { path, mode: 0o700 }) if path == Path::new("/srv/w/file")
        ));
        let up = CString::new("/srv/w/../etc/passwd").unwrap();
        assert!(Syscall::Mkdir {
            at: arg(&up),
            mode: 0o700
        }
        .read_op_lexically(&callers, pid)
        .is_none());
        // A following link and a truncate resolve their last link: never lexical.
        assert!(Syscall::Truncate {
            at: arg(&plain),
            len: 0
        }
        .read_op_lexically(&callers, pid)
        .is_none());
        let relative = CString::new("rel/x").unwrap();
        let cwd = std::env::current_dir().unwrap();
        assert!(matches!(
            Syscall::Remove { at: arg(&relative), dir: false }.read_op_lexically(&callers, pid),
            Some(Op::Remove { path, dir: false }) if path == normalize_lexically(&cwd.join("rel/x"))
        ));
        let empty = CString::new("").unwrap();
        assert!(Syscall::Mkdir {
            at: arg(&empty),
            mode: 0o700
        }
        .read_op_lexically(&callers, pid)
        .is_none());
    }

    #[test]
    fn canonical_paths_resolve_the_callers_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap().join("real");
        fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let file = CString::new(link.join("f").into_os_string().into_vec()).unwrap();
        let arg = PathArg {
            dirfd: libc::AT_FDCWD,
            addr: file.as_ptr() as u64,
        };
        let callers = Callers::default();
        assert!(matches!(
            Syscall::Open { at: arg, flags: libc::O_WRONLY | libc::O_CREAT, mode: 0o600 }
                .read_op(&callers, std::process::id()),
            Some(Op::Open { path, .. }) if path == real.join("f")
        ));
    }
}
