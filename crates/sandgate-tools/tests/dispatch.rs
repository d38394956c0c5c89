//! The dispatcher against a real policy and a real file tree.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/ci.rs"]
mod ci;
#[path = "../../../tests/support/wait.rs"]
mod wait;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sandgate_policy::ask::{Answer, NoHuman, Question, Resolution, Resolver};
use sandgate_policy::{Context, Decision, Policy, Sources, Verdict};
use sandgate_tools::{Dispatcher, ToolError};
use serde_json::json;

struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    tools: Dispatcher,
    decisions: Arc<Mutex<Vec<(String, Decision)>>>,
}

struct Always(Answer);
impl Resolver for Always {
    fn resolve(&self, _ask: &Question) -> Resolution {
        Resolution::Answered(self.0)
    }
}

fn fixture(policy: &str, resolver: Arc<dyn Resolver>) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let work = home.join("work");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join("secrets")).unwrap();
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY needle\n").unwrap();
    std::fs::write(home.join("secrets/token"), "token needle\n").unwrap();
    std::fs::write(work.join("src/main.rs"), "fn main() {} // needle\n").unwrap();
    std::fs::write(work.join("notes.txt"), "one\ntwo needle\n").unwrap();
    symlink(home.join("secrets"), work.join("link-to-secrets")).unwrap();
    symlink(home.join(".ssh/id_rsa"), work.join("key")).unwrap();
    let central = home.join(".sandgate/permissions.yaml");
    std::fs::create_dir_all(central.parent().unwrap()).unwrap();
    std::fs::write(&central, policy).unwrap();
    let ctx = Context::new(&work, &home).unwrap();
    let sources = Sources {
        managed: None,
        central: Some(central),
        local: None,
        no_sandbox: false,
    };
    let policy = Policy::load(&sources, &ctx).unwrap();
    let decisions = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&decisions);
    let tools = Dispatcher::new(
        policy,
        ctx,
        resolver,
        Box::new(move |tool, d, _| sink.lock().unwrap().push((tool.to_string(), d.clone()))),
    );
    Fixture {
        _tmp: tmp,
        home,
        work,
        tools,
        decisions,
    }
}

const POLICY: &str = "permissions:\n  paths:\n    deny: [\"~/secrets/**\"]\n    allow: [\"~/**\"]\n  commands:\n    allow: [\"^echo \", \"^sleep \"]\n";

fn headless() -> Arc<dyn Resolver> {
    Arc::new(NoHuman {
        reason: "no terminal".into(),
    })
}

fn text(f: &Fixture, tool: &str, params: serde_json::Value) -> String {
    match f.tools.call(tool, &params) {
        Ok(o) => o.text,
        Err(e) => panic!("{tool} failed: {e}"),
    }
}

#[test]
fn floor_and_deny_rules_refuse_with_the_reason() {
    let f = fixture(POLICY, headless());
    let e = f
        .tools
        .call("file_read", &json!({"path": "~/.ssh/id_rsa"}))
        .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, ToolError::Denied(_)));
    assert!(
        msg.contains(".ssh/id_rsa") && msg.contains("built-in floor"),
        "{msg}"
    );
    let msg = f
        .tools
        .call("file_read", &json!({"path": "key"}))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("built-in floor"),
        "a link into ~/.ssh is judged as ~/.ssh: {msg}"
    );
    let msg = f
        .tools
        .call(
            "file_write",
            &json!({"path": "~/secrets/x", "content": "y"}),
        )
        .unwrap_err()
        .to_string();
    assert!(msg.contains("deny rule `~/secrets/**`"), "{msg}");
    assert!(!f.home.join("secrets/x").exists());
    let recorded = f.decisions.lock().unwrap();
    assert_eq!(recorded.len(), 3);
    assert!(recorded.iter().all(|(_, d)| d.verdict == Verdict::Deny));
}

#[test]
fn walking_tools_skip_denied_entries_and_follow_no_links() {
    let f = fixture(POLICY, headless());
    let out = text(
        &f,
        "file_grep",
        json!({"pattern": "needle", "path": "~", "hidden": true}),
    );
    assert!(
        out.contains("main.rs:1:") && out.contains("notes.txt:2:"),
        "{out}"
    );
    assert!(
        !out.contains("PRIVATE") && !out.contains("token needle"),
        "{out}"
    );
    assert!(out.contains("skipped"), "{out}");
    let out = text(&f, "file_grep", json!({"pattern": "needle", "path": "."}));
    assert!(!out.contains("token") && !out.contains("PRIVATE"), "{out}");

    let out = text(&f, "file_list", json!({"path": "~", "depth": 3}));
    assert!(
        out.contains("main.rs") && !out.contains("id_rsa") && !out.contains("token"),
        "{out}"
    );
    assert!(
        !out.contains("link-to-secrets") && !out.contains("key@"),
        "{out}"
    );

    let out = text(
        &f,
        "file_find",
        json!({"glob": "*", "path": "~", "hidden": true}),
    );
    assert!(!out.contains("id_rsa") && !out.contains("token"), "{out}");
    assert!(out.contains("notes.txt"), "{out}");

    let out = text(&f, "file_count", json!({"path": "~", "hidden": true}));
    // main.rs (23 bytes) + notes.txt (15 bytes) + the policy file is floor.
    assert!(
        out.starts_with("3 lines, 8 words, 38 bytes in 2 files"),
        "{out}"
    );
}

#[test]
fn file_tools_work_on_allowed_paths() {
    let f = fixture(POLICY, headless());
    text(
        &f,
        "file_write",
        json!({"path": "new/dir/a.txt", "content": "alpha\nbeta\n"}),
    );
    assert_eq!(
        std::fs::read_to_string(f.work.join("new/dir/a.txt")).unwrap(),
        "alpha\nbeta\n"
    );
    text(
        &f,
        "file_edit",
        json!({"path": "new/dir/a.txt", "old_string": "beta", "new_string": "gamma"}),
    );
    assert_eq!(
        text(&f, "file_read", json!({"path": "new/dir/a.txt"})),
        "alpha\ngamma\n"
    );
    assert_eq!(
        text(
            &f,
            "file_head_tail",
            json!({"path": "new/dir/a.txt", "head": 1, "tail": 0})
        ),
        "alpha\n"
    );
    let e = f
        .tools
        .call("file_read", &json!({"path": "notes.txt", "bogus": 1}))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no parameter `bogus`"), "{e}");
}

#[test]
fn asks_go_to_the_resolver() {
    let outside = tempfile::tempdir().unwrap();
    let file = std::fs::canonicalize(outside.path()).unwrap().join("f.txt");
    std::fs::write(&file, "outside\n").unwrap();
    let path = file.to_str().unwrap();

    let f = fixture(POLICY, headless());
    let msg = f
        .tools
        .call("file_read", &json!({"path": path}))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("no human to ask") && msg.contains("no allow rule matched"),
        "{msg}"
    );

    let f = fixture(POLICY, Arc::new(Always(Answer::AllowOnce)));
    assert_eq!(text(&f, "file_read", json!({"path": path})), "outside\n");
    let verdicts: Vec<Verdict> = f
        .decisions
        .lock()
        .unwrap()
        .iter()
        .map(|(_, d)| d.verdict)
        .collect();
    assert_eq!(verdicts, [Verdict::Ask, Verdict::Allow]);
}

#[test]
fn exec_runs_and_outlives_its_timeout_as_a_job() {
    let f = fixture(POLICY, headless());
    let out = text(&f, "exec_run", json!({"command": "echo hello"}));
    assert_eq!(out, "hello\n[exited with code 0]\n");
    let out = text(
        &f,
        "exec_run",
        json!({"command": "sleep 0.1; echo tick; sleep 30", "timeout_s": 1}),
    );
    assert!(
        out.contains("tick") && out.contains("background job 1"),
        "{out}"
    );
    let status = f.tools.call("exec_status", &json!({"id": 1})).unwrap();
    assert_eq!(status.structured["state"], "running");
    assert!(text(&f, "exec_tail", json!({"id": 1})).starts_with("tick\n"));
    assert!(text(&f, "exec_stat", json!({})).contains("job 1: `sleep 0.1"));
    let killed = text(&f, "exec_kill", json!({"id": 1}));
    assert!(
        killed.contains("stopped job 1") && killed.contains("SIGTERM"),
        "{killed}"
    );
    let msg = f
        .tools
        .call("exec_run", &json!({"command": "rm -rf /tmp/x"}))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("no allow rule matched") && msg.contains("rm -rf /tmp/x"),
        "{msg}"
    );
    let msg = f
        .tools
        .call(
            "exec_run",
            &json!({"command": "echo hi", "cwd": "~/secrets"}),
        )
        .unwrap_err()
        .to_string();
    assert!(msg.contains("working directory is denied"), "{msg}");
    let _ = Path::new("");
}

#[test]
fn with_the_sandbox_off_walks_skip_nothing() {
    let f = fixture("permissions:\n  sandbox: false\n", headless());
    let out = text(
        &f,
        "file_grep",
        json!({"pattern": "needle", "path": "~", "hidden": true}),
    );
    assert!(
        out.contains("PRIVATE KEY needle") && !out.contains("skipped"),
        "{out}"
    );
}

#[test]
fn exec_runs_inside_the_configured_isolation() {
    let policy = format!(
        "{POLICY}  exec:\n    isolation:\n      mode: custom\n      template: \"/usr/bin/env SANDGATE_WRAPPED={{workdir}} /bin/sh -c {{cmd}}\"\n"
    );
    let f = fixture(&policy, headless());
    let out = text(
        &f,
        "exec_run",
        json!({"command": "echo wrapped=$SANDGATE_WRAPPED"}),
    );
    assert_eq!(
        out,
        format!("wrapped={}\n[exited with code 0]\n", f.work.display()),
        "the command ran through the wrapper template"
    );
}

#[test]
fn the_isolation_workdir_stays_with_the_server_whatever_the_cwd() {
    let policy = format!(
        "{POLICY}  exec:\n    isolation:\n      mode: custom\n      template: \"/usr/bin/env SANDGATE_WRAPPED={{workdir}} /bin/sh -c {{cmd}}\"\n"
    );
    let f = fixture(&policy, headless());
    let out = text(
        &f,
        "exec_run",
        json!({"command": "echo wrapped=$SANDGATE_WRAPPED in=$PWD", "cwd": "src"}),
    );
    assert_eq!(
        out,
        format!(
            "wrapped={} in={}\n[exited with code 0]\n",
            f.work.display(),
            f.work.join("src").display()
        )
    );
}

/// `exec_run` under each isolation mode, then unconfined (`mode: none`,
/// where each attempt must work, so that the test can fail): the floor
/// under another name (a hard link made before) and a credential store the
/// policy denies are neither read nor written; with the store's rule
/// removed, it is read.
#[test]
fn exec_run_keeps_the_floor_under_other_names_and_the_credential_stores() {
    let landlock = sandgate_sandbox::landlock_abi() >= 1;
    let bwrap = std::path::Path::new("/usr/bin/bwrap").exists();
    if ci::under_ci() {
        assert!(
            landlock && bwrap,
            "needs Landlock and bubblewrap (apt-get install bubblewrap)"
        );
    }
    let base = "permissions:\n  paths:\n    deny: [\"~/.netrc\"]\n    allow: [\"~/**\"]\n  commands:\n    shell: false\n    allow: [\".\"]\n";
    let open = "permissions:\n  paths:\n    allow: [\"~/**\"]\n  commands:\n    shell: false\n    allow: [\".\"]\n";
    for (mode, available) in [("none", true), ("landlock", landlock), ("bwrap", bwrap)] {
        if !available {
            eprintln!("skipping {mode}: not available here");
            continue;
        }
        let policy = format!("{base}  exec:\n    isolation:\n      mode: {mode}\n");
        let f = fixture(&policy, headless());
        assert!(f.work.starts_with(f.home.parent().unwrap()));
        std::fs::hard_link(f.home.join(".ssh/id_rsa"), f.work.join("linked")).unwrap();
        std::fs::write(f.home.join(".netrc"), "TOKEN\n").unwrap();
        let netrc = f.home.join(".netrc");
        let script = format!("cat linked; echo PWNED >> linked; cat {}", netrc.display());
        let out = match f.tools.call("exec_run", &json!({"command": script})) {
            Ok(o) => o.text,
            Err(e) => e.to_string(),
        };
        let key = std::fs::read_to_string(f.home.join(".ssh/id_rsa")).unwrap();
        let reached = out.contains("PRIVATE KEY") || key.contains("PWNED");
        if mode == "none" {
            assert!(reached && out.contains("TOKEN"), "unconfined: {out}");
            continue;
        }
        assert!(!reached, "{mode}: the floor was reached: {out} / {key}");
        assert!(
            !out.contains("TOKEN"),
            "{mode}: the credential store was read: {out}"
        );
        // The control: without the rule, the store is read.
        let policy = format!("{open}  exec:\n    isolation:\n      mode: {mode}\n");
        let f = fixture(&policy, headless());
        std::fs::write(f.home.join(".netrc"), "TOKEN\n").unwrap();
        let command = format!("cat {}", f.home.join(".netrc").display());
        let out = text(&f, "exec_run", json!({"command": command}));
        assert!(out.contains("TOKEN"), "{mode}: {out}");
    }
}
