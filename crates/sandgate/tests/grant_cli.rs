//! `sandgate grant` and `sandgate detect` through the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use assert_cmd::Command;
use serde_json::{json, Value};

const LOOP: &str = "\
providers:
  providers:
    - name: main
      command: claude
    - command: cargo
validations:
  - name: tests
    detector:
      script: {command: cargo, args: [test]}
  - name: lint
    detector:
      script: {command: ./scripts/lint.sh}
  - detector:
      manual: the landing page renders
skills:
  acquisition_order: [installed, marketplace]
constraints:
  human_checkpoint:
    - before publishing a release
    - before sending email
";

const RULES: [&str; 10] = [
    "Bash(./scripts/lint.sh:*)",
    "Bash(cargo:*)",
    "Bash(claude:*)",
    "Bash(npx skills:*)",
    "Edit",
    "Glob",
    "Grep",
    "Read",
    "WebFetch(domain:claudemarketplaces.com)",
    "Write",
];

/// The binary with a private HOME and no policy overrides from the environment.
fn sandgate(home: &Path) -> Command {
    let mut cmd = Command::cargo_bin("sandgate").unwrap();
    cmd.env("HOME", home)
        .env("SANDGATE_MANAGED_CONFIG", home.join("no-managed.yaml"))
        .env_remove("SANDGATE_CONFIG")
        .env_remove("SANDGATE_LOCAL_CONFIG")
        .env_remove("BROWSER");
    cmd
}

fn loop_dir(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("loop.yaml"), text).unwrap();
    dir
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_preflight_lists_the_rules_then_the_two_sentences_and_the_checkpoints() {
    let dir = loop_dir(LOOP);
    let out = sandgate(dir.path())
        .arg("grant")
        .arg(dir.path().join("loop.yaml"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let listed: String = RULES.iter().map(|r| format!("  {r}\n")).collect();
    assert!(text.contains(&listed), "{text}");
    let nothing_else = text
        .find("Nothing outside this list is requested.\n")
        .expect("first sentence");
    let still_stop = text
        .find(
            "Human checkpoints still stop and wait, whatever this grant allows:\n  \
             - before publishing a release\n  - before sending email\n",
        )
        .expect("second sentence with the checkpoints");
    assert!(text.find("  Write\n").unwrap() < nothing_else);
    assert!(nothing_else < still_stop);
}

#[test]
fn the_preflight_as_json() {
    let dir = loop_dir(LOOP);
    let out = sandgate(dir.path())
        .args(["--json", "grant"])
        .arg(dir.path().join("loop.yaml"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["rules"], json!(RULES));
    assert_eq!(
        value["checkpoints"],
        json!(["before publishing a release", "before sending email"])
    );
    assert_eq!(
        value["nothing_else"],
        "Nothing outside this list is requested."
    );
}

#[test]
fn write_merges_reports_and_is_idempotent() {
    let dir = loop_dir(LOOP);
    let settings = dir.path().join(".claude/settings.local.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    fs::write(
        &settings,
        r#"{"theme": "light", "permissions": {"allow": ["Skill(claude-api)"]}}"#,
    )
    .unwrap();
    let run = || {
        sandgate(dir.path())
            .arg("grant")
            .arg(dir.path().join("loop.yaml"))
            .arg("--write")
            .arg(&settings)
            .output()
            .unwrap()
    };
    let first = run();
    assert!(first.status.success(), "{}", stderr(&first));
    let text = stdout(&first);
    let head = format!("wrote 10 permission rule(s) to {}\n", settings.display());
    assert!(text.starts_with(&head), "{text}");
    let on_disk = fs::read_to_string(&settings).unwrap();
    assert_eq!(&text[head.len()..], on_disk, "the merged JSON is printed");
    let merged: Value = serde_json::from_str(&on_disk).unwrap();
    assert_eq!(merged["theme"], "light");
    let allow = merged["permissions"]["allow"].as_array().unwrap();
    assert_eq!(allow[0], "Skill(claude-api)");
    assert_eq!(allow.len(), 11);

    let second = run();
    assert!(second.status.success());
    assert_eq!(stdout(&second), text, "same N, same JSON");
    assert_eq!(fs::read_to_string(&settings).unwrap(), on_disk);
}

#[test]
fn write_creates_the_file_and_its_parents_relative_to_cwd() {
    let dir = loop_dir(LOOP);
    let out = sandgate(dir.path())
        .current_dir(dir.path())
        .args([
            "grant",
            "loop.yaml",
            "--write",
            ".claude/settings.local.json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("wrote 10 permission rule(s) to .claude/settings.local.json\n")
    );
    let text = fs::read_to_string(dir.path().join(".claude/settings.local.json")).unwrap();
    assert!(text.ends_with("}\n"));
    let merged: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(merged, json!({"permissions": {"allow": RULES}}));
}

#[test]
fn write_refuses_what_it_cannot_merge_and_writes_nothing() {
    let dir = loop_dir(LOOP);
    let settings = dir.path().join("settings.json");
    let cases = [
        (r#"{"permissions": ["Read"]}"#, "`permissions`"),
        ("{\"theme\": \"light\",,}", "not valid JSON"),
        ("[\"Read\"]", "not an object"),
    ];
    for (original, says) in cases {
        fs::write(&settings, original).unwrap();
        let out = sandgate(dir.path())
            .arg("grant")
            .arg(dir.path().join("loop.yaml"))
            .arg("--write")
            .arg(&settings)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{original}");
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
        assert!(stdout(&out).is_empty());
        assert_eq!(fs::read_to_string(&settings).unwrap(), original);
    }
    // The parse error itself is shown.
    fs::write(&settings, "{\n  \"a\": 1\n  \"b\": 2\n}").unwrap();
    let out = sandgate(dir.path())
        .arg("grant")
        .arg(dir.path().join("loop.yaml"))
        .arg("--write")
        .arg(&settings)
        .output()
        .unwrap();
    assert!(stderr(&out).contains("line 3"), "{}", stderr(&out));

    // --force keeps a .bak copy, then writes.
    let out = sandgate(dir.path())
        .arg("grant")
        .arg(dir.path().join("loop.yaml"))
        .arg("--write")
        .arg(&settings)
        .arg("--force")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(dir.path().join("settings.json.bak")).unwrap(),
        "{\n  \"a\": 1\n  \"b\": 2\n}"
    );
    assert!(stderr(&out).contains("settings.json.bak"));
    let merged: Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(merged["permissions"]["allow"], json!(RULES));
}

#[test]
fn a_bad_loop_config_is_exit_2_naming_file_and_line() {
    let dir = loop_dir("providers:\n  providers:\n    - command: claude\n      model: opus\n");
    let out = sandgate(dir.path())
        .current_dir(dir.path())
        .args(["grant", "loop.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("loop.yaml:4:"), "{err}");
    assert!(err.contains("`model`"), "{err}");

    let out = sandgate(dir.path())
        .args(["grant", "/nonexistent/loop.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/loop.yaml"));
}

#[test]
fn format_sandgate_is_a_policy_the_engine_loads_and_applies() {
    let dir = loop_dir(LOOP);
    let out = sandgate(dir.path())
        .arg("grant")
        .arg(dir.path().join("loop.yaml"))
        .args(["--format", "sandgate"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let policy = dir.path().join("grant.yaml");
    fs::write(&policy, stdout(&out)).unwrap();

    let check = |request: Value| -> Value {
        let out = sandgate(dir.path())
            .arg("--json")
            .arg("--config")
            .arg(&policy)
            .arg("--cwd")
            .arg(dir.path())
            .arg("check")
            .arg(request.to_string())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let cmd = |c: &str| json!({"tool": "exec_run", "params": {"command": c}});
    assert_eq!(check(cmd("cargo test --all"))["verdict"], "allow");
    assert_eq!(check(cmd("claude -p hi"))["verdict"], "allow");
    assert_eq!(check(cmd("./scripts/lint.sh"))["verdict"], "allow");
    assert_eq!(check(cmd("npx skills add x"))["verdict"], "allow");
    assert_eq!(check(cmd("npx other"))["verdict"], "ask");
    assert_eq!(check(cmd("cargox"))["verdict"], "ask");
    assert_eq!(check(cmd("curl example.com"))["verdict"], "ask");
    let read = |p: &str| json!({"tool": "file_read", "params": {"path": p}});
    assert_eq!(check(read("src/main.rs"))["verdict"], "allow");
    assert_ne!(check(read("/etc/passwd"))["verdict"], "allow");
}

#[test]
fn shim_prints_compat_sh() {
    let dir = tempfile::tempdir().unwrap();
    let out = sandgate(dir.path())
        .args(["grant", "shim"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = stdout(&out);
    assert_eq!(text, sandgate_grant::COMPAT_SH);
    for helper in [
        "sed_i()",
        "stat_size()",
        "stat_mtime()",
        "readlink_f()",
        "sha256()",
        "need_bash()",
        "require()",
        "compat_report()",
    ] {
        assert!(text.contains(helper), "{helper}");
    }
}

fn script(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, body).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A loop whose detectors exit with each of `codes`, in order.
fn detector_loop(codes: &[i32]) -> tempfile::TempDir {
    let mut text = String::from("validations:\n");
    for code in codes {
        text.push_str(&format!(
            "  - name: exits-{code}\n    detector:\n      script: {{command: ./checks/exit.sh, args: ['{code}']}}\n"
        ));
    }
    let dir = loop_dir(&text);
    script(
        dir.path(),
        "checks/exit.sh",
        "#!/bin/sh\necho \"said $1\"\nexit \"$1\"\n",
    );
    dir
}

#[test]
fn detect_reports_pass_fail_cannot_run_and_error_and_exits_with_the_worst() {
    let dir = detector_loop(&[0, 1, 2, 3]);
    let out = sandgate(dir.path())
        .arg("detect")
        .arg(dir.path().join("loop.yaml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = stdout(&out);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name} missing: {text}"))
            .to_string()
    };
    assert!(line("exits-0").starts_with("pass "), "{text}");
    assert!(line("exits-1").starts_with("fail "), "{text}");
    assert!(line("exits-2").starts_with("cannot run here "), "{text}");
    assert!(line("exits-3").starts_with("error "), "{text}");
    assert!(text.contains("4 detector(s): 1 pass, 1 fail, 1 cannot run here, 1 error"));
    assert!(
        text.contains("    | said 3"),
        "output of a non-passing detector is shown"
    );

    for (codes, worst) in [
        (&[0][..], 0),
        (&[0, 1][..], 1),
        (&[1, 2, 0][..], 2),
        (&[2, 1][..], 2),
        (&[0, 3, 1][..], 3),
    ] {
        let dir = detector_loop(codes);
        let out = sandgate(dir.path())
            .arg("detect")
            .arg(dir.path().join("loop.yaml"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(worst), "{codes:?}");
    }
}

#[test]
fn detect_as_json() {
    let dir = detector_loop(&[0, 2]);
    let out = sandgate(dir.path())
        .arg("--json")
        .arg("detect")
        .arg(dir.path().join("loop.yaml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["outcome"], "cannot-run");
    assert_eq!(value["detectors"][0]["outcome"], "pass");
    assert_eq!(value["detectors"][1]["outcome"], "cannot-run");
    assert_eq!(value["detectors"][1]["exit_code"], 2);
    assert_eq!(value["detectors"][1]["stdout"], "said 2\n");
}

#[test]
fn detectors_run_without_a_shell_from_the_loop_directory() {
    let dir = loop_dir(
        "validations:\n  - name: literal\n    detector:\n      script:\n        command: ./checks/args.sh\n        args: ['$HOME; echo injected', '*', '']\n",
    );
    script(
        dir.path(),
        "checks/args.sh",
        "#!/bin/sh\nprintf '<%s>\\n' \"$@\"\npwd -P\n. ./checks/compat.sh\nrequire sh\nexit 1\n",
    );
    let shim = sandgate(dir.path())
        .args(["grant", "shim"])
        .output()
        .unwrap();
    fs::write(dir.path().join("checks/compat.sh"), &shim.stdout).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let out = sandgate(dir.path())
        .current_dir(elsewhere.path())
        .arg("detect")
        .arg(dir.path().join("loop.yaml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("| <$HOME; echo injected>\n"), "{text}");
    assert!(text.contains("| <*>\n"), "{text}");
    assert!(text.contains("| <>\n"), "{text}");
    assert!(!text.contains("| injected"), "{text}");
    let canonical = fs::canonicalize(dir.path()).unwrap();
    assert!(
        text.contains(&format!("| {}\n", canonical.display())),
        "runs from the loop dir: {text}"
    );
}

#[test]
fn a_detector_that_cannot_start_is_an_error() {
    let dir = loop_dir(
        "validations:\n  - name: gone\n    detector:\n      script: {command: ./checks/missing.sh}\n  - name: ok\n    detector:\n      script: {command: true}\n",
    );
    let out = sandgate(dir.path())
        .arg("detect")
        .arg(dir.path().join("loop.yaml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = stdout(&out);
    assert!(
        text.contains("error ") && text.contains("cannot start"),
        "{text}"
    );
    assert!(text.contains("pass "), "{text}");
}

#[test]
fn detect_with_no_script_detectors_passes() {
    let dir = loop_dir("validations:\n  - detector:\n      manual: look\n");
    let out = sandgate(dir.path())
        .arg("detect")
        .arg(dir.path().join("loop.yaml"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(stdout(&out).contains("no script detectors"));
}

#[test]
fn a_detector_past_the_timeout_is_killed_and_is_an_error() {
    let dir = loop_dir(
        "validations:\n  - name: hangs\n    detector:\n      script: {command: ./checks/hang.sh}\n",
    );
    script(
        dir.path(),
        "checks/hang.sh",
        "#!/bin/sh\necho started\nexec sleep 30\n",
    );
    let started = std::time::Instant::now();
    let out = sandgate(dir.path())
        .arg("detect")
        .arg(dir.path().join("loop.yaml"))
        .args(["--timeout", "0.5"])
        .output()
        .unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(3));
    let text = stdout(&out);
    assert!(text.starts_with("error "), "{text}");
    assert!(text.contains("timed out after 0.5 s"), "{text}");
    assert!(text.contains("| started"), "{text}");

    let out = sandgate(dir.path())
        .arg("detect")
        .arg(dir.path().join("loop.yaml"))
        .args(["--timeout", "-1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Claude Code ignores a project's settings until it trusts the folder:
/// `grant --write` into them says so, and how to fix it, until it does.
#[test]
fn write_into_an_untrusted_project_warns() {
    let home = tempfile::tempdir().unwrap();
    let dir = loop_dir(LOOP);
    let project = fs::canonicalize(dir.path()).unwrap();
    let grant = || {
        sandgate(home.path())
            .current_dir(&project)
            .args([
                "grant",
                "loop.yaml",
                "--write",
                ".claude/settings.local.json",
            ])
            .output()
            .unwrap()
    };
    let out = grant();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("take effect only once Claude Code trusts the folder")
            && err.contains("hasTrustDialogAccepted")
            && err.contains("~/.claude/settings.json"),
        "{err}"
    );
    // The user's own settings need no trust.
    let out = sandgate(home.path())
        .current_dir(&project)
        .args(["grant", "loop.yaml", "--write"])
        .arg(home.path().join(".claude/settings.json"))
        .output()
        .unwrap();
    assert!(
        !stderr(&out).contains("trusts the folder"),
        "{}",
        stderr(&out)
    );
    // Trusted (a parent counts too): no warning.
    fs::write(
        home.path().join(".claude.json"),
        json!({"projects": {project.to_string_lossy(): {"hasTrustDialogAccepted": true}}})
            .to_string(),
    )
    .unwrap();
    let out = grant();
    assert!(
        !stderr(&out).contains("trusts the folder"),
        "{}",
        stderr(&out)
    );
}
