//! The command gate: deny rules, then allow rules, otherwise ask.
//!
//! Kept apart from the rest of evaluation so the matching mode can change
//! without reshaping the engine.

use crate::decision::{Decision, Verdict};
use crate::policy::Policy;
use crate::request::Context;

impl Policy {
    /// The command gate alone.
    pub fn evaluate_command(&self, command: &str, _ctx: &Context) -> Decision {
        self.evaluate_command_raw(command)
    }

    /// Raw mode (`commands.shell: false`): one regex over the whole string.
    pub fn evaluate_command_raw(&self, command: &str) -> Decision {
        if let Some(rule) = self.command_deny.first_match(command) {
            let reason = format!(
                "the command matches the deny rule `{}` ({})",
                rule.pattern, rule.origin
            );
            return Decision::by_rule(Verdict::Deny, command, rule.clone(), reason);
        }
        if let Some(rule) = self.command_allow.first_match(command) {
            let reason = format!(
                "the command matches the allow rule `{}` ({})",
                rule.pattern, rule.origin
            );
            return Decision::by_rule(Verdict::Allow, command, rule.clone(), reason);
        }
        Decision::new(Verdict::Ask, command, "no allow rule matched the command")
    }
}
