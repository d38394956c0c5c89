//! Seccomp user notification, shared by `sandgate run`'s supervisor and exec
//! isolation's: installing a filter that hands system calls to a listener,
//! passing the listener from the forked child to the parent, receiving and
//! answering notifications, reading the caller's memory, and passing signals
//! on to the supervised program.
//!
//! This module contains `unsafe` code: the `seccomp` system call, the
//! listener's `ioctl`s and `poll`, `process_vm_readv`, the socket pair and
//! descriptor passing, and signal forwarding (`pthread_sigmask`,
//! `sigwaitinfo`, `pidfd_send_signal`).

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

/// `SECCOMP_SET_MODE_FILTER`.
pub const SET_MODE_FILTER: libc::c_uint = 1;
/// `SECCOMP_FILTER_FLAG_NEW_LISTENER`.
pub const FILTER_FLAG_NEW_LISTENER: libc::c_ulong = 1 << 3;
/// `SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV` (Linux 5.19): once the supervisor
/// has received a call, only a fatal signal interrupts the caller's wait.
pub const FILTER_FLAG_WAIT_KILLABLE_RECV: libc::c_ulong = 1 << 5;
const USER_NOTIF_FLAG_CONTINUE: u32 = 1;
const ADDFD_FLAG_SETFD: u32 = 1;
const ADDFD_FLAG_SEND: u32 = 1 << 1;

const IOCTL_NOTIF_RECV: libc::c_ulong = 0xc050_2100;
const IOCTL_NOTIF_SEND: libc::c_ulong = 0xc018_2101;
const IOCTL_NOTIF_ID_VALID: libc::c_ulong = 0x4008_2102;
const IOCTL_NOTIF_ADDFD: libc::c_ulong = 0x4018_2103;
const IOCTL_NOTIF_SET_FLAGS: libc::c_ulong = 0x4008_2104;
/// `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` (Linux 6.6): the notifying thread and
/// the supervisor wake each other on the waker's CPU.
const USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;

/// Installs `prog` on the calling thread (which must have `no_new_privs`)
/// and returns the listener descriptor. Runs in the forked child: raw
/// system calls only, no allocation.
///
/// Where the kernel has it, a call the supervisor holds (a question to the
/// person) waits killably: a stop signal, or any other that is not fatal,
/// does not abandon it (the caller would make the call again, and the
/// person would be asked twice). Older kernels refuse the flag, and the
/// filter is installed without it.
pub fn install(prog: &[libc::sock_filter]) -> io::Result<RawFd> {
    let fd = match load(
        prog,
        FILTER_FLAG_NEW_LISTENER | FILTER_FLAG_WAIT_KILLABLE_RECV,
    ) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => load(prog, FILTER_FLAG_NEW_LISTENER)?,
        other => other?,
    };
    RawFd::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))
}

/// Installs `prog` in the calling thread with `flags` and returns what the
/// kernel returns (the listener with `FILTER_FLAG_NEW_LISTENER`, else 0).
/// One raw system call: safe between fork and exec.
pub fn load(prog: &[libc::sock_filter], flags: libc::c_ulong) -> io::Result<libc::c_long> {
    let fprog = libc::sock_fprog {
        len: prog.len() as libc::c_ushort,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `fprog` points at `prog`, which outlives the call; the kernel
    // copies the program.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SET_MODE_FILTER,
            flags,
            &fprog as *const libc::sock_fprog,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc)
}

/// One system call waiting for the supervisor.
#[derive(Debug, Clone, Copy)]
pub struct Notif {
    /// The notification id (answer with it).
    pub id: u64,
    /// The calling thread.
    pub pid: u32,
    /// The system call number.
    pub nr: i64,
    /// The raw arguments.
    pub args: [u64; 6],
}

/// The supervisor's end of the filter.
#[derive(Debug)]
pub struct Listener {
    fd: OwnedFd,
    /// A notification received and handed back ([`Listener::hold`]), which
    /// [`Listener::recv`] returns first.
    held: std::sync::Mutex<Option<Notif>>,
}

/// What [`Listener::wait`] saw.
#[derive(Debug, PartialEq, Eq)]
pub enum Ready {
    /// A notification is waiting.
    Notification,
    /// Nothing within the timeout.
    Idle,
    /// No process uses the filter any more.
    Gone,
}

/// The named pipe at `name` in `dir`, held `O_PATH`, when an open of it
/// with `flags` could wait (no `O_NONBLOCK`: for the other end to open).
/// `Ok(None)` for anything else, or nothing, at that name. With `O_CREAT`
/// and `O_EXCL` an existing pipe is `EEXIST`, as the kernel answers.
pub fn fifo_that_waits(
    dir: BorrowedFd<'_>,
    name: &std::ffi::CStr,
    flags: i32,
) -> io::Result<Option<OwnedFd>> {
    if flags & libc::O_NONBLOCK != 0 {
        return Ok(None);
    }
    // SAFETY: `name` is NUL-terminated and outlives the call.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Ok(None);
    }
    // SAFETY: the kernel just returned this descriptor; we own it.
    let held = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: an all-zero `stat` is valid, and the kernel fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a live descriptor and a live `stat`.
    if unsafe { libc::fstat(held.as_raw_fd(), &mut st) } != 0
        || st.st_mode & libc::S_IFMT != libc::S_IFIFO
    {
        return Ok(None);
    }
    if flags & (libc::O_CREAT | libc::O_EXCL) == libc::O_CREAT | libc::O_EXCL {
        return Err(io::Error::from_raw_os_error(libc::EEXIST));
    }
    Ok(Some(held))
}

/// Opens the named pipe `fifo` (held `O_PATH`, see [`fifo_that_waits`])
/// with `flags` on a thread of its own, which answers notification `id`
/// with the descriptor once the other end has opened it too, or with the
/// error. The supervisor goes on with other calls meanwhile, so a program
/// that opens the other end later (or never) holds only itself.
pub fn open_fifo_later(listener: &Listener, id: u64, fifo: OwnedFd, flags: i32) -> io::Result<()> {
    let listener = Listener {
        fd: listener.fd.try_clone()?,
        held: std::sync::Mutex::new(None),
    };
    let again = std::ffi::CString::new(format!("/proc/self/fd/{}", fifo.as_raw_fd()))
        .map_err(io::Error::other)?;
    let cloexec = flags & libc::O_CLOEXEC != 0;
    let flags = (flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC)) | libc::O_CLOEXEC;
    std::thread::Builder::new()
        .name("sandgate-fifo".into())
        .spawn(move || {
            // SAFETY: `again` is NUL-terminated; it names the very pipe
            // `fifo` holds, which stays open until the open returns.
            let fd = unsafe { libc::open(again.as_ptr(), flags) };
            drop(fifo);
            if fd < 0 {
                let errno = io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EACCES);
                listener.fail(id, errno);
                return;
            }
            // SAFETY: the kernel just returned this descriptor; we own it.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            if listener.send_fd(id, fd.as_fd(), cloexec).is_err() {
                listener.fail(id, libc::EMFILE);
            }
        })?;
    Ok(())
}

impl Listener {
    /// Wraps a listener descriptor received from the child, and asks the
    /// kernel for synchronous wake-ups (see [`Listener::sync_wake_up`]).
    pub fn new(fd: OwnedFd) -> Listener {
        let listener = Listener {
            fd,
            held: std::sync::Mutex::new(None),
        };
        listener.sync_wake_up();
        listener
    }

    /// Hands back `notif`, received but not answered: the next
    /// [`Listener::recv`] returns it (and [`Listener::wait`] sees it).
    pub fn hold(&self, notif: Notif) {
        *self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(notif);
    }

    fn take_held(&self) -> Option<Notif> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    /// Asks the kernel to hand each notification to the supervisor, and
    /// each answer back to the program, on the CPU of the thread that
    /// wakes the other (`SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`, Linux 6.6):
    /// the program waits for the answer anyway, so its CPU is free, and a
    /// cross-CPU wake-up is most of a round trip's cost. Returns whether the
    /// kernel took it; an older kernel refuses it, and then notifications
    /// simply wake the supervisor wherever the scheduler puts it.
    pub fn sync_wake_up(&self) -> bool {
        // SAFETY: the ioctl takes a flag word by value and touches no memory.
        let rc = unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                IOCTL_NOTIF_SET_FLAGS,
                USER_NOTIF_FD_SYNC_WAKE_UP,
            )
        };
        rc == 0
    }

    /// Waits up to `timeout_ms` for a notification.
    pub fn wait(&self, timeout_ms: i32) -> io::Result<Ready> {
        if self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some()
        {
            return Ok(Ready::Notification);
        }
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd, count 1.
        let rc = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        if rc < 0 {
            let err = io::Error::last_os_error();
            return if err.kind() == io::ErrorKind::Interrupted {
                Ok(Ready::Idle)
            } else {
                Err(err)
            };
        }
        if pfd.revents & libc::POLLIN != 0 {
            Ok(Ready::Notification)
        } else if pfd.revents & (libc::POLLHUP | libc::POLLERR) != 0 {
            Ok(Ready::Gone)
        } else {
            Ok(Ready::Idle)
        }
    }

    /// Receives one notification (blocks until one arrives).
    pub fn recv(&self) -> io::Result<Notif> {
        if let Some(notif) = self.take_held() {
            return Ok(notif);
        }
        // SAFETY: an all-zero seccomp_notif is valid, and the kernel requires
        // the buffer to be zeroed.
        let mut raw: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: `raw` is a live seccomp_notif the kernel fills in.
        let rc = unsafe { libc::ioctl(self.fd.as_raw_fd(), IOCTL_NOTIF_RECV, &mut raw) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Notif {
            id: raw.id,
            pid: raw.pid,
            nr: i64::from(raw.data.nr),
            args: raw.data.args,
        })
    }

    /// Whether the notification is still pending (its thread still waits).
    pub fn id_valid(&self, id: u64) -> bool {
        let mut id = id;
        // SAFETY: the kernel reads one u64.
        unsafe { libc::ioctl(self.fd.as_raw_fd(), IOCTL_NOTIF_ID_VALID, &mut id) == 0 }
    }

    fn send(&self, id: u64, val: i64, error: i32, flags: u32) {
        let mut resp = libc::seccomp_notif_resp {
            id,
            val,
            error,
            flags,
        };
        // SAFETY: the kernel reads a live seccomp_notif_resp. A failure means
        // the caller is gone (killed or interrupted): nothing left to answer.
        unsafe {
            libc::ioctl(self.fd.as_raw_fd(), IOCTL_NOTIF_SEND, &mut resp);
        }
    }

    /// Lets the kernel run the system call (the Landlock floor still applies).
    pub fn allow(&self, id: u64) {
        self.send(id, 0, 0, USER_NOTIF_FLAG_CONTINUE);
    }

    /// Fails the system call with `errno`.
    pub fn fail(&self, id: u64, errno: i32) {
        self.send(id, 0, -errno, 0);
    }

    /// Completes the system call with return value `val`.
    pub fn succeed(&self, id: u64, val: i64) {
        self.send(id, val, 0, 0);
    }

    /// Installs `fd` in the caller and completes its system call with the new
    /// descriptor number.
    pub fn send_fd(&self, id: u64, fd: BorrowedFd<'_>, cloexec: bool) -> io::Result<()> {
        let mut addfd = libc::seccomp_notif_addfd {
            id,
            flags: ADDFD_FLAG_SEND,
            srcfd: fd.as_raw_fd() as u32,
            newfd: 0,
            newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
        };
        // SAFETY: the kernel reads a live seccomp_notif_addfd.
        let rc = unsafe { libc::ioctl(self.fd.as_raw_fd(), IOCTL_NOTIF_ADDFD, &mut addfd) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Installs `fd` in the caller at descriptor number `at`, replacing what
    /// was there as `dup2` would (`SECCOMP_ADDFD_FLAG_SETFD`); the system
    /// call is still to be answered.
    pub fn replace_fd(
        &self,
        id: u64,
        fd: BorrowedFd<'_>,
        at: i32,
        cloexec: bool,
    ) -> io::Result<()> {
        let mut addfd = libc::seccomp_notif_addfd {
            id,
            flags: ADDFD_FLAG_SETFD,
            srcfd: fd.as_raw_fd() as u32,
            newfd: at as u32,
            newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
        };
        // SAFETY: the kernel reads a live seccomp_notif_addfd.
        let rc = unsafe { libc::ioctl(self.fd.as_raw_fd(), IOCTL_NOTIF_ADDFD, &mut addfd) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Reads `len` bytes at `addr` of process `pid`.
pub fn read_memory(pid: u32, addr: u64, buf: &mut [u8]) -> io::Result<usize> {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: `local` describes our own live buffer; the remote address is
    // only read by the kernel, which checks it.
    let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// Reads a NUL-terminated string (at most `PATH_MAX` bytes) at `addr` of `pid`.
pub fn read_cstring(pid: u32, addr: u64) -> io::Result<Vec<u8>> {
    const PAGE: u64 = 4096;
    let mut out = Vec::new();
    let mut cursor = addr;
    while out.len() < libc::PATH_MAX as usize {
        // Never read across a page boundary in one go: the next page may be unmapped.
        let chunk = (PAGE - cursor % PAGE) as usize;
        let mut page = [0u8; PAGE as usize];
        let buf = &mut page[..chunk];
        let n = read_memory(pid, cursor, buf)?;
        if n == 0 {
            return Err(io::Error::from_raw_os_error(libc::EFAULT));
        }
        if let Some(end) = buf[..n].iter().position(|b| *b == 0) {
            out.extend_from_slice(&buf[..end]);
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
        cursor += n as u64;
    }
    Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG))
}

/// A close-on-exec `AF_UNIX` `SOCK_SEQPACKET` pair: the parent's end and the child's.
pub fn socketpair() -> io::Result<(OwnedFd, OwnedFd)> {
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
pub fn send_fd(sock: RawFd, fd: RawFd) -> io::Result<()> {
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

/// Sends the one byte `tag` over `sock`, with no descriptor: what
/// [`recv_fd_or_tag`] returns as `Err(tag)` (`0` is what it returns at the
/// end of the stream).
pub fn send_tag(sock: RawFd, tag: u8) -> io::Result<()> {
    // SAFETY: one live byte on the stack, of the length given.
    let sent = unsafe { libc::send(sock, (&tag as *const u8).cast(), 1, libc::MSG_NOSIGNAL) };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Receives one descriptor from `sock`.
pub fn recv_fd(sock: RawFd) -> io::Result<OwnedFd> {
    recv_fd_or_tag(sock)?
        .map_err(|_| io::Error::other("the program did not hand over its seccomp listener"))
}

/// Receives one descriptor from `sock`, or the one-byte tag the child sent
/// instead (`Err(tag)`; 0 when the peer closed without sending).
pub fn recv_fd_or_tag(sock: RawFd) -> io::Result<Result<OwnedFd, u8>> {
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
        let got = libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC);
        if got < 0 {
            return Err(io::Error::last_os_error());
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Ok(Err(if got == 0 { 0 } else { byte[0] }));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
        Ok(Ok(OwnedFd::from_raw_fd(fd)))
    }
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

/// Makes this process the reaper of the orphans of its descendants
/// (`PR_SET_CHILD_SUBREAPER`): a process the program starts that outlives
/// its parent (a daemon that forks and lets the parent exit) becomes this
/// process's child instead of init's, so it stays below sandgate in the
/// process tree, where [`reap_orphans`] collects it when it ends. Call before
/// the program starts.
pub fn adopt_orphans() -> io::Result<()> {
    // SAFETY: integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Collects, on a thread of its own, every child of this process that ends
/// but `program` (the caller waits for that one itself), until `program`
/// has ended: the orphans [`adopt_orphans`] gave it.
pub fn reap_orphans(program: u32) -> io::Result<()> {
    std::thread::Builder::new()
        .name("sandgate-reaper".into())
        .stack_size(64 * 1024)
        .spawn(move || loop {
            // SAFETY: an all-zero siginfo is a valid buffer for the kernel to fill.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: a live siginfo; WNOWAIT leaves the child waitable, so
            // the program's own status stays for its waiter.
            let rc =
                unsafe { libc::waitid(libc::P_ALL, 0, &mut info, libc::WEXITED | libc::WNOWAIT) };
            if rc != 0 {
                if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return;
            }
            // SAFETY: `waitid` filled `info` for an ended child.
            let pid = unsafe { info.si_pid() };
            if u32::try_from(pid).ok() == Some(program) {
                return;
            }
            // SAFETY: integer arguments only; `pid` is an ended child of
            // this process, which nobody else waits for.
            unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        })?;
    Ok(())
}

/// What the child sends instead of a listener when another supervisor
/// (`sandgate run`'s) holds the one a process may have.
pub const OUTER_SUPERVISOR: u8 = b'B';

/// The child's half: the filter and its end of the socket pair. Made
/// before the fork; [`ChildHalf::install`] runs between `fork` and `exec`.
#[derive(Debug)]
pub struct ChildHalf {
    program: Vec<libc::sock_filter>,
    sock: OwnedFd,
    /// Whether the command may start under another supervisor instead.
    optional: bool,
}

impl ChildHalf {
    /// The half that installs `program` and hands its listener over on
    /// `sock`; `optional` when the command may start under another
    /// supervisor instead (it then sends [`OUTER_SUPERVISOR`]).
    pub fn new(program: Vec<libc::sock_filter>, sock: OwnedFd, optional: bool) -> ChildHalf {
        ChildHalf {
            program,
            sock,
            optional,
        }
    }

    /// Installs the filter (the caller has set `no_new_privs`) and hands
    /// the listener to the parent. Raw system calls only, no allocation.
    pub fn install(&self) -> io::Result<()> {
        let listener = match install(&self.program) {
            Ok(fd) => fd,
            Err(e) if self.optional && e.raw_os_error() == Some(libc::EBUSY) => {
                // SAFETY: one byte from a live buffer on our own socket.
                let sent = unsafe {
                    libc::send(
                        self.sock.as_raw_fd(),
                        [OUTER_SUPERVISOR].as_ptr().cast(),
                        1,
                        0,
                    )
                };
                return if sent == 1 {
                    Ok(())
                } else {
                    Err(io::Error::last_os_error())
                };
            }
            Err(e) => return Err(e),
        };
        let sent = send_fd(self.sock.as_raw_fd(), listener);
        // SAFETY: `listener` was just returned by the kernel and is ours;
        // the parent holds its own copy once `send_fd` succeeded.
        unsafe { libc::close(listener) };
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioctl_numbers_match_the_kernel_headers() {
        assert_eq!(
            IOCTL_NOTIF_RECV,
            libc::SECCOMP_IOCTL_NOTIF_RECV as libc::c_ulong
        );
        assert_eq!(
            IOCTL_NOTIF_SEND,
            libc::SECCOMP_IOCTL_NOTIF_SEND as libc::c_ulong
        );
        assert_eq!(
            IOCTL_NOTIF_ID_VALID,
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID as libc::c_ulong
        );
        assert_eq!(
            IOCTL_NOTIF_ADDFD,
            libc::SECCOMP_IOCTL_NOTIF_ADDFD as libc::c_ulong
        );
        assert_eq!(
            IOCTL_NOTIF_SET_FLAGS,
            libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS as libc::c_ulong
        );
    }

    #[test]
    fn a_descriptor_crosses_the_pair() {
        let (parent, child) = socketpair().unwrap();
        let file = std::fs::File::open("/dev/null").unwrap();
        send_fd(child.as_raw_fd(), file.as_raw_fd()).unwrap();
        let got = recv_fd(parent.as_raw_fd()).unwrap();
        let a = std::fs::metadata("/dev/null").unwrap();
        let b = std::fs::File::from(got).metadata().unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()));
    }
}
