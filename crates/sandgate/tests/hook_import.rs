//! `sandgate import claude`: the printed YAML is a policy sandgate loads, and
//! it decides as the Claude Code rules did; what cannot be converted is listed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hook_common;

use hook_common::wait::{Bounded, DEADLINE};
use hook_common::Env;
use serde_json::json;

const SETTINGS: &str = r#"{
  "permissions": {
    "allow": ["Bash(git status)", "Bash(npm run test:*)", "Edit(/src/**)", "Edit(./docs/**)", "Read(~/notes/**)"],
    "ask": ["Bash(git push:*)"],
    "deny": ["Bash(rm -rf:*)", "Read(//etc/shadow)", "Read(~/.zshrc)", "Edit(.env)", "WebFetch(domain:example.com)"]
  }
}"#;

#[test]
fn import_prints_a_loadable_policy_and_lists_what_it_skipped() {
    let env = Env::new();
    let settings = env.work.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, SETTINGS).unwrap();
    let out = env
        .command(&["import", "claude"])
        .current_dir(&env.work)
        .output_within(DEADLINE)
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let yaml = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for skipped in ["Bash(git push:*)", "WebFetch(domain:example.com)"] {
        assert!(stderr.contains(skipped), "{skipped} is listed: {stderr}");
    }
    assert!(!stderr.contains("Read(~/notes/**)"), "{stderr}");
    assert!(stderr.contains("2 rule(s) not converted"), "{stderr}");

    let policy = env.root.join("imported.yaml");
    std::fs::write(&policy, &yaml).unwrap();
    let check = |request: serde_json::Value| {
        let out = env
            .command(&[
                "check",
                "--json",
                "--config",
                policy.to_str().unwrap(),
                &request.to_string(),
            ])
            .current_dir(&env.work)
            .output_within(DEADLINE)
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{yaml}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["verdict"].as_str().unwrap().to_string()
    };
    let exec = |c: &str| json!({"tool": "exec_run", "params": {"command": c}});
    let edit = |p: String| json!({"tool": "file_edit", "params": {"path": p}});
    assert_eq!(check(exec("git status")), "allow");
    assert_eq!(check(exec("git status --short")), "ask");
    assert_eq!(check(exec("npm run test")), "allow");
    assert_eq!(check(exec("npm run test -- --watch")), "allow");
    assert_eq!(check(exec("rm -rf build")), "deny");
    assert_eq!(check(exec("git push origin main")), "ask");
    // `/src/**` is relative to the settings file's directory.
    let claude_dir = env.work.join(".claude");
    assert_eq!(
        check(edit(claude_dir.join("src/a.rs").to_string_lossy().into())),
        "allow"
    );
    assert_eq!(check(edit("docs/guide.md".into())), "allow");
    assert_eq!(
        check(edit("sub/dir/.env".into())),
        "deny",
        "a name without `/` matches at any depth"
    );
    assert_eq!(
        check(json!({"tool": "file_read", "params": {"path": "/etc/shadow"}})),
        "deny"
    );
    assert_eq!(
        check(json!({"tool": "file_read", "params": {"path": "~/.zshrc"}})),
        "deny"
    );
    // `Read(~/notes/**)` allows reading there, not writing; `Edit(./docs/**)`
    // allows writing, not reading; each deny keeps its access too.
    let read = |p: &str| json!({"tool": "file_read", "params": {"path": p}});
    let write = |p: &str| json!({"tool": "file_write", "params": {"path": p}});
    assert_eq!(check(read("~/notes/todo.md")), "allow");
    assert_eq!(check(write("~/notes/todo.md")), "ask");
    assert_eq!(check(read("docs/guide.md")), "ask");
    assert_eq!(check(write("docs/guide.md")), "allow");
    assert_eq!(check(write("/etc/shadow")), "ask");
    assert_eq!(check(read("sub/dir/.env")), "ask");

    let out = env
        .command(&["import", "claude", "--json", settings.to_str().unwrap()])
        .output_within(DEADLINE)
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["skipped"].as_array().unwrap().len(), 2);
    assert_eq!(v["yaml"], yaml);
}

#[test]
fn import_refuses_a_file_without_permissions() {
    let env = Env::new();
    let settings = env.root.join("s.json");
    for (text, needle) in [
        ("{\"model\": \"x\"}", "no `permissions`"),
        ("{oops", "not valid JSON"),
    ] {
        std::fs::write(&settings, text).unwrap();
        let out = env
            .command(&["import", "claude", settings.to_str().unwrap()])
            .output_within(DEADLINE)
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains(needle));
    }
}
