//! `sandgate acp`'s relay, at the protocol's edges: the test speaks as the
//! editor on sandgate's stdin and stdout, and as the agent through a
//! scripted stand-in (`acp_client/fake_agent.py`) that records every line it
//! receives and writes whatever the test tells it to. Messages that are not
//! JSON, messages over the size limit, the policy's answers to the agent's
//! own permission requests, the gated `fs/*` and `terminal/create` methods
//! and the end of the editor's connection, and the sessions outside the
//! workspace. The issue's cases against real agents are in
//! `acp_agents/mod.rs` (run by `acp_gemini.rs` and `acp_codex.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/acp.rs"]
mod acp;
#[path = "../../../tests/support/ci.rs"]
mod ci;
#[path = "../../../tests/support/wait.rs"]
mod wait;

mod network_common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(20);

const POLICY: &str = r#"permissions:
  paths:
    allow: ["{work}/**"]
  commands:
    deny: ["^touch denied"]
    allow: ["^touch allowed\\.txt$"]
"#;

struct Relay {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    outside: PathBuf,
    record: PathBuf,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Every line the editor received so far.
    seen: Vec<String>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        wait::reap(&mut self.child);
    }
}

fn fake_agent() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp_client/fake_agent.py")
}

impl Relay {
    fn start(sandgate_args: &[&str], agent_mode: &[&str], env: &[(&str, &str)]) -> Relay {
        Relay::start_with(None, "", sandgate_args, agent_mode, env)
    }

    /// [`Relay::start`] with `network` (YAML under `permissions:`) added to
    /// the policy and, given `hosts`, in a mount namespace of its own where
    /// that file is `/etc/hosts` (the test host names; needs root).
    fn start_with(
        hosts: Option<&Path>,
        network: &str,
        sandgate_args: &[&str],
        agent_mode: &[&str],
        env: &[(&str, &str)],
    ) -> Relay {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let work = root.join("work");
        let outside = root.join("outside");
        for d in [&home.join(".ssh"), &home.join(".sandgate"), &work, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(home.join(".ssh/id_rsa"), "KEY\n").unwrap();
        std::fs::write(
            home.join(".sandgate/permissions.yaml"),
            POLICY.replace("{work}", &work.to_string_lossy()) + network,
        )
        .unwrap();
        let record = root.join("agent.record");
        std::fs::write(&record, "").unwrap();
        let mut argv: Vec<String> = vec![env!("CARGO_BIN_EXE_sandgate").into(), "acp".into()];
        argv.extend(sandgate_args.iter().map(|a| a.to_string()));
        argv.extend(["--".into(), "python3".into()]);
        argv.push(fake_agent().to_string_lossy().into_owned());
        argv.push(record.to_string_lossy().into_owned());
        argv.extend(agent_mode.iter().map(|a| a.to_string()));
        if let Some(hosts) = hosts {
            argv = network_common::named_argv(network_common::Who::Root, hosts, &argv);
        }
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("SANDGATE_MANAGED_CONFIG", root.join("no-managed.yaml"))
            .current_dir(&work)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        // Its own process group: the stand-in agent dies with it.
        let mut child = std::os::unix::process::CommandExt::process_group(&mut cmd, 0)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Relay {
            _tmp: tmp,
            home,
            work,
            outside,
            record,
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    /// Writes `line` as the editor.
    fn editor_says(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Makes the agent write `line`.
    fn agent_says(&mut self, line: &str) {
        self.agent_says_padded(line, 0);
    }

    /// Makes the agent write `line` with each `PAD` in it made `pad` x's.
    fn agent_says_padded(&mut self, line: &str, pad: usize) {
        let emit =
            json!({"jsonrpc": "2.0", "method": "test/emit", "params": {"line": line, "pad": pad}});
        self.editor_says(&emit.to_string());
    }

    /// The next line the editor receives that satisfies `want`.
    fn editor_gets(&mut self, what: &str, want: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if want(&line) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "the editor did not receive {what} within {WAIT:?}; it received:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// The lines the agent received, once one satisfies `want`.
    fn agent_gets(&self, what: &str, want: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let text = std::fs::read_to_string(&self.record).unwrap();
            if let Some(line) = text.lines().find(|l| want(l)) {
                return line.to_string();
            }
            if Instant::now() > deadline {
                panic!("the agent did not receive {what} within {WAIT:?}; it received:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn agent_received(&self) -> String {
        std::fs::read_to_string(&self.record).unwrap()
    }

    /// A round trip through the agent: everything sent before has arrived.
    fn settle(&mut self, mark: &str) {
        self.agent_says(&format!("\"{mark}\""));
        self.editor_gets(mark, |l| l.contains(mark));
    }

    fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(self.home.join(".sandgate/audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Closes the editor's end and waits for sandgate to exit.
    fn close(&mut self, within: Duration) -> Option<i32> {
        self.stdin.take();
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            if Instant::now() > deadline {
                panic!("sandgate still runs {within:?} after the editor closed its stdin");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

#[test]
fn messages_pass_unchanged_both_ways_even_when_they_are_not_json() {
    let mut r = Relay::start(&[], &[], &[]);
    let odd = r#"{"jsonrpc":"2.0",  "id":1,"method":"initialize","params":{"b":1,"a":[2, 3],"_meta":{"x":"\u00e9"}}}"#;
    r.editor_says(odd);
    r.editor_says("this is not json {");
    r.agent_says("{\"truncated\": ");
    r.agent_says(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"z":0,"a":1}}"#);
    assert_eq!(
        r.editor_gets("the cut JSON", |l| l.starts_with("{\"truncated")),
        "{\"truncated\": "
    );
    assert_eq!(
        r.editor_gets("the response", |l| l.contains("protocolVersion")),
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"z":0,"a":1}}"#
    );
    assert_eq!(
        r.agent_gets("the request", |l| l.contains("initialize")),
        odd
    );
    assert_eq!(
        r.agent_gets("the text", |l| l.starts_with("this is")),
        "this is not json {"
    );
}

/// JSON-RPC's `params` may be left out: requests and notifications without
/// them (the methods sandgate follows included) pass unchanged both ways,
/// and the session goes on.
#[test]
fn messages_without_params_pass_unchanged() {
    let mut r = Relay::start(&[], &[], &[]);
    let from_editor = [
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"session/load"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt"}"#,
        r#"{"jsonrpc":"2.0","method":"session/cancel"}"#,
    ];
    for line in from_editor {
        r.editor_says(line);
    }
    r.agent_says(r#"{"jsonrpc":"2.0","method":"session/update"}"#);
    r.agent_says(r#"{"jsonrpc":"2.0","id":7,"method":"session/request_permission"}"#);
    r.agent_says(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#);
    r.editor_gets("the update", |l| {
        l == r#"{"jsonrpc":"2.0","method":"session/update"}"#
    });
    r.editor_gets("the response", |l| l.contains(r#""sessionId":"s1""#));
    for line in from_editor {
        r.agent_gets(line, |l| l == line);
    }
    r.settle("still relaying");
}

#[test]
fn a_message_over_the_limit_is_answered_with_an_error_and_the_session_goes_on() {
    let mut r = Relay::start(&[], &[], &[("SANDGATE_ACP_MAX_MESSAGE_BYTES", "4096")]);
    let big = "x".repeat(10_000);
    // From the editor, a request: the error goes back to the editor.
    r.editor_says(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": {"text": big}})
            .to_string(),
    );
    let error = parse(&r.editor_gets("the error", |l| l.contains("\"error\"")));
    assert_eq!(error["id"], 9);
    assert_eq!(error["error"]["code"], -32600);
    assert!(
        error["error"]["message"].as_str().unwrap().contains("4096"),
        "{error}"
    );
    // From the agent, a request: the error goes back to the agent.
    r.agent_says_padded(
        r#"{"jsonrpc":"2.0","id":"a5","method":"fs/read_text_file","params":{"path":"PAD"}}"#,
        10_000,
    );
    let error = parse(&r.agent_gets("the error", |l| l.contains("\"a5\"")));
    assert_eq!(error["error"]["code"], -32600);
    // From the agent, a response to the editor's request 3: the editor gets the error.
    r.agent_says_padded(
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":"PAD"}}"#,
        10_000,
    );
    let error = parse(&r.editor_gets("the error for 3", |l| {
        l.contains("\"error\"") && l.contains("\"id\":3")
    }));
    assert_eq!(error["error"]["code"], -32600);
    // Neither side received the oversized message, and the relay goes on.
    r.settle("still-relaying");
    assert!(!r.agent_received().contains(&big));
    assert!(!r.seen.iter().any(|l| l.contains(&big)));
}

fn permission(id: u64, kind: &str, title: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/request_permission", "params": {
        "sessionId": "s1",
        "toolCall": {"toolCallId": format!("call-{id}"), "status": "pending", "title": title, "kind": kind},
        "options": [
            {"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
            {"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
            {"optionId": "cancel", "name": "Reject", "kind": "reject_once"},
        ],
    }})
    .to_string()
}

#[test]
fn the_agents_own_permission_requests_are_answered_by_the_policy_and_only_asks_reach_the_editor() {
    let mut r = Relay::start(&[], &[], &[]);
    r.agent_says(&permission(1, "execute", "touch denied.txt"));
    r.agent_says(&permission(2, "execute", "touch allowed.txt"));
    r.agent_says(&permission(3, "execute", "touch unmatched.txt"));
    let denied = parse(&r.agent_gets("the answer to 1", |l| l.contains("\"id\":1,")));
    assert_eq!(
        denied["result"]["outcome"]["optionId"], "cancel",
        "{denied}"
    );
    assert!(denied["result"]["_meta"]["sandgate"]["reason"]
        .as_str()
        .unwrap()
        .contains("^touch denied"));
    let allowed = parse(&r.agent_gets("the answer to 2", |l| l.contains("\"id\":2,")));
    assert_eq!(
        allowed["result"]["outcome"]["optionId"], "proceed_once",
        "{allowed}"
    );
    // Only the unmatched command reaches the editor, as the agent sent it.
    let asked = r.editor_gets("the asked request", |l| {
        l.contains("session/request_permission")
    });
    assert_eq!(asked, permission(3, "execute", "touch unmatched.txt"));
    r.editor_says(r#"{"jsonrpc":"2.0","id":3,"result":{"outcome":{"outcome":"selected","optionId":"proceed_once"}}}"#);
    r.agent_gets("the editor's answer to 3", |l| {
        l.contains("\"id\":3,") && l.contains("proceed_once")
    });
    r.settle("done");
    assert_eq!(
        r.seen
            .iter()
            .filter(|l| l.contains("request_permission"))
            .count(),
        1,
        "{:?}",
        r.seen
    );
    let audit = r.audit();
    let of = |needle: &str| {
        audit
            .iter()
            .find(|a| a["subject"].as_str().is_some_and(|s| s.contains(needle)))
            .unwrap_or_else(|| panic!("no record of {needle}: {audit:?}"))
            .clone()
    };
    let d = of("touch denied");
    assert_eq!(
        (
            d["surface"].as_str(),
            d["verdict"].as_str(),
            d["answered_by"].as_str()
        ),
        (Some("acp"), Some("deny"), Some("policy"))
    );
    assert_eq!(
        (d["session"].as_str(), d["tool_call"].as_str()),
        (Some("s1"), Some("call-1"))
    );
    let a = of("touch allowed");
    assert_eq!(
        (a["verdict"].as_str(), a["outcome"].as_str()),
        (Some("allow"), Some("allow"))
    );
    let u = of("touch unmatched");
    assert_eq!(
        (
            u["verdict"].as_str(),
            u["answered_by"].as_str(),
            u["outcome"].as_str()
        ),
        (Some("ask"), Some("human"), Some("allow"))
    );
}

fn fs_request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[test]
fn file_and_terminal_methods_are_judged_before_the_editor_performs_them() {
    let mut r = Relay::start(&[], &[], &[]);
    let key = r.home.join(".ssh/id_rsa").to_string_lossy().into_owned();
    let inside = r.work.join("a.txt").to_string_lossy().into_owned();
    let outside = r.outside.join("b.txt").to_string_lossy().into_owned();
    // The floor: refused with the reason, never shown to the editor.
    r.agent_says(&fs_request(
        1,
        "fs/read_text_file",
        json!({"sessionId": "s1", "path": key}),
    ));
    let refused = parse(&r.agent_gets("the refusal", |l| l.contains("\"id\":1,")));
    assert_eq!(refused["error"]["code"], -32001, "{refused}");
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("sandgate blocked"));
    // A denied command for the editor's terminal: refused the same way.
    r.agent_says(&fs_request(
        2,
        "terminal/create",
        json!({"sessionId": "s1", "command": "touch", "args": ["denied.txt"]}),
    ));
    let refused = parse(&r.agent_gets("the refusal", |l| l.contains("\"id\":2,")));
    assert_eq!(refused["error"]["code"], -32001, "{refused}");
    // Inside the workspace: passed on unchanged.
    let write_inside = fs_request(
        3,
        "fs/write_text_file",
        json!({"sessionId": "s1", "path": inside, "content": "hi"}),
    );
    r.agent_says(&write_inside);
    assert_eq!(
        r.editor_gets("the allowed write", |l| l.contains("fs/write_text_file")),
        write_inside
    );
    // Outside: sandgate asks the editor first; allowed once, the write is passed on.
    let write_outside = fs_request(
        4,
        "fs/write_text_file",
        json!({"sessionId": "s1", "path": outside, "content": "hi"}),
    );
    r.agent_says(&write_outside);
    let question =
        parse(&r.editor_gets("sandgate's question", |l| l.contains("request_permission")));
    assert_eq!(question["params"]["sessionId"], "s1");
    acp::assert_options(&question["params"]);
    assert!(
        question["params"]["toolCall"]["title"]
            .as_str()
            .unwrap()
            .contains(&outside),
        "{question}"
    );
    let qid = question["id"].clone();
    r.editor_says(&json!({"jsonrpc": "2.0", "id": qid, "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}}).to_string());
    assert_eq!(
        r.editor_gets("the write, after the answer", |l| l.contains("\"id\":4,")),
        write_outside
    );
    // Again, rejected once: the agent gets the refusal, the editor no write.
    r.agent_says(&fs_request(
        5,
        "fs/write_text_file",
        json!({"sessionId": "s1", "path": outside, "content": "hi"}),
    ));
    let question =
        parse(&r.editor_gets("the second question", |l| l.contains("request_permission")));
    r.editor_says(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"outcome": {"outcome": "cancelled"}}}).to_string());
    let refused = parse(&r.agent_gets("the refusal", |l| l.contains("\"id\":5,")));
    assert_eq!(refused["error"]["code"], -32001, "{refused}");
    r.settle("done");
    assert!(
        !r.seen.iter().any(|l| l.contains("id_rsa")
            || l.contains("\"id\":5,")
            || l.contains("terminal/create")),
        "{:?}",
        r.seen
    );
    // The editor's answers to sandgate's questions never reach the agent.
    assert!(
        !r.agent_received().contains("sandgate-"),
        "{}",
        r.agent_received()
    );
}

#[test]
fn without_the_editors_dialog_an_ask_is_refused_and_logged() {
    let mut r = Relay::start(&["--no-ui"], &[], &[]);
    let outside = r.outside.join("b.txt").to_string_lossy().into_owned();
    r.agent_says(&fs_request(
        1,
        "fs/write_text_file",
        json!({"sessionId": "s1", "path": outside, "content": "hi"}),
    ));
    let refused = parse(&r.agent_gets("the refusal", |l| l.contains("\"id\":1,")));
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--no-ui"),
        "{refused}"
    );
    r.settle("done");
    assert!(!r.seen.iter().any(|l| l.contains("request_permission")));
    let records: Vec<Value> = r
        .audit()
        .into_iter()
        .filter(|a| a["subject"].as_str() == Some(outside.as_str()))
        .collect();
    assert!(
        records.iter().any(|a| a["outcome"] == "deny"),
        "{records:?}"
    );
}

#[test]
fn the_editor_closing_stdin_ends_the_agent() {
    // An agent that ends at the end of its input: sandgate passes on its code.
    let mut r = Relay::start(&[], &[], &[]);
    r.settle("up");
    assert_eq!(r.close(Duration::from_secs(10)), Some(7));
    // One that does not: it is ended after the grace period.
    let mut r = Relay::start(&[], &["ignore-eof"], &[]);
    r.settle("up");
    let started = Instant::now();
    let code = r.close(Duration::from_secs(20));
    assert!(code.is_some_and(|c| c != 0), "{code:?}");
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

/// Sessions begun together (`session/new`, `session/load`), armed: each
/// directory outside every workspace is asked about once, through the
/// editor, in the session that began there first; a session in a directory
/// already asked about (or beneath it) shares that question, and a load the
/// agent refused asks nothing. Everything is written at once, before
/// sandgate can have started its supervisor, so sessions that begin before
/// the run is confined are asked about too.
#[test]
fn sessions_outside_the_workspace_are_each_asked_about_once() {
    let mut r = Relay::start(&[], &[], &[("SANDGATE_SANDBOX", "1")]);
    let dir = |name: &str| {
        let d = r.outside.join(name);
        std::fs::create_dir_all(&d).unwrap();
        d.to_string_lossy().into_owned()
    };
    let (a, c, e) = (dir("a"), dir("c"), dir("e"));
    let a_sub = dir("a/sub");
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": a, "mcpServers": []}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/load", "params": {"sessionId": "s2", "cwd": a, "mcpServers": []}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/load", "params": {"sessionId": "s3", "cwd": c, "mcpServers": []}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/new", "params": {"cwd": a_sub, "mcpServers": []}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "session/load", "params": {"sessionId": "s5", "cwd": e, "mcpServers": []}}),
    ];
    for request in &requests {
        r.editor_says(&request.to_string());
    }
    for answer in [
        json!({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 3, "result": null}),
        json!({"jsonrpc": "2.0", "id": 4, "result": {"sessionId": "s4"}}),
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32002, "message": "no such session"}}),
    ] {
        r.agent_says(&answer.to_string());
    }
    let mut asked = Vec::new();
    for _ in 0..2 {
        let q = parse(&r.editor_gets("a question about a session directory", |l| {
            l.contains("session/request_permission")
        }));
        let params = &q["params"];
        asked.push((
            params["sessionId"].as_str().unwrap().to_string(),
            params["toolCall"]["locations"][0]["path"]
                .as_str()
                .unwrap()
                .to_string(),
        ));
        let answer = json!({"jsonrpc": "2.0", "id": q["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}});
        r.editor_says(&answer.to_string());
    }
    asked.sort();
    assert_eq!(asked, [("s1".to_string(), a), ("s3".to_string(), c)]);
    // Every response reached the editor, and no third question came.
    r.settle("settled");
    for id in 1..=5 {
        assert!(
            r.seen.iter().any(|l| parse(l)["id"] == id),
            "the response {id} did not reach the editor: {:#?}",
            r.seen
        );
    }
    let questions = r
        .seen
        .iter()
        .filter(|l| l.contains("session/request_permission"))
        .count();
    assert_eq!(questions, 2, "{:#?}", r.seen);
}

/// Armed, with `permissions.network`: a host the lists do not decide, which
/// the agent's own process connects to, is asked about through the editor
/// (the run's question about a host), in the agent's session, as a `fetch`
/// titled with the host and port and with the four options. Allowed once,
/// the request reaches the server; rejected once, it is refused and reaches
/// nothing. (Each answer holds for its host and port for the rest of the
/// run, so each case has a server of its own.)
#[test]
fn an_unlisted_host_is_asked_about_through_the_editor() {
    if !network_common::can_name_hosts() {
        return;
    }
    if !network_common::has("curl") {
        network_common::missing("`curl` is needed");
        return;
    }
    let names = tempfile::tempdir().unwrap();
    let hosts = network_common::hosts_file(names.path());
    let servers = [network_common::http_server(), network_common::http_server()];
    // The addresses are listed (a name reaches a loopback address only when
    // an entry names the address); the name is not.
    let mut r = Relay::start_with(
        Some(&hosts),
        &format!(
            "  network:\n    allow: [\"127.0.0.1:{}\", \"127.0.0.1:{}\"]\n",
            servers[0].0, servers[1].0
        ),
        &[],
        &[],
        &[("SANDGATE_SANDBOX", "1")],
    );
    let work = r.work.to_string_lossy().into_owned();
    r.editor_says(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": work, "mcpServers": []}})
            .to_string(),
    );
    r.agent_says(&json!({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}).to_string());
    r.editor_gets("the new session", |l| l.contains("\"s1\""));
    for ((port, served), (answer, reached)) in servers
        .iter()
        .zip([("allow_once", true), ("reject_once", false)])
    {
        let host = format!("{}:{port}", network_common::UNLISTED);
        let url = format!("http://{host}/{answer}");
        let out = r.work.join(format!("{answer}.out"));
        r.editor_says(
            &json!({"jsonrpc": "2.0", "method": "test/run", "params": {
                "argv": ["curl", "-sS", "--max-time", "30", url],
                "out": out,
            }})
            .to_string(),
        );
        let q = parse(&r.editor_gets("the question about the host", |l| {
            l.contains("session/request_permission")
        }));
        let call = &q["params"]["toolCall"];
        assert_eq!(q["params"]["sessionId"], "s1", "{q}");
        assert_eq!(call["kind"], "fetch", "{q}");
        assert!(
            call["title"].as_str().unwrap().contains(&host),
            "the title names the host: {q}"
        );
        acp::assert_options(&q["params"]);
        r.editor_says(
            &json!({"jsonrpc": "2.0", "id": q["id"], "result": {"outcome": {"outcome": "selected", "optionId": answer}}})
                .to_string(),
        );
        wait::until(40, "the agent's request to end", || out.exists());
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            text.contains(&format!("served /{answer}")),
            reached,
            "{text}"
        );
        assert_eq!(
            served.load(std::sync::atomic::Ordering::SeqCst),
            usize::from(reached),
            "{text}"
        );
    }
}
