//! `sandgate hook install|uninstall`: additive, idempotent, preserving, and
//! refusing malformed files without writing anything.

mod hook_common;

use hook_common::Env;
use serde_json::{json, Value};

fn run(env: &Env, args: &[&str]) -> std::process::Output {
    let mut cmd = env.command(args);
    cmd.current_dir(&env.work);
    cmd.output().unwrap()
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
    assert_eq!(
        after["hooks"]["PostToolUse"],
        before["hooks"]["PostToolUse"]
    );
    let pre = after["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2);
    assert_eq!(pre[0], before["hooks"]["PreToolUse"][0]);
    let matcher = pre[1]["matcher"].as_str().unwrap();
    for tool in [
        "Bash",
        "Read",
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "Glob",
        "Grep",
        "LS",
    ] {
        assert!(
            matcher.split('|').any(|m| m == tool),
            "matcher covers {tool}: {matcher}"
        );
    }
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
    let mut child = child.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
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
    let matcher = groups[1]["matcher"].as_str().unwrap();
    for tool in [
        "run_shell_command",
        "read_file",
        "write_file",
        "replace",
        "glob",
        "search_file_content",
        "list_directory",
        "read_many_files",
    ] {
        assert!(matcher.split('|').any(|m| m == tool), "{matcher}");
    }
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
