//! What a decision reads from the file system goes through the policy's
//! `Disk` (what is at a file tool's path, patterns expanded, the floor's
//! inodes, the files deny rules name),
//! so a policy given another disk decides from what that disk says: each case
//! here is decided one way on the real file system and the other way on a
//! made-up one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod shell_common;

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::ops::ControlFlow;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sandgate_policy::disk::{Disk, Entry, Kind};
use sandgate_policy::{Policy, ToolCall, Verdict};
use shell_common::Home;

/// A file system made of a table: what is at each path, and what each
/// directory lists.
#[derive(Debug, Default)]
struct FakeDisk {
    entries: BTreeMap<PathBuf, Entry>,
    lists: BTreeMap<PathBuf, Vec<OsString>>,
}

impl FakeDisk {
    fn dir(&mut self, path: &Path, names: &[&str], ino: u64) {
        self.entries.insert(
            path.to_path_buf(),
            Entry {
                kind: Kind::Dir,
                dev: 1,
                ino,
                nlink: 2,
            },
        );
        self.lists.insert(
            path.to_path_buf(),
            names.iter().map(OsString::from).collect(),
        );
    }
}

impl Disk for FakeDisk {
    fn list(&self, dir: &Path, each: &mut dyn FnMut(&OsStr) -> ControlFlow<()>) -> bool {
        let Some(names) = self.lists.get(dir) else {
            return false;
        };
        for name in names {
            if each(name).is_break() {
                break;
            }
        }
        true
    }

    fn entry(&self, path: &Path) -> Option<Entry> {
        self.entries.get(path).copied()
    }

    fn stat(&self, path: &Path) -> Option<Entry> {
        self.entries.get(path).copied()
    }
}

const POLICY: &str = r#"
permissions:
  paths:
    deny: ["~/vault/key"]
    allow: ["/**"]
  commands:
    allow: ["^cat( |$)"]
"#;

fn both(home: &Home, disk: FakeDisk) -> (Policy, Policy) {
    let real = home.policy(POLICY, None);
    let fake = home.policy(POLICY, None).with_disk(Arc::new(disk));
    (real, fake)
}

fn command(policy: &Policy, home: &Home, line: &str) -> (Verdict, String) {
    let call = ToolCall::new("exec_run", serde_json::json!({ "command": line }));
    let d = policy.evaluate(&call, &home.ctx);
    (d.verdict, d.reason)
}

#[test]
fn a_pattern_is_expanded_on_the_policys_disk() {
    let home = Home::new();
    let h = home.ctx.home.clone();
    // `~/vault` does not exist on the real disk; the fake one lists it.
    let mut disk = FakeDisk::default();
    disk.dir(&h.join("vault"), &["notes", "key"], 10);
    let (real, fake) = both(&home, disk);
    let line = "cat ~/vault/k?y";
    let (verdict, reason) = command(&real, &home, line);
    assert_eq!(verdict, Verdict::Allow, "{reason}");
    let (verdict, reason) = command(&fake, &home, line);
    assert_eq!(verdict, Verdict::Deny, "{reason}");
    assert!(reason.contains("~/vault/key"), "{reason}");
}

#[test]
fn a_pattern_over_a_large_directory_of_the_policys_disk_asks() {
    let home = Home::new();
    let h = home.ctx.home.clone();
    let names: Vec<String> = (0..5000).map(|i| format!("f{i}.txt")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut disk = FakeDisk::default();
    disk.dir(&h.join("big"), &names, 11);
    let (real, fake) = both(&home, disk);
    let line = "cat ~/big/*.txt";
    let (verdict, reason) = command(&real, &home, line);
    assert_eq!(verdict, Verdict::Allow, "{reason}");
    let (verdict, reason) = command(&fake, &home, line);
    assert_eq!(verdict, Verdict::Ask, "{reason}");
    assert!(
        reason.contains("matches more files than the gate checks"),
        "{reason}"
    );
}

#[test]
fn the_floor_inodes_are_walked_on_the_policys_disk() {
    let home = Home::new();
    let h = home.ctx.home.clone();
    // A real file with two names; on the fake disk, one of the floor's
    // files is that same inode.
    let notes = home.ctx.cwd.join("notes.txt");
    std::fs::write(&notes, "x\n").unwrap();
    std::fs::hard_link(&notes, home.ctx.cwd.join("again.txt")).unwrap();
    let meta = std::fs::metadata(&notes).unwrap();
    let file = Entry {
        kind: Kind::File,
        dev: meta.dev(),
        ino: meta.ino(),
        nlink: meta.nlink(),
    };
    let mut disk = FakeDisk::default();
    disk.dir(&h.join(".ssh"), &["id_rsa"], 12);
    disk.entries.insert(h.join(".ssh/id_rsa"), file);
    disk.entries.insert(notes.clone(), file);
    let (real, fake) = both(&home, disk);
    let read = ToolCall::new("file_read", serde_json::json!({ "path": "notes.txt" }));
    let d = real.evaluate(&read, &home.ctx);
    assert_eq!(d.verdict, Verdict::Allow, "{}", d.reason);
    let d = fake.evaluate(&read, &home.ctx);
    assert_eq!(d.verdict, Verdict::Deny, "{}", d.reason);
    assert!(
        d.reason.contains("hard link to the floor file"),
        "{}",
        d.reason
    );
    let (verdict, reason) = command(&fake, &home, "cat notes.txt");
    assert_eq!(verdict, Verdict::Deny, "{reason}");
}
