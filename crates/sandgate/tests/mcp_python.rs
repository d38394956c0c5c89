//! `sandgate mcp` driven by a real MCP client this project did not write: the
//! Python SDK (`mcp` from PyPI, installed by `.ci/run`), over stdio, in both
//! protocol eras (the `initialize` handshake up to `2025-11-25`, and the
//! stateless `2026-07-28`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod mcp_client;

#[path = "../../../tests/support/wait.rs"]
mod wait;

use wait::{Bounded, DEADLINE};

use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};

/// The pinned SDK version `.ci/run` installs.
const SDK: &str = "2.3.0";

/// Why the client cannot run here, if it cannot.
fn missing_client() -> Option<String> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ])
        .output_within(DEADLINE);
    match out {
        Err(e) => Some(format!("python3 is not available: {e}")),
        Ok(o) if !o.status.success() => Some(format!(
            "the Python package `mcp` is not installed (pip install mcp=={SDK}): {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )),
        Ok(_) => None,
    }
}

macro_rules! require_client {
    () => {
        if let Some(reason) = missing_client() {
            eprintln!("skipping: {reason}");
            return;
        }
    };
}

struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
}

const POLICY: &str = "\
# test policy
permissions:
  paths:
    deny: [\"~/secret/**\"]
    allow: [\"~/work/**\"]
  commands:
    allow: [\"^echo \", \"^sleep \"]
";

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let work = home.join("work");
    for dir in [".ssh", ".sandgate", "secret", "work/tree/sub"] {
        std::fs::create_dir_all(home.join(dir)).unwrap();
    }
    std::fs::write(home.join(".ssh/id_rsa"), "SECRET-KEY needle\n").unwrap();
    std::fs::write(home.join("secret/token"), "TOKEN needle\n").unwrap();
    std::fs::write(home.join(".sandgate/permissions.yaml"), POLICY).unwrap();
    std::fs::write(work.join("tree/a.txt"), "alpha needle\n").unwrap();
    std::fs::write(work.join("tree/sub/b.txt"), "beta\nneedle two\n").unwrap();
    // Links into denied places: a walk must neither follow nor read them.
    symlink(home.join("secret"), work.join("tree/leak")).unwrap();
    symlink(home.join(".ssh"), work.join("tree/keys")).unwrap();
    symlink(home.join("secret/token"), work.join("tree/token.txt")).unwrap();
    Fixture {
        _tmp: tmp,
        home,
        work,
    }
}

impl Fixture {
    /// Run the Python client with `plan` (see `mcp_client/client.py`).
    fn run(&self, mode: &str, elicit: Option<&str>, calls: Value, list_tools: bool) -> Value {
        let plan = json!({
            "command": [env!("CARGO_BIN_EXE_sandgate"), "mcp"],
            "env": {
                "HOME": self.home,
                "PATH": std::env::var("PATH").unwrap_or_default(),
                "SANDGATE_MANAGED_CONFIG": self.home.join("no-managed.yaml"),
                "SANDGATE_AUDIT_LOG": self.home.join("audit.jsonl"),
                // Headless: an ASK the client cannot elicit must not reach a terminal.
                "SANDGATE_NO_UI": "1",
            },
            "cwd": self.work,
            "mode": mode,
            "elicit": elicit,
            "list_tools": list_tools,
            "calls": calls,
        });
        mcp_client::run("client.py", &plan)
    }
}

fn result(out: &Value, i: usize) -> (&str, bool, &Value) {
    let r = &out["results"][i];
    (
        r["text"].as_str().unwrap(),
        r["is_error"].as_bool().unwrap(),
        &r["structured"],
    )
}

#[test]
fn lists_the_tools_and_calls_every_one() {
    require_client!();
    let f = fixture();
    let calls = json!([
        {"tool": "file_write", "args": {"path": "new/dir/n.txt", "content": "one\ntwo\nthree\n"}},
        {"tool": "file_read", "args": {"path": "new/dir/n.txt", "offset": 2, "limit": 1}},
        {"tool": "file_edit", "args": {"path": "new/dir/n.txt", "old_string": "two", "new_string": "2"}},
        {"tool": "file_head_tail", "args": {"path": "new/dir/n.txt", "head": 1, "tail": 1}},
        {"tool": "file_list", "args": {"path": "tree", "depth": 2}},
        {"tool": "file_grep", "args": {"pattern": "NEEDLE", "path": "tree", "ignore_case": true}},
        {"tool": "file_find", "args": {"glob": "*.txt", "path": "."}},
        {"tool": "file_count", "args": {"path": "tree"}},
        {"tool": "exec_run", "args": {"command": "echo hello from exec"}},
        {"tool": "exec_run", "args": {"command": "echo started; sleep 60", "timeout_s": 1}},
        {"tool": "exec_status", "args": {"id": "$job_id"}},
        {"tool": "exec_tail", "args": {"id": "$job_id", "lines": 5}},
        {"tool": "exec_stat", "args": {}},
        {"tool": "exec_kill", "args": {"id": "$job_id"}},
        {"tool": "exec_status", "args": {"id": "$job_id"}},
        {"tool": "file_read", "args": {"path": "~/.ssh/id_rsa"}},
        {"tool": "file_write", "args": {"path": "~/secret/planted", "content": "x"}},
    ]);
    let out = f.run("legacy", None, calls, true);

    let tools = out["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "file_read",
            "file_write",
            "file_edit",
            "file_list",
            "file_grep",
            "file_find",
            "file_count",
            "file_head_tail",
            "exec_run",
            "exec_status",
            "exec_tail",
            "exec_kill",
            "exec_stat"
        ]
    );
    for t in tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert!(t["description"].as_str().unwrap().len() > 60, "{t}");
        assert!(t["annotations"]["readOnlyHint"].is_boolean(), "{t}");
        assert!(t["annotations"]["destructiveHint"].is_boolean(), "{t}");
    }
    let read = tools.iter().find(|t| t["name"] == "file_read").unwrap();
    assert_eq!(read["annotations"]["readOnlyHint"], true);
    assert_eq!(read["inputSchema"]["required"], json!(["path"]));
    let write = tools.iter().find(|t| t["name"] == "file_write").unwrap();
    assert_eq!(write["annotations"]["destructiveHint"], true);

    for i in 0..15 {
        let (text, is_error, _) = result(&out, i);
        assert!(!is_error, "call {i} failed: {text}");
    }
    // Every result's structured content carries its text, which is all a
    // client that forwards only `structuredContent` gives the model.
    for (i, r) in out["results"].as_array().unwrap().iter().enumerate() {
        if r["structured"].is_object() {
            assert_eq!(r["structured"]["text"], r["text"], "call {i}: {r}");
        }
    }
    assert!(result(&out, 1).2["text"]
        .as_str()
        .unwrap()
        .starts_with("two\n"));
    assert!(
        result(&out, 15).2["text"]
            .as_str()
            .unwrap()
            .starts_with("denied: "),
        "{}",
        result(&out, 15).2
    );
    // The allowed write happened, and the edit after it.
    assert_eq!(
        std::fs::read_to_string(f.work.join("new/dir/n.txt")).unwrap(),
        "one\n2\nthree\n"
    );
    assert!(result(&out, 1)
        .0
        .starts_with("two\n[sandgate: showed lines 2–2"));
    assert_eq!(
        result(&out, 3).0,
        "one\n[sandgate: 1 lines omitted]\nthree\n"
    );
    let list = result(&out, 4).0;
    assert!(
        list.contains("a.txt") && list.contains("sub/") && list.contains("b.txt"),
        "{list}"
    );
    let grep = result(&out, 5).0;
    assert!(
        grep.contains("a.txt:1:alpha needle") && grep.contains("b.txt:2:needle two"),
        "{grep}"
    );
    assert!(result(&out, 6).0.contains("tree/sub/b.txt"));
    assert!(
        result(&out, 7)
            .0
            .starts_with("3 lines, 5 words, 29 bytes in 2 files"),
        "{}",
        result(&out, 7).0
    );
    assert_eq!(result(&out, 8).0, "hello from exec\n[exited with code 0]\n");
    // Past its timeout the command is a job, not killed.
    let (text, _, s) = result(&out, 9);
    assert!(
        text.starts_with("started\n") && text.contains("background job 1"),
        "{text}"
    );
    assert_eq!(s["state"], "running");
    assert_eq!(result(&out, 10).2["state"], "running");
    assert!(
        result(&out, 11).0.starts_with("started\n"),
        "{}",
        result(&out, 11).0
    );
    assert!(result(&out, 12).0.contains("echo started; sleep 60"));
    assert!(
        result(&out, 13).0.contains("stopped job 1"),
        "{}",
        result(&out, 13).0
    );
    assert_eq!(result(&out, 14).2["state"], "signalled");

    // The floor: denied, with the path and the rule.
    let (text, is_error, s) = result(&out, 15);
    assert!(is_error);
    assert!(
        text.contains(".ssh/id_rsa") && text.contains("built-in floor `~/.ssh/**`"),
        "{text}"
    );
    assert!(!text.contains("SECRET-KEY"));
    assert_eq!(s["rule"]["list"], "floor");
    let (text, is_error, _) = result(&out, 16);
    assert!(
        is_error && text.contains("deny rule `~/secret/**`"),
        "{text}"
    );
    assert!(!f.home.join("secret/planted").exists());

    // Every gated decision is in the audit log, as surface `mcp`.
    let audit = std::fs::read_to_string(f.home.join("audit.jsonl")).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.iter().all(|l| l["surface"] == "mcp"));
    assert!(lines
        .iter()
        .any(|l| l["verdict"] == "deny" && l["list"] == "floor"));
    assert_eq!(lines.len(), 12, "{audit}");
}

#[test]
fn a_grep_across_links_into_denied_places_leaks_nothing() {
    require_client!();
    let f = fixture();
    let calls = json!([
        {"tool": "file_grep", "args": {"pattern": "needle", "path": "~", "hidden": true}},
        {"tool": "file_grep", "args": {"pattern": "needle", "path": "tree"}},
        {"tool": "file_find", "args": {"glob": "*", "path": "~", "hidden": true}},
        {"tool": "file_list", "args": {"path": "tree", "depth": 3}},
        {"tool": "file_count", "args": {"path": "~", "hidden": true}},
    ]);
    // Listing `~` needs an answer: the home is outside the allow rules.
    let out = f.run("legacy", Some("allow_once"), calls, false);
    for i in 0..5 {
        let (text, is_error, _) = result(&out, i);
        assert!(!is_error, "{text}");
        assert!(
            !text.contains("SECRET-KEY") && !text.contains("TOKEN"),
            "leak in call {i}: {text}"
        );
        assert!(
            !text.contains("id_rsa") && !text.contains("secret/token"),
            "leak in call {i}: {text}"
        );
    }
    let grep_home = result(&out, 0).0;
    assert!(grep_home.contains("a.txt:1:alpha needle"), "{grep_home}");
    assert!(grep_home.contains("skipped"), "{grep_home}");
    let grep_tree = result(&out, 1).0;
    assert!(
        grep_tree.contains("a.txt:1:") && grep_tree.contains("b.txt:2:"),
        "{grep_tree}"
    );
    assert!(
        grep_tree.contains("were skipped"),
        "the links into denied places are counted: {grep_tree}"
    );
    let list = result(&out, 3).0;
    assert!(
        !list.contains("leak") && !list.contains("keys") && !list.contains("token.txt"),
        "{list}"
    );
}

fn ask_round(mode: &str) {
    let f = fixture();
    let calls = json!([{"tool": "exec_run", "args": {"command": "pwd"}}]);
    let out = f.run(mode, Some("allow_once"), calls.clone(), false);
    let (text, is_error, _) = result(&out, 0);
    assert!(!is_error, "{text}");
    assert!(
        text.starts_with(&format!("{}\n", f.work.display())),
        "{text}"
    );
    let asked = &out["elicitations"][0];
    assert!(
        asked["message"].as_str().unwrap().contains("`pwd`"),
        "{asked}"
    );
    let options = &asked["schema"]["properties"]["answer"]["oneOf"];
    assert_eq!(options.as_array().map(Vec::len), Some(4), "{asked}");

    let out = f.run(mode, Some("deny_once"), calls.clone(), false);
    let (text, is_error, _) = result(&out, 0);
    assert!(is_error && text.contains("denied once"), "{text}");
    assert_eq!(out["elicitations"].as_array().map(Vec::len), Some(1));

    // A client that declines gives no answer: a DENY nobody is said to have given.
    let _ = std::fs::remove_file(f.home.join("audit.jsonl"));
    let out = f.run(mode, Some("decline"), calls.clone(), false);
    let (text, is_error, _) = result(&out, 0);
    assert!(is_error && text.contains("declined"), "{text}");
    assert!(!text.contains("by a human"), "{text}");
    let audit = std::fs::read_to_string(f.home.join("audit.jsonl")).unwrap();
    let last: Value = serde_json::from_str(audit.lines().last().unwrap()).unwrap();
    assert_eq!(last["verdict"], "deny", "{audit}");
    assert_eq!(last["answered_by"], "client declined", "{audit}");
    assert_eq!(last["became"], "denied: the client declined", "{audit}");
    assert!(
        !last["reason"].as_str().unwrap().contains("human"),
        "{audit}"
    );

    // "always" writes the exact rule; the next call is not asked again.
    let twice = json!([
        {"tool": "exec_run", "args": {"command": "pwd"}},
        {"tool": "exec_run", "args": {"command": "pwd"}},
    ]);
    let out = f.run(mode, Some("allow_always"), twice, false);
    assert!(!result(&out, 0).1 && !result(&out, 1).1);
    assert_eq!(out["elicitations"].as_array().map(Vec::len), Some(1));
    let policy = std::fs::read_to_string(f.home.join(".sandgate/permissions.yaml")).unwrap();
    assert!(
        policy.starts_with("# test policy\n") && policy.contains("^pwd$"),
        "{policy}"
    );
}

#[test]
fn an_ask_goes_through_elicitation_create() {
    require_client!();
    ask_round("legacy");
}

#[test]
fn an_ask_goes_through_input_required_on_2026_07_28() {
    require_client!();
    ask_round("2026-07-28");
}

#[test]
fn a_headless_ask_is_denied() {
    require_client!();
    let f = fixture();
    let calls = json!([{"tool": "exec_run", "args": {"command": "touch made-by-ask"}}]);
    for mode in ["legacy", "2026-07-28"] {
        let out = f.run(mode, None, calls.clone(), false);
        let (text, is_error, s) = result(&out, 0);
        assert!(is_error, "{text}");
        assert!(
            text.contains("no human to ask") && text.contains("touch made-by-ask"),
            "{text}"
        );
        assert_eq!(s["verdict"], "deny");
        assert!(!f.work.join("made-by-ask").exists());
    }
}
