//! `permissions.network` on MCP `exec_run` (`landlock` and `bwrap`), as
//! root and as `sandgate-test`, driven by the official Python MCP SDK
//! client (`mcp_client/client.py`) over stdio. Real servers on loopback
//! under test host names (an `/etc/hosts` of the test's own, in a mount
//! namespace the test makes), real clients (`curl`, Python's `socket`).
//!
//! Every escape row runs first unconfined, as the same user in the same
//! mount namespace, where it must reach the recording server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::Ordering;

#[path = "../../../tests/support/ci.rs"]
mod ci;
#[path = "../../../tests/support/exe.rs"]
mod exe;
#[path = "../../../tests/support/wait.rs"]
mod wait;

mod mcp_client;
#[path = "network_common/tree.rs"]
mod net_tree;
mod network_common;

use net_tree::{tree_with, Tree};
use network_common::*;
use serde_json::{json, Value};
use wait::{Bounded, DEADLINE};

/// The pinned SDK version `.ci/run` installs.
const SDK: &str = "2.3.0";

fn client_ready() -> bool {
    let out = Command::new("python3")
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ])
        .output_within(DEADLINE);
    match out {
        Ok(o) if o.status.success() => true,
        _ => {
            missing(&format!(
                "the Python package `mcp` is not installed (pip install mcp=={SDK})"
            ));
            false
        }
    }
}

fn tree(who: Who, mode: &str, allow: &[String]) -> Tree {
    let allow: Vec<String> = allow.iter().map(|a| format!("\"{a}\"")).collect();
    let policy = format!(
        "permissions:\n  commands:\n    shell: false\n    allow: ['^(curl|python3) ']\n  \
         exec:\n    isolation:\n      mode: {mode}\n  \
         network:\n    allow: [{}]\n",
        allow.join(", ")
    );
    tree_with("sandgate-netmcp-", who, &policy)
}

impl Tree {
    fn env(&self) -> Value {
        json!({
            "HOME": self.home,
            "PATH": PATH,
            "SANDGATE_MANAGED_CONFIG": self.root.join("no-managed.yaml"),
            "SANDGATE_NO_UI": "1",
        })
    }

    /// `argv` unconfined, as this tree's user with the test names.
    fn plain(&self, argv: &[&str]) -> Output {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let full = named_argv(self.who, &self.hosts, &argv);
        let mut cmd = Command::new(&full[0]);
        cmd.args(&full[1..])
            .env_clear()
            .env("PATH", PATH)
            .env("HOME", &self.home)
            .current_dir(&self.work)
            .stdin(Stdio::null());
        cmd.output_within(DEADLINE).unwrap()
    }

    /// Each command through `exec_run`, in one MCP session of
    /// `sandgate mcp` run as this tree's user with the test names.
    fn exec_run(&self, commands: &[String]) -> Vec<String> {
        let server = vec![self.bin.to_string_lossy().into_owned(), "mcp".into()];
        let calls: Vec<Value> = commands
            .iter()
            .map(|c| json!({"tool": "exec_run", "args": {"command": c, "timeout_s": 60}}))
            .collect();
        let plan = json!({
            "command": named_argv(self.who, &self.hosts, &server),
            "env": self.env(),
            "cwd": self.work,
            "mode": "legacy",
            "elicit": null,
            "list_tools": false,
            "calls": calls,
        });
        let out = mcp_client::run("client.py", &plan);
        out["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["text"].as_str().unwrap_or("").to_string())
            .collect()
    }

    fn network_records(&self) -> Vec<Value> {
        fs::read_to_string(self.home.join(".sandgate/audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|r| r["tool"] == "network")
            .collect()
    }
}

fn modes() -> Vec<&'static str> {
    let mut modes = vec!["landlock"];
    if has("bwrap") {
        modes.push("bwrap");
    } else {
        missing("`bwrap` is not installed (package bubblewrap)");
    }
    modes
}

#[test]
fn exec_run_reaches_listed_hosts_through_the_proxy_and_nothing_else() {
    if !client_ready() || !has("curl") || !can_name_hosts() {
        if !has("curl") {
            missing("`curl` is needed");
        }
        return;
    }
    let (web, served) = http_server();
    let rec = recorders();
    let listed = format!("http://{LISTED}:{web}/hi");
    let unlisted = format!("http://{UNLISTED}:{web}/no");
    for who in users() {
        for mode in modes() {
            let case = format!("{who:?} {mode}");
            let t = tree(
                who,
                mode,
                &[format!("{LISTED}:{web}"), format!("127.0.0.1:{web}")],
            );
            // The escape rows, unconfined first: each reaches its server.
            let plain = t.plain(&["curl", "-sS", "--max-time", "20", &unlisted]);
            assert!(
                text(&plain).contains("served /no"),
                "{case}: {}",
                text(&plain)
            );
            let before_c = rec.connections.load(Ordering::SeqCst);
            let plain = t.plain(&["python3", "-c", TCP_CONNECT, &rec.tcp.to_string()]);
            assert!(
                text(&plain).contains("connected"),
                "{case}: {}",
                text(&plain)
            );
            wait_for(&rec.connections, before_c + 1, "the unconfined connect");

            let before_c = rec.connections.load(Ordering::SeqCst);
            let before_s = served.load(Ordering::SeqCst);
            let results = t.exec_run(&[
                format!("curl -sS --max-time 20 {listed}"),
                format!("curl -sS -i --max-time 20 {unlisted}"),
                format!("python3 -c \"{TCP_CONNECT}\" {}", rec.tcp),
                format!("curl -sS --noproxy '*' --max-time 20 http://{LISTED}:{web}/direct"),
            ]);
            assert!(results[0].contains("served /hi"), "{case}: {results:#?}");
            assert!(results[1].contains(" 403"), "{case}: {results:#?}");
            assert!(
                results[1].contains(&format!("sandgate policy allow domain {UNLISTED}:{web}")),
                "{case}: {results:#?}"
            );
            assert!(
                results[2].contains("Error") && !results[2].contains("\nconnected"),
                "{case}: {results:#?}"
            );
            // A program that ignores the proxy reaches the listed host by its
            // own connect, the name resolved inside.
            assert!(
                results[3].contains("served /direct"),
                "{case}: {results:#?}"
            );
            // Only the listed requests were served; the raw connect never arrived.
            assert_eq!(served.load(Ordering::SeqCst), before_s + 2, "{case}");
            std::thread::sleep(std::time::Duration::from_millis(300));
            assert_eq!(rec.connections.load(Ordering::SeqCst), before_c, "{case}");
            let records = t.network_records();
            let of = |subject: String, verdict: &str| {
                records.iter().any(|r| {
                    r["surface"] == "mcp" && r["subject"] == subject && r["verdict"] == verdict
                })
            };
            assert!(
                of(format!("{LISTED}:{web}"), "allow"),
                "{case}: {records:#?}"
            );
            assert!(
                of(format!("{UNLISTED}:{web}"), "deny"),
                "{case}: {records:#?}"
            );
        }
    }
}
