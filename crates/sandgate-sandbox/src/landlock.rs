//! Landlock: the plan as a kernel ruleset.
//!
//! Landlock only allows, it cannot deny below an allowed directory. "Read
//! everything except the denied directories" therefore becomes a list of
//! grants that walks down from `/` to each denied directory and grants every
//! sibling on the way ([`grants`], pure given a [`Tree`]). The directories on
//! that path (e.g. `/`, `/home`, `~`) get no right of their own: listing them
//! would also list the denied directory inside.

use std::ffi::OsStr;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, ABI,
};
use serde::Serialize;

use crate::enforcement::{Enforcement, EnforcementLevel};
use crate::plan::Plan;

/// The file-system rights the plan handles: every right up to ABI 5.
const FS_ABI: ABI = ABI::V5;

/// What a grant allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rights {
    /// Read and execute files, list directories.
    Read,
    /// Everything but making device nodes: read, write, create, remove,
    /// rename, truncate, device ioctl.
    ReadWrite,
    /// Read, write and truncate one file, and use device ioctls on it.
    File,
}

impl Rights {
    fn access(self) -> BitFlags<AccessFs> {
        match self {
            Rights::Read => AccessFs::from_read(FS_ABI),
            // Device nodes are never made, not even in the workdir.
            Rights::ReadWrite => {
                AccessFs::from_all(FS_ABI) & !(AccessFs::MakeChar | AccessFs::MakeBlock)
            }
            Rights::File => {
                AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev
            }
        }
    }
}

/// One Landlock rule: a path and what it allows beneath it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Grant {
    /// The file or directory.
    pub path: PathBuf,
    /// What it allows.
    pub rights: Rights,
}

/// One directory entry as [`grants`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Child {
    /// The full path.
    pub path: PathBuf,
    /// For a symlink, where it points, fully resolved (`/` when dangling).
    pub symlink_target: Option<PathBuf>,
}

/// The file-system view [`grants`] needs; the real one is [`RealTree`].
pub trait Tree {
    /// The entries of a directory.
    fn children(&self, dir: &Path) -> io::Result<Vec<Child>>;
}

/// The real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealTree;

impl Tree for RealTree {
    fn children(&self, dir: &Path) -> io::Result<Vec<Child>> {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            // The type comes with the listing; only symlinks cost a lookup.
            let is_symlink = entry.file_type().is_ok_and(|t| t.is_symlink());
            entries.push((entry.file_name(), is_symlink));
        }
        // By name: the order of the full paths, which share their parent,
        // without comparing that parent again and again.
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(entries
            .into_iter()
            .map(|(name, is_symlink)| {
                let path = dir.join(name);
                let symlink_target = is_symlink.then(|| {
                    // A dangling link grants nothing useful; treat it as pointing at `/`,
                    // which contains every denied directory and is therefore skipped.
                    std::fs::canonicalize(&path).unwrap_or_else(|_| PathBuf::from("/"))
                });
                Child {
                    path,
                    symlink_target,
                }
            })
            .collect())
    }
}

/// The grants of a plan, and the directories left without rights of their own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Grants {
    /// The rules, in order.
    pub grants: Vec<Grant>,
    /// Directories that contain a denied directory, so they cannot be listed
    /// (nor written to directly, when writable) under Landlock.
    pub unlistable: Vec<PathBuf>,
}

/// Turns the plan into Landlock grants that never cover a denied directory.
pub fn grants(plan: &Plan, tree: &dyn Tree) -> Grants {
    let mut out = Grants::default();
    for root in &plan.readable {
        expand(plan, tree, root, Rights::Read, &mut out);
    }
    for root in &plan.writable {
        expand(plan, tree, root, Rights::ReadWrite, &mut out);
    }
    for file in &plan.writable_files {
        if !plan.is_denied(file) {
            out.grants.push(Grant {
                path: file.clone(),
                rights: Rights::File,
            });
        }
    }
    out.unlistable.sort();
    out.unlistable.dedup();
    out
}

fn expand(plan: &Plan, tree: &dyn Tree, dir: &Path, rights: Rights, out: &mut Grants) {
    if plan.is_denied(dir) {
        return;
    }
    let below: Vec<&Path> = plan
        .denied
        .iter()
        .map(|d| d.path.as_path())
        .filter(|d| d.starts_with(dir) && *d != dir)
        .collect();
    expand_below(plan, tree, dir, &below, rights, out);
}

/// [`expand`] for a directory that is not denied, given the denied
/// directories strictly below it (`below`): only those can be or contain a
/// child, so each child is matched against their next component instead of
/// every denied directory.
fn expand_below(
    plan: &Plan,
    tree: &dyn Tree,
    dir: &Path,
    below: &[&Path],
    rights: Rights,
    out: &mut Grants,
) {
    if below.is_empty() {
        out.grants.push(Grant {
            path: dir.to_path_buf(),
            rights,
        });
        return;
    }
    out.unlistable.push(dir.to_path_buf());
    // An unreadable ancestor simply grants nothing below it.
    let Ok(children) = tree.children(dir) else {
        return;
    };
    // Each denied directory below, with the name of the child of `dir` it is
    // or lies in, and whether it is that child itself.
    // (`None` if one is not below `dir` after all: then every child takes
    // the general rule.)
    let next: Option<Vec<(&Path, &OsStr, bool)>> = below
        .iter()
        .map(|d| {
            let mut rest = d.strip_prefix(dir).ok()?.components();
            let name = rest.next()?.as_os_str();
            Some((*d, name, rest.next().is_none()))
        })
        .collect();
    for child in children {
        if let Some(target) = &child.symlink_target {
            // A link into (or above) a denied directory would grant it by the back door.
            if plan.is_denied(target) || contains_denied(plan, target) {
                continue;
            }
        }
        let (Some(next), Some(name)) = (&next, child.path.file_name()) else {
            expand(plan, tree, &child.path, rights, out);
            continue;
        };
        if child.path.parent() != Some(dir) {
            // Not a plain entry of `dir`: the general rule.
            expand(plan, tree, &child.path, rights, out);
            continue;
        }
        let mut child_below = Vec::new();
        let mut denied = false;
        for (d, n, is_child) in next {
            if *n == name {
                denied |= *is_child;
                child_below.push(*d);
            }
        }
        if !denied {
            expand_below(plan, tree, &child.path, &child_below, rights, out);
        }
    }
}

fn contains_denied(plan: &Plan, dir: &Path) -> bool {
    plan.denied
        .iter()
        .any(|d| d.path.starts_with(dir) && d.path != dir)
}

/// What Landlock (with the seccomp network filter) enforces of `plan` on a
/// kernel with Landlock ABI `abi` (0: none).
pub fn assess(plan: &Plan, abi: u32) -> Enforcement {
    let mut missing = Vec::new();
    let mut notes = Vec::new();
    if abi == 0 {
        missing.push(
            "Landlock is not available in this kernel: reads of denied directories and writes outside the workdir are not confined"
                .to_string(),
        );
    } else {
        if abi < 3 {
            missing.push(format!(
                "truncating files outside the workdir is not confined (needs Landlock ABI 3, the kernel has ABI {abi})"
            ));
        }
        if abi < 5 {
            missing.push(format!(
                "ioctl on device files is not confined (needs Landlock ABI 5, the kernel has ABI {abi})"
            ));
        }
        if abi >= 6 {
            notes.push("signals to processes outside the sandbox are blocked".to_string());
        }
        if !plan.network && abi >= 4 {
            notes.push("Landlock also denies TCP bind and connect".to_string());
        }
        if abi >= 6 {
            notes.push("abstract unix sockets outside the sandbox are blocked".to_string());
        }
    }
    if !plan.network {
        notes.push(
            "seccomp denies sockets other than AF_UNIX, io_uring and terminal input injection"
                .to_string(),
        );
    }
    let level = if missing.is_empty() {
        EnforcementLevel::FullyEnforced
    } else if abi == 0 && plan.network {
        EnforcementLevel::NotEnforced
    } else {
        EnforcementLevel::PartiallyEnforced
    };
    Enforcement {
        level,
        missing,
        notes,
    }
}

/// A Landlock ruleset that could not be built.
#[derive(Debug, thiserror::Error)]
pub enum LandlockError {
    /// The kernel refused the ruleset.
    #[error("cannot build the Landlock ruleset: {0}")]
    Ruleset(#[from] landlock::RulesetError),
    /// A path of the plan cannot be opened.
    #[error("cannot open `{path}` for a Landlock rule: {source}")]
    Path {
        /// The path.
        path: String,
        /// Why.
        source: landlock::PathFdError,
    },
}

/// Builds the ruleset in the parent; the child only has to restrict itself
/// with the returned fd. `None` when the kernel has no Landlock.
pub fn ruleset(plan: &Plan, grants: &Grants, abi: u32) -> Result<Option<OwnedFd>, LandlockError> {
    if abi == 0 {
        return Ok(None);
    }
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(FS_ABI))?;
    if !plan.network && abi >= 4 {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
    }
    if abi >= 6 {
        ruleset = ruleset
            .scope(Scope::Signal)?
            .scope(Scope::AbstractUnixSocket)?;
    }
    let mut created = ruleset.create()?;
    for grant in &grants.grants {
        let fd = match PathFd::new(&grant.path) {
            Ok(fd) => fd,
            // A path that vanished since the listing (or /dev/tty without a
            // terminal) grants nothing; every other failure is an error.
            Err(_) if !grant.path.exists() => continue,
            Err(source) => {
                return Err(LandlockError::Path {
                    path: grant.path.display().to_string(),
                    source,
                })
            }
        };
        created = created.add_rule(PathBeneath::new(fd, grant.rights.access()))?;
    }
    Ok(created.into())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use sandgate_policy::config::IsolationConfig;

    use super::*;
    use crate::plan::{build, PlanInput};

    /// A file system as a map from directory to entries, plus symlinks.
    struct FakeTree {
        dirs: BTreeMap<PathBuf, Vec<PathBuf>>,
        links: BTreeMap<PathBuf, PathBuf>,
    }

    impl FakeTree {
        fn new(paths: &[&str], links: &[(&str, &str)]) -> FakeTree {
            let mut dirs: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
            for p in paths.iter().chain(links.iter().map(|(l, _)| l)) {
                let path = PathBuf::from(p);
                let mut child = path.as_path();
                while let Some(parent) = child.parent() {
                    let entries = dirs.entry(parent.to_path_buf()).or_default();
                    if !entries.contains(&child.to_path_buf()) {
                        entries.push(child.to_path_buf());
                    }
                    child = parent;
                }
            }
            FakeTree {
                dirs,
                links: links
                    .iter()
                    .map(|(l, t)| (PathBuf::from(l), PathBuf::from(t)))
                    .collect(),
            }
        }
    }

    impl Tree for FakeTree {
        fn children(&self, dir: &Path) -> io::Result<Vec<Child>> {
            let mut c = self.dirs.get(dir).cloned().unwrap_or_default();
            c.sort();
            Ok(c.into_iter()
                .map(|path| Child {
                    symlink_target: self.links.get(&path).cloned(),
                    path,
                })
                .collect())
        }
    }

    fn plan(workdir: &str, deny: &[&str], allow_tmp: bool) -> Plan {
        let deny: Vec<String> = deny.iter().map(|s| s.to_string()).collect();
        let config = IsolationConfig {
            workdir: Some(workdir.into()),
            allow_tmp: Some(allow_tmp),
            ..IsolationConfig::default()
        };
        build(&PlanInput {
            config: &config,
            deny_patterns: &deny,
            cwd: Path::new("/home/ann/proj"),
            home: Path::new("/home/ann"),
            temp_dir: Path::new("/tmp"),
            other_homes: &[],
        })
        .unwrap()
    }

    fn table(g: &Grants) -> Vec<(String, Rights)> {
        g.grants
            .iter()
            .map(|g| (g.path.display().to_string(), g.rights))
            .collect()
    }

    const FS: &[&str] = &[
        "/usr/bin/sh",
        "/etc/passwd",
        "/tmp/x",
        "/home/ann/.ssh/id_ed25519",
        "/home/ann/.bashrc",
        "/home/ann/proj/src/main.rs",
        "/home/bob/notes",
    ];

    #[test]
    fn reads_walk_around_the_floor_and_writes_stay_in_the_workdir() {
        let g = grants(&plan("./", &[], false), &FakeTree::new(FS, &[]));
        use Rights::*;
        let expected = [
            ("/etc", Read),
            ("/home/ann/.bashrc", Read),
            ("/home/ann/proj", Read),
            ("/home/bob", Read),
            ("/tmp", Read),
            ("/usr", Read),
            ("/home/ann/proj", ReadWrite),
            ("/dev/null", File),
            ("/dev/tty", File),
        ];
        let expected: Vec<(String, Rights)> =
            expected.iter().map(|(p, r)| (p.to_string(), *r)).collect();
        assert_eq!(table(&g), expected);
        assert_eq!(
            g.unlistable,
            [
                PathBuf::from("/"),
                PathBuf::from("/home"),
                PathBuf::from("/home/ann")
            ]
        );
    }

    #[test]
    fn no_grant_ever_covers_a_denied_dir() {
        let p = plan("~", &["/etc/**", "./src/**"], true);
        let g = grants(&p, &FakeTree::new(FS, &[]));
        for grant in &g.grants {
            for d in &p.denied {
                assert!(
                    !d.path.starts_with(&grant.path),
                    "{grant:?} covers {:?}",
                    d.path
                );
            }
        }
        // The home directory is writable only entry by entry.
        assert!(g.grants.contains(&Grant {
            path: "/home/ann/.bashrc".into(),
            rights: Rights::ReadWrite
        }));
        assert!(g.grants.contains(&Grant {
            path: "/tmp".into(),
            rights: Rights::ReadWrite
        }));
        assert!(g.unlistable.contains(&PathBuf::from("/home/ann")));
        assert!(g.unlistable.contains(&PathBuf::from("/home/ann/proj")));
    }

    #[test]
    fn symlinks_into_or_above_a_denied_dir_are_not_granted() {
        let tree = FakeTree::new(
            FS,
            &[
                ("/home/ann/keys", "/home/ann/.ssh"),
                ("/home/ann/up", "/home"),
                ("/home/ann/bin", "/usr/bin"),
            ],
        );
        let g = grants(&plan("./", &[], false), &tree);
        let paths: Vec<String> = table(&g).into_iter().map(|(p, _)| p).collect();
        assert!(!paths.contains(&"/home/ann/keys".to_string()));
        assert!(!paths.contains(&"/home/ann/up".to_string()));
        assert!(paths.contains(&"/home/ann/bin".to_string()));
    }

    #[test]
    fn assess_levels_by_abi() {
        let p = plan("./", &[], false);
        assert_eq!(assess(&p, 7).level, EnforcementLevel::FullyEnforced);
        assert!(assess(&p, 7).missing.is_empty());
        assert_eq!(assess(&p, 5).level, EnforcementLevel::FullyEnforced);
        let old = assess(&p, 2);
        assert_eq!(old.level, EnforcementLevel::PartiallyEnforced);
        assert_eq!(old.missing.len(), 2);
        assert!(old.missing[0].contains("needs Landlock ABI 3, the kernel has ABI 2"));
        assert_eq!(assess(&p, 0).level, EnforcementLevel::PartiallyEnforced);
        let mut open = p.clone();
        open.network = true;
        assert_eq!(assess(&open, 0).level, EnforcementLevel::NotEnforced);
    }
}
