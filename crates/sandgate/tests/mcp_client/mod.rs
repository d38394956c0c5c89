//! Runs the Python MCP SDK scripts in this directory (`client.py`,
//! `race.py`) with a JSON plan, and returns what they print.

#![allow(dead_code)]

use super::wait::{Bounded, DEADLINE};

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// `python3 tests/mcp_client/SCRIPT PLAN`; the script must succeed and print
/// one JSON document, which is returned.
pub fn run(script: &str, plan: &Value) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp_client")
        .join(script);
    let out = Command::new("python3")
        .arg(&path)
        .arg(plan.to_string())
        .output_within(DEADLINE)
        .unwrap_or_else(|e| panic!("python3 {}: {e}", path.display()));
    assert!(
        out.status.success(),
        "{script} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{script} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}
