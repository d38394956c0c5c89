//! `sandgate init` and its presets, and `sandgate policy test`, through the
//! real binary: each preset against the corpus in `tests/presets/corpus.yaml`
//! (benign commands that must not ask, dangerous ones in many spellings that
//! must be denied), and the self-tests as a load error on every surface.
//!
//! Every command is only judged, never run; each test has its own home.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use wait::{Bounded, BoundedChild, DEADLINE};

use sandgate_policy::load::{parse_policy, LoadedFile};
use sandgate_policy::{Context, Policy, Sources, Tier, ToolCall, Verdict};

#[path = "../../../tests/support/wait.rs"]
mod wait;

const PRESETS: [&str; 4] = ["readonly", "node", "rust", "python"];

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    cwd: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let cwd = home.join("projects/app");
        std::fs::create_dir_all(cwd.join("src")).unwrap();
        // The tree is ours: nothing outside it is named as HOME or CWD.
        assert!(cwd.starts_with(&root) && home.starts_with(&root));
        Env {
            _tmp: tmp,
            home,
            cwd,
        }
    }

    fn central(&self) -> PathBuf {
        self.home.join(".sandgate/permissions.yaml")
    }

    fn sandgate(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_sandgate"));
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("SANDGATE_MANAGED_CONFIG", self.home.join("no-managed.yaml"))
            .env("SANDGATE_CACHE_DIR", self.home.join("cache"))
            .env("SANDGATE_AUDIT", "off")
            .env("NO_COLOR", "1")
            .current_dir(&self.cwd);
        c
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let o = self.sandgate().args(args).output_within(DEADLINE).unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into(),
            String::from_utf8_lossy(&o.stderr).into(),
        )
    }

    fn check_command(&self, command: &str) -> (Verdict, String) {
        let request = serde_json::json!({"tool": "exec_run", "params": {"command": command}});
        let (code, out, err) = self.run(&["--json", "check", &request.to_string()]);
        assert_eq!(code, 0, "{command}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let verdict = match v["verdict"].as_str().unwrap() {
            "allow" => Verdict::Allow,
            "ask" => Verdict::Ask,
            _ => Verdict::Deny,
        };
        (verdict, v["reason"].as_str().unwrap_or("").to_string())
    }
}

type Corpus = BTreeMap<String, BTreeMap<String, Vec<String>>>;

fn corpus() -> Corpus {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/presets/corpus.yaml");
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The corpus cases of `preset`: every `all` case and the preset's own.
fn cases(corpus: &Corpus, preset: &str) -> Vec<(Verdict, String)> {
    let mut out = Vec::new();
    for section in ["all", preset] {
        for (kind, commands) in corpus.get(section).into_iter().flatten() {
            let verdict = match kind.as_str() {
                "allow" => Verdict::Allow,
                "ask" => Verdict::Ask,
                "deny" => Verdict::Deny,
                other => panic!("corpus: unknown kind `{other}`"),
            };
            out.extend(commands.iter().map(|c| (verdict, c.clone())));
        }
    }
    out
}

#[test]
fn every_preset_meets_the_corpus_through_the_binary_and_the_library() {
    let corpus = corpus();
    for preset in PRESETS {
        let e = Env::new();
        let (code, out, err) = e.run(&["init", "--preset", preset]);
        assert_eq!(code, 0, "{preset}: {out}{err}");
        let cases = cases(&corpus, preset);
        assert!(cases.len() > 180, "{preset}: {} cases", cases.len());
        // The other presets' ecosystem commands are not allowed by this one.
        let mut wrong = Vec::new();
        for (want, command) in &cases {
            let (got, reason) = e.check_command(command);
            if got != *want {
                wrong.push(format!("want {want}, got {got}: `{command}`: {reason}"));
            }
        }
        // The file tools: reading the working directory's tree is allowed,
        // reading elsewhere and every write ask, the floor and the raw
        // devices are denied.
        std::fs::write(e.home.join("notes.md"), "x").unwrap();
        for (tool, path, want) in [
            ("file_read", "~/projects/app/README.md", Verdict::Allow),
            ("file_read", "src", Verdict::Allow),
            ("file_grep", ".", Verdict::Allow),
            ("file_list", "./src", Verdict::Allow),
            ("file_head_tail", "./README.md", Verdict::Allow),
            ("file_read", "~/notes.md", Verdict::Ask),
            ("file_read", "/etc/hostname", Verdict::Ask),
            ("file_write", "~/projects/app/src/main.rs", Verdict::Ask),
            ("file_edit", "./README.md", Verdict::Ask),
            ("file_write", "~/notes.md", Verdict::Ask),
            ("file_read", "~/.ssh/id_rsa", Verdict::Deny),
            ("file_write", "~/.aws/credentials", Verdict::Deny),
            ("file_read", "/dev/sda", Verdict::Deny),
            ("file_write", "/dev/nvme0n1", Verdict::Deny),
        ] {
            let request = serde_json::json!({"tool": tool, "params": {"path": path}});
            let (code, out, err) = e.run(&["--json", "check", &request.to_string()]);
            assert_eq!(code, 0, "{err}");
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            if v["verdict"] != want.as_str() {
                wrong.push(format!(
                    "want {want}, got {}: {tool} `{path}`",
                    v["verdict"]
                ));
            }
        }
        assert!(wrong.is_empty(), "preset {preset}:\n{}", wrong.join("\n"));

        // The library, from the same file, agrees case by case.
        let text = std::fs::read_to_string(e.central()).unwrap();
        let file = parse_policy(&text, &e.central()).unwrap();
        let loaded = LoadedFile {
            tier: Tier::Central,
            path: e.central(),
            file,
        };
        let sources = Sources {
            central: Some(e.central()),
            ..Sources::default()
        };
        let ctx = Context::new(&e.cwd, &e.home).unwrap();
        let policy = Policy::from_files(sources, &[loaded], &ctx).unwrap();
        for (want, command) in &cases {
            let call = ToolCall::new("exec_run", serde_json::json!({ "command": command }));
            assert_eq!(
                policy.evaluate(&call, &ctx).verdict,
                *want,
                "{preset}: `{command}`"
            );
        }
    }
}

#[test]
fn ecosystem_commands_ask_under_the_other_presets() {
    let corpus = corpus();
    let e = Env::new();
    assert_eq!(e.run(&["init", "--preset", "readonly"]).0, 0);
    for preset in ["node", "rust", "python"] {
        for command in &corpus[preset]["allow"] {
            let (got, _) = e.check_command(command);
            assert_eq!(got, Verdict::Ask, "readonly allows `{command}` of {preset}");
        }
    }
}

#[test]
fn init_writes_the_policy_and_the_schema_its_first_line_names() {
    let e = Env::new();
    let (code, out, err) = e.run(&["init"]);
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(e.central()).unwrap();
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        "# yaml-language-server: $schema=./permissions.schema.json"
    );
    let schema = std::fs::read_to_string(e.home.join(".sandgate/permissions.schema.json")).unwrap();
    let (_, printed, _) = e.run(&["policy", "schema"]);
    assert_eq!(
        schema, printed,
        "the schema beside the policy is the binary's"
    );
    // One self-test a line, after `tests:`; they name every program the
    // preset allows, so there are dozens.
    let tests = text
        .split_once("\ntests:\n")
        .unwrap()
        .1
        .lines()
        .filter(|l| l.starts_with("  - {"))
        .count();
    assert!(tests > 40, "{tests} self-tests");
    assert!(
        out.contains(&format!("preset `readonly`, {tests} self-tests")),
        "{out}"
    );
    // The policy loads, with its tests, and `policy test` shows each.
    let (code, out, _) = e.run(&["policy", "test"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("pass ")).count(),
        tests,
        "{out}"
    );
    assert!(
        out.ends_with(&format!("{tests} tests: {tests} passed, 0 failed\n")),
        "{out}"
    );
    // `--print` writes nothing and prints the same text.
    let (code, printed, _) = e.run(&["init", "--print"]);
    assert_eq!(code, 0);
    assert_eq!(printed, text);
}

/// Every preset loads, and its self-tests hold, wherever the agent works:
/// the project, the home directory (which holds the floor) and `/`. A self-test
/// that fails makes every hook call exit 2, so a preset that only holds in a
/// project would block an agent started in `~`.
#[test]
fn every_preset_loads_with_the_cwd_at_home_in_a_project_and_at_the_root() {
    for preset in PRESETS {
        let e = Env::new();
        std::fs::create_dir_all(e.home.join(".ssh")).unwrap();
        std::fs::write(e.home.join(".ssh/id_rsa"), "key\n").unwrap();
        let (code, out, err) = e.run(&["init", "--preset", preset]);
        assert_eq!(code, 0, "{preset}: {out}{err}");
        for dir in [e.cwd.clone(), e.home.clone(), PathBuf::from("/")] {
            let o = e
                .sandgate()
                .current_dir(&dir)
                .args(["policy", "test"])
                .output_within(DEADLINE)
                .unwrap();
            assert_eq!(
                o.status.code(),
                Some(0),
                "{preset} in {}: {}{}",
                dir.display(),
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            let payload = serde_json::json!({
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "git status"},
                "cwd": dir,
            });
            let mut hook = e.sandgate();
            hook.current_dir(&dir).args(["hook", "claude"]);
            hook.stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            let mut child = hook.process_group(0).spawn().unwrap();
            {
                use std::io::Write;
                let mut stdin = child.stdin.take().unwrap();
                stdin.write_all(payload.to_string().as_bytes()).unwrap();
            }
            let o = wait::finish(child, 60, "sandgate hook claude");
            assert_eq!(
                o.status.code(),
                Some(0),
                "{preset}: the hook in {}: {}",
                dir.display(),
                String::from_utf8_lossy(&o.stderr)
            );
            let answer: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(
                answer["hookSpecificOutput"]["permissionDecision"],
                "allow",
                "{preset} in {}: {answer}",
                dir.display()
            );
        }
    }
}

#[test]
fn init_never_replaces_a_policy_without_force_and_keeps_every_backup() {
    let e = Env::new();
    std::fs::create_dir_all(e.central().parent().unwrap()).unwrap();
    let mine = "# my own policy\npermissions:\n  commands:\n    allow: ['^make( |$)']\n";
    std::fs::write(e.central(), mine).unwrap();
    let (code, out, err) = e.run(&["init", "--preset", "rust"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("already exists; nothing was written"), "{err}");
    assert!(err.contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(e.central()).unwrap(), mine);
    assert!(!e.home.join(".sandgate/permissions.schema.json").exists());

    let (code, out, err) = e.run(&["init", "--preset", "rust", "--force"]);
    assert_eq!(code, 0, "{out}{err}");
    let backup = e.home.join(".sandgate/permissions.yaml.bak");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), mine);
    assert!(out.contains("kept the previous policy as"), "{out}");
    let rust = std::fs::read_to_string(e.central()).unwrap();
    assert!(rust.contains("preset `rust`"));
    // A second --force keeps the first backup and makes another.
    let (code, _, _) = e.run(&["init", "--preset", "node", "--force"]);
    assert_eq!(code, 0);
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), mine);
    let second = e.home.join(".sandgate/permissions.yaml.bak.1");
    assert_eq!(std::fs::read_to_string(second).unwrap(), rust);
}

#[test]
fn init_writes_where_the_central_file_is_and_through_a_symlink() {
    let e = Env::new();
    // --config (and SANDGATE_CONFIG) name the central file.
    let elsewhere = e.home.join("dotfiles/sandgate.yaml");
    let (code, out, err) = e.run(&["--config", elsewhere.to_str().unwrap(), "init"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(elsewhere.exists());
    assert!(e.home.join("dotfiles/permissions.schema.json").exists());
    assert!(!e.central().exists());
    // A symlinked central file is replaced where it points; the link stays.
    std::fs::create_dir_all(e.central().parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, e.central()).unwrap();
    let (code, out, err) = e.run(&["init", "--preset", "python", "--force"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(std::fs::symlink_metadata(e.central())
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&elsewhere)
        .unwrap()
        .contains("preset `python`"));
    assert!(e.home.join("dotfiles/sandgate.yaml.bak").exists());
}

#[test]
fn init_refuses_what_is_not_a_regular_file_even_with_force() {
    let e = Env::new();
    std::fs::create_dir_all(e.central()).unwrap();
    let (code, _, err) = e.run(&["init", "--force"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("it is a directory, not a regular file"),
        "{err}"
    );
    std::fs::remove_dir(e.central()).unwrap();
    let fifo = e.central();
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status_within(DEADLINE)
        .unwrap()
        .success());
    let (code, _, err) = e.run(&["init", "--force"]);
    assert_eq!(code, 1);
    assert!(err.contains("named pipe"), "{err}");
}

#[test]
fn a_failing_self_test_fails_every_surface_closed_and_policy_test_names_it() {
    let e = Env::new();
    assert_eq!(e.run(&["init"]).0, 0);
    // Break the policy: the force-push deny rule goes.
    let text = std::fs::read_to_string(e.central()).unwrap();
    let broken: String = text
        .lines()
        .filter(|l| !l.contains("'^git push( .*)? (-f|"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(broken, text);
    std::fs::write(e.central(), &broken).unwrap();
    let line = broken
        .lines()
        .position(|l| l.contains("{command: \"git push -f origin main\", expect: deny}"))
        .unwrap()
        + 1;
    let at = format!("{}:{line}:", e.central().display());

    let request = r#"{"tool": "exec_run", "params": {"command": "ls"}}"#;
    let (code, out, err) = e.run(&["check", request]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(&at), "{err}");
    assert!(
        err.contains(
            "test failed: the command `git push -f origin main` should be deny but is ask"
        ),
        "{err}"
    );
    // The hook fails closed too (exit 2 blocks the call in Claude Code).
    let payload = serde_json::json!({
        "session_id": "s", "transcript_path": "/dev/null", "cwd": e.cwd,
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t"
    });
    let mut hook = e.sandgate();
    hook.args(["hook", "claude"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = hook.process_group(0).spawn().unwrap();
    {
        use std::io::Write;
        let _ = child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes());
    }
    let o = wait::finish(child, 60, "sandgate hook claude");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("test failed"));

    let (code, out, _) = e.run(&["policy", "test"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL  deny  the command `git push -f origin main`"),
        "{out}"
    );
    let tests = broken
        .split_once("\ntests:\n")
        .unwrap()
        .1
        .lines()
        .filter(|l| l.starts_with("  - {"))
        .count();
    assert!(
        out.contains(&format!("{tests} tests: {} passed, 2 failed", tests - 2)),
        "{out}"
    );
    let (code, out, _) = e.run(&["--json", "policy", "test"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["failed"], 2);
    assert_eq!(v["passed"], tests - 2);
    let failed: Vec<&serde_json::Value> = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["passed"] == false)
        .collect();
    assert_eq!(failed.len(), 2);
    assert_eq!(
        failed[1]["command"],
        "git push --force-with-lease origin main"
    );
    assert_eq!(failed[0]["command"], "git push -f origin main");
    assert_eq!(failed[0]["expect"], "deny");
    assert_eq!(failed[0]["verdict"], "ask");
    assert_eq!(
        failed[0]["origin"],
        format!("{}:{line}", e.central().display())
    );
}

#[test]
fn policy_test_without_tests_and_with_a_broken_file() {
    let e = Env::new();
    let (code, out, _) = e.run(&["policy", "test"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("no tests"), "{out}");
    std::fs::create_dir_all(e.central().parent().unwrap()).unwrap();
    std::fs::write(e.central(), "tests:\n  - {command: ls, expect: allwo}\n").unwrap();
    let (code, _, err) = e.run(&["policy", "test"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(":2:") && err.contains("did you mean `allow`?"),
        "{err}"
    );
}

#[test]
fn the_example_policy_passes_its_tests_and_reads_quietly() {
    let e = Env::new();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/permissions.yaml");
    let example = example.to_str().unwrap();
    let (code, out, err) = e.run(&["--config", example, "policy", "test"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("10 passed, 0 failed"), "{out}");
    let check = |command: &str| {
        let request = serde_json::json!({"tool": "exec_run", "params": {"command": command}});
        let (code, out, err) = e.run(&["--config", example, "check", &request.to_string()]);
        assert_eq!(code, 0, "{err}");
        out
    };
    for quiet in [
        "head -5 README.md",
        "wc -l x",
        "grep -n a x",
        "rg a",
        "pwd",
        "ls | wc -l",
    ] {
        assert!(check(quiet).starts_with("allow:"), "{quiet}");
    }
    for denied in [
        "git push -f",
        "git push --force origin main",
        "git push -uf origin x",
    ] {
        assert!(check(denied).starts_with("deny:"), "{denied}");
    }
}

#[test]
fn a_preset_lints_clean_naming_only_the_programs_whose_options_still_ask() {
    for preset in PRESETS {
        let e = Env::new();
        assert_eq!(e.run(&["init", "--preset", preset]).0, 0);
        let (code, out, err) = e.run(&["--json", "policy", "lint"]);
        assert_eq!(code, 0, "{preset}: {out}{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["warnings"], serde_json::json!([]), "{preset}: {v:#}");
        assert_eq!(v["undecided"], serde_json::json!([]), "{preset}: {v:#}");
        let (code, text, err) = e.run(&["policy", "lint"]);
        assert_eq!(code, 0, "{preset}: {text}{err}");
        assert!(text.starts_with("no warnings\n"), "{preset}: {text}");
        assert!(!text.contains("warning:"), "{preset}: {text}");
        assert!(!text.contains("not decided"), "{preset}: {text}");
        let mut programs: Vec<String> = Vec::new();
        for w in v["notes"].as_array().unwrap() {
            assert_eq!(w["kind"], "runs_programs", "{preset}: {w}");
            let message = w["message"].as_str().unwrap();
            programs.push(message.split('`').nth(1).unwrap().to_string());
        }
        assert_eq!(programs, ["rg", "find", "sort", "git"], "{preset}");
    }
}

/// Sends `payload` to `sandgate hook claude` and returns its answer.
fn claude_hook(e: &Env, payload: &serde_json::Value) -> String {
    use std::io::Write;
    let mut hook = e.sandgate();
    hook.args(["hook", "claude"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = hook.process_group(0).spawn().unwrap();
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes());
    let out = child.wait_with_output_within(DEADLINE).unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_preset_denies_reading_the_credential_stores_and_a_removed_rule_opens_one() {
    use sandgate_policy::credentials::CREDENTIAL_STORES;
    for preset in PRESETS {
        let e = Env::new();
        let (code, _, err) = e.run(&["init", "--preset", preset]);
        assert_eq!(code, 0, "{preset}: {err}");
        // Each store: the file tools and the command words are denied, and
        // the reason names it as a credential store.
        for store in CREDENTIAL_STORES {
            let path = store.path(&e.home);
            let target = if store.is_dir() {
                path.join("config")
            } else {
                path.clone()
            };
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(&target, "TOKEN\n").unwrap();
            let request = serde_json::json!({"tool": "file_read", "params": {"path": target}});
            let (code, out, err) = e.run(&["--json", "check", &request.to_string()]);
            assert_eq!(code, 0, "{preset} {}: {err}", store.rule);
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["verdict"], "deny", "{preset} {}: {out}", store.rule);
            let reason = v["reason"].as_str().unwrap_or("");
            assert!(
                reason.contains(&format!("a credential store: {}", store.why)),
                "{preset} {}: {reason}",
                store.rule
            );
            let (verdict, reason) = e.check_command(&format!("cat {}", target.display()));
            assert_eq!(verdict, Verdict::Deny, "{preset} {}: {reason}", store.rule);
        }
        let request =
            serde_json::json!({"tool": "file_read", "params": {"path": "~/.netrc"}}).to_string();
        let (code, out, _) = e.run(&["policy", "explain", &request]);
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains("a credential store: logins and passwords"),
            "{out}"
        );
        // The hook denies the agent's own file tool too.
        let payload = serde_json::json!({
            "session_id": "s", "transcript_path": "/dev/null", "cwd": e.cwd,
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Read", "tool_input": {"file_path": e.home.join(".netrc")},
            "tool_use_id": "t"
        });
        let answer = claude_hook(&e, &payload);
        assert!(answer.contains("\"deny\""), "{preset}: {answer}");
        // The control: without its line (and the self-test that pins it),
        // the store is no longer denied.
        let text = std::fs::read_to_string(e.central()).unwrap();
        let without = text.replace("      - \"~/.netrc\"\n", "").replace(
            "  - {path: \"~/.netrc\", tool: file_read, expect: deny}\n",
            "",
        );
        assert_ne!(text, without, "{preset}: the rule is written as expected");
        std::fs::write(e.central(), without).unwrap();
        let request =
            serde_json::json!({"tool": "file_read", "params": {"path": e.home.join(".netrc")}});
        let (_, out, _) = e.run(&["--json", "check", &request.to_string()]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_ne!(v["verdict"], "deny", "{preset}: {out}");
        let answer = claude_hook(&e, &payload);
        assert!(!answer.contains("\"deny\""), "{preset}: {answer}");
        let (verdict, reason) =
            e.check_command(&format!("cat {}", e.home.join(".netrc").display()));
        assert_ne!(verdict, Verdict::Deny, "{preset}: {reason}");
    }
}

/// The words an allow rule's regex spells out, each with the alternatives
/// it chose: `^(cat|head)( |$)` spells `cat` (alternative 0 of group 0) and
/// `head`; `^python3? -m pip` spells `python -m pip` and `python3 -m pip`.
/// Spelling stops at the first construct that is not a literal (a class,
/// `\S`, `.`, a repeated group, `$`).
fn spellings(regex: &str) -> Vec<(String, Vec<(usize, usize)>)> {
    fn group_end(chars: &[char], open: usize) -> usize {
        let mut depth = 0;
        let mut i = open;
        while i < chars.len() {
            match chars[i] {
                '\\' => i += 1,
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return i;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        panic!("unbalanced group in {}", chars.iter().collect::<String>());
    }
    /// The alternatives of a group's content, as ranges of it.
    fn alternatives(chars: &[char]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut start = 0;
        let mut depth = 0;
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '\\' => i += 1,
                '(' => depth += 1,
                ')' => depth -= 1,
                '|' if depth == 0 => {
                    out.push((start, i));
                    start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        out.push((start, chars.len()));
        out
    }
    // Each spelling: the text so far, the choices (a group, by where it
    // opens in the regex, and its alternative), and whether it ended.
    // `chars` starts at `at` in the regex.
    type Partial = (String, Vec<(usize, usize)>, bool);
    fn walk(chars: &[char], at: usize, from: Vec<Partial>) -> Vec<Partial> {
        let mut states = from;
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let quant = |at: usize| chars.get(at).copied().filter(|q| "?*+".contains(*q));
            if c == '(' {
                let end = group_end(chars, i);
                let id = at + i;
                let q = quant(end + 1);
                let alts = alternatives(&chars[i + 1..end]);
                let mut next = Vec::new();
                for s in states {
                    if s.2 || matches!(q, Some('*') | Some('+')) {
                        next.push((s.0, s.1, true));
                        continue;
                    }
                    if q == Some('?') {
                        next.push(s.clone());
                    }
                    for (k, (from, to)) in alts.iter().enumerate() {
                        let mut choices = s.1.clone();
                        choices.push((id, k));
                        let (from, to) = (i + 1 + from, i + 1 + to);
                        next.extend(walk(
                            &chars[from..to],
                            at + from,
                            vec![(s.0.clone(), choices, false)],
                        ));
                    }
                }
                states = next;
                i = end + 1 + usize::from(q.is_some());
                continue;
            }
            let (lit, len) = match c {
                '\\' if !"sSdDwWbB".contains(chars[i + 1]) => (Some(chars[i + 1]), 2),
                '\\' | '[' | '.' | '$' => (None, 1),
                '^' => {
                    i += 1;
                    continue;
                }
                other => (Some(other), 1),
            };
            let q = quant(i + len);
            match (lit, q) {
                (Some(l), None) => {
                    for s in states.iter_mut().filter(|s| !s.2) {
                        s.0.push(l);
                    }
                }
                (Some(l), Some('?')) => {
                    // `3?`: both spellings.
                    let with: Vec<_> = states
                        .iter()
                        .filter(|s| !s.2)
                        .map(|s| (format!("{}{l}", s.0), s.1.clone(), false))
                        .collect();
                    states.extend(with);
                }
                _ => {
                    for s in &mut states {
                        s.2 = true;
                    }
                }
            }
            i += len + usize::from(q.is_some());
        }
        states
    }
    let chars: Vec<char> = regex.chars().collect();
    let mut out: Vec<(String, Vec<(usize, usize)>)> =
        walk(&chars, 0, vec![(String::new(), Vec::new(), false)])
            .into_iter()
            .map(|(s, c, _)| (s.trim_end().to_string(), c))
            .collect();
    out.sort();
    out.dedup();
    out
}

/// A preset's allow rules for commands, as the policy file writes them.
fn allow_rules(text: &str) -> Vec<String> {
    let commands = text.split_once("\n  commands:\n").unwrap().1;
    let allow = commands.split_once("\n    allow:\n").unwrap().1;
    allow
        .lines()
        .take_while(|l| !l.starts_with("tests:"))
        .filter_map(|l| l.trim().strip_prefix("- '"))
        .map(|r| r.strip_suffix('\'').unwrap().replace("''", "'"))
        .collect()
}

/// The commands of a preset's `expect: allow` self-tests, each simple
/// command of them on its own.
fn allowed_by_self_tests(text: &str) -> Vec<String> {
    let tests = text.split_once("\ntests:\n").unwrap().1;
    let mut out = Vec::new();
    for line in tests.lines().filter(|l| l.contains("expect: allow")) {
        let Some(start) = line.find("command: \"") else {
            continue;
        };
        let rest = &line[start + 10..];
        let command = &rest[..rest.find("\", expect").unwrap()];
        for part in command.split(['|', ';', '&']) {
            let part = part.trim();
            if !part.is_empty() {
                out.push(part.to_string());
            }
        }
    }
    out
}

#[test]
fn the_rule_spellings_are_read_as_written() {
    let s = |r: &str| {
        let mut v: Vec<String> = spellings(r).into_iter().map(|x| x.0).collect();
        v.dedup();
        v
    };
    assert_eq!(s("^(cat|head)( |$)"), ["cat", "head"]);
    assert_eq!(
        s("^python3? -m (a|b)( |$)"),
        ["python -m a", "python -m b", "python3 -m a", "python3 -m b"]
    );
    assert_eq!(s("^uniq( -\\S+)*( [^-\\s]\\S*)?$"), ["uniq"]);
    assert_eq!(
        s("^git (remote( -v)?|reflog)$"),
        ["git reflog", "git remote", "git remote -v"]
    );
    assert_eq!(s("^(test|\\[|py\\.test)( |$)"), ["[", "py.test", "test"]);
}

/// Each preset's self-tests allow every program its allow rules name,
/// every alternative of every rule at least once, and the presets' table
/// in docs/policy.md names each of them in the preset's row.
#[test]
fn every_program_a_preset_allows_has_a_self_test_and_a_place_in_the_table() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/policy.md"))
            .unwrap();
    let e = Env::new();
    let text_of = |preset: &str| {
        let (code, out, err) = e.run(&["init", "--preset", preset, "--print"]);
        assert_eq!(code, 0, "{preset}: {err}");
        out
    };
    let base_rules = allow_rules(&text_of("readonly"));
    let mut missing = Vec::new();
    for preset in PRESETS {
        let text = text_of(preset);
        let tested = allowed_by_self_tests(&text);
        let row = docs
            .lines()
            .find(|l| l.starts_with(&format!("| `{preset}`")))
            .unwrap_or_else(|| panic!("docs/policy.md has no row for `{preset}`"));
        let allows_cell = row.split(" | ").nth(1).unwrap();
        // The words of the backticked spans of the row's allows cell.
        let documented: Vec<&str> = allows_cell
            .split('`')
            .skip(1)
            .step_by(2)
            .flat_map(|span| span.split([' ', '|', '\\', '/']))
            .filter(|w| !w.is_empty())
            .collect();
        for rule in allow_rules(&text) {
            if preset != "readonly" && base_rules.contains(&rule) {
                continue;
            }
            let spelled = spellings(&rule);
            let covered: Vec<&(String, Vec<(usize, usize)>)> = spelled
                .iter()
                .filter(|(s, _)| {
                    tested
                        .iter()
                        .any(|t| t == s || t.starts_with(&format!("{s} ")))
                })
                .collect();
            for (s, choices) in &spelled {
                for choice in choices {
                    if !covered.iter().any(|c| c.1.contains(choice)) {
                        missing.push(format!(
                            "{preset}: no self-test allows `{s}` (rule `{rule}`)"
                        ));
                    }
                }
                if choices.is_empty() && covered.is_empty() {
                    missing.push(format!(
                        "{preset}: no self-test allows `{s}` (rule `{rule}`)"
                    ));
                }
                for word in s.split(' ') {
                    if !documented.contains(&word) {
                        missing.push(format!(
                            "{preset}: docs/policy.md's row does not name `{word}` (of `{s}`)"
                        ));
                    }
                }
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
