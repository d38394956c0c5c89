//! Starting the confined program: the child makes its mount namespace (with
//! the mount layer, see [`super::mounts`]), enters the Landlock ruleset and
//! installs the seccomp filter between `fork` and `exec`, then hands the
//! listener to the parent over a socket pair.
//!
//! The socket pair, the descriptor passing and signal forwarding are
//! [`sandgate_sandbox::notify`]'s. This module contains `unsafe` code: the
//! `pre_exec` hook, reading the child's failure tag, and the umask.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

use super::landlock::{self, Ruleset};
use super::mounts::{self, Setup};
use super::seccomp::{self, Listener};

pub use sandgate_sandbox::notify::{
    adopt_orphans, forward_signals, hold_forwarded, reap_orphans, FORWARDED,
};
use sandgate_sandbox::notify::{send_fd, socketpair};

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

/// The capabilities a program confined by `sandgate run` loses (root's,
/// or any it was given), since they act around Landlock and the
/// supervisor, which judge paths: `CAP_DAC_READ_SEARCH` (files opened by
/// handle), `CAP_LINUX_IMMUTABLE` (`chattr +i` through a descriptor opened
/// to read), `CAP_NET_ADMIN` (the host's interfaces, routes and firewall),
/// `CAP_IPC_OWNER` (other processes' shared memory), `CAP_SYS_MODULE`
/// (kernel modules), `CAP_SYS_RAWIO`, `CAP_SYS_PACCT`, `CAP_SYS_ADMIN`
/// (`bpf`, `sethostname`, `swapon`, mount namespaces of its own, …),
/// `CAP_SYS_BOOT` (`reboot`, `kexec`), `CAP_SYS_TIME`, `CAP_SYS_TTY_CONFIG`,
/// `CAP_AUDIT_CONTROL`, `CAP_MAC_OVERRIDE`, `CAP_MAC_ADMIN`, `CAP_SYSLOG`,
/// `CAP_WAKE_ALARM`, `CAP_BLOCK_SUSPEND`, `CAP_PERFMON` and `CAP_BPF`. What
/// installing, unpacking and building as root need stays: `CAP_CHOWN`,
/// `CAP_DAC_OVERRIDE`, `CAP_FOWNER`, `CAP_FSETID`, `CAP_SETUID`,
/// `CAP_SETGID`, `CAP_KILL` (signals stay inside, by Landlock), …
pub const AROUND_CONFINEMENT: &[u32] = &[
    2, 9, 12, 15, 16, 17, 20, 21, 22, 25, 26, 30, 32, 33, 34, 35, 36, 38, 39,
];

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
    let unjudged = seccomp::unjudged_filter();
    let lineage = seccomp::lineage_filter();
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
            sandgate_sandbox::drop_capabilities_in(AROUND_CONFINEMENT)?;
            if let Some(setup) = &mounts {
                mounts::install_filter(setup)?;
            }
            seccomp::load(&unjudged, 0)?;
            seccomp::load(&lineage, 0)?;
            let listener = seccomp::install(&prog)?;
            let sent = send_fd(child_fd, listener);
            libc::close(listener);
            sent
        });
    }
    // `spawn` returns once the program's `exec` has run, and the filter
    // hands that `exec` to the supervisor: it is answered here, on a thread
    // of its own, until then (see `program_exec`).
    let sock = parent_sock.as_raw_fd();
    let spawned = std::sync::atomic::AtomicBool::new(false);
    let (child, got) = std::thread::scope(|scope| {
        let helper = scope.spawn(|| program_exec(sock, &spawned));
        let child = cmd.spawn();
        spawned.store(true, std::sync::atomic::Ordering::SeqCst);
        let got = helper
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the exec helper panicked")));
        (child, got)
    });
    drop(child_sock);
    let child = match child {
        Ok(child) => child,
        Err(e) => {
            // The child reported its failure before it ended.
            return Err(match got {
                Ok(Some(Err(NO_MOUNTS))) => SpawnError::Mounts(e),
                _ => SpawnError::Start(e),
            });
        }
    };
    let listener = match got? {
        Some(Ok(listener)) => listener,
        _ => {
            return Err(SpawnError::Start(io::Error::other(
                "the program did not hand over its seccomp listener",
            )))
        }
    };
    Ok(Confined { child, listener })
}

/// Receives the program's listener on `sock` (or the tag it sent instead)
/// and has the shared supervisor answer the `execve`s of the program itself
/// (the process `spawn` started, whose parent is this one: its own `exec`,
/// and the failed tries of a `PATH` search) until `spawned` says `spawn` has
/// returned (`sandgate_sandbox::supervisor::serve::continue_own_execs`).
/// Those are not the exec tracking's business (see
/// `sandgate_sandbox::supervisor::lineage`: the program's parent is not the
/// program). Any other notification is handed back to the listener,
/// unanswered, for the supervisor's loop. `None` when nothing came before
/// `spawn` returned.
fn program_exec(
    sock: std::os::fd::RawFd,
    spawned: &std::sync::atomic::AtomicBool,
) -> io::Result<Option<Result<Listener, u8>>> {
    use sandgate_sandbox::notify::recv_fd_or_tag;
    use std::sync::atomic::Ordering;
    loop {
        // Read before the poll: what the child sent before `spawn` returned
        // (its listener, or the tag of a failure) is in the socket by then,
        // so a poll after `spawned` was seen set cannot miss it.
        let done = spawned.load(Ordering::SeqCst);
        let mut pfd = libc::pollfd {
            fd: sock,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd, count 1.
        let rc = unsafe { libc::poll(&mut pfd, 1, 20) };
        if rc > 0 {
            break;
        }
        if done {
            return Ok(None);
        }
    }
    let listener = match recv_fd_or_tag(sock)? {
        Ok(fd) => Listener::new(fd),
        Err(tag) => return Ok(Some(Err(tag))),
    };
    sandgate_sandbox::supervisor::serve::continue_own_execs(
        &listener,
        std::process::id(),
        spawned,
    )?;
    Ok(Some(Ok(listener)))
}

/// Sets this process's umask to 0, so that files the supervisor creates for
/// the program get exactly the mode computed from the program's own umask.
/// Returns the previous umask.
pub fn clear_umask() -> u32 {
    // SAFETY: umask cannot fail and touches no memory.
    unsafe { libc::umask(0) as u32 }
}
