//! Bad surroundings: a reader that goes away, named pipes where files belong,
//! and MCP input that is too long or not JSON. Nothing may panic or hang.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

#[path = "../../../tests/support/wait.rs"]
mod wait;

use wait::{finish, Bounded, DEADLINE};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
}

const POLICY: &str =
    "permissions:\n  paths:\n    allow: [\"~/work/**\"]\n  commands:\n    allow: [\"^git( |$)\"]\n";

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let work = home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.join(".sandgate")).unwrap();
    std::fs::write(home.join(".sandgate/permissions.yaml"), POLICY).unwrap();
    Env {
        _tmp: tmp,
        home,
        work,
    }
}

impl Env {
    fn sandgate(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_sandgate"));
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("SANDGATE_MANAGED_CONFIG", self.home.join("no-managed.yaml"))
            .env("SANDGATE_AUDIT_LOG", self.home.join("audit.jsonl"))
            .env("SANDGATE_CACHE_DIR", self.home.join("cache"))
            .env("SANDGATE_NO_UI", "1")
            .env("NO_COLOR", "1")
            .current_dir(&self.work)
            .args(args);
        c
    }
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status_within(DEADLINE)
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// A pipe whose reading end is already closed: every write to it fails with EPIPE.
fn closed_pipe() -> OwnedFd {
    let (reader, writer) = nix::unistd::pipe().unwrap();
    drop(reader);
    writer
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let e = env();
    let check = r#"{"tool":"exec_run","params":{"command":"git status; rm -rf ~"}}"#;
    let cases: &[&[&str]] = &[
        &["--json", "policy", "show"],
        &["policy", "show"],
        &["check", check],
        &["--json", "check", check],
        &["policy", "explain", check],
        &["completions", "bash"],
        &["completions", "zsh"],
        &["completions", "fish"],
        &["policy", "lint"],
    ];
    for args in cases {
        let child = e
            .sandgate(args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(closed_pipe()))
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let out = finish(child, 20, &args.join(" "));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?} wrote to stderr: {err}");
    }
}

#[test]
fn a_reader_that_stops_early_gets_a_prefix_and_no_panic() {
    let e = env();
    // A real `head` that closes the pipe after a few bytes of a long output.
    let script = format!(
        "'{}' --json policy show | head -c 10; echo \" $?\" >&2",
        env!("CARGO_BIN_EXE_sandgate")
    );
    for _ in 0..5 {
        let mut sh = Command::new("sh");
        sh.args(["-c", &script])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &e.home)
            .env("SANDGATE_MANAGED_CONFIG", e.home.join("no-managed.yaml"))
            .env("SANDGATE_AUDIT", "off")
            .current_dir(&e.work)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let out = finish(sh.spawn().unwrap(), 20, "policy show | head");
        assert_eq!(out.stdout.len(), 10);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_named_pipe_as_a_policy_file_is_an_error_not_a_hang() {
    let e = env();
    let central = e.home.join(".sandgate/permissions.yaml");
    std::fs::remove_file(&central).unwrap();
    mkfifo(&central);
    let child = e
        .sandgate(&[
            "check",
            r#"{"tool":"exec_run","params":{"command":"git status"}}"#,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let out = finish(child, 20, "check with a FIFO central file");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&central.display().to_string()) && err.contains("named pipe (FIFO)"),
        "{err}"
    );
    // Writers refuse it too instead of waiting for a writer on the other side.
    let child = e
        .sandgate(&["policy", "allow", "command", "^ls$"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let out = finish(child, 20, "policy allow with a FIFO central file");
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("named pipe (FIFO)"), "{err}");
}

/// A named pipe a program left as a workspace's `.sandgate/sandbox.json`
/// stops the next `sandgate run` at once with the reason, instead of
/// holding it forever.
#[test]
fn a_named_pipe_as_sandbox_json_is_an_error_not_a_hang() {
    let e = env();
    let settings = e.work.join(".sandgate/sandbox.json");
    std::fs::create_dir_all(e.work.join(".sandgate")).unwrap();
    mkfifo(&settings);
    for args in [&["run", "--dry-run"][..], &["run", "--no-ui", "--", "true"]] {
        let child = e
            .sandgate(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let out = finish(child, 20, "run with a FIFO sandbox.json");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&settings.display().to_string()) && err.contains("named pipe (FIFO)"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_named_pipe_as_the_projects_policy_fails_the_hook_closed_at_once() {
    let e = env();
    std::fs::create_dir_all(e.work.join(".sandgate")).unwrap();
    mkfifo(&e.work.join(".sandgate/permissions.yaml"));
    let payload = json!({
        "session_id": "s-1",
        "transcript_path": e.home.join("t.jsonl"),
        "cwd": e.work,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status"},
        "tool_use_id": "toolu_1",
    });
    // Twice: the second call meets a warm compiled-policy cache of the central file.
    for round in 0..2 {
        let out = e
            .sandgate(&["hook", "claude"])
            .output_with_stdin_within(payload.to_string().as_bytes(), Duration::from_secs(20))
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("named pipe (FIFO)"), "round {round}: {text}");
        assert!(!text.contains("\"allow\""), "round {round}: {text}");
    }
}

#[test]
fn a_named_pipe_as_the_audit_log_is_refused_and_the_decision_stands() {
    let e = env();
    let log = e.home.join("audit.jsonl");
    mkfifo(&log);
    let child = e
        .sandgate(&[
            "--json",
            "check",
            r#"{"tool":"exec_run","params":{"command":"git status"}}"#,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let out = finish(child, 20, "check with a FIFO audit log");
    assert_eq!(out.status.code(), Some(0));
    let decision: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(decision["verdict"], "allow");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("audit log") && err.contains("not a regular file"),
        "{err}"
    );
}

/// A raw JSON-RPC session with `sandgate mcp` on stdio.
struct Raw {
    child: wait::Guard,
    out: wait::Lines,
}

impl Raw {
    fn start(e: &Env) -> Raw {
        let mut child = wait::Guard::spawn(
            e.sandgate(&["mcp", "--no-ui"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null()),
        );
        let out = wait::Lines::new(child.stdout.take().unwrap());
        let mut raw = Raw { child, out };
        raw.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
            .to_string()
            .as_bytes(),
        );
        assert_eq!(raw.recv()["id"], 1);
        raw.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        raw
    }

    fn send(&mut self, line: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let line = self.out.next_within(30, "sandgate mcp").unwrap_or_default();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    fn call(&mut self, id: u64, tool: &str, args: Value) -> Value {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": tool, "arguments": args}})
            .to_string()
            .as_bytes(),
        );
        let answer = self.recv();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }

    fn close(mut self) {
        drop(self.child.stdin.take());
        let status = self.child.finish(20, "mcp after stdin closed").status;
        assert!(status.success());
    }
}

#[test]
fn mcp_answers_a_line_that_is_not_json_and_one_over_the_limit() {
    let e = env();
    let mut raw = Raw::start(&e);
    raw.send(b"this is not json");
    let answer = raw.recv();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert_eq!(answer["id"], Value::Null);
    raw.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list""#);
    assert_eq!(raw.recv()["error"]["code"], -32700);

    // JSON a skimming check passes but rmcp cannot read: a string that is
    // not UTF-8, a lone surrogate, nesting past the limit. Each is answered,
    // with its id, instead of dropped.
    let call = |id: u32, path: &[u8]| {
        let mut line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"file_read","arguments":{{"path":""#
        )
        .into_bytes();
        line.extend_from_slice(path);
        line.extend_from_slice(br#""}}}"#);
        line
    };
    let mut deep = br#"{"jsonrpc":"2.0","id":23,"x":"#.to_vec();
    deep.extend(std::iter::repeat_n(b'[', 100_000));
    deep.extend(std::iter::repeat_n(b']', 100_000));
    deep.push(b'}');
    for (id, line) in [
        (21, call(21, b"\xff\xfe")),
        (22, call(22, br"~/.ssh/id_rsa\ud800")),
        (23, deep),
    ] {
        raw.send(&line);
        let answer = raw.recv();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
    }

    // 20 MiB of content in one request: refused with the limit, and with its id.
    let target = e.work.join("big.txt");
    let mut big = br#"{"jsonrpc":"2.0","id":"big-7","method":"tools/call","params":{"name":"file_write","arguments":{"path":""#.to_vec();
    big.extend_from_slice(target.to_str().unwrap().as_bytes());
    big.extend_from_slice(br#"","content":""#);
    big.extend(std::iter::repeat_n(b'a', 20 * 1024 * 1024));
    big.extend_from_slice(br#""}}}"#);
    raw.send(&big);
    let answer = raw.recv();
    assert_eq!(answer["id"], "big-7", "{answer}");
    assert_eq!(answer["error"]["code"], -32600);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("8 MiB") && message.contains("8388608"),
        "{message}"
    );
    assert!(!target.exists());

    // The session goes on.
    raw.send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    let answer = raw.recv();
    assert_eq!(answer["id"], 3);
    assert!(answer["result"]["tools"].as_array().unwrap().len() > 10);
    raw.close();
}

/// A path of millions of components (within the message limit) is refused
/// at once, not resolved component by component for minutes.
#[test]
fn a_path_longer_than_the_kernel_takes_is_denied_at_once() {
    let e = env();
    let call = json!({"tool": "file_read", "params": {"path": "a/".repeat(50_000)}});
    let child = e
        .sandgate(&["check", &call.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let out = finish(child, 20, "check of a long path");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        all.contains("deny") && all.contains("4096 bytes"),
        "{}",
        &all[..all.len().min(400)]
    );
    // Over MCP, where a message may hold millions of components.
    let path = "a/".repeat(2_000_000);
    let mut raw = Raw::start(&e);
    let answer = raw.call(31, "file_read", json!({"path": path}));
    let text = answer.to_string();
    assert!(
        text.contains("4096 bytes"),
        "{}",
        &text[..text.len().min(400)]
    );
    raw.close();
}

#[test]
fn mcp_file_tools_refuse_a_named_pipe_without_waiting() {
    let e = env();
    let fifo = e.work.join("pipe.txt");
    mkfifo(&fifo);
    let mut raw = Raw::start(&e);
    let calls = [
        ("file_read", json!({"path": fifo})),
        ("file_head_tail", json!({"path": fifo})),
        (
            "file_edit",
            json!({"path": fifo, "old_string": "a", "new_string": "b"}),
        ),
        ("file_count", json!({"path": fifo})),
    ];
    for (i, (tool, args)) in calls.into_iter().enumerate() {
        let answer = raw.call(10 + i as u64, tool, args);
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{tool}: {answer}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("not a regular file") || text.contains("named pipe"),
            "{tool}: {text}"
        );
    }
    raw.close();
}

fn start_http(e: &Env, extra: &[&str]) -> (wait::Guard, String) {
    let mut args = vec!["mcp", "--http", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let mut child = wait::Guard::spawn(
        e.sandgate(&args)
            .env("SANDGATE_MCP_TOKEN", TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let out = wait::Lines::new(child.stdout.take().unwrap());
    let line = out
        .next_within(30, "sandgate mcp --http")
        .unwrap_or_default();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.trim_end().strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("no address in {line}"))
        .to_string();
    (child, addr)
}

const TOKEN: &str = "test-token-0123456789abcdef";

fn post(addr: &str, origin: Option<&str>, body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Authorization: Bearer {TOKEN}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(o) = origin {
        request.push_str(&format!("Origin: {o}\r\n"));
    }
    request.push_str("\r\n");
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(body);
    let _ = stream.write_all(&bytes);
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, response)
}

fn init() -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}})
    .to_string()
    .into_bytes()
}

#[test]
fn mcp_http_checks_the_origin_against_loopback_and_allow_origin() {
    let e = env();
    let (child, addr) = start_http(&e, &[]);
    for origin in [
        None,
        Some("http://localhost:3000"),
        Some("http://127.0.0.1"),
    ] {
        let (status, response) = post(&addr, origin, &init());
        assert_eq!(status, 200, "{origin:?}: {response}");
    }
    for origin in [
        "https://evil.example",
        "null",
        "http://localhost.evil.example",
    ] {
        let (status, response) = post(&addr, Some(origin), &init());
        assert_eq!(status, 403, "{origin}: {response}");
    }
    let big = vec![b' '; 9 * 1024 * 1024];
    let (status, response) = post(&addr, None, &big);
    assert_eq!(status, 413, "{response}");
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("");
    let body: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {response}"));
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("8388608"));
    drop(child);

    let (child, addr) = start_http(&e, &["--allow-origin", "https://app.example.com"]);
    assert_eq!(post(&addr, Some("https://app.example.com"), &init()).0, 200);
    assert_eq!(
        post(&addr, Some("https://other.example.com"), &init()).0,
        403
    );
    drop(child);

    let out = e
        .sandgate(&[
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--allow-origin",
            "example.com",
        ])
        .output_within(DEADLINE)
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not an origin"));
}
