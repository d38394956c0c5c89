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
use sandgate_sandbox::notify::{recv_fd, send_fd, socketpair};

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

/// Sets this process's umask to 0, so that files the supervisor creates for
/// the program get exactly the mode computed from the program's own umask.
/// Returns the previous umask.
pub fn clear_umask() -> u32 {
    // SAFETY: umask cannot fail and touches no memory.
    unsafe { libc::umask(0) as u32 }
}
