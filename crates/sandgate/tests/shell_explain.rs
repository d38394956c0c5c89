//! `sandgate policy explain` lists the parts of a shell-analysed command.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/wait.rs"]
mod wait;

use wait::{Bounded, DEADLINE};

use std::process::Command;

const POLICY: &str = r#"
permissions:
  paths:
    allow: ["./**"]
  commands:
    deny: ["^git clean"]
    allow: ["^git( |$)", "^ls( |$)"]
"#;

struct Root {
    _tmp: tempfile::TempDir,
    home: std::path::PathBuf,
    cwd: std::path::PathBuf,
}

fn root(policy: &str) -> Root {
    let tmp = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(tmp.path()).unwrap().join("home");
    let cwd = home.join("project");
    std::fs::create_dir_all(home.join(".sandgate")).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(home.join(".sandgate/permissions.yaml"), policy).unwrap();
    Root {
        _tmp: tmp,
        home,
        cwd,
    }
}

fn explain(r: &Root, json: bool, command: &str) -> String {
    let request = serde_json::json!({"tool": "exec_run", "params": {"command": command}});
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
    cmd.env_clear()
        .env("HOME", &r.home)
        .env("SANDGATE_AUDIT", "off")
        .env("SANDGATE_MANAGED_CONFIG", r.home.join("no-managed.yaml"))
        .env("NO_COLOR", "1")
        .current_dir(&r.cwd)
        .args(["policy", "explain"]);
    if json {
        cmd.arg("--json");
    }
    let out = cmd
        .arg(request.to_string())
        .output_within(DEADLINE)
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn text_output_lists_every_part_with_its_verdict() {
    let r = root(POLICY);
    let out = explain(
        &r,
        false,
        "git status && timeout 5 ls | curl -s x > ~/.ssh/keys",
    );
    let lines: Vec<&str> = out.lines().collect();
    let part = |needle: &str| {
        lines
            .iter()
            .filter(|l| {
                ["  allow ", "  ask ", "  deny "]
                    .iter()
                    .any(|v| l.starts_with(v))
            })
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{out}"))
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
    };
    assert!(
        out.contains("parts of the command (shell analysis):"),
        "{out}"
    );
    assert_eq!(part("git status"), ["allow", "command"]);
    assert_eq!(part("timeout 5 ls"), ["allow", "command"]);
    assert_eq!(part("curl -s x"), ["ask", "command"]);
    assert_eq!(part("> ~/.ssh/keys"), ["deny", "redirect"]);
    assert!(
        out.contains("decision: deny: the redirection `> ~/.ssh/keys`"),
        "{out}"
    );
}

#[test]
fn json_output_carries_the_parts() {
    let r = root(POLICY);
    let out: serde_json::Value =
        serde_json::from_str(&explain(&r, true, "git fetch && git clean -fd")).unwrap();
    assert_eq!(out["decision"]["verdict"], "deny");
    let parts = out["parts"].as_array().unwrap();
    let summary: Vec<(String, String, String)> = parts
        .iter()
        .map(|p| {
            (
                p["kind"].as_str().unwrap().to_string(),
                p["text"].as_str().unwrap().to_string(),
                p["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let s = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
    assert_eq!(
        summary,
        [
            s("command", "git fetch", "allow"),
            s("command", "git clean -fd", "deny"),
        ]
    );
    assert_eq!(parts[1]["rule"]["pattern"], "^git clean");
}

#[test]
fn raw_mode_shows_no_parts() {
    let r = root(&POLICY.replace("  commands:\n", "  commands:\n    shell: false\n"));
    let out = explain(&r, false, "git status; rm -rf ~");
    assert!(!out.contains("parts of the command"), "{out}");
    assert!(out.contains("decision: allow"), "{out}");
}
