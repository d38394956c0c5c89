//! From an agent's tool call to the sandgate tool calls that gate it.
//!
//! Each agent names its tools and their parameters in its own way; this module
//! turns them into `file_*` / `exec_run` calls so the audit log and the reasons
//! speak of reading, writing, listing or running.

use serde_json::{json, Map, Value};

use sandgate_policy::ToolCall;

use super::InputError;

/// What sandgate thinks of an agent tool.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    /// Not one of the tools sandgate gates: the agent's own rules apply.
    OutOfScope,
    /// Gated by these calls; the strictest of their verdicts wins.
    Calls(Vec<ToolCall>),
}

/// Claude Code (and Codex CLI) tool names that sandgate gates, for the settings matcher.
pub const CLAUDE_TOOLS: &[&str] = &[
    "Bash",
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "Glob",
    "Grep",
    "LS",
];

/// Gemini CLI tool names that sandgate gates, for the settings matcher.
pub const GEMINI_TOOLS: &[&str] = &[
    "run_shell_command",
    "read_file",
    "write_file",
    "replace",
    "glob",
    "search_file_content",
    "list_directory",
    "read_many_files",
];

/// Map a Claude Code / Codex CLI tool call. `cwd` is the payload's working directory.
pub fn claude(tool: &str, input: &Map<String, Value>, cwd: &str) -> Result<Gate, InputError> {
    let call = match tool {
        "Bash" => exec(tool, input, "command")?,
        "Read" => file("file_read", required_path(tool, input, "file_path")?),
        "Write" => file("file_write", required_path(tool, input, "file_path")?),
        "Edit" | "MultiEdit" => file("file_edit", required_path(tool, input, "file_path")?),
        "NotebookEdit" => file("file_edit", required_path(tool, input, "notebook_path")?),
        "Glob" => file("file_find", optional_path(tool, input, &["path"], cwd)?),
        "Grep" => file("file_grep", optional_path(tool, input, &["path"], cwd)?),
        "LS" => file("file_list", optional_path(tool, input, &["path"], cwd)?),
        _ => return Ok(Gate::OutOfScope),
    };
    Ok(Gate::Calls(vec![call]))
}

/// Map a Gemini CLI tool call. Gemini CLI has renamed some parameters between
/// releases (`absolute_path` → `file_path`, `path` → `dir_path`); both spellings
/// are read.
pub fn gemini(tool: &str, input: &Map<String, Value>, cwd: &str) -> Result<Gate, InputError> {
    const FILE: &[&str] = &["file_path", "absolute_path", "path"];
    const DIR: &[&str] = &["dir_path", "path", "directory"];
    let call = match tool {
        "run_shell_command" => exec(tool, input, "command")?,
        "read_file" => file("file_read", first_path(tool, input, FILE)?),
        "write_file" => file("file_write", first_path(tool, input, FILE)?),
        "replace" => file("file_edit", first_path(tool, input, FILE)?),
        "glob" => file("file_find", optional_path(tool, input, DIR, cwd)?),
        "search_file_content" => file("file_grep", optional_path(tool, input, DIR, cwd)?),
        "list_directory" => file("file_list", optional_path(tool, input, DIR, cwd)?),
        "read_many_files" => return read_many(tool, input),
        _ => return Ok(Gate::OutOfScope),
    };
    Ok(Gate::Calls(vec![call]))
}

/// `read_many_files` names several paths (or glob patterns) in `paths`, and
/// more in `include`; each one is a read.
fn read_many(tool: &str, input: &Map<String, Value>) -> Result<Gate, InputError> {
    let mut calls = Vec::new();
    for key in ["paths", "include"] {
        match input.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for item in items {
                    let Value::String(path) = item else {
                        return Err(InputError::new(format!(
                            "`{tool}` needs every item of `tool_input.{key}` to be a string"
                        )));
                    };
                    calls.push(file("file_read", path.clone()));
                }
            }
            Some(_) => {
                return Err(InputError::new(format!(
                    "`{tool}` needs `tool_input.{key}` to be an array of strings"
                )))
            }
        }
    }
    if calls.is_empty() {
        return Err(InputError::new(format!(
            "`{tool}` names no path in `tool_input.paths`"
        )));
    }
    Ok(Gate::Calls(calls))
}

fn exec(tool: &str, input: &Map<String, Value>, key: &str) -> Result<ToolCall, InputError> {
    match input.get(key) {
        Some(Value::String(command)) => {
            Ok(ToolCall::new("exec_run", json!({ "command": command })))
        }
        Some(_) => Err(InputError::new(format!(
            "`{tool}` needs `tool_input.{key}` to be a string"
        ))),
        None => Err(InputError::new(format!(
            "`{tool}` has no `tool_input.{key}`"
        ))),
    }
}

fn file(tool: &str, path: String) -> ToolCall {
    ToolCall::new(tool, json!({ "path": path }))
}

fn required_path(tool: &str, input: &Map<String, Value>, key: &str) -> Result<String, InputError> {
    first_path(tool, input, &[key])
}

/// The first of `keys` present; one of them must be.
fn first_path(tool: &str, input: &Map<String, Value>, keys: &[&str]) -> Result<String, InputError> {
    for key in keys {
        match input.get(*key) {
            Some(Value::String(path)) => return Ok(path.clone()),
            Some(Value::Null) | None => {}
            Some(_) => {
                return Err(InputError::new(format!(
                    "`{tool}` needs `tool_input.{key}` to be a string"
                )))
            }
        }
    }
    Err(InputError::new(format!(
        "`{tool}` has no `tool_input.{}`",
        keys.join("` or `tool_input.")
    )))
}

/// The first of `keys` present, or the working directory when none is.
fn optional_path(
    tool: &str,
    input: &Map<String, Value>,
    keys: &[&str],
    cwd: &str,
) -> Result<String, InputError> {
    match first_path(tool, input, keys) {
        Ok(path) if !path.is_empty() => Ok(path),
        Ok(_) => Ok(cwd.to_string()),
        Err(_)
            if keys
                .iter()
                .all(|k| matches!(input.get(*k), None | Some(Value::Null))) =>
        {
            Ok(cwd.to_string())
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn one(gate: Gate) -> ToolCall {
        match gate {
            Gate::Calls(mut calls) if calls.len() == 1 => calls.remove(0),
            other => panic!("expected one call, got {other:?}"),
        }
    }

    #[test]
    fn claude_tools_map_to_sandgate_tools() {
        let cases = [
            (
                "Bash",
                json!({"command": "ls"}),
                "exec_run",
                "command",
                "ls",
            ),
            (
                "Read",
                json!({"file_path": "/a"}),
                "file_read",
                "path",
                "/a",
            ),
            (
                "Write",
                json!({"file_path": "b", "content": "x"}),
                "file_write",
                "path",
                "b",
            ),
            (
                "Edit",
                json!({"file_path": "/c"}),
                "file_edit",
                "path",
                "/c",
            ),
            (
                "MultiEdit",
                json!({"file_path": "/d", "edits": []}),
                "file_edit",
                "path",
                "/d",
            ),
            (
                "NotebookEdit",
                json!({"notebook_path": "/n.ipynb"}),
                "file_edit",
                "path",
                "/n.ipynb",
            ),
            (
                "Glob",
                json!({"pattern": "*.rs"}),
                "file_find",
                "path",
                "/w",
            ),
            (
                "Glob",
                json!({"pattern": "*.rs", "path": "/g"}),
                "file_find",
                "path",
                "/g",
            ),
            ("Grep", json!({"pattern": "x"}), "file_grep", "path", "/w"),
            ("LS", json!({"path": "/l"}), "file_list", "path", "/l"),
        ];
        for (tool, inp, want_tool, key, want) in cases {
            let call = one(claude(tool, &input(inp), "/w").unwrap());
            assert_eq!(call.tool, want_tool, "{tool}");
            assert_eq!(call.params[key], want, "{tool}");
        }
        assert_eq!(
            claude("WebFetch", &Map::new(), "/w").unwrap(),
            Gate::OutOfScope
        );
        assert_eq!(
            claude("mcp__x__y", &Map::new(), "/w").unwrap(),
            Gate::OutOfScope
        );
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert!(claude("Bash", &input(json!({"command": 3})), "/w").is_err());
        assert!(claude("Bash", &Map::new(), "/w").is_err());
        assert!(claude("Read", &input(json!({"path": "/a"})), "/w").is_err());
        assert!(claude("Grep", &input(json!({"path": 3})), "/w").is_err());
        assert!(gemini("read_many_files", &input(json!({"paths": [1]})), "/w").is_err());
        assert!(gemini("read_many_files", &Map::new(), "/w").is_err());
    }

    #[test]
    fn gemini_tools_map_to_sandgate_tools() {
        let cases = [
            (
                "run_shell_command",
                json!({"command": "ls"}),
                "exec_run",
                "command",
                "ls",
            ),
            (
                "read_file",
                json!({"absolute_path": "/a"}),
                "file_read",
                "path",
                "/a",
            ),
            (
                "read_file",
                json!({"file_path": "/a2"}),
                "file_read",
                "path",
                "/a2",
            ),
            (
                "write_file",
                json!({"file_path": "/b"}),
                "file_write",
                "path",
                "/b",
            ),
            (
                "replace",
                json!({"file_path": "/c"}),
                "file_edit",
                "path",
                "/c",
            ),
            ("glob", json!({"pattern": "*"}), "file_find", "path", "/w"),
            (
                "search_file_content",
                json!({"pattern": "x", "dir_path": "/s"}),
                "file_grep",
                "path",
                "/s",
            ),
            (
                "list_directory",
                json!({"path": "/l"}),
                "file_list",
                "path",
                "/l",
            ),
        ];
        for (tool, inp, want_tool, key, want) in cases {
            let call = one(gemini(tool, &input(inp), "/w").unwrap());
            assert_eq!(call.tool, want_tool, "{tool}");
            assert_eq!(call.params[key], want, "{tool}");
        }
        let Gate::Calls(calls) = gemini(
            "read_many_files",
            &input(json!({"paths": ["a", "b"]})),
            "/w",
        )
        .unwrap() else {
            panic!("read_many_files is gated")
        };
        assert_eq!(calls.len(), 2);
        assert_eq!(
            gemini("web_fetch", &Map::new(), "/w").unwrap(),
            Gate::OutOfScope
        );
    }
}
