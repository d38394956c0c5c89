//! The hook payload an agent writes on stdin, read into the fields
//! sandgate needs. Self-contained (serde_json only), so that the fuzz
//! targets build it as it is.

use std::fmt;
use std::path::Path;

use serde_json::{Map, Value};

/// A payload sandgate cannot check: exit 2, with this on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError(String);

impl InputError {
    /// An error with this message (lowercase, no final period).
    pub fn new(message: impl Into<String>) -> Self {
        InputError(message.into())
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The fields of a hook payload that sandgate reads.
#[derive(Debug, Clone)]
pub struct Payload {
    /// `hook_event_name`.
    pub event: String,
    /// `tool_name`.
    pub tool: String,
    /// `tool_input`.
    pub input: Map<String, Value>,
    /// `cwd`: relative paths resolve against it.
    pub cwd: String,
    /// `permission_mode` (Claude Code, Codex CLI), if the agent sent one.
    pub mode: Option<String>,
    /// `session_id`, if the agent sent one (for the audit log only).
    pub session: Option<String>,
}

/// Parse a payload; every field sandgate needs must be there with the right type.
pub fn parse_payload(text: &str) -> Result<Payload, InputError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| InputError::new(format!("the hook payload is not valid JSON: {e}")))?;
    let Value::Object(mut obj) = value else {
        return Err(InputError::new("the hook payload must be a JSON object"));
    };
    let mode = match obj.remove("permission_mode") {
        Some(Value::String(m)) => Some(m),
        Some(Value::Null) | None => None,
        Some(_) => {
            return Err(InputError::new(
                "the hook payload's `permission_mode` must be a string",
            ))
        }
    };
    // Only the audit log reads it: a session id of another type is left out
    // rather than failing the call.
    let session = match obj.remove("session_id") {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let mut string = |key: &str| match obj.remove(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(InputError::new(format!(
            "the hook payload's `{key}` must be a string"
        ))),
        None => Err(InputError::new(format!("the hook payload has no `{key}`"))),
    };
    let event = string("hook_event_name")?;
    let tool = string("tool_name")?;
    let cwd = string("cwd")?;
    if !Path::new(&cwd).is_absolute() {
        return Err(InputError::new(format!(
            "the hook payload's `cwd` must be an absolute path, found `{cwd}`"
        )));
    }
    let input = match obj.remove("tool_input") {
        Some(Value::Object(m)) => m,
        Some(_) => {
            return Err(InputError::new(
                "the hook payload's `tool_input` must be an object",
            ))
        }
        None => return Err(InputError::new("the hook payload has no `tool_input`")),
    };
    Ok(Payload {
        event,
        tool,
        input,
        cwd,
        mode,
        session,
    })
}
