//! The network allow-list on a contained command: the gate that
//! `sandgate-net`'s proxy asks, with the audit log and the command's
//! stderr, for `sandgate exec` (see `sandgate_net` for the design).

use std::sync::Arc;

use sandgate_net::{Gate, NetworkPolicy, Record};
use sandgate_policy::{Decision, Verdict};
use sandgate_sandbox::netns::Outside;

/// The gate of one contained command.
struct CommandGate {
    policy: NetworkPolicy,
    /// The command, named in every record and refusal.
    command: String,
    /// The surface in the audit log (`exec`).
    surface: &'static str,
}

impl Gate for CommandGate {
    fn policy(&self) -> &NetworkPolicy {
        &self.policy
    }

    fn record(&self, record: &Record) {
        let mut decision: Decision = record.decision.clone();
        decision.reason = format!(
            "{} (by the command `{}`, through the proxy's {})",
            decision.reason,
            self.command,
            record.via.as_str()
        );
        crate::audit::record(self.surface, "network", &decision);
        if decision.verdict != Verdict::Allow {
            eprintln!(
                "sandgate: network: refused {}: {}",
                record.decision.subject, record.decision.reason
            );
        }
    }
}

/// Serve the proxy socket of a command's network namespace (handed over
/// through `outside` once the command has started) on a thread of its own,
/// for as long as this process lives.
pub fn serve(
    outside: Outside,
    policy: NetworkPolicy,
    command: &str,
    surface: &'static str,
) -> std::io::Result<()> {
    let listener = outside.listener()?;
    let gate = Arc::new(CommandGate {
        policy,
        command: command.to_string(),
        surface,
    });
    std::thread::Builder::new()
        .name("sandgate-network".into())
        .spawn(move || sandgate_net::serve(listener, gate))?;
    Ok(())
}
