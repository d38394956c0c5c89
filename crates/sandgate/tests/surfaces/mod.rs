//! Shared by the tables run against every surface of the gate
//! (`floor_table.rs`, `credential_table.rs`): the `sandgate` binary in a
//! throwaway home, a request on its standard input, and an agent's hook
//! payload. A test that uses it declares `run_common` too (its deadline
//! wait).

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `sandgate` with nothing of the runner's environment but `PATH`: `home` as
/// `HOME`, its audit log, cache and (absent) managed file under `root`, no
/// terminal prompt, run in `dir`.
pub fn sandgate(root: &Path, home: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SANDGATE_MANAGED_CONFIG", root.join("no-managed.yaml"))
        .env("SANDGATE_AUDIT_LOG", root.join("audit.jsonl"))
        .env("SANDGATE_CACHE_DIR", root.join("cache"))
        .env("SANDGATE_NO_UI", "1")
        .env("NO_COLOR", "1")
        .current_dir(dir);
    cmd
}

/// Runs `cmd` with `input` on its standard input, within a deadline.
pub fn run_with_stdin(mut cmd: Command, input: &str) -> Output {
    use super::run_common::wait::{Bounded, DEADLINE};
    cmd.output_with_stdin_within(input.as_bytes(), DEADLINE)
        .unwrap()
}

/// The payload `agent`'s hook receives before `tool` runs with `input` in
/// `cwd` (Codex CLI sends Claude Code's).
pub fn hook_payload(agent: &str, root: &Path, cwd: &Path, tool: &str, input: Value) -> Value {
    if agent == "gemini" {
        json!({
            "session_id": "s", "transcript_path": root.join("t.json"), "cwd": cwd,
            "hook_event_name": "BeforeTool", "timestamp": "2026-11-29T22:00:00.000Z",
            "tool_name": tool, "tool_input": input,
        })
    } else {
        json!({
            "session_id": "s", "transcript_path": root.join("t.jsonl"), "cwd": cwd,
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_1",
        })
    }
}
