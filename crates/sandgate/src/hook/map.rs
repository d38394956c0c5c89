//! From an agent's tool call to the sandgate tool calls that gate it.
//!
//! Each agent names its tools and their parameters in its own way; this module
//! turns them into `file_*` / `exec_run` calls so the audit log and the reasons
//! speak of reading, writing, listing or running. The tables below are the one
//! list of agent tools sandgate knows. The hook is installed for every tool, so
//! it also sees tools that are not in the tables: one that carries a path-like
//! parameter is gated as a read and a write of that path (a renamed or new file
//! tool fails closed), and one without is out of scope.

use serde_json::{json, Map, Value};

use sandgate_policy::ToolCall;

use super::InputError;

/// One sandgate call that gates (part of) an agent tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The call the policy judges.
    pub call: ToolCall,
    /// The working directory the call runs in, when it is not the payload's
    /// `cwd` (Gemini CLI's `run_shell_command` `dir_path`); relative to `cwd`
    /// when relative.
    pub cwd: Option<String>,
    /// The agent's tool name, when sandgate does not know the tool and gates it
    /// by its path-like parameter.
    pub unknown_tool: Option<String>,
}

/// What sandgate thinks of an agent tool.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    /// Not one of the tools sandgate gates: the agent's own rules apply.
    OutOfScope,
    /// Gated by these calls; the strictest of their verdicts wins.
    Calls(Vec<Check>),
}

/// How an agent tool's input becomes sandgate calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A shell command in `command`; `dir` names the parameter holding its
    /// working directory, if the tool has one.
    Exec {
        /// The working-directory parameter.
        dir: Option<&'static str>,
    },
    /// A file tool: `tool` on the first of `keys` present, which is required.
    File {
        /// The sandgate tool.
        tool: &'static str,
        /// The parameter names, in order of preference.
        keys: &'static [&'static str],
    },
    /// A tool on a directory: the first of `keys`, or the payload's `cwd`; an
    /// absolute glob `pattern` is judged too, from its literal directory.
    Dir {
        /// The sandgate tool.
        tool: &'static str,
        /// The parameter names, in order of preference.
        keys: &'static [&'static str],
    },
    /// Codex CLI's `apply_patch`: every file the patch adds, updates, deletes or moves to.
    Patch,
    /// Gemini CLI's `read_many_files`: each of `paths` and `include`.
    ReadMany,
}

/// One agent tool sandgate knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentTool {
    /// The agent's tool name.
    pub name: &'static str,
    /// How its input is read.
    pub shape: Shape,
}

const fn tool(name: &'static str, shape: Shape) -> AgentTool {
    AgentTool { name, shape }
}

const fn file(tool: &'static str, keys: &'static [&'static str]) -> Shape {
    Shape::File { tool, keys }
}

const fn dir(tool: &'static str, keys: &'static [&'static str]) -> Shape {
    Shape::Dir { tool, keys }
}

/// Claude Code's and Codex CLI's tools (Codex sends `Bash` for its shell and
/// `apply_patch` for its file edits).
pub const CLAUDE_TOOLS: &[AgentTool] = &[
    tool("Bash", Shape::Exec { dir: None }),
    tool("Read", file("file_read", &["file_path"])),
    tool("Write", file("file_write", &["file_path"])),
    tool("Edit", file("file_edit", &["file_path"])),
    tool("MultiEdit", file("file_edit", &["file_path"])),
    tool("NotebookEdit", file("file_edit", &["notebook_path"])),
    tool("NotebookRead", file("file_read", &["notebook_path"])),
    tool("Glob", dir("file_find", &["path"])),
    tool("Grep", dir("file_grep", &["path"])),
    tool("LS", dir("file_list", &["path"])),
    tool("apply_patch", Shape::Patch),
];

/// Gemini CLI has renamed some parameters between releases
/// (`absolute_path` → `file_path`, `path` → `dir_path`); both spellings are read.
const GEMINI_FILE: &[&str] = &["file_path", "absolute_path", "path"];
const GEMINI_DIR: &[&str] = &["dir_path", "path", "directory"];

/// Gemini CLI's tools (`grep_search` was `search_file_content`; both are gated).
pub const GEMINI_TOOLS: &[AgentTool] = &[
    tool(
        "run_shell_command",
        Shape::Exec {
            dir: Some("dir_path"),
        },
    ),
    tool("read_file", file("file_read", GEMINI_FILE)),
    tool("write_file", file("file_write", GEMINI_FILE)),
    tool("replace", file("file_edit", GEMINI_FILE)),
    tool("glob", dir("file_find", GEMINI_DIR)),
    tool("grep_search", dir("file_grep", GEMINI_DIR)),
    tool("search_file_content", dir("file_grep", GEMINI_DIR)),
    tool("list_directory", dir("file_list", GEMINI_DIR)),
    tool("read_many_files", Shape::ReadMany),
];

/// The parameters that make an unknown tool a file access.
pub const PATH_PARAMS: &[&str] = &[
    "file_path",
    "path",
    "absolute_path",
    "dir_path",
    "notebook_path",
    "paths",
];

/// Map a Claude Code / Codex CLI tool call. `cwd` is the payload's working directory.
pub fn claude(tool: &str, input: &Map<String, Value>, cwd: &str) -> Result<Gate, InputError> {
    map(CLAUDE_TOOLS, tool, input, cwd)
}

/// Map a Gemini CLI tool call.
pub fn gemini(tool: &str, input: &Map<String, Value>, cwd: &str) -> Result<Gate, InputError> {
    map(GEMINI_TOOLS, tool, input, cwd)
}

fn map(
    table: &[AgentTool],
    tool: &str,
    input: &Map<String, Value>,
    cwd: &str,
) -> Result<Gate, InputError> {
    let Some(known) = table.iter().find(|t| t.name == tool) else {
        return unknown(tool, input);
    };
    let checks = match known.shape {
        Shape::Exec { dir } => {
            let call = exec(tool, input, "command")?;
            let cwd = match dir {
                Some(key) => optional_string(tool, input, key)?.filter(|d| !d.is_empty()),
                None => None,
            };
            vec![Check {
                call,
                cwd,
                unknown_tool: None,
            }]
        }
        Shape::File { tool: t, keys } => vec![plain(file_call(t, first_path(tool, input, keys)?))],
        Shape::Dir { tool: t, keys } => {
            let mut checks = vec![plain(file_call(t, optional_path(tool, input, keys, cwd)?))];
            if let Some(prefix) = optional_string(tool, input, "pattern")?
                .as_deref()
                .and_then(absolute_glob_dir)
            {
                checks.push(plain(file_call(t, prefix)));
            }
            checks
        }
        Shape::Patch => patch(tool, input)?,
        Shape::ReadMany => read_many(tool, input)?,
    };
    Ok(Gate::Calls(checks))
}

fn plain(call: ToolCall) -> Check {
    Check {
        call,
        cwd: None,
        unknown_tool: None,
    }
}

/// A tool sandgate does not know: gated by its path-like parameters, as a read
/// and a write of each, or out of scope when it has none.
fn unknown(tool: &str, input: &Map<String, Value>) -> Result<Gate, InputError> {
    let mut paths = Vec::new();
    for key in PATH_PARAMS {
        match input.get(*key) {
            None | Some(Value::Null) => {}
            Some(Value::String(p)) => paths.push(p.clone()),
            Some(Value::Array(items)) => {
                for item in items {
                    match item {
                        Value::String(p) => paths.push(p.clone()),
                        _ => {
                            return Err(InputError::new(format!(
                                "`{tool}` carries `tool_input.{key}` with an item that is not a string, \
                                 so the paths it touches cannot be checked"
                            )))
                        }
                    }
                }
            }
            Some(_) => {
                return Err(InputError::new(format!(
                    "`{tool}` carries `tool_input.{key}` that is not a string, \
                     so the path it touches cannot be checked"
                )))
            }
        }
    }
    if paths.is_empty() {
        return Ok(Gate::OutOfScope);
    }
    let mut checks = Vec::new();
    for path in paths {
        for t in ["file_read", "file_write"] {
            checks.push(Check {
                call: file_call(t, path.clone()),
                cwd: None,
                unknown_tool: Some(tool.to_string()),
            });
        }
    }
    Ok(Gate::Calls(checks))
}

/// The files a Codex CLI patch touches: `*** Add File: P` and `*** Delete File: P`
/// write P, `*** Update File: P` edits it, `*** Move to: P` writes P.
///
/// The patch grammar is Codex CLI's own; no crate parses it, and sandgate only
/// needs the file headers, which Codex reads with surrounding whitespace
/// trimmed.
pub fn patch_files(text: &str) -> Vec<(&'static str, String)> {
    let mut files = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        for (prefix, t) in [
            ("*** Add File:", "file_write"),
            ("*** Delete File:", "file_write"),
            ("*** Update File:", "file_edit"),
            ("*** Move to:", "file_write"),
        ] {
            if let Some(path) = line.strip_prefix(prefix) {
                files.push((t, path.trim().to_string()));
            }
        }
    }
    files
}

fn patch(tool: &str, input: &Map<String, Value>) -> Result<Vec<Check>, InputError> {
    let text = ["command", "input", "patch"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .ok_or_else(|| {
            InputError::new(format!(
                "`{tool}` has no patch text in `tool_input.command`"
            ))
        })?;
    let files = patch_files(text);
    if files.is_empty() {
        return Err(InputError::new(format!(
            "`{tool}`'s patch names no file (no `*** Add File:`, `*** Update File:`, \
             `*** Delete File:` or `*** Move to:` line), so what it changes cannot be checked"
        )));
    }
    if files.iter().any(|(_, p)| p.is_empty()) {
        return Err(InputError::new(format!(
            "`{tool}`'s patch has a file header with no path"
        )));
    }
    Ok(files
        .into_iter()
        .map(|(t, p)| plain(file_call(t, p)))
        .collect())
}

/// The directory an absolute (or `~`) glob pattern starts from: its longest
/// prefix of whole path components without a glob character.
fn absolute_glob_dir(pattern: &str) -> Option<String> {
    if !(pattern.starts_with('/') || pattern.starts_with('~')) {
        return None;
    }
    let mut prefix = Vec::new();
    for part in pattern.split('/') {
        if part.contains(['*', '?', '[', '{']) {
            break;
        }
        prefix.push(part);
    }
    let joined = prefix.join("/");
    Some(if joined.is_empty() {
        "/".to_string()
    } else {
        joined
    })
}

/// `read_many_files` names several paths (or glob patterns) in `paths`, and
/// more in `include`; each one is a read.
fn read_many(tool: &str, input: &Map<String, Value>) -> Result<Vec<Check>, InputError> {
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
                    calls.push(plain(file_call("file_read", path.clone())));
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
    Ok(calls)
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

fn file_call(tool: &str, path: String) -> ToolCall {
    ToolCall::new(tool, json!({ "path": path }))
}

fn optional_string(
    tool: &str,
    input: &Map<String, Value>,
    key: &str,
) -> Result<Option<String>, InputError> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(InputError::new(format!(
            "`{tool}` needs `tool_input.{key}` to be a string"
        ))),
    }
}

/// The first of `keys` present; one of them must be.
fn first_path(tool: &str, input: &Map<String, Value>, keys: &[&str]) -> Result<String, InputError> {
    for key in keys {
        if let Some(path) = optional_string(tool, input, key)? {
            return Ok(path);
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
    for key in keys {
        if let Some(path) = optional_string(tool, input, key)? {
            if !path.is_empty() {
                return Ok(path);
            }
        }
    }
    Ok(cwd.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn calls(gate: Gate) -> Vec<Check> {
        match gate {
            Gate::Calls(calls) => calls,
            other => panic!("expected calls, got {other:?}"),
        }
    }

    fn one(gate: Gate) -> ToolCall {
        let mut c = calls(gate);
        assert_eq!(c.len(), 1, "{c:?}");
        c.remove(0).call
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
        for out in ["WebFetch", "mcp__x__y", "TodoWrite"] {
            assert_eq!(
                claude(out, &input(json!({"url": "https://x", "todos": []})), "/w").unwrap(),
                Gate::OutOfScope
            );
        }
    }

    #[test]
    fn an_absolute_glob_pattern_is_judged_from_its_directory() {
        let c = calls(claude("Glob", &input(json!({"pattern": "/home/u/.ssh/*"})), "/w").unwrap());
        let paths: Vec<_> = c.iter().map(|c| c.call.params["path"].clone()).collect();
        assert_eq!(paths, [json!("/w"), json!("/home/u/.ssh")]);
        let c = calls(gemini("glob", &input(json!({"pattern": "~/.aws/**"})), "/w").unwrap());
        assert_eq!(c[1].call.params["path"], "~/.aws");
        assert_eq!(absolute_glob_dir("/**").as_deref(), Some("/"));
        assert_eq!(absolute_glob_dir("src/*.rs"), None);
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert!(claude("Bash", &input(json!({"command": 3})), "/w").is_err());
        assert!(claude("Bash", &Map::new(), "/w").is_err());
        assert!(claude("Read", &input(json!({"path": "/a"})), "/w").is_err());
        assert!(claude("Grep", &input(json!({"path": 3})), "/w").is_err());
        assert!(gemini("read_many_files", &input(json!({"paths": [1]})), "/w").is_err());
        assert!(gemini("read_many_files", &Map::new(), "/w").is_err());
        assert!(gemini(
            "run_shell_command",
            &input(json!({"command": "ls", "dir_path": 1})),
            "/w"
        )
        .is_err());
        assert!(claude("SomeNewTool", &input(json!({"path": 1})), "/w").is_err());
        assert!(claude("SomeNewTool", &input(json!({"paths": ["a", 2]})), "/w").is_err());
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
                "grep_search",
                json!({"pattern": "x", "dir_path": "/g"}),
                "file_grep",
                "path",
                "/g",
            ),
            (
                "grep_search",
                json!({"pattern": "x"}),
                "file_grep",
                "path",
                "/w",
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
        let c = calls(
            gemini(
                "read_many_files",
                &input(json!({"paths": ["a", "b"]})),
                "/w",
            )
            .unwrap(),
        );
        assert_eq!(c.len(), 2);
        assert_eq!(
            gemini("web_fetch", &input(json!({"prompt": "x"})), "/w").unwrap(),
            Gate::OutOfScope
        );
    }

    #[test]
    fn a_shell_command_runs_in_its_dir_path() {
        let c = calls(
            gemini(
                "run_shell_command",
                &input(json!({"command": "echo k > authorized_keys", "dir_path": "~/.ssh"})),
                "/w",
            )
            .unwrap(),
        );
        assert_eq!(c[0].cwd.as_deref(), Some("~/.ssh"));
        let c = calls(
            gemini(
                "run_shell_command",
                &input(json!({"command": "ls", "dir_path": ""})),
                "/w",
            )
            .unwrap(),
        );
        assert_eq!(c[0].cwd, None);
    }

    #[test]
    fn an_unknown_tool_with_a_path_is_a_read_and_a_write_of_it() {
        for key in PATH_PARAMS {
            let value = if *key == "paths" {
                json!(["/x"])
            } else {
                json!("/x")
            };
            let c = calls(claude("FutureTool", &input(json!({ *key: value })), "/w").unwrap());
            let tools: Vec<_> = c.iter().map(|c| c.call.tool.as_str()).collect();
            assert_eq!(tools, ["file_read", "file_write"], "{key}");
            assert!(c.iter().all(|c| c.call.params["path"] == "/x"));
            assert_eq!(c[0].unknown_tool.as_deref(), Some("FutureTool"));
        }
        let c = calls(gemini("mcp_fs_read", &input(json!({"path": "/y"})), "/w").unwrap());
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn a_patch_is_judged_by_every_file_it_names() {
        // As Codex CLI 0.171.0 sends it (captured from the real agent).
        let text = "*** Begin Patch\n*** Add File: /h/.ssh/authorized_keys\n+ssh-ed25519 AAAA\n\
                    *** Update File: src/a.rs\n*** Move to: /tmp/b.rs\n@@\n-x\n+y\n\
                    *** Delete File: old.txt\n  *** Add File:  spaced.txt  \n*** End Patch\n";
        let c = calls(claude("apply_patch", &input(json!({"command": text})), "/w").unwrap());
        let got: Vec<(String, String)> = c
            .iter()
            .map(|c| {
                (
                    c.call.tool.clone(),
                    c.call.params["path"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let want = [
            ("file_write", "/h/.ssh/authorized_keys"),
            ("file_edit", "src/a.rs"),
            ("file_write", "/tmp/b.rs"),
            ("file_write", "old.txt"),
            ("file_write", "spaced.txt"),
        ];
        assert_eq!(
            got,
            want.map(|(a, b)| (a.to_string(), b.to_string())).to_vec()
        );
        for bad in [
            json!({"command": "*** Begin Patch\n*** End Patch\n"}),
            json!({"command": "*** Begin Patch\n*** Add File: \n*** End Patch\n"}),
            json!({}),
        ] {
            assert!(
                claude("apply_patch", &input(bad.clone()), "/w").is_err(),
                "{bad}"
            );
        }
    }
}
