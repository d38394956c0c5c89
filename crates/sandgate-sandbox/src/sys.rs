//! The thin layer that talks to the kernel for exec isolation: the
//! `pre_exec` hook and the system calls it makes (the mount calls are in
//! [`crate::mount`]).
//!
//! The functions called from the child ([`confine_child`]) run between `fork`
//! and `exec`: they only make raw system calls and build no heap values, so
//! they are safe to run in a forked copy of a multithreaded parent.
//!
//! The workspace's system-call layers, one per job: `libc` for the raw calls
//! and constants of the two crates with `unsafe` code (this one and
//! `sandgate-confine`: calls between `fork` and `exec`, seccomp, the
//! listener's `ioctl`s, `process_vm_readv`, which want nothing between them
//! and the kernel); `nix` for the safe wrappers everywhere else (the user
//! database in `sandgate-policy`, process-group signals with their names in
//! `sandgate-tools`, `poll` and the terminal in the binary), since it covers
//! all of those and rustix, a system-call crate, has no user database or
//! signal names; and the `landlock` crate for building Landlock rulesets.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// `LANDLOCK_CREATE_RULESET_VERSION`: ask the kernel for its Landlock ABI.
const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;

/// The Landlock ABI version of the running kernel; 0 when Landlock is
/// missing or disabled.
pub fn landlock_abi() -> u32 {
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the
    // kernel reads and writes no memory and only returns the ABI version (or
    // -1 with errno when Landlock is absent).
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(version).unwrap_or(0)
}

/// What the child applies to itself before `exec`.
#[derive(Debug, Default)]
pub struct ChildConfinement {
    /// Set `PR_SET_NO_NEW_PRIVS`.
    pub no_new_privs: bool,
    /// A Landlock ruleset to restrict the child with.
    pub landlock: Option<OwnedFd>,
    /// Drop every capability (ambient, bounding when allowed, permitted,
    /// effective, inheritable) after Landlock.
    pub drop_capabilities: bool,
    /// Classic BPF seccomp programs to install, in order.
    pub seccomp: Vec<Vec<libc::sock_filter>>,
    /// A read-only view of everything but the writable trees, made first.
    pub read_only_mounts: Option<ReadOnlyMounts>,
    /// The supervisor's filter, installed last, and its hand-over.
    pub supervised: Option<crate::notify::ChildHalf>,
}

/// Installs `confinement` as a `pre_exec` hook of `command`: the child
/// restricts itself after `fork` and before `exec`, in this order: the
/// read-only mounts (Landlock forbids mounting), `no_new_privs`, Landlock,
/// the capabilities, seccomp (last, so that its filters do not see the
/// set-up calls).
pub fn confine_child(command: &mut Command, confinement: ChildConfinement) {
    let ChildConfinement {
        no_new_privs,
        landlock,
        drop_capabilities: drop_caps,
        seccomp,
        read_only_mounts,
        supervised,
    } = confinement;
    let programs: Vec<(Vec<libc::sock_filter>, u16)> = seccomp
        .into_iter()
        .map(|filters| {
            let len = u16::try_from(filters.len()).unwrap_or(u16::MAX);
            (filters, len)
        })
        .collect();
    // Seccomp filters need `no_new_privs` from callers without CAP_SYS_ADMIN.
    let no_new_privs = no_new_privs || !programs.is_empty() || supervised.is_some();
    let mut read_only_mounts = read_only_mounts;
    let hook = move || -> io::Result<()> {
        if let Some(mounts) = &mut read_only_mounts {
            mounts.apply()?;
        }
        if no_new_privs {
            set_no_new_privs()?;
        }
        if let Some(fd) = &landlock {
            landlock_restrict_self(fd.as_raw_fd())?;
        }
        if drop_caps {
            drop_capabilities()?;
        }
        for (filters, len) in &programs {
            install_seccomp(filters, *len)?;
        }
        if let Some(half) = &supervised {
            half.install()?;
        }
        Ok(())
    };
    // SAFETY: the hook runs in the forked child before `exec`. It only calls
    // `unshare`, `open`/`write`/`close` of `/proc/self` files, `mount`,
    // `mount_setattr`, `chdir`, `prctl`, `landlock_restrict_self`,
    // `seccomp`, `sendmsg` and `close` on memory owned by the closure (the mount paths, the ruleset
    // fd and the filter vector, all built before the fork) and allocates
    // nothing, so it cannot deadlock on a lock held by
    // another thread of the parent at fork time. Errors are returned as
    // `io::Error` built from errno, which allocates nothing either.
    unsafe {
        command.pre_exec(hook);
    }
}

/// Installs the supervisor's filter as a `pre_exec` hook of `command` (a
/// wrapper such as `bwrap`, whose own filters come later), with
/// `no_new_privs` first.
pub fn supervise_child(command: &mut Command, half: crate::notify::ChildHalf) {
    let hook = move || -> io::Result<()> {
        set_no_new_privs()?;
        half.install()
    };
    // SAFETY: the hook runs in the forked child before `exec`. It only calls
    // `prctl`, `seccomp`, `sendmsg` and `close` on memory owned by the
    // closure (the filter and the socket, made before the fork) and
    // allocates nothing.
    unsafe {
        command.pre_exec(hook);
    }
}

/// `_LINUX_CAPABILITY_VERSION_3`: 64-bit capability sets in two words.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// Empties the ambient set, the bounding set (when the process may:
/// `CAP_SETPCAP`; without it the process has no capability it could pass
/// on, and `no_new_privs` keeps `exec` from granting any), then the
/// permitted, effective and inheritable sets.
fn drop_capabilities() -> io::Result<()> {
    // SAFETY: integer arguments only; touches no memory of ours.
    let rc = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    // EINVAL: a kernel without ambient capabilities, which then has none to clear.
    if rc != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
        return Err(io::Error::last_os_error());
    }
    for cap in 0..64 {
        // SAFETY: integer arguments only.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if rc != 0 {
            match io::Error::last_os_error().raw_os_error() {
                // Past the last capability this kernel knows.
                Some(libc::EINVAL) => break,
                // No CAP_SETPCAP: the bounding set stays, nothing can be gained.
                Some(libc::EPERM) => break,
                _ => return Err(io::Error::last_os_error()),
            }
        }
    }
    capset(&[CapData::default(); 2])
}

/// `CAP_SYS_ADMIN`.
pub const CAP_SYS_ADMIN: u32 = 21;

/// Whether the calling thread has capability `cap` in its effective set.
pub fn has_capability(cap: u32) -> bool {
    let (word, bit) = ((cap / 32) as usize, cap % 32);
    capget().is_ok_and(|data| {
        data.get(word)
            .is_some_and(|d| d.effective & (1 << bit) != 0)
    })
}

/// Takes the capabilities `caps` out of every set of the calling thread:
/// ambient, bounding (when it may: `CAP_SETPCAP`; without it it has none
/// of them to pass on, and `no_new_privs` keeps `exec` from granting any),
/// permitted, effective and inheritable. The others stay. Raw system calls
/// on the slice given, no allocation: it runs between `fork` and `exec`.
pub fn drop_capabilities_in(caps: &[u32]) -> io::Result<()> {
    for &cap in caps {
        // SAFETY: integer arguments only. EINVAL: a kernel that does not know
        // `cap` (or has no ambient set), which then cannot hold it.
        let rc = unsafe {
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_LOWER,
                libc::c_ulong::from(cap),
                0,
                0,
            )
        };
        if rc != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: integer arguments only.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, libc::c_ulong::from(cap), 0, 0, 0) };
        if rc != 0
            && !matches!(
                io::Error::last_os_error().raw_os_error(),
                Some(libc::EINVAL | libc::EPERM)
            )
        {
            return Err(io::Error::last_os_error());
        }
    }
    let mut data = capget()?;
    for &cap in caps {
        let (word, bit) = ((cap / 32) as usize, cap % 32);
        if let Some(d) = data.get_mut(word) {
            d.effective &= !(1 << bit);
            d.permitted &= !(1 << bit);
            d.inheritable &= !(1 << bit);
        }
    }
    capset(&data)
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// One word of each capability set (`__user_cap_data_struct`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CapData {
    pub(crate) effective: u32,
    pub(crate) permitted: u32,
    pub(crate) inheritable: u32,
}

/// The calling thread's capability sets (version 3: two words each).
pub(crate) fn capget() -> io::Result<[CapData; 2]> {
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: `header` and `data` are live and laid out as the kernel's
    // `__user_cap_header_struct` and two `__user_cap_data_struct`; the
    // kernel writes the two data entries.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_capget,
            &mut header as *mut CapHeader,
            data.as_mut_ptr(),
        )
    };
    if rc == 0 {
        Ok(data)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sets the calling thread's capability sets: the raw system call changes
/// this thread only. No allocation (it runs between fork and exec too).
pub(crate) fn capset(data: &[CapData; 2]) -> io::Result<()> {
    let header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    // SAFETY: `header` and `data` are valid for the whole call, laid out as
    // the kernel's `__user_cap_header_struct` and two `__user_cap_data_struct`
    // (version 3); the kernel only reads them.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn set_no_new_privs() -> io::Result<()> {
    // SAFETY: `PR_SET_NO_NEW_PRIVS` takes integer arguments only and touches
    // no memory of ours.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sets `no_new_privs` and enters the Landlock ruleset `ruleset` (built with
/// the `landlock` crate, see [`crate::landlock`]): raw system calls only, no
/// allocation, so it is safe to run between `fork` and `exec` of a
/// multithreaded parent, which the crate's own `restrict_self` is not made
/// for. `sandgate run`'s child calls it from its `pre_exec` hook.
pub fn landlock_restrict_child(ruleset: RawFd) -> io::Result<()> {
    set_no_new_privs()?;
    landlock_restrict_self(ruleset)
}

fn landlock_restrict_self(ruleset: RawFd) -> io::Result<()> {
    // SAFETY: integer arguments only (the kernel checks that the descriptor
    // is an open ruleset, which the caller holds for the call); flags 0 asks for the plain restriction of the calling thread,
    // which (before exec, single-threaded in the child) is the whole process.
    let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0 as libc::c_uint) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn install_seccomp(filters: &[libc::sock_filter], len: u16) -> io::Result<()> {
    let program = libc::sock_fprog {
        len,
        filter: filters.as_ptr().cast_mut(),
    };
    // SAFETY: `program` points at `len` valid filter instructions that live
    // for the whole call; the kernel copies them and keeps no pointer.
    // `no_new_privs` is set before, as `SECCOMP_SET_MODE_FILTER` requires for
    // callers without CAP_SYS_ADMIN.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0 as libc::c_uint,
            &program as *const libc::sock_fprog,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// An anonymous memory file holding `bytes`, read from its start, closed on
/// exec (see [`inherit_fds`] to pass it to one child).
pub fn memfd_with(name: &std::ffi::CStr, bytes: &[u8]) -> io::Result<OwnedFd> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // SAFETY: `name` is a valid NUL-terminated string for the whole call;
    // the flags are plain integers. The kernel returns a new descriptor or -1.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by the kernel and is owned by nothing else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(owned);
    file.write_all(bytes)?;
    use std::io::Seek;
    file.rewind()?;
    Ok(OwnedFd::from(file))
}

/// Makes `fds` survive the `exec` of `command`'s child (only that child:
/// in this process they stay close-on-exec), and keeps them open as long as
/// `command` lives.
pub fn inherit_fds(command: &mut Command, fds: Vec<OwnedFd>) {
    let hook = move || -> io::Result<()> {
        for fd in &fds {
            // SAFETY: `fd` is open (owned by the closure); F_SETFD with 0
            // only clears the close-on-exec flag of the child's copy.
            if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    };
    // SAFETY: the hook runs in the forked child before `exec` and only calls
    // `fcntl`, which is async-signal-safe, on descriptors the closure owns;
    // it allocates nothing.
    unsafe {
        command.pre_exec(hook);
    }
}

/// A private mount namespace in which everything but the writable trees is
/// read-only, so that changes of mode, owner, timestamps and extended
/// attributes (which Landlock does not cover) fail outside them with
/// `EROFS`, path-accurately, as the kernel resolves each path. Built in the
/// parent; applied by the child before Landlock, which forbids mounting.
///
/// The writable trees are cloned (`open_tree`) before everything is made
/// read-only and moved back on top after, so each keeps the flags it had:
/// nothing read-only in the caller's namespace becomes writable. The
/// protected paths are read-only binds on top of them ([`crate::mount`]).
#[derive(Debug)]
pub struct ReadOnlyMounts {
    /// Root: a plain mount namespace; anyone else: a user namespace too,
    /// mapping only the caller's uid and gid.
    as_root: bool,
    /// `"UID UID 1"`.
    uid_map: std::ffi::CString,
    /// `"GID GID 1"`.
    gid_map: std::ffi::CString,
    /// The writable trees.
    writable: Vec<std::ffi::CString>,
    /// Existing protected paths inside them, read-only on top.
    protected: Vec<std::ffi::CString>,
    /// The working directory, entered again once the mounts are made.
    cwd: std::ffi::CString,
    /// Room for the clones of the writable trees, reserved before the fork.
    trees: Vec<crate::mount::Fd>,
    /// Whether [`ReadOnlyMounts::apply`] enters the namespaces itself
    /// (not when an earlier hook made them: [`ReadOnlyMounts::in_made_namespaces`]).
    enter: bool,
}

impl ReadOnlyMounts {
    /// The layer for `writable` trees and `protected` paths (absolute,
    /// existing, symlinks resolved), for a child that starts in `cwd`.
    /// `None` when a path holds a NUL byte (no such path exists).
    pub fn new(
        writable: &[&std::path::Path],
        protected: &[&std::path::Path],
        cwd: &std::path::Path,
    ) -> Option<ReadOnlyMounts> {
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &std::path::Path| std::ffi::CString::new(p.as_os_str().as_bytes()).ok();
        // SAFETY: geteuid, getuid and getgid take no arguments and cannot fail.
        let (euid, uid, gid) = unsafe { (libc::geteuid(), libc::getuid(), libc::getgid()) };
        Some(ReadOnlyMounts {
            // Root without CAP_SYS_ADMIN (inside `sandgate run`) makes a
            // user namespace like anyone else.
            as_root: euid == 0 && has_capability(CAP_SYS_ADMIN),
            uid_map: std::ffi::CString::new(format!("{uid} {uid} 1")).ok()?,
            gid_map: std::ffi::CString::new(format!("{gid} {gid} 1")).ok()?,
            writable: writable.iter().map(|p| c(p)).collect::<Option<_>>()?,
            protected: protected.iter().map(|p| c(p)).collect::<Option<_>>()?,
            cwd: c(cwd)?,
            trees: Vec::with_capacity(writable.len()),
            enter: true,
        })
    }

    /// This layer, made in the mount namespace (and, for anyone but root
    /// with `CAP_SYS_ADMIN`, the user namespace) that an earlier hook of
    /// the child made, its mounts no longer propagating back: the network
    /// namespace's hook. One namespace less to make.
    pub fn in_made_namespaces(mut self) -> ReadOnlyMounts {
        self.enter = false;
        self
    }

    /// Enters the namespaces and makes the mounts. Raw system calls on
    /// memory built before the fork only (`trees` stays within the room
    /// reserved for it).
    fn apply(&mut self) -> io::Result<()> {
        use crate::mount::{self, open_path};
        if self.enter {
            mount::enter_namespaces(
                self.as_root,
                self.uid_map.as_bytes(),
                self.gid_map.as_bytes(),
            )?;
        }
        self.trees.clear();
        for path in &self.writable {
            let source = open_path(libc::AT_FDCWD, path, libc::O_DIRECTORY, 0)?;
            self.trees.push(mount::clone_tree(&source, true)?);
        }
        let root = open_path(libc::AT_FDCWD, c"/", libc::O_DIRECTORY, 0)?;
        mount::set_read_only(&root, true)?;
        for (tree, path) in self.trees.iter().zip(&self.writable) {
            let target = open_path(libc::AT_FDCWD, path, libc::O_DIRECTORY, 0)?;
            mount::move_onto(tree, &target, c"")?;
        }
        self.trees.clear();
        // On top of the writable trees, as the kernel now resolves them.
        for path in &self.protected {
            mount::bind_read_only(path)?;
        }
        // The working directory was entered before the mounts: enter it
        // again, so that it is the writable tree on top, not the one below.
        // SAFETY: `cwd` is a valid NUL-terminated string owned by `self`.
        check(unsafe { libc::chdir(self.cwd.as_ptr()) })
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether this process may create a user namespace (for
/// [`ReadOnlyMounts`]): the kernel allows any (`user.max_user_namespaces`),
/// and for a caller without root, neither Debian's
/// `kernel.unprivileged_userns_clone` nor AppArmor's
/// `kernel.apparmor_restrict_unprivileged_userns` forbids it. A sandbox
/// around sandgate can still refuse; then the command does not start.
pub fn user_namespaces_available() -> bool {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    if read("/proc/sys/user/max_user_namespaces") == Some(0) {
        return false;
    }
    // SAFETY: geteuid takes no arguments and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    read("/proc/sys/kernel/unprivileged_userns_clone") != Some(0)
        && read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").unwrap_or(0) == 0
}
