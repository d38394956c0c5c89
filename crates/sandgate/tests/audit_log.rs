//! The audit log through the real binary: what a record carries, rotation by
//! size (also with many processes writing at once), and reading it back with
//! `sandgate audit tail|summary|suggest`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    log: PathBuf,
}

const POLICY: &str = "permissions:\n  paths:\n    allow: [\"~/work/**\"]\n  commands:\n    deny: [\"^git push\"]\n    allow: [\"^git( |$)\", \"^echo( |$)\"]\n";

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let work = home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.join(".sandgate")).unwrap();
    std::fs::write(home.join(".sandgate/permissions.yaml"), POLICY).unwrap();
    let log = root.join("logs/audit.jsonl");
    Env {
        _tmp: tmp,
        home,
        work,
        log,
    }
}

impl Env {
    fn sandgate(&self, args: &[&str]) -> Command {
        self.program(env!("CARGO_BIN_EXE_sandgate"), args)
    }

    /// `program` with the test's environment: HOME, the policy, the log and
    /// the working directory all inside the temporary tree.
    fn program(&self, program: &str, args: &[&str]) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("SANDGATE_MANAGED_CONFIG", self.home.join("no-managed.yaml"))
            .env("SANDGATE_AUDIT_LOG", &self.log)
            .env("SANDGATE_CACHE_DIR", self.home.join("cache"))
            .env("SANDGATE_NO_UI", "1")
            .env("NO_COLOR", "1")
            .current_dir(&self.work)
            .args(args);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.sandgate(args).output().unwrap()
    }

    fn check(&self, command: &str) -> Output {
        let request = json!({"tool": "exec_run", "params": {"command": command}}).to_string();
        let out = self.run(&["check", &request]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        out
    }

    fn rotated(&self) -> PathBuf {
        PathBuf::from(format!("{}.1", self.log.display()))
    }

    /// Every line of the log (older half first), parsed; a line that is not
    /// JSON fails the test.
    fn records(&self) -> Vec<Value> {
        let mut all = Vec::new();
        for file in [self.rotated(), self.log.clone()] {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            for line in text.lines() {
                all.push(
                    serde_json::from_str(line)
                        .unwrap_or_else(|e| panic!("torn line in {}: {e}: {line}", file.display())),
                );
            }
        }
        all
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[test]
fn a_record_carries_the_working_directory_and_the_final_outcome() {
    let e = env();
    e.check("git status");
    e.check("git push origin main");
    e.check("make deploy");
    let records = e.records();
    assert_eq!(records.len(), 3, "{records:#?}");
    for r in &records {
        assert_eq!(r["cwd"], e.work.to_str().unwrap(), "{r}");
        assert_eq!(r["surface"], "check", "{r}");
        assert!(r.get("session").is_none(), "check has no session: {r}");
    }
    let outcomes: Vec<&str> = records
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["allow", "deny", "ask"]);
}

#[test]
fn a_hook_record_carries_the_agents_session_and_what_the_agent_was_told() {
    let e = env();
    let payload = |session: &str, command: &str| {
        json!({
            "session_id": session,
            "transcript_path": e.home.join("t.jsonl"),
            "cwd": e.work,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        })
        .to_string()
    };
    for (agent, session, command) in [
        ("claude", "sess-claude-1", "make deploy"),
        ("codex", "sess-codex-2", "make deploy"),
        ("claude", "sess-claude-1", "git status"),
    ] {
        let mut child = e
            .sandgate(&["hook", agent])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload(session, command).as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let records = e.records();
    assert_eq!(records.len(), 3, "{records:#?}");
    assert_eq!(records[0]["session"], "sess-claude-1");
    assert_eq!(records[0]["verdict"], "ask");
    assert_eq!(
        records[0]["outcome"], "ask",
        "asked in Claude Code's dialog"
    );
    assert_eq!(
        records[0]["became"],
        "deferred to the agent's own permissions"
    );
    assert_eq!(records[1]["session"], "sess-codex-2");
    assert_eq!(records[1]["outcome"], "deny", "Codex CLI hooks cannot ask");
    assert_eq!(records[2]["outcome"], "allow");
    for r in &records {
        assert_eq!(r["cwd"], e.work.to_str().unwrap(), "{r}");
    }
}

/// The size at which one record of `check` about `echo p00-00` is written.
fn record_size(e: &Env) -> u64 {
    e.check("echo p00-00");
    let size = size(&e.log);
    std::fs::remove_file(&e.log).unwrap();
    size
}

#[test]
fn the_log_rotates_to_dot_one_at_the_configured_size() {
    let e = env();
    let one = record_size(&e);
    // Room for 10 records a file: 25 records rotate twice, and the oldest 5 go.
    let max = (one * 10 + one / 2).max(4096);
    let per_file = max / one;
    let policy = format!("{POLICY}audit:\n  max_bytes: {max}\n");
    std::fs::write(e.home.join(".sandgate/permissions.yaml"), policy).unwrap();
    let total = per_file * 2 + per_file / 2;
    for i in 0..total {
        e.check(&format!("echo p00-{i:02}"));
    }
    assert!(size(&e.log) <= max, "{} > {max}", size(&e.log));
    assert!(size(&e.rotated()) <= max, "{} > {max}", size(&e.rotated()));
    let subjects: Vec<String> = e
        .records()
        .iter()
        .map(|r| r["subject"].as_str().unwrap().to_string())
        .collect();
    // The two files hold the newest records, in order, without a gap.
    let first = total - subjects.len() as u64;
    let expected: Vec<String> = (first..total).map(|i| format!("echo p00-{i:02}")).collect();
    assert_eq!(subjects, expected);
    assert!(
        subjects.len() as u64 > per_file,
        "both files are used: {subjects:?}"
    );
}

#[test]
fn the_environment_overrides_the_policy_size_and_a_bad_value_is_named() {
    let e = env();
    let one = record_size(&e);
    let max = (one * 3).max(4096);
    let per_file = max / one;
    for i in 0..per_file + 1 {
        let out = e
            .sandgate(&[
                "check",
                &json!({"tool": "exec_run", "params": {"command": format!("echo p00-{i:02}")}})
                    .to_string(),
            ])
            .env("SANDGATE_AUDIT_MAX_BYTES", max.to_string())
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    assert!(size(&e.rotated()) > 0, "rotated at {max} bytes");
    let out = e
        .sandgate(&[
            "check",
            r#"{"tool": "exec_run", "params": {"command": "git status"}}"#,
        ])
        .env("SANDGATE_AUDIT_MAX_BYTES", "12")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "`SANDGATE_AUDIT_MAX_BYTES` must be a whole number of bytes of at least 4096, not `12`"
        ),
        "{stderr}"
    );
}

#[test]
fn a_policy_size_below_the_minimum_is_a_load_error_with_its_line() {
    let e = env();
    let policy = format!("{POLICY}audit:\n  max_bytes: 100\n");
    std::fs::write(e.home.join(".sandgate/permissions.yaml"), policy).unwrap();
    let out = e.run(&[
        "check",
        r#"{"tool": "exec_run", "params": {"command": "git status"}}"#,
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("permissions.yaml:8:")
            && stderr.contains("`max_bytes` must be a whole number of at least 4096"),
        "{stderr}"
    );
    let policy = format!("{POLICY}audit:\n  max_byte: 100000\n");
    std::fs::write(e.home.join(".sandgate/permissions.yaml"), policy).unwrap();
    let out = e.run(&[
        "check",
        r#"{"tool": "exec_run", "params": {"command": "git status"}}"#,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("did you mean `max_bytes`?"),
        "{}",
        text(&out.stderr)
    );
}

/// Eight processes append at once across a rotation: every record is in one
/// of the two files exactly once, and no line is torn.
#[test]
fn concurrent_writers_lose_and_tear_nothing_across_a_rotation() {
    let e = env();
    let one = record_size(&e);
    const WRITERS: u64 = 8;
    const EACH: u64 = 25;
    // Total ≈ 1.6 × max: exactly one rotation, so nothing is old enough to go.
    let max = (one * WRITERS * EACH * 5 / 8).max(4096);
    let policy = format!("{POLICY}audit:\n  max_bytes: {max}\n");
    std::fs::write(e.home.join(".sandgate/permissions.yaml"), policy).unwrap();
    e.check("git status");
    std::fs::remove_file(&e.log).unwrap();
    let script = format!(
        "i=0; while [ $i -lt {EACH} ]; do \"$SG\" check \"{{\\\"tool\\\": \\\"exec_run\\\", \\\"params\\\": {{\\\"command\\\": \\\"echo p$W-$i\\\"}}}}\" >/dev/null || exit 1; i=$((i+1)); done"
    );
    let children: Vec<_> = (0..WRITERS)
        .map(|w| {
            e.program("/bin/sh", &["-c", &script])
                .env("SG", env!("CARGO_BIN_EXE_sandgate"))
                .env("W", w.to_string())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let records = e.records();
    assert!(size(&e.rotated()) > 0, "the log rotated");
    assert!(size(&e.rotated()) <= max && size(&e.log) <= max);
    let mut subjects: Vec<String> = records
        .iter()
        .map(|r| r["subject"].as_str().unwrap().to_string())
        .collect();
    subjects.sort();
    let mut expected: Vec<String> = (0..WRITERS)
        .flat_map(|w| (0..EACH).map(move |i| format!("echo p{w}-{i}")))
        .collect();
    expected.sort();
    assert_eq!(subjects, expected);
}
