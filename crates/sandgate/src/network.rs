//! The network allow-list on a contained command: the gate that
//! `sandgate-net`'s proxy asks, with the audit log and the command's
//! stderr, for `sandgate exec` and `sandgate run` (see `sandgate_net` for
//! the design); the resolver of the command's namespace; and the route of
//! the command's direct connects (`sandgate_net::direct`), which its
//! supervisor hands every TCP connect to an address.

use std::sync::Arc;

use sandgate_net::direct::{Names, Outcome};
use sandgate_net::dns::{self, Resolver};
use sandgate_net::{Gate, NetworkPolicy, Record};
use sandgate_policy::{Decision, Verdict};
use sandgate_sandbox::netns::{Handed, Outside};
use sandgate_sandbox::supervisor::direct::{Direct, Route};

/// The gate of one contained command.
struct CommandGate {
    policy: NetworkPolicy,
    /// The command, named in every record and refusal.
    command: String,
    /// The surface in the audit log (`exec`, `run`).
    surface: &'static str,
    /// Where a refusal is told to the person (stderr when `None`).
    tell: Option<Tell>,
    /// Who answers about a host no entry decides (`None`: nobody can).
    asker: Option<Asker>,
}

/// Asks the person about the hosts no entry decides, for one command, with
/// the four usual answers ([`sandgate_tools::resolver::settle`]: an
/// "always" answer writes an `allow`/`deny` entry to the central file, as
/// every other always-answer is written). Questions are put one at a time;
/// each answer holds for the rest of the command's run (a client resolves
/// a name for IPv4 and IPv6 at once, then connects: one question).
pub struct Asker {
    policy: std::sync::Mutex<sandgate_policy::Policy>,
    ctx: sandgate_policy::Context,
    resolver: Box<dyn sandgate_policy::ask::Resolver>,
    surface: &'static str,
    /// The answers given, by the entry asked about; an error: nobody could
    /// answer, and why.
    answers: std::sync::Mutex<std::collections::HashMap<String, Result<Verdict, String>>>,
    /// Takes the policy reloaded after an "always" answer wrote to the central file.
    reloaded: Option<Box<dyn Fn(sandgate_policy::Policy) + Send + Sync>>,
}

impl Asker {
    /// An asker deciding with `policy` in `ctx`, putting questions to
    /// `resolver` (the terminal prompt of `sandgate exec`).
    pub fn new(
        policy: sandgate_policy::Policy,
        ctx: sandgate_policy::Context,
        resolver: Box<dyn sandgate_policy::ask::Resolver>,
        surface: &'static str,
    ) -> Asker {
        Asker {
            policy: std::sync::Mutex::new(policy),
            ctx,
            resolver,
            surface,
            answers: std::sync::Mutex::new(std::collections::HashMap::new()),
            reloaded: None,
        }
    }

    /// This asker, handing the policy reloaded after an "always" answer to
    /// `reloaded` too (MCP `exec_run`: the server's next call knows the entry).
    pub fn with_reloaded(
        mut self,
        reloaded: Box<dyn Fn(sandgate_policy::Policy) + Send + Sync>,
    ) -> Asker {
        self.reloaded = Some(reloaded);
        self
    }

    fn ask(
        &self,
        target: &sandgate_net::Target,
        port: u16,
        decision: &Decision,
        command: &str,
    ) -> Option<Verdict> {
        use sandgate_policy::ask::{Resolution, NETWORK_TOOL};
        let entry = sandgate_policy::network::entry_for(target, port);
        // One question at a time; an answer already given holds.
        let mut answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(answer) = answers.get(&entry) {
            return answer.as_ref().ok().copied();
        }
        let asked = Decision::new(
            Verdict::Ask,
            entry.clone(),
            format!(
                "the command `{command}` connects to {}: {}",
                sandgate_policy::network::host_port(target, port),
                decision.reason
            ),
        );
        let mut policy = self.policy.lock().unwrap_or_else(|e| e.into_inner());
        let settled = sandgate_tools::resolver::settle(
            &policy,
            &self.ctx,
            NETWORK_TOOL,
            &asked,
            &*self.resolver,
        );
        crate::audit::record_outcome(
            self.surface,
            NETWORK_TOOL,
            &settled.decision,
            crate::audit::ask_outcome(Some(&settled.resolution)),
        );
        if let Some(Err(e)) = &settled.always {
            eprintln!("sandgate: warning: {e}");
        }
        if let Some(reloaded) = settled.reloaded {
            if let Some(hand) = &self.reloaded {
                hand(reloaded.clone());
            }
            *policy = reloaded;
        }
        let answer = match settled.resolution {
            Resolution::Unavailable { reason } => Err(reason),
            _ => Ok(settled.decision.verdict),
        };
        let verdict = answer.as_ref().ok().copied();
        answers.insert(entry, answer);
        verdict
    }

    /// Why nobody could answer about `target:port`, when nobody could.
    fn why_unanswered(&self, target: &sandgate_net::Target, port: u16) -> Option<String> {
        let entry = sandgate_policy::network::entry_for(target, port);
        let answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        answers.get(&entry)?.as_ref().err().cloned()
    }
}

/// Tells the person of a refusal, in one line.
pub type Tell = Arc<dyn Fn(String) + Send + Sync>;

impl Gate for CommandGate {
    fn policy(&self) -> &NetworkPolicy {
        &self.policy
    }

    fn ask(
        &self,
        target: &sandgate_net::Target,
        port: u16,
        decision: &Decision,
    ) -> Option<Verdict> {
        self.asker
            .as_ref()?
            .ask(target, port, decision, &self.command)
    }

    fn why_unanswered(&self, target: &sandgate_net::Target, port: u16) -> Option<String> {
        self.asker.as_ref()?.why_unanswered(target, port)
    }

    fn record(&self, record: &Record) {
        let mut decision: Decision = record.decision.clone();
        decision.reason = format!(
            "{} (by the command `{}`, {})",
            decision.reason,
            self.command,
            match record.via {
                sandgate_net::Via::Direct => "by a direct connect".to_string(),
                sandgate_net::Via::Dns => "asking the resolver".to_string(),
                via => format!("through the proxy's {}", via.as_str()),
            }
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

/// The direct connects of one command: decided by its gate, with the
/// names sandgate resolved for it.
struct CommandRoute {
    gate: Arc<CommandGate>,
    names: Arc<Names>,
}

impl Route for CommandRoute {
    fn connect(&self, to: std::net::SocketAddr, _pid: u32) -> Direct {
        match sandgate_net::direct::connect(&*self.gate, &self.names, to) {
            Outcome::Connected(stream) => Direct::Outside(stream.into()),
            Outcome::Inside => Direct::Inside,
            Outcome::Refused(errno, _) => Direct::Refused(errno),
        }
    }

    fn stays_inside(&self, to: std::net::SocketAddr) -> bool {
        sandgate_net::direct::stays_inside(&*self.gate, to)
    }
}

/// Serve the proxy and resolver sockets of a command's network namespace
/// (handed over through `outside` once the command has started), each on a
/// thread of its own, for as long as this process lives; a host no entry
/// decides is asked about through `asker` (`sandgate exec`, which has the
/// terminal prompt), or refused without one. Returns the route of the
/// command's direct connects, for its supervisor.
pub fn serve(
    outside: Outside,
    policy: NetworkPolicy,
    command: &str,
    surface: &'static str,
    asker: Option<Asker>,
) -> std::io::Result<Arc<dyn Route>> {
    let (route, _) = serve_handed(outside.take()?, policy, command, surface, None, asker)?;
    Ok(route)
}

/// [`serve`], with refusals told through `tell` (`sandgate run`, whose
/// program may draw on the terminal) instead of stderr.
pub fn serve_telling(
    outside: Outside,
    policy: NetworkPolicy,
    command: &str,
    surface: &'static str,
    tell: Option<Tell>,
    asker: Option<Asker>,
) -> std::io::Result<Arc<dyn Route>> {
    let (route, _) = serve_handed(outside.take()?, policy, command, surface, tell, asker)?;
    Ok(route)
}

/// [`serve`], until the returned function is called (MCP `exec_run`: the
/// proxy and resolver of a command end with it, not with the server).
pub fn serve_stoppable(
    outside: Outside,
    policy: NetworkPolicy,
    command: &str,
    surface: &'static str,
    asker: Option<Asker>,
) -> std::io::Result<sandgate_tools::dispatch::ServedNetwork> {
    let handed = outside.take()?;
    let held = (
        handed.proxy.try_clone()?,
        handed.dns_udp.try_clone()?,
        handed.dns_tcp.try_clone()?,
    );
    let (route, resolver) = serve_handed(handed, policy, command, surface, None, asker)?;
    let stop = Box::new(move || {
        resolver.stop();
        // Each serving thread's `accept` or `recv` fails or returns, and it
        // ends, closing its socket.
        for fd in [
            std::os::fd::AsRawFd::as_raw_fd(&held.0),
            std::os::fd::AsRawFd::as_raw_fd(&held.1),
            std::os::fd::AsRawFd::as_raw_fd(&held.2),
        ] {
            let _ = nix::sys::socket::shutdown(fd, nix::sys::socket::Shutdown::Both);
        }
    });
    Ok((stop, route))
}

/// What [`serve_handed`] started: the route of direct connects, and the
/// resolver (to stop).
type Served = (Arc<dyn Route>, Arc<Resolver<CommandGate>>);

fn serve_handed(
    handed: Handed,
    policy: NetworkPolicy,
    command: &str,
    surface: &'static str,
    tell: Option<Tell>,
    asker: Option<Asker>,
) -> std::io::Result<Served> {
    let gate = Arc::new(CommandGate {
        policy,
        command: command.to_string(),
        surface,
        tell,
        asker,
    });
    let names = Arc::new(Names::new());
    let route = Arc::new(CommandRoute {
        gate: Arc::clone(&gate),
        names: Arc::clone(&names),
    });
    let resolver = Arc::new(Resolver::new(Arc::clone(&gate), names));
    let (udp, tcp) = (handed.dns_udp, handed.dns_tcp);
    let (over_udp, over_tcp) = (Arc::clone(&resolver), Arc::clone(&resolver));
    std::thread::Builder::new()
        .name("sandgate-dns".into())
        .spawn(move || dns::serve_udp(udp, over_udp))?;
    std::thread::Builder::new()
        .name("sandgate-dns-tcp".into())
        .spawn(move || dns::serve_tcp(tcp, over_tcp))?;
    let listener = handed.proxy;
    std::thread::Builder::new()
        .name("sandgate-network".into())
        .spawn(move || sandgate_net::serve(listener, gate))?;
    Ok((route, resolver))
}
