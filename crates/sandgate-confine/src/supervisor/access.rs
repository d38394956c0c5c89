//! Whether the caller may do an allowed write itself: an allowed write the
//! Landlock floor would refuse is handed to the shared performer
//! ([`sandgate_sandbox::supervisor::perform`]) only when the caller is still
//! waiting and its file modes and ownership would let it do the write
//! itself, with its umask; and the paths a write touches ([`targets`]),
//! which the judgement and the question read too.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{hint, Shared};
use crate::seccomp::Notif;
use sandgate_sandbox::supervisor::callers::Creds;
use sandgate_sandbox::supervisor::perform::{perform, Op};

/// Performs `op` if its caller is still waiting, with the caller's umask,
/// and only if its file modes would let the caller do it itself.
pub(super) fn perform_checked(shared: &Shared, notif: &Notif, op: &Op) {
    if matches!(op, Op::Meta { .. }) {
        shared.listener.allow(notif.id);
        return;
    }
    let creds = creds_of(shared, notif.pid);
    if let Some((path, _)) = targets(op)
        .iter()
        .find(|(path, entry)| dac_refuses(&creds, path, *entry))
    {
        hint(shared, notif.pid, path);
        shared.listener.fail(notif.id, libc::EACCES);
        return;
    }
    let umask = creds.map_or(0o022, |c| c.umask);
    // The caller may have died and its pid been reused while we looked.
    if !shared.listener.id_valid(notif.id) {
        return;
    }
    perform(&shared.listener, &shared.anchors, notif.id, op, umask);
}

/// The current credentials of `pid` (as cached, see [`sandgate_sandbox::supervisor::callers`]).
pub(super) fn creds_of(shared: &Shared, pid: u32) -> Option<Creds> {
    shared.callers.creds(pid)
}

/// Whether file modes or ownership (not the sandbox) will refuse the write.
pub(super) fn dac_refuses(creds: &Option<Creds>, path: &Path, entry: bool) -> bool {
    let Some(creds) = creds else {
        return false;
    };
    if creds.dac_override {
        return false;
    }
    let (target, need) = if entry {
        (path.parent().unwrap_or(Path::new("/")), 0o3)
    } else {
        (path, 0o2)
    };
    let Ok(meta) = fs::metadata(target) else {
        return false;
    };
    let mode = meta.mode();
    let bits = if meta.uid() == creds.uid {
        mode >> 6
    } else if meta.gid() == creds.gid || creds.groups.contains(&meta.gid()) {
        mode >> 3
    } else {
        mode
    };
    bits & need != need
}

/// The paths a write touches, and for each whether it changes an entry
/// (create, remove, rename) rather than contents.
pub(super) fn targets(op: &Op) -> Vec<(PathBuf, bool)> {
    match op {
        Op::Open { path, flags, .. } => {
            if flags & libc::O_TMPFILE == libc::O_TMPFILE {
                vec![(path.join(".tmpfile"), true)]
            } else {
                let creates = flags & libc::O_CREAT != 0 && fs::symlink_metadata(path).is_err();
                vec![(path.clone(), creates)]
            }
        }
        Op::Truncate { path, .. } | Op::Meta { path, .. } => vec![(path.clone(), false)],
        Op::Mkdir { path, .. }
        | Op::Mknod { path, .. }
        | Op::Remove { path, .. }
        | Op::Symlink { path, .. }
        | Op::Bind { path, .. } => vec![(path.clone(), true)],
        Op::Rename { from, to, .. } | Op::Link { from, to } => {
            vec![(from.clone(), true), (to.clone(), true)]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn creds(uid: u32, gid: u32, dac_override: bool) -> Option<Creds> {
        Some(Creds {
            uid,
            gid,
            groups: Vec::new(),
            dac_override,
            umask: 0o022,
        })
    }

    #[test]
    fn file_modes_decide_for_the_owner_the_group_and_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, "x").unwrap();
        let meta = fs::metadata(&file).unwrap();
        let (uid, gid) = (meta.uid(), meta.gid());
        let (other_uid, other_gid) = (uid.wrapping_add(1), gid.wrapping_add(1));
        let mode = |bits| fs::set_permissions(&file, fs::Permissions::from_mode(bits)).unwrap();

        mode(0o644);
        assert!(!dac_refuses(&creds(uid, gid, false), &file, false));
        assert!(dac_refuses(&creds(other_uid, gid, false), &file, false));
        assert!(dac_refuses(
            &creds(other_uid, other_gid, false),
            &file,
            false
        ));
        mode(0o464);
        assert!(dac_refuses(&creds(uid, gid, false), &file, false));
        assert!(!dac_refuses(&creds(other_uid, gid, false), &file, false));
        let mut in_group = creds(other_uid, other_gid, false);
        if let Some(c) = in_group.as_mut() {
            c.groups.push(gid);
        }
        assert!(!dac_refuses(&in_group, &file, false));
        mode(0o446);
        assert!(!dac_refuses(
            &creds(other_uid, other_gid, false),
            &file,
            false
        ));
        mode(0o444);
        // CAP_DAC_OVERRIDE, or credentials we could not read: modes are not ours to judge.
        assert!(!dac_refuses(&creds(uid, gid, true), &file, false));
        assert!(!dac_refuses(&None, &file, false));
        mode(0o644);
    }

    #[test]
    fn an_entry_change_needs_write_and_search_on_the_parent() {
        let dir = tempfile::tempdir().unwrap();
        let parent = dir.path().join("p");
        fs::create_dir(&parent).unwrap();
        let meta = fs::metadata(&parent).unwrap();
        let who = creds(meta.uid(), meta.gid(), false);
        let child = parent.join("new");
        let mode = |bits| fs::set_permissions(&parent, fs::Permissions::from_mode(bits)).unwrap();
        mode(0o755);
        assert!(!dac_refuses(&who, &child, true));
        mode(0o555);
        assert!(dac_refuses(&who, &child, true));
        mode(0o655);
        assert!(dac_refuses(&who, &child, true));
        mode(0o755);
        // A missing parent is not a mode refusal: the call fails on its own.
        assert!(!dac_refuses(&who, &child.join("deeper/x"), true));
    }
}
