//! `sandgate hook …` against the real binary: Gemini CLI's answers and its ask
//! fallback, failing closed, the audit log, and the compiled-policy cache.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hook_common;

use hook_common::{run_with_stdin, stdout_json, Env};
use serde_json::json;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn malformed_input_and_unknown_events_fail_closed() {
    let env = Env::new();
    let good = env.claude_payload("PreToolUse", "Bash", json!({"command": "git status"}));
    let mut no_cwd = good.clone();
    no_cwd.as_object_mut().unwrap().remove("cwd");
    let mut relative_cwd = good.clone();
    relative_cwd["cwd"] = json!("work");
    let mut bad_input = good.clone();
    bad_input["tool_input"] = json!({"command": 42});
    let mut unknown = good.clone();
    unknown["hook_event_name"] = json!("UserPromptSubmit");
    let mut missing_dir = good.clone();
    missing_dir["cwd"] = json!("/nonexistent/sandgate/dir");
    // After a call, outside `sandgate run`, there is nothing to tell.
    let mut after = good.clone();
    after["hook_event_name"] = json!("PostToolUse");
    for agent in ["claude", "codex"] {
        let out = env.hook(agent, &after.to_string());
        assert_eq!(out.status.code(), Some(0), "{agent}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{agent}");
    }
    for (what, payload, needle) in [
        ("not JSON", "{not json".to_string(), "not valid JSON"),
        (
            "not an object",
            "[1,2]".to_string(),
            "must be a JSON object",
        ),
        ("empty", String::new(), "not valid JSON"),
        ("no cwd", no_cwd.to_string(), "no `cwd`"),
        ("relative cwd", relative_cwd.to_string(), "absolute path"),
        (
            "bad tool_input",
            bad_input.to_string(),
            "`tool_input.command` to be a string",
        ),
        (
            "unknown event",
            unknown.to_string(),
            "not `UserPromptSubmit`",
        ),
        ("missing cwd dir", missing_dir.to_string(), "cannot be used"),
    ] {
        for agent in ["claude", "codex"] {
            let out = env.hook(agent, &payload);
            assert_eq!(out.status.code(), Some(2), "{agent} {what}");
            assert!(
                out.stdout.is_empty(),
                "{agent} {what}: no decision on stdout"
            );
            assert!(
                stderr(&out).contains(needle),
                "{agent} {what}: {}",
                stderr(&out)
            );
        }
    }
    let out = env.hook("gemini", &json!({"hook_event_name": "BeforeModel", "tool_name": "read_file", "tool_input": {}, "cwd": "/"}).to_string());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("`BeforeTool`"));
    // After a call, outside `sandgate run`: no opinion.
    let out = env.hook("gemini", &json!({"hook_event_name": "AfterTool", "tool_name": "read_file", "tool_input": {}, "cwd": "/"}).to_string());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "{}");
}

#[test]
fn a_policy_that_fails_to_load_fails_closed() {
    let env = Env::with_policy("permissions:\n  commands:\n    allow: ['^git (status']\n");
    let payload = env.claude_payload("PreToolUse", "Bash", json!({"command": "git status"}));
    for _ in 0..2 {
        let out = env.hook("claude", &payload.to_string());
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty());
        let err = stderr(&out);
        assert!(
            err.contains("permissions.yaml:3:") && err.contains("invalid regex"),
            "{err}"
        );
    }
    env.write_policy("permissions:\n  pathz: {}\n");
    let out = env.hook("claude", &payload.to_string());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn gemini_answers_allow_deny_and_ask_follows_the_policy() {
    let env = Env::new();
    let w = |f: &str| env.work.join(f).to_string_lossy().into_owned();
    let s = |f: &str| {
        env.root
            .join("secret")
            .join(f)
            .to_string_lossy()
            .into_owned()
    };
    let o = |f: &str| {
        env.root
            .join("other")
            .join(f)
            .to_string_lossy()
            .into_owned()
    };
    let cases = [
        (
            "run_shell_command",
            json!({"command": "git status", "description": "status"}),
            "allow",
        ),
        ("run_shell_command", json!({"command": "rm -rf /"}), "deny"),
        ("run_shell_command", json!({"command": "make"}), "ask"),
        ("read_file", json!({"absolute_path": w("a")}), "allow"),
        ("read_file", json!({"file_path": s("a")}), "deny"),
        (
            "write_file",
            json!({"file_path": o("a"), "content": "x"}),
            "ask",
        ),
        (
            "replace",
            json!({"file_path": w("a"), "old_string": "a", "new_string": "b"}),
            "allow",
        ),
        ("glob", json!({"pattern": "*.rs"}), "allow"),
        (
            "glob",
            json!({"pattern": "*.rs", "dir_path": s("")}),
            "deny",
        ),
        (
            "search_file_content",
            json!({"pattern": "x", "path": o("")}),
            "ask",
        ),
        ("list_directory", json!({"dir_path": w("")}), "allow"),
        ("list_directory", json!({"path": s("")}), "deny"),
        (
            "read_many_files",
            json!({"paths": ["src/a.rs", "README.md"]}),
            "allow",
        ),
        (
            "read_many_files",
            json!({"paths": ["src/a.rs", s("k")]}),
            "deny",
        ),
        (
            "read_many_files",
            json!({"paths": ["src/a.rs", o("k")]}),
            "ask",
        ),
    ];
    for (policy_ask, ask_becomes) in [
        (None, "deny"),
        (Some("deny"), "deny"),
        (Some("allow"), "allow"),
    ] {
        let mut policy = hook_common::POLICY.to_string();
        if let Some(a) = policy_ask {
            policy.push_str(&format!("hooks:\n  gemini:\n    ask: {a}\n"));
        }
        env.write_policy(&policy);
        for (tool, input, verdict) in &cases {
            let out = env.hook(
                "gemini",
                &env.gemini_payload(tool, input.clone()).to_string(),
            );
            assert_eq!(out.status.code(), Some(0), "{tool}: {}", stderr(&out));
            let answer = stdout_json(&out);
            let want = if *verdict == "ask" {
                ask_becomes
            } else {
                verdict
            };
            assert_eq!(
                answer["decision"], want,
                "{tool} {input} ask={policy_ask:?}: {answer}"
            );
            if *verdict == "ask" && want == "deny" {
                let reason = answer["reason"].as_str().unwrap();
                assert!(reason.contains("hooks.gemini.ask: allow"), "{reason}");
                assert!(reason.contains("permissions.yaml"), "{reason}");
            }
            if *verdict == "deny" {
                assert!(answer["reason"]
                    .as_str()
                    .unwrap()
                    .contains("sandgate blocked"));
            }
        }
    }
    let out = env.hook(
        "gemini",
        &env.gemini_payload("web_fetch", json!({"prompt": "x"}))
            .to_string(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout_json(&out), json!({}), "no opinion");
}

#[test]
fn every_decision_is_audited_and_the_cache_is_used() {
    let env = Env::new();
    let payload = env.claude_payload("PreToolUse", "Read", json!({"file_path": "../secret/x"}));
    for _ in 0..2 {
        let out = env.hook("claude", &payload.to_string());
        assert_eq!(
            stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
    }
    let log = std::fs::read_to_string(env.audit_log()).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["surface"], "hook claude");
    assert_eq!(lines[0]["tool"], "file_read");
    assert_eq!(lines[0]["verdict"], "deny");
    assert_eq!(
        lines[0]["subject"],
        env.root.join("secret/x").to_string_lossy().as_ref()
    );
    let entries = std::fs::read_dir(env.root.join("cache")).unwrap().count();
    assert_eq!(entries, 1, "one cache entry for one set of policy files");

    // An edited policy is seen at once: the cache is keyed by content.
    env.write_policy(&hook_common::POLICY.replace("deny: [\"{root}/secret/**\"]", "deny: []"));
    let out = env.hook("claude", &payload.to_string());
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "ask"
    );
}

#[test]
fn the_hook_reads_its_policy_files_from_the_environment_and_the_options_alike() {
    let env = Env::new();
    let payload = env.claude_payload("PreToolUse", "Bash", json!({"command": "git status"}));
    let decision = |out: &std::process::Output| {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
        stdout_json(out)["hookSpecificOutput"]["permissionDecision"].clone()
    };
    assert_eq!(decision(&env.hook("claude", &payload.to_string())), "allow");

    // Another central file that denies the same command.
    let other = env.root.join("other.yaml");
    std::fs::write(
        &other,
        "permissions:\n  commands:\n    deny: ['^git status$']\n",
    )
    .unwrap();
    let payload = payload.to_string();
    let run = |cmd: &mut std::process::Command| run_with_stdin(cmd, &payload);
    let by_env = run(env
        .command(&["hook", "claude"])
        .env("SANDGATE_CONFIG", &other));
    assert_eq!(decision(&by_env), "deny");
    let by_option = run(&mut env.command(&["hook", "claude", "--config", other.to_str().unwrap()]));
    assert_eq!(decision(&by_option), "deny");

    // A local file from the environment is merged too.
    let local = env.root.join("local.yaml");
    std::fs::write(&local, "permissions:\n  commands:\n    deny: ['^git']\n").unwrap();
    let by_local = run(env
        .command(&["hook", "codex"])
        .env("SANDGATE_LOCAL_CONFIG", &local));
    assert_eq!(decision(&by_local), "deny");

    // An empty variable is an error, not "no file": the call is blocked.
    let empty = run(env.command(&["hook", "claude"]).env("SANDGATE_CONFIG", ""));
    assert_eq!(empty.status.code(), Some(2));
    assert!(empty.stdout.is_empty());
    assert!(stderr(&empty).contains("--config"), "{}", stderr(&empty));
}
