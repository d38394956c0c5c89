//! The built-in floor: the paths no rule, no answer and no mode opens.
//!
//! This is the one definition. The gate (`Policy::evaluate`, used by
//! `sandgate check`, the agent hooks and the MCP tools) compiles it into deny
//! rules that come before every list; exec isolation denies its directories to
//! an isolated command; `sandgate run` reads it into its plan; `sandgate policy
//! lint` checks rules against it. Each entry says why it is there. The
//! floor's private files are also known by inode ([`FloorInodes`]), so that
//! the gate refuses them under another name (a hard link) and exec isolation
//! and `sandgate run` find and hide their other names.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::decision::Origin;
use crate::disk::{Disk, Entry, Kind, RealDisk};
use crate::rules::SourceRule;

/// One directory of the floor, relative to the home directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FloorEntry {
    /// The directory, relative to the home directory (`.ssh`).
    pub dir: &'static str,
    /// Why it is on the floor, in words.
    pub why: &'static str,
}

/// The name of sandgate's own directory beneath the home directory: its
/// policy, its compiled-policy cache and its audit log. It is on the floor.
pub const SANDGATE_DIR: &str = ".sandgate";

/// The floor, in the order its rules are reported.
pub const FLOOR: &[FloorEntry] = &[
    FloorEntry {
        dir: ".ssh",
        why: "SSH private keys and the hosts they open (authorized_keys, config)",
    },
    FloorEntry {
        dir: ".aws",
        why: "cloud credentials",
    },
    FloorEntry {
        dir: ".gnupg",
        why: "GnuPG private keys and trust",
    },
    FloorEntry {
        dir: SANDGATE_DIR,
        why: "sandgate's own policy, cache and audit log: whoever writes them lifts every rule",
    },
];

impl FloorEntry {
    /// The entry as a path rule: `~/<dir>/**`.
    pub fn glob(&self) -> String {
        format!("~/{}/**", self.dir)
    }

    /// The directory beneath `home`.
    pub fn path(&self, home: &Path) -> PathBuf {
        home.join(self.dir)
    }
}

/// The floor's path rules (`~/.ssh/**`, …), in order.
pub fn globs() -> Vec<String> {
    FLOOR.iter().map(FloorEntry::glob).collect()
}

/// The home directories the floor covers: `home` (what `~` means here)
/// and, when it is another directory, the home the user database gives the
/// effective user, where `ssh` and the other tools look for their keys
/// whatever `$HOME` says. A process started with `HOME` pointing elsewhere
/// keeps the real keys out of reach.
pub fn homes(home: &Path) -> Vec<PathBuf> {
    let mut out = vec![home.to_path_buf()];
    if let Some(account) = account_home() {
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        if canonical(&account) != canonical(home) {
            out.push(account);
        }
    }
    out
}

/// The effective user's home in the user database, looked up once.
fn account_home() -> Option<PathBuf> {
    static HOME: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        let user = nix::unistd::User::from_uid(nix::unistd::geteuid()).ok()??;
        (user.dir.is_absolute() && user.dir != Path::new("/")).then_some(user.dir)
    })
    .clone()
}

/// The floor's directories beneath `home`, in order: what exec isolation
/// and `sandgate run` hide and hold.
pub fn dirs(home: &Path) -> Vec<PathBuf> {
    FLOOR.iter().map(|entry| entry.path(home)).collect()
}

/// The floor's directories beneath each of [`homes`], in order: what the
/// gate denies.
pub fn gate_dirs(home: &Path) -> Vec<PathBuf> {
    homes(home)
        .iter()
        .flat_map(|h| FLOOR.iter().map(move |entry| entry.path(h)))
        .collect()
}

/// The floor's entry whose directory is `path` or holds it, beneath any of
/// [`homes`].
pub fn entry_for(path: &Path, home: &Path) -> Option<&'static FloorEntry> {
    let homes = homes(home);
    FLOOR
        .iter()
        .find(|entry| homes.iter().any(|h| path.starts_with(entry.path(h))))
}

/// The floor as built-in source rules for `home`: the `~/…` rules, and the
/// same directories of the account's home when it is another one (see
/// [`homes`]), as absolute rules.
pub(crate) fn source_rules_for(home: &Path) -> Vec<SourceRule> {
    let mut rules = source_rules();
    for other in homes(home).iter().skip(1) {
        let Some(text) = other.to_str() else { continue };
        let escaped: String = text
            .chars()
            .flat_map(|c| {
                let special = matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\');
                special
                    .then_some('\\')
                    .into_iter()
                    .chain(std::iter::once(c))
            })
            .collect();
        rules.extend(FLOOR.iter().map(|entry| SourceRule {
            text: format!("{escaped}/{}/**", entry.dir),
            origin: Origin::Builtin,
            column: 0,
            access: None,
        }));
    }
    rules
}

/// The floor as built-in source rules, for compiling and linting.
pub(crate) fn source_rules() -> Vec<SourceRule> {
    FLOOR
        .iter()
        .map(|entry| SourceRule {
            text: entry.glob(),
            origin: Origin::Builtin,
            column: 0,
            access: None,
        })
        .collect()
}

/// The floor directories of the compiled floor globs (`/home/me/.ssh/**` →
/// `/home/me/.ssh`).
pub(crate) fn floor_dirs(globs: &[String]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for g in globs {
        if let Some(dir) = g.strip_suffix("/**") {
            let dir = PathBuf::from(dir);
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// Floor directories are walked this deep for [`FloorInodes`]…
const MAX_FLOOR_DEPTH: usize = 8;
/// …and at most this many entries are looked at.
const MAX_FLOOR_ENTRIES: usize = 10_000;

/// A regular floor file with more than one link: its other names may lie
/// anywhere on its file system, outside the floor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedFile {
    /// Its names beneath the floor directories.
    pub names: Vec<PathBuf>,
    /// How many names it has in all (its link count).
    pub links: u64,
}

/// The floor directories hold too many files to tell whether a file with
/// several links is one of theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Undecided;

/// The inodes of the floor: what each surface compares a file with to know
/// whether it is the floor under another name (a hard link made before, a
/// bind mount, a descriptor opened outside). This is the one definition of
/// which files those are; the gate looks names up in it, exec isolation and
/// `sandgate run` look for the other names and check inherited descriptors.
#[derive(Debug, Clone, Default)]
pub struct FloorInodes {
    /// The floor directories that exist, as given.
    dirs: Vec<PathBuf>,
    /// (device, inode) of every file and directory beneath the floor
    /// directories, the directories included, with one of its floor names.
    all: HashMap<(u64, u64), PathBuf>,
    /// (device, inode) of every regular floor file with more than one link.
    linked: HashMap<(u64, u64), LinkedFile>,
    /// The walk stopped early: a file with several links may be a floor file.
    incomplete: bool,
}

impl FloorInodes {
    /// Walks `dirs` (the floor directories; each is small) on this process's
    /// file system: [`FloorInodes::collect_from`] with [`RealDisk`].
    pub fn collect(dirs: &[PathBuf]) -> FloorInodes {
        FloorInodes::collect_from(&RealDisk, dirs)
    }

    /// Walks `dirs` (the floor directories; each is small) on `disk` without
    /// following symlinks, at most 8 levels deep and 10,000 entries in all.
    pub fn collect_from(disk: &dyn Disk, dirs: &[PathBuf]) -> FloorInodes {
        let mut out = FloorInodes::default();
        let mut seen = 0usize;
        let mut stack: Vec<(PathBuf, usize)> = Vec::new();
        for dir in dirs {
            if let Some(meta) = disk.entry(dir) {
                if meta.kind == Kind::Dir {
                    out.all.insert((meta.dev, meta.ino), dir.clone());
                    out.dirs.push(dir.clone());
                    stack.push((dir.clone(), 0));
                }
            }
        }
        while let Some((dir, depth)) = stack.pop() {
            let mut stop = false;
            disk.list(&dir, &mut |name| {
                seen += 1;
                if seen > MAX_FLOOR_ENTRIES {
                    stop = true;
                    return ControlFlow::Break(());
                }
                let path = dir.join(name);
                let Some(meta) = disk.entry(&path) else {
                    return ControlFlow::Continue(());
                };
                let key = (meta.dev, meta.ino);
                if meta.kind == Kind::Symlink {
                    return ControlFlow::Continue(());
                }
                out.all.entry(key).or_insert_with(|| path.clone());
                if meta.kind == Kind::Dir {
                    if depth + 1 >= MAX_FLOOR_DEPTH {
                        out.incomplete = true;
                    } else {
                        stack.push((path, depth + 1));
                    }
                } else if meta.kind == Kind::File && meta.nlink > 1 {
                    let file = out.linked.entry(key).or_insert_with(|| LinkedFile {
                        names: Vec::new(),
                        links: meta.nlink,
                    });
                    file.names.push(path);
                }
                ControlFlow::Continue(())
            });
            if stop {
                out.incomplete = true;
                return out;
            }
        }
        for file in out.linked.values_mut() {
            file.names.sort();
        }
        out
    }

    /// The inodes of single files (the credential files a policy denies),
    /// so that their other names are found like the floor's: each existing
    /// regular file with more than one link.
    pub fn of_files(files: &[PathBuf]) -> FloorInodes {
        let mut out = FloorInodes::default();
        for file in files {
            let Some(meta) = RealDisk.entry(file) else {
                continue;
            };
            if meta.kind != Kind::File {
                continue;
            }
            let key = (meta.dev, meta.ino);
            out.all.entry(key).or_insert_with(|| file.clone());
            if meta.nlink > 1 {
                let linked = out.linked.entry(key).or_insert_with(|| LinkedFile {
                    names: Vec::new(),
                    links: meta.nlink,
                });
                if !linked.names.contains(file) {
                    linked.names.push(file.clone());
                }
            }
        }
        out
    }

    /// The floor file `meta` is another name of, if it is one. `Err` when
    /// that cannot be ruled out.
    pub fn lookup(&self, meta: &Entry) -> Result<Option<&Path>, Undecided> {
        if meta.kind != Kind::File || meta.nlink < 2 {
            return Ok(None);
        }
        match self.linked.get(&(meta.dev, meta.ino)) {
            Some(file) => Ok(file.names.first().map(PathBuf::as_path)),
            None if self.incomplete => Err(Undecided),
            None => Ok(None),
        }
    }

    /// The floor's name of the file or directory (device, inode), if it is
    /// one of the floor's, whatever its link count.
    pub fn name_of(&self, dev: u64, ino: u64) -> Option<&Path> {
        self.all.get(&(dev, ino)).map(PathBuf::as_path)
    }

    /// The regular floor files with more than one link, keyed by (device,
    /// inode).
    pub fn linked(&self) -> impl Iterator<Item = ((u64, u64), &LinkedFile)> {
        self.linked.iter().map(|(k, v)| (*k, v))
    }

    /// The floor directories that exist.
    pub fn dirs(&self) -> impl Iterator<Item = &Path> {
        self.dirs.iter().map(PathBuf::as_path)
    }

    /// Whether the walk stopped before it saw every floor file.
    pub fn incomplete(&self) -> bool {
        self.incomplete
    }
}

/// Files directly in one floor directory that stay readable under `sandgate
/// run`, which hides the rest of the directory's files from the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadableFiles {
    /// The floor directory, relative to the home directory.
    pub dir: &'static str,
    /// File names that stay readable.
    pub names: &'static [&'static str],
    /// Name endings that stay readable (a name longer than the ending).
    pub suffixes: &'static [&'static str],
    /// Why they may be read, in words.
    pub why: &'static str,
}

/// The files of the floor that stay readable under `sandgate run`: in
/// `~/.ssh`, `config`, `known_hosts`, `known_hosts2` and the public keys.
pub const READABLE_FILES: &[ReadableFiles] = &[ReadableFiles {
    dir: ".ssh",
    names: &["config", "known_hosts", "known_hosts2"],
    suffixes: &[".pub"],
    why: "`ssh` reads them to reach a host with a key held by `ssh-agent`, and none is a secret; the private keys are",
}];

/// Whether the regular file `name` directly in the floor directory `dir`
/// stays readable under `sandgate run` (see [`READABLE_FILES`]).
pub fn file_readable(dir: &str, name: &str) -> bool {
    READABLE_FILES.iter().any(|files| {
        files.dir == dir
            && (files.names.contains(&name)
                || files
                    .suffixes
                    .iter()
                    .any(|suffix| name.len() > suffix.len() && name.ends_with(suffix)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_listed_files_of_a_floor_directory_stay_readable() {
        for dir in READABLE_FILES.iter().map(|files| files.dir) {
            assert!(FLOOR.iter().any(|entry| entry.dir == dir), "{dir}");
        }
        let ssh = FLOOR[0].dir;
        for name in [
            "config",
            "known_hosts",
            "known_hosts2",
            "id_ed25519.pub",
            "x.pub",
        ] {
            assert!(file_readable(ssh, name), "{name}");
        }
        for name in ["id_ed25519", "authorized_keys", ".pub", "config.bak", "pub"] {
            assert!(!file_readable(ssh, name), "{name}");
        }
        assert!(!file_readable(FLOOR[1].dir, "config"));
        assert!(!file_readable(SANDGATE_DIR, "x.pub"));
    }

    #[test]
    fn every_entry_says_why_and_is_one_plain_directory() {
        for entry in FLOOR {
            assert!(!entry.why.is_empty(), "{entry:?}");
            assert!(entry.dir.starts_with('.'), "{entry:?}");
            assert!(!entry.dir.contains('/'), "{entry:?}");
        }
        let mut names: Vec<_> = FLOOR.iter().map(|e| e.dir).collect();
        names.dedup();
        assert_eq!(names.len(), FLOOR.len());
    }

    #[test]
    fn globs_dirs_and_rules_come_from_the_same_entries() {
        let home = Path::new("/home/ann");
        assert_eq!(
            globs(),
            ["~/.ssh/**", "~/.aws/**", "~/.gnupg/**", "~/.sandgate/**"]
        );
        assert_eq!(
            dirs(home),
            [
                home.join(".ssh"),
                home.join(".aws"),
                home.join(".gnupg"),
                home.join(".sandgate")
            ]
        );
        let texts: Vec<String> = source_rules().into_iter().map(|r| r.text).collect();
        assert_eq!(texts, globs());
    }

    #[test]
    fn entry_for_finds_the_directory_and_what_is_beneath_it_only() {
        let home = Path::new("/home/ann");
        assert_eq!(
            entry_for(Path::new("/home/ann/.ssh/id_ed25519"), home).map(|e| e.dir),
            Some(".ssh")
        );
        assert_eq!(
            entry_for(Path::new("/home/ann/.sandgate"), home).map(|e| e.dir),
            Some(SANDGATE_DIR)
        );
        assert_eq!(entry_for(Path::new("/home/ann/.sshrc"), home), None);
        assert_eq!(entry_for(Path::new("/home/bob/.ssh"), home), None);
    }
}
