//! What the user reads: a compound command's reason names every deciding part,
//! a broken policy file has every problem named in words, and hints point at
//! what every user has (`sandgate policy schema`), never at a source checkout.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/wait.rs"]
mod wait;

use wait::{Bounded, DEADLINE};

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
}

fn env(central: &str) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(tmp.path()).unwrap().join("home");
    std::fs::create_dir_all(home.join(".sandgate")).unwrap();
    std::fs::create_dir_all(home.join("work")).unwrap();
    std::fs::write(home.join(".sandgate/permissions.yaml"), central).unwrap();
    Env { _tmp: tmp, home }
}

fn run(e: &Env, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sandgate"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &e.home)
        .env("SANDGATE_MANAGED_CONFIG", e.home.join("no-managed.yaml"))
        .env("SANDGATE_AUDIT", "off")
        .env("SANDGATE_CACHE", "off")
        .current_dir(e.home.join("work"))
        .args(args)
        .output_within(DEADLINE)
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn check(e: &Env, command: &str) -> Value {
    let request = serde_json::json!({"tool": "exec_run", "params": {"command": command}});
    let (code, out, err) = run(e, &["--json", "check", &request.to_string()]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn a_compound_commands_reason_names_every_part_that_decided() {
    let e = env("");
    let d = check(&e, "git status; make all");
    assert_eq!(d["verdict"], "ask");
    let reason = d["reason"].as_str().unwrap();
    assert!(
        reason.contains("`git status`") && reason.contains("`make all`"),
        "{reason}"
    );

    let e = env(
        "permissions:\n  commands:\n    deny: [\"^rm \", \"^curl \"]\n    allow: [\"^ls( |$)\"]\n",
    );
    let d = check(&e, "ls; rm -rf /tmp/x && curl -s x.example; ls -l");
    assert_eq!(d["verdict"], "deny");
    let reason = d["reason"].as_str().unwrap();
    assert!(
        reason.contains("`^rm `") && reason.contains("`^curl `"),
        "{reason}"
    );
    assert!(!reason.contains("`ls -l`"), "{reason}");
    let d = check(&e, "ls -l; ls -a");
    assert_eq!(d["verdict"], "allow");
}

#[test]
fn every_problem_of_a_broken_file_is_named_in_words() {
    let e = env(
        "permisions:\n  sandbox: true\npermissions:\n  paths:\n    deny: \"/etc/**\"\n  commands:\n    alow: [\"^git\"]\n  prompt:\n    timeout: soon\n",
    );
    let (code, out, err) = run(&e, &["policy", "show"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("(4 problems)"), "{err}");
    let file = e.home.join(".sandgate/permissions.yaml");
    let file = file.display();
    for expected in [
        format!("{file}:1:1: unknown key `permisions` at the top of the file"),
        "did you mean `permissions`?".to_string(),
        format!("{file}:5:11: `deny` must be a list of globs, not the string `/etc/**`"),
        "`deny: [\"/etc/**\"]`".to_string(),
        format!("{file}:7:5: unknown key `alow` under `commands`"),
        "did you mean `allow`?".to_string(),
        format!(
            "{file}:9:14: `timeout` must be a whole number of 0 or more, not the string `soon`"
        ),
    ] {
        assert!(err.contains(&expected), "missing {expected:?} in:\n{err}");
    }
    assert!(!err.contains("schema/"), "{err}");
}

#[test]
fn a_wrong_type_and_a_regex_that_does_not_compile_are_both_named() {
    let e = env(
        "permissions:\n  paths:\n    deny: \"/etc/**\"\n  commands:\n    deny: [\"^curl (\"]\n",
    );
    let file = e.home.join(".sandgate/permissions.yaml");
    let file = file.display();
    for args in [&["policy", "show"][..], &["policy", "lint"][..]] {
        let (code, out, err) = run(&e, args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains("(2 problems)"), "{err}");
        let typed = err
            .find(&format!("{file}:3:11: `deny` must be a list of globs"))
            .unwrap_or_else(|| panic!("{err}"));
        let regex = err
            .find(&format!("{file}:5:12: "))
            .unwrap_or_else(|| panic!("{err}"));
        assert!(typed < regex, "in file order: {err}");
        assert!(err[regex..].contains("invalid regex"), "{err}");
    }
}

#[test]
fn a_repeated_key_says_which_where_both_are_and_how_to_merge() {
    let central = "permissions:\n  commands:\n    allow: [\"^ls( |$)\"]\ntests:\n  - command: ls\n    expect: allow\n# more\ntests:\n  - command: rm x\n    expect: ask\n";
    let e = env(central);
    let (code, out, err) = run(&e, &["policy", "show"]);
    assert_eq!(code, 2, "{out}{err}");
    let file = e.home.join(".sandgate/permissions.yaml");
    assert!(
        err.contains(&format!(
            "{}:8:1: the key `tests` appears twice in the same mapping (first at line 4, column 1)",
            file.display()
        )),
        "{err}"
    );
    assert!(err.contains("keep one `tests:`"), "{err}");
    for internal in ["DuplicateKeyPolicy", "Options", "tab"] {
        assert!(!err.contains(internal), "{internal}: {err}");
    }
    // A repeated key nested deeper, beside another problem: both are named.
    let e = env(
        "permissions:\n  commands:\n    allow: [\"^ls\"]\n    allow: [\"^pwd\"]\n  prompt:\n    timeout: soon\n",
    );
    let (code, _, err) = run(&e, &["policy", "show"]);
    assert_eq!(code, 2);
    assert!(err.contains("(2 problems)"), "{err}");
    assert!(
        err.contains(
            ":4:5: the key `allow` appears twice in the same mapping (first at line 3, column 5)"
        ),
        "{err}"
    );
    assert!(err.contains(":6:14: `timeout` must be"), "{err}");
}

#[test]
fn hints_name_a_command_not_a_file_the_user_may_not_have() {
    let e = env("permissions:\n\tsandbox: true\n");
    let (code, _, err) = run(&e, &["policy", "show"]);
    assert_eq!(code, 2);
    assert!(err.contains("replace the tab with spaces"), "{err}");
    assert!(!err.contains("schema/"), "{err}");

    let e = env("permissions: [1, 2]\n");
    let (code, _, err) = run(&e, &["policy", "show"]);
    assert_eq!(code, 2);
    assert!(!err.contains("schema/"), "{err}");

    // The schema the hints name is printed by the binary and is valid JSON Schema.
    let (code, out, _) = run(&e, &["policy", "schema"]);
    assert_eq!(code, 0);
    let schema: Value = serde_json::from_str(&out).unwrap();
    assert!(jsonschema::validator_for(&schema).is_ok());
    assert!(schema["properties"]["permissions"].is_object());
}
