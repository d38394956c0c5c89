//! Starting the confined program: the child enters the Landlock ruleset and
//! installs the seccomp filter between `fork` and `exec`, then hands the
//! listener to the parent over a socket pair.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

use super::landlock::{self, Ruleset};
use super::seccomp::{self, Listener};

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

/// Spawns `cmd` inside `ruleset` and the write filter.
pub fn spawn(cmd: &mut Command, ruleset: &Ruleset) -> io::Result<Confined> {
    let (parent_sock, child_sock) = socketpair()?;
    let ruleset_fd = ruleset.raw_fd();
    let child_fd = child_sock.as_raw_fd();
    let prog = seccomp::program();
    // SAFETY: the closure runs between fork and exec. It only makes raw
    // system calls (prctl, landlock_restrict_self, seccomp, sendmsg, close)
    // on values prepared before the fork, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            landlock::restrict_self(ruleset_fd)?;
            let listener = seccomp::install(&prog)?;
            let sent = send_fd(child_fd, listener);
            libc::close(listener);
            sent
        });
    }
    let child = cmd.spawn()?;
    drop(child_sock);
    let listener = recv_fd(parent_sock.as_raw_fd())?;
    Ok(Confined {
        child,
        listener: Listener::new(listener),
    })
}

/// Makes this process ignore the terminal's interrupt and quit keys: they
/// reach the program (same process group), and the supervisor must outlive
/// it to answer its last writes. Call after spawning, so the program keeps
/// the default dispositions.
pub fn ignore_terminal_signals() {
    for signal in [libc::SIGINT, libc::SIGQUIT] {
        // SAFETY: installing SIG_IGN has no handler code to be unsafe in.
        unsafe {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
}

/// Sets this process's umask to 0, so that files the supervisor creates for
/// the program get exactly the mode computed from the program's own umask.
/// Returns the previous umask.
pub fn clear_umask() -> u32 {
    // SAFETY: umask cannot fail and touches no memory.
    unsafe { libc::umask(0) as u32 }
}
