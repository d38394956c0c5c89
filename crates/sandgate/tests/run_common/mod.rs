//! Shared by the `run_*` tests: whether this kernel can confine, and a fresh
//! tree (workspace, an outside directory, a home) per test.
//!
//! The tree lives outside every tree `sandgate run` allows (Cargo's target
//! tmp dir unless the checkout is in a temp tree), unless a test asks for
//! another base.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use wait::{Bounded, DEADLINE};

#[path = "../../../../tests/support/outside.rs"]
pub mod outside;

#[path = "../../../../tests/support/exe.rs"]
pub mod exe;

#[path = "../../../../tests/support/wait.rs"]
pub mod wait;

#[path = "../../../../tests/support/ci.rs"]
pub mod ci;
pub use ci::skip;

/// Whether this kernel can run the confinement (Landlock present); prints why
/// not (under `CI=true` fails instead).
pub fn supported() -> bool {
    let out = Command::new(env!("CARGO_BIN_EXE_sandgate"))
        .args(["run", "--dry-run", "--json"])
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .env("SANDGATE_AUDIT", "off")
        .output_within(DEADLINE)
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    if v["mechanism"]["landlockAbi"].as_u64().unwrap_or(0) == 0 {
        skip(&format!(
            "this kernel has no Landlock ({})",
            text(&out.stderr)
        ));
        return false;
    }
    true
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `root/ws`, `root/outside` (with `keep.txt`) and `root/home`, removed when dropped.
pub struct Tree {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub ws: PathBuf,
    pub out: PathBuf,
    pub home: PathBuf,
}

impl Tree {
    /// A tree outside every tree `sandgate run` allows (see `outside.rs`).
    pub fn new() -> Tree {
        Tree::new_in(outside::base())
    }

    /// A tree in a fresh directory under `base`.
    pub fn new_in(base: &Path) -> Tree {
        fs::create_dir_all(base).unwrap();
        let tmp = tempfile::tempdir_in(base).unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (ws, out, home) = (root.join("ws"), root.join("outside"), root.join("home"));
        for d in [&ws, &out, &home] {
            fs::create_dir_all(d).unwrap();
        }
        fs::write(out.join("keep.txt"), "keep\n").unwrap();
        Tree {
            _tmp: tmp,
            root,
            ws,
            out,
            home,
        }
    }

    /// Arms the workspace through its settings file.
    pub fn armed(self) -> Tree {
        fs::create_dir_all(self.ws.join(".sandgate")).unwrap();
        fs::write(
            self.ws.join(".sandgate/sandbox.json"),
            "{\"enabled\": true}\n",
        )
        .unwrap();
        self
    }
}
