//! The Landlock floor: a ruleset that handles every write right and grants it
//! only beneath the plan's rules, and, when the plan carves reads around
//! hidden paths (the floor, credential stores, other names of floor files),
//! handles reading files too and grants it only beneath the plan's read
//! rules. Built in the parent with the `landlock` crate, the one Landlock
//! layer of sandgate (exec isolation builds its rulesets with it too, see
//! `sandgate_sandbox::landlock`); the child only enters it with
//! [`sandgate_sandbox::landlock_restrict_child`], whose raw calls are safe
//! between `fork` and `exec` (the `spawn` module enters it there).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

use landlock::{
    AccessFs, BitFlags, PathBeneath, Ruleset as Builder, RulesetAttr, RulesetCreatedAttr, Scope,
};

pub use sandgate_sandbox::landlock_abi as abi;

use super::plan::Rule;

/// The write rights handled at `abi`: all of them are denied unless a rule grants them.
pub fn handled(abi: u32) -> BitFlags<AccessFs> {
    let mut rights = AccessFs::WriteFile
        | AccessFs::RemoveDir
        | AccessFs::RemoveFile
        | AccessFs::MakeChar
        | AccessFs::MakeDir
        | AccessFs::MakeReg
        | AccessFs::MakeSock
        | AccessFs::MakeFifo
        | AccessFs::MakeBlock
        | AccessFs::MakeSym;
    if abi >= 2 {
        rights |= AccessFs::Refer;
    }
    if abi >= 3 {
        rights |= AccessFs::Truncate;
    }
    rights
}

/// A ruleset ready to be applied.
#[derive(Debug)]
pub struct Ruleset {
    fd: OwnedFd,
}

impl Ruleset {
    /// The ruleset's descriptor, for the child.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Builds the ruleset for `rules` at `abi` (which must be at least 1). With
/// `read_rules`, reading files is handled too, and granted only beneath them.
pub fn build(rules: &[Rule], read_rules: &[Rule], abi: u32) -> io::Result<Ruleset> {
    let handled = handled(abi);
    let read = if read_rules.is_empty() {
        BitFlags::empty()
    } else {
        BitFlags::from(AccessFs::ReadFile)
    };
    let mut builder = Builder::default()
        .handle_access(handled | read)
        .map_err(io::Error::other)?;
    // From ABI 6, signals to processes outside the confined tree fail
    // (`EPERM`), and so does reaching an abstract UNIX socket of theirs by
    // a call the supervisor does not make (`sendto` on a datagram socket).
    if abi >= 6 {
        builder = builder
            .scope(Scope::Signal | Scope::AbstractUnixSocket)
            .map_err(io::Error::other)?;
    }
    let mut created = builder.create().map_err(io::Error::other)?;
    let file_rights = BitFlags::from(AccessFs::WriteFile) | (handled & AccessFs::Truncate);
    // Device nodes are never made, not even in the workspace.
    let dir_rights = handled & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    let granted = rules
        .iter()
        .map(|rule| (rule, if rule.dir { dir_rights } else { file_rights }))
        .chain(
            read_rules
                .iter()
                .map(|rule| (rule, BitFlags::from(AccessFs::ReadFile))),
        );
    for (rule, rights) in granted {
        // A rule whose path vanished since the plan was made, or that is no
        // longer what the plan saw (a directory rule on a file or a symbolic
        // link), is skipped: its writes then go through the supervisor, which
        // re-checks the path.
        let Some(target) = open_rule_path(rule) else {
            continue;
        };
        // A rule the kernel refuses grants nothing (fail closed, as above).
        let _ = (&mut created).add_rule(PathBeneath::new(&target, rights));
    }
    let fd: Option<OwnedFd> = created.into();
    let fd = fd.ok_or_else(|| io::Error::other("the kernel has no Landlock"))?;
    Ok(Ruleset { fd })
}

/// The rule's path opened `O_PATH`, never following a final symbolic link,
/// when it still is the kind of file the rule says.
fn open_rule_path(rule: &Rule) -> Option<File> {
    let target = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW)
        .open(&rule.path)
        .ok()?;
    if rule.dir && !target.metadata().ok()?.is_dir() {
        return None;
    }
    Some(target)
}

/// Enters the ruleset (and sets `no_new_privs`). Runs in the forked child: raw
/// system calls only, no allocation.
pub fn restrict_self(ruleset: RawFd) -> io::Result<()> {
    sandgate_sandbox::landlock_restrict_child(ruleset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn the_handled_rights_grow_with_the_abi_and_never_include_reading() {
        assert!(!handled(1).contains(AccessFs::Refer));
        assert!(!handled(1).contains(AccessFs::Truncate));
        assert!(handled(2).contains(AccessFs::Refer));
        assert!(!handled(2).contains(AccessFs::Truncate));
        assert!(handled(3).contains(AccessFs::Refer | AccessFs::Truncate));
        for abi in 1..=7 {
            assert!(handled(abi).contains(AccessFs::WriteFile | AccessFs::MakeBlock));
            assert!(!handled(abi).intersects(AccessFs::ReadFile | AccessFs::Execute));
        }
    }

    #[test]
    fn a_rule_is_opened_only_when_it_is_still_what_the_plan_saw() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        let rule = |path: &PathBuf, dir: bool| Rule {
            path: path.clone(),
            dir,
        };
        assert!(open_rule_path(&rule(&dir.path().to_path_buf(), true)).is_some());
        assert!(open_rule_path(&rule(&file, false)).is_some());
        // A directory rule on a file, or through a final symlink, grants nothing.
        assert!(open_rule_path(&rule(&file, true)).is_none());
        assert!(open_rule_path(&rule(&link, true)).is_none());
        assert!(open_rule_path(&rule(&dir.path().join("gone"), false)).is_none());
    }

    #[test]
    fn a_ruleset_is_built_where_the_kernel_has_landlock() {
        let abi = abi();
        if abi == 0 {
            assert!(
                std::env::var_os("CI").is_none_or(|v| v != "true"),
                "this kernel has no Landlock; CI needs a kernel with Landlock enabled"
            );
            eprintln!("skipping: this kernel has no Landlock");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let rules = [Rule {
            path: dir.path().to_path_buf(),
            dir: true,
        }];
        let ruleset = build(&rules, &rules, abi).unwrap();
        assert!(ruleset.raw_fd() >= 0);
    }
}
