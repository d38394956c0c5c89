//! From an agent's tool call to the sandgate tool calls that gate it.
//!
//! Each agent names its tools and their parameters in its own way; this module
//! turns them into `file_*` / `exec_run` calls so the audit log and the reasons
//! speak of reading, writing, listing or running. The tables below are the one
//! list of agent tools sandgate knows. The hook is installed for every tool, so
//! it also sees tools that are not in the tables: one that carries a path-like
//! parameter is gated as a read and a write of that path (a renamed or new file
//! tool fails closed), and one without is out of scope.
//!
//! A call is judged on every parameter its agent could take a path from, not
//! only on the one the table names first: the agents have renamed parameters
//! between releases and may honour an old name beside the new one, so each
//! path-like parameter present is judged and the strictest verdict wins.
//! Duplicate keys in the payload's JSON keep the last value, as the agents'
//! own JSON parsers do.

use serde_json::{json, Map, Value};

use sandgate_policy::ToolCall;

use super::patch::{patch_files, shell_patch_files, ShellPatch};
use super::{pattern, InputError};

/// One sandgate call that gates (part of) an agent tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The call the policy judges.
    pub call: ToolCall,
    /// The working directory the call runs in, when it is not the payload's
    /// `cwd` (a shell tool's `dir_path`, `directory`, …); relative to `cwd`
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
    /// A shell command in `command`, judged in every working directory the
    /// input names ([`EXEC_DIR_PARAMS`]), and in the payload's `cwd` unless
    /// `dir`, the one the agent honours, names another; the files of an
    /// `apply_patch` heredoc in it are judged as writes.
    Exec {
        /// The working-directory parameter the agent honours, if any.
        dir: Option<&'static str>,
    },
    /// A file tool: `tool` on each of `keys` and [`PATH_PARAMS`] present; one
    /// of `keys` is required.
    File {
        /// The sandgate tool.
        tool: &'static str,
        /// The tool's own parameter names.
        keys: &'static [&'static str],
    },
    /// A tool on a directory: each of `keys` and [`PATH_PARAMS`] present, and
    /// the payload's `cwd` unless the first of `keys`, the one the agent
    /// honours, names another (the agent would ignore the others and work in
    /// `cwd`). With `glob`, that parameter is a glob pattern relative to each
    /// directory, judged where it could reach.
    Dir {
        /// The sandgate tool.
        tool: &'static str,
        /// The tool's own parameter names.
        keys: &'static [&'static str],
        /// The parameter that holds a glob pattern, if the tool has one.
        glob: Option<&'static str>,
    },
    /// Codex CLI's `apply_patch`: every file the patch adds, updates, deletes or moves to.
    Patch,
    /// Gemini CLI's `read_many_files`: each of `paths` and `include`, each a
    /// pattern that reads what it matches, and a directory all below it.
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
    Shape::Dir {
        tool,
        keys,
        glob: None,
    }
}

const fn glob(tool: &'static str, keys: &'static [&'static str]) -> Shape {
    Shape::Dir {
        tool,
        keys,
        glob: Some("pattern"),
    }
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
    tool("Glob", glob("file_find", &["path"])),
    tool("Grep", dir("file_grep", &["path"])),
    tool("LS", dir("file_list", &["path"])),
    tool("apply_patch", Shape::Patch),
];

/// Gemini CLI has renamed some parameters between releases
/// (`absolute_path` → `file_path`, `path` and `directory` → `dir_path`); every
/// spelling is read.
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
    tool("glob", glob("file_find", GEMINI_DIR)),
    tool("grep_search", dir("file_grep", GEMINI_DIR)),
    tool("search_file_content", dir("file_grep", GEMINI_DIR)),
    tool("list_directory", dir("file_list", GEMINI_DIR)),
    tool("read_many_files", Shape::ReadMany),
];

/// The parameters an agent's tool may take a path from, in any agent or
/// release. Each one present is judged for a known tool, and one present
/// makes an unknown tool a file access.
pub const PATH_PARAMS: &[&str] = &[
    "file_path",
    "path",
    "absolute_path",
    "dir_path",
    "directory",
    "notebook_path",
    "paths",
];

/// The parameters a shell tool may take its working directory from (Gemini
/// CLI's `dir_path`, formerly `directory`; Codex CLI's `workdir`). The command
/// is judged in each one present.
pub const EXEC_DIR_PARAMS: &[&str] = &["dir_path", "directory", "workdir", "cwd", "path"];

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
        Shape::Exec { dir } => exec_checks(tool, input, dir)?,
        Shape::File { tool: t, keys } => {
            first_path(tool, input, keys)?;
            path_values(tool, input, &[keys, PATH_PARAMS])?
                .into_iter()
                .map(|p| plain(file_call(t, p)))
                .collect()
        }
        Shape::Dir {
            tool: t,
            keys,
            glob,
        } => {
            let mut dirs: Vec<String> = Vec::new();
            if !names_dir(input, keys.first().copied()) {
                dirs.push(cwd.to_string());
            }
            dirs.extend(
                path_values(tool, input, &[keys, PATH_PARAMS])?
                    .into_iter()
                    .filter(|d| !d.is_empty()),
            );
            let mut checks: Vec<Check> = dirs
                .iter()
                .map(|d| plain(file_call(t, d.clone())))
                .collect();
            // A directory given as a pattern: the tool acts on what is in
            // each directory it matches.
            for d in dirs.iter().filter(|d| pattern::has_glob(d)) {
                checks.push(plain(file_call(
                    t,
                    format!("{}/*", d.trim_end_matches('/')),
                )));
            }
            if let Some(key) = glob {
                if let Some(pattern) = optional_string(tool, input, key)?.filter(|p| !p.is_empty())
                {
                    for d in &dirs {
                        for p in patterns_in(d, &pattern) {
                            checks.push(plain(file_call(t, p)));
                        }
                    }
                }
            }
            checks
        }
        Shape::Patch => {
            let mut checks = patch(tool, input)?;
            for p in path_values(tool, input, &[PATH_PARAMS])? {
                checks.push(plain(file_call("file_write", p)));
            }
            checks
        }
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

/// A pattern as the agent resolves it, one path per brace alternative (an
/// alternative may be absolute where the pattern is not): relative to `dir`,
/// unless it is absolute or starts at the home directory. Beyond
/// [`pattern::MAX_ALTERNATIVES`] the pattern stays whole, and the gate asks.
fn patterns_in(dir: &str, pattern: &str) -> Vec<String> {
    let Some(alternatives) = pattern::brace_expand(pattern) else {
        return vec![format!("{}/{pattern}", dir.trim_end_matches('/'))];
    };
    alternatives
        .into_iter()
        .map(|alt| {
            if alt.starts_with('/') || alt == "~" || alt.starts_with("~/") {
                alt
            } else {
                format!("{}/{alt}", dir.trim_end_matches('/'))
            }
        })
        .collect()
}

/// Every path-like parameter of `keys` present: a string, or an array of
/// strings; any other value is an error. Each parameter is read once.
fn path_values(
    tool: &str,
    input: &Map<String, Value>,
    keys: &[&[&str]],
) -> Result<Vec<String>, InputError> {
    let mut seen: Vec<&str> = Vec::new();
    let mut paths = Vec::new();
    for key in keys.iter().flat_map(|k| k.iter()) {
        if seen.contains(key) {
            continue;
        }
        seen.push(key);
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
    Ok(paths)
}

/// Whether the parameter `key` names a directory (a non-empty string).
fn names_dir(input: &Map<String, Value>, key: Option<&str>) -> bool {
    key.and_then(|k| input.get(k))
        .and_then(Value::as_str)
        .is_some_and(|d| !d.is_empty())
}

/// A shell command, judged in each working directory the input names, and
/// in the payload's `cwd` (`None`) unless `honoured` names another; and the
/// files of an `apply_patch` in it.
fn exec_checks(
    tool: &str,
    input: &Map<String, Value>,
    honoured: Option<&str>,
) -> Result<Vec<Check>, InputError> {
    let call = exec(tool, input, "command")?;
    let mut dirs: Vec<Option<String>> = Vec::new();
    if !names_dir(input, honoured) {
        dirs.push(None);
    }
    dirs.extend(
        path_values(tool, input, &[EXEC_DIR_PARAMS])?
            .into_iter()
            .filter(|d| !d.is_empty())
            .map(Some),
    );
    let command = call.str_param("command").unwrap_or_default().to_string();
    let mut checks: Vec<Check> = dirs
        .iter()
        .map(|dir| Check {
            call: call.clone(),
            cwd: dir.clone(),
            unknown_tool: None,
        })
        .collect();
    if let Some(ShellPatch { files, cd_dirs }) = shell_patch_files(&command) {
        for dir in &dirs {
            for (t, path) in &files {
                let mut targets = vec![path.clone()];
                if !(path.starts_with('/') || path.starts_with('~')) {
                    targets.extend(cd_dirs.iter().map(|cd| format!("{cd}/{path}")));
                }
                for target in targets {
                    checks.push(Check {
                        call: file_call(t, target),
                        cwd: dir.clone(),
                        unknown_tool: None,
                    });
                }
            }
        }
    }
    Ok(checks)
}

/// A tool sandgate does not know: gated by its path-like parameters, as a read
/// and a write of each, or out of scope when it has none.
fn unknown(tool: &str, input: &Map<String, Value>) -> Result<Gate, InputError> {
    let paths = path_values(tool, input, &[PATH_PARAMS])?;
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

/// `read_many_files` names several paths or glob patterns in `paths`, and
/// more in `include`, relative to the payload's `cwd`; each one is a read,
/// and a directory among them is read all the way down (Gemini CLI expands
/// it to `DIR/**`), so that pattern is judged too.
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
                    if !path.is_empty() {
                        calls.push(plain(file_call(
                            "file_read",
                            format!("{}/**", path.trim_end_matches('/')),
                        )));
                    }
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
    let others: Vec<&str> = PATH_PARAMS
        .iter()
        .copied()
        .filter(|k| *k != "paths")
        .collect();
    for p in path_values(tool, input, &[&others])? {
        calls.push(plain(file_call("file_read", p)));
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
            // The first call is the tool's own; a `Glob` pattern adds more.
            let call = calls(claude(tool, &input(inp), "/w").unwrap())
                .remove(0)
                .call;
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
    fn a_glob_pattern_is_judged_from_each_directory_and_each_brace_alternative() {
        let paths = |gate: Gate| -> Vec<String> {
            calls(gate)
                .iter()
                .map(|c| c.call.params["path"].as_str().unwrap().to_string())
                .collect()
        };
        let c = |tool: &str, v: Value| paths(claude(tool, &input(v), "/w").unwrap());
        let g = |tool: &str, v: Value| paths(gemini(tool, &input(v), "/w").unwrap());
        assert_eq!(
            c("Glob", json!({"pattern": "/home/u/.ssh/*"})),
            ["/w", "/home/u/.ssh/*"]
        );
        assert_eq!(
            c("Glob", json!({"pattern": "../h/.ssh/*"})),
            ["/w", "/w/../h/.ssh/*"]
        );
        assert_eq!(
            c("Glob", json!({"pattern": "{/h/.ssh,src}/*", "path": "/p/"})),
            ["/p/", "/h/.ssh/*", "/p/src/*"]
        );
        assert_eq!(
            g("glob", json!({"pattern": "~/.aws/**"})),
            ["/w", "~/.aws/**"]
        );
        assert_eq!(
            g(
                "glob",
                json!({"pattern": "*.rs", "dir_path": "a", "path": "b"})
            ),
            ["a", "b", "a/*.rs", "b/*.rs"]
        );
        // A directory given as a pattern: what is in each match.
        assert_eq!(
            g("list_directory", json!({"dir_path": "~/.s*"})),
            ["~/.s*", "~/.s*/*"]
        );
        assert_eq!(c("Grep", json!({"pattern": "x", "path": "/h/"})), ["/h/"]);
        // A search's `pattern` is a regex, not a path.
        assert_eq!(c("Grep", json!({"pattern": "/h/.ssh/*"})), ["/w"]);
        assert_eq!(g("grep_search", json!({"pattern": "{a,b}"})), ["/w"]);
        // Too many alternatives: the pattern stays whole, and the gate asks.
        let many = "{a,b}".repeat(9);
        assert_eq!(
            c("Glob", json!({ "pattern": many })),
            ["/w".to_string(), format!("/w/{many}")]
        );
    }

    /// (agent, tool, input, every (sandgate tool, path) judged).
    #[test]
    fn every_path_parameter_present_is_judged() {
        type Row = (
            &'static str,
            &'static str,
            Value,
            &'static [(&'static str, &'static str)],
        );
        let rows: Vec<Row> = vec![
            (
                "gemini",
                "read_file",
                json!({"file_path": "a.txt", "absolute_path": "/h/.ssh/id_rsa"}),
                &[("file_read", "a.txt"), ("file_read", "/h/.ssh/id_rsa")],
            ),
            (
                "gemini",
                "read_file",
                json!({"absolute_path": "a.txt", "path": "~/.aws/credentials"}),
                &[("file_read", "a.txt"), ("file_read", "~/.aws/credentials")],
            ),
            (
                "gemini",
                "write_file",
                json!({"file_path": "b", "directory": "~/.ssh"}),
                &[("file_write", "b"), ("file_write", "~/.ssh")],
            ),
            (
                "gemini",
                "replace",
                json!({"file_path": "c", "paths": ["~/.gnupg/x", "d"]}),
                &[
                    ("file_edit", "c"),
                    ("file_edit", "~/.gnupg/x"),
                    ("file_edit", "d"),
                ],
            ),
            (
                "claude",
                "Read",
                json!({"file_path": "a", "path": "~/.ssh/id_rsa", "notebook_path": "n"}),
                &[
                    ("file_read", "a"),
                    ("file_read", "~/.ssh/id_rsa"),
                    ("file_read", "n"),
                ],
            ),
            (
                "claude",
                "Write",
                json!({"file_path": "a", "absolute_path": "/h/.ssh/authorized_keys"}),
                &[
                    ("file_write", "a"),
                    ("file_write", "/h/.ssh/authorized_keys"),
                ],
            ),
            (
                "claude",
                "NotebookEdit",
                json!({"notebook_path": "n.ipynb", "file_path": "/h/.aws/x"}),
                &[("file_edit", "n.ipynb"), ("file_edit", "/h/.aws/x")],
            ),
            (
                "claude",
                "LS",
                json!({"path": "/p", "dir_path": "~/.ssh"}),
                &[("file_list", "/p"), ("file_list", "~/.ssh")],
            ),
            (
                "gemini",
                "list_directory",
                json!({"dir_path": "", "path": "~/.ssh"}),
                &[("file_list", "/w"), ("file_list", "~/.ssh")],
            ),
            (
                "gemini",
                "grep_search",
                json!({"pattern": "x", "directory": "/q"}),
                &[("file_grep", "/w"), ("file_grep", "/q")],
            ),
            (
                "gemini",
                "grep_search",
                json!({"pattern": "x", "dir_path": "/p", "directory": "/q"}),
                &[("file_grep", "/p"), ("file_grep", "/q")],
            ),
            (
                "claude",
                "apply_patch",
                json!({"command": "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n", "path": "~/.ssh/k"}),
                &[("file_write", "a"), ("file_write", "~/.ssh/k")],
            ),
            (
                "claude",
                "FutureTool",
                json!({"directory": "~/.ssh"}),
                &[("file_read", "~/.ssh"), ("file_write", "~/.ssh")],
            ),
        ];
        for (agent, tool, inp, want) in rows {
            let gate = if agent == "claude" {
                claude(tool, &input(inp.clone()), "/w")
            } else {
                gemini(tool, &input(inp.clone()), "/w")
            };
            let got: Vec<(String, String)> = calls(gate.unwrap())
                .iter()
                .map(|c| {
                    (
                        c.call.tool.clone(),
                        c.call.params["path"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(t, p)| (t.to_string(), p.to_string()))
                .collect();
            assert_eq!(got, want, "{agent} {tool} {inp}");
        }
    }

    #[test]
    fn duplicate_keys_keep_the_last_value_as_the_agents_parsers_do() {
        let text = r#"{"file_path": "/h/.ssh/id_rsa", "file_path": "a.txt"}"#;
        let first: Map<String, Value> = serde_json::from_str(text).unwrap();
        assert_eq!(
            one(gemini("read_file", &first, "/w").unwrap()).params["path"],
            "a.txt"
        );
        let text = r#"{"file_path": "a.txt", "file_path": "/h/.ssh/id_rsa"}"#;
        let last: Map<String, Value> = serde_json::from_str(text).unwrap();
        assert_eq!(
            one(gemini("read_file", &last, "/w").unwrap()).params["path"],
            "/h/.ssh/id_rsa"
        );
    }

    /// (input, the working directories the command is judged in).
    #[test]
    fn a_shell_command_is_judged_in_every_directory_its_input_names() {
        // (input, the directories for Gemini CLI, which honours `dir_path`,
        // and for Claude Code, whose `Bash` always runs in `cwd` (`None`)).
        type Row = (Value, Vec<Option<&'static str>>, Vec<Option<&'static str>>);
        let rows: Vec<Row> = vec![
            (json!({"command": "ls"}), vec![None], vec![None]),
            (
                json!({"command": "ls", "dir_path": ""}),
                vec![None],
                vec![None],
            ),
            (
                json!({"command": "ls", "dir_path": "~/.ssh"}),
                vec![Some("~/.ssh")],
                vec![None, Some("~/.ssh")],
            ),
            (
                json!({"command": "ls", "directory": "/h"}),
                vec![None, Some("/h")],
                vec![None, Some("/h")],
            ),
            (
                json!({"command": "ls", "dir_path": "/p", "directory": "/h"}),
                vec![Some("/p"), Some("/h")],
                vec![None, Some("/p"), Some("/h")],
            ),
            (
                json!({"command": "ls", "workdir": "/h"}),
                vec![None, Some("/h")],
                vec![None, Some("/h")],
            ),
            (
                json!({"command": "ls", "cwd": "/h", "path": "/i"}),
                vec![None, Some("/h"), Some("/i")],
                vec![None, Some("/h"), Some("/i")],
            ),
        ];
        for (inp, gemini_dirs, claude_dirs) in rows {
            for (gate, want) in [
                (
                    gemini("run_shell_command", &input(inp.clone()), "/w"),
                    gemini_dirs,
                ),
                (claude("Bash", &input(inp.clone()), "/w"), claude_dirs),
            ] {
                let got: Vec<Option<String>> =
                    calls(gate.unwrap()).into_iter().map(|c| c.cwd).collect();
                let want: Vec<Option<String>> =
                    want.iter().map(|d| d.map(str::to_string)).collect();
                assert_eq!(got, want, "{inp}");
            }
        }
    }

    /// (command, the files judged as written or edited).
    #[test]
    fn an_apply_patch_inside_a_shell_command_is_judged_by_its_files() {
        let add = "*** Begin Patch\n*** Add File: /h/.ssh/authorized_keys\n+k\n*** End Patch\n";
        let rows: Vec<(String, Vec<(&str, &str)>)> = vec![
            (
                format!("apply_patch <<'EOF'\n{add}EOF\n"),
                vec![("file_write", "/h/.ssh/authorized_keys")],
            ),
            (
                format!("applypatch <<'EOF'\n{add}EOF"),
                vec![("file_write", "/h/.ssh/authorized_keys")],
            ),
            (
                format!("bash -lc \"apply_patch <<'EOF'\n{add}EOF\n\""),
                vec![("file_write", "/h/.ssh/authorized_keys")],
            ),
            (
                "cd ~/.ssh && apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: config\n@@\n-a\n+b\n*** End Patch\nEOF".to_string(),
                vec![("file_edit", "config"), ("file_edit", "~/.ssh/config")],
            ),
            (
                "cd \"$HOME\" && apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: .ssh/id_rsa\n*** End Patch\nEOF".to_string(),
                vec![("file_write", ".ssh/id_rsa"), ("file_write", "~/.ssh/id_rsa")],
            ),
            (
                // The patch as one argument, its line breaks written `\n`.
                "apply_patch $'*** Begin Patch\\n*** Add File: ~/.aws/config\\n+x\\n*** End Patch'".to_string(),
                vec![("file_write", "~/.aws/config")],
            ),
            (
                "apply_patch '*** Begin Patch\n*** Update File: a\n*** Move to: ~/.gnupg/x'".to_string(),
                vec![
                    ("file_edit", "a"),
                    ("file_write", "~/.gnupg/x'"),
                    ("file_write", "~/.gnupg/x"),
                ],
            ),
            (
                // No `apply_patch` word: a shell that holds a patch is judged too.
                format!("python3 - <<'EOF'\n{add}EOF"),
                vec![("file_write", "/h/.ssh/authorized_keys")],
            ),
        ];
        for (command, want) in rows {
            let c = calls(claude("Bash", &input(json!({ "command": command })), "/w").unwrap());
            assert_eq!(c[0].call.tool, "exec_run");
            let got: Vec<(String, String)> = c[1..]
                .iter()
                .map(|c| {
                    (
                        c.call.tool.clone(),
                        c.call.params["path"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(t, p)| (t.to_string(), p.to_string()))
                .collect();
            assert_eq!(got, want, "{command}");
        }
        for command in ["ls", "which apply_patch", "echo '*** Add File: x'"] {
            let c = calls(claude("Bash", &input(json!({ "command": command })), "/w").unwrap());
            assert_eq!(c.len(), 1, "{command}");
        }
        // In each working directory of the command.
        let c = calls(
            gemini(
                "run_shell_command",
                &input(json!({"command": format!("apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: k\n+x\n*** End Patch\nEOF"), "dir_path": "/p", "directory": "~/.ssh"})),
                "/w",
            )
            .unwrap(),
        );
        let got: Vec<(Option<String>, String)> = c
            .iter()
            .filter(|c| c.call.tool == "file_write")
            .map(|c| {
                (
                    c.cwd.clone(),
                    c.call.params["path"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (Some("/p".to_string()), "k".to_string()),
                (Some("~/.ssh".to_string()), "k".to_string())
            ]
        );
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert!(claude("Bash", &input(json!({"command": 3})), "/w").is_err());
        assert!(claude("Bash", &Map::new(), "/w").is_err());
        assert!(claude("Read", &input(json!({"path": "/a"})), "/w").is_err());
        assert!(claude("Read", &input(json!({"file_path": "/a", "path": 3})), "/w").is_err());
        assert!(gemini(
            "read_file",
            &input(json!({"file_path": "/a", "absolute_path": ["/b", 1]})),
            "/w"
        )
        .is_err());
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
                json!({"dir_path": "/l"}),
                "file_list",
                "path",
                "/l",
            ),
        ];
        for (tool, inp, want_tool, key, want) in cases {
            let call = calls(gemini(tool, &input(inp), "/w").unwrap())
                .remove(0)
                .call;
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
        let paths: Vec<_> = c.iter().map(|c| c.call.params["path"].clone()).collect();
        // A directory is read all the way down: `DIR/**` is judged too.
        assert_eq!(
            paths,
            [json!("a"), json!("a/**"), json!("b"), json!("b/**")]
        );
        assert!(c.iter().all(|c| c.call.tool == "file_read"));
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
