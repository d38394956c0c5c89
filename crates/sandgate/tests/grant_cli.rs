//! `sandgate grant` and `sandgate detect` through the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/wait.rs"]
mod wait;

use wait::{Bounded, DEADLINE};

use std::fs;
use std::path::Path;

use serde_json::{json, Value};
use std::process::Command;

#[path = "../../../tests/support/exe.rs"]
mod exe;

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

/// The programs' rules of [`LOOP`], before the file rules of its directory.
const PROGRAM_RULES: [&str; 4] = [
    "Bash(./scripts/lint.sh:*)",
    "Bash(cargo:*)",
    "Bash(claude:*)",
    "Bash(npx skills:*)",
];

/// The deny rules every grant writes: the floor, for both file tools, sorted.
const DENY: [&str; 8] = [
    "Edit(~/.aws/**)",
    "Edit(~/.gnupg/**)",
    "Edit(~/.sandgate/**)",
    "Edit(~/.ssh/**)",
    "Read(~/.aws/**)",
    "Read(~/.gnupg/**)",
    "Read(~/.sandgate/**)",
    "Read(~/.ssh/**)",
];

/// The allow rules of [`LOOP`] in `dir`: sorted, the file tools scoped to
/// the canonical directory with an absolute pattern.
fn rules(dir: &Path) -> Vec<String> {
    let pattern = format!("/{}/**", fs::canonicalize(dir).unwrap().display());
    let mut all: Vec<String> = PROGRAM_RULES.iter().map(|r| r.to_string()).collect();
    all.push(format!("Edit({pattern})"));
    all.push(format!("Read({pattern})"));
    all.push("WebFetch(domain:claudemarketplaces.com)".into());
    all
}

/// The binary with a private HOME and no policy overrides from the environment.
fn sandgate(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
    cmd.env("HOME", home)
        .env("SANDGATE_MANAGED_CONFIG", home.join("no-managed.yaml"))
        .env_remove("SANDGATE_CONFIG")
        .env_remove("SANDGATE_LOCAL_CONFIG")
        .env_remove("BROWSER");
    cmd
}

/// A loop directory holding `loop.yaml`, with a home directory of its own
/// beside it (a grant refuses a loop directory that holds the home).
struct LoopTree {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl LoopTree {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn sandgate(&self) -> Command {
        sandgate(self.home.path())
    }

    fn grant(&self) -> Command {
        let mut cmd = self.sandgate();
        cmd.arg("grant").arg(self.path().join("loop.yaml"));
        cmd
    }
}

fn loop_tree(text: &str) -> LoopTree {
    let dir = loop_dir(text);
    LoopTree {
        dir,
        home: tempfile::tempdir().unwrap(),
    }
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
    let t = loop_tree(LOOP);
    let out = t.grant().output_within(DEADLINE).unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("This loop needs 7 permission rule(s):\n\n"),
        "{text}"
    );
    let listed: String = rules(t.path()).iter().map(|r| format!("  {r}\n")).collect();
    assert!(text.contains(&listed), "{text}");
    assert!(
        !text.contains("  Read\n") && !text.contains("  Write\n"),
        "{text}"
    );
    let denied: String = DENY.iter().map(|r| format!("  {r}\n")).collect();
    let deny_at = text.find(&denied).expect("the deny rules");
    assert!(
        text.contains(
            "It also denies 8 rule(s), so Claude Code's file tools never reach \
             sandgate's floor (~/.ssh, ~/.aws, ~/.gnupg, ~/.sandgate):\n"
        ),
        "{text}"
    );
    let nothing_else = text
        .find("Nothing outside this list is requested.\n")
        .expect("first sentence");
    let still_stop = text
        .find(
            "Human checkpoints still stop and wait, whatever this grant allows:\n  \
             - before publishing a release\n  - before sending email\n",
        )
        .expect("second sentence with the checkpoints");
    assert!(text.find(&listed).unwrap() < deny_at);
    assert!(deny_at < nothing_else);
    assert!(nothing_else < still_stop);
}

#[test]
fn the_preflight_as_json() {
    let t = loop_tree(LOOP);
    let out = t
        .sandgate()
        .args(["--json", "grant"])
        .arg(t.path().join("loop.yaml"))
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["rules"], json!(rules(t.path())));
    assert_eq!(value["deny"], json!(DENY));
    assert_eq!(
        value["loop_dir"],
        json!(fs::canonicalize(t.path()).unwrap().display().to_string())
    );
    assert_eq!(
        value["checkpoints"],
        json!(["before publishing a release", "before sending email"])
    );
    assert_eq!(
        value["nothing_else"],
        "Nothing outside this list is requested."
    );
}

/// The loop's directory is where loop.yaml is, canonical, wherever sandgate
/// is started from and however the config is named.
#[test]
fn the_file_rules_name_the_canonical_loop_directory() {
    let t = loop_tree(LOOP);
    let real = fs::canonicalize(t.path()).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let link = elsewhere.path().join("via-link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let expected = json!(rules(t.path()));
    for (cwd, config) in [
        (real.clone(), "loop.yaml".to_string()),
        (real.join("scripts"), "../loop.yaml".to_string()),
        (
            elsewhere.path().to_path_buf(),
            "via-link/loop.yaml".to_string(),
        ),
        (real.clone(), link.join("loop.yaml").display().to_string()),
    ] {
        fs::create_dir_all(&cwd).unwrap();
        let out = t
            .sandgate()
            .current_dir(&cwd)
            .args(["--json", "grant", &config])
            .output_within(DEADLINE)
            .unwrap();
        assert!(out.status.success(), "{config}: {}", stderr(&out));
        let value: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(value["rules"], expected, "{config} from {}", cwd.display());
    }
}

/// The home directory, a directory above it (up to the root of the tree),
/// a floor directory and a path a rule cannot spell are refused with exit 2,
/// naming the directory, and nothing is written. (`/` is the unit tests'.)
#[test]
fn a_loop_directory_that_would_reach_the_floor_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(root.path()).unwrap();
    let home = root.join("users/me");
    let ssh = home.join(".ssh/loop");
    let star = root.join("a*b");
    for d in [&home, &ssh, &star] {
        fs::create_dir_all(d).unwrap();
    }
    let cases = [
        (home.clone(), "holds the home directory".to_string()),
        (
            root.join("users"),
            format!("holds the home directory `{}`", home.display()),
        ),
        (root.clone(), "holds the home directory".to_string()),
        (ssh.clone(), "inside `~/.ssh`".to_string()),
        (star.clone(), "contains `*`".to_string()),
    ];
    for (dir, says) in cases {
        fs::write(dir.join("loop.yaml"), LOOP).unwrap();
        let settings = dir.join("settings.json");
        for extra in [
            &[][..],
            &["--write", "settings.json"][..],
            &["--format", "sandgate"][..],
        ] {
            let out = sandgate(&home)
                .current_dir(&dir)
                .args(["grant", "loop.yaml"])
                .args(extra)
                .output_within(DEADLINE)
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{} {extra:?}", dir.display());
            let err = stderr(&out);
            assert!(
                err.contains(&format!("the loop directory `{}`", dir.display()))
                    && err.contains(&says),
                "{} {extra:?}: {err}",
                dir.display()
            );
            assert!(stdout(&out).is_empty(), "{}", stdout(&out));
            assert!(!settings.exists());
        }
    }
    // The home directory through a symlink to it is the home directory.
    let alias = root.join("alias");
    std::os::unix::fs::symlink(&home, &alias).unwrap();
    let out = sandgate(&alias)
        .arg("grant")
        .arg(alias.join("loop.yaml"))
        .output_within(DEADLINE)
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stderr(&out).contains("too wide"), "{}", stderr(&out));
}

#[test]
fn write_merges_reports_and_is_idempotent() {
    let t = loop_tree(LOOP);
    let settings = t.path().join(".claude/settings.local.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    fs::write(
        &settings,
        r#"{"theme": "light", "permissions": {"allow": ["Skill(claude-api)"], "deny": ["Bash(rm:*)", "Read(~/.ssh/**)"], "ask": ["Bash(git push:*)"]}}"#,
    )
    .unwrap();
    let run = || {
        t.grant()
            .arg("--write")
            .arg(&settings)
            .output_within(DEADLINE)
            .unwrap()
    };
    let first = run();
    assert!(first.status.success(), "{}", stderr(&first));
    let text = stdout(&first);
    let head = format!(
        "wrote 15 permission rule(s) to {} (7 allow, 8 deny)\n",
        settings.display()
    );
    assert!(text.starts_with(&head), "{text}");
    let on_disk = fs::read_to_string(&settings).unwrap();
    assert_eq!(&text[head.len()..], on_disk, "the merged JSON is printed");
    let merged: Value = serde_json::from_str(&on_disk).unwrap();
    assert_eq!(merged["theme"], "light");
    let allow = merged["permissions"]["allow"].as_array().unwrap();
    assert_eq!(allow[0], "Skill(claude-api)");
    assert_eq!(allow[1..], json!(rules(t.path())).as_array().unwrap()[..]);
    // The deny rules already there stay first and are not repeated.
    let deny: Vec<&str> = merged["permissions"]["deny"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(deny[..2], ["Bash(rm:*)", "Read(~/.ssh/**)"]);
    assert_eq!(deny.len(), 9, "{deny:?}");
    for rule in DENY {
        assert_eq!(deny.iter().filter(|d| **d == rule).count(), 1, "{rule}");
    }
    assert_eq!(merged["permissions"]["ask"], json!(["Bash(git push:*)"]));

    let second = run();
    assert!(second.status.success());
    assert_eq!(stdout(&second), text, "same N, same JSON");
    assert_eq!(fs::read_to_string(&settings).unwrap(), on_disk);
}

#[test]
fn write_as_json_counts_allow_and_deny() {
    let t = loop_tree(LOOP);
    let settings = t.path().join("settings.json");
    fs::write(
        &settings,
        r#"{"permissions": {"deny": ["Edit(~/.ssh/**)"]}}"#,
    )
    .unwrap();
    let out = t
        .sandgate()
        .args(["--json", "grant"])
        .arg(t.path().join("loop.yaml"))
        .arg("--write")
        .arg(&settings)
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["rules"], 15);
    assert_eq!(value["allow"], 7);
    assert_eq!(value["deny"], 8);
    assert_eq!(value["added"], 14);
    assert_eq!(
        value["settings"]["permissions"]["deny"]
            .as_array()
            .unwrap()
            .len(),
        8
    );
    assert_eq!(value["broad"], json!([]));
}

/// A settings file that already lets a file tool reach every path (as the
/// grant itself used to write) is merged, and the command says those rules
/// still open everything and must go by hand.
#[test]
fn write_warns_about_file_tool_rules_that_reach_every_path() {
    let t = loop_tree(LOOP);
    let settings = t.path().join("settings.json");
    fs::write(
        &settings,
        r#"{"permissions": {"allow": ["Read", "Write", "Edit(//**)", "Glob", "Grep", "Bash(ls)", "Read(./src/**)"]}}"#,
    )
    .unwrap();
    let out = t
        .grant()
        .arg("--write")
        .arg(&settings)
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("still holds `Read`, `Write`, `Edit(//**)`, `Glob`, `Grep`, which let Claude Code's file tools read or write any path"),
        "{err}"
    );
    assert!(
        !err.contains("`Bash(ls)`") && !err.contains("`Read(./src/**)`"),
        "{err}"
    );
    let merged: Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(
        merged["permissions"]["allow"][0], "Read",
        "kept, as every rule is"
    );

    let out = t
        .sandgate()
        .args(["--json", "grant"])
        .arg(t.path().join("loop.yaml"))
        .arg("--write")
        .arg(&settings)
        .output_within(DEADLINE)
        .unwrap();
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        value["broad"],
        json!(["Read", "Write", "Edit(//**)", "Glob", "Grep"])
    );
    assert!(
        value["warnings"][0]
            .as_str()
            .unwrap()
            .contains("remove them by hand"),
        "{value}"
    );
}

#[test]
fn write_creates_the_file_and_its_parents_relative_to_cwd() {
    let t = loop_tree(LOOP);
    let out = t
        .sandgate()
        .current_dir(t.path())
        .args([
            "grant",
            "loop.yaml",
            "--write",
            ".claude/settings.local.json",
        ])
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with(
        "wrote 15 permission rule(s) to .claude/settings.local.json (7 allow, 8 deny)\n"
    ));
    let text = fs::read_to_string(t.path().join(".claude/settings.local.json")).unwrap();
    assert!(text.ends_with("}\n"));
    let merged: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        merged,
        json!({"permissions": {"allow": rules(t.path()), "deny": DENY}})
    );
}

#[test]
fn write_refuses_what_it_cannot_merge_and_writes_nothing() {
    let t = loop_tree(LOOP);
    let settings = t.path().join("settings.json");
    let cases = [
        (r#"{"permissions": ["Read"]}"#, "`permissions`"),
        (
            r#"{"permissions": {"allow": "Read"}}"#,
            "`permissions.allow`",
        ),
        (
            r#"{"permissions": {"deny": {"Read": true}}}"#,
            "`permissions.deny`",
        ),
        (
            r#"{"permissions": {"allow": [], "deny": null}}"#,
            "`permissions.deny`",
        ),
        ("{\"theme\": \"light\",,}", "not valid JSON"),
        ("[\"Read\"]", "not an object"),
    ];
    for (original, says) in cases {
        fs::write(&settings, original).unwrap();
        for force in [false, true] {
            let mut cmd = t.grant();
            cmd.arg("--write").arg(&settings);
            if force && says.starts_with('`') {
                // --force replaces only a file that is not a JSON object.
                cmd.arg("--force");
            } else if force {
                continue;
            }
            let out = cmd.output_within(DEADLINE).unwrap();
            assert_eq!(out.status.code(), Some(2), "{original}");
            assert!(stderr(&out).contains(says), "{}", stderr(&out));
            assert!(stdout(&out).is_empty());
            assert_eq!(fs::read_to_string(&settings).unwrap(), original);
        }
    }
    assert!(!t.path().join("settings.json.bak").exists());
    // The parse error itself is shown.
    fs::write(&settings, "{\n  \"a\": 1\n  \"b\": 2\n}").unwrap();
    let out = t
        .grant()
        .arg("--write")
        .arg(&settings)
        .output_within(DEADLINE)
        .unwrap();
    assert!(stderr(&out).contains("line 3"), "{}", stderr(&out));

    // --force keeps a .bak copy, then writes.
    let out = t
        .grant()
        .arg("--write")
        .arg(&settings)
        .arg("--force")
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(t.path().join("settings.json.bak")).unwrap(),
        "{\n  \"a\": 1\n  \"b\": 2\n}"
    );
    assert!(stderr(&out).contains("settings.json.bak"));
    let merged: Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(merged["permissions"]["allow"], json!(rules(t.path())));
    assert_eq!(merged["permissions"]["deny"], json!(DENY));
}

#[test]
fn a_bad_loop_config_is_exit_2_naming_file_and_line() {
    let t = loop_tree("providers:\n  providers:\n    - command: claude\n      model: opus\n");
    let out = t
        .sandgate()
        .current_dir(t.path())
        .args(["grant", "loop.yaml"])
        .output_within(DEADLINE)
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("loop.yaml:4:"), "{err}");
    assert!(err.contains("`model`"), "{err}");

    let out = t
        .sandgate()
        .args(["grant", "/nonexistent/loop.yaml"])
        .output_within(DEADLINE)
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/loop.yaml"));
}

#[test]
fn format_sandgate_is_a_policy_the_engine_loads_and_applies() {
    let t = loop_tree(LOOP);
    let out = t
        .grant()
        .args(["--format", "sandgate"])
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("# sandgate's floor, built in and denied before any rule"),
        "{text}"
    );
    assert!(!text.contains(".ssh/**"), "{text}");
    let policy = t.path().join("grant.yaml");
    fs::write(&policy, &text).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();

    let check = |cwd: &Path, request: Value| -> Value {
        let out = t
            .sandgate()
            .arg("--json")
            .arg("--config")
            .arg(&policy)
            .arg("--cwd")
            .arg(cwd)
            .arg("check")
            .arg(request.to_string())
            .output_within(DEADLINE)
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let cmd = |c: &str| json!({"tool": "exec_run", "params": {"command": c}});
    let dir = t.path();
    assert_eq!(check(dir, cmd("cargo test --all"))["verdict"], "allow");
    assert_eq!(check(dir, cmd("claude -p hi"))["verdict"], "allow");
    assert_eq!(check(dir, cmd("./scripts/lint.sh"))["verdict"], "allow");
    assert_eq!(check(dir, cmd("npx skills add x"))["verdict"], "allow");
    assert_eq!(check(dir, cmd("npx other"))["verdict"], "ask");
    assert_eq!(check(dir, cmd("cargox"))["verdict"], "ask");
    assert_eq!(check(dir, cmd("curl example.com"))["verdict"], "ask");
    let read = |p: &str| json!({"tool": "file_read", "params": {"path": p}});
    let write = |p: &str| json!({"tool": "file_write", "params": {"path": p, "content": "x"}});
    assert_eq!(check(dir, read("src/main.rs"))["verdict"], "allow");
    assert_eq!(check(dir, write("src/main.rs"))["verdict"], "allow");
    assert_ne!(check(dir, read("/etc/passwd"))["verdict"], "allow");
    // The loop's directory, not wherever the policy is evaluated.
    let inside = dir.join("src/main.rs").display().to_string();
    assert_eq!(check(elsewhere.path(), read(&inside))["verdict"], "allow");
    assert_ne!(
        check(elsewhere.path(), read("notes.txt"))["verdict"],
        "allow"
    );
    assert_eq!(check(dir, read("~/.ssh/id_rsa"))["verdict"], "deny");
}

/// The grant written into a settings file reads back through `sandgate
/// import claude` as the same scope: the loop's directory for reading and
/// writing, the floor denied.
#[test]
fn import_reads_the_grant_as_the_loop_directory_and_the_floor() {
    let t = loop_tree(LOOP);
    let settings = t.path().join("settings.json");
    let out = t
        .grant()
        .arg("--write")
        .arg(&settings)
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = t
        .sandgate()
        .args(["--json", "import", "claude"])
        .arg(&settings)
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    let converted: Vec<(String, String, String)> = value["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["section"] != "commands")
        .map(|r| {
            (
                r["section"].as_str().unwrap().to_string(),
                r["list"].as_str().unwrap().to_string(),
                r["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let scope = format!("{}/**", fs::canonicalize(t.path()).unwrap().display());
    for section in ["paths.read", "paths.write"] {
        assert!(
            converted.contains(&(section.into(), "allow".into(), scope.clone())),
            "{converted:?}"
        );
        for dir in [".ssh", ".aws", ".gnupg", ".sandgate"] {
            assert!(
                converted.contains(&(section.into(), "deny".into(), format!("~/{dir}/**"))),
                "{section} {dir}: {converted:?}"
            );
        }
    }
    assert_eq!(converted.len(), 10, "{converted:?}");
}

#[test]
fn shim_prints_compat_sh() {
    let dir = tempfile::tempdir().unwrap();
    let out = sandgate(dir.path())
        .args(["grant", "shim"])
        .output_within(DEADLINE)
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
    exe::write_executable(&path, body);
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
        .output_within(DEADLINE)
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
            .output_within(DEADLINE)
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
        .output_within(DEADLINE)
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
        .output_within(DEADLINE)
        .unwrap();
    fs::write(dir.path().join("checks/compat.sh"), &shim.stdout).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let out = sandgate(dir.path())
        .current_dir(elsewhere.path())
        .arg("detect")
        .arg(dir.path().join("loop.yaml"))
        .output_within(DEADLINE)
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
        .output_within(DEADLINE)
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
        .output_within(DEADLINE)
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
        .output_within(DEADLINE)
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
        .output_within(DEADLINE)
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
            .output_within(DEADLINE)
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
        .output_within(DEADLINE)
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
