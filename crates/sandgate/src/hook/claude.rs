//! Claude Code's (and Codex CLI's) hook wire format: `PreToolUse` and `PermissionRequest`.

use sandgate_policy::{Decision, ToolCall, Verdict};
use serde_json::{json, Value};

use super::{deny_reason, describe, Agent, InputError};

/// The hook events sandgate answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Before a tool runs: answer allow, deny or ask.
    PreToolUse,
    /// The agent is about to show its permission dialog: answer allow or deny, or stay silent.
    PermissionRequest,
}

impl Event {
    /// The event named by `hook_event_name`.
    pub fn parse(name: &str, agent: Agent) -> Result<Event, InputError> {
        match name {
            "PreToolUse" => Ok(Event::PreToolUse),
            "PermissionRequest" => Ok(Event::PermissionRequest),
            other => Err(InputError::new(format!(
                "`sandgate hook {}` handles the `PreToolUse` and `PermissionRequest` events, not `{other}`",
                agent.as_str()
            ))),
        }
    }
}

/// The answer to print, or `None` for no decision (the agent shows its own dialog).
pub fn render(event: Event, call: &ToolCall, decision: &Decision) -> Option<Value> {
    match event {
        Event::PreToolUse => {
            let reason = match decision.verdict {
                Verdict::Allow => format!(
                    "sandgate allows {}: {}",
                    describe(call, decision),
                    decision.reason
                ),
                Verdict::Ask => format!(
                    "sandgate has no rule that allows {} ({}); the user decides",
                    describe(call, decision),
                    decision.reason
                ),
                Verdict::Deny => deny_reason(call, decision),
            };
            Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": decision.verdict.as_str(),
                    "permissionDecisionReason": reason,
                }
            }))
        }
        Event::PermissionRequest => match decision.verdict {
            Verdict::Allow => Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": { "behavior": "allow" },
                }
            })),
            Verdict::Deny => Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": { "behavior": "deny", "message": deny_reason(call, decision) },
                }
            })),
            Verdict::Ask => None,
        },
    }
}
