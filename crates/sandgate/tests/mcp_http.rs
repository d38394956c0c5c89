//! `sandgate mcp --http`: loopback by default, a bearer token on every request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod mcp_client;

#[path = "../../../tests/support/wait.rs"]
mod wait;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use wait::{Bounded, DEADLINE};

use serde_json::{json, Value};

const TOKEN: &str = "test-token-0123456789abcdef";

struct Server {
    _child: wait::Guard,
    addr: String,
    _tmp: tempfile::TempDir,
    work: PathBuf,
    home: PathBuf,
}

fn start(token: Option<&str>) -> (Server, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let work = home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.join(".sandgate")).unwrap();
    std::fs::write(
        home.join(".sandgate/permissions.yaml"),
        "permissions:\n  paths:\n    allow: [\"~/work/**\"]\n",
    )
    .unwrap();
    std::fs::write(work.join("hello.txt"), "hello over http\n").unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
    cmd.args(["mcp", "--http", "127.0.0.1:0"])
        .current_dir(&work)
        .env("HOME", &home)
        .env("SANDGATE_MANAGED_CONFIG", home.join("none.yaml"))
        .env("SANDGATE_AUDIT", "off")
        .env("SANDGATE_NO_UI", "1")
        .env_remove("SANDGATE_CONFIG")
        .env_remove("SANDGATE_LOCAL_CONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    match token {
        Some(t) => cmd.env("SANDGATE_MCP_TOKEN", t),
        None => cmd.env_remove("SANDGATE_MCP_TOKEN"),
    };
    let mut child = wait::Guard::spawn(&mut cmd);
    let out = wait::Lines::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    for _ in 0..2 {
        let line = out.next_within(30, "sandgate mcp --http");
        lines.push(line.unwrap_or_default());
    }
    let addr = lines[0]
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("no address in {lines:?}"))
        .to_string();
    (
        Server {
            _child: child,
            addr,
            _tmp: tmp,
            work,
            home,
        },
        lines,
    )
}

/// POST one JSON-RPC message to `/mcp`; returns the status code and body.
fn post(addr: &str, auth: Option<&str>, body: &Value) -> (u16, String) {
    let body = body.to_string();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(a) = auth {
        request.push_str(&format!("Authorization: {a}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, response)
}

fn call_write(path: &Path) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "file_write", "arguments": {"path": path, "content": "x"}}})
}

#[test]
fn requests_without_the_right_token_get_401_and_run_nothing() {
    let (server, lines) = start(Some(TOKEN));
    assert!(
        lines[1].contains("SANDGATE_MCP_TOKEN") && !lines[1].contains(TOKEN),
        "{lines:?}"
    );
    let target = server.work.join("planted.txt");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    for auth in [
        None,
        Some("Bearer wrong-token-0123456789"),
        Some(TOKEN),
        Some("Basic abc"),
    ] {
        for body in [&init, &call_write(&target)] {
            let (status, response) = post(&server.addr, auth, body);
            assert_eq!(status, 401, "{auth:?}: {response}");
            assert!(response.contains("bearer token"), "{response}");
        }
    }
    assert!(!target.exists());
    // With the token the same server answers.
    let (status, response) = post(&server.addr, Some(&format!("Bearer {TOKEN}")), &init);
    assert_eq!(status, 200, "{response}");
    assert!(response.contains("sandgate"), "{response}");
}

#[test]
fn a_generated_token_is_printed_and_works_with_a_real_client() {
    let (server, lines) = start(None);
    let token = lines[1]
        .strip_prefix("sandgate mcp: bearer token: ")
        .unwrap_or_else(|| panic!("{lines:?}"))
        .to_string();
    assert_eq!(token.len(), 64);
    let (status, _) = post(
        &server.addr,
        Some("Bearer nope"),
        &call_write(&server.work.join("x")),
    );
    assert_eq!(status, 401);

    let probe = Command::new("python3")
        .args(["-c", "import mcp"])
        .output_within(DEADLINE);
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!(
            "skipping the Python client part: python3 with the `mcp` package is not available"
        );
        return;
    }
    let plan = json!({
        "http": {"url": format!("http://{}/mcp", server.addr), "token": token},
        "mode": "legacy",
        "elicit": null,
        "list_tools": true,
        "calls": [
            {"tool": "file_read", "args": {"path": server.work.join("hello.txt")}},
            {"tool": "file_read", "args": {"path": server.home.join(".sandgate/permissions.yaml")}},
        ],
    });
    let out = mcp_client::run("client.py", &plan);
    assert_eq!(out["tools"].as_array().map(Vec::len), Some(13));
    assert_eq!(out["results"][0]["text"], "hello over http\n");
    assert_eq!(out["results"][1]["is_error"], true);
    assert!(out["results"][1]["text"]
        .as_str()
        .unwrap()
        .contains("built-in floor"));
}

#[test]
fn a_non_loopback_address_needs_allow_remote() {
    let out = Command::new(env!("CARGO_BIN_EXE_sandgate"))
        .args(["mcp", "--http", "0.0.0.0:0"])
        .env("SANDGATE_AUDIT", "off")
        .output_within(DEADLINE)
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a loopback address") && err.contains("--allow-remote"),
        "{err}"
    );
}
