//! `sandgate hook install|uninstall`: additive, idempotent, preserving, and
//! refusing malformed files without writing anything.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hook_common;

use hook_common::wait::{Bounded, DEADLINE};
use hook_common::Env;
use serde_json::{json, Value};
use std::os::unix::process::CommandExt;

fn run(env: &Env, args: &[&str]) -> std::process::Output {
    let mut cmd = env.command(args);
    cmd.current_dir(&env.work);
    cmd.output_within(DEADLINE).unwrap()
}

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn sandgate_commands(groups: &Value) -> Vec<String> {
    groups
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|h| h["command"].as_str().map(str::to_string))
        .filter(|c| c.contains("sandgate") && c.contains(" hook "))
        .collect()
}

const CLAUDE_SETTINGS: &str = r#"{
  "model": "opus",
  "permissions": {"allow": ["Bash(git status)"], "deny": []},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/audit-bash.sh"}]}
    ],
    "PostToolUse": [
      {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write"}]}
    ]
  },
  "env": {"FOO": "1"}
}
"#;

#[test]
fn claude_install_is_additive_idempotent_and_uninstall_removes_only_ours() {
    let env = Env::new();
    let file = env.home.join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, CLAUDE_SETTINGS).unwrap();
    let before = read_json(&file);

    let out = run(&env, &["hook", "install", "claude"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = read_json(&file);
    // Every unrelated key and hook is still there, in its order.
    let keys: Vec<&String> = after.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "permissions", "hooks", "env"]);
    assert_eq!(after["permissions"], before["permissions"]);
    assert_eq!(after["env"], before["env"]);
    // The post-tool hook joins the user's, after them.
    let post = after["hooks"]["PostToolUse"].as_array().unwrap();
    assert_eq!(post.len(), 2);
    assert_eq!(post[0], before["hooks"]["PostToolUse"][0]);
    assert_eq!(sandgate_commands(&after["hooks"]["PostToolUse"]).len(), 1);
    assert_eq!(
        sandgate_commands(&after["hooks"]["PostToolUseFailure"]).len(),
        1
    );
    let pre = after["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2);
    assert_eq!(pre[0], before["hooks"]["PreToolUse"][0]);
    // Every tool: sandgate decides itself what is outside its scope.
    assert_eq!(pre[1]["matcher"], "*");
    let command = pre[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(command.ends_with("sandgate hook claude"), "{command}");

    // Idempotent: a second install writes nothing.
    let text = std::fs::read_to_string(&file).unwrap();
    let out = run(&env, &["hook", "install", "claude", "--user"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("already installed"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);

    // The installed command really is the hook.
    let payload = env.claude_payload("PreToolUse", "Bash", json!({"command": "git status"}));
    let parts: Vec<&str> = command.rsplitn(3, ' ').collect();
    let program = parts[2];
    let mut child = std::process::Command::new(program);
    child
        .args(["hook", "claude"])
        .env("HOME", &env.home)
        .env("SANDGATE_AUDIT", "off")
        .env("SANDGATE_MANAGED_CONFIG", env.root.join("none"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = child.process_group(0).spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let out = hook_common::wait::finish(child, 60, "the installed hook");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "allow");

    // Uninstall removes only sandgate's entry: back to the original content.
    let out = run(&env, &["hook", "uninstall", "claude"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(read_json(&file), before);
    let out = run(&env, &["hook", "uninstall", "claude"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to remove"));
}

#[test]
fn a_stale_entry_is_updated_not_duplicated() {
    let env = Env::new();
    let file = env.work.join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        r#"{"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/old/place/sandgate hook claude"},
                                          {"type": "command", "command": "other-hook"}]}
        ]}}"#,
    )
    .unwrap();
    let out = run(&env, &["hook", "install", "claude", "--project"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = read_json(&file);
    let groups = &after["hooks"]["PreToolUse"];
    assert_eq!(sandgate_commands(groups).len(), 1, "{after}");
    assert_eq!(
        groups[0]["hooks"],
        json!([{"type": "command", "command": "other-hook"}])
    );
    assert!(
        !env.home.join(".claude/settings.json").exists(),
        "--project leaves the user file alone"
    );
}

#[test]
fn a_malformed_file_is_refused_and_left_untouched() {
    let env = Env::new();
    let file = env.home.join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    for text in [
        "{ \"hooks\": [1, 2,, }",
        "[1, 2]",
        "{\"hooks\": []}",
        "{\"hooks\": {\"PreToolUse\": {}}}",
    ] {
        std::fs::write(&file, text).unwrap();
        let out = run(&env, &["hook", "install", "claude"]);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("settings.json") && err.contains("nothing was written"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    }
}

#[test]
fn gemini_install_goes_under_before_tool() {
    let env = Env::new();
    let file = env.home.join(".gemini/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, r#"{"theme": "GitHub", "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "lint.sh"}]}]}}"#).unwrap();
    let out = run(&env, &["hook", "install", "gemini"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = read_json(&file);
    assert_eq!(after["theme"], "GitHub");
    let groups = after["hooks"]["BeforeTool"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[1]["hooks"][0]["name"], "sandgate");
    assert_eq!(groups[1]["matcher"], "*");
    run(&env, &["hook", "uninstall", "gemini"]);
    assert_eq!(
        read_json(&file)["hooks"]["BeforeTool"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn codex_uses_hooks_json_or_the_hooks_table_of_config_toml() {
    let env = Env::new();
    // No `[hooks]` in config.toml: hooks.json, created.
    let dir = env.home.join(".codex");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "model = \"o4\"\n").unwrap();
    let out = run(&env, &["hook", "install", "codex"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hooks = read_json(&dir.join("hooks.json"));
    assert_eq!(sandgate_commands(&hooks["hooks"]["PreToolUse"]).len(), 1);
    assert_eq!(
        std::fs::read_to_string(dir.join("config.toml")).unwrap(),
        "model = \"o4\"\n"
    );
    run(&env, &["hook", "uninstall", "codex"]);
    assert_eq!(read_json(&dir.join("hooks.json")), json!({}));

    // A config.toml with hooks keeps them there, comments and all.
    let project = env.work.join(".codex");
    std::fs::create_dir_all(&project).unwrap();
    let toml = "# my codex config\nmodel = \"o4\"\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"audit.sh\" # keep me\n";
    std::fs::write(project.join("config.toml"), toml).unwrap();
    let out = run(&env, &["hook", "install", "codex", "--project"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(project.join("config.toml")).unwrap();
    assert!(
        text.starts_with(toml),
        "the original text stays as written:\n{text}"
    );
    assert!(text.contains("sandgate hook codex"), "{text}");
    assert!(!project.join("hooks.json").exists());
    let again = run(&env, &["hook", "install", "codex", "--project"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("already installed"));
    assert_eq!(
        std::fs::read_to_string(project.join("config.toml")).unwrap(),
        text
    );
    run(&env, &["hook", "uninstall", "codex", "--project"]);
    assert_eq!(
        std::fs::read_to_string(project.join("config.toml")).unwrap(),
        toml
    );

    std::fs::write(project.join("config.toml"), "[hooks\nbroken").unwrap();
    let out = run(&env, &["hook", "install", "codex", "--project"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a broken config.toml has no `[hooks]`: hooks.json is used"
    );
}

/// Gemini CLI reads settings.json with `//` comments: install keeps them, and
/// every byte of the rest; uninstall gives the original back byte for byte.
#[test]
fn comments_and_layout_are_kept_and_a_backup_is_written() {
    let env = Env::new();
    let file = env.home.join(".gemini/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let original = "{\n  // the model I use\n  \"model\": {\"name\": \"gemini-2.5-pro\"},\n\n  \"hooks\": {\n    \"AfterTool\": [ {\"matcher\": \"x\", \"hooks\": [{\"type\": \"command\", \"command\": \"echo\"}]} ] // after\n  },\n  \"ui\": {\"theme\": \"dark\"}\n}\n";
    std::fs::write(&file, original).unwrap();
    let out = run(&env, &["hook", "install", "gemini"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("{\n  // the model I use\n  \"model\": {\"name\": \"gemini-2.5-pro\"},\n\n  \"hooks\": {\n    \"AfterTool\": [ {\"matcher\": \"x\""), "{text}");
    assert!(
        text.contains("// after") && text.ends_with("  \"ui\": {\"theme\": \"dark\"}\n}\n"),
        "{text}"
    );
    assert!(
        text.contains("\"BeforeTool\"") && text.contains("sandgate hook gemini"),
        "{text}"
    );
    let backup = env.home.join(".gemini/settings.json.sandgate.bak");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);
    assert!(String::from_utf8_lossy(&out.stdout).contains("settings.json.sandgate.bak"));

    let out = run(&env, &["hook", "uninstall", "gemini"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

/// A project install writes a command a teammate can run (`sandgate` from
/// PATH), and says when the agent will ignore the folder's settings.
#[test]
fn a_project_install_is_portable_and_warns_about_untrusted_folders() {
    for agent in ["claude", "gemini", "codex"] {
        let env = Env::new();
        let out = run(&env, &["hook", "install", agent, "--project"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = env.work.join(format!(".{agent}"));
        let file = if agent == "codex" {
            dir.join("hooks.json")
        } else {
            dir.join("settings.json")
        };
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains(&format!("\"command\": \"sandgate hook {agent}\"")),
            "{text}"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("not trust") || err.contains("not trusted"),
            "{agent}: {err}"
        );
        let status = run(&env, &["hook", "status", agent, "--project"]);
        assert_eq!(status.status.code(), Some(1), "{agent}: untrusted folder");
        let report = String::from_utf8_lossy(&status.stdout);
        assert!(report.contains("would run: no"), "{report}");
    }

    // Once the folder is trusted, the warning goes.
    let env = Env::new();
    let work = env.work.to_string_lossy().into_owned();
    std::fs::write(
        env.home.join(".claude.json"),
        serde_json::to_string(
            &json!({"projects": {work.clone(): {"hasTrustDialogAccepted": true}}}),
        )
        .unwrap(),
    )
    .unwrap();
    std::fs::create_dir_all(env.home.join(".gemini")).unwrap();
    std::fs::write(
        env.home.join(".gemini/trustedFolders.json"),
        serde_json::to_string(&json!({ work: "TRUST_FOLDER" })).unwrap(),
    )
    .unwrap();
    for agent in ["claude", "gemini"] {
        let out = run(&env, &["hook", "install", agent, "--project"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("not trust"), "{agent}: {err}");
    }
}

/// The Codex CLI binary, found as the real-agent tests find it
/// (`crates/sandgate/tests/agents_common`): `$SANDGATE_CODEX_BIN`, or the pinned
/// version of `.ci/agents.txt` under `$SANDGATE_AGENTS_DIR` (default
/// `/opt/sandgate-agents`).
fn codex_binary() -> Option<std::path::PathBuf> {
    if let Some(bin) = std::env::var_os("SANDGATE_CODEX_BIN").filter(|b| !b.is_empty()) {
        return Some(bin.into());
    }
    let dir = std::env::var_os("SANDGATE_AGENTS_DIR")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/opt/sandgate-agents".into());
    let pins = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/agents.txt"),
    )
    .ok()?;
    let version = pins.lines().find_map(|l| {
        let mut words = l.split_whitespace();
        (words.next() == Some("@openai/codex"))
            .then(|| words.next())
            .flatten()
            .map(str::to_string)
    })?;
    let bin = dir
        .join(format!("codex-{version}"))
        .join("node_modules/.bin/codex");
    bin.exists().then_some(bin)
}

/// What the real `codex app-server` reports for the hooks it finds (`hooks/list`).
fn codex_hooks_list(
    codex: &std::path::Path,
    codex_home: &std::path::Path,
    cwd: &std::path::Path,
) -> Vec<Value> {
    use std::io::Write;
    let mut child = hook_common::wait::Guard::spawn(
        std::process::Command::new(codex)
            .arg("app-server")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", codex_home.parent().unwrap())
            .env("CODEX_HOME", codex_home)
            .current_dir(cwd)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null()),
    );
    let mut stdin = child.stdin.take().unwrap();
    let stdout = hook_common::wait::Lines::new(child.stdout.take().unwrap());
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "sandgate-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [cwd]}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut hooks = None;
    for _ in 0..50 {
        let Some(line) = stdout.next_within(60, "codex app-server") else {
            break;
        };
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if v["id"] == 2 {
            hooks = Some(
                v["result"]["data"][0]["hooks"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default(),
            );
            break;
        }
    }
    drop(child);
    hooks.expect("codex app-server answered hooks/list")
}

/// `--trust` writes the trust Codex CLI itself computes, for exactly
/// sandgate's entries; uninstall takes it out again and keeps the user's
/// other hooks trusted; a reinstall never duplicates.
#[test]
fn codex_trust_is_what_the_real_codex_computes() {
    let Some(codex) = codex_binary() else {
        hook_common::ci::skip(
            "Codex CLI is missing: run .ci/install-agents (npm @openai/codex at the pinned \
             version) or set SANDGATE_CODEX_BIN",
        );
        return;
    };
    let env = Env::new();
    let codex_home = env.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    // The user's own hook, first, and trusted.
    std::fs::write(
        codex_home.join("hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/audit.sh"}]}]}}"#,
    )
    .unwrap();
    let list = codex_hooks_list(&codex, &codex_home, &env.work);
    let theirs = list
        .iter()
        .find(|h| h["command"] == "/usr/local/bin/audit.sh")
        .unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"m\"\n\n[hooks.state.\"{}\"]\ntrusted_hash = \"{}\"\n",
            theirs["key"].as_str().unwrap(),
            theirs["currentHash"].as_str().unwrap()
        ),
    )
    .unwrap();

    let mut cmd = env.command(&["hook", "install", "codex"]);
    cmd.env("CODEX_HOME", &codex_home).current_dir(&env.work);
    let out = cmd.output_within(DEADLINE).unwrap();
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("Codex CLI runs a hook only once it is trusted"));
    let list = codex_hooks_list(&codex, &codex_home, &env.work);
    let ours: Vec<&Value> = list
        .iter()
        .filter(|h| {
            h["command"]
                .as_str()
                .unwrap()
                .ends_with("sandgate hook codex")
        })
        .collect();
    assert_eq!(ours.len(), 3, "{list:?}");
    assert!(ours
        .iter()
        .all(|h| h["trustStatus"] == "untrusted" && h["matcher"] == "*"));

    let mut cmd = env.command(&["hook", "install", "codex", "--trust"]);
    cmd.env("CODEX_HOME", &codex_home).current_dir(&env.work);
    let out = cmd.output_within(DEADLINE).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = codex_hooks_list(&codex, &codex_home, &env.work);
    for h in &list {
        assert_eq!(h["trustStatus"], "trusted", "{h}");
    }
    let events: Vec<&str> = list
        .iter()
        .filter(|h| {
            h["command"]
                .as_str()
                .unwrap()
                .ends_with("sandgate hook codex")
        })
        .map(|h| h["eventName"].as_str().unwrap())
        .collect();
    assert_eq!(events.len(), 3, "{events:?}");
    let mut status = env.command(&["hook", "status", "codex"]);
    status.env("CODEX_HOME", &codex_home).current_dir(&env.work);
    let status = status.output_within(DEADLINE).unwrap();
    assert_eq!(
        status.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&status.stdout)
    );

    // A reinstall changes nothing and adds nothing.
    let config = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    let hooks = std::fs::read_to_string(codex_home.join("hooks.json")).unwrap();
    let mut cmd = env.command(&["hook", "install", "codex", "--trust"]);
    cmd.env("CODEX_HOME", &codex_home).current_dir(&env.work);
    cmd.output_within(DEADLINE).unwrap();
    assert_eq!(
        std::fs::read_to_string(codex_home.join("config.toml")).unwrap(),
        config
    );
    assert_eq!(
        std::fs::read_to_string(codex_home.join("hooks.json")).unwrap(),
        hooks
    );

    // Uninstall: sandgate's entries and their trust go; the user's hook stays trusted.
    let mut cmd = env.command(&["hook", "uninstall", "codex"]);
    cmd.env("CODEX_HOME", &codex_home).current_dir(&env.work);
    let out = cmd.output_within(DEADLINE).unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("removed Codex CLI's trust"));
    let list = codex_hooks_list(&codex, &codex_home, &env.work);
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["trustStatus"], "trusted");
    let config = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    assert!(
        !config.contains("pre_tool_use:1:0") && !config.contains("permission_request"),
        "{config}"
    );
}

/// Sandgate placed first and the user's hook after it: uninstall moves the
/// user's trust to its new position.
#[test]
fn codex_uninstall_renumbers_the_trust_of_hooks_after_sandgates() {
    let env = Env::new();
    let codex_home = env.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let dir = std::fs::canonicalize(&codex_home).unwrap();
    let src = dir.join("hooks.json");
    std::fs::write(
        &src,
        r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "sandgate hook codex"}]}, {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}]}}"#,
    )
    .unwrap();
    let key = |g: usize| format!("{}:pre_tool_use:{g}:0", src.display());
    std::fs::write(
        codex_home.join("config.toml"),
        format!("[hooks.state.\"{}\"]\ntrusted_hash = \"sha256:ours\"\n\n[hooks.state.\"{}\"]\ntrusted_hash = \"sha256:theirs\"\n", key(0), key(1)),
    )
    .unwrap();
    let mut cmd = env.command(&["hook", "uninstall", "codex"]);
    cmd.env("CODEX_HOME", &codex_home).current_dir(&env.work);
    let out = cmd.output_within(DEADLINE).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    let doc: toml_edit::DocumentMut = config.parse().unwrap();
    let state = doc["hooks"]["state"].as_table_like().unwrap();
    assert_eq!(state.len(), 1, "{config}");
    assert_eq!(
        state.get(&key(0)).unwrap()["trusted_hash"].as_str(),
        Some("sha256:theirs"),
        "{config}"
    );
    let hooks = read_json(&src);
    assert_eq!(hooks["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
}
