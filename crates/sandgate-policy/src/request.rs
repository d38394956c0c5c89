//! What the gate is asked about: a tool call, and the context it is made in.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::decision::Access;

/// One tool call, as an agent makes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The tool name, e.g. `file_read` or `exec_run`.
    pub tool: String,
    /// The tool's parameters.
    #[serde(default)]
    pub params: Value,
}

/// Which gate a tool goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// A file tool, gated on its `path` parameter.
    File,
    /// An exec tool, gated on its `command` parameter.
    Exec,
    /// Not gated (e.g. exec job inspection).
    OutOfScope,
}

/// A tool the gate judges, as named by sandgate's MCP server and `sandgate check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GatedTool {
    /// The name, e.g. `file_read`.
    pub name: &'static str,
    /// Which gate it goes through.
    pub kind: ToolKind,
    /// What it does to its subject, as words before it: "reading", "the command".
    pub action: &'static str,
    /// Whether it walks a directory tree (its results are filtered by the policy).
    pub walks: bool,
    /// A file tool: whether it reads or writes its path (`paths.read.*` or
    /// `paths.write.*` decide it, beside `paths.deny` / `paths.allow`).
    pub access: Option<Access>,
}

/// Every gated tool, once: the hooks, the MCP server, `check` and the policy
/// engine all read this table.
pub const GATED_TOOLS: &[GatedTool] = &[
    GatedTool::file("file_read", "reading", false, Access::Read),
    GatedTool::file("file_write", "writing", false, Access::Write),
    GatedTool::file("file_edit", "editing", false, Access::Write),
    GatedTool::file("file_list", "listing", true, Access::Read),
    GatedTool::file("file_grep", "searching", true, Access::Read),
    GatedTool::file("file_find", "finding files in", true, Access::Read),
    GatedTool::file("file_count", "counting files in", true, Access::Read),
    GatedTool::file("file_head_tail", "reading", false, Access::Read),
    GatedTool {
        name: "exec_run",
        kind: ToolKind::Exec,
        action: "the command",
        walks: false,
        access: None,
    },
];

impl GatedTool {
    const fn file(
        name: &'static str,
        action: &'static str,
        walks: bool,
        access: Access,
    ) -> GatedTool {
        GatedTool {
            name,
            kind: ToolKind::File,
            action,
            walks,
            access: Some(access),
        }
    }
}

/// The gated tool `tool` names (`client_file_*` and `client_exec_run` are accepted too).
pub fn gated_tool(tool: &str) -> Option<&'static GatedTool> {
    let name = tool.strip_prefix("client_").unwrap_or(tool);
    GATED_TOOLS.iter().find(|t| t.name == name)
}

/// Classify a tool name (`client_file_*` and `client_exec_run` are accepted too).
pub fn tool_kind(tool: &str) -> ToolKind {
    gated_tool(tool).map_or(ToolKind::OutOfScope, |t| t.kind)
}

/// Why a request cannot be checked at all (exit code 2, never a decision).
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The request is not valid JSON or has the wrong shape.
    #[error("the request is not a valid tool call: {0}; expected {{\"tool\": \"NAME\", \"params\": {{...}}}}")]
    Malformed(String),
    /// A gated parameter is not a string.
    #[error("`{tool}` expects `params.{param}` to be a string, found {found}")]
    NotAString {
        /// The tool.
        tool: String,
        /// The parameter.
        param: &'static str,
        /// What was found instead.
        found: &'static str,
    },
    /// `params` is not an object.
    #[error("`params` must be an object, found {0}")]
    ParamsNotObject(&'static str),
}

impl ToolCall {
    /// A call from its parts.
    pub fn new(tool: impl Into<String>, params: Value) -> Self {
        ToolCall {
            tool: tool.into(),
            params,
        }
    }

    /// Parse a JSON request and check that the gated parameter has the right type.
    pub fn from_json(text: &str) -> Result<Self, RequestError> {
        let call: ToolCall =
            serde_json::from_str(text).map_err(|e| RequestError::Malformed(e.to_string()))?;
        call.validate()?;
        Ok(call)
    }

    /// Check the shape of the parameters the gate reads.
    pub fn validate(&self) -> Result<(), RequestError> {
        match &self.params {
            Value::Null | Value::Object(_) => {}
            other => return Err(RequestError::ParamsNotObject(json_type(other))),
        }
        let param = match tool_kind(&self.tool) {
            ToolKind::File => "path",
            ToolKind::Exec => "command",
            ToolKind::OutOfScope => return Ok(()),
        };
        match self.params.get(param) {
            None | Some(Value::Null) | Some(Value::String(_)) => Ok(()),
            Some(other) => Err(RequestError::NotAString {
                tool: self.tool.clone(),
                param,
                found: json_type(other),
            }),
        }
    }

    /// The string parameter `name`, if present.
    pub fn str_param(&self, name: &str) -> Option<&str> {
        self.params.get(name).and_then(Value::as_str)
    }
}

/// The JSON type of a value, in words (`a number`, `an array`, …).
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Where a call is made: the working directory and the home directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The canonical working directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// The home directory; `~` expands to it.
    pub home: PathBuf,
    /// The `CDPATH` the commands' shell starts with: a relative `cd` may land
    /// below any of its directories. Taken from this process's environment.
    pub cdpath: Option<String>,
    /// Why the commands' shells start with patterns widened (an exported
    /// `BASHOPTS` or `SHELLOPTS` holding `dotglob`, a non-empty
    /// `GLOBIGNORE`), if they do. Taken from this process's environment.
    pub wide_globs: Option<String>,
}

/// Why a context cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// The working directory does not exist or cannot be resolved.
    #[error("the working directory `{0}` cannot be used: {1}")]
    Cwd(String, String),
    /// `$HOME` is not set.
    #[error("`HOME` is not set, so `~` cannot be expanded")]
    NoHome,
    /// The directory a call runs in is not an existing directory.
    #[error("the working directory `{0}` of the call cannot be used: {1}")]
    CallDir(String, String),
}

impl Context {
    /// A context from a working and a home directory. The working directory
    /// must exist; both are canonicalized so subjects compare exactly.
    pub fn new(cwd: &Path, home: &Path) -> Result<Self, ContextError> {
        let cwd = std::fs::canonicalize(cwd)
            .map_err(|e| ContextError::Cwd(cwd.display().to_string(), e.to_string()))?;
        let home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
        let cdpath = std::env::var_os("CDPATH").map(|v| v.to_string_lossy().into_owned());
        Ok(Context {
            cwd,
            home,
            cdpath,
            wide_globs: wide_globs_from_env(),
        })
    }

    /// The context of a call that runs in `dir` (an exec call's `cwd`, a
    /// hook's `dir_path`): `~` expanded, a relative `dir` taken from this
    /// context's working directory, symlinks resolved. `dir` must be an
    /// existing directory; the home directory stays.
    pub fn with_cwd(&self, dir: &str) -> Result<Context, ContextError> {
        let canonical = crate::canon::canonicalize(dir, &self.cwd, &self.home)
            .map_err(|e| ContextError::CallDir(dir.to_string(), e.to_string()))?;
        if !canonical.is_dir() {
            return Err(ContextError::CallDir(
                dir.to_string(),
                "it is not an existing directory".into(),
            ));
        }
        Ok(Context {
            cwd: canonical,
            home: self.home.clone(),
            cdpath: self.cdpath.clone(),
            wide_globs: self.wide_globs.clone(),
        })
    }

    /// The context of this process: `$HOME`, and `cwd` or the process CWD.
    pub fn from_env(cwd: Option<&Path>) -> Result<Self, ContextError> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .ok_or(ContextError::NoHome)?;
        let cwd = match cwd {
            Some(c) => c.to_path_buf(),
            None => {
                std::env::current_dir().map_err(|e| ContextError::Cwd(".".into(), e.to_string()))?
            }
        };
        Context::new(&cwd, Path::new(&home))
    }
}

/// Why the environment widens the patterns of the shells it starts.
fn wide_globs_from_env() -> Option<String> {
    crate::shell::reads::GLOB_VARIABLES.iter().find_map(|name| {
        let value = std::env::var_os(name)?.to_string_lossy().into_owned();
        let widens = if *name == "GLOBIGNORE" {
            !value.is_empty()
        } else {
            value.split(':').any(crate::shell::reads::widens_globs)
        };
        widens.then(|| format!("`{name}={value}` in the environment"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_tools() {
        assert_eq!(tool_kind("file_read"), ToolKind::File);
        assert_eq!(tool_kind("client_file_grep"), ToolKind::File);
        assert_eq!(tool_kind("client_exec_run"), ToolKind::Exec);
        assert_eq!(tool_kind("exec_status"), ToolKind::OutOfScope);
        assert_eq!(tool_kind("file_reader"), ToolKind::OutOfScope);
    }

    #[test]
    fn rejects_wrong_parameter_types() {
        let e = ToolCall::from_json(r#"{"tool":"file_read","params":{"path":3}}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`file_read` expects `params.path` to be a string, found a number"
        );
        assert!(ToolCall::from_json("{").is_err());
        assert!(ToolCall::from_json(r#"{"tool":"exec_run","params":[]}"#).is_err());
        assert!(ToolCall::from_json(r#"{"tool":"exec_status","params":{"path":3}}"#).is_ok());
    }
}
