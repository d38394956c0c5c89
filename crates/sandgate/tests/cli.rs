//! The binary's own surface: version, completions, policy show/explain and the audit log.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/wait.rs"]
mod wait;

use wait::{Bounded, DEADLINE};

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../../tests/support/account.rs"]
mod account;
use account::account_home;

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    cwd: PathBuf,
}

fn env(central: &str) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let cwd = home.join("projects/app");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(home.join(".sandgate")).unwrap();
    std::fs::write(home.join(".sandgate/permissions.yaml"), central).unwrap();
    Env {
        _tmp: tmp,
        home,
        cwd,
    }
}

fn sandgate(e: &Env) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sandgate"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &e.home)
        .env("SANDGATE_MANAGED_CONFIG", e.home.join("no-managed.yaml"))
        .env("NO_COLOR", "1")
        .current_dir(&e.cwd);
    c
}

fn stdout(c: &mut Command) -> (i32, String, String) {
    let o = c.output_within(DEADLINE).unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

const POLICY: &str = "permissions:\n  paths:\n    deny: [\"./secrets/**\"]\n    allow: [\"~/**\"]\n  commands:\n    allow: [\"^git( |$)\"]\n";

#[test]
fn version_and_completions() {
    let e = env("");
    let (code, out, _) = stdout(sandgate(&e).arg("--version"));
    assert_eq!(code, 0);
    assert!(out.starts_with("sandgate "), "{out}");
    for shell in ["bash", "zsh", "fish"] {
        let (code, out, _) = stdout(sandgate(&e).args(["completions", shell]));
        assert_eq!(code, 0, "{shell}");
        assert!(
            out.contains("check") && out.contains("policy"),
            "{shell}: {out}"
        );
    }
    let (code, _, _) = stdout(sandgate(&e).args(["completions", "powershell"]));
    assert_eq!(code, 2);
}

#[test]
fn policy_show_lists_every_rule_with_its_origin() {
    let e = env(POLICY);
    std::fs::create_dir_all(e.cwd.join(".sandgate")).unwrap();
    std::fs::write(
        e.cwd.join(".sandgate/permissions.yaml"),
        "permissions:\n  paths:\n    allow: [\"/**\"]\n",
    )
    .unwrap();
    let (code, out, _) = stdout(sandgate(&e).args(["policy", "show", "--json"]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let central = e.home.join(".sandgate/permissions.yaml");
    assert_eq!(v["sandbox"], true);
    assert_eq!(v["paths"]["deny"][0]["pattern"], "./secrets/**");
    assert_eq!(
        v["paths"]["deny"][0]["origin"],
        format!("{}:3", central.display())
    );
    assert_eq!(
        v["commands"]["allow"][0]["origin"],
        format!("{}:6", central.display())
    );
    let floor: Vec<&str> = v["floor"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["pattern"].as_str().unwrap())
        .collect();
    let dirs = [".ssh", ".aws", ".gnupg", ".sandgate"];
    assert_eq!(floor[..4], dirs.map(|d| format!("~/{d}/**")));
    // HOME is a temporary directory here: the home the user database gives
    // this user is floored too, where ssh looks for its keys.
    let account = account_home();
    if account.is_empty() || account == "/" {
        assert_eq!(floor.len(), 4, "{floor:?}");
    } else {
        assert_eq!(floor[4..], dirs.map(|d| format!("{account}/{d}/**")));
    }
    assert_eq!(v["ignored"][0]["rule"]["pattern"], "/**");
    let (code, text, _) = stdout(sandgate(&e).args(["policy", "show"]));
    assert_eq!(code, 0);
    assert!(text.contains("./secrets/**") && text.contains(&format!("{}:3", central.display())));
    assert!(text.contains("ignored"));
}

/// With `HOME` pointing elsewhere, the keys in the account's real home are
/// still beneath the floor: by absolute path, by `~user` and through a
/// recursive read of that home, whatever the allow rules say.
#[test]
fn the_accounts_own_home_is_floored_when_home_points_elsewhere() {
    let account = account_home();
    let user = std::process::Command::new("id")
        .arg("-un")
        .output_within(DEADLINE)
        .unwrap();
    let user = String::from_utf8_lossy(&user.stdout).trim().to_string();
    assert!(
        !account.is_empty() && account != "/",
        "this user has no home in the user database"
    );
    let e = env("permissions:\n  paths:\n    allow: [\"/**\"]\n  commands:\n    allow: [\".*\"]\n");
    assert_ne!(e.home.display().to_string(), account);
    let key = format!("{account}/.ssh/id_rsa");
    for call in [
        serde_json::json!({"tool": "file_read", "params": {"path": key}}),
        serde_json::json!({"tool": "file_write", "params": {"path": format!("{account}/.ssh/authorized_keys"), "content": "k"}}),
        serde_json::json!({"tool": "exec_run", "params": {"command": format!("cat {key}")}}),
        serde_json::json!({"tool": "exec_run", "params": {"command": format!("cat ~{user}/.aws/credentials")}}),
        serde_json::json!({"tool": "exec_run", "params": {"command": format!("grep -r x {account}")}}),
    ] {
        let (_, out, err) = stdout(sandgate(&e).args(["check", &call.to_string()]));
        assert!(
            out.starts_with("deny") && out.contains("floor"),
            "{call}: {out}{err}"
        );
    }
    // The temporary home's own floor holds as before, and other paths pass.
    let (_, out, _) = stdout(sandgate(&e).args([
        "check",
        r#"{"tool": "exec_run", "params": {"command": "cat ~/.ssh/id_rsa"}}"#,
    ]));
    assert!(out.starts_with("deny"), "{out}");
    let call = serde_json::json!({"tool": "file_read", "params": {"path": format!("{account}/notes.txt")}});
    let (_, out, _) = stdout(sandgate(&e).args(["check", &call.to_string()]));
    assert!(out.starts_with("allow"), "{out}");
}

#[test]
fn policy_explain_marks_the_winning_rule() {
    let e = env(POLICY);
    let req = r#"{"tool": "file_read", "params": {"path": "secrets/token"}}"#;
    let (code, out, _) = stdout(sandgate(&e).args(["policy", "explain", "--json", req]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["decision"]["verdict"], "deny");
    let matched: Vec<&str> = v["matched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["pattern"].as_str().unwrap())
        .collect();
    assert_eq!(matched, ["./secrets/**", "~/**"]);
    let (_, text, _) = stdout(sandgate(&e).args(["policy", "explain", req]));
    let winner = text.lines().find(|l| l.contains('→')).unwrap();
    assert!(winner.contains("./secrets/**"), "{text}");
}

fn audit_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn every_decision_is_audited_unless_off() {
    let e = env(POLICY);
    let log = e.home.join(".sandgate/audit.jsonl");
    let req = r#"{"tool": "exec_run", "params": {"command": "git log"}}"#;
    let (code, _, _) = stdout(sandgate(&e).args(["check", req]));
    assert_eq!(code, 0);
    let lines = audit_lines(&log);
    assert_eq!(lines.len(), 1);
    let l = &lines[0];
    assert_eq!(l["tool"], "exec_run");
    assert_eq!(l["subject"], "git log");
    assert_eq!(l["verdict"], "allow");
    assert_eq!(l["rule"], "^git( |$)");
    assert_eq!(l["list"], "allow");
    assert!(l["origin"]
        .as_str()
        .unwrap()
        .ends_with("permissions.yaml:6"));
    assert!(l["time"].as_str().unwrap().starts_with("20"));
    assert!(!l["reason"].as_str().unwrap().is_empty());

    let (code, _, _) = stdout(
        sandgate(&e)
            .env("SANDGATE_AUDIT", "off")
            .args(["check", req]),
    );
    assert_eq!(code, 0);
    assert_eq!(
        audit_lines(&log).len(),
        1,
        "SANDGATE_AUDIT=off wrote a line"
    );
}

/// An ASK nobody can answer says so in the log: who settled it, and what it became.
#[test]
fn a_headless_ask_is_logged_as_settled_by_nobody() {
    let e = env(POLICY);
    let log = e.home.join(".sandgate/audit.jsonl");
    let (code, _, _) = stdout(sandgate(&e).args(["exec", "--no-ui", "--", "make", "nothing"]));
    assert_ne!(code, 0);
    let lines = audit_lines(&log);
    let last = lines.last().unwrap();
    assert_eq!(last["surface"], "exec prompt", "{lines:?}");
    assert_eq!(last["verdict"], "deny");
    assert_eq!(last["answered_by"], "headless");
    assert_eq!(last["became"], "denied: nobody to ask");
    // The policy's own decision carries neither field.
    assert!(lines[0].get("answered_by").is_none(), "{lines:?}");
}

#[test]
fn an_unwritable_audit_log_never_changes_the_decision() {
    let e = env(POLICY);
    // A directory where the log file should be: the append fails.
    let bad = e.home.join("log-is-a-dir");
    std::fs::create_dir_all(&bad).unwrap();
    let req = r#"{"tool": "file_read", "params": {"path": "~/.ssh/id_rsa"}}"#;
    let (code, out, err) = stdout(
        sandgate(&e)
            .env("SANDGATE_AUDIT_LOG", &bad)
            .args(["check", "--json", req]),
    );
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["verdict"], "deny");
    assert_eq!(
        err.matches("cannot write the audit log").count(),
        1,
        "{err}"
    );
}

#[test]
fn the_sandbox_off_warning_is_a_red_three_line_frame() {
    let e = env(POLICY);
    let req = r#"{"tool": "exec_run", "params": {"command": "ls"}}"#;
    let mut c = sandgate(&e);
    c.env_remove("NO_COLOR")
        .args(["check", "--no-sandbox", req]);
    let (code, out, err) = stdout(&mut c);
    assert_eq!(code, 0);
    assert!(out.starts_with("allow"));
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 5, "{err}");
    assert!(lines.iter().all(|l| l.starts_with("\x1b[1;31m")), "{err:?}");
    assert!(lines[0].contains('┌') && lines[4].contains('┘'));
    assert!(lines[1].contains("sandbox is OFF"));
    assert!(lines[2].contains("--no-sandbox"));
}

/// The executable is linked without PIE on Linux (see `build.rs`): the loader
/// then has almost no relocations to apply at each start of the hook.
#[cfg(target_os = "linux")]
#[test]
fn the_executable_is_position_dependent_unless_asked_otherwise() {
    let bytes = std::fs::read(env!("CARGO_BIN_EXE_sandgate")).unwrap();
    assert_eq!(&bytes[..4], b"\x7fELF");
    // e_type, little-endian, at offset 16: 2 = ET_EXEC, 3 = ET_DYN (PIE).
    let e_type = u16::from_le_bytes([bytes[16], bytes[17]]);
    let pie_asked = std::env::var_os("SANDGATE_BUILD_PIE").is_some_and(|v| v == "1");
    assert_eq!(e_type, if pie_asked { 3 } else { 2 });
}

/// `sandgate exec -- PROGRAM ARGS…` runs as typed: each argument is quoted
/// for the shell (as `timeout`, `env` or `sudo` pass theirs on), so
/// `sh -c 'cat x'` reads `x`; one argument stays a command string; the gate
/// sees the command as it will run, and a rule anchored on it decides.
#[test]
fn exec_runs_its_arguments_as_typed() {
    let e = env(
        "permissions:\n  sandbox: true\n  commands:\n    allow: [\"^sh -c 'cat x'$\", \"^cat x$\", \"^printf \", \"^echo a \\\\| tr a b$\"]\n",
    );
    assert!(e.cwd.starts_with(&e.home) && e.home != Path::new(&account_home()));
    std::fs::write(e.cwd.join("x"), "the content of x\n").unwrap();
    let run = |args: &[&str]| {
        stdout(
            sandgate(&e)
                .args(["exec", "--no-ui", "--"])
                .args(args)
                .env("SANDGATE_AUDIT", "off"),
        )
    };
    let (code, out, err) = run(&["sh", "-c", "cat x"]);
    assert_eq!((code, out.as_str()), (0, "the content of x\n"), "{err}");
    let (code, out, err) = run(&["printf", "<%s>\\n", "a b", "it's", "$HOME", ""]);
    assert_eq!(
        (code, out.as_str()),
        (0, "<a b>\n<it's>\n<$HOME>\n<>\n"),
        "{err}"
    );
    let (code, out, err) = run(&["echo a | tr a b"]);
    assert_eq!((code, out.as_str()), (0, "b\n"), "{err}");
    // Split into words, the pipe is an argument of `echo`, not a pipe.
    let (code, out, err) = run(&["echo", "a", "|", "tr", "a", "b"]);
    assert_eq!((code, out.as_str()), (0, "a | tr a b\n"), "{err}");
    let (code, out, _) = stdout(
        sandgate(&e)
            .args(["--json", "exec", "--dry-run", "--", "sh", "-c", "cat x"])
            .env("SANDGATE_AUDIT", "off"),
    );
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["subject"], "sh -c 'cat x'", "{v}");
}

/// A reason names the deciding rule once, whatever else matched it (the
/// whole line and a simple command in it, two commands of one line), and
/// still names every other rule and part that decided the same way.
#[test]
fn a_reason_names_each_rule_once() {
    let e = env(
        "permissions:\n  commands:\n    deny: [\"^rm \", \"(^| )curl \"]\n    allow: [\"^git( |$)\"]\n",
    );
    let check = |command: &str| {
        let request = serde_json::json!({"tool": "exec_run", "params": {"command": command}});
        let (code, out, err) = stdout(
            sandgate(&e)
                .args(["--json", "check"])
                .arg(request.to_string())
                .env("SANDGATE_AUDIT", "off"),
        );
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["verdict"], "deny", "{v}");
        v["reason"].as_str().unwrap().to_string()
    };
    for command in ["rm -rf build", "rm a; rm b", "git status && rm x"] {
        let reason = check(command);
        assert_eq!(reason.matches("`^rm `").count(), 1, "{command}: {reason}");
    }
    let reason = check("rm x; curl http://127.0.0.1/");
    assert_eq!(reason.matches("`^rm `").count(), 1, "{reason}");
    assert_eq!(reason.matches("`(^| )curl `").count(), 1, "{reason}");
}
