//! Files a test writes and then executes.
//!
//! A file open for writing cannot be executed ("Text file busy"), and every
//! child another test thread forks while this process holds the write
//! descriptor inherits it until that child calls exec. So a test never
//! writes an executable itself: a short-lived `cp` writes it, and the
//! descriptor lives only in that process.
//!
//! Its includer provides `wait` (tests/support/wait.rs) beside it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use super::wait::{Bounded, DEADLINE};

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// Copies the executable `from` to `to` (mode 0755).
pub fn copy_executable(from: &Path, to: &Path) {
    let out = Command::new("cp")
        .arg("--")
        .arg(from)
        .arg(to)
        .output_within(DEADLINE)
        .unwrap();
    assert!(
        out.status.success(),
        "cp {} {}: {}",
        from.display(),
        to.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    fs::set_permissions(to, fs::Permissions::from_mode(0o755)).unwrap();
}

/// Writes `body` to the executable `to` (mode 0755), through a staging
/// file next to it that is never executed.
pub fn write_executable(to: &Path, body: &str) {
    let mut staging = to.as_os_str().to_owned();
    staging.push(format!(".staging-{}", std::process::id()));
    let staging = Path::new(&staging);
    fs::write(staging, body).unwrap();
    let _ = fs::remove_file(to);
    copy_executable(staging, to);
    fs::remove_file(staging).unwrap();
}
