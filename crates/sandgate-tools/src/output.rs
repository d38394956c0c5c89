//! What a successful tool call returns.

use serde_json::Value;

/// The result of a tool: text for the model, and the same facts as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The text a model reads.
    pub text: String,
    /// Structured facts (counts, paths, exit codes), for clients that use them.
    pub structured: Value,
}

impl ToolOutput {
    /// An output from its parts.
    pub fn new(text: impl Into<String>, structured: Value) -> Self {
        ToolOutput {
            text: text.into(),
            structured,
        }
    }
}
