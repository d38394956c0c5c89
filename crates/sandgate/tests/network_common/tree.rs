//! The throwaway tree of the network tests of `sandgate exec`, `sandgate
//! run` and MCP `exec_run`: a HOME with the workspace in it, a copy of sandgate's binary
//! (a copy, so the unprivileged user can run it), the policy and the test's
//! `/etc/hosts`, owned by the user the test runs as. Its includer has
//! `exe`, `wait` and `network_common` beside it.

// Not every includer reads every field.
#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::network_common::{hosts_file, text, Who};
use crate::wait::{Bounded, DEADLINE};

/// A tree the user owns: HOME, the workspace, sandgate's binary, the
/// policy and the test's `/etc/hosts`.
pub struct Tree {
    pub _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub work: PathBuf,
    pub bin: PathBuf,
    pub hosts: PathBuf,
    pub who: Who,
    /// More environment for every command the test runs in it.
    pub env: Vec<(String, String)>,
}

/// A fresh tree under `/tmp` (named `PREFIX…`) with `policy` as the
/// central `permissions.yaml`, owned by `who`.
pub fn tree_with(prefix: &str, who: Who, policy: &str) -> Tree {
    let tmp = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/tmp")
        .unwrap();
    let root = tmp.path().canonicalize().unwrap();
    fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
    let home = root.join("home");
    let work = home.join("work");
    fs::create_dir_all(&work).unwrap();
    fs::create_dir_all(home.join(".sandgate")).unwrap();
    let bin = root.join("sandgate");
    crate::exe::copy_executable(Path::new(env!("CARGO_BIN_EXE_sandgate")), &bin);
    fs::write(home.join(".sandgate/permissions.yaml"), policy).unwrap();
    let hosts = hosts_file(&root);
    if let Who::User { uid, gid } = who {
        let out = Command::new("chown")
            .arg("-R")
            .arg(format!("{uid}:{gid}"))
            .arg(&home)
            .output_within(DEADLINE)
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
    Tree {
        _tmp: tmp,
        root,
        home,
        work,
        bin,
        hosts,
        who,
        env: Vec::new(),
    }
}
