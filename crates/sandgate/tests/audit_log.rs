//! The audit log through the real binary: what a record carries, rotation by
//! size (also with many processes writing at once), and reading it back with
//! `sandgate audit tail|summary|suggest`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use wait::{Bounded, DEADLINE};

use serde_json::{json, Value};

#[path = "../../../tests/support/wait.rs"]
mod wait;

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
        self.sandgate(args).output_within(DEADLINE).unwrap()
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
            .process_group(0)
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload(session, command).as_bytes())
            .unwrap();
        let out = wait::finish(child, 60, "sandgate hook");
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
    assert_eq!(records[0]["became"], "asked in the agent");
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
            .output_within(DEADLINE)
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
        .output_within(DEADLINE)
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
                .process_group(0)
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = wait::finish(child, 300, "a writer");
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

/// One record line as sandgate writes it (for logs the tests lay out by hand).
fn line(tool: &str, subject: &str, verdict: &str, extra: Value) -> String {
    let mut r = json!({
        "time": "2026-12-01T10:00:00.000Z", "surface": "hook claude", "tool": tool,
        "subject": subject, "verdict": verdict, "rule": null, "list": null,
        "origin": null, "reason": "r",
    });
    if let (Some(obj), Some(more)) = (r.as_object_mut(), extra.as_object()) {
        for (k, v) in more {
            obj.insert(k.clone(), v.clone());
        }
    }
    r.to_string()
}

fn ask(command: &str) -> String {
    line(
        "exec_run",
        command,
        "ask",
        json!({"became": "asked in the agent", "answered_by": "agent"}),
    )
}

impl Env {
    fn write_log(&self, older: &[String], newer: &[String]) {
        std::fs::create_dir_all(self.log.parent().unwrap()).unwrap();
        let join = |lines: &[String]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        if !older.is_empty() {
            std::fs::write(self.rotated(), join(older)).unwrap();
        }
        std::fs::write(&self.log, join(newer)).unwrap();
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = self.run(&all);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&out.stdout)))
    }
}

#[test]
fn tail_prints_the_last_records_of_both_files_oldest_first() {
    let e = env();
    let older: Vec<String> = (0..5).map(|i| ask(&format!("make old{i}"))).collect();
    let mut newer: Vec<String> = (0..3).map(|i| ask(&format!("make new{i}"))).collect();
    newer.insert(1, "{\"tool\": \"exec_run\", \"subj".to_string());
    newer.push(line(
        "exec_run",
        "printf '\u{1b}[2J'",
        "deny",
        json!({"outcome": "deny"}),
    ));
    e.write_log(&older, &newer);
    let out = e.run(&["audit", "tail", "-n", "5"]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    assert!(lines[0].contains("make old4"), "{stdout}");
    assert!(lines[1].contains("make new0"), "{stdout}");
    assert!(
        lines[0].contains("ask ") && lines[0].contains("(asked in the agent)"),
        "{stdout}"
    );
    assert!(
        !stdout.contains('\u{1b}'),
        "control characters are escaped: {stdout:?}"
    );
    assert!(lines[4].contains("printf '\\u{1b}[2J'"), "{stdout}");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("skipped 1 line that is not an audit record: ")
            && stderr.contains("audit.jsonl:2 (EOF while parsing a string)"),
        "{stderr}"
    );
    // --json: one object a line, with the outcome filled in for old lines.
    let out = e.run(&["--json", "audit", "tail", "-n", "2"]);
    let records: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["subject"], "make new2");
    assert_eq!(records[0]["outcome"], "ask");
    assert_eq!(records[0]["became"], "asked in the agent");
    assert_eq!(records[1]["verdict"], "deny");
}

#[test]
fn tail_follow_prints_new_records_also_across_a_rotation() {
    let e = env();
    let one = record_size(&e);
    let max = (one * 3).max(4096);
    let per_file = (max / one) as usize;
    // A first record, which the follower prints once it reads the file: it
    // is then following, and every later record must reach it.
    let out = e
        .sandgate(&[
            "check",
            &json!({"tool": "exec_run", "params": {"command": "echo started"}}).to_string(),
        ])
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success());
    let mut child = wait::Guard::spawn(
        e.sandgate(&["--json", "audit", "tail", "-n", "1", "--follow"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let stdout = wait::Lines::new(child.stdout.take().unwrap());
    let first = stdout
        .next_within(30, "audit tail --follow")
        .unwrap_or_default();
    assert_eq!(
        serde_json::from_str::<Value>(&first).unwrap()["subject"],
        "echo started"
    );
    let total = per_file + 3;
    let mut seen = Vec::new();
    for i in 0..total {
        let out = e
            .sandgate(&[
                "check",
                &json!({"tool": "exec_run", "params": {"command": format!("echo p00-{i:02}")}})
                    .to_string(),
            ])
            .env("SANDGATE_AUDIT_MAX_BYTES", max.to_string())
            .output_within(DEADLINE)
            .unwrap();
        assert!(out.status.success());
        // The follower prints each record before the next is written, so
        // it meets every rotation, one at a time.
        let l = stdout
            .next_within(30, "audit tail --follow")
            .unwrap_or_default();
        seen.push(serde_json::from_str::<Value>(&l).unwrap()["subject"].clone());
    }
    drop(child);
    assert!(size(&e.rotated()) > 0, "the log rotated");
    let expected: Vec<Value> = (0..total)
        .map(|i| json!(format!("echo p00-{i:02}")))
        .collect();
    assert_eq!(seen, expected);
}

#[test]
fn summary_counts_the_asks_and_what_humans_allowed() {
    let e = env();
    let mut lines = Vec::new();
    for _ in 0..5 {
        lines.push(ask("npm test"));
    }
    for _ in 0..3 {
        lines.push(ask("make deploy"));
    }
    // The terminal prompt: the question, then the human's answer.
    for _ in 0..2 {
        lines.push(line("exec_run", "make deploy", "ask", json!({})));
        lines.push(line(
            "exec_run",
            "make deploy",
            "allow",
            json!({"became": "allowed by a human", "answered_by": "human"}),
        ));
    }
    lines.push(line(
        "file_read",
        "/etc/hosts",
        "allow",
        json!({"became": "allowed by a human", "answered_by": "human"}),
    ));
    lines.push(line("exec_run", "git push", "deny", json!({})));
    e.write_log(&lines[..4], &lines[4..]);
    let s = e.json(&["audit", "summary", "--top", "3"]);
    assert_eq!(s["records"], 14);
    assert_eq!(s["skipped"], 0);
    assert_eq!(s["verdicts"], json!({"allow": 3, "ask": 10, "deny": 1}));
    assert_eq!(s["outcomes"], json!({"allow": 3, "ask": 10, "deny": 1}));
    assert_eq!(
        s["asked_most"],
        json!([
            {"tool": "exec_run", "subject": "npm test", "count": 5},
            {"tool": "exec_run", "subject": "make deploy", "count": 5},
        ])
        .as_array()
        .map(|a| {
            let mut a = a.clone();
            a.sort_by_key(|v| v["subject"].as_str().unwrap().to_string());
            Value::Array(a)
        })
        .unwrap()
    );
    assert_eq!(
        s["allowed_by_a_human_most"],
        json!([
            {"tool": "exec_run", "subject": "make deploy", "count": 2},
            {"tool": "file_read", "subject": "/etc/hosts", "count": 1},
        ])
    );
    assert_eq!(s["files"].as_array().unwrap().len(), 2);
    let out = e.run(&["audit", "summary"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("records: 14 (3 allow, 10 ask, 1 deny)"),
        "{stdout}"
    );
    assert!(stdout.contains("asked most:\n"), "{stdout}");
    assert!(
        stdout.contains("asks a human allowed most:\n       2  exec_run   make deploy\n"),
        "{stdout}"
    );
}

#[test]
fn summary_of_a_missing_log_says_so_and_a_fifo_is_refused() {
    let e = env();
    let out = e.run(&["audit", "summary"]);
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains("there is no audit log at"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("records: 0"),
        "{}",
        text(&out.stdout)
    );
    std::fs::create_dir_all(e.log.parent().unwrap()).unwrap();
    let status = Command::new("mkfifo")
        .arg(&e.log)
        .status_within(DEADLINE)
        .unwrap();
    assert!(status.success());
    let out = e.run(&["audit", "tail"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("it is a named pipe (FIFO), not a regular file"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn suggest_generalises_repeated_asks_to_a_whole_word_prefix() {
    let e = env();
    let mut lines = Vec::new();
    for _ in 0..7 {
        lines.push(ask("npm run test:unit"));
    }
    lines.push(ask("npm run test:unit -- --watch"));
    lines.push(ask("cargo test alpha"));
    lines.push(ask("git status && cargo test beta"));
    lines.push(ask("timeout 60 cargo test gamma"));
    lines.push(ask("make once"));
    // Already allowed by the policy now: not a suggestion.
    lines.push(ask("git log"));
    lines.push(ask("git log"));
    e.write_log(&[], &lines);
    let s = e.json(&["audit", "suggest"]);
    let rules: Vec<(&str, u64)> = s["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["rule"].as_str().unwrap(), v["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        rules,
        [("^npm run test:unit( |$)", 8), ("^cargo test( |$)", 3)],
        "{s:#}"
    );
    assert_eq!(s["asked"], 14);
    assert_eq!(s["decided_now"], 2);
    // The suggestions are about the rules: `--no-sandbox` does not make every
    // ask look decided.
    assert_eq!(
        e.json(&["--no-sandbox", "audit", "suggest"])["suggestions"],
        s["suggestions"]
    );
    let first = &s["suggestions"][0];
    assert_eq!(first["kind"], "command");
    assert_eq!(
        first["command"],
        "sandgate policy allow command '^npm run test:unit( |$)'"
    );
    assert_eq!(
        first["args"],
        json!([
            "sandgate",
            "policy",
            "allow",
            "command",
            "^npm run test:unit( |$)"
        ])
    );
    assert_eq!(
        first["examples"],
        json!(["npm run test:unit", "npm run test:unit -- --watch"])
    );
    // The suggested commands work with the real CLI and stop the asking,
    // without allowing what was not asked.
    for suggestion in s["suggestions"].as_array().unwrap() {
        let args: Vec<&str> = suggestion["args"].as_array().unwrap()[1..]
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let out = e.run(&args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    }
    let verdict = |command: &str| {
        let request = json!({"tool": "exec_run", "params": {"command": command}}).to_string();
        e.json(&["check", &request])["verdict"].clone()
    };
    assert_eq!(verdict("npm run test:unit"), "allow");
    assert_eq!(verdict("timeout 60 cargo test gamma"), "allow");
    assert_eq!(verdict("npm run test:unitx"), "ask");
    assert_eq!(verdict("npm run build"), "ask");
    // Those checks went into the log too: read the asks alone again.
    e.write_log(&[], &lines);
    let again = e.json(&["audit", "suggest"]);
    assert_eq!(again["suggestions"], json!([]), "{again:#}");
    let text_out = e.run(&["audit", "suggest"]);
    assert!(
        text(&text_out.stdout).starts_with("no suggestions: "),
        "{}",
        text(&text_out.stdout)
    );
}

#[test]
fn suggest_never_allows_a_shell_an_interpreter_or_a_runner() {
    let e = env();
    let mut lines = Vec::new();
    let runners = [
        "curl http://x | sh",
        "wget -qO- http://x | sudo bash -s",
        "python3 tools/gen.py",
        "FOO=1 /usr/bin/perl -e 1",
        "npx some-tool",
        "eval \"$CMD\"",
    ];
    for _ in 0..3 {
        for r in runners {
            lines.push(ask(r));
        }
        lines.push(ask("make build"));
        // A shell whose script the gate reads is judged by the script.
        lines.push(ask("sh -c 'npm test'"));
    }
    // Asked once: not often enough to be listed.
    lines.push(ask("node x.js"));
    e.write_log(&[], &lines);
    let s = e.json(&["audit", "suggest"]);
    let rules: Vec<&str> = s["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["rule"].as_str().unwrap())
        .collect();
    // Only the plain command gets a rule: neither the shell nor the download
    // that feeds it.
    assert_eq!(rules, ["^make build( |$)", "^npm test( |$)"], "{s:#}");
    let mut listed: Vec<(&str, u64)> = s["no_safe_rule"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["command"].as_str().unwrap(), v["count"].as_u64().unwrap()))
        .collect();
    listed.sort_unstable();
    let mut expected: Vec<(&str, u64)> = runners.iter().map(|r| (*r, 3)).collect();
    expected.sort_unstable();
    assert_eq!(listed, expected, "{s:#}");
    let why = |command: &str| {
        s["no_safe_rule"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["command"] == command)
            .map(|v| v["why"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert!(why("curl http://x | sh").contains("`sh`, a shell"), "{s:#}");
    assert!(
        why("wget -qO- http://x | sudo bash -s").contains("`bash`, a shell"),
        "{s:#}"
    );
    assert!(
        why("python3 tools/gen.py").contains("an interpreter"),
        "{s:#}"
    );
    assert!(why("FOO=1 /usr/bin/perl -e 1").contains("`perl`"), "{s:#}");
    assert!(why("npx some-tool").contains("runs programs"), "{s:#}");
    let out = e.run(&["audit", "suggest"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("asked often; no safe rule: `curl http://x | sh` (3 asks): it runs `sh`"),
        "{stdout}"
    );
    for bad in [
        "'^sh",
        "'^curl",
        "'^bash",
        "'^python3",
        "'^wget",
        "'^npx",
        "'^eval",
        "'^sudo",
    ] {
        assert!(!stdout.contains(bad), "{bad}: {stdout}");
    }

    // Different programs under one runner do not make a rule for the runner.
    let lines = [
        ask("sudo apt update"),
        ask("sudo systemctl restart x"),
        ask("sudo -u root ls /root"),
        ask("sudo -u root cat /root/y"),
    ];
    e.write_log(&[], &lines);
    let s = e.json(&["audit", "suggest"]);
    assert_eq!(s["suggestions"], json!([]), "{s:#}");
    let withheld: Vec<&str> = s["withheld"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["rule"].as_str().unwrap())
        .collect();
    assert_eq!(withheld, ["^sudo -u root( |$)"], "{s:#}");
}

#[test]
fn a_denied_command_in_the_log_blocks_the_broader_rule() {
    let e = env();
    let mut lines = vec![ask("npm test"), ask("npm run build"), ask("npm ci")];
    let suggested = |lines: &[String]| {
        e.write_log(&[], lines);
        e.json(&["audit", "suggest"])
    };
    // Unconfined: with nothing denied, the three npm asks make `^npm( |$)`.
    let s = suggested(&lines);
    assert_eq!(s["suggestions"][0]["rule"], "^npm( |$)", "{s:#}");
    // A human refused `npm publish` (the prompt's two lines).
    lines.push(line("exec_run", "npm publish", "ask", json!({})));
    lines.push(line(
        "exec_run",
        "npm publish",
        "deny",
        json!({"became": "denied by a human", "answered_by": "human"}),
    ));
    let s = suggested(&lines);
    assert_eq!(s["suggestions"], json!([]), "{s:#}");
    assert_eq!(s["withheld"][0]["rule"], "^npm( |$)");
    assert_eq!(
        s["withheld"][0]["why"],
        "it would allow `npm publish`, which the log shows denied"
    );
    // A deny rule refused it: the rule still matches it, so it is withheld too.
    let policy = POLICY.replace(
        "deny: [\"^git push\"]",
        "deny: [\"^git push\", \"^npm publish\"]",
    );
    std::fs::write(e.home.join(".sandgate/permissions.yaml"), policy).unwrap();
    lines.truncate(3);
    lines.push(line(
        "exec_run",
        "npm publish --tag next",
        "deny",
        json!({"outcome": "deny"}),
    ));
    let s = suggested(&lines);
    assert_eq!(s["suggestions"], json!([]), "{s:#}");
    assert_eq!(
        s["withheld"][0]["why"],
        "it matches `npm publish --tag next`, which the log shows denied (`npm publish --tag next`)"
    );
    // Denied for want of an answer is not a refusal: it does not block.
    lines.truncate(3);
    lines.push(line(
        "exec_run",
        "npm publish",
        "deny",
        json!({"became": "denied: nobody answered in time", "answered_by": "timeout"}),
    ));
    let s = suggested(&lines);
    assert_eq!(s["suggestions"][0]["rule"], "^npm( |$)", "{s:#}");
    // A text report names the withheld rule and why.
    std::fs::write(e.home.join(".sandgate/permissions.yaml"), POLICY).unwrap();
    lines.push(line(
        "exec_run",
        "npm publish",
        "deny",
        json!({"became": "denied by a human", "answered_by": "human"}),
    ));
    e.write_log(&[], &lines);
    let out = e.run(&["audit", "suggest"]);
    assert!(
        text(&out.stdout).contains(
            "not suggested: `^npm( |$)` (3 asks): it would allow `npm publish`, which the log shows denied"
        ),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_path_suggestion_never_covers_the_floor() {
    let e = env();
    let home = e.home.to_str().unwrap();
    let read = |path: String| {
        line(
            "file_read",
            &path,
            "ask",
            json!({"became": "asked in the agent", "answered_by": "agent"}),
        )
    };
    std::fs::create_dir_all(e.home.join("notes/a")).unwrap();
    let lines = vec![
        read(format!("{home}/notes/a/one.md")),
        read(format!("{home}/notes/a/two.md")),
        read(format!("{home}/todo.txt")),
        read(format!("{home}/done.txt")),
        // An older version asked where the floor now denies: never suggested.
        read(format!("{home}/.ssh/config")),
        read(format!("{home}/.ssh/config")),
    ];
    e.write_log(&[], &lines);
    let s = e.json(&["audit", "suggest"]);
    let rules: Vec<&str> = s["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["~/notes/a/**"], "{s:#}");
    // Asked for reading: a rule about reading only.
    assert_eq!(s["suggestions"][0]["access"], "read");
    assert_eq!(
        s["suggestions"][0]["command"],
        "sandgate policy allow path --read '~/notes/a/**'"
    );
    assert_eq!(s["decided_now"], 2, "the floor decides ~/.ssh/config now");
    let withheld: Vec<&str> = s["withheld"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["rule"].as_str().unwrap())
        .collect();
    assert_eq!(withheld, ["~/**"], "{s:#}");
    assert!(
        s["withheld"][0]["why"]
            .as_str()
            .unwrap()
            .ends_with("/.ssh`, which the built-in floor protects"),
        "{s:#}"
    );
    let args: Vec<&str> = s["suggestions"][0]["args"].as_array().unwrap()[1..]
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let out = e.run(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let check = |tool: &str| {
        let request = json!({"tool": tool, "params": {"path": "~/notes/a/one.md"}}).to_string();
        e.json(&["check", &request])["verdict"].clone()
    };
    assert_eq!(check("file_read"), "allow");
    assert_eq!(check("file_write"), "ask", "a read was asked, not a write");
}

#[test]
fn policy_show_names_the_log_and_its_size() {
    let e = env();
    let show = |extra: &[(&str, &str)]| {
        let mut c = e.sandgate(&["--json", "policy", "show"]);
        for (k, v) in extra {
            c.env(k, v);
        }
        let out = c.output_within(DEADLINE).unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["audit"].clone()
    };
    assert_eq!(
        show(&[]),
        json!({"log": e.log, "max_bytes": 10485760, "max_bytes_from": "the default"})
    );
    let policy = format!("{POLICY}audit:\n  max_bytes: 65536\n");
    std::fs::write(e.home.join(".sandgate/permissions.yaml"), policy).unwrap();
    // A local file may raise the size, not lower it.
    std::fs::create_dir_all(e.work.join(".sandgate")).unwrap();
    std::fs::write(
        e.work.join(".sandgate/permissions.yaml"),
        "audit:\n  max_bytes: 8192\n",
    )
    .unwrap();
    assert_eq!(show(&[])["max_bytes"], 65536);
    assert_eq!(
        show(&[])["max_bytes_from"],
        "`audit.max_bytes` of the policy"
    );
    std::fs::write(
        e.work.join(".sandgate/permissions.yaml"),
        "audit:\n  max_bytes: 131072\n",
    )
    .unwrap();
    assert_eq!(show(&[])["max_bytes"], 131072);
    assert_eq!(
        show(&[("SANDGATE_AUDIT_MAX_BYTES", "20000")])["max_bytes_from"],
        "`SANDGATE_AUDIT_MAX_BYTES`"
    );
    assert_eq!(show(&[("SANDGATE_AUDIT", "off")])["log"], Value::Null);
    let out = e.run(&["policy", "show"]);
    assert!(
        text(&out.stdout).contains(&format!(
            "audit log: {}, rotated at 131072 bytes (`audit.max_bytes` of the policy)",
            e.log.display()
        )),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_rotation_that_cannot_happen_keeps_the_record_and_says_why() {
    let e = env();
    let one = record_size(&e);
    let max = (one * 2).max(4096);
    // A non-empty directory where audit.jsonl.1 goes: the rename must fail.
    std::fs::create_dir_all(e.rotated().join("x")).unwrap();
    let mut last = None;
    for i in 0..(max / one + 2) {
        let out = e
            .sandgate(&[
                "check",
                &json!({"tool": "exec_run", "params": {"command": format!("echo p00-{i:02}")}})
                    .to_string(),
            ])
            .env("SANDGATE_AUDIT_MAX_BYTES", max.to_string())
            .output_within(DEADLINE)
            .unwrap();
        assert!(out.status.success(), "the decision is not affected");
        last = Some(text(&out.stderr));
    }
    let stderr = last.unwrap();
    assert!(
        stderr.contains("sandgate: warning: the audit record was written, but `")
            && stderr.contains("could not be renamed to `")
            && stderr.contains("decisions are not affected"),
        "{stderr}"
    );
    let records = std::fs::read_to_string(&e.log).unwrap();
    assert_eq!(
        records.lines().count() as u64,
        max / one + 2,
        "nothing lost"
    );
}
