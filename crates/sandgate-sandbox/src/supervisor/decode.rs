//! The one decoder of the notified system calls, for both scopes: which
//! call a notification is, with its arguments as the kernel reads them from
//! the registers ([`Syscall`]). Path arguments stay in the caller's memory
//! ([`PathArg`]) until a scope reads them: exec isolation in the caller's
//! root (the `protect` module), `sandgate run` canonical as the caller would
//! resolve them (the `resolve` module).
//!
//! `int` arguments are read from the lower half of their register, as the
//! kernel reads them.

use crate::notify::{read_memory, Notif};

/// Open flags that make an open a write.
pub const WRITE_OPEN_FLAGS: u32 =
    (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC) as u32;

/// `setxattrat` (Linux 6.13, x86-64).
pub const SYS_SETXATTRAT: libc::c_long = 463;
/// `removexattrat` (Linux 6.13, x86-64).
pub const SYS_REMOVEXATTRAT: libc::c_long = 466;

/// The `ioctl` requests that change an inode's flags or its encryption
/// policy, which Landlock does not see: `FS_IOC_SETFLAGS` (and its 32-bit
/// number), `FS_IOC_FSSETXATTR`, `FS_IOC_SETVERSION` (both numbers) and
/// `FS_IOC_SET_ENCRYPTION_POLICY`. Decoded as metadata changes of the
/// descriptor's file.
pub const INODE_IOCTLS: &[u32] = &[
    0x4008_6602,
    0x4004_6602,
    0x401c_5820,
    0x4008_7602,
    0x4004_7602,
    0x800c_6613,
];

/// A path argument: the directory it is relative to (`AT_FDCWD`: the
/// working directory) and where the path is in the caller's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathArg {
    /// The directory descriptor (`AT_FDCWD` for the working directory).
    pub dirfd: i32,
    /// The address of the NUL-terminated path.
    pub addr: u64,
}

impl PathArg {
    /// Whether the path is relative to the working directory.
    pub fn from_cwd(self) -> bool {
        self.dirfd == libc::AT_FDCWD
    }
}

/// A notified system call, decoded from its registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syscall {
    /// `open`, `openat`, `creat`, and `openat2` with a write flag.
    Open {
        /// The file.
        at: PathArg,
        /// The open flags.
        flags: i32,
        /// The creation mode.
        mode: u32,
    },
    /// `mkdir`, `mkdirat`.
    Mkdir {
        /// The new directory.
        at: PathArg,
        /// Its mode.
        mode: u32,
    },
    /// `mknod`, `mknodat`.
    Mknod {
        /// The new node.
        at: PathArg,
        /// Its type and mode.
        mode: u32,
    },
    /// `unlink`, `rmdir`, `unlinkat`.
    Remove {
        /// The entry.
        at: PathArg,
        /// Whether a directory is removed.
        dir: bool,
    },
    /// `rename`, `renameat`, `renameat2`.
    Rename {
        /// The old name.
        from: PathArg,
        /// The new name.
        to: PathArg,
        /// `renameat2`'s flags.
        flags: u32,
    },
    /// `link`, `linkat`.
    Link {
        /// The existing file (with `AT_EMPTY_PATH` and an empty path: the
        /// descriptor itself).
        from: PathArg,
        /// The new name.
        to: PathArg,
        /// `linkat`'s flags.
        flags: i32,
    },
    /// `symlink`, `symlinkat`.
    Symlink {
        /// Where the link's contents are in the caller's memory.
        target: u64,
        /// The new name.
        at: PathArg,
    },
    /// `truncate`.
    Truncate {
        /// The file.
        at: PathArg,
        /// The new length.
        len: i64,
    },
    /// `bind`: a name is made only for a UNIX socket with a path.
    Bind {
        /// The caller's socket descriptor.
        fd: i32,
        /// Where the address is in the caller's memory.
        addr: u64,
        /// The address's length.
        len: u32,
    },
    /// `connect`.
    Connect {
        /// The caller's socket descriptor.
        fd: i32,
        /// Where the address is in the caller's memory.
        addr: u64,
        /// The address's length, as passed (the connect path reads the
        /// lower half).
        len: u64,
    },
    /// A metadata change (`chmod`, `chown`, timestamps, extended
    /// attributes, inode flags).
    Meta(Meta),
    /// A change of the working directory or the umask (`chdir`, `fchdir`,
    /// `umask`): only what is known about the caller changes.
    Context,
    /// A change of the credentials (the `set*id` family, `setgroups`,
    /// `capset`): only what is known about the caller changes.
    Creds,
    /// `execve`, `execveat`: recorded by the exec tracking of `sandgate run`
    /// (the `lineage` module), then continued.
    Exec {
        /// Where the argument vector is in the caller's memory.
        argv: u64,
    },
}

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

/// What a metadata system call acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaTarget {
    /// A path relative to `dirfd`; an empty path means `dirfd` itself when
    /// `empty_is_dir` (`AT_EMPTY_PATH`).
    Path {
        /// The path.
        at: PathArg,
        /// Whether a last symbolic link is followed.
        follow: bool,
        /// Whether an empty path means the descriptor itself.
        empty_is_dir: bool,
    },
    /// An open descriptor (`AT_FDCWD`: the working directory).
    Fd(i32),
}

/// A decoded metadata system call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// What it changes.
    pub change: Change,
    /// What it acts on.
    pub target: MetaTarget,
}

/// Decodes `n`; `None` for a call this decoder does not know, and for an
/// `openat2` that is no write after all (or whose `open_how` cannot be read:
/// the kernel decides it).
pub fn decode(n: &Notif) -> Option<Syscall> {
    let a = n.args;
    // `int` arguments: the kernel reads the lower half only.
    let int = |v: u64| v as u32 as i32;
    let cwd = |addr: u64| PathArg {
        dirfd: libc::AT_FDCWD,
        addr,
    };
    let at = |fd: u64, addr: u64| PathArg {
        dirfd: int(fd),
        addr,
    };
    let creat = libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC;
    Some(match n.nr {
        libc::SYS_open => Syscall::Open {
            at: cwd(a[0]),
            flags: int(a[1]),
            mode: a[2] as u32,
        },
        libc::SYS_openat => Syscall::Open {
            at: at(a[0], a[1]),
            flags: int(a[2]),
            mode: a[3] as u32,
        },
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
            Syscall::Open {
                at: at(a[0], a[1]),
                flags: flags as i32,
                mode: mode as u32,
            }
        }
        libc::SYS_creat => Syscall::Open {
            at: cwd(a[0]),
            flags: creat,
            mode: a[1] as u32,
        },
        libc::SYS_mkdir => Syscall::Mkdir {
            at: cwd(a[0]),
            mode: a[1] as u32,
        },
        libc::SYS_mkdirat => Syscall::Mkdir {
            at: at(a[0], a[1]),
            mode: a[2] as u32,
        },
        libc::SYS_mknod => Syscall::Mknod {
            at: cwd(a[0]),
            mode: a[1] as u32,
        },
        libc::SYS_mknodat => Syscall::Mknod {
            at: at(a[0], a[1]),
            mode: a[2] as u32,
        },
        libc::SYS_unlink => Syscall::Remove {
            at: cwd(a[0]),
            dir: false,
        },
        libc::SYS_rmdir => Syscall::Remove {
            at: cwd(a[0]),
            dir: true,
        },
        libc::SYS_unlinkat => Syscall::Remove {
            at: at(a[0], a[1]),
            dir: int(a[2]) & libc::AT_REMOVEDIR != 0,
        },
        libc::SYS_rename => Syscall::Rename {
            from: cwd(a[0]),
            to: cwd(a[1]),
            flags: 0,
        },
        libc::SYS_renameat => Syscall::Rename {
            from: at(a[0], a[1]),
            to: at(a[2], a[3]),
            flags: 0,
        },
        libc::SYS_renameat2 => Syscall::Rename {
            from: at(a[0], a[1]),
            to: at(a[2], a[3]),
            flags: a[4] as u32,
        },
        libc::SYS_link => Syscall::Link {
            from: cwd(a[0]),
            to: cwd(a[1]),
            flags: 0,
        },
        libc::SYS_linkat => Syscall::Link {
            from: at(a[0], a[1]),
            to: at(a[2], a[3]),
            flags: int(a[4]),
        },
        libc::SYS_symlink => Syscall::Symlink {
            target: a[0],
            at: cwd(a[1]),
        },
        libc::SYS_symlinkat => Syscall::Symlink {
            target: a[0],
            at: at(a[1], a[2]),
        },
        libc::SYS_truncate => Syscall::Truncate {
            at: cwd(a[0]),
            len: a[1] as i64,
        },
        libc::SYS_bind => Syscall::Bind {
            fd: int(a[0]),
            addr: a[1],
            // `socklen_t` is 32 bits: the kernel ignores the upper half.
            len: a[2] as u32,
        },
        libc::SYS_connect => Syscall::Connect {
            fd: int(a[0]),
            addr: a[1],
            len: a[2],
        },
        libc::SYS_chdir | libc::SYS_fchdir | libc::SYS_umask => Syscall::Context,
        libc::SYS_setuid
        | libc::SYS_setgid
        | libc::SYS_setreuid
        | libc::SYS_setregid
        | libc::SYS_setresuid
        | libc::SYS_setresgid
        | libc::SYS_setfsuid
        | libc::SYS_setfsgid
        | libc::SYS_setgroups
        | libc::SYS_capset => Syscall::Creds,
        libc::SYS_execve => Syscall::Exec { argv: a[1] },
        libc::SYS_execveat => Syscall::Exec { argv: a[2] },
        _ => Syscall::Meta(decode_meta(n)?),
    })
}

/// Decodes `n` if it is a metadata system call.
fn decode_meta(n: &Notif) -> Option<Meta> {
    let a = n.args;
    let path = |dirfd: u64, addr: u64, flags: u64| MetaTarget::Path {
        at: PathArg {
            dirfd: dirfd as i32,
            addr,
        },
        follow: flags as i32 & libc::AT_SYMLINK_NOFOLLOW == 0,
        empty_is_dir: flags as i32 & libc::AT_EMPTY_PATH != 0,
    };
    let cwd = |addr: u64, follow: bool| MetaTarget::Path {
        at: PathArg {
            dirfd: libc::AT_FDCWD,
            addr,
        },
        follow,
        empty_is_dir: false,
    };
    let fd = |v: u64| MetaTarget::Fd(v as i32);
    let (change, target) = match n.nr {
        libc::SYS_chmod => (Change::Mode, cwd(a[0], true)),
        libc::SYS_fchmod => (Change::Mode, fd(a[0])),
        libc::SYS_fchmodat => (Change::Mode, path(a[0], a[1], 0)),
        libc::SYS_fchmodat2 => (Change::Mode, path(a[0], a[1], a[3])),
        libc::SYS_chown => (Change::Owner, cwd(a[0], true)),
        libc::SYS_lchown => (Change::Owner, cwd(a[0], false)),
        libc::SYS_fchown => (Change::Owner, fd(a[0])),
        libc::SYS_fchownat => (Change::Owner, path(a[0], a[1], a[4])),
        libc::SYS_utime | libc::SYS_utimes => (Change::Times, cwd(a[0], true)),
        // A null path acts on the descriptor (how `futimes` used to work).
        libc::SYS_futimesat | libc::SYS_utimensat if a[1] == 0 => (Change::Times, fd(a[0])),
        libc::SYS_futimesat => (Change::Times, path(a[0], a[1], 0)),
        libc::SYS_utimensat => (Change::Times, path(a[0], a[1], a[3])),
        libc::SYS_setxattr | libc::SYS_removexattr => (Change::Xattr, cwd(a[0], true)),
        libc::SYS_lsetxattr | libc::SYS_lremovexattr => (Change::Xattr, cwd(a[0], false)),
        libc::SYS_fsetxattr | libc::SYS_fremovexattr => (Change::Xattr, fd(a[0])),
        SYS_SETXATTRAT | SYS_REMOVEXATTRAT => (Change::Xattr, path(a[0], a[1], a[2])),
        libc::SYS_ioctl if INODE_IOCTLS.contains(&(a[1] as u32)) => (Change::Flags, fd(a[0])),
        _ => return None,
    };
    Some(Meta { change, target })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notif(nr: i64, args: [u64; 6]) -> Notif {
        Notif {
            id: 1,
            pid: std::process::id(),
            nr,
            args,
        }
    }

    fn cwd(addr: u64) -> PathArg {
        PathArg {
            dirfd: libc::AT_FDCWD,
            addr,
        }
    }

    #[test]
    fn each_write_call_decodes_to_its_syscall() {
        let call = |nr, args| decode(&notif(nr, args));
        assert_eq!(
            call(libc::SYS_mkdirat, [7, 0x1000, 0o755, 0, 0, 0]),
            Some(Syscall::Mkdir {
                at: PathArg {
                    dirfd: 7,
                    addr: 0x1000
                },
                mode: 0o755
            })
        );
        assert!(matches!(
            call(
                libc::SYS_unlinkat,
                [3, 0x10, libc::AT_REMOVEDIR as u64, 0, 0, 0]
            ),
            Some(Syscall::Remove {
                at: PathArg { dirfd: 3, .. },
                dir: true
            })
        ));
        assert_eq!(
            call(libc::SYS_unlink, [0x10, 0, 0, 0, 0, 0]),
            Some(Syscall::Remove {
                at: cwd(0x10),
                dir: false
            })
        );
        assert_eq!(
            call(libc::SYS_rmdir, [0x10, 0, 0, 0, 0, 0]),
            Some(Syscall::Remove {
                at: cwd(0x10),
                dir: true
            })
        );
        let creat = libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC;
        assert_eq!(
            call(libc::SYS_creat, [0x10, 0o600, 0, 0, 0, 0]),
            Some(Syscall::Open {
                at: cwd(0x10),
                flags: creat,
                mode: 0o600
            })
        );
        // An `int` is read from the lower half of its register.
        assert_eq!(
            call(
                libc::SYS_openat,
                [
                    0xffff_ffff_0000_0000 | libc::AT_FDCWD as u32 as u64,
                    0x10,
                    0xdead_0000_0000_0000 | libc::O_WRONLY as u64,
                    0o644,
                    0,
                    0
                ]
            ),
            Some(Syscall::Open {
                at: cwd(0x10),
                flags: libc::O_WRONLY,
                mode: 0o644
            })
        );
        assert!(matches!(
            call(libc::SYS_renameat2, [1, 0x10, 2, 0x20, libc::RENAME_NOREPLACE as u64, 0]),
            Some(Syscall::Rename { from: PathArg { dirfd: 1, .. }, to: PathArg { dirfd: 2, .. }, flags })
                if flags == libc::RENAME_NOREPLACE
        ));
        assert!(matches!(
            call(
                libc::SYS_linkat,
                [1, 0x10, 2, 0x20, libc::AT_SYMLINK_FOLLOW as u64, 0]
            ),
            Some(Syscall::Link { flags, .. }) if flags == libc::AT_SYMLINK_FOLLOW
        ));
        // A link of a descriptor decodes too: exec isolation performs it.
        assert!(matches!(
            call(libc::SYS_linkat, [1, 0x10, 2, 0x20, libc::AT_EMPTY_PATH as u64, 0]),
            Some(Syscall::Link { flags, .. }) if flags == libc::AT_EMPTY_PATH
        ));
        assert_eq!(
            call(libc::SYS_symlinkat, [0x30, 5, 0x40, 0, 0, 0]),
            Some(Syscall::Symlink {
                target: 0x30,
                at: PathArg {
                    dirfd: 5,
                    addr: 0x40
                }
            })
        );
        assert_eq!(
            call(libc::SYS_truncate, [0x10, 9, 0, 0, 0, 0]),
            Some(Syscall::Truncate {
                at: cwd(0x10),
                len: 9
            })
        );
        assert_eq!(
            call(libc::SYS_bind, [5, 0x1000, 20, 0, 0, 0]),
            Some(Syscall::Bind {
                fd: 5,
                addr: 0x1000,
                len: 20
            })
        );
        assert_eq!(
            call(libc::SYS_connect, [5, 0x1000, 110, 0, 0, 0]),
            Some(Syscall::Connect {
                fd: 5,
                addr: 0x1000,
                len: 110
            })
        );
    }

    #[test]
    fn calls_that_are_not_ours_decode_to_nothing() {
        assert!(decode(&notif(libc::SYS_read, [0; 6])).is_none());
        assert!(decode(&notif(libc::SYS_getpid, [0; 6])).is_none());
        // An `ioctl` that changes no inode.
        assert!(decode(&notif(libc::SYS_ioctl, [1, 0x5401, 0, 0, 0, 0])).is_none());
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
            Some(Syscall::Open { at: PathArg { dirfd: 3, .. }, flags, mode: 0o640 })
                if flags == libc::O_WRONLY | libc::O_CREAT
        ));
        // An unreadable `open_how` is not judged here: Landlock decides.
        assert!(decode(&notif(libc::SYS_openat2, [3, 0x10, 0, 24, 0, 0])).is_none());
    }

    #[test]
    fn an_exec_decodes_to_where_its_arguments_are() {
        assert_eq!(
            decode(&notif(libc::SYS_execve, [0x10, 0x20, 0x30, 0, 0, 0])),
            Some(Syscall::Exec { argv: 0x20 })
        );
        assert_eq!(
            decode(&notif(libc::SYS_execveat, [3, 0x10, 0x20, 0x30, 0, 0])),
            Some(Syscall::Exec { argv: 0x20 })
        );
    }

    #[test]
    fn context_and_credential_calls_are_bookkeeping_and_writes_are_not() {
        let cases = [
            (libc::SYS_chdir, Some(Syscall::Context)),
            (libc::SYS_fchdir, Some(Syscall::Context)),
            (libc::SYS_umask, Some(Syscall::Context)),
            (libc::SYS_setuid, Some(Syscall::Creds)),
            (libc::SYS_setresgid, Some(Syscall::Creds)),
            (libc::SYS_setfsuid, Some(Syscall::Creds)),
            (libc::SYS_setgroups, Some(Syscall::Creds)),
            (libc::SYS_capset, Some(Syscall::Creds)),
        ];
        for (nr, want) in cases {
            assert_eq!(decode(&notif(nr, [0; 6])), want, "system call {nr}");
        }
        for nr in [libc::SYS_openat, libc::SYS_rename, libc::SYS_fchmodat] {
            let got = decode(&notif(nr, [0; 6]));
            assert!(
                !matches!(got, Some(Syscall::Context | Syscall::Creds)),
                "system call {nr}: {got:?}"
            );
        }
    }

    #[test]
    fn metadata_calls_decode_to_what_they_change_and_act_on() {
        let at = libc::AT_FDCWD as u32 as u64;
        let nofollow = libc::AT_SYMLINK_NOFOLLOW as u64;
        let empty = libc::AT_EMPTY_PATH as u64;
        let cases: [(libc::c_long, [u64; 6], Change, &str); 11] = [
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
            (
                libc::SYS_ioctl,
                [8, u64::from(INODE_IOCTLS[0]), 0, 0, 0, 0],
                Change::Flags,
                "fd 8",
            ),
        ];
        for (nr, args, change, want) in cases {
            let nr = i64::from(nr as i32);
            let Some(Syscall::Meta(meta)) = decode(&notif(nr, args)) else {
                panic!("{nr}: not a metadata call");
            };
            assert_eq!(meta.change, change, "{nr}");
            let got = match meta.target {
                MetaTarget::Fd(fd) => format!("fd {fd}"),
                MetaTarget::Path {
                    at,
                    follow,
                    empty_is_dir,
                } => format!(
                    "path {} {}{}",
                    if at.from_cwd() {
                        "cwd".to_string()
                    } else {
                        at.dirfd.to_string()
                    },
                    if follow { "follow" } else { "nofollow" },
                    if empty_is_dir { " empty" } else { "" }
                ),
            };
            assert_eq!(got, want, "{nr}");
        }
        assert!(!matches!(
            decode(&notif(libc::SYS_openat, [0; 6])),
            Some(Syscall::Meta(_))
        ));
    }
}
