//! `sandgate run`'s scope of the one notification loop
//! ([`sandgate_sandbox::supervisor::serve`]): what the loop hands it, and
//! where each goes. Calls that only change what is known about the caller
//! (its working directory, umask or credentials) update the callers' cache
//! (the loop then continues them); `connect` goes to [`super::connect`];
//! metadata changes and write-class calls are read from the caller
//! ([`sandgate_sandbox::supervisor::resolve`],
//! [`sandgate_sandbox::supervisor::metadata`]) and judged
//! ([`super::judge`]).

use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::sync::Arc;

use sandgate_sandbox::supervisor::decode::Syscall;
use sandgate_sandbox::supervisor::metadata::Acting;
use sandgate_sandbox::supervisor::perform::Op;
use sandgate_sandbox::supervisor::serve::{Connect, Scope};

use super::judge::{decide, fast};
use super::{Pending, Shared};
use crate::seccomp::Notif;
use crate::supervisor::{DenyReason, Event};

/// The run's scope: the supervisor's shared state, and the queue of the
/// asking thread.
pub(super) struct Run {
    pub(super) shared: Arc<Shared>,
    pub(super) asks: Sender<Pending>,
}

impl Scope for Run {
    fn context_changes(&mut self, pid: u32) {
        self.shared.callers.context_changes(pid);
    }

    fn creds_change(&mut self) {
        self.shared.callers.creds_change();
    }

    fn connect(&mut self, notif: Notif, asked: Connect) {
        super::connect::connect(&self.shared, notif, asked);
    }

    fn judge(&mut self, notif: Notif, call: Option<Syscall>) {
        judge(&self.shared, notif, call, &self.asks);
    }
}

/// Decides one write-class or metadata call (`None`: not ours to judge).
fn judge(shared: &Arc<Shared>, notif: Notif, call: Option<Syscall>, asks: &Sender<Pending>) {
    let listener = &shared.listener;
    let op = match call {
        Some(Syscall::Exec { argv }) => {
            // Recorded before it runs (see `supervisor::lineage`).
            shared.lineage.exec(&notif, argv);
            listener.allow(notif.id);
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
