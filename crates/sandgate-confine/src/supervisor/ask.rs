//! Asking: the one thread that puts writes outside the allowed set to the
//! human, one question at a time, keeps "always" answers for the run and in
//! `sandbox.json`, and turns each resolution into an outcome.

use std::path::Path;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use sandgate_policy::ask::{Resolution, Resolver};
use sandgate_policy::persist::Effect;
use sandgate_policy::Verdict;

use super::access::{perform_checked, targets};
use super::report::attempt;
use super::{lock, Pending, Shared};
use crate::plan::{RunPlanExt, Standing};
use crate::settings::ListKind;
use crate::supervisor::{DenyReason, Event};

pub(super) fn ask_loop(
    shared: &Shared,
    resolver: &dyn Resolver,
    timeout: Duration,
    rx: &Receiver<Pending>,
) {
    while let Ok(pending) = rx.recv() {
        let Pending { notif, op, outside } = pending;
        let mut verdict = None;
        for path in &outside {
            let entry = targets(&op)
                .into_iter()
                .find(|(p, _)| p == path)
                .is_some_and(|(_, e)| e);
            let standing = shared
                .plan
                .standing(path, entry, &lock(&shared.answers).clone());
            match standing {
                Standing::Covered | Standing::Allowed => continue,
                Standing::Floor => {
                    verdict = Some(DenyReason::Floor);
                    break;
                }
                Standing::Denied | Standing::Protected => {
                    verdict = Some(DenyReason::DenyList);
                    break;
                }
                Standing::Unasked(kind) => {
                    verdict = Some(DenyReason::Unasked(kind));
                    break;
                }
                Standing::Outside => {}
            }
            if !shared.listener.id_valid(notif.id) {
                verdict = Some(DenyReason::Rejected);
                break;
            }
            let attempt = attempt(notif.pid, &op, path);
            // A grant the person gave in the agent's own dialog, bound to
            // this process or an ancestor (see `supervisor::lineage`).
            if shared.lineage.granted(notif.pid, path) {
                shared.reporter.report(&Event::Allowed {
                    attempt,
                    always: false,
                });
                continue;
            }
            let resolution = resolver.resolve(&attempt.question(timeout));
            let (list, denied) = outcome(&resolution);
            if let Some(list) = list {
                remember(shared, list, path);
            }
            match denied {
                Some(reason) => {
                    shared.reporter.report(&Event::Denied { attempt, reason });
                    verdict = Some(reason);
                    break;
                }
                None => shared.reporter.report(&Event::Allowed {
                    attempt,
                    always: list.is_some(),
                }),
            }
        }
        match verdict {
            Some(_) => shared.listener.fail(notif.id, libc::EACCES),
            None => perform_checked(shared, &notif, &op),
        }
    }
}

/// Records an "always" answer for this run and in `sandbox.json`.
fn remember(shared: &Shared, list: ListKind, path: &Path) {
    {
        let mut answers = lock(&shared.answers);
        match list {
            ListKind::Allow => answers.allow.push(path.to_path_buf()),
            ListKind::Deny => answers.deny.push(path.to_path_buf()),
        }
    }
    let entry = path.to_string_lossy();
    if let Err(err) = shared.file.persist(list, &entry) {
        shared.reporter.report(&Event::Error(err.to_string()));
    }
}

/// What a resolution means for one write: the `sandbox.json` list an
/// "always" answer goes to, and why the write is refused (`None`: allowed).
fn outcome(resolution: &Resolution) -> (Option<ListKind>, Option<DenyReason>) {
    match resolution {
        Resolution::Answered(answer) => {
            let list = answer.persists().map(|effect| match effect {
                Effect::Allow => ListKind::Allow,
                Effect::Deny => ListKind::Deny,
            });
            let denied = (answer.verdict() == Verdict::Deny).then_some(DenyReason::Rejected);
            (list, denied)
        }
        Resolution::TimedOut { .. } => (None, Some(DenyReason::TimedOut)),
        Resolution::Unavailable { .. } => (None, Some(DenyReason::NoTerminal)),
        Resolution::Declined { .. } => (None, Some(DenyReason::Declined)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandgate_policy::ask::Answer;

    #[test]
    fn each_resolution_has_one_outcome() {
        let cases = [
            (Resolution::Answered(Answer::AllowOnce), (None, None)),
            (
                Resolution::Answered(Answer::AllowAlways),
                (Some(ListKind::Allow), None),
            ),
            (
                Resolution::Answered(Answer::DenyOnce),
                (None, Some(DenyReason::Rejected)),
            ),
            (
                Resolution::Answered(Answer::DenyAlways),
                (Some(ListKind::Deny), Some(DenyReason::Rejected)),
            ),
            (
                Resolution::TimedOut { reason: "t".into() },
                (None, Some(DenyReason::TimedOut)),
            ),
            (
                Resolution::Unavailable { reason: "u".into() },
                (None, Some(DenyReason::NoTerminal)),
            ),
            (
                Resolution::Declined { reason: "d".into() },
                (None, Some(DenyReason::Declined)),
            ),
        ];
        for (resolution, want) in cases {
            assert_eq!(outcome(&resolution), want, "{resolution:?}");
        }
    }
}
