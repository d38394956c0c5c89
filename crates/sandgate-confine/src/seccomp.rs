//! The seccomp layer: a filter that hands every write-class system call to
//! the supervisor (`SECCOMP_RET_USER_NOTIF`), and the listener through which
//! the supervisor receives and answers them.
//!
//! Opens without a write flag, and every other system call, pass untouched:
//! reads and execution stay as fast as unconfined. So does an `openat`
//! marked by the preload library (see [`super::preload`]): the Landlock floor
//! alone decides it, and the library retries a refused one unmarked.
//!
//! This module contains `unsafe` code: installing the filter and the
//! listener's `ioctl`s, `poll`, and reading the caller's memory
//! (`process_vm_readv`).

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};

use sandgate_sandbox::bpf::{
    arg_high, arg_low, jump, stmt, ARCH, AUDIT_ARCH_X86_64, JEQ_K, JGE_K, JSET_K, LD_W_ABS, NR,
    RET_ALLOW, RET_K, RET_USER_NOTIF, X32_SYSCALL_BIT,
};

use super::preload::MARKER;

pub(super) const SET_MODE_FILTER: libc::c_uint = 1;
const FILTER_FLAG_NEW_LISTENER: libc::c_ulong = 1 << 3;
const USER_NOTIF_FLAG_CONTINUE: u32 = 1;
const ADDFD_FLAG_SEND: u32 = 1 << 1;

const IOCTL_NOTIF_RECV: libc::c_ulong = 0xc050_2100;
const IOCTL_NOTIF_SEND: libc::c_ulong = 0xc018_2101;
const IOCTL_NOTIF_ID_VALID: libc::c_ulong = 0x4008_2102;
const IOCTL_NOTIF_ADDFD: libc::c_ulong = 0x4018_2103;
const IOCTL_NOTIF_SET_FLAGS: libc::c_ulong = 0x4008_2104;
/// `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` (Linux 6.6): the notifying thread and
/// the supervisor wake each other on the waker's CPU.
const USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;

/// Open flags that make an open a write.
pub const WRITE_OPEN_FLAGS: u32 =
    (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC) as u32;

/// System calls always handed to the supervisor (x86-64 numbers).
pub const NOTIFIED: &[libc::c_long] = &[
    libc::SYS_creat,
    libc::SYS_openat2,
    libc::SYS_mkdir,
    libc::SYS_mkdirat,
    libc::SYS_mknod,
    libc::SYS_mknodat,
    libc::SYS_unlink,
    libc::SYS_unlinkat,
    libc::SYS_rmdir,
    libc::SYS_rename,
    libc::SYS_renameat,
    libc::SYS_renameat2,
    libc::SYS_link,
    libc::SYS_linkat,
    libc::SYS_symlink,
    libc::SYS_symlinkat,
    libc::SYS_truncate,
];

/// System calls that change what the supervisor caches about a thread (see
/// [`super::callers`]): handed to it so that it forgets first.
pub const INVALIDATING: &[libc::c_long] = &[
    libc::SYS_chdir,
    libc::SYS_fchdir,
    libc::SYS_umask,
    libc::SYS_setuid,
    libc::SYS_setgid,
    libc::SYS_setreuid,
    libc::SYS_setregid,
    libc::SYS_setresuid,
    libc::SYS_setresgid,
    libc::SYS_setfsuid,
    libc::SYS_setfsgid,
    libc::SYS_setgroups,
    libc::SYS_capset,
];

/// Every system call the filter hands to the supervisor unconditionally.
fn notified() -> impl Iterator<Item = libc::c_long> {
    NOTIFIED
        .iter()
        .chain(super::metadata::SYSCALLS)
        .chain(INVALIDATING)
        .copied()
}

/// The BPF program. Foreign architectures and the x32 ABI pass through
/// (the Landlock floor still holds for them, they are just never asked about).
/// An `openat` whose sixth argument is [`MARKER`] passes too, whatever its
/// flags: only the preload library's fast path sets it, and a program that
/// forges it gets the Landlock floor's decision without being asked.
pub fn program() -> Vec<libc::sock_filter> {
    let n = notified().count();
    // Layout (indices): 0 ld arch, 1 jeq, 2 ld nr, 3 jge x32, 4 jeq open,
    // 5 jeq openat, 6..6+n jeq notified, 6+n ret allow, 7+n ld a1,
    // 8+n jset, 9+n ld a5 low, 10+n jeq marker low, 11+n ld a5 high,
    // 12+n jeq marker high, 13+n ld a2, 14+n jset, 15+n ret notif,
    // 16+n ret allow.
    let allow_end = 16 + n;
    let notify = 15 + n;
    let load_a1 = 7 + n;
    let openat = 9 + n;
    let load_a2 = 13 + n;
    let to = |from: usize, target: usize| target - from - 1;
    let mut prog = vec![
        stmt(LD_W_ABS, ARCH),
        jump(JEQ_K, AUDIT_ARCH_X86_64, 0, to(1, allow_end)),
        stmt(LD_W_ABS, NR),
        jump(JGE_K, X32_SYSCALL_BIT, to(3, allow_end), 0),
        jump(JEQ_K, libc::SYS_open as u32, to(4, load_a1), 0),
        jump(JEQ_K, libc::SYS_openat as u32, to(5, openat), 0),
    ];
    for (i, nr) in notified().enumerate() {
        prog.push(jump(JEQ_K, nr as u32, to(6 + i, notify), 0));
    }
    prog.push(stmt(RET_K, RET_ALLOW));
    prog.push(stmt(LD_W_ABS, arg_low(1)));
    prog.push(jump(
        JSET_K,
        WRITE_OPEN_FLAGS,
        to(8 + n, notify),
        to(8 + n, allow_end),
    ));
    prog.push(stmt(LD_W_ABS, arg_low(5)));
    prog.push(jump(JEQ_K, MARKER as u32, 0, to(10 + n, load_a2)));
    prog.push(stmt(LD_W_ABS, arg_high(5)));
    prog.push(jump(JEQ_K, (MARKER >> 32) as u32, to(12 + n, allow_end), 0));
    prog.push(stmt(LD_W_ABS, arg_low(2)));
    prog.push(jump(
        JSET_K,
        WRITE_OPEN_FLAGS,
        to(14 + n, notify),
        to(14 + n, allow_end),
    ));
    prog.push(stmt(RET_K, RET_USER_NOTIF));
    prog.push(stmt(RET_K, RET_ALLOW));
    prog
}

/// Installs `prog` on the calling thread (which must have `no_new_privs`)
/// and returns the listener descriptor. Runs in the forked child: raw
/// system calls only, no allocation.
pub fn install(prog: &[libc::sock_filter]) -> io::Result<RawFd> {
    let fd = load(prog, FILTER_FLAG_NEW_LISTENER)?;
    RawFd::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))
}

/// Installs `prog` in the calling thread with `flags` and returns what the
/// kernel returns (the listener with `FILTER_FLAG_NEW_LISTENER`, else 0).
/// One raw system call: safe between fork and exec.
pub(super) fn load(prog: &[libc::sock_filter], flags: libc::c_ulong) -> io::Result<libc::c_long> {
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

impl Listener {
    /// Wraps a listener descriptor received from the child, and asks the
    /// kernel for synchronous wake-ups (see [`Listener::sync_wake_up`]).
    pub fn new(fd: OwnedFd) -> Listener {
        let listener = Listener { fd };
        listener.sync_wake_up();
        listener
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

/// Runs `prog` on one system call as the kernel would (the instructions these
/// filters use), for the tests of this module and of the mount layer's filter.
#[cfg(test)]
pub(super) fn verdict(prog: &[libc::sock_filter], arch: u32, nr: i64, args: [u64; 6]) -> u32 {
    use sandgate_sandbox::bpf::AND_K;
    let mut data = Vec::with_capacity(64);
    data.extend_from_slice(&(nr as i32).to_le_bytes());
    data.extend_from_slice(&arch.to_le_bytes());
    data.extend_from_slice(&0u64.to_le_bytes()); // instruction pointer
    for arg in args {
        data.extend_from_slice(&arg.to_le_bytes());
    }
    let word = |at: u32| {
        let at = at as usize;
        u32::from_le_bytes(data[at..at + 4].try_into().unwrap())
    };
    let (mut pc, mut acc) = (0usize, 0u32);
    loop {
        let ins = prog[pc];
        let taken = match ins.code {
            LD_W_ABS => {
                acc = word(ins.k);
                pc += 1;
                continue;
            }
            RET_K => return ins.k,
            JEQ_K => acc == ins.k,
            JGE_K => acc >= ins.k,
            JSET_K => acc & ins.k != 0,
            AND_K => {
                acc &= ins.k;
                pc += 1;
                continue;
            }
            other => panic!("unexpected instruction {other:#x}"),
        };
        pc += 1 + usize::from(if taken { ins.jt } else { ins.jf });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_jumps_stay_inside() {
        let prog = program();
        // Jump offsets are 8 bits wide.
        assert!(prog.len() < 256);
        for (i, ins) in prog.iter().enumerate() {
            if ins.code == JEQ_K || ins.code == JGE_K || ins.code == JSET_K {
                assert!(i + 1 + (ins.jt as usize) < prog.len());
                assert!(i + 1 + (ins.jf as usize) < prog.len());
            }
        }
        assert_eq!(prog.last().map(|i| i.k), Some(RET_ALLOW));
    }

    /// Runs the filter on one system call, as the kernel's BPF interpreter
    /// does for the instructions the filter uses.

    #[test]
    fn marked_openat_passes_and_everything_else_is_as_before() {
        let prog = program();
        let x86 = AUDIT_ARCH_X86_64;
        let (lo, hi) = (MARKER & 0xffff_ffff, MARKER & !0xffff_ffff);
        let at = libc::AT_FDCWD as u64;
        let wr = (libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC) as u64;
        let rd = libc::O_RDONLY as u64;
        let openat = libc::SYS_openat;
        let table: &[(&str, u32, i64, [u64; 6], u32)] = &[
            (
                "marked write-open",
                x86,
                openat,
                [at, 0, wr, 0o666, 0, MARKER],
                RET_ALLOW,
            ),
            (
                "unmarked write-open",
                x86,
                openat,
                [at, 0, wr, 0o666, 0, 0],
                RET_USER_NOTIF,
            ),
            (
                "low half only",
                x86,
                openat,
                [at, 0, wr, 0, 0, lo],
                RET_USER_NOTIF,
            ),
            (
                "high half only",
                x86,
                openat,
                [at, 0, wr, 0, 0, hi],
                RET_USER_NOTIF,
            ),
            (
                "marker in arg 4",
                x86,
                openat,
                [at, 0, wr, 0, MARKER, 0],
                RET_USER_NOTIF,
            ),
            (
                "unmarked read-open",
                x86,
                openat,
                [at, 0, rd, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "marked read-open",
                x86,
                openat,
                [at, 0, rd, 0, 0, MARKER],
                RET_ALLOW,
            ),
            (
                "open for write",
                x86,
                libc::SYS_open,
                [0, wr, 0, 0, 0, 0],
                RET_USER_NOTIF,
            ),
            (
                "marked open (no fast path)",
                x86,
                libc::SYS_open,
                [0, wr, 0, 0, 0, MARKER],
                RET_USER_NOTIF,
            ),
            (
                "open for read",
                x86,
                libc::SYS_open,
                [0, rd, 0, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "marked openat2",
                x86,
                libc::SYS_openat2,
                [at, 0, 0, 0, 0, MARKER],
                RET_USER_NOTIF,
            ),
            (
                "marked mkdir",
                x86,
                libc::SYS_mkdir,
                [0, 0, 0, 0, 0, MARKER],
                RET_USER_NOTIF,
            ),
            ("unlinkat", x86, libc::SYS_unlinkat, [0; 6], RET_USER_NOTIF),
            ("chdir", x86, libc::SYS_chdir, [0; 6], RET_USER_NOTIF),
            ("read", x86, libc::SYS_read, [0; 6], RET_ALLOW),
            (
                "x32 openat",
                x86,
                openat | 0x4000_0000,
                [at, 0, wr, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "foreign arch",
                0x4000_0003,
                5,
                [0, wr, 0, 0, 0, 0],
                RET_ALLOW,
            ),
        ];
        for (name, arch, nr, args, want) in table {
            assert_eq!(verdict(&prog, *arch, *nr, *args), *want, "{name}");
        }
    }

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
}
