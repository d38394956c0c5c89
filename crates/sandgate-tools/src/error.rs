//! What a tool call can fail with. Every message is meant for a model as much
//! as for a person: lowercase, no final period, user input in backticks.

use sandgate_policy::Decision;

/// Why a tool call produced no result.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The gate said no (a deny or floor rule, a missing allow rule that was
    /// not approved, or a headless ASK). The text is the decision's reason.
    #[error("denied: {}", .0.reason)]
    Denied(Box<Decision>),
    /// The parameters are wrong: a missing or mistyped parameter, an unknown tool.
    #[error("{0}")]
    Invalid(String),
    /// The tool ran and failed (a missing file, `old_string` not found, …).
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    /// A failed tool with a message.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed(message.into())
    }

    /// Invalid parameters with a message.
    pub fn invalid(message: impl Into<String>) -> Self {
        ToolError::Invalid(message.into())
    }

    /// An IO error on `path` while doing `action`.
    pub fn io(action: &str, path: &std::path::Path, e: &std::io::Error) -> Self {
        ToolError::Failed(format!(
            "cannot {action} `{}`: {}",
            path.display(),
            io_text(e)
        ))
    }
}

/// An IO error in words, without the `(os error N)` suffix.
pub fn io_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_lowercase(),
        None => text.to_lowercase(),
    }
}
