//! The test suite's own waiting helpers (`tests/support/wait.rs`): a child
//! past its deadline is killed with everything in its process group and the
//! test fails naming the command and the deadline; what a child leaves
//! behind in its group dies when it is done; a guarded helper dies when its
//! guard is dropped. And `.ci/bounded-waits` finds a wait without a bound.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/wait.rs"]
mod wait;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use wait::{Bounded, DEADLINE};

/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

/// Waits (with a deadline) until process `pid` has ended.
fn until_ended(pid: u32, what: &str) {
    wait::until(30, what, || ended(pid));
}

/// The pid a shell wrote to `file`, waiting for it (with a deadline).
fn pid_in(file: &Path) -> u32 {
    let mut pid = None;
    wait::until(30, "the background pid", || {
        pid = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse().ok());
        pid.is_some()
    });
    pid.unwrap()
}

#[test]
fn a_child_past_its_deadline_fails_the_test_and_its_group_dies() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!(
        "sleep 600 >/dev/null 2>&1 & echo $! > '{}'; sleep 600",
        pidfile.display()
    );
    let started = Instant::now();
    let outcome = std::panic::catch_unwind(|| {
        Command::new("sh")
            .args(["-c", &script])
            .output_within(Duration::from_secs(2))
    });
    let message = outcome.expect_err("the wait past its deadline fails the test");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("sh -c sleep 600") && message.contains("after 2 s"),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    until_ended(pid_in(&pidfile), "the background sleep of the killed child");
}

#[test]
fn what_a_finished_child_left_in_its_group_dies() {
    let out = Command::new("sh")
        .args(["-c", "sleep 600 >/dev/null 2>&1 & echo $!"])
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success());
    let pid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    until_ended(pid, "the sleep the finished shell left behind");
}

#[test]
fn a_dropped_guard_kills_its_helper_and_the_helpers_children() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let guard = Command::new("sh")
        .args([
            "-c",
            &format!(
                "sleep 600 >/dev/null 2>&1 & echo $! > '{}'; sleep 600",
                pidfile.display()
            ),
        ])
        .spawn_guarded()
        .unwrap();
    let (shell, sleep) = (guard.id(), pid_in(&pidfile));
    assert!(!ended(shell) && !ended(sleep));
    drop(guard);
    until_ended(shell, "the guarded shell");
    until_ended(sleep, "the guarded shell's background sleep");
}

#[test]
fn the_input_reaches_the_child_and_a_child_that_ignores_it_is_no_failure() {
    let out = Command::new("sh")
        .args(["-c", "tr a-z A-Z"])
        .output_with_stdin_within(b"hello", DEADLINE)
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "HELLO");
    // More than a pipe holds, to a child that never reads it.
    let out = Command::new("true")
        .output_with_stdin_within(&vec![b'x'; 1 << 20], DEADLINE)
        .unwrap();
    assert!(out.status.success());
}

#[test]
fn a_thread_past_its_deadline_fails_the_test() {
    let handle = std::thread::spawn(|| std::thread::sleep(Duration::from_secs(30)));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _ = wait::join_within(handle, Duration::from_millis(200), "the sleeper");
    }));
    let message = outcome.expect_err("the join past its deadline fails the test");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("the sleeper: still running"), "{message}");
    let quick = std::thread::spawn(|| 7);
    assert_eq!(
        wait::join_within(quick, DEADLINE, "a quick thread").unwrap(),
        7
    );
}

fn check(dir: &Path, name: &str, body: &str) -> (bool, String) {
    let file: PathBuf = dir.join(name);
    std::fs::write(&file, body).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/bounded-waits");
    let out = Command::new("python3")
        .arg(script)
        .arg(&file)
        .output_within(DEADLINE)
        .expect("python3 runs .ci/bounded-waits");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_ci_check_finds_every_unbounded_wait_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    for (call, named, line) in [
        (
            "Command::new(\"true\").output().unwrap();",
            "`.output()`",
            2,
        ),
        ("cmd.status().unwrap();", "`.status()`", 2),
        ("child.wait().unwrap();", "`.wait()`", 2),
        (
            "child\n        .wait_with_output()\n        .unwrap();",
            "`.wait_with_output()`",
            3,
        ),
        ("handle.join().unwrap();", "`.join()`", 2),
        (
            "let c = assert_cmd::Command::cargo_bin(\"x\");",
            "assert_cmd",
            2,
        ),
    ] {
        let (ok, said) = check(
            dir.path(),
            "bad.rs",
            &format!("fn f() {{\n    {call}\n}}\n"),
        );
        assert!(!ok, "{call}: not found");
        assert!(
            said.contains(&format!("bad.rs:{line}:")) && said.contains(named),
            "{call}: {said}"
        );
    }
    // The bounded helpers; a script in a string; a comment; a join with a
    // separator; a marked method of the same name.
    let fine = r##"fn f() {
    cmd.output_within(DEADLINE).unwrap();
    child.wait_within(DEADLINE).unwrap();
    let py = "os.wait(); t.join(); p.status()";
    let raw = r#"proc.wait()
sub.output()"#;
    // child.wait() would hang
    let c = '"'; let s = ["a", "b"].join(",");
    path.join("x").display();
    response.status(); // not a wait: an HTTP status
}
"##;
    let (ok, said) = check(dir.path(), "fine.rs", fine);
    assert!(ok, "{said}");
}

/// Inside a crate's sources only the test code is checked: a
/// `#[cfg(test)]` module, or a file named `tests.rs`.
#[test]
fn the_ci_check_reads_the_test_modules_of_a_crates_sources() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let lib = "pub fn run(child: &mut Child) {\n    child.wait().unwrap();\n}\n\n\
               #[cfg(test)]\nmod tests {\n    fn helper() {\n        let x = { 1 };\n    }\n\n\
               #[test]\n    fn t() {\n        child.wait().unwrap();\n    }\n}\n\n\
               pub fn after(child: &mut Child) {\n    child.wait().unwrap();\n}\n";
    let (ok, said) = check(&src, "lib.rs", lib);
    assert!(!ok, "the test module's wait: not found");
    assert!(said.contains("lib.rs:13:"), "{said}");
    assert!(
        !said.contains("lib.rs:2:") && !said.contains("lib.rs:18:"),
        "code outside the test module was checked: {said}"
    );
    let (ok, said) = check(
        &src,
        "tests.rs",
        "fn t() {\n    handle.join().unwrap();\n}\n",
    );
    assert!(!ok && said.contains("tests.rs:2:"), "{said}");
}

/// The suite itself: no test waits without a deadline (what `.ci/run`
/// checks, here too so that `cargo test` says it).
#[test]
fn no_test_of_the_workspace_waits_without_a_deadline() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/bounded-waits");
    let out = Command::new("python3")
        .arg(script)
        .output_within(DEADLINE)
        .expect("python3 runs .ci/bounded-waits");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
