//! From ACP's tool calls and client methods to the calls the hooks judge.
//!
//! Nothing is judged here: each ACP message becomes the same
//! [`map::Gate`] a hook payload becomes (a shell command through the
//! hooks' own shell tool mapping, a path as `file_read` / `file_write`), and
//! [`crate::hook::decide_in`] decides it with the policy, floor included.
//!
//! An agent's `session/request_permission` describes its tool call with a
//! `kind`, a `title`, `locations`, `content` and, from most agents,
//! `rawInput` (the tool's own arguments). The command is `rawInput.command`
//! (or `cmd`; an argument list is joined with shell quoting), else, for an
//! `execute` call, the title: Gemini CLI sends no `rawInput`, and its shell
//! tool's title is the command itself. Codex's adapter sends the argument
//! list it runs, the model's command wrapped in its login shell
//! (`/bin/bash -lc SCRIPT`, with Codex's own parse of it as `parsed_cmd`):
//! there the script is judged, as the hooks judge the command Codex CLI
//! reports, which it runs in the same wrapper (see [`codex_script`]). Paths are the `locations`, the
//! `diff` contents and the path-like `rawInput` parameters; a `read` or
//! `search` call reads them, an `edit`, `delete` or `move` writes them, and a
//! call of another kind that names paths is judged as a read and a write of
//! each (an unknown tool fails closed, as in the hooks).

use serde_json::{json, Map, Value};

use sandgate_policy::ToolCall;

use crate::agentcall::map::{self, Check, Gate, EXEC_DIR_PARAMS, PATH_PARAMS};
use crate::agentcall::InputError;

/// The checks of an agent's tool call (`toolCall` of a permission request,
/// merged with what its `session/update`s said). `cwd` is the session's.
pub fn tool_call(call: &Map<String, Value>, cwd: &str) -> Result<Gate, InputError> {
    let kind = call.get("kind").and_then(Value::as_str).unwrap_or("other");
    let empty = Map::new();
    let raw = call
        .get("rawInput")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let title = call.get("title").and_then(Value::as_str);
    let mut checks = Vec::new();
    let command = command_of(raw).or_else(|| {
        (kind == "execute")
            .then(|| title.map(str::to_string))
            .flatten()
    });
    if let Some(command) = command {
        let dir = EXEC_DIR_PARAMS
            .iter()
            .find_map(|k| raw.get(*k).and_then(Value::as_str))
            .map(str::to_string)
            .or_else(|| gemini_dir(call));
        checks.extend(shell(&command, dir.as_deref(), cwd)?);
    } else if kind == "execute" {
        return Err(InputError::new(
            "an `execute` tool call without a command (no `rawInput.command`, no title)",
        ));
    }
    if kind != "execute" {
        let tools: &[&str] = match kind {
            "read" => &["file_read"],
            "search" => &["file_grep"],
            "edit" | "delete" | "move" => &["file_write"],
            _ => &["file_read", "file_write"],
        };
        let unknown = (tools.len() == 2).then(|| {
            format!(
                "ACP tool call of kind `{kind}`{}",
                title.map(|t| format!(" (`{t}`)")).unwrap_or_default()
            )
        });
        for path in paths_of(call, raw) {
            for tool in tools {
                checks.push(Check {
                    call: ToolCall::new(*tool, json!({ "path": path })),
                    cwd: None,
                    unknown_tool: unknown.clone(),
                });
            }
        }
    }
    Ok(if checks.is_empty() {
        Gate::OutOfScope
    } else {
        Gate::Calls(checks)
    })
}

/// The checks of a client method the agent asks the editor to perform:
/// `fs/read_text_file`, `fs/write_text_file`, `terminal/create`. `None` for
/// any other method.
pub fn client_method(
    method: &str,
    params: &Map<String, Value>,
    cwd: &str,
) -> Option<Result<Gate, InputError>> {
    let path = || {
        params
            .get("path")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .ok_or_else(|| InputError::new(format!("`{method}` without a `path` string")))
    };
    let file = |tool: &str| {
        path().map(|p| {
            Gate::Calls(vec![Check {
                call: ToolCall::new(tool, json!({ "path": p })),
                cwd: None,
                unknown_tool: None,
            }])
        })
    };
    Some(match method {
        "fs/read_text_file" => file("file_read"),
        "fs/write_text_file" => file("file_write"),
        "terminal/create" => terminal(params, cwd),
        _ => return None,
    })
}

fn terminal(params: &Map<String, Value>, cwd: &str) -> Result<Gate, InputError> {
    let Some(program) = params
        .get("command")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
    else {
        return Err(InputError::new(
            "`terminal/create` without a `command` string",
        ));
    };
    let mut words = vec![program.to_string()];
    match params.get("args") {
        None | Some(Value::Null) => {}
        Some(Value::Array(args)) => {
            for a in args {
                let Some(a) = a.as_str() else {
                    return Err(InputError::new(
                        "`terminal/create` has an argument that is not a string",
                    ));
                };
                words.push(a.to_string());
            }
        }
        Some(_) => return Err(InputError::new("`terminal/create`'s `args` is not a list")),
    }
    // No arguments: the editor runs `command` as it is, which may be a
    // whole command line.
    let command = if words.len() == 1 {
        words.remove(0)
    } else {
        join(&words)
    };
    let dir = params.get("cwd").and_then(Value::as_str);
    Ok(Gate::Calls(shell(&command, dir, cwd)?))
}

/// The hooks' own checks of a shell command run in `dir` (relative to `cwd`).
fn shell(command: &str, dir: Option<&str>, cwd: &str) -> Result<Vec<Check>, InputError> {
    let mut input = Map::new();
    input.insert("command".into(), command.into());
    if let Some(dir) = dir.filter(|d| !d.is_empty()) {
        input.insert("dir_path".into(), dir.into());
    }
    match map::gemini("run_shell_command", &input, cwd)? {
        Gate::Calls(checks) => Ok(checks),
        Gate::OutOfScope => Ok(Vec::new()),
    }
}

/// `rawInput.command` or `rawInput.cmd`: a string, or an argument list.
fn command_of(raw: &Map<String, Value>) -> Option<String> {
    if let Some(script) = codex_script(raw) {
        return Some(script);
    }
    for key in ["command", "cmd"] {
        match raw.get(key) {
            Some(Value::String(s)) if !s.is_empty() => return Some(s.clone()),
            Some(Value::Array(words)) if !words.is_empty() => {
                let words: Option<Vec<String>> = words
                    .iter()
                    .map(|w| w.as_str().map(str::to_string))
                    .collect();
                if let Some(words) = words {
                    return Some(join(&words));
                }
            }
            _ => {}
        }
    }
    None
}

/// The model's command in Codex's wrapper: `rawInput.command` is
/// `[SHELL, "-lc" | "-c", SCRIPT]` (`SHELL` a path or name of `bash`, `zsh`
/// or `sh`) and `rawInput.parsed_cmd` is there, which only Codex sends (its
/// parse of SCRIPT). Codex CLI runs every command the model gives it so,
/// hooked or over ACP; its hooks report SCRIPT, and the policy judges
/// SCRIPT here too, so that one `permissions.yaml` decides the same in the
/// terminal and in the editor. Anything else (another agent's
/// `bash -lc …`, a wrapper with more words) is judged as it is.
fn codex_script(raw: &Map<String, Value>) -> Option<String> {
    raw.get("parsed_cmd")?.as_array()?;
    let words = raw.get("command")?.as_array()?;
    let [shell, flag, script] = words.as_slice() else {
        return None;
    };
    let shell = shell.as_str()?;
    let name = shell.rsplit('/').next().unwrap_or(shell);
    let script = script.as_str()?;
    (matches!(name, "bash" | "zsh" | "sh")
        && matches!(flag.as_str()?, "-lc" | "-c")
        && !script.is_empty())
    .then(|| script.to_string())
}

/// Gemini CLI's shell tool names its directory in its explanation:
/// `[in DIR]` (the content's first text).
fn gemini_dir(call: &Map<String, Value>) -> Option<String> {
    let text = call
        .get("content")?
        .as_array()?
        .iter()
        .find_map(|c| c.get("content")?.get("text")?.as_str())?;
    let rest = text.strip_prefix("[in ")?;
    Some(rest[..rest.find(']')?].to_string())
}

/// Every path the call names, once each.
fn paths_of(call: &Map<String, Value>, raw: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |p: &str| {
        if !p.is_empty() && !out.iter().any(|o| o == p) {
            out.push(p.to_string());
        }
    };
    for loc in call
        .get("locations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(p) = loc.get("path").and_then(Value::as_str) {
            add(p);
        }
    }
    for c in call
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if c.get("type").and_then(Value::as_str) == Some("diff") {
            if let Some(p) = c.get("path").and_then(Value::as_str) {
                add(p);
            }
        }
    }
    for key in PATH_PARAMS {
        match raw.get(*key) {
            Some(Value::String(p)) => add(p),
            Some(Value::Array(ps)) => ps.iter().filter_map(Value::as_str).for_each(&mut add),
            _ => {}
        }
    }
    out
}

/// Words joined into a command line, each quoted for the shell when it
/// needs it.
pub fn join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_./=:,+@%^-".contains(&b));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(gate: Gate) -> Vec<(String, String, Option<String>)> {
        match gate {
            Gate::OutOfScope => Vec::new(),
            Gate::Calls(checks) => checks
                .into_iter()
                .map(|c| {
                    let subject = c
                        .call
                        .str_param("command")
                        .or(c.call.str_param("path"))
                        .unwrap_or_default()
                        .to_string();
                    (c.call.tool, subject, c.cwd)
                })
                .collect(),
        }
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn a_gemini_shell_call_is_its_title_in_its_directory() {
        let call = obj(json!({
            "toolCallId": "run_shell_command-1", "kind": "execute", "title": "touch a.txt",
            "content": [{"type": "content", "content": {"type": "text", "text": "[in sub] (make a file)"}}],
        }));
        assert_eq!(
            calls(tool_call(&call, "/w").unwrap()),
            [("exec_run".into(), "touch a.txt".into(), Some("sub".into()))]
        );
    }

    #[test]
    fn codex_s_login_shell_wrapper_is_judged_by_its_script() {
        let call = |command: Value, parsed: bool| {
            let mut raw = json!({"command": command, "cwd": "/w/sub"});
            if parsed {
                raw["parsed_cmd"] = json!([{"type": "unknown", "cmd": "x"}]);
            }
            obj(json!({"toolCallId": "call_1", "kind": "execute", "title": "t", "rawInput": raw}))
        };
        let first = |c: Map<String, Value>| calls(tool_call(&c, "/w").unwrap())[0].clone();
        assert_eq!(
            first(call(json!(["/bin/bash", "-lc", "touch a.txt && ls"]), true)),
            (
                "exec_run".into(),
                "touch a.txt && ls".into(),
                Some("/w/sub".into())
            )
        );
        assert_eq!(
            first(call(json!(["zsh", "-c", "ls"]), true)).1,
            "ls".to_string()
        );
        // Without Codex's parse, or with another wrapper, as it is.
        assert_eq!(
            first(call(json!(["/bin/bash", "-lc", "ls"]), false)).1,
            "/bin/bash -lc ls".to_string()
        );
        assert_eq!(
            first(call(json!(["/bin/bash", "-l", "-c", "ls"]), true)).1,
            "/bin/bash -l -c ls".to_string()
        );
        assert_eq!(
            first(call(json!(["python3", "-c", "print(1)"]), true)).1,
            "python3 -c 'print(1)'".to_string()
        );
    }

    #[test]
    fn raw_input_gives_the_command_and_the_paths() {
        let call = obj(
            json!({"kind": "execute", "title": "Run it", "rawInput": {"command": ["bash", "-lc", "echo 'hi'"]}}),
        );
        assert_eq!(
            calls(tool_call(&call, "/w").unwrap())[0].1,
            r#"bash -lc 'echo '\''hi'\'''"#
        );
        let call = obj(json!({"kind": "edit", "title": "Write",
            "locations": [{"path": "/w/a"}],
            "content": [{"type": "diff", "path": "/w/b", "newText": ""}],
            "rawInput": {"file_path": "/w/a", "paths": ["/w/c"]}}));
        let got: Vec<_> = calls(tool_call(&call, "/w").unwrap())
            .into_iter()
            .map(|c| (c.0, c.1))
            .collect();
        assert_eq!(
            got,
            [
                ("file_write".into(), "/w/a".into()),
                ("file_write".into(), "/w/b".into()),
                ("file_write".into(), "/w/c".into()),
            ]
        );
        let call = obj(json!({"kind": "fetch", "locations": [{"path": "/x"}]}));
        assert_eq!(calls(tool_call(&call, "/w").unwrap()).len(), 2);
        let call = obj(json!({"kind": "think", "title": "hmm"}));
        assert_eq!(tool_call(&call, "/w").unwrap(), Gate::OutOfScope);
        assert!(tool_call(&obj(json!({"kind": "execute"})), "/w").is_err());
    }

    #[test]
    fn client_methods_are_file_and_shell_calls() {
        let read = obj(json!({"sessionId": "s", "path": "/w/a"}));
        assert_eq!(
            calls(
                client_method("fs/read_text_file", &read, "/w")
                    .unwrap()
                    .unwrap()
            ),
            [("file_read".into(), "/w/a".into(), None)]
        );
        let term = obj(
            json!({"sessionId": "s", "command": "git", "args": ["commit", "-m", "a b"], "cwd": "/w/sub"}),
        );
        assert_eq!(
            calls(
                client_method("terminal/create", &term, "/w")
                    .unwrap()
                    .unwrap()
            )[0],
            (
                "exec_run".into(),
                "git commit -m 'a b'".into(),
                Some("/w/sub".into())
            )
        );
        assert!(client_method("fs/write_text_file", &obj(json!({})), "/w")
            .unwrap()
            .is_err());
        assert!(client_method("terminal/output", &obj(json!({})), "/w").is_none());
    }
}
