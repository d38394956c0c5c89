//! Starting the confined program: the child makes its mount namespace (with
//! the mount layer, see [`super::mounts`]), enters the Landlock ruleset and
//! installs the seccomp filter between `fork` and `exec`, then hands the
//! listener to the parent over a socket pair.
//!
//! This module contains `unsafe` code: the socket pair and descriptor passing
//! between child and parent, the `pre_exec` hook, the child's pidfd, signal
//! forwarding (`pthread_sigmask`, `sigwaitinfo`) and the umask.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

use super::landlock::{self, Ruleset};
use super::mounts::{self, Setup};
use super::seccomp::{self, Listener};

/// What the child sends instead of a listener when it could not make the
/// mount layer.
const NO_MOUNTS: u8 = b'M';

/// A started, confined program.
#[derive(Debug)]
pub struct Confined {
    /// The program.
    pub child: Child,
    /// The supervisor's end of its seccomp filter.
    pub listener: Listener,
}

fn socketpair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors the kernel writes.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Room for one `SCM_RIGHTS` message with one descriptor, aligned for `cmsghdr`.
type CmsgBuf = [u64; 4];

/// Sends `fd` over `sock`. Runs in the forked child: no allocation.
fn send_fd(sock: RawFd, fd: RawFd) -> io::Result<()> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut buf: CmsgBuf = [0; 4];
    // SAFETY: an all-zero msghdr is valid; every pointer set below refers to
    // live stack values, and the CMSG macros stay inside `buf`, which is large
    // enough for CMSG_SPACE(sizeof(int)).
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = buf.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
        if libc::sendmsg(sock, &msg, 0) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receives one descriptor from `sock`.
fn recv_fd(sock: RawFd) -> io::Result<OwnedFd> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut buf: CmsgBuf = [0; 4];
    // SAFETY: as in `send_fd`; the kernel writes at most `msg_controllen`
    // bytes into `buf`, and we read the descriptor only from a well-formed
    // SCM_RIGHTS header it produced.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = buf.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of::<CmsgBuf>();
        if libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC) < 0 {
            return Err(io::Error::last_os_error());
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(io::Error::other(
                "the program did not hand over its seccomp listener",
            ));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// Why [`spawn`] failed.
#[derive(Debug)]
pub enum SpawnError {
    /// The child could not make its mount namespace or a bind: nothing was
    /// started; the caller may plan again without the mount layer.
    Mounts(io::Error),
    /// Anything else.
    Start(io::Error),
}

impl From<io::Error> for SpawnError {
    fn from(e: io::Error) -> SpawnError {
        SpawnError::Start(e)
    }
}

/// Spawns `cmd` inside `ruleset` and the write filter, and with `mounts`
/// in its own mount namespace.
pub fn spawn(
    cmd: &mut Command,
    ruleset: &Ruleset,
    mounts: Option<Setup>,
) -> Result<Confined, SpawnError> {
    let (parent_sock, child_sock) = socketpair()?;
    let ruleset_fd = ruleset.raw_fd();
    let child_fd = child_sock.as_raw_fd();
    let prog = seccomp::program();
    // SAFETY: the closure runs between fork and exec. It only makes raw
    // system calls (unshare, open, write, mount, openat2, open_tree,
    // mount_setattr, move_mount, chdir, prctl, landlock_restrict_self,
    // seccomp, send, sendmsg, close) on values prepared before the fork, and
    // allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(setup) = &mounts {
                if let Err(e) = mounts::enter(setup) {
                    libc::send(child_fd, [NO_MOUNTS].as_ptr().cast(), 1, 0);
                    return Err(e);
                }
            }
            landlock::restrict_self(ruleset_fd)?;
            if let Some(setup) = &mounts {
                mounts::install_filter(setup)?;
            }
            let listener = seccomp::install(&prog)?;
            let sent = send_fd(child_fd, listener);
            libc::close(listener);
            sent
        });
    }
    let child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            // The child reported its failure before it ended: the message
            // is queued already.
            let mut tag = [0u8; 1];
            // SAFETY: `tag` has room for the one byte asked for.
            let got = unsafe {
                libc::recv(
                    parent_sock.as_raw_fd(),
                    tag.as_mut_ptr().cast(),
                    1,
                    libc::MSG_DONTWAIT,
                )
            };
            return Err(if got == 1 && tag[0] == NO_MOUNTS {
                SpawnError::Mounts(e)
            } else {
                SpawnError::Start(e)
            });
        }
    };
    drop(child_sock);
    let listener = recv_fd(parent_sock.as_raw_fd())?;
    Ok(Confined {
        child,
        listener: Listener::new(listener),
    })
}

/// Signals that end a program: passed on to it when another process sends
/// them to sandgate (see [`forward_signals`]).
pub const FORWARDED: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT];

fn forwarded_set() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set; sigaddset only writes into it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in FORWARDED {
            libc::sigaddset(&mut set, signal);
        }
        set
    }
}

/// Blocks the [`FORWARDED`] signals in the calling thread, so that one sent
/// between starting `cmd` and [`forward_signals`] waits for the forwarding
/// thread instead of ending sandgate and orphaning the program, and has
/// `cmd` unblock them in its child before `exec` (a child inherits the
/// mask). Call before spawning `cmd` and before starting any thread.
pub fn hold_forwarded(cmd: &mut Command) -> io::Result<()> {
    let set = forwarded_set();
    // SAFETY: the closure runs between fork and exec and only makes one
    // async-signal-safe call on a set prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let rc = libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            Ok(())
        });
    }
    // SAFETY: `set` is an initialised sigset; the old mask is not wanted.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Passes [`FORWARDED`] signals that another process sends to sandgate
/// (`kill`, a service manager, a parent shell) on to `child`, so that it can
/// end on its own terms while the supervisor still answers its last writes;
/// sandgate itself does not end from them, and then exits with the
/// program's status.
///
/// The same signals raised by the terminal (Ctrl-C, Ctrl-\, hang-up) are not
/// passed on: they already reach the program, which shares the terminal's
/// foreground process group. Call right after spawning and before starting
/// any thread (threads inherit the blocked set): the signals are blocked in
/// the calling thread and taken by one thread that forwards them. The child
/// is addressed by a pidfd, so a signal can never reach another process
/// that reuses its id once it has been reaped.
pub fn forward_signals(child: &Child) -> io::Result<()> {
    // SAFETY: integer arguments only.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id(), 0) };
    if pidfd < 0 {
        return Err(io::Error::last_os_error());
    }
    let pidfd = RawFd::try_from(pidfd).map_err(io::Error::other)?;
    // SAFETY: the kernel just returned this descriptor; we own it.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    let set = forwarded_set();
    for signal in FORWARDED {
        // An ignored signal is discarded before it can be waited for: take
        // the default disposition (never reached while the signal is blocked).
        // SAFETY: installing SIG_DFL has no handler code to be unsafe in.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
        }
    }
    // SAFETY: `set` is an initialised sigset; the old mask is not wanted.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    std::thread::Builder::new()
        .name("sandgate-signals".into())
        .spawn(move || loop {
            // SAFETY: an all-zero siginfo is a valid buffer for the kernel to fill.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: `set` and `info` are live; the kernel writes `info`.
            let signal = unsafe { libc::sigwaitinfo(&set, &mut info) };
            if signal < 0 {
                continue;
            }
            // SI_USER, SI_QUEUE, SI_TKILL (<= 0): sent by a process. The
            // terminal's signals are SI_KERNEL and reached the program already.
            if info.si_code > 0 {
                continue;
            }
            // SAFETY: an open pidfd, a signal number, no siginfo. A failure
            // means the program is gone: nothing to pass on.
            unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    pidfd.as_raw_fd(),
                    signal,
                    std::ptr::null::<libc::siginfo_t>(),
                    0u32,
                );
            }
        })?;
    Ok(())
}

/// Sets this process's umask to 0, so that files the supervisor creates for
/// the program get exactly the mode computed from the program's own umask.
/// Returns the previous umask.
pub fn clear_umask() -> u32 {
    // SAFETY: umask cannot fail and touches no memory.
    unsafe { libc::umask(0) as u32 }
}
