//! `sandgate policy allow|deny path|command RULE [--local]` and `sandgate policy lint`,
//! against the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/wait.rs"]
mod wait;

use assert_cmd::assert::OutputAssertExt;
use wait::{Bounded, DEADLINE};

use std::path::PathBuf;

use std::process::Command;

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    central: PathBuf,
    local: PathBuf,
}

const CENTRAL: &str = "\
# my central policy
permissions:
  paths:
    allow: [\"~/projects/**\"]   # where I work
  commands:
    allow:
      - '^git( |$)'   # git is fine
";

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let home = root.join("home");
    let work = root.join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let central = home.join(".sandgate/permissions.yaml");
    std::fs::create_dir_all(central.parent().unwrap()).unwrap();
    std::fs::write(&central, CENTRAL).unwrap();
    Env {
        local: work.join(".sandgate/permissions.yaml"),
        _tmp: tmp,
        home,
        work,
        central,
    }
}

impl Env {
    /// The binary with the default file locations under a temporary HOME and CWD.
    fn sandgate(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
        cmd.current_dir(&self.work)
            .env("HOME", &self.home)
            .env("SANDGATE_MANAGED_CONFIG", self.home.join("managed.yaml"))
            .env("SANDGATE_AUDIT", "off")
            .env_remove("SANDGATE_CONFIG")
            .env_remove("SANDGATE_LOCAL_CONFIG");
        cmd
    }
}

fn lists(text: &str) -> serde_json::Value {
    serde_saphyr::from_str(text).expect("parses")
}

#[test]
fn allow_and_deny_write_to_the_central_file_keeping_comments() {
    let env = env();
    let out = env
        .sandgate()
        .args(["policy", "allow", "command", "^ls( |$)"])
        .output_within(DEADLINE)
        .unwrap()
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("added `^ls( |$)`"), "{stdout}");
    assert!(stdout.contains("permissions.yaml:8"), "{stdout}");
    env.sandgate()
        .args(["policy", "deny", "path", "~/projects/secret/**"])
        .output_within(DEADLINE)
        .unwrap()
        .assert()
        .success();
    let text = std::fs::read_to_string(&env.central).unwrap();
    for comment in ["# my central policy", "# where I work", "# git is fine"] {
        assert!(text.contains(comment), "{text}");
    }
    let v = lists(&text);
    assert_eq!(
        v["permissions"]["commands"]["allow"],
        serde_json::json!(["^git( |$)", "^ls( |$)"])
    );
    assert_eq!(
        v["permissions"]["paths"]["deny"],
        serde_json::json!(["~/projects/secret/**"])
    );
    assert!(!env.local.exists());

    // The same rule again: nothing changes.
    env.sandgate()
        .args(["policy", "allow", "command", "^ls( |$)"])
        .output_within(DEADLINE)
        .unwrap()
        .assert()
        .success()
        .stdout(predicates::str::contains("already"));
    assert_eq!(std::fs::read_to_string(&env.central).unwrap(), text);

    // The engine uses the new rules.
    let check = |request: &str| {
        let out = env
            .sandgate()
            .args(["check", "--json", request])
            .output_within(DEADLINE)
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["verdict"].as_str().unwrap().to_string()
    };
    assert_eq!(
        check(r#"{"tool": "exec_run", "params": {"command": "ls -la"}}"#),
        "allow"
    );
    assert_eq!(
        check(r#"{"tool": "file_read", "params": {"path": "~/projects/secret/k"}}"#),
        "deny"
    );
}

#[test]
fn deny_local_creates_the_local_file_and_allow_local_is_refused() {
    let env = env();
    env.sandgate()
        .args(["policy", "deny", "command", "^git push", "--local"])
        .output_within(DEADLINE)
        .unwrap()
        .assert()
        .success();
    let text = std::fs::read_to_string(&env.local).unwrap();
    assert_eq!(
        lists(&text)["permissions"]["commands"]["deny"],
        serde_json::json!(["^git push"])
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&env.local).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    assert_eq!(std::fs::read_to_string(&env.central).unwrap(), CENTRAL);

    env.sandgate()
        .args(["policy", "allow", "command", "^make$", "--local"])
        .output_within(DEADLINE)
        .unwrap()
        .assert()
        .code(2)
        .stderr(predicates::str::contains("only for deny rules"));
    assert_eq!(std::fs::read_to_string(&env.local).unwrap(), text);
}

#[test]
fn a_broken_rule_is_never_written() {
    let env = env();
    env.sandgate()
        .args(["policy", "allow", "command", "^(?!rm)"])
        .output_within(DEADLINE)
        .unwrap()
        .assert()
        .code(2)
        .stderr(predicates::str::contains("look-around"));
    env.sandgate()
        .args(["policy", "deny", "path", "/srv/{a,b"])
        .output_within(DEADLINE)
        .unwrap()
        .assert()
        .code(2)
        .stderr(predicates::str::contains("invalid path rule `/srv/{a,b`"));
    assert_eq!(std::fs::read_to_string(&env.central).unwrap(), CENTRAL);
}

#[test]
fn a_missing_central_file_is_created_private() {
    let env = env();
    std::fs::remove_dir_all(env.central.parent().unwrap()).unwrap();
    env.sandgate()
        .args(["policy", "allow", "path", "./**"])
        .output_within(DEADLINE)
        .unwrap()
        .assert()
        .success();
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&env.central), 0o600);
    assert_eq!(mode(env.central.parent().unwrap()), 0o700);
}

#[test]
fn lint_names_file_and_line_and_what_a_careful_policy_still_lets_run() {
    let env = env();
    // A careful policy lints clean: that `^git( |$)` covers git's options
    // that run other programs is a note naming the forms that still ask.
    let file = env.central.display().to_string();
    let out = env
        .sandgate()
        .args(["policy", "lint"])
        .output_within(DEADLINE)
        .unwrap()
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        stdout.contains(&format!("{file}:7: note: runs programs: `^git( |$)`")),
        "{stdout}"
    );
    assert!(stdout.starts_with("no warnings\n"), "{stdout}");

    for (kind, rule) in [
        ("command", "^curl"),
        ("command", "make test"),
        ("path", "~/**"),
        ("command", "^git( |$)"),
    ] {
        std::fs::write(&env.central, {
            let mut t = std::fs::read_to_string(&env.central).unwrap();
            if kind == "command" {
                t.push_str(&format!("      - '{rule}'\n"));
                t
            } else {
                t.replace(
                    "\"~/projects/**\"]",
                    &format!("\"~/projects/**\", \"{rule}\"]"),
                )
            }
        })
        .unwrap();
    }
    let out = env
        .sandgate()
        .args(["policy", "lint"])
        .output_within(DEADLINE)
        .unwrap()
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for want in [
        format!("{file}:4: warning: too broad: `~/**`"),
        format!("{file}:8: warning: too broad: `^curl`"),
        format!("{file}:9: warning: unanchored: `make test`"),
        format!("{file}:10: warning: duplicate: `^git( |$)`"),
    ] {
        assert!(stdout.contains(&want), "missing {want:?} in:\n{stdout}");
    }
    assert!(stdout.contains("4 warnings"), "{stdout}");

    let json = env
        .sandgate()
        .args(["--json", "policy", "lint"])
        .output_within(DEADLINE)
        .unwrap()
        .assert()
        .code(1);
    let v: serde_json::Value = serde_json::from_slice(&json.get_output().stdout).unwrap();
    assert_eq!(v["warnings"].as_array().unwrap().len(), 4);
    assert_eq!(v["notes"].as_array().unwrap().len(), 2);
}

#[test]
fn lint_of_a_broken_file_is_exit_2() {
    let env = env();
    std::fs::write(
        &env.central,
        "permissions:\n  commands:\n    allow: ['(']\n",
    )
    .unwrap();
    env.sandgate()
        .args(["policy", "lint"])
        .output_within(DEADLINE)
        .unwrap()
        .assert()
        .code(2)
        .stderr(predicates::str::contains("permissions.yaml:3"));
}
