//! System call decoding: which write a notification asks for, with its path
//! arguments still in the caller's memory ([`Request`]), then those paths read
//! from the caller and made absolute ([`Request::read_op_lexically`]) or
//! canonical as the caller would resolve them ([`Request::read_op`]).

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sandgate_policy::canon::normalize_lexically;

use crate::callerpath;
use crate::callers::Callers;
use crate::onbehalf::Op;
use crate::seccomp::{read_cstring, read_memory, Notif, WRITE_OPEN_FLAGS};

/// A path argument before resolution.
#[derive(Debug, Clone, Copy)]
pub(super) struct PathArg {
    dirfd: i32,
    addr: u64,
}

/// A decoded system call, paths still in the caller's memory.
#[derive(Debug)]
pub(super) enum Request {
    Open(PathArg, i32, u32),
    Mkdir(PathArg, u32),
    Mknod(PathArg, u32),
    Remove(PathArg, bool),
    Rename(PathArg, PathArg, u32),
    Link(PathArg, PathArg, bool),
    Symlink(u64, PathArg),
    Truncate(PathArg, i64),
    /// `bind(fd, addr, len)`: a write only for a UNIX socket with a path.
    Bind(i32, u64, u32),
}

/// The write `n` asks for; `None` when it is not a write after all (a
/// read-only `openat2`) or not one this module decodes.
pub(super) fn decode(n: &Notif) -> Option<Request> {
    let a = n.args;
    let cwd = |addr: u64| PathArg {
        dirfd: libc::AT_FDCWD,
        addr,
    };
    let at = |fd: u64, addr: u64| PathArg {
        dirfd: fd as i32,
        addr,
    };
    Some(match n.nr {
        libc::SYS_open => Request::Open(cwd(a[0]), a[1] as i32, a[2] as u32),
        libc::SYS_openat => Request::Open(at(a[0], a[1]), a[2] as i32, a[3] as u32),
        libc::SYS_openat2 => {
            let mut how = [0u8; 16];
            if read_memory(n.pid, a[2], &mut how).ok()? != 16 {
                return None;
            }
            let flags = u64::from_ne_bytes(how[..8].try_into().ok()?);
            let mode = u64::from_ne_bytes(how[8..].try_into().ok()?);
            if flags as u32 & WRITE_OPEN_FLAGS == 0 {
                return None;
            }
            Request::Open(at(a[0], a[1]), flags as i32, mode as u32)
        }
        libc::SYS_creat => Request::Open(
            cwd(a[0]),
            libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            a[1] as u32,
        ),
        libc::SYS_mkdir => Request::Mkdir(cwd(a[0]), a[1] as u32),
        libc::SYS_mkdirat => Request::Mkdir(at(a[0], a[1]), a[2] as u32),
        libc::SYS_mknod => Request::Mknod(cwd(a[0]), a[1] as u32),
        libc::SYS_mknodat => Request::Mknod(at(a[0], a[1]), a[2] as u32),
        libc::SYS_unlink => Request::Remove(cwd(a[0]), false),
        libc::SYS_rmdir => Request::Remove(cwd(a[0]), true),
        libc::SYS_unlinkat => {
            Request::Remove(at(a[0], a[1]), a[2] as i32 & libc::AT_REMOVEDIR != 0)
        }
        libc::SYS_rename => Request::Rename(cwd(a[0]), cwd(a[1]), 0),
        libc::SYS_renameat => Request::Rename(at(a[0], a[1]), at(a[2], a[3]), 0),
        libc::SYS_renameat2 => Request::Rename(at(a[0], a[1]), at(a[2], a[3]), a[4] as u32),
        libc::SYS_link => Request::Link(cwd(a[0]), cwd(a[1]), false),
        libc::SYS_linkat => {
            if a[4] as i32 & libc::AT_EMPTY_PATH != 0 {
                return None;
            }
            Request::Link(
                at(a[0], a[1]),
                at(a[2], a[3]),
                a[4] as i32 & libc::AT_SYMLINK_FOLLOW != 0,
            )
        }
        libc::SYS_symlink => Request::Symlink(a[0], cwd(a[1])),
        libc::SYS_symlinkat => Request::Symlink(a[0], at(a[1], a[2])),
        libc::SYS_truncate => Request::Truncate(cwd(a[0]), a[1] as i64),
        libc::SYS_bind => Request::Bind(a[0] as i32, a[1], a[2] as u32),
        _ => return None,
    })
}

impl Request {
    /// Reads the paths from the caller and makes them canonical. `None` when
    /// they cannot be read (the Landlock floor then decides alone).
    pub(super) fn read_op(&self, callers: &Callers, pid: u32) -> Option<Op> {
        let path = |arg: PathArg, follow: bool| locate(callers, pid, arg, follow);
        Some(match *self {
            Request::Open(arg, flags, mode) => {
                let follow = flags & libc::O_NOFOLLOW == 0
                    && !(flags & libc::O_CREAT != 0 && flags & libc::O_EXCL != 0);
                Op::Open {
                    path: path(arg, follow)?,
                    flags,
                    mode,
                }
            }
            Request::Mkdir(arg, mode) => Op::Mkdir {
                path: path(arg, false)?,
                mode,
            },
            Request::Mknod(arg, mode) => Op::Mknod {
                path: path(arg, false)?,
                mode,
            },
            Request::Remove(arg, dir) => Op::Remove {
                path: path(arg, false)?,
                dir,
            },
            Request::Rename(from, to, flags) => Op::Rename {
                from: path(from, false)?,
                to: path(to, false)?,
                flags,
            },
            Request::Link(from, to, follow) => Op::Link {
                from: path(from, follow)?,
                to: path(to, false)?,
            },
            Request::Symlink(target, arg) => Op::Symlink {
                target: read_cstring(pid, target).ok()?,
                path: path(arg, false)?,
            },
            Request::Truncate(arg, len) => Op::Truncate {
                path: path(arg, true)?,
                len,
            },
            Request::Bind(fd, addr, len) => {
                let raw = socket_path(pid, addr, len)?;
                let absolute = absolute_raw(callers, pid, libc::AT_FDCWD, &raw, true)?;
                Op::Bind {
                    tid: pid,
                    fd,
                    path: callerpath::canonicalize_as_caller(&absolute, false, pid)?,
                }
            }
        })
    }
}

impl Request {
    /// Reads the paths and makes them absolute without touching the file
    /// system (the working directory as cached); `None` when a path has a
    /// `..` (or cannot be read).
    pub(super) fn read_op_lexically(&self, callers: &Callers, pid: u32) -> Option<Op> {
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
            Request::Open(arg, flags, mode) => Op::Open {
                path: path(arg)?,
                flags,
                mode,
            },
            Request::Mkdir(arg, mode) => Op::Mkdir {
                path: path(arg)?,
                mode,
            },
            Request::Mknod(arg, mode) => Op::Mknod {
                path: path(arg)?,
                mode,
            },
            Request::Remove(arg, dir) => Op::Remove {
                path: path(arg)?,
                dir,
            },
            Request::Rename(from, to, flags) => Op::Rename {
                from: path(from)?,
                to: path(to)?,
                flags,
            },
            // A following link and a truncate resolve the final symlink.
            Request::Link(_, _, true) | Request::Truncate(..) => return None,
            Request::Link(from, to, false) => Op::Link {
                from: path(from)?,
                to: path(to)?,
            },
            Request::Symlink(target, arg) => Op::Symlink {
                target: read_cstring(pid, target).ok()?,
                path: path(arg)?,
            },
            Request::Bind(fd, addr, len) => {
                let raw = socket_path(pid, addr, len)?;
                Op::Bind {
                    tid: pid,
                    fd,
                    path: plain(absolute_raw(callers, pid, libc::AT_FDCWD, &raw, false)?)?,
                }
            }
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
    match sandgate_sandbox::supervisor::connect::named(&buf) {
        sandgate_sandbox::supervisor::connect::Named::Path(path) => Some(path.to_vec()),
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

    fn notif(nr: i64, args: [u64; 6]) -> Notif {
        Notif {
            id: 1,
            pid: std::process::id(),
            nr,
            args,
        }
    }

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
        assert!(matches!(
            decode(&notif(libc::SYS_bind, [5, 0x1000, 20, 0, 0, 0])),
            Some(Request::Bind(5, 0x1000, 20))
        ));
    }

    #[test]
    fn each_write_call_decodes_to_its_request() {
        let req = |nr, args| decode(&notif(nr, args));
        assert!(matches!(
            req(libc::SYS_mkdirat, [7, 0x1000, 0o755, 0, 0, 0]),
            Some(Request::Mkdir(
                PathArg {
                    dirfd: 7,
                    addr: 0x1000
                },
                0o755
            ))
        ));
        assert!(matches!(
            req(
                libc::SYS_unlinkat,
                [3, 0x10, libc::AT_REMOVEDIR as u64, 0, 0, 0]
            ),
            Some(Request::Remove(PathArg { dirfd: 3, .. }, true))
        ));
        assert!(matches!(
            req(libc::SYS_unlink, [0x10, 0, 0, 0, 0, 0]),
            Some(Request::Remove(
                PathArg {
                    dirfd: libc::AT_FDCWD,
                    ..
                },
                false
            ))
        ));
        let creat = libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC;
        assert!(matches!(
            req(libc::SYS_creat, [0x10, 0o600, 0, 0, 0, 0]),
            Some(Request::Open(_, flags, 0o600)) if flags == creat
        ));
        assert!(matches!(
            req(libc::SYS_renameat2, [1, 0x10, 2, 0x20, libc::RENAME_NOREPLACE as u64, 0]),
            Some(Request::Rename(PathArg { dirfd: 1, .. }, PathArg { dirfd: 2, .. }, flags))
                if flags == libc::RENAME_NOREPLACE
        ));
        assert!(matches!(
            req(
                libc::SYS_linkat,
                [1, 0x10, 2, 0x20, libc::AT_SYMLINK_FOLLOW as u64, 0]
            ),
            Some(Request::Link(_, _, true))
        ));
        assert!(matches!(
            req(libc::SYS_symlinkat, [0x30, 5, 0x40, 0, 0, 0]),
            Some(Request::Symlink(
                0x30,
                PathArg {
                    dirfd: 5,
                    addr: 0x40
                }
            ))
        ));
        assert!(matches!(
            req(libc::SYS_truncate, [0x10, 9, 0, 0, 0, 0]),
            Some(Request::Truncate(_, 9))
        ));
    }

    #[test]
    fn calls_that_are_not_ours_to_judge_decode_to_nothing() {
        // A link of a descriptor names no source path.
        let empty = libc::AT_EMPTY_PATH as u64;
        assert!(decode(&notif(libc::SYS_linkat, [1, 0x10, 2, 0x20, empty, 0])).is_none());
        assert!(decode(&notif(libc::SYS_read, [0; 6])).is_none());
        assert!(decode(&notif(libc::SYS_fchmodat, [0; 6])).is_none());
    }

    #[test]
    fn openat2_is_a_write_only_when_its_how_says_so() {
        let how = |flags: i32| {
            let mut bytes = [0u8; 24];
            bytes[..8].copy_from_slice(&(flags as u64).to_ne_bytes());
            bytes[8..16].copy_from_slice(&0o640u64.to_ne_bytes());
            bytes
        };
        let read = how(libc::O_RDONLY);
        let write = how(libc::O_WRONLY | libc::O_CREAT);
        let at = |bytes: &[u8; 24]| [3, 0x10, bytes.as_ptr() as u64, 24, 0, 0];
        assert!(decode(&notif(libc::SYS_openat2, at(&read))).is_none());
        assert!(matches!(
            decode(&notif(libc::SYS_openat2, at(&write))),
            Some(Request::Open(PathArg { dirfd: 3, .. }, flags, 0o640))
                if flags == libc::O_WRONLY | libc::O_CREAT
        ));
        // An unreadable `open_how` is not judged here: Landlock decides.
        assert!(decode(&notif(libc::SYS_openat2, [3, 0x10, 0, 24, 0, 0])).is_none());
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
        let request = Request::Mkdir(arg(&plain), 0o700);
        assert!(matches!(
            request.read_op_lexically(&callers, pid),
            Some(Op::Mkdir { path, mode: 0o700 }) if path == Path::new("/srv/w/file")
        ));
        let up = CString::new("/srv/w/../etc/passwd").unwrap();
        assert!(Request::Mkdir(arg(&up), 0o700)
            .read_op_lexically(&callers, pid)
            .is_none());
        // A following link and a truncate resolve their last link: never lexical.
        assert!(Request::Truncate(arg(&plain), 0)
            .read_op_lexically(&callers, pid)
            .is_none());
        let relative = CString::new("rel/x").unwrap();
        let cwd = std::env::current_dir().unwrap();
        assert!(matches!(
            Request::Remove(arg(&relative), false).read_op_lexically(&callers, pid),
            Some(Op::Remove { path, dir: false }) if path == normalize_lexically(&cwd.join("rel/x"))
        ));
        let empty = CString::new("").unwrap();
        assert!(Request::Mkdir(arg(&empty), 0o700)
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
            Request::Open(arg, libc::O_WRONLY | libc::O_CREAT, 0o600)
                .read_op(&callers, std::process::id()),
            Some(Op::Open { path, .. }) if path == real.join("f")
        ));
    }
}
