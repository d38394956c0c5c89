//! Judging a write: from the plan and the answers so far, whether it
//! continues (Landlock then checks the real path), fails, waits for the
//! human, or is performed on the caller's behalf. The lexical fast path
//! ([`fast`]) settles what needs no canonical path; the rest is decided from
//! canonical paths ([`decide`]).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;

use super::access::{creds_of, dac_refuses, perform_checked, targets};
use super::report::attempt;
use super::{hint, lock, Pending, Shared};
use crate::plan::{RunPlan, RunPlanExt, Standing};
use crate::seccomp::Notif;
use crate::supervisor::{DenyReason, Event};
use sandgate_sandbox::supervisor::perform::{try_perform, Op};

/// Decides `op` from its canonical paths: fails it, asks about it,
/// continues it or performs it.
pub(super) fn decide(shared: &Arc<Shared>, notif: Notif, op: Op, asks: &Sender<Pending>) {
    let listener = &shared.listener;
    let targets = targets(&op);
    let answers = lock(&shared.answers).clone();
    let standings: Vec<(PathBuf, Standing)> = targets
        .iter()
        .map(|(path, entry)| {
            let standing = if replaces_protected(&shared.plan, &op, path) {
                Standing::Protected
            } else {
                shared.plan.standing(path, *entry, &answers)
            };
            (path.clone(), standing)
        })
        .collect();
    drop(answers);
    if let Some(errno) = fails_anyway(&op) {
        // The kernel checks existence before permissions: answer as it would,
        // without a question or a report (e.g. `mv`'s `RENAME_NOREPLACE`
        // probe, or `mkdir -p` of an existing protected directory).
        listener.fail(notif.id, errno);
        return;
    }
    if let Some((path, standing)) = standings.iter().find(|(_, s)| {
        matches!(
            s,
            Standing::Floor | Standing::Protected | Standing::Denied | Standing::Unasked(_)
        )
    }) {
        let reason = match standing {
            Standing::Floor => DenyReason::Floor,
            Standing::Protected if shared.plan.is_sandgate_own(path) => DenyReason::SandgateOwn,
            Standing::Protected => DenyReason::Protected,
            Standing::Unasked(kind) => DenyReason::Unasked(*kind),
            _ => DenyReason::DenyList,
        };
        // Reported first: the log line is out before the program goes on.
        shared.reporter.report(&Event::Denied {
            attempt: attempt(notif.pid, &op, path),
            reason,
        });
        listener.fail(notif.id, libc::EACCES);
        return;
    }
    let outside: Vec<PathBuf> = standings
        .iter()
        .filter(|(_, s)| *s == Standing::Outside)
        .map(|(p, _)| p.clone())
        .collect();
    if let Op::Link { from, to } = &op {
        if outside.contains(from) && !outside.contains(to) {
            // A hard link to a file outside would be a name in the allowed
            // set through which writes change that file. It fails as a link
            // across file systems does, without a question, so tools copy
            // instead (`git clone` of a local repository).
            shared.reporter.report(&Event::Denied {
                attempt: attempt(notif.pid, &op, from),
                reason: DenyReason::LinkFromOutside,
            });
            listener.fail(notif.id, libc::EXDEV);
            return;
        }
    }
    if !outside.is_empty() {
        let pending = Pending { notif, op, outside };
        if let Err(mpsc::SendError(pending)) = asks.send(pending) {
            listener.fail(pending.notif.id, libc::EACCES);
        }
        return;
    }
    if matches!(op, Op::Meta { .. }) {
        // Not a write: file modes are the kernel's business, with no hint.
        listener.allow(notif.id);
    } else if standings.iter().all(|(_, s)| *s == Standing::Covered) {
        let creds = creds_of(shared, notif.pid);
        if let Some((path, _)) = targets
            .iter()
            .find(|(path, entry)| dac_refuses(&creds, path, *entry))
        {
            hint(shared, notif.pid, path);
        }
        listener.allow(notif.id);
    } else {
        perform_checked(shared, &notif, &op);
    }
}

/// Decides `op` from its lexical paths (absolute, without `..`) when that
/// needs no canonical path: everything beneath a Landlock rule continues
/// (Landlock checks the real path), and an allowed write the floor would
/// refuse is performed with symlink-free resolution. Returns `false` when
/// the slow path must decide (outside the allowed set, protected, or a
/// symlink on the way).
pub(super) fn fast(shared: &Shared, notif: &Notif, op: &Op) -> bool {
    let plan = &shared.plan;
    let targets = lexical_targets(op);
    if targets
        .iter()
        .any(|(p, _)| plan.is_protected(p) || plan.is_floor(p) || replaces_protected(plan, op, p))
    {
        return false;
    }
    if targets.iter().all(|(p, entry)| {
        if *entry {
            plan.covers_entry(p)
        } else {
            plan.covers_content(p)
        }
    }) {
        if !plan.mounted.is_empty() && !plainly_covered(plan, &targets) {
            return false;
        }
        let creds = creds_of(shared, notif.pid);
        if let Some((path, _)) = targets
            .iter()
            .find(|(p, entry)| dac_refuses(&creds, p, *entry))
        {
            hint(shared, notif.pid, path);
        }
        shared.listener.allow(notif.id);
        return true;
    }
    let answers = lock(&shared.answers).allow.clone();
    if !targets.iter().all(|(p, _)| plan.is_allowed(p, &answers)) {
        return false;
    }
    let creds = creds_of(shared, notif.pid);
    if let Some((path, _)) = targets
        .iter()
        .find(|(path, entry)| dac_refuses(&creds, path, *entry))
    {
        hint(shared, notif.pid, path);
        shared.listener.fail(notif.id, libc::EACCES);
        return true;
    }
    let umask = creds.map_or(0o022, |c| c.umask);
    if !shared.listener.id_valid(notif.id) {
        return true;
    }
    if let Op::Rename { from, .. } = op {
        shared.anchors.moving(from);
    }
    try_perform(&shared.listener, &shared.anchors, notif.id, op, umask)
}

/// Whether `op` would move the directory above a protected path away, or
/// put something of the program's other than a new directory in its place:
/// a rename from or onto `path`, or a file, node, hard link or symbolic
/// link made at `path`, when `path` holds a protected path (see
/// [`RunPlanExt::holds_protected`]). A missing `.git` made as a file saying
/// `gitdir: elsewhere` would send git to hooks and a config of the
/// program's; made as a directory it is harmless, its protected entries
/// still refused.
fn replaces_protected(plan: &RunPlan, op: &Op, path: &Path) -> bool {
    let places = match op {
        Op::Rename { .. }
        | Op::Symlink { .. }
        | Op::Mknod { .. }
        | Op::Link { .. }
        | Op::Bind { .. } => true,
        Op::Open { flags, .. } => flags & libc::O_CREAT != 0,
        _ => false,
    };
    places && plan.holds_protected(path)
}

/// Whether `targets` may take the shortcut with the mount layer as they
/// would when carving. The mount layer gives the workspace root a rule of its
/// own, so a path through a symbolic link in it (`ln -s .sandgate sg`, then
/// `echo x > sg/sandbox.json`) looks covered while the kernel will refuse it
/// (a read-only bind, or Landlock beyond the link); carving would have sent
/// it the full way, which reports the refusal. So each component below the
/// rule is checked with `lstat`, down to the first one that carving would
/// have given a rule (which it trusts on its literal path too).
fn plainly_covered(plan: &RunPlan, targets: &[(PathBuf, bool)]) -> bool {
    targets.iter().all(|(path, entry)| {
        let Some(rule) = plan.rule_dir_of(path) else {
            // A file rule: Landlock holds it on the file itself.
            return plan.covers_content(path);
        };
        let below: Vec<&Path> = path.ancestors().take_while(|p| *p != rule).collect();
        for component in below.into_iter().rev() {
            if plan.carving_covers(component, !*entry && component == path.as_path()) {
                return true;
            }
            if fs::symlink_metadata(component).is_ok_and(|m| m.file_type().is_symlink()) {
                return false;
            }
        }
        true
    })
}

/// The paths of `op`, each marked as an entry change when the operation may
/// create, remove or rename it (a creating open counts as one: the parent's
/// rule then covers the contents too).
fn lexical_targets(op: &Op) -> Vec<(PathBuf, bool)> {
    match op {
        Op::Open { path, flags, .. } => {
            if flags & libc::O_TMPFILE == libc::O_TMPFILE {
                vec![(path.join(".tmpfile"), true)]
            } else {
                vec![(path.clone(), flags & libc::O_CREAT != 0)]
            }
        }
        _ => targets(op),
    }
}

/// The error the kernel gives `op` before any permission check, if any:
/// creating an existing entry, or removing or renaming a missing one.
fn fails_anyway(op: &Op) -> Option<i32> {
    let exists = |p: &Path| fs::symlink_metadata(p).is_ok();
    match op {
        Op::Open { path, flags, .. }
            if flags & libc::O_CREAT != 0 && flags & libc::O_EXCL != 0 && exists(path) =>
        {
            Some(libc::EEXIST)
        }
        Op::Mkdir { path, .. } | Op::Mknod { path, .. } | Op::Symlink { path, .. }
            if exists(path) =>
        {
            Some(libc::EEXIST)
        }
        Op::Bind { path, .. } if exists(path) => Some(libc::EADDRINUSE),
        Op::Remove { path, .. } if !exists(path) => Some(libc::ENOENT),
        Op::Rename { from, .. } | Op::Link { from, .. } if !exists(from) => Some(libc::ENOENT),
        Op::Rename { to, flags, .. } if flags & libc::RENAME_NOREPLACE != 0 && exists(to) => {
            Some(libc::EEXIST)
        }
        Op::Link { to, .. } if exists(to) => Some(libc::EEXIST),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &Path, flags: i32) -> Op {
        Op::Open {
            path: path.to_path_buf(),
            flags,
            mode: 0o600,
        }
    }

    #[test]
    fn a_creating_open_changes_an_entry_only_when_the_file_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let there = dir.path().join("there");
        fs::write(&there, "x").unwrap();
        let missing = dir.path().join("missing");
        let create = libc::O_WRONLY | libc::O_CREAT;
        assert_eq!(targets(&open(&there, create)), [(there.clone(), false)]);
        assert_eq!(targets(&open(&missing, create)), [(missing.clone(), true)]);
        assert_eq!(
            targets(&open(&there, libc::O_WRONLY)),
            [(there.clone(), false)]
        );
        // Lexically a creating open always counts as an entry change.
        assert_eq!(
            lexical_targets(&open(&there, create)),
            [(there.clone(), true)]
        );
        let tmpfile = open(dir.path(), libc::O_TMPFILE | libc::O_WRONLY);
        let anonymous = dir.path().join(".tmpfile");
        assert_eq!(targets(&tmpfile), [(anonymous.clone(), true)]);
        assert_eq!(lexical_targets(&tmpfile), [(anonymous, true)]);
    }

    #[test]
    fn a_rename_and_a_link_touch_both_names() {
        let (from, to) = (PathBuf::from("/w/a"), PathBuf::from("/w/b"));
        let rename = Op::Rename {
            from: from.clone(),
            to: to.clone(),
            flags: 0,
        };
        let link = Op::Link {
            from: from.clone(),
            to: to.clone(),
        };
        let both = [(from.clone(), true), (to.clone(), true)];
        assert_eq!(targets(&rename), both);
        assert_eq!(targets(&link), both);
        assert_eq!(lexical_targets(&rename), both);
        let truncate = Op::Truncate {
            path: from.clone(),
            len: 0,
        };
        assert_eq!(targets(&truncate), [(from, false)]);
    }

    #[test]
    fn the_kernels_own_errors_come_before_any_question() {
        let dir = tempfile::tempdir().unwrap();
        let there = dir.path().join("there");
        fs::write(&there, "x").unwrap();
        let missing = dir.path().join("missing");
        let exclusive = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
        let mkdir = |path: &Path| Op::Mkdir {
            path: path.to_path_buf(),
            mode: 0o700,
        };
        let remove = |path: &Path| Op::Remove {
            path: path.to_path_buf(),
            dir: false,
        };
        let rename = |from: &Path, to: &Path, flags| Op::Rename {
            from: from.to_path_buf(),
            to: to.to_path_buf(),
            flags,
        };
        let cases = [
            (open(&there, exclusive), Some(libc::EEXIST)),
            (open(&missing, exclusive), None),
            (open(&there, libc::O_WRONLY | libc::O_CREAT), None),
            (mkdir(&there), Some(libc::EEXIST)),
            (mkdir(&missing), None),
            (remove(&missing), Some(libc::ENOENT)),
            (remove(&there), None),
            (rename(&missing, &there, 0), Some(libc::ENOENT)),
            (
                rename(&there, &there, libc::RENAME_NOREPLACE),
                Some(libc::EEXIST),
            ),
            (rename(&there, &missing, libc::RENAME_NOREPLACE), None),
            (
                Op::Link {
                    from: there.clone(),
                    to: there.clone(),
                },
                Some(libc::EEXIST),
            ),
        ];
        for (op, want) in cases {
            assert_eq!(fails_anyway(&op), want, "{op:?}");
        }
    }
}
