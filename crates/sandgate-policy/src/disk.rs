//! What the engine reads from the file system while it decides, behind one
//! interface.
//!
//! A decision needs the disk in four places, all of them here and nowhere
//! in the matchers: what is at the path a file tool names (a file with
//! several names may be a floor file under another one); expanding a pattern
//! a command names (`cat ~/.ss*/id_*`) by listing directories as bash's
//! globbing does; the floor's inodes (every file beneath the floor
//! directories, walked once per policy, so that a hard link to a floor file
//! is refused under its other name); and whether a file a deny rule names
//! exists, or is the file a path links to. The policy reads
//! them through the [`Disk`] it holds (`Policy::with_disk`): by
//! default [`RealDisk`], the file system of this process; a test may give
//! another.
//!
//! Resolving the paths a call names (symlinks, `..`, see `canon`) and reading
//! the policy files are the engine's other IO; they stay where they are.

use std::ffi::OsStr;
use std::fmt::Debug;
use std::ops::ControlFlow;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// What kind of file an [`Entry`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// Anything else: a device, a socket, a named pipe.
    Other,
}

/// What is at a path, not following a final symlink (`lstat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// What kind of file it is.
    pub kind: Kind,
    /// The device it is on.
    pub dev: u64,
    /// Its inode on that device.
    pub ino: u64,
    /// How many names (hard links) it has.
    pub nlink: u64,
}

impl Entry {
    /// The entry of file metadata (read with or without following a final
    /// symlink).
    pub fn of(meta: &std::fs::Metadata) -> Entry {
        let kind = meta.file_type();
        let kind = if kind.is_symlink() {
            Kind::Symlink
        } else if kind.is_dir() {
            Kind::Dir
        } else if kind.is_file() {
            Kind::File
        } else {
            Kind::Other
        };
        Entry {
            kind,
            dev: meta.dev(),
            ino: meta.ino(),
            nlink: meta.nlink(),
        }
    }
}

/// The file system as the engine reads it while deciding.
pub trait Disk: Debug + Send + Sync {
    /// Call `each` with the name of every entry of the directory `dir`, in
    /// the order the directory gives them, until it breaks; an entry that
    /// cannot be read is left out. `false` when `dir` cannot be listed.
    fn list(&self, dir: &Path, each: &mut dyn FnMut(&OsStr) -> ControlFlow<()>) -> bool;

    /// What is at `path`, not following a final symlink; `None` when nothing
    /// can be seen there.
    fn entry(&self, path: &Path) -> Option<Entry>;

    /// What `path` leads to, following symlinks; `None` when nothing can be
    /// seen there.
    fn stat(&self, path: &Path) -> Option<Entry>;
}

/// The file system of this process.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealDisk;

impl Disk for RealDisk {
    fn list(&self, dir: &Path, each: &mut dyn FnMut(&OsStr) -> ControlFlow<()>) -> bool {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return false;
        };
        for entry in entries.flatten() {
            if each(&entry.file_name()).is_break() {
                break;
            }
        }
        true
    }

    fn entry(&self, path: &Path) -> Option<Entry> {
        std::fs::symlink_metadata(path).ok().map(|m| Entry::of(&m))
    }

    fn stat(&self, path: &Path) -> Option<Entry> {
        std::fs::metadata(path).ok().map(|m| Entry::of(&m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_disk_lists_and_reads_without_following_links() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("f"), "x").unwrap();
        std::fs::hard_link(dir.join("f"), dir.join("g")).unwrap();
        std::os::unix::fs::symlink("f", dir.join("s")).unwrap();
        let mut names = Vec::new();
        assert!(RealDisk.list(dir, &mut |n| {
            names.push(n.to_os_string());
            ControlFlow::Continue(())
        }));
        names.sort();
        assert_eq!(names, ["f", "g", "s"]);
        let mut first = 0;
        RealDisk.list(dir, &mut |_| {
            first += 1;
            ControlFlow::Break(())
        });
        assert_eq!(first, 1);
        assert!(!RealDisk.list(&dir.join("missing"), &mut |_| ControlFlow::Continue(())));
        let f = RealDisk.entry(&dir.join("f")).unwrap();
        let g = RealDisk.entry(&dir.join("g")).unwrap();
        assert_eq!((f.kind, f.nlink), (Kind::File, 2));
        assert_eq!((f.dev, f.ino), (g.dev, g.ino));
        assert_eq!(RealDisk.entry(&dir.join("s")).unwrap().kind, Kind::Symlink);
        assert_eq!(RealDisk.stat(&dir.join("s")), Some(f));
        assert_eq!(RealDisk.entry(dir).unwrap().kind, Kind::Dir);
        assert_eq!(RealDisk.entry(&dir.join("missing")), None);
        assert_eq!(RealDisk.stat(&dir.join("missing")), None);
    }
}
