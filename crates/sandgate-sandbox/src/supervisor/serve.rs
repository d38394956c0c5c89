//! The one notification loop, serving both scopes: one command (exec
//! isolation and MCP `exec_run`, the crate's `supervise` module) and a
//! whole agent (`sandgate run`, the `sandgate-confine` crate).
//!
//! [`serve`] waits on the listener, receives each notification, decodes it
//! with the one decoder ([`super::decode`]) and routes it to the scope's
//! [`Scope`]: a call that only changes what is known about the caller (its
//! working directory, umask or credentials) is told to the scope and then
//! continued here; a `connect` goes to [`Scope::connect`]; every other call
//! (and one the decoder does not know) goes to [`Scope::judge`], which
//! answers it. What a scope decides, and how, is the scope's: exec
//! isolation judges names against its protected paths (the crate's
//! `protect` module); `sandgate run` judges writes against its plan, its
//! answers and `sandbox.json`, and asks the human through
//! [`sandgate_policy::ask`].
//!
//! The loop ends when no process uses the filter any more, when the
//! listener breaks, or when `stop` is set (checked before each wait).
//!
//! Before it starts, while the supervising process waits in
//! `Command::spawn` for its child's `exec`, [`continue_own_execs`] answers
//! that child's own `exec` calls, which are not the exec tracking's
//! business ([`super::lineage`]), and holds the first other notification
//! for the loop.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use super::decode::{decode, Syscall};
use crate::notify::{Listener, Notif, Ready};

/// A `connect` as the decoder read it: the caller's socket descriptor, and
/// where and how long its address is in the caller's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connect {
    /// The caller's socket descriptor.
    pub fd: i32,
    /// The address of the caller's `sockaddr`.
    pub addr: u64,
    /// The length the caller gave.
    pub len: u64,
}

/// What one scope does with the notifications [`serve`] receives. Each call
/// must be answered exactly once (continued, failed, succeeded or handed a
/// descriptor), by the method it is given to or by a thread it hands it to.
pub trait Scope {
    /// `chdir`, `fchdir` or `umask` of thread `pid` ([`Syscall::Context`]):
    /// what is known of its working directory or umask is stale. The loop
    /// continues the call afterwards.
    fn context_changes(&mut self, pid: u32);

    /// A credential change ([`Syscall::Creds`]): what is known of every
    /// caller's credentials is stale. The loop continues the call
    /// afterwards.
    fn creds_change(&mut self);

    /// A `connect`, to be made for the caller or refused.
    fn connect(&mut self, notif: Notif, asked: Connect);

    /// Any other notified call (`None`: one the decoder does not know, or
    /// not a write after all, such as a read-only `openat2`).
    fn judge(&mut self, notif: Notif, call: Option<Syscall>);
}

/// Receives the notifications of `listener` and routes each to `scope`
/// until no process uses the filter any more, the listener breaks, or
/// `stop` is set.
pub fn serve<S: Scope + ?Sized>(listener: &Listener, scope: &mut S, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        match listener.wait(-1) {
            Ok(Ready::Notification) => {}
            Ok(Ready::Idle) => continue,
            Ok(Ready::Gone) | Err(_) => return,
        }
        let notif = match listener.recv() {
            Ok(notif) => notif,
            // The caller went away (ENOENT) or was interrupted before the
            // notification was read.
            Err(err)
                if err.raw_os_error() == Some(libc::ENOENT)
                    || err.kind() == std::io::ErrorKind::Interrupted =>
            {
                continue
            }
            // The listener broke: stop rather than spin, unless it still
            // has callers after a short wait.
            Err(_) => match listener.wait(100) {
                Ok(Ready::Gone) | Err(_) => return,
                Ok(_) => continue,
            },
        };
        route(listener, scope, notif);
    }
}

/// Continues each `exec` (`execve`, `execveat`) of a child of process
/// `parent` (the process `Command::spawn` forked: its own `exec`, and the
/// failed tries of a `PATH` search) until `spawned` is set; the first
/// other notification is handed back to the listener unanswered
/// ([`Listener::hold`]), for [`serve`]. Returns when that happens, when
/// `spawned` is set while nothing waits, or when no process uses the filter.
pub fn continue_own_execs(
    listener: &Listener,
    parent: u32,
    spawned: &AtomicBool,
) -> io::Result<()> {
    loop {
        match listener.wait(20)? {
            Ready::Notification => {
                let Ok(notif) = listener.recv() else {
                    continue;
                };
                let exec = matches!(decode(&notif), Some(Syscall::Exec { .. }));
                let ppid = super::lineage::tgid(notif.pid)
                    .and_then(super::lineage::stat)
                    .map(|s| s.ppid);
                if exec && ppid == Some(parent) {
                    listener.allow(notif.id);
                    continue;
                }
                listener.hold(notif);
                return Ok(());
            }
            Ready::Idle if !spawned.load(Ordering::SeqCst) => {}
            _ => return Ok(()),
        }
    }
}

/// Decodes one notification and gives it to the scope.
fn route<S: Scope + ?Sized>(listener: &Listener, scope: &mut S, notif: Notif) {
    match decode(&notif) {
        Some(Syscall::Context) => {
            scope.context_changes(notif.pid);
            listener.allow(notif.id);
        }
        Some(Syscall::Creds) => {
            scope.creds_change();
            listener.allow(notif.id);
        }
        Some(Syscall::Connect { fd, addr, len }) => scope.connect(notif, Connect { fd, addr, len }),
        call => scope.judge(notif, call),
    }
}
