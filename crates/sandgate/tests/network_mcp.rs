//! `permissions.network` on MCP `exec_run` (`landlock` and `bwrap`), as
//! root and as `sandgate-test`, driven by the official Python MCP SDK
//! client (`mcp_client/client.py`) over stdio. Real servers on loopback
//! under test host names (an `/etc/hosts` of the test's own, in a mount
//! namespace the test makes), real clients (`curl`, Python's `socket`).
//! A host no entry decides is asked through the client's elicitation
//! callback (each of the four answers, and a client without one); IPv6
//! literals are held as IPv4 addresses are.
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
        let out = self.session(Value::Null, commands);
        out["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["text"].as_str().unwrap_or("").to_string())
            .collect()
    }

    /// [`Tree::exec_run`] with a client whose elicitation callback gives
    /// `elicit` to every question (`null`: a client without elicitation).
    /// Returns what the client printed: the results and the elicitations.
    fn session(&self, elicit: Value, commands: &[String]) -> Value {
        let server = vec![self.bin.to_string_lossy().into_owned(), "mcp".into()];
        let calls: Vec<Value> = commands
            .iter()
            .map(|c| json!({"tool": "exec_run", "args": {"command": c, "timeout_s": 90}}))
            .collect();
        let plan = json!({
            "command": named_argv(self.who, &self.hosts, &server),
            "env": self.env(),
            "cwd": self.work,
            "mode": "legacy",
            "elicit": elicit,
            "list_tools": false,
            "calls": calls,
        });
        mcp_client::run("client.py", &plan)
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

/// The texts of a session's results, and how many questions it was asked.
fn answered(out: &Value) -> (Vec<String>, usize) {
    let texts = out["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["text"].as_str().unwrap_or("").to_string())
        .collect();
    (texts, out["elicitations"].as_array().unwrap().len())
}

#[test]
fn exec_run_asks_about_an_unlisted_host_through_elicitation() {
    if !client_ready() || !has("curl") || !can_name_hosts() {
        if !has("curl") {
            missing("`curl` is needed");
        }
        return;
    }
    let (web, served) = http_server();
    let url = format!("http://{UNLISTED}:{web}/asked");
    let subject = format!("{UNLISTED}:{web}");
    let curl = format!("curl -sS -i --max-time 80 {url}");
    for who in users() {
        let case = format!("{who:?}");
        // The address is listed (a name on loopback needs it); the name is not.
        let t = tree(who, "landlock", &[format!("127.0.0.1:{web}")]);
        let policy = t.home.join(".sandgate/permissions.yaml");
        let before_policy = fs::read_to_string(&policy).unwrap();
        // Unconfined, the request reaches the server.
        let plain = t.plain(&["curl", "-sS", "--max-time", "20", &url]);
        assert!(
            text(&plain).contains("served /asked"),
            "{case}: {}",
            text(&plain)
        );

        // Allow once: the page; one question naming the host; nothing written.
        let before = served.load(Ordering::SeqCst);
        let out = t.session(json!("allow_once"), std::slice::from_ref(&curl));
        let (results, asked) = answered(&out);
        assert!(results[0].contains("served /asked"), "{case}: {out:#}");
        assert_eq!(asked, 1, "{case}: {out:#}");
        let message = out["elicitations"][0]["message"].as_str().unwrap();
        assert!(
            message.contains(&subject) && message.contains("curl"),
            "{case}: {message}"
        );
        assert_eq!(served.load(Ordering::SeqCst), before + 1, "{case}");
        assert_eq!(
            fs::read_to_string(&policy).unwrap(),
            before_policy,
            "{case}"
        );

        // Deny once: the proxy's 403 naming the host; nothing reaches the server.
        let before = served.load(Ordering::SeqCst);
        let out = t.session(json!("deny_once"), std::slice::from_ref(&curl));
        let (results, asked) = answered(&out);
        assert_eq!(asked, 1, "{case}: {out:#}");
        assert!(
            results[0].contains(" 403") && results[0].contains("refused when asked"),
            "{case}: {out:#}"
        );
        assert!(results[0].contains(&subject), "{case}: {out:#}");
        assert_eq!(served.load(Ordering::SeqCst), before, "{case}");

        // A client without elicitation: refused at once (not hung), the
        // refusal and the audit log saying why.
        let out = t.session(Value::Null, std::slice::from_ref(&curl));
        let (results, asked) = answered(&out);
        assert_eq!(asked, 0, "{case}: {out:#}");
        assert!(
            results[0].contains(" 403")
                && results[0]
                    .contains("nobody can answer here (the MCP client did not declare elicitation"),
            "{case}: {out:#}"
        );
        assert_eq!(served.load(Ordering::SeqCst), before, "{case}");
        let why = fs::read_to_string(t.home.join(".sandgate/audit.jsonl")).unwrap();
        assert!(
            why.contains("the MCP client did not declare elicitation"),
            "{case}: {why}"
        );

        // Allow always: the entry in the central file; the same session's
        // next command, and a new session without elicitation, are not asked.
        let out = t.session(json!("allow_always"), &[curl.clone(), curl.clone()]);
        let (results, asked) = answered(&out);
        assert!(
            results.iter().all(|r| r.contains("served /asked")),
            "{case}: {out:#}"
        );
        assert_eq!(asked, 1, "{case}: {out:#}");
        let written = fs::read_to_string(&policy).unwrap();
        assert!(written.contains(&subject), "{case}: {written}");
        let out = t.session(Value::Null, std::slice::from_ref(&curl));
        assert!(
            answered(&out).0[0].contains("served /asked"),
            "{case}: {out:#}"
        );

        // A client that never answers: refused once the question's timeout
        // (2 s here) runs out, the session going on.
        let t3 = tree(who, "landlock", &[format!("127.0.0.1:{web}")]);
        let policy3 = t3.home.join(".sandgate/permissions.yaml");
        let mut timed = fs::read_to_string(&policy3).unwrap();
        timed.push_str("  prompt:\n    timeout: 2\n");
        fs::write(&policy3, timed).unwrap();
        let before = served.load(Ordering::SeqCst);
        let started = std::time::Instant::now();
        let out = t3.session(json!("never"), std::slice::from_ref(&curl));
        let (results, asked) = answered(&out);
        assert_eq!(asked, 1, "{case}: {out:#}");
        assert!(results[0].contains(" 403"), "{case}: {out:#}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{case}: {:?}",
            started.elapsed()
        );
        assert_eq!(served.load(Ordering::SeqCst), before, "{case}");
        let why = fs::read_to_string(t3.home.join(".sandgate/audit.jsonl")).unwrap();
        assert!(
            why.contains("no answer from the MCP client within 2 s"),
            "{case}: {why}"
        );

        // Deny always: a deny entry, and the next session is refused unasked.
        let other = format!("http://{LISTED}:{web}/other");
        let t2 = tree(who, "landlock", &[format!("127.0.0.1:{web}")]);
        let curl_other = format!("curl -sS -i --max-time 80 {other}");
        let out = t2.session(json!("deny_always"), std::slice::from_ref(&curl_other));
        assert!(answered(&out).0[0].contains(" 403"), "{case}: {out:#}");
        let written = fs::read_to_string(t2.home.join(".sandgate/permissions.yaml")).unwrap();
        assert!(
            written.contains("deny:") && written.contains(&format!("{LISTED}:{web}")),
            "{case}: {written}"
        );
        let out = t2.session(json!("allow_once"), std::slice::from_ref(&curl_other));
        let (results, asked) = answered(&out);
        assert_eq!(asked, 0, "{case}: {out:#}");
        assert!(
            results[0].contains("matches the network deny"),
            "{case}: {out:#}"
        );
    }
}

/// IPv6 is held exactly like IPv4 under `exec_run`: a listed `[::1]:PORT`
/// is reached through the proxy and by a direct connect; an unlisted one,
/// reached unconfined, is refused (a 403 naming it) and never reached.
#[test]
fn exec_run_holds_ipv6_literals_like_ipv4() {
    if !client_ready() || !has("curl") || !can_name_hosts() {
        if !has("curl") {
            missing("`curl` is needed");
        }
        return;
    }
    let (web6, served6) = http_server_on("[::1]:0");
    let (other6, others) = http_server_on("[::1]:0");
    let listed = format!("http://[::1]:{web6}/v6");
    let unlisted = format!("http://[::1]:{other6}/no6");
    for who in users() {
        for mode in modes() {
            let case = format!("{who:?} {mode}");
            let t = tree(who, mode, &[format!("[::1]:{web6}")]);
            // Unconfined, the unlisted port is reached both ways.
            ipv6_reached_unconfined(
                &case,
                |argv| t.plain(argv),
                &["curl", "-sS", "--max-time", "20", &unlisted],
                other6,
            );
            let before = others.load(Ordering::SeqCst);
            let before6 = served6.load(Ordering::SeqCst);
            let results = t.exec_run(&[
                format!("curl -sS --max-time 20 {listed}"),
                format!("python3 -c \"{TCP6_GET}\" {web6}"),
                format!("curl -sS -i --max-time 20 {unlisted}"),
                format!("python3 -c \"{TCP6_GET}\" {other6}"),
            ]);
            assert!(results[0].contains("served /v6"), "{case}: {results:#?}");
            assert!(
                results[1].contains("served /direct6"),
                "{case}: {results:#?}"
            );
            assert!(results[2].contains(" 403"), "{case}: {results:#?}");
            assert!(
                results[2].contains(&format!("sandgate policy allow domain [::1]:{other6}")),
                "{case}: {results:#?}"
            );
            assert!(
                results[3].contains("Error") && !results[3].contains("served"),
                "{case}: {results:#?}"
            );
            assert_eq!(served6.load(Ordering::SeqCst), before6 + 2, "{case}");
            std::thread::sleep(std::time::Duration::from_millis(300));
            assert_eq!(others.load(Ordering::SeqCst), before, "{case}: reached");
        }
    }
}
