//! One seccomp supervisor serves both scopes: checked from the source files,
//! so that it keeps holding.
//!
//! - the one notification loop is `sandgate_sandbox::supervisor::serve`: it
//!   is the only code of the workspace that receives a notification from a
//!   listener, and both scopes (exec isolation's `supervise` and
//!   `sandgate run`'s supervisor) run it;
//! - the one decoder is `sandgate_sandbox::supervisor::decode`: no other
//!   source reads a notification's system call number;
//! - `sandgate-confine` holds no loop, no decoder and no performer of its
//!   own: it receives no notification, reads no system call number, and
//!   makes none of the calls the shared performer
//!   (`sandgate_sandbox::supervisor::perform`) makes for a caller;
//! - one plan type, `sandgate_sandbox::plan::Plan`, describes what a
//!   confined tree may do for both scopes: no other plan or guard type is
//!   defined, and `sandgate run`'s plan is that type with the run's part.
//!
//! These are text checks over the crates' `src/` trees: comments are
//! dropped first, so a doc that names a call does not count.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Every `.rs` file under `dir`, with its text minus `//` comments.
fn sources(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path).unwrap();
                let code: String = text
                    .lines()
                    .map(|l| match l.find("//") {
                        Some(at) => &l[..at],
                        None => l,
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                out.push((path, code));
            }
        }
    }
    out.sort();
    assert!(!out.is_empty(), "no sources under {}", dir.display());
    out
}

/// The workspace's library and binary sources (`crates/*/src`).
fn workspace_sources() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in fs::read_dir(crates_dir()).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            out.extend(sources(&src));
        }
    }
    out
}

fn relative(path: &Path) -> String {
    path.strip_prefix(crates_dir())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The files among `files` whose code contains `needle`.
fn holding(files: &[(PathBuf, String)], needle: &str) -> Vec<String> {
    files
        .iter()
        .filter(|(_, code)| code.contains(needle))
        .map(|(p, _)| relative(p))
        .collect()
}

#[test]
fn one_loop_receives_notifications_and_both_scopes_run_it() {
    let all = workspace_sources();
    // `Listener::recv` is the one way to receive a notification
    // (`SECCOMP_IOCTL_NOTIF_RECV` is issued only inside it).
    assert_eq!(
        holding(&all, "IOCTL_NOTIF_RECV,"),
        ["sandgate-sandbox/src/notify.rs"],
        "SECCOMP_IOCTL_NOTIF_RECV is issued outside `Listener::recv`"
    );
    assert_eq!(
        holding(&all, "listener.recv()"),
        ["sandgate-sandbox/src/supervisor/serve.rs"],
        "a notification is received outside the one loop"
    );
    assert_eq!(
        holding(&all, "serve::serve("),
        [
            "sandgate-confine/src/supervisor/mod.rs",
            "sandgate-sandbox/src/supervise.rs"
        ],
        "each scope runs the one loop"
    );
}

#[test]
fn one_decoder_reads_the_system_call_number() {
    let all = workspace_sources();
    // `.nr` is set once, where the listener fills a `Notif` in.
    let readers: Vec<String> = all
        .iter()
        .filter(|(_, code)| {
            code.match_indices(".nr").any(|(at, _)| {
                !code[at + 3..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
            })
        })
        .map(|(p, _)| relative(p))
        .collect();
    assert_eq!(
        readers,
        [
            "sandgate-sandbox/src/notify.rs",
            "sandgate-sandbox/src/supervisor/decode.rs"
        ],
        "a system call number is read outside the one decoder"
    );
    assert_eq!(
        holding(&all, "fn decode("),
        ["sandgate-sandbox/src/supervisor/decode.rs"]
    );
}

#[test]
fn sandgate_confine_has_no_loop_decoder_or_performer() {
    let confine = sources(&crates_dir().join("sandgate-confine/src"));
    for needle in [
        // A loop of its own.
        ".recv()",
        "Ready::",
        ".wait(",
        // A decoder of its own.
        ".nr",
        ".args[",
        "fn decode",
        // A performer of its own: the calls the shared performer makes for
        // a caller.
        "libc::mkdirat",
        "libc::mknodat",
        "libc::unlinkat",
        "libc::renameat",
        "libc::linkat",
        "libc::symlinkat",
        "libc::fchmodat",
        "libc::fchownat",
        "libc::utimensat",
        "libc::ftruncate",
        "libc::fsetxattr",
        "libc::fremovexattr",
        "libc::connect",
        "libc::bind",
        "send_fd(notif",
    ] {
        let found: Vec<String> = holding(&confine, needle)
            .into_iter()
            // The asking thread's queue is a channel, not a listener.
            .filter(|f| !(needle == ".recv()" && f.ends_with("supervisor/ask.rs")))
            .collect();
        assert!(
            found.is_empty(),
            "sandgate-confine holds `{needle}` in {found:?}: the loop, the decoder \
             and the performer are sandgate-sandbox's"
        );
    }
}

#[test]
fn one_plan_type_serves_both_scopes() {
    let all = workspace_sources();
    let defined: Vec<String> = all
        .iter()
        .flat_map(|(path, code)| {
            code.split_whitespace()
                .collect::<Vec<_>>()
                .windows(2)
                .filter(|w| matches!(w[0], "struct" | "enum" | "union"))
                .map(|w| w[1].trim_end_matches(|c: char| !c.is_alphanumeric() && c != '_'))
                .map(|name| name.split('<').next().unwrap_or(name).to_string())
                .filter(|name| name.ends_with("Plan") || name == "Guard")
                .map(|name| format!("{} in {}", name, relative(path)))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        defined,
        ["Plan in sandgate-sandbox/src/plan.rs"],
        "a plan type besides the one in sandgate-sandbox"
    );
    assert_eq!(
        holding(&all, "pub type RunPlan = Plan<RunScope>;"),
        ["sandgate-confine/src/plan.rs"],
        "sandgate run's plan is the one plan type with the run's part"
    );
}
