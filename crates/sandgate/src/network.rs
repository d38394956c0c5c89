//! The network allow-list on a contained command: the gate that
//! `sandgate-net`'s proxy asks, with the audit log and the command's
//! stderr, for `sandgate exec` and `sandgate run` (see `sandgate_net` for
//! the design).

use std::sync::Arc;

use sandgate_net::{Gate, NetworkPolicy, Record};
use sandgate_policy::{Decision, Verdict};
use sandgate_sandbox::netns::Outside;

/// The gate of one contained command.
struct CommandGate {
    policy: NetworkPolicy,
    /// The command, named in every record and refusal.
    command: String,
    /// The surface in the audit log (`exec`, `run`).
    surface: &'static str,
    /// Where a refusal is told to the person (stderr when `None`).
    tell: Option<Tell>,
}

/// Tells the person of a refusal, in one line.
pub type Tell = Arc<dyn Fn(String) + Send + Sync>;

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
            let line = format!(
                "sandgate: network: refused {}: {}",
                record.decision.subject, record.decision.reason
            );
            match &self.tell {
                Some(tell) => tell(line),
                None => eprintln!("{line}"),
            }
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
    serve_telling(outside, policy, command, surface, None)
}

/// [`serve`], with refusals told through `tell` (`sandgate run`, whose
/// program may draw on the terminal) instead of stderr.
pub fn serve_telling(
    outside: Outside,
    policy: NetworkPolicy,
    command: &str,
    surface: &'static str,
    tell: Option<Tell>,
) -> std::io::Result<()> {
    serve_listener(outside.listener()?, policy, command, surface, tell)
}

/// [`serve`], until the returned function is called (MCP `exec_run`: the
/// proxy of a command ends with it, not with the server).
pub fn serve_stoppable(
    outside: Outside,
    policy: NetworkPolicy,
    command: &str,
    surface: &'static str,
) -> std::io::Result<Box<dyn FnOnce() + Send>> {
    let listener = outside.listener()?;
    let held = listener.try_clone()?;
    serve_listener(listener, policy, command, surface, None)?;
    Ok(Box::new(move || {
        // The serving thread's `accept` fails, and it ends, closing the socket.
        let _ = nix::sys::socket::shutdown(
            std::os::fd::AsRawFd::as_raw_fd(&held),
            nix::sys::socket::Shutdown::Both,
        );
    }))
}

fn serve_listener(
    listener: std::net::TcpListener,
    policy: NetworkPolicy,
    command: &str,
    surface: &'static str,
    tell: Option<Tell>,
) -> std::io::Result<()> {
    let gate = Arc::new(CommandGate {
        policy,
        command: command.to_string(),
        surface,
        tell,
    });
    std::thread::Builder::new()
        .name("sandgate-network".into())
        .spawn(move || sandgate_net::serve(listener, gate))?;
    Ok(())
}
