//! The floor under other names: hard links made before the command starts,
//! bind mounts that show a floor directory or file elsewhere, and
//! descriptors inherited already open on the floor.
//!
//! Exec isolation and `sandgate run` hide the floor by path (an empty mount,
//! Landlock rules carved around it). A floor file reached under another
//! name is the same inode: read or written there, it is the key itself. So
//! before a confined program starts, every other name of a floor file is
//! found ([`aliases`]) and hidden and held read-only like the floor, and a
//! start with a descriptor open on the floor is refused ([`inherited`]).
//! Which inodes are the floor's is one definition,
//! [`sandgate_policy::floor::FloorInodes`], which the gate uses too.
//!
//! A file's other names can lie anywhere on its file system, and nothing
//! but a walk finds them. Its link count says how many there are, so the
//! walk knows when it has found them all; if it cannot (a name in a
//! directory this user cannot list, or too many entries), the start is
//! refused rather than left with a name the program could use.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};

use sandgate_policy::floor::FloorInodes;

/// The walk for other names looks at this many directory entries at most.
pub const LINK_SCAN_BUDGET: usize = 1_000_000;

/// Another name of the floor, outside the floor directories.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FloorAlias {
    /// The other name (absolute, as this process sees it).
    pub path: PathBuf,
    /// The floor's name of the same file or directory.
    pub floor: PathBuf,
    /// Whether it is a directory (a bind mount of a floor directory).
    pub dir: bool,
}

/// Why a confined program cannot start without reaching the floor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FloorReach {
    /// A floor file has names that the walk did not find.
    #[error(
        "the floor file `{floor}` has {links} names and only {found} of them could be found \
         (the walk looks at {budget} entries at most and skips what this user cannot list): \
         a confined program could read or write it through another; remove its other hard \
         links (`find / -xdev -samefile {floor}` lists them)",
        floor = floor.display(),
        budget = LINK_SCAN_BUDGET
    )]
    Unfound {
        /// The floor's name of the file.
        floor: PathBuf,
        /// Its link count.
        links: u64,
        /// How many names were found, the floor's own included.
        found: u64,
    },
    /// A descriptor the program would inherit is open on the floor.
    #[error(
        "descriptor {fd} is open on the floor's `{}`: a confined program would read or write \
         it through that descriptor; start sandgate without it",
        path.display()
    )]
    Inherited {
        /// The descriptor.
        fd: i32,
        /// The floor's name of what it is open on.
        path: PathBuf,
    },
}

/// Every other name of the floor: the other hard links of its files with
/// more than one link, looked for first beneath `first` (the trees the
/// program may write), then beneath the floor's homes, then across each
/// file system that holds such a file; and the bind mounts that show a
/// floor directory or file elsewhere. `Err` names a file whose names were
/// not all found.
pub fn aliases(inodes: &FloorInodes, first: &[PathBuf]) -> Result<Vec<FloorAlias>, FloorReach> {
    let mut out = bind_aliases(inodes);
    let mut wanted: HashMap<(u64, u64), (PathBuf, u64, u64)> = HashMap::new();
    for (key, file) in inodes.linked() {
        let found = file.names.len() as u64;
        if found < file.links {
            if let Some(name) = file.names.first() {
                wanted.insert(key, (name.clone(), file.links, found));
            }
        }
    }
    if wanted.is_empty() {
        return Ok(out);
    }
    let floor_dirs: Vec<PathBuf> = inodes.dirs().map(Path::to_path_buf).collect();
    let devices: HashSet<u64> = wanted.keys().map(|(dev, _)| *dev).collect();
    let mut roots: Vec<PathBuf> = first.to_vec();
    for dir in &floor_dirs {
        if let Some(home) = dir.parent() {
            roots.push(home.to_path_buf());
        }
    }
    for (name, _, _) in wanted.values() {
        roots.push(mount_root(name));
    }
    let mut walk = Walk {
        wanted,
        devices,
        floor_dirs,
        visited: HashSet::new(),
        names: HashSet::new(),
        budget: LINK_SCAN_BUDGET,
        found: Vec::new(),
    };
    for root in roots {
        if walk.done() {
            break;
        }
        walk.walk(&root);
    }
    out.append(&mut walk.found);
    if let Some((name, links, found)) = walk.wanted.into_values().next() {
        return Err(FloorReach::Unfound {
            floor: name,
            links,
            found,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup();
    Ok(out)
}

/// The top directory of the file system that holds `path`, as this process
/// sees it: the highest ancestor on the same device.
fn mount_root(path: &Path) -> PathBuf {
    let Ok(dev) = std::fs::symlink_metadata(path).map(|m| m.dev()) else {
        return PathBuf::from("/");
    };
    let mut top = path.to_path_buf();
    for ancestor in path.ancestors().skip(1) {
        match std::fs::metadata(ancestor) {
            Ok(meta) if meta.dev() == dev => top = ancestor.to_path_buf(),
            _ => break,
        }
    }
    top
}

/// The search for the other names of the floor's linked files.
struct Walk {
    /// (device, inode) → (floor name, link count, names found so far).
    wanted: HashMap<(u64, u64), (PathBuf, u64, u64)>,
    /// The devices that hold a wanted file: no other is entered.
    devices: HashSet<u64>,
    /// The floor directories: their names were counted already.
    floor_dirs: Vec<PathBuf>,
    /// Directories walked, by (device, inode).
    visited: HashSet<(u64, u64)>,
    /// Names found, by (directory device, directory inode, name).
    names: HashSet<(u64, u64, OsString)>,
    budget: usize,
    found: Vec<FloorAlias>,
}

impl Walk {
    fn done(&self) -> bool {
        self.wanted.is_empty() || self.budget == 0
    }

    /// Walks `root` without following symlinks or leaving the wanted
    /// devices.
    fn walk(&mut self, root: &Path) {
        let mut pending = vec![root.to_path_buf()];
        while let Some(dir) = pending.pop() {
            if self.done() {
                return;
            }
            if self.floor_dirs.iter().any(|f| dir.starts_with(f)) {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&dir) else {
                continue;
            };
            let key = (meta.dev(), meta.ino());
            if !meta.is_dir() || !self.devices.contains(&key.0) || !self.visited.insert(key) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                if self.budget == 0 {
                    return;
                }
                self.budget -= 1;
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    pending.push(entry.path());
                    continue;
                }
                if !kind.is_file() || !self.wanted.keys().any(|(_, ino)| *ino == entry.ino()) {
                    continue;
                }
                let Ok(file) = entry.metadata() else { continue };
                let file_key = (file.dev(), file.ino());
                let Some((floor, links, found)) = self.wanted.get_mut(&file_key) else {
                    continue;
                };
                if !self.names.insert((key.0, key.1, entry.file_name())) {
                    continue;
                }
                self.found.push(FloorAlias {
                    path: entry.path(),
                    floor: floor.clone(),
                    dir: false,
                });
                *found += 1;
                if *found >= *links {
                    self.wanted.remove(&file_key);
                }
            }
        }
    }
}

/// One line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MountInfo {
    /// `major:minor`.
    device: String,
    /// The directory of the file system the mount shows.
    root: PathBuf,
    /// Where it is mounted.
    point: PathBuf,
}

/// The mounts of this process's mount namespace.
fn mounts() -> Vec<MountInfo> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    text.lines().filter_map(parse_mountinfo).collect()
}

/// Parses one line of `mountinfo` (`36 35 98:0 /mnt1 /mnt2 rw … - ext3 …`).
fn parse_mountinfo(line: &str) -> Option<MountInfo> {
    let mut fields = line.split(' ');
    let _id = fields.next()?;
    let _parent = fields.next()?;
    let device = fields.next()?.to_string();
    let root = unescape(fields.next()?);
    let point = unescape(fields.next()?);
    Some(MountInfo {
        device,
        root,
        point,
    })
}

/// Undoes `mountinfo`'s octal escapes (`\040` for a space).
fn unescape(field: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

/// The places where a mount shows a floor directory, or something beneath
/// one, under a path other than the floor's own.
fn bind_aliases(inodes: &FloorInodes) -> Vec<FloorAlias> {
    let mounts = mounts();
    let mut out = Vec::new();
    for floor in inodes.dirs() {
        let Ok(meta) = std::fs::metadata(floor) else {
            continue;
        };
        // The mount that shows the floor directory here: the deepest one
        // whose mount point holds it.
        let Some(home) = mounts
            .iter()
            .filter(|m| floor.starts_with(&m.point))
            .max_by_key(|m| m.point.components().count())
        else {
            continue;
        };
        let Ok(rest) = floor.strip_prefix(&home.point) else {
            continue;
        };
        let inside = home.root.join(rest);
        for mount in mounts.iter().filter(|m| m.device == home.device) {
            let shown = if let Ok(rest) = inside.strip_prefix(&mount.root) {
                mount.point.join(rest)
            } else if mount.root.starts_with(&inside) {
                mount.point.clone()
            } else {
                continue;
            };
            if shown.starts_with(floor) {
                continue;
            }
            let Ok(there) = std::fs::metadata(&shown) else {
                continue;
            };
            let same = (there.dev(), there.ino()) == (meta.dev(), meta.ino());
            let beneath = inodes.name_of(there.dev(), there.ino());
            if same || beneath.is_some() {
                let floor = beneath.map_or_else(|| floor.to_path_buf(), Path::to_path_buf);
                out.push(FloorAlias {
                    path: shown,
                    floor,
                    dir: there.is_dir(),
                });
            }
        }
    }
    out
}

/// The descriptors this process would pass to a program it starts (those
/// without close-on-exec) that are open on a floor file or directory.
pub fn inherited(inodes: &FloorInodes) -> Result<(), FloorReach> {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return Ok(());
    };
    let mut fds: Vec<i32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    fds.sort_unstable();
    for fd in fds {
        let Ok(info) = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")) else {
            continue;
        };
        let flags = info
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|v| u32::from_str_radix(v.trim(), 8).ok());
        if flags.is_none_or(|f| f & libc::O_CLOEXEC as u32 != 0) {
            continue;
        }
        let Ok(meta) = std::fs::metadata(format!("/proc/self/fd/{fd}")) else {
            continue;
        };
        if let Some(path) = inodes.name_of(meta.dev(), meta.ino()) {
            return Err(FloorReach::Inherited {
                fd,
                path: path.to_path_buf(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_are_read_with_their_escapes() {
        let line = "36 35 98:0 /mnt1 /mnt\\0402 rw,noatime master:1 - ext3 /dev/root rw";
        assert_eq!(
            parse_mountinfo(line),
            Some(MountInfo {
                device: "98:0".into(),
                root: "/mnt1".into(),
                point: "/mnt 2".into(),
            })
        );
        assert_eq!(unescape("a\\134b\\0"), PathBuf::from("a\\b\\0"));
    }

    #[test]
    fn other_hard_links_are_found_and_counted() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let ssh = home.join(".ssh");
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(&ssh).unwrap();
        std::fs::create_dir_all(ws.join("deep")).unwrap();
        std::fs::write(ssh.join("id_rsa"), "KEY").unwrap();
        std::fs::write(ssh.join("lonely"), "x").unwrap();
        std::fs::hard_link(ssh.join("id_rsa"), ws.join("deep/key")).unwrap();
        std::fs::hard_link(ssh.join("id_rsa"), home.join("backup")).unwrap();
        let inodes = FloorInodes::collect(std::slice::from_ref(&ssh));
        let found = aliases(&inodes, std::slice::from_ref(&ws)).unwrap();
        let paths: Vec<&Path> = found.iter().map(|a| a.path.as_path()).collect();
        assert_eq!(paths, [home.join("backup"), ws.join("deep/key")]);
        assert!(found
            .iter()
            .all(|a| a.floor == ssh.join("id_rsa") && !a.dir));
        let plain = FloorInodes::collect(&[ws.join("deep")]);
        assert!(inherited(&plain).is_ok());
    }
}
