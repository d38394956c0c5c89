//! The notification loop: receives each notification from the listener and
//! routes it. Calls that only change what is known about the caller (its
//! working directory, umask or credentials) update the callers' cache and
//! continue; metadata changes and write-class calls are decoded
//! ([`super::decode`]) and judged ([`super::judge`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;

use super::decode::{decode, Request};
use super::judge::{decide, fast};
use super::{Pending, Shared};
use crate::metadata::{self, Acting};
use crate::onbehalf::Op;
use crate::seccomp::{Notif, Ready};
use crate::supervisor::{DenyReason, Event};

pub(super) fn notify_loop(shared: &Arc<Shared>, asks: &Sender<Pending>, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        match shared.listener.recv() {
            Ok(notif) => handle(shared, notif, asks),
            // ENOENT: the caller went away before we received it, or no
            // process uses the filter any more (then the kernel says so at
            // once, again and again: stop rather than spin).
            Err(err) if err.raw_os_error() == Some(libc::ENOENT) => {
                if shared.listener.wait(0).unwrap_or(Ready::Gone) == Ready::Gone {
                    break;
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            // No process uses the filter any more, or the listener broke.
            Err(_) => match shared.listener.wait(100) {
                Ok(Ready::Gone) | Err(_) => break,
                Ok(_) => continue,
            },
        }
    }
}

/// What a call that is not a write changes in the callers' cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bookkeeping {
    /// The working directory or the umask (`chdir`, `fchdir`, `umask`).
    Context,
    /// The credentials (the `set*id` family, `setgroups`, `capset`).
    Creds,
}

/// Whether system call `nr` only changes what is known about its caller.
fn bookkeeping(nr: i64) -> Option<Bookkeeping> {
    match nr {
        libc::SYS_chdir | libc::SYS_fchdir | libc::SYS_umask => Some(Bookkeeping::Context),
        libc::SYS_setuid
        | libc::SYS_setgid
        | libc::SYS_setreuid
        | libc::SYS_setregid
        | libc::SYS_setresuid
        | libc::SYS_setresgid
        | libc::SYS_setfsuid
        | libc::SYS_setfsgid
        | libc::SYS_setgroups
        | libc::SYS_capset => Some(Bookkeeping::Creds),
        _ => None,
    }
}

/// Decides one notification.
fn handle(shared: &Arc<Shared>, notif: Notif, asks: &Sender<Pending>) {
    let listener = &shared.listener;
    match bookkeeping(notif.nr) {
        Some(Bookkeeping::Context) => {
            shared.callers.context_changes(notif.pid);
            listener.allow(notif.id);
            return;
        }
        Some(Bookkeeping::Creds) => {
            shared.callers.creds_change();
            listener.allow(notif.id);
            return;
        }
        None => {}
    }
    if notif.nr == libc::SYS_connect {
        super::connect::connect(shared, notif);
        return;
    }
    let op = if let Some(meta) = metadata::decode(&notif) {
        match meta.target(notif.pid) {
            Acting::On(path) => Op::Meta {
                path,
                change: meta.change,
            },
            Acting::Nowhere => {
                listener.allow(notif.id);
                return;
            }
            Acting::Unknown => {
                // No floor behind it: what cannot be named is refused.
                let unnamed = PathBuf::from("(a file sandgate cannot name)");
                let op = Op::Meta {
                    path: unnamed.clone(),
                    change: meta.change,
                };
                shared.reporter.report(&Event::Denied {
                    attempt: super::report::attempt(notif.pid, &op, &unnamed),
                    reason: DenyReason::Unnamed,
                });
                listener.fail(notif.id, libc::EACCES);
                return;
            }
        }
    } else {
        let Some(request) = decode(&notif) else {
            // Not a write after all (a read-only `openat2`), or not ours to judge:
            // the Landlock floor decides.
            listener.allow(notif.id);
            return;
        };
        if matches!(request, Request::Rename(..) | Request::Remove(_, true)) {
            // A directory may move or go: some working directory with it.
            shared.callers.paths_change();
        }
        if let Some(op) = request.read_op_lexically(&shared.callers, notif.pid) {
            super::note_repository(shared, notif.pid, &op);
            if fast(shared, &notif, &op) {
                return;
            }
        }
        let Some(op) = request.read_op(&shared.callers, notif.pid) else {
            listener.allow(notif.id);
            return;
        };
        super::note_repository(shared, notif.pid, &op);
        if let Op::Rename { from, .. } = &op {
            shared.anchors.moving(from);
        }
        op
    };
    decide(shared, notif, op, asks);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_and_credential_calls_are_bookkeeping_and_writes_are_not() {
        let cases = [
            (libc::SYS_chdir, Some(Bookkeeping::Context)),
            (libc::SYS_fchdir, Some(Bookkeeping::Context)),
            (libc::SYS_umask, Some(Bookkeeping::Context)),
            (libc::SYS_setuid, Some(Bookkeeping::Creds)),
            (libc::SYS_setresgid, Some(Bookkeeping::Creds)),
            (libc::SYS_setfsuid, Some(Bookkeeping::Creds)),
            (libc::SYS_setgroups, Some(Bookkeeping::Creds)),
            (libc::SYS_capset, Some(Bookkeeping::Creds)),
            (libc::SYS_openat, None),
            (libc::SYS_rename, None),
            (libc::SYS_fchmodat, None),
            (libc::SYS_read, None),
        ];
        for (nr, want) in cases {
            assert_eq!(bookkeeping(nr), want, "system call {nr}");
        }
    }
}
