//! Claude Code's and Codex CLI's hook wire format: `PreToolUse` and `PermissionRequest`.
//!
//! The two agents share the format but not its meaning:
//!
//! - Claude Code takes `allow`, `deny` and `ask`. An ASK becomes what
//!   `hooks.claude.ask` says. With `defer` (the default) sandgate gives no
//!   opinion only where Claude Code's own permission system surely asks (the
//!   edit tools in its `default`, `plan` and `dontAsk` modes), so an allow
//!   the user gave Claude Code stands and nothing is asked twice; everywhere
//!   else (every `Bash` command, `acceptEdits`, `bypassPermissions`) it
//!   answers `ask`, since Claude Code would run the call unasked.
//! - Codex CLI 0.171 runs a call whose hook answered `ask`, or a bare `allow`,
//!   as if the hook had failed. So an ALLOW is no output (Codex goes on with
//!   its own approval), and an ASK is a deny whose reason names the rule that
//!   would allow the call. Its `PermissionRequest` event, sent when Codex is
//!   about to ask its user, gets no answer for an ASK: that question reaches a
//!   human.

use sandgate_policy::config::ClaudeAsk;
use sandgate_policy::{Decision, ToolCall, Verdict};
use serde_json::{json, Value};

use super::{ask_denied_reason, deny_reason, describe, Agent, InputError};
use crate::audit::Outcome;

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
                "`sandgate hook {}` handles the `PreToolUse`, `PermissionRequest` and `PostToolUse` events, not `{other}`",
                agent.as_str()
            ))),
        }
    }
}

/// The Claude Code tools its own permission system always asks about where
/// its mode asks at all: the edit tools. Not `Bash`: Claude Code runs the
/// commands it deems read-only (`uname`, `cat FILE`, …) without a question,
/// in every mode, so a deferred ASK about a command could run unasked.
const CLAUDE_PROMPTED_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// The permission modes in which Claude Code asks about (or, for `dontAsk`,
/// refuses) an edit its own rules do not allow. Not `acceptEdits`, which
/// accepts every edit unasked.
const CLAUDE_ASKING_MODES: &[&str] = &["default", "plan", "dontAsk"];

/// What sandgate tells the agent about one decision.
pub struct HookReply {
    /// The JSON to print, or `None` for no output.
    pub output: Option<Value>,
    /// For the audit log.
    pub outcome: Outcome,
}

/// Everything the answer depends on.
pub struct Asked<'a> {
    /// Which agent.
    pub agent: Agent,
    /// Which event.
    pub event: Event,
    /// The agent's tool name.
    pub tool: &'a str,
    /// The payload's `permission_mode`, if any.
    pub mode: Option<&'a str>,
    /// `hooks.claude.ask` of the policy.
    pub claude_ask: ClaudeAsk,
}

const ALLOWED: Outcome = Outcome {
    became: "allowed",
    answered_by: "policy",
};
const DENIED: Outcome = Outcome {
    became: "denied",
    answered_by: "policy",
};

/// The answer for the strictest decision, `asks` being every ASK of the call.
pub fn answer(
    asked: &Asked<'_>,
    call: &ToolCall,
    decision: &Decision,
    asks: &[Decided],
) -> HookReply {
    match asked.event {
        Event::PreToolUse => pre_tool_use(asked, call, decision, asks),
        Event::PermissionRequest => permission_request(call, decision),
    }
}

/// A call and its decision.
pub type Decided = (ToolCall, Decision);

fn pre_tool_use(
    asked: &Asked<'_>,
    call: &ToolCall,
    decision: &Decision,
    asks: &[Decided],
) -> HookReply {
    let output = |verdict: &str, reason: String| {
        Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": verdict,
                "permissionDecisionReason": reason,
            }
        }))
    };
    match (decision.verdict, asked.agent) {
        (Verdict::Deny, _) => HookReply {
            output: output("deny", deny_reason(call, decision)),
            outcome: DENIED,
        },
        // Codex CLI treats a bare `allow` as a failed hook: say nothing, and
        // its own approval goes on as if sandgate were not there.
        (Verdict::Allow, Agent::Codex) => HookReply {
            output: None,
            outcome: Outcome {
                became: "allowed (no output: Codex CLI's own approval applies)",
                answered_by: "policy",
            },
        },
        (Verdict::Allow, _) => HookReply {
            output: output(
                "allow",
                format!(
                    "sandgate allows {}: {}",
                    describe(call, decision),
                    decision.reason
                ),
            ),
            outcome: ALLOWED,
        },
        (Verdict::Ask, Agent::Codex) => HookReply {
            output: output(
                "deny",
                ask_denied_reason(
                    asks,
                    "Codex CLI hooks cannot ask (it would run the call unasked)",
                    None,
                ),
            ),
            outcome: Outcome {
                became: "denied: Codex CLI hooks cannot ask",
                answered_by: "nobody: the agent cannot ask",
            },
        },
        (Verdict::Ask, _) => claude_ask(asked, call, decision, asks),
    }
}

fn claude_ask(
    asked: &Asked<'_>,
    call: &ToolCall,
    decision: &Decision,
    asks: &[Decided],
) -> HookReply {
    let ask = || HookReply {
        output: Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": format!(
                    "sandgate has no rule that allows {} ({}); the user decides",
                    describe(call, decision),
                    decision.reason
                ),
            }
        })),
        outcome: Outcome {
            became: "asked in the agent",
            answered_by: "agent",
        },
    };
    match asked.claude_ask {
        ClaudeAsk::Deny => HookReply {
            output: Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": ask_denied_reason(
                        asks,
                        "`hooks.claude.ask` is `deny`",
                        Some("or set `hooks.claude.ask: defer` to let Claude Code's own permissions decide"),
                    ),
                }
            })),
            outcome: Outcome {
                became: "denied by hooks.claude.ask",
                answered_by: "setting",
            },
        },
        ClaudeAsk::Ask => ask(),
        ClaudeAsk::Defer if defers(asked) => HookReply {
            output: None,
            outcome: Outcome {
                became: "deferred to the agent's own permissions",
                answered_by: "agent",
            },
        },
        ClaudeAsk::Defer => ask(),
    }
}

/// Whether Claude Code itself asks about this tool in this mode.
fn defers(asked: &Asked<'_>) -> bool {
    asked.mode.is_some_and(|m| CLAUDE_ASKING_MODES.contains(&m))
        && CLAUDE_PROMPTED_TOOLS.contains(&asked.tool)
}

fn permission_request(call: &ToolCall, decision: &Decision) -> HookReply {
    match decision.verdict {
        Verdict::Allow => HookReply {
            output: Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": { "behavior": "allow" },
                }
            })),
            outcome: ALLOWED,
        },
        Verdict::Deny => HookReply {
            output: Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": { "behavior": "deny", "message": deny_reason(call, decision) },
                }
            })),
            outcome: DENIED,
        },
        Verdict::Ask => HookReply {
            output: None,
            outcome: Outcome {
                became: "asked in the agent",
                answered_by: "agent",
            },
        },
    }
}
