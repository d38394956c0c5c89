//! Gemini CLI's hook wire format: the `BeforeTool` event.
//!
//! Gemini CLI hooks answer `allow` or `deny` only. An ASK becomes what
//! `hooks.gemini.ask` says (default `deny`), and the reason tells the user how
//! to allow the call.

use sandgate_policy::config::AskFallback;
use sandgate_policy::{Decision, ToolCall, Verdict};
use serde_json::{json, Value};

use super::claude::{Decided, HookReply};
use super::{ask_denied_reason, deny_reason, describe, InputError};
use crate::audit::Outcome;

/// Only `BeforeTool` is a gate.
pub fn check_event(name: &str) -> Result<(), InputError> {
    if name == "BeforeTool" {
        Ok(())
    } else {
        Err(InputError::new(format!(
            "`sandgate hook gemini` handles the `BeforeTool` and `AfterTool` events, not `{name}`"
        )))
    }
}

/// The answer for a tool sandgate does not gate.
pub fn no_opinion() -> Value {
    json!({})
}

/// The answer for a decision; `ask` is the policy's fallback for ASK, `asks`
/// every ASK of the call.
pub fn render(
    call: &ToolCall,
    decision: &Decision,
    ask: AskFallback,
    asks: &[Decided],
) -> HookReply {
    match (decision.verdict, ask) {
        (Verdict::Allow, _) => HookReply {
            output: Some(json!({ "decision": "allow" })),
            outcome: Outcome {
                became: "allowed",
                answered_by: "policy",
            },
        },
        (Verdict::Deny, _) => HookReply {
            output: Some(json!({ "decision": "deny", "reason": deny_reason(call, decision) })),
            outcome: Outcome {
                became: "denied",
                answered_by: "policy",
            },
        },
        (Verdict::Ask, AskFallback::Allow) => HookReply {
            output: Some(json!({
                "decision": "allow",
                "systemMessage": format!(
                    "sandgate: no rule allows {} ({}); allowed because `hooks.gemini.ask` is `allow`",
                    describe(call, decision),
                    decision.reason
                ),
            })),
            outcome: Outcome {
                became: "allowed by hooks.gemini.ask",
                answered_by: "setting",
            },
        },
        (Verdict::Ask, AskFallback::Deny) => {
            let reason = ask_denied_reason(
                asks,
                "Gemini CLI hooks cannot ask",
                Some("or set `hooks.gemini.ask: allow` to let every such call run"),
            );
            HookReply {
                output: Some(json!({
                    "decision": "deny",
                    "reason": reason,
                    "systemMessage": format!("sandgate: {reason}"),
                })),
                outcome: Outcome {
                    became: "denied by hooks.gemini.ask",
                    answered_by: "setting",
                },
            }
        }
    }
}
