//! The tools as a client sees them: name, description for a model, JSON
//! Schema of the arguments, and behaviour hints.

use serde_json::{json, Value};

/// One tool's public description.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The tool name, e.g. `file_read`.
    pub name: &'static str,
    /// A short human title.
    pub title: &'static str,
    /// What it does, written for a model.
    pub description: &'static str,
    /// JSON Schema of the arguments.
    pub input_schema: Value,
    /// It changes nothing.
    pub read_only: bool,
    /// It may overwrite or destroy data.
    pub destructive: bool,
    /// Calling it twice with the same arguments has no further effect.
    pub idempotent: bool,
    /// It reaches beyond the local files (a shell command may do anything).
    pub open_world: bool,
}

const GATE_NOTE: &str = "Every call passes sandgate's permission gate first: a path or command \
the user's policy denies returns an error saying which rule decided it; one no rule allows may \
be put to the user, who can allow or deny it.";

fn schema(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn path_prop(what: &str) -> Value {
    json!({"type": "string", "description": format!("{what} Absolute, `~/…`, or relative to the server's working directory; empty means the working directory.")})
}

fn walk_note() -> &'static str {
    "Entries the policy denies are skipped silently and only counted; symlinks are never followed."
}

/// Every tool sandgate serves, in a stable order.
pub fn specs() -> Vec<ToolSpec> {
    let hidden = json!({"type": "boolean", "description": "Also visit hidden files and directories (names starting with `.`). Default false.", "default": false});
    let max_results = |default: u64| json!({"type": "integer", "minimum": 1, "maximum": 10000, "default": default, "description": "Stop after this many results."});
    let id = json!({"type": "integer", "minimum": 1, "description": "The job id that `exec_run` returned."});
    vec![
        ToolSpec {
            name: "file_read",
            title: "Read a file",
            description: "Read a UTF-8 text file. Returns the text as it is (no line numbers). Use `offset` (first line, 1-based) and `limit` (number of lines) to read a large file in parts; without them a file over 256 KiB is refused. Binary files are refused.",
            input_schema: schema(
                json!({
                    "path": path_prop("The file to read."),
                    "offset": {"type": "integer", "minimum": 1, "description": "First line to return, 1-based. Default 1."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100000, "description": "Number of lines to return. Default 2000."},
                }),
                &["path"],
            ),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        ToolSpec {
            name: "file_write",
            title: "Write a file",
            description: "Create a file or replace its whole content. Missing parent directories are created; the file is replaced atomically, so readers never see a half-written file. To change part of a file use `file_edit`.",
            input_schema: schema(
                json!({
                    "path": path_prop("The file to write."),
                    "content": {"type": "string", "description": "The complete new content."},
                }),
                &["path", "content"],
            ),
            read_only: false,
            destructive: true,
            idempotent: true,
            open_world: false,
        },
        ToolSpec {
            name: "file_edit",
            title: "Edit a file",
            description: "Replace an exact piece of text in a file. `old_string` must occur exactly once unless `replace_all` is true; copy it exactly from the file, including whitespace. Fails without changing anything when `old_string` is missing or not unique.",
            input_schema: schema(
                json!({
                    "path": path_prop("The file to edit."),
                    "old_string": {"type": "string", "description": "The exact text to replace."},
                    "new_string": {"type": "string", "description": "The text to put in its place."},
                    "replace_all": {"type": "boolean", "default": false, "description": "Replace every occurrence instead of requiring exactly one."},
                }),
                &["path", "old_string", "new_string"],
            ),
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: false,
        },
        ToolSpec {
            name: "file_list",
            title: "List a directory",
            description: "List the entries of a directory as an indented tree, `depth` levels deep (1 = direct children). Directories end in `/`, symlinks in `@`; file sizes are shown. Hidden entries are included.",
            input_schema: schema(
                json!({
                    "path": path_prop("The directory to list."),
                    "depth": {"type": "integer", "minimum": 1, "maximum": 20, "default": 1, "description": "How many levels to descend."},
                }),
                &[],
            ),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        ToolSpec {
            name: "file_grep",
            title: "Search file contents",
            description: "Search files for a regular expression (Rust regex syntax, as ripgrep). Returns `path:line:text` for each matching line, paths absolute. Respects `.gitignore`, skips hidden and binary files unless told otherwise.",
            input_schema: schema(
                json!({
                    "pattern": {"type": "string", "description": "The regular expression."},
                    "path": path_prop("The directory (searched recursively) or file to search."),
                    "glob": {"type": "string", "description": "Only search files whose name matches this glob, e.g. `*.rs`; a glob with `/` matches the path relative to `path`."},
                    "ignore_case": {"type": "boolean", "default": false, "description": "Match case-insensitively."},
                    "max_results": max_results(200),
                    "hidden": hidden,
                }),
                &["pattern"],
            ),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        ToolSpec {
            name: "file_find",
            title: "Find files by name",
            description: "Find files and directories whose name matches a glob (e.g. `*.toml`), or whose path relative to `path` matches a glob containing `/` (e.g. `src/**/*.rs`). Returns absolute paths. Respects `.gitignore`.",
            input_schema: schema(
                json!({
                    "glob": {"type": "string", "description": "The glob to match."},
                    "path": path_prop("The directory to search."),
                    "max_results": max_results(500),
                    "hidden": hidden,
                }),
                &["glob"],
            ),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        ToolSpec {
            name: "file_count",
            title: "Count lines, words and bytes",
            description: "Count lines, words and bytes (as `wc`) of one file, or summed over every file of a tree. Respects `.gitignore` in a tree.",
            input_schema: schema(
                json!({
                    "path": path_prop("The file or directory."),
                    "hidden": hidden,
                }),
                &[],
            ),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        ToolSpec {
            name: "file_head_tail",
            title: "First and last lines of a file",
            description: "Return the first `head` and the last `tail` lines of a text file, with a marker for the lines in between. Good for a first look at a large file or a log.",
            input_schema: schema(
                json!({
                    "path": path_prop("The file."),
                    "head": {"type": "integer", "minimum": 0, "maximum": 10000, "default": 10, "description": "Lines from the start."},
                    "tail": {"type": "integer", "minimum": 0, "maximum": 10000, "default": 10, "description": "Lines from the end."},
                }),
                &["path"],
            ),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        ToolSpec {
            name: "exec_run",
            title: "Run a shell command",
            description: "Run a command with `/bin/sh -c` (inside the OS sandbox when the policy configures one) and return its output (stdout and stderr interleaved) and exit code. A command still running after `timeout_s` is not killed: it continues as a background job, and the job id is returned with the output so far. Inspect it with `exec_status` and `exec_tail`, stop it with `exec_kill`. Stdin is closed.",
            input_schema: schema(
                json!({
                    "command": {"type": "string", "description": "The command line."},
                    "cwd": {"type": "string", "description": "Working directory. Default: the server's working directory."},
                    "timeout_s": {"type": "integer", "minimum": 0, "maximum": 3600, "default": 15, "description": "Seconds to wait before the command becomes a background job."},
                }),
                &["command"],
            ),
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
        },
        ToolSpec {
            name: "exec_status",
            title: "Status of a background job",
            description: "State (running, exited, signalled), exit code and runtime of a background job started by `exec_run`.",
            input_schema: schema(json!({"id": id}), &["id"]),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        ToolSpec {
            name: "exec_tail",
            title: "Output of a background job",
            description: "The last `lines` lines of a background job's output (stdout and stderr interleaved), and its state.",
            input_schema: schema(
                json!({
                    "id": id,
                    "lines": {"type": "integer", "minimum": 1, "maximum": 5000, "default": 50, "description": "How many lines from the end."},
                }),
                &["id"],
            ),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        ToolSpec {
            name: "exec_kill",
            title: "Stop a background job",
            description: "Stop a background job and everything it started: SIGTERM, then SIGKILL after 2 s.",
            input_schema: schema(json!({"id": id}), &["id"]),
            read_only: false,
            destructive: true,
            idempotent: true,
            open_world: false,
        },
        ToolSpec {
            name: "exec_stat",
            title: "List background jobs",
            description: "List every background job with its id, command, state and runtime.",
            input_schema: schema(json!({}), &[]),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
    ]
}

/// The sentence appended to every gated tool's description.
pub fn gate_note(name: &str) -> Option<String> {
    match sandgate_policy::request::gated_tool(name) {
        None => None,
        Some(tool) if tool.walks => Some(format!("{GATE_NOTE} {}", walk_note())),
        Some(_) => Some(GATE_NOTE.to_string()),
    }
}

impl ToolSpec {
    /// The description with the note on the gate, as a model should read it.
    pub fn full_description(&self) -> String {
        match gate_note(self.name) {
            Some(note) => format!("{} {note}", self.description),
            None => self.description.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The MCP tools and the gate's one table of gated tools agree: every
    /// gated tool is served, and every served tool outside the table is a job
    /// tool (outside the gate).
    #[test]
    fn the_served_tools_and_the_gated_tools_agree() {
        let served: Vec<&str> = specs().iter().map(|s| s.name).collect();
        for tool in sandgate_policy::request::GATED_TOOLS {
            assert!(served.contains(&tool.name), "{} is not served", tool.name);
        }
        for name in served {
            if sandgate_policy::request::gated_tool(name).is_none() {
                assert!(
                    name.starts_with("exec_") && name != "exec_run",
                    "{name} is served but not gated"
                );
            }
        }
    }
}
