//! One `tools/call` round trip over stdio: `file_read` of a 4 KiB file, through
//! the gate and the audit log, against the real `sandgate mcp` process.
//!
//! `cargo bench -p sandgate --bench mcp_roundtrip`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};

struct Session {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Session {
    fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Send a request and read lines until its response arrives.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server closed stdout"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let work = home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.join(".sandgate")).unwrap();
    std::fs::write(
        home.join(".sandgate/permissions.yaml"),
        "permissions:\n  paths:\n    deny: [\"~/work/secret/**\"]\n    allow: [\"~/work/**\"]\n",
    )
    .unwrap();
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
    std::fs::write(work.join("four_kib.txt"), line.repeat(64)).unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_sandgate"))
        .args(["mcp", "--no-ui"])
        .current_dir(&work)
        .env("HOME", &home)
        .env("SANDGATE_MANAGED_CONFIG", home.join("none.yaml"))
        .env("SANDGATE_AUDIT_LOG", home.join("audit.jsonl"))
        .env_remove("SANDGATE_CONFIG")
        .env_remove("SANDGATE_LOCAL_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut session = Session {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()),
        next_id: 0,
    };
    let init = session.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "bench", "version": "0"}}),
    );
    assert!(init["result"]["serverInfo"]["name"] == "sandgate", "{init}");
    session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let params = json!({"name": "file_read", "arguments": {"path": "four_kib.txt"}});
    let first = session.request("tools/call", params.clone());
    assert_eq!(
        first["result"]["content"][0]["text"].as_str().map(str::len),
        Some(4096),
        "{first}"
    );

    let mut group = c.benchmark_group("mcp_stdio");
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("tools_call_file_read_4KiB", |b| {
        b.iter(|| session.request("tools/call", params.clone()))
    });
    group.finish();
    drop(session);
    let _ = child.wait();
}

criterion_group!(benches, bench);
criterion_main!(benches);
