//! The notification loop: receives each notification from the listener,
//! decodes it with the shared decoder
//! ([`sandgate_sandbox::supervisor::decode`]) and routes it. Calls that only
//! change what is known about the caller (its working directory, umask or
//! credentials) update the callers' cache and continue; `connect` goes to
//! [`super::connect`]; metadata changes and write-class calls are read from
//! the caller ([`sandgate_sandbox::supervisor::resolve`],
//! [`sandgate_sandbox::supervisor::metadata`]) and judged
//! ([`super::judge`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;

use sandgate_sandbox::supervisor::decode::{decode, Syscall};
use sandgate_sandbox::supervisor::metadata::Acting;
use sandgate_sandbox::supervisor::perform::Op;

use super::judge::{decide, fast};
use super::{Pending, Shared};
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

/// Decides one notification.
fn handle(shared: &Arc<Shared>, notif: Notif, asks: &Sender<Pending>) {
    let listener = &shared.listener;
    let call = decode(&notif);
    let op = match call {
        Some(Syscall::Context) => {
            shared.callers.context_changes(notif.pid);
            listener.allow(notif.id);
            return;
        }
        Some(Syscall::Creds) => {
            shared.callers.creds_change();
            listener.allow(notif.id);
            return;
        }
        Some(Syscall::Connect { fd, addr, len }) => {
            super::connect::connect(shared, notif, super::connect::Asked { fd, addr, len });
            return;
        }
        Some(Syscall::Meta(meta)) => match meta.acting_on(notif.pid) {
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
        },
        // A link of a descriptor names no source path: not ours to judge.
        Some(Syscall::Link { flags, .. }) if flags & libc::AT_EMPTY_PATH != 0 => {
            listener.allow(notif.id);
            return;
        }
        Some(request) => {
            if matches!(
                request,
                Syscall::Rename { .. } | Syscall::Remove { dir: true, .. }
            ) {
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
        }
        // Not a write after all (a read-only `openat2`), or not ours to
        // judge: the Landlock floor decides.
        None => {
            listener.allow(notif.id);
            return;
        }
    };
    decide(shared, notif, op, asks);
}
