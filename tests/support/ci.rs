//! A test whose tool is missing: outside CI it skips, printing why; under
//! CI (`CI=true`) it fails, naming what to install, so that CI never passes
//! a test it did not run. Its includer provides `wait`
//! (tests/support/wait.rs) beside it when it uses [`has`].

#![allow(dead_code)]

/// A `PATH` every user can use (no per-user shims).
pub const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The unprivileged user `.ci/run` creates for the tests.
pub const TEST_USER: &str = "sandgate-test";

/// Whether the tests run under CI (`CI` set, and not to `0` or `false`).
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"))
}

/// Skips with `why` printed; under CI fails instead.
pub fn skip(why: &str) {
    assert!(!under_ci(), "CI must run this test: {why}");
    eprintln!("skipping: {why}");
}

/// Whether the tests run as root (`/proc/self` belongs to the effective
/// uid of the process that looks).
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Whether `program` is on [`PATH`].
pub fn has(program: &str) -> bool {
    use super::wait::{Bounded, DEADLINE};
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .env("PATH", PATH)
        .output_within(DEADLINE)
        .is_ok_and(|o| o.status.success())
}

/// A command running `program` as the tests' own user (`who` is `None`)
/// or as the user and group `who` names, through `setpriv` with no
/// supplementary groups.
pub fn as_user(
    program: impl AsRef<std::ffi::OsStr>,
    who: Option<(u32, u32)>,
) -> std::process::Command {
    match who {
        None => std::process::Command::new(program),
        Some((uid, gid)) => {
            let mut c = std::process::Command::new("setpriv");
            c.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={gid}"))
                .arg("--clear-groups")
                .arg("--")
                .arg(program);
            c
        }
    }
}

/// Who a test runs a command as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    Root,
    User { uid: u32, gid: u32 },
}

/// Root, and [`TEST_USER`] when the tests run as root (a missing
/// `setpriv` or user skips it, or fails under CI).
pub fn users() -> Vec<Who> {
    use super::wait::{Bounded, DEADLINE};
    let mut users = vec![Who::Root];
    if !is_root() {
        return users;
    }
    if !has("setpriv") {
        skip("`setpriv` is not installed (package util-linux)");
        return users;
    }
    let id = |flag: &str| -> Option<u32> {
        let out = std::process::Command::new("id")
            .args([flag, TEST_USER])
            .output_within(DEADLINE)
            .ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    match (id("-u"), id("-g")) {
        (Some(uid), Some(gid)) => users.push(Who::User { uid, gid }),
        _ => skip(&format!("the user `{TEST_USER}` does not exist")),
    }
    users
}
