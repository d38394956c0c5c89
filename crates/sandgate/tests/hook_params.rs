//! Every path an agent's tool call could act on is judged, through the real
//! `sandgate hook …` binary: each path parameter of a payload (every alias,
//! every tool, every agent), every working directory of a shell call, the
//! directories a glob pattern reaches, an agent's search rooted above the
//! floor, and an `apply_patch` inside a shell command. Each row is refused
//! under a permissive policy (every path and command allowed: whatever
//! refuses it is the floor) and under the `readonly` preset; control rows
//! show the same shapes pass where they touch no floor.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hook_common;

use hook_common::wait::{Bounded, DEADLINE};
use hook_common::Env;
use serde_json::{json, Value};

/// Every path and every command allowed.
const PERMISSIVE: &str =
    "permissions:\n  paths:\n    allow: [\"/**\"]\n  commands:\n    allow: [\".*\"]\n";

/// (agent, tool, input; `{home}`, `{work}` and `{root}` are filled in).
type Row = (&'static str, &'static str, Value);

/// A Codex CLI patch that adds `file`, as a heredoc for `apply_patch`.
fn heredoc(prefix: &str, file: &str) -> String {
    format!("{prefix}apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {file}\n+ssh-ed25519 AAAA\n*** End Patch\nEOF\n")
}

/// Calls that reach the floor: denied under every policy.
fn floor_rows() -> Vec<Row> {
    vec![
        // 1. Several path parameters: each is judged.
        (
            "gemini",
            "read_file",
            json!({"file_path": "a.txt", "absolute_path": "{home}/.ssh/id_rsa"}),
        ),
        (
            "gemini",
            "read_file",
            json!({"absolute_path": "a.txt", "path": "~/.ssh/id_rsa"}),
        ),
        (
            "gemini",
            "read_file",
            json!({"file_path": "~/.ssh/id_rsa", "absolute_path": "a.txt"}),
        ),
        (
            "gemini",
            "write_file",
            json!({"file_path": "b.txt", "directory": "~/.ssh", "content": "x"}),
        ),
        (
            "gemini",
            "replace",
            json!({"file_path": "a.txt", "paths": ["~/.aws/credentials"]}),
        ),
        (
            "gemini",
            "list_directory",
            json!({"dir_path": "{work}", "path": "~/.ssh"}),
        ),
        (
            "gemini",
            "grep_search",
            json!({"pattern": "x", "dir_path": "{work}", "directory": "~/.ssh"}),
        ),
        (
            "claude",
            "Read",
            json!({"file_path": "a.txt", "path": "~/.ssh/id_rsa"}),
        ),
        (
            "claude",
            "Write",
            json!({"file_path": "b.txt", "absolute_path": "{home}/.ssh/authorized_keys", "content": "k"}),
        ),
        (
            "claude",
            "Edit",
            json!({"file_path": "a.txt", "notebook_path": "~/.ssh/config", "old_string": "a", "new_string": "b"}),
        ),
        (
            "claude",
            "LS",
            json!({"path": "{work}", "dir_path": "{home}/.gnupg"}),
        ),
        (
            "codex",
            "apply_patch",
            json!({"command": "*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch\n", "path": "~/.ssh/k"}),
        ),
        ("claude", "mcp__fs__list", json!({"directory": "~/.ssh"})),
        // 2. Every working directory of a shell call.
        (
            "gemini",
            "run_shell_command",
            json!({"command": "cat .ssh/id_rsa", "directory": "{home}"}),
        ),
        (
            "gemini",
            "run_shell_command",
            json!({"command": "cat .ssh/id_rsa", "dir_path": "{work}", "directory": "{home}"}),
        ),
        (
            "gemini",
            "run_shell_command",
            json!({"command": "cat .ssh/id_rsa", "directory": "{work}", "dir_path": "{home}"}),
        ),
        (
            "gemini",
            "run_shell_command",
            json!({"command": "cat id_rsa", "directory": "~/.ssh"}),
        ),
        (
            "claude",
            "Bash",
            json!({"command": "cat .ssh/id_rsa", "workdir": "{home}"}),
        ),
        (
            "codex",
            "Bash",
            json!({"command": "cat .ssh/id_rsa", "cwd": "{home}"}),
        ),
        // 3. Where a glob pattern reaches.
        ("claude", "Glob", json!({"pattern": "../home/.ssh/*"})),
        ("claude", "Glob", json!({"pattern": "{{home}/.ssh,/x}/*"})),
        ("claude", "Glob", json!({"pattern": "{src,../home/.aws}/*"})),
        ("claude", "Glob", json!({"pattern": "{home}/.s*/*"})),
        (
            "claude",
            "Glob",
            json!({"pattern": "**/id_rsa", "path": "{home}"}),
        ),
        (
            "claude",
            "Glob",
            json!({"pattern": ".ssh/*", "path": "{home}"}),
        ),
        (
            "claude",
            "Glob",
            json!({"pattern": "*/id_rsa", "path": "~"}),
        ),
        ("claude", "Glob", json!({"pattern": "../*/.gnupg/**"})),
        ("gemini", "glob", json!({"pattern": "../home/.ssh/*"})),
        ("gemini", "glob", json!({"pattern": "../home/.[s]sh/*"})),
        (
            "gemini",
            "glob",
            json!({"pattern": "../home/*/../.ssh/id_rsa"}),
        ),
        (
            "gemini",
            "glob",
            json!({"pattern": "*", "dir_path": "../home/.ssh"}),
        ),
        (
            "claude",
            "Glob",
            json!({"pattern": "*.txt", "path": "~/.s*"}),
        ),
        ("gemini", "list_directory", json!({"dir_path": "~/.s*"})),
        (
            "claude",
            "Grep",
            json!({"pattern": "x", "path": "~/.[s]sh"}),
        ),
        // A pattern in any path parameter, of any tool.
        ("claude", "Read", json!({"file_path": "~/.ss?/id_rsa"})),
        (
            "gemini",
            "read_file",
            json!({"file_path": "{home}/*/credentials"}),
        ),
        ("claude", "mcp__fs__read", json!({"path": "~/.s*/id_rsa"})),
        (
            "gemini",
            "mcp_fs_read",
            json!({"paths": ["a.txt", "{../home/.aws,x}/*"]}),
        ),
        // 4. Patterns in `read_many_files`, and searches above the floor.
        (
            "gemini",
            "read_many_files",
            json!({"paths": ["{home}/.s*/*"]}),
        ),
        (
            "gemini",
            "read_many_files",
            json!({"paths": ["a.txt"], "include": ["../home/.ssh/*"]}),
        ),
        (
            "gemini",
            "read_many_files",
            json!({"paths": ["{a.txt,../home/.ssh/id_rsa}"]}),
        ),
        ("gemini", "read_many_files", json!({"paths": ["~"]})),
        (
            "gemini",
            "read_many_files",
            json!({"paths": ["../home/.ss?"]}),
        ),
        (
            "gemini",
            "grep_search",
            json!({"pattern": "BEGIN", "dir_path": "{home}"}),
        ),
        (
            "gemini",
            "grep_search",
            json!({"pattern": "BEGIN", "dir_path": "/"}),
        ),
        (
            "gemini",
            "search_file_content",
            json!({"pattern": "BEGIN", "path": "~"}),
        ),
        (
            "claude",
            "Grep",
            json!({"pattern": "BEGIN", "path": "{home}"}),
        ),
        (
            "claude",
            "Grep",
            json!({"pattern": "BEGIN", "path": "{root}"}),
        ),
        ("claude", "Grep", json!({"pattern": "BEGIN", "path": ".."})),
        // 5. `apply_patch` inside a shell command.
        (
            "codex",
            "Bash",
            json!({"command": heredoc("", "{home}/.ssh/authorized_keys")}),
        ),
        (
            "codex",
            "Bash",
            json!({"command": heredoc("", "~/.ssh/authorized_keys").replace("apply_patch", "applypatch")}),
        ),
        (
            "codex",
            "Bash",
            json!({"command": format!("bash -lc \"{}\"", heredoc("", "{home}/.ssh/authorized_keys"))}),
        ),
        (
            "codex",
            "Bash",
            json!({"command": heredoc("cd ~/.ssh && ", "authorized_keys")}),
        ),
        (
            "codex",
            "Bash",
            json!({"command": heredoc("cd {home} && ", ".ssh/authorized_keys")}),
        ),
        (
            "codex",
            "Bash",
            json!({"command": heredoc("cd \"$HOME\" && ", ".aws/credentials")}),
        ),
        (
            "codex",
            "Bash",
            json!({"command": "apply_patch $'*** Begin Patch\\n*** Add File: ~/.aws/config\\n+x\\n*** End Patch'"}),
        ),
        (
            "claude",
            "Bash",
            json!({"command": heredoc("", "{home}/.ssh/authorized_keys")}),
        ),
        (
            "gemini",
            "run_shell_command",
            json!({"command": heredoc("", "{home}/.gnupg/gpg.conf")}),
        ),
        (
            "gemini",
            "run_shell_command",
            json!({"command": heredoc("", "authorized_keys"), "dir_path": "{home}/.ssh"}),
        ),
    ]
}

/// The same shapes, touching no floor: allowed under the permissive policy.
fn control_rows() -> Vec<Row> {
    vec![
        (
            "gemini",
            "read_file",
            json!({"file_path": "a.txt", "absolute_path": "{work}/a.txt"}),
        ),
        (
            "claude",
            "Read",
            json!({"file_path": "a.txt", "path": "{work}/a.txt"}),
        ),
        (
            "gemini",
            "run_shell_command",
            json!({"command": "cat a.txt", "directory": "{work}"}),
        ),
        ("claude", "Glob", json!({"pattern": "**/*.rs"})),
        (
            "claude",
            "Glob",
            json!({"pattern": "*.txt", "path": "{home}"}),
        ),
        ("gemini", "glob", json!({"pattern": "{src,docs}/*.md"})),
        (
            "gemini",
            "read_many_files",
            json!({"paths": ["a.txt", "src"]}),
        ),
        (
            "gemini",
            "grep_search",
            json!({"pattern": "x", "dir_path": "{work}"}),
        ),
        ("claude", "Grep", json!({"pattern": "x", "path": "src"})),
        ("claude", "Read", json!({"file_path": "src/*.rs"})),
        ("gemini", "list_directory", json!({"dir_path": "s*"})),
        (
            "codex",
            "Bash",
            json!({"command": heredoc("", "{work}/new.txt")}),
        ),
        (
            "codex",
            "Bash",
            json!({"command": heredoc("cd src && ", "new.txt")}),
        ),
    ]
}

fn fill(env: &Env, v: &Value) -> Value {
    let text = v
        .to_string()
        .replace("{home}", &env.home.to_string_lossy())
        .replace("{work}", &env.work.to_string_lossy())
        .replace("{root}", &env.root.to_string_lossy());
    serde_json::from_str(&text).unwrap()
}

fn setup(policy: &str) -> Env {
    let env = Env::with_policy(policy);
    for (file, text) in [
        (".ssh/id_rsa", "BEGIN SECRET"),
        (".aws/credentials", "SECRET"),
        (".gnupg/gpg.conf", "x"),
    ] {
        let path = env.home.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::create_dir_all(env.work.join("src")).unwrap();
    std::fs::write(env.work.join("a.txt"), "a").unwrap();
    env
}

/// The hook's answer as one word: `allow`, `deny`, `ask`, or `none` for no
/// output (Codex CLI's allow).
fn answer(env: &Env, agent: &str, tool: &str, input: &Value) -> String {
    let payload = match agent {
        "gemini" => env.gemini_payload(tool, input.clone()),
        _ => env.claude_payload("PreToolUse", tool, input.clone()),
    };
    raw_answer(env, agent, &payload.to_string())
}

fn raw_answer(env: &Env, agent: &str, payload: &str) -> String {
    let out = env.hook(agent, payload);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{agent} {payload}: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("SECRET"), "{stdout}");
    if stdout.trim().is_empty() {
        return "none".into();
    }
    let v: Value = serde_json::from_str(stdout.trim()).unwrap();
    let word = match agent {
        "gemini" => &v["decision"],
        _ => &v["hookSpecificOutput"]["permissionDecision"],
    };
    word.as_str().unwrap_or("none").to_string()
}

#[test]
fn every_path_a_call_could_act_on_is_judged_under_a_permissive_policy() {
    let env = setup(PERMISSIVE);
    let mut wrong = Vec::new();
    for (agent, tool, input) in floor_rows() {
        let input = fill(&env, &input);
        let got = answer(&env, agent, tool, &input);
        if got != "deny" {
            wrong.push(format!("{agent} {tool} {input}: {got}, want deny"));
        }
    }
    for (agent, tool, input) in control_rows() {
        let input = fill(&env, &input);
        let want = if agent == "codex" { "none" } else { "allow" };
        let got = answer(&env, agent, tool, &input);
        if got != want {
            wrong.push(format!("{agent} {tool} {input}: {got}, want {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_path_a_call_could_act_on_is_judged_under_the_readonly_preset() {
    let env = setup(PERMISSIVE);
    let preset = env
        .command(&["init", "--print", "--preset", "readonly"])
        .output_within(DEADLINE)
        .unwrap();
    assert!(
        preset.status.success(),
        "{}",
        String::from_utf8_lossy(&preset.stderr)
    );
    env.write_policy(&String::from_utf8_lossy(&preset.stdout));
    let mut wrong = Vec::new();
    for (agent, tool, input) in floor_rows() {
        let input = fill(&env, &input);
        let got = answer(&env, agent, tool, &input);
        if got != "deny" {
            wrong.push(format!("{agent} {tool} {input}: {got}, want deny"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// An agent that ignores a directory parameter works in its `cwd`: with the
/// payload's `cwd` at home, a call that names another directory in a key the
/// agent may not honour is judged at home too, and one in the key it honours
/// only there.
#[test]
fn a_directory_the_agent_may_ignore_leaves_the_call_in_its_cwd() {
    let env = setup(PERMISSIVE);
    let in_home = |agent: &str, tool: &str, input: Value| {
        let mut payload = match agent {
            "gemini" => env.gemini_payload(tool, fill(&env, &input)),
            _ => env.claude_payload("PreToolUse", tool, fill(&env, &input)),
        };
        payload["cwd"] = json!(env.home);
        raw_answer(&env, agent, &payload.to_string())
    };
    let rows: Vec<(&str, &str, Value, &str)> = vec![
        (
            "gemini",
            "run_shell_command",
            json!({"command": "cat .ssh/id_rsa", "directory": "{work}"}),
            "deny",
        ),
        (
            "gemini",
            "run_shell_command",
            json!({"command": "cat .ssh/id_rsa", "workdir": "{work}"}),
            "deny",
        ),
        (
            "claude",
            "Bash",
            json!({"command": "cat .ssh/id_rsa", "dir_path": "{work}"}),
            "deny",
        ),
        (
            "codex",
            "Bash",
            json!({"command": "cat .ssh/id_rsa", "cwd": "{work}"}),
            "deny",
        ),
        (
            "gemini",
            "grep_search",
            json!({"pattern": "BEGIN", "directory": "{work}"}),
            "deny",
        ),
        (
            "gemini",
            "grep_search",
            json!({"pattern": "BEGIN", "path": "{work}"}),
            "deny",
        ),
        (
            "gemini",
            "glob",
            json!({"pattern": ".ssh/*", "directory": "{work}"}),
            "deny",
        ),
        // The key the agent honours: only that directory.
        (
            "gemini",
            "run_shell_command",
            json!({"command": "cat .ssh/id_rsa", "dir_path": "{work}"}),
            "allow",
        ),
        (
            "gemini",
            "grep_search",
            json!({"pattern": "BEGIN", "dir_path": "{work}"}),
            "allow",
        ),
        (
            "claude",
            "Grep",
            json!({"pattern": "BEGIN", "path": "{work}"}),
            "allow",
        ),
    ];
    let mut wrong = Vec::new();
    for (agent, tool, input, want) in rows {
        let got = in_home(agent, tool, input.clone());
        if got != want {
            wrong.push(format!("{agent} {tool} {input}: {got}, want {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The agents' JSON parsers keep the last of duplicate keys; so does sandgate.
#[test]
fn a_duplicate_key_is_judged_as_the_agent_reads_it() {
    let env = setup(PERMISSIVE);
    let home = env.home.to_string_lossy().into_owned();
    let work = env.work.to_string_lossy().into_owned();
    let payload = |first: &str, second: &str| {
        format!(
            r#"{{"session_id": "s", "cwd": "{work}", "hook_event_name": "BeforeTool", "tool_name": "read_file",
               "tool_input": {{"file_path": "{first}", "file_path": "{second}"}}}}"#
        )
    };
    let floor = format!("{home}/.ssh/id_rsa");
    assert_eq!(
        raw_answer(&env, "gemini", &payload("a.txt", &floor)),
        "deny"
    );
    assert_eq!(
        raw_answer(&env, "gemini", &payload(&floor, "a.txt")),
        "allow"
    );
    // The whole `tool_input` twice: the last one is the call.
    let twice = format!(
        r#"{{"cwd": "{work}", "hook_event_name": "PreToolUse", "tool_name": "Read",
           "tool_input": {{"file_path": "a.txt"}}, "tool_input": {{"file_path": "{floor}"}}}}"#
    );
    assert_eq!(raw_answer(&env, "claude", &twice), "deny");
}

/// The audit log names the floor directory a pattern reaches, and why.
#[test]
fn a_pattern_that_reaches_the_floor_is_denied_at_the_floor_directory() {
    let env = setup(PERMISSIVE);
    let input = fill(&env, &json!({"pattern": "../home/.s*/*"}));
    assert_eq!(answer(&env, "claude", "Glob", &input), "deny");
    let log = std::fs::read_to_string(env.audit_log()).unwrap();
    let ssh = env.home.join(".ssh").to_string_lossy().into_owned();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        lines.iter().any(|l| l["tool"] == "file_find"
            && l["subject"] == ssh.as_str()
            && l["verdict"] == "deny"),
        "{lines:?}"
    );
    // Braces beyond what sandgate expands: where the pattern reaches is not
    // known, so the user is asked.
    let many = json!({ "pattern": "{a,b}".repeat(9) });
    assert_eq!(answer(&env, "claude", "Glob", &many), "ask");
    let payload = env.claude_payload(
        "PreToolUse",
        "Grep",
        fill(&env, &json!({"pattern": "x", "path": "{home}"})),
    );
    let out = env.hook("claude", &payload.to_string());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("does not skip the floor"), "{reason}");
}
