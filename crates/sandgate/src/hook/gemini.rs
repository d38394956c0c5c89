//! Gemini CLI's hook wire format: the `BeforeTool` event.
//!
//! Gemini CLI hooks answer `allow` or `deny` only. An ASK becomes what
//! `hooks.gemini.ask` says (default `deny`), and the reason tells the user how
//! to allow the call.

use sandgate_policy::config::AskFallback;
use sandgate_policy::{Decision, ToolCall, Verdict};
use serde_json::{json, Value};

use super::{deny_reason, describe, suggested_rule, InputError};

/// Only `BeforeTool` is a gate.
pub fn check_event(name: &str) -> Result<(), InputError> {
    if name == "BeforeTool" {
        Ok(())
    } else {
        Err(InputError::new(format!(
            "`sandgate hook gemini` handles the `BeforeTool` event, not `{name}`"
        )))
    }
}

/// The answer for a tool sandgate does not gate.
pub fn no_opinion() -> Value {
    json!({})
}

/// The answer for a decision; `ask` is the policy's fallback for ASK.
pub fn render(call: &ToolCall, decision: &Decision, ask: AskFallback) -> Value {
    match (decision.verdict, ask) {
        (Verdict::Allow, _) => json!({ "decision": "allow" }),
        (Verdict::Deny, _) => json!({ "decision": "deny", "reason": deny_reason(call, decision) }),
        (Verdict::Ask, AskFallback::Allow) => json!({
            "decision": "allow",
            "systemMessage": format!(
                "sandgate: no rule allows {} ({}); allowed because `hooks.gemini.ask` is `allow`",
                describe(call, decision),
                decision.reason
            ),
        }),
        (Verdict::Ask, AskFallback::Deny) => {
            let how = match suggested_rule(call, decision) {
                Some(rule) => format!("add `{rule}` to ~/.sandgate/permissions.yaml"),
                None => "add an allow rule for it to ~/.sandgate/permissions.yaml".to_string(),
            };
            let reason = format!(
                "sandgate would ask the user before {} ({}), and Gemini CLI hooks cannot ask, \
                 so it is blocked. Tell the user: to allow it, {how}, \
                 or set `hooks.gemini.ask: allow` to let every such call run",
                describe(call, decision),
                decision.reason
            );
            json!({ "decision": "deny", "reason": reason, "systemMessage": format!("sandgate: {reason}") })
        }
    }
}
