//! Acting for a supervised caller: a copy of one of its descriptors
//! (`pidfd_open`, `pidfd_getfd`), a path opened `O_PATH` beneath a directory
//! (`openat2` with `RESOLVE_*`), and a socket bound or connected with the
//! address bytes as copied, on a thread with its own file-system context.
//! Exec isolation's supervisor (the `supervise` and `protect` modules)
//! and `sandgate run`'s use these to perform a call on the caller's behalf.
//!
//! This module contains `unsafe` code: `pidfd_open`, `pidfd_getfd`,
//! `unshare(CLONE_FS)`, `fchdir`, `umask`, and `bind`/`connect` on
//! descriptors it owns.

#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::beneath::{self, owned};

/// `PIDFD_THREAD` (Linux 6.9): a pidfd for a thread that is not the leader.
const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;
/// `RESOLVE_NO_MAGICLINKS`.
pub(crate) const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
/// `RESOLVE_IN_ROOT`.
pub(crate) const RESOLVE_IN_ROOT: u64 = 0x10;
/// `openat2(dir, path, O_PATH | O_CLOEXEC, resolve)`, following symlinks.
pub(crate) fn open_path(dir: RawFd, path: &Path, resolve: u64) -> io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    beneath::raw_openat2(dir, &c, libc::O_PATH, 0, resolve)
}

/// A pidfd for thread `tid`: `PIDFD_THREAD` where the kernel has it, else
/// one for its thread group (descriptors are shared by the whole group).
pub(crate) fn pidfd_open(tid: u32) -> io::Result<OwnedFd> {
    // SAFETY: integer arguments only.
    let rc = unsafe { libc::syscall(libc::SYS_pidfd_open, tid, PIDFD_THREAD) };
    if rc >= 0 {
        return owned(rc);
    }
    let status = std::fs::read_to_string(format!("/proc/{tid}/status"))?;
    let tgid: u32 = status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: integer arguments only.
    owned(unsafe { libc::syscall(libc::SYS_pidfd_open, tgid, 0) })
}

/// A copy of descriptor `fd` of thread `tid`'s process.
pub fn take_fd(tid: u32, fd: i32) -> io::Result<OwnedFd> {
    pidfd_getfd(&pidfd_open(tid)?, fd)
}

/// A copy of descriptor `fd` of the process behind `pidfd`.
pub(crate) fn pidfd_getfd(pidfd: &OwnedFd, fd: i32) -> io::Result<OwnedFd> {
    // SAFETY: integer arguments only.
    owned(unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0u32) })
}

/// Binds UNIX socket descriptor `fd` of thread `tid` to `name` in the
/// directory `dir`, for a supervisor that makes names on a program's
/// behalf (exec isolation's, and `sandgate run`'s where Landlock gives no
/// rule). The
/// socket is taken with `pidfd_getfd`, so the program's own socket ends up
/// bound. The bind runs on a thread of its own with its own file-system
/// context: its working directory is `dir` (by descriptor, never a path
/// the program could change), so `name` is bound as given, and its umask
/// is the program's, which gives the socket file its mode. `Err` is the
/// errno.
pub fn bind_for(
    tid: u32,
    fd: i32,
    dir: std::os::fd::BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    umask: u32,
) -> Result<(), i32> {
    let sock = take_fd(tid, fd).map_err(|e| e.raw_os_error().unwrap_or(libc::EBADF))?;
    let mut address = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    address.extend_from_slice(name.as_bytes());
    address.push(0);
    if address.len() > std::mem::size_of::<libc::sockaddr_un>() {
        return Err(libc::ENAMETOOLONG);
    }
    let dir = dir.as_raw_fd();
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let errno = |e: io::Error| e.raw_os_error().unwrap_or(libc::EIO);
                own_fs_context().map_err(errno)?;
                // SAFETY: integer argument only; changes this thread's own
                // working directory (its file-system context is its own, see
                // above). `dir` stays open for the whole call.
                if unsafe { libc::fchdir(dir) } != 0 {
                    return Err(errno(io::Error::last_os_error()));
                }
                // SAFETY: integer argument only; this thread's own umask.
                unsafe { libc::umask(umask & 0o777) };
                raw_address_call(sock.as_raw_fd(), &address, libc::bind)
            })
            .join()
            .unwrap_or(Err(libc::EIO))
    })
}

/// `connect(sock, addr)` with the address bytes as given; `Err` is its
/// errno.
pub fn raw_connect(sock: RawFd, addr: &[u8]) -> Result<(), i32> {
    raw_address_call(sock, addr, libc::connect)
}

/// A system call that takes a socket and an address (`connect`, `bind`),
/// made with the address bytes as given; `Err` is its errno.
pub(crate) fn raw_address_call(
    sock: RawFd,
    addr: &[u8],
    call: unsafe extern "C" fn(libc::c_int, *const libc::sockaddr, libc::socklen_t) -> libc::c_int,
) -> Result<(), i32> {
    let len = libc::socklen_t::try_from(addr.len()).map_err(|_| libc::EINVAL)?;
    // The kernel copies the address; a `sockaddr_storage` keeps it aligned.
    // SAFETY: an all-zero sockaddr_storage is valid.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let room = std::mem::size_of::<libc::sockaddr_storage>();
    if addr.len() > room {
        return Err(libc::EINVAL);
    }
    // SAFETY: `storage` has room for `addr.len()` bytes (checked above) and
    // the two do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(
            addr.as_ptr(),
            (&mut storage as *mut libc::sockaddr_storage).cast::<u8>(),
            addr.len(),
        );
    }
    // SAFETY: `storage` holds `len` initialised bytes of address, and
    // `call` is `connect` or `bind`, which only read it.
    let rc = unsafe {
        call(
            sock,
            (&storage as *const libc::sockaddr_storage).cast(),
            len,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::ECONNREFUSED))
    }
}

/// Gives the calling thread its own umask and working directory
/// (`unshare(CLONE_FS)`), so that a thread that makes names for a command
/// (`protect::answer`, [`bind_for`]) can take on the command's umask
/// without changing the rest of the process. Call once per thread before
/// its first such call.
pub fn own_fs_context() -> io::Result<()> {
    // SAFETY: integer argument only; affects the calling thread only.
    if unsafe { libc::unshare(libc::CLONE_FS) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
