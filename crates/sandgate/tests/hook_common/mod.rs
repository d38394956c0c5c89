//! Shared by the `hook_*` tests: a temporary home with a policy, and a way to
//! run the real `sandgate hook …` binary against it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

#[path = "../../../../tests/support/ci.rs"]
pub mod ci;
#[path = "../../../../tests/support/wait.rs"]
pub mod wait;

/// A temporary root: `home/` (with `.sandgate/permissions.yaml`), `work/` (the
/// agent's CWD), `secret/` (denied) and `other/` (no rule: ask).
pub struct Env {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub work: PathBuf,
}

/// Run `cmd` with `payload` on stdin, collecting its output. A hook that
/// fails before it reads stdin closes the pipe: that is an answer too,
/// judged by its exit code and output.
pub fn run_with_stdin(cmd: &mut std::process::Command, payload: &str) -> Output {
    use wait::{Bounded, DEADLINE};
    cmd.output_with_stdin_within(payload.as_bytes(), DEADLINE)
        .unwrap()
}

/// The test policy; `{root}` stands for the root.
pub const POLICY: &str = r#"permissions:
  paths:
    deny: ["{root}/secret/**"]
    allow: ["{root}/work/**"]
  commands:
    deny: ["^rm -rf", "\\|\\s*sh\\b"]
    allow: ["^git status$", "^ls( |$)", "^cat "]
"#;

impl Env {
    pub fn new() -> Env {
        Env::with_policy(POLICY)
    }

    pub fn with_policy(policy: &str) -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let work = root.join("work");
        for d in [&home, &work, &root.join("secret"), &root.join("other")] {
            std::fs::create_dir_all(d).unwrap();
        }
        let env = Env {
            _tmp: tmp,
            root,
            home,
            work,
        };
        env.write_policy(policy);
        env
    }

    pub fn write_policy(&self, policy: &str) {
        let file = self.home.join(".sandgate/permissions.yaml");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, policy.replace("{root}", &self.root.to_string_lossy())).unwrap();
    }

    pub fn audit_log(&self) -> PathBuf {
        self.root.join("audit.jsonl")
    }

    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sandgate"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("SANDGATE_MANAGED_CONFIG", self.root.join("no-managed.yaml"))
            .env("SANDGATE_AUDIT_LOG", self.audit_log())
            .env("SANDGATE_CACHE_DIR", self.root.join("cache"))
            .env("NO_COLOR", "1")
            .current_dir(&self.root)
            .args(args);
        cmd
    }

    /// Run `sandgate hook AGENT` with `payload` on stdin.
    pub fn hook(&self, agent: &str, payload: &str) -> Output {
        run_with_stdin(&mut self.command(&["hook", agent]), payload)
    }

    /// A Claude Code / Codex CLI payload as those agents send it.
    pub fn claude_payload(&self, event: &str, tool: &str, input: Value) -> Value {
        let mut p = json!({
            "session_id": "3f1c2d7e-0b7a-4c55-9d1e-2f6b8a9c0d11",
            "transcript_path": self.root.join("transcript.jsonl"),
            "cwd": self.work,
            "permission_mode": "default",
            "model": "gpt-5-codex",
            "hook_event_name": event,
            "tool_name": tool,
            "tool_input": input,
        });
        if event == "PreToolUse" {
            p["tool_use_id"] = json!("toolu_01ABCDEF");
        } else {
            p["turn_id"] = json!("turn-7");
        }
        p
    }

    /// A Gemini CLI BeforeTool payload.
    pub fn gemini_payload(&self, tool: &str, input: Value) -> Value {
        json!({
            "session_id": "b2c3",
            "transcript_path": self.root.join("t.json"),
            "cwd": self.work,
            "hook_event_name": "BeforeTool",
            "timestamp": "2026-11-29T22:00:00.000Z",
            "tool_name": tool,
            "tool_input": input,
        })
    }
}

/// The schema files: the repository's copy (checked against `../shared` when that exists).
pub fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/codex-hooks")
}

pub fn schema(name: &str) -> Value {
    let text = std::fs::read_to_string(schema_dir().join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Stdout as JSON (it must be one JSON document).
pub fn stdout_json(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {text:?}"))
}
