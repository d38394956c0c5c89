//! `paths.read.*` and `paths.write.*` through the real binary: `check`, the
//! agents' hooks, `policy show|explain|allow` and the MCP file tools of the
//! real server, driven by the MCP Python SDK. A path that may be read is not
//! thereby writable, and the reverse.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hook_common;
mod mcp_client;

use hook_common::wait::{self, Bounded, DEADLINE};
use std::process::Command;

use hook_common::{stdout_json, Env};
use serde_json::{json, Value};

const POLICY: &str = r#"permissions:
  paths:
    deny: ["{root}/secret/**"]
    read:
      allow: ["{root}/work/docs/**"]
    write:
      allow: ["{root}/work/out/**"]
      deny: ["{root}/work/docs/locked/**"]
  commands:
    allow: ["^cat ", "^echo "]
hooks:
  claude:
    ask: deny
"#;

fn env() -> Env {
    let env = Env::with_policy(POLICY);
    for d in ["docs/locked", "out"] {
        std::fs::create_dir_all(env.work.join(d)).unwrap();
    }
    std::fs::write(env.work.join("docs/guide.md"), "read me\n").unwrap();
    std::fs::write(env.work.join("out/report.txt"), "old report\n").unwrap();
    env
}

fn check(env: &Env, request: Value) -> Value {
    let out = env
        .command(&["check", "--json", &request.to_string()])
        .current_dir(&env.work)
        .output_within(DEADLINE)
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn file(tool: &str, path: &str) -> Value {
    json!({"tool": tool, "params": {"path": path}})
}

#[test]
fn check_judges_reads_and_writes_by_their_own_lists() {
    let env = env();
    let cases: &[(Value, &str)] = &[
        (file("file_read", "docs/guide.md"), "allow"),
        (file("file_grep", "docs"), "allow"),
        (file("file_list", "docs"), "allow"),
        (file("file_head_tail", "docs/guide.md"), "allow"),
        (file("file_write", "docs/guide.md"), "ask"),
        (file("file_edit", "docs/guide.md"), "ask"),
        (file("file_write", "docs/locked/x"), "deny"),
        (file("file_read", "docs/locked/x"), "allow"),
        (file("file_write", "out/report.txt"), "allow"),
        (file("file_edit", "out/report.txt"), "allow"),
        (file("file_read", "out/report.txt"), "ask"),
        (file("file_find", "out"), "ask"),
        (file("file_read", "../secret/k"), "deny"),
        (file("file_write", "../secret/k"), "deny"),
        (
            json!({"tool": "exec_run", "params": {"command": "cat docs/guide.md > out/copy.md"}}),
            "allow",
        ),
        (
            json!({"tool": "exec_run", "params": {"command": "echo x > docs/guide.md"}}),
            "ask",
        ),
        (
            json!({"tool": "exec_run", "params": {"command": "echo x >> docs/locked/y"}}),
            "deny",
        ),
    ];
    for (request, want) in cases {
        let v = check(&env, request.clone());
        assert_eq!(v["verdict"], *want, "{request}: {v}");
    }
    let v = check(&env, file("file_read", "docs/guide.md"));
    assert_eq!(v["rule"]["list"], "allow");
    assert_eq!(v["rule"]["access"], "read");
    assert!(
        v["reason"].as_str().unwrap().contains("read allow rule"),
        "{v}"
    );
    let v = check(&env, file("file_write", "docs/locked/x"));
    assert_eq!(
        (&v["rule"]["list"], &v["rule"]["access"]),
        (&json!("deny"), &json!("write"))
    );
    // A rule of `paths.deny` names no access: it is about both.
    let v = check(&env, file("file_read", "../secret/k"));
    assert!(v["rule"].get("access").is_none(), "{v}");
}

#[test]
fn the_hooks_read_what_may_be_read_and_stop_the_writes() {
    let env = env();
    let docs = env.work.join("docs/guide.md");
    let out_file = env.work.join("out/report.txt");
    let claude = |tool: &str, input: Value| {
        let payload = env.claude_payload("PreToolUse", tool, input);
        let out = env.hook("claude", &payload.to_string());
        assert_eq!(out.status.code(), Some(0));
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"].clone()
    };
    assert_eq!(claude("Read", json!({"file_path": docs})), "allow");
    assert_eq!(
        claude(
            "Grep",
            json!({"pattern": "x", "path": env.work.join("docs")})
        ),
        "allow"
    );
    // `hooks.claude.ask: deny`: an ASK is blocked.
    assert_eq!(
        claude("Write", json!({"file_path": docs, "content": "x"})),
        "deny"
    );
    assert_eq!(
        claude(
            "Edit",
            json!({"file_path": docs, "old_string": "a", "new_string": "b"})
        ),
        "deny"
    );
    assert_eq!(
        claude(
            "Edit",
            json!({"file_path": out_file, "old_string": "a", "new_string": "b"})
        ),
        "allow"
    );
    assert_eq!(claude("Read", json!({"file_path": out_file})), "deny");
    // Codex's apply_patch writes every file it names.
    let patch =
        |p: &str| format!("*** Begin Patch\n*** Update File: {p}\n@@\n-a\n+b\n*** End Patch\n");
    assert_eq!(
        claude("apply_patch", json!({"command": patch("out/report.txt")})),
        "allow"
    );
    assert_eq!(
        claude("apply_patch", json!({"command": patch("docs/guide.md")})),
        "deny"
    );
    // The reason names the narrowest rule that would allow the write.
    let payload = env.claude_payload(
        "PreToolUse",
        "Write",
        json!({"file_path": docs, "content": "x"}),
    );
    let out = stdout_json(&env.hook("claude", &payload.to_string()));
    let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("paths.write.allow: '"), "{reason}");

    let gemini = |tool: &str, input: Value| {
        let out = env.hook("gemini", &env.gemini_payload(tool, input).to_string());
        assert_eq!(out.status.code(), Some(0));
        stdout_json(&out)["decision"].clone()
    };
    assert_eq!(gemini("read_file", json!({"file_path": docs})), "allow");
    assert_eq!(gemini("read_many_files", json!({"paths": [docs]})), "allow");
    assert_eq!(
        gemini("list_directory", json!({"dir_path": env.work.join("docs")})),
        "allow"
    );
    assert_eq!(
        gemini("write_file", json!({"file_path": docs, "content": "x"})),
        "deny"
    );
    assert_eq!(
        gemini(
            "replace",
            json!({"file_path": out_file, "old_string": "a", "new_string": "b"})
        ),
        "allow"
    );
    assert_eq!(gemini("read_file", json!({"file_path": out_file})), "deny");
}

#[test]
fn policy_show_explain_and_allow_name_the_lists() {
    let env = env();
    let run = |args: &[&str]| {
        let out = env
            .command(args)
            .current_dir(&env.work)
            .output_within(DEADLINE)
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let shown = run(&["policy", "show"]);
    assert!(
        shown.contains("path read allow (paths.read.allow):"),
        "{shown}"
    );
    assert!(
        shown.contains("path write deny (paths.write.deny):"),
        "{shown}"
    );
    let v: Value = serde_json::from_str(&run(&["--json", "policy", "show"])).unwrap();
    assert_eq!(v["paths"]["read"]["allow"][0]["access"], "read");
    assert_eq!(v["paths"]["write"]["deny"].as_array().unwrap().len(), 1);
    assert_eq!(v["paths"]["deny"].as_array().unwrap().len(), 1);

    let request = file("file_write", "docs/locked/x").to_string();
    let explained = run(&["policy", "explain", &request]);
    assert!(explained.contains("→ write deny"), "{explained}");
    assert!(explained.contains("access: write"), "{explained}");
    // A read of the same path: the write rule does not decide it.
    let request = file("file_read", "docs/locked/x").to_string();
    let explained = run(&["policy", "explain", &request]);
    assert!(!explained.contains("write deny"), "{explained}");
    assert!(explained.contains("decision: allow"), "{explained}");

    let added = run(&["policy", "allow", "path", "--read", "./notes/**"]);
    assert!(added.contains("permissions.paths.read.allow"), "{added}");
    let added = run(&["policy", "deny", "path", "--write", "./notes/frozen/**"]);
    assert!(added.contains("permissions.paths.write.deny"), "{added}");
    std::fs::create_dir_all(env.work.join("notes/frozen")).unwrap();
    assert_eq!(
        check(&env, file("file_read", "notes/a.md"))["verdict"],
        "allow"
    );
    assert_eq!(
        check(&env, file("file_write", "notes/a.md"))["verdict"],
        "ask"
    );
    assert_eq!(
        check(&env, file("file_write", "notes/frozen/a.md"))["verdict"],
        "deny"
    );
    let text = std::fs::read_to_string(env.home.join(".sandgate/permissions.yaml")).unwrap();
    assert!(
        text.contains("./notes/**") && text.contains("hooks:"),
        "{text}"
    );

    let out = env
        .command(&["policy", "allow", "command", "--read", "^ls$"])
        .output_within(DEADLINE)
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("are for path rules"));
}

#[test]
fn a_project_file_cannot_open_a_read_or_a_write() {
    let env = env();
    let local = env.work.join(".sandgate/permissions.yaml");
    std::fs::create_dir_all(local.parent().unwrap()).unwrap();
    std::fs::write(
        &local,
        "permissions:\n  paths:\n    read:\n      allow: [\"./out/**\"]\n      deny: [\"./docs/**\"]\n    write:\n      allow: [\"./docs/**\"]\n",
    )
    .unwrap();
    assert_eq!(
        check(&env, file("file_read", "out/report.txt"))["verdict"],
        "ask"
    );
    assert_eq!(
        check(&env, file("file_write", "docs/guide.md"))["verdict"],
        "ask"
    );
    assert_eq!(
        check(&env, file("file_read", "docs/guide.md"))["verdict"],
        "deny"
    );
    assert_eq!(
        check(&env, file("file_write", "out/report.txt"))["verdict"],
        "allow"
    );
    let out = env
        .command(&["--json", "policy", "show"])
        .current_dir(&env.work)
        .output_within(DEADLINE)
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ignored: Vec<&Value> = v["ignored"].as_array().unwrap().iter().collect();
    assert_eq!(ignored.len(), 2, "{v}");
    assert!(ignored.iter().all(|i| i["rule"]["list"] == "allow"));
}

/// Why the MCP Python SDK cannot run here, if it cannot.
fn missing_client() -> Option<String> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ])
        .output_within(DEADLINE);
    match out {
        Err(e) => Some(format!("python3 is not available: {e}")),
        Ok(o) if !o.status.success() => {
            Some("the Python package `mcp` is not installed (pip install mcp)".into())
        }
        Ok(_) => None,
    }
}

#[test]
fn the_mcp_file_tools_read_what_may_be_read_and_refuse_the_writes() {
    if let Some(reason) = missing_client() {
        hook_common::ci::skip(&reason);
        return;
    }
    let env = env();
    let calls = json!([
        {"tool": "file_read", "args": {"path": "docs/guide.md"}},
        {"tool": "file_grep", "args": {"pattern": "read", "path": "docs"}},
        {"tool": "file_write", "args": {"path": "docs/guide.md", "content": "overwritten\n"}},
        {"tool": "file_edit", "args": {"path": "docs/guide.md", "old_string": "read", "new_string": "x"}},
        {"tool": "file_write", "args": {"path": "docs/locked/new.md", "content": "x\n"}},
        {"tool": "file_edit", "args": {"path": "out/report.txt", "old_string": "old", "new_string": "new"}},
        {"tool": "file_read", "args": {"path": "out/report.txt"}},
    ]);
    let plan = json!({
        "command": [env!("CARGO_BIN_EXE_sandgate"), "mcp"],
        "env": {
            "HOME": env.home,
            "PATH": std::env::var("PATH").unwrap_or_default(),
            "SANDGATE_MANAGED_CONFIG": env.root.join("no-managed.yaml"),
            "SANDGATE_AUDIT_LOG": env.audit_log(),
            "SANDGATE_CACHE_DIR": env.root.join("cache"),
            "SANDGATE_NO_UI": "1",
        },
        "cwd": env.work,
        "mode": "legacy",
        "elicit": null,
        "list_tools": false,
        "calls": calls,
    });
    let v = mcp_client::run("client.py", &plan);
    let result = |i: usize| {
        let r = &v["results"][i];
        (
            r["is_error"].as_bool().unwrap(),
            r["text"].as_str().unwrap().to_string(),
        )
    };
    let (err, text) = result(0);
    assert!(!err && text.contains("read me"), "{text}");
    let (err, text) = result(1);
    assert!(!err && text.contains("guide.md"), "{text}");
    for i in [2, 3] {
        let (err, text) = result(i);
        assert!(err, "call {i} must be refused: {text}");
        assert!(text.contains("for writing"), "call {i}: {text}");
    }
    let (err, text) = result(4);
    assert!(err && text.contains("write deny rule"), "{text}");
    let (err, text) = result(5);
    assert!(!err, "{text}");
    let (err, text) = result(6);
    assert!(err && text.contains("for reading"), "{text}");
    // What was refused is untouched; what was allowed was written.
    assert_eq!(
        std::fs::read_to_string(env.work.join("docs/guide.md")).unwrap(),
        "read me\n"
    );
    assert!(!env.work.join("docs/locked/new.md").exists());
    assert_eq!(
        std::fs::read_to_string(env.work.join("out/report.txt")).unwrap(),
        "new report\n"
    );
}
