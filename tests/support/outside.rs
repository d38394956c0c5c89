//! A base directory for test trees that must lie outside every tree
//! `sandgate run` lets a program write, wherever the checkout is.
//!
//! Cargo's target tmp dir is the first choice. A checkout under `/tmp`,
//! `/var/tmp` or `/dev/shm` puts it inside a temp tree `sandgate run` allows,
//! and a write that should ask would land silently; then the base is
//! `/run/sandgate-tests` (root) or `$HOME/.sandgate-tests` (the runner's real
//! home, which the tests never give the confined program).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The temp trees every confined program may write.
const TEMP_TREES: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];

/// Whether `path` (canonical) lies in a temp tree.
pub fn in_temp_tree(path: &Path) -> bool {
    TEMP_TREES.iter().any(|t| {
        let t = fs::canonicalize(t).unwrap_or_else(|_| PathBuf::from(t));
        path.starts_with(t)
    })
}

/// The base, created once per test process.
pub fn base() -> &'static Path {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        let mut candidates = vec![PathBuf::from(env!("CARGO_TARGET_TMPDIR"))];
        candidates.push(PathBuf::from("/run/sandgate-tests"));
        if let Some(home) = std::env::var_os("HOME") {
            candidates.push(Path::new(&home).join(".sandgate-tests"));
        }
        for dir in &candidates {
            if fs::create_dir_all(dir).is_err() {
                continue;
            }
            let Ok(dir) = fs::canonicalize(dir) else {
                continue;
            };
            if !in_temp_tree(&dir) {
                return dir;
            }
        }
        panic!(
            "no directory for test trees outside /tmp, /var/tmp and /dev/shm: tried {candidates:?}"
        );
    })
}
