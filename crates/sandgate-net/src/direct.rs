//! Direct connects: a contained program's own TCP `connect()` to an
//! address (it ignored the proxy variables), decided by the lists and made
//! from sandgate's namespace (see the crate documentation for where this is
//! hooked in and why).
//!
//! An address is allowed when the address itself is listed with its port,
//! or when it maps back to a listed name: one sandgate's resolver answered
//! with that address ([`Names::learn`]), or one of the exact names of the
//! allow list that sandgate's own resolution gives that address (looked up
//! again at most every [`RELOOK`]). The name must then pass
//! [`NetworkPolicy::decide_address`] as through the proxy (no DNS rebinding
//! onto local services). A loopback or unspecified address that no entry
//! names is the namespace's own: the program's connection stays inside.
//!
//! [`NetworkPolicy::decide_address`]: sandgate_policy::network::NetworkPolicy::decide_address

use std::collections::{HashMap, HashSet};
use std::io;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sandgate_policy::network::{entry_for, host_port, normalize, HostPattern};
use sandgate_policy::{Decision, Verdict};

use crate::{decide, Gate, Record, Refused, Target, Via, CONNECT_TIMEOUT};

/// How often the exact listed names are resolved again to map an address
/// back to one of them.
pub const RELOOK: Duration = Duration::from_secs(30);

/// Which listed names map to which addresses, as sandgate resolved them.
#[derive(Debug, Default)]
pub struct Names {
    by_address: Mutex<HashMap<IpAddr, HashSet<String>>>,
    looked: Mutex<Option<Instant>>,
}

impl Names {
    /// A map with nothing in it.
    pub fn new() -> Names {
        Names::default()
    }

    /// `name` resolved to `addrs` (sandgate answered a program with them).
    pub fn learn(&self, name: &str, addrs: &[IpAddr]) {
        let mut map = self.by_address.lock().unwrap_or_else(|e| e.into_inner());
        for addr in addrs {
            map.entry(normalize(*addr))
                .or_default()
                .insert(name.to_ascii_lowercase());
        }
    }

    /// The names that resolved to `addr`, sorted.
    pub fn names_of(&self, addr: IpAddr) -> Vec<String> {
        let map = self.by_address.lock().unwrap_or_else(|e| e.into_inner());
        let mut names: Vec<String> = map
            .get(&normalize(addr))
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Resolves the exact names of the allow list again, unless that was
    /// done less than [`RELOOK`] ago. Returns whether it did.
    fn look_up_listed<G: Gate + ?Sized>(&self, gate: &G, port: u16) -> bool {
        {
            let mut looked = self.looked.lock().unwrap_or_else(|e| e.into_inner());
            if looked.is_some_and(|at| at.elapsed() < RELOOK) {
                return false;
            }
            *looked = Some(Instant::now());
        }
        let (_, allow) = gate.policy().entries();
        let names: HashSet<String> = allow
            .iter()
            .filter_map(|e| match &e.host {
                HostPattern::Name(n) => Some(n.clone()),
                _ => None,
            })
            .collect();
        for name in names {
            if let Ok(addrs) = gate.resolve(&name, port) {
                self.learn(&name, &addrs);
            }
        }
        true
    }
}

/// What becomes of a direct connect.
#[derive(Debug)]
pub enum Outcome {
    /// Allowed, and connected from sandgate's namespace.
    Connected(TcpStream),
    /// The namespace's own loopback: connect the program's socket as it asked.
    Inside,
    /// Not connected: the errno for the program, and the words for the person.
    Refused(i32, Refused),
}

/// Whether a program's connect to `to` stays in its namespace
/// ([`Outcome::Inside`]): loopback or the unspecified address, unless an
/// entry allows that address and port (a server of the machine's). Decided
/// by the lists alone, without blocking.
pub fn stays_inside<G: Gate + ?Sized>(gate: &G, to: SocketAddr) -> bool {
    let ip = normalize(to.ip());
    stays(ip, &gate.policy().decide(&Target::Addr(ip), to.port()))
}

fn stays(ip: IpAddr, by_address: &Decision) -> bool {
    (ip.is_loopback() || ip.is_unspecified()) && by_address.verdict != Verdict::Allow
}

/// Decide and make a program's TCP connect to `to` (as the program wrote
/// it; an IPv4-mapped address is decided as its IPv4 address and connected
/// as written, so the socket keeps the program's family). Asks where the
/// lists do not decide; every decision but a stay on loopback is recorded.
pub fn connect<G: Gate + ?Sized>(gate: &G, names: &Names, to: SocketAddr) -> Outcome {
    let ip = normalize(to.ip());
    let port = to.port();
    let policy = gate.policy();
    let at = Target::Addr(ip);
    let by_address = policy.decide(&at, port);
    if stays(ip, &by_address) {
        return Outcome::Inside;
    }
    if by_address.verdict == Verdict::Allow {
        return finish(gate, &at, port, to, by_address);
    }
    let mut mapped = names.names_of(ip);
    if mapped.is_empty() && names.look_up_listed(gate, port) {
        mapped = names.names_of(ip);
    }
    // A name the lists allow, whose address passes too.
    let mut refusal = None;
    for name in &mapped {
        let target = Target::Name(name.clone());
        let decision = policy.decide(&target, port);
        if decision.verdict != Verdict::Allow {
            continue;
        }
        let checked = policy.decide_address(&target, ip, port);
        if checked.verdict == Verdict::Allow {
            return finish(gate, &target, port, to, joined(decision, &checked));
        }
        refusal.get_or_insert((target, checked));
    }
    if let Some((target, checked)) = refusal {
        return refuse(gate, &target, port, checked, &at);
    }
    // Nothing decides it: ask about the name the program resolved, or the
    // address when it resolved none through sandgate.
    let target = match mapped.first() {
        Some(name) => Target::Name(name.clone()),
        None => at.clone(),
    };
    let decision = decide(gate, &target, port);
    if decision.verdict != Verdict::Allow {
        return refuse(gate, &target, port, decision, &target);
    }
    if let Target::Name(_) = target {
        let checked = policy.decide_address(&target, ip, port);
        if checked.verdict != Verdict::Allow {
            return refuse(gate, &target, port, checked, &at);
        }
        return finish(gate, &target, port, to, joined(decision, &checked));
    }
    finish(gate, &target, port, to, decision)
}

fn joined(decision: Decision, checked: &Decision) -> Decision {
    if checked.rule.is_some() {
        Decision {
            reason: format!("{}; {}", decision.reason, checked.reason),
            ..decision
        }
    } else {
        decision
    }
}

fn record<G: Gate + ?Sized>(gate: &G, target: &Target, port: u16, decision: &Decision) {
    gate.record(&Record {
        host: target.to_string(),
        port,
        via: Via::Direct,
        peer: None,
        decision: decision.clone(),
    });
}

/// Connect to `to` from sandgate's namespace, allowed by `decision`.
fn finish<G: Gate + ?Sized>(
    gate: &G,
    target: &Target,
    port: u16,
    to: SocketAddr,
    decision: Decision,
) -> Outcome {
    match TcpStream::connect_timeout(&to, CONNECT_TIMEOUT) {
        Ok(stream) => {
            record(gate, target, port, &decision);
            Outcome::Connected(stream)
        }
        Err(e) => {
            let errno = errno_of(&e);
            let failed = Decision {
                reason: format!(
                    "{}; allowed, but the connection failed: {e}",
                    decision.reason
                ),
                ..decision
            };
            record(gate, target, port, &failed);
            Outcome::Refused(
                errno,
                Refused {
                    host_port: host_port(target, port),
                    reason: failed.reason,
                    allow_with: None,
                },
            )
        }
    }
}

/// Refuse by `decision`; `allow` is the host whose entry would allow it.
fn refuse<G: Gate + ?Sized>(
    gate: &G,
    target: &Target,
    port: u16,
    decision: Decision,
    allow: &Target,
) -> Outcome {
    record(gate, target, port, &decision);
    // A deny entry's refusal is not undone by an allow entry.
    let allow_with = decision
        .rule
        .is_none()
        .then(|| format!("sandgate policy allow domain {}", entry_for(allow, port)));
    Outcome::Refused(
        EACCES,
        Refused {
            host_port: host_port(target, port),
            reason: decision.reason,
            allow_with,
        },
    )
}

/// `EACCES` (Linux's number): what a refused direct connect fails with, as
/// a local firewall rule fails it, so that a client reports "Permission
/// denied" rather than a server that is down.
pub const EACCES: i32 = 13;
/// `ETIMEDOUT` (Linux's number).
const ETIMEDOUT: i32 = 110;
/// `ECONNREFUSED` (Linux's number).
const ECONNREFUSED: i32 = 111;

fn errno_of(e: &io::Error) -> i32 {
    match (e.raw_os_error(), e.kind()) {
        (Some(errno), _) => errno,
        (None, io::ErrorKind::TimedOut) => ETIMEDOUT,
        (None, _) => ECONNREFUSED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NetworkPolicy;
    use std::net::TcpListener;

    struct Lists(NetworkPolicy);
    impl Gate for Lists {
        fn policy(&self) -> &NetworkPolicy {
            &self.0
        }
        fn resolve(&self, name: &str, _port: u16) -> io::Result<Vec<IpAddr>> {
            match name {
                "listed.test" => Ok(vec!["127.0.0.1".parse().unwrap()]),
                _ => Err(io::Error::other("no such name")),
            }
        }
    }

    #[test]
    fn a_listed_address_is_connected_and_an_unlisted_loopback_stays_inside() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        let gate = Lists(NetworkPolicy::from_lists(&[&format!("127.0.0.1:{port}")], &[]).unwrap());
        let names = Names::new();
        let to: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        assert!(matches!(connect(&gate, &names, to), Outcome::Connected(_)));
        let other: SocketAddr = format!("127.0.0.1:{}", port ^ 1).parse().unwrap();
        assert!(matches!(connect(&gate, &names, other), Outcome::Inside));
    }

    #[test]
    fn an_unlisted_public_address_is_refused_with_the_command_that_would_allow_it() {
        let gate = Lists(NetworkPolicy::from_lists(&["listed.test"], &["192.0.2.9:443"]).unwrap());
        let names = Names::new();
        let Outcome::Refused(errno, refused) =
            connect(&gate, &names, "198.51.100.7:443".parse().unwrap())
        else {
            panic!("not refused");
        };
        assert_eq!(errno, 13);
        assert_eq!(
            refused.allow_with.as_deref(),
            Some("sandgate policy allow domain 198.51.100.7")
        );
        let Outcome::Refused(_, refused) =
            connect(&gate, &names, "[::ffff:192.0.2.9]:443".parse().unwrap())
        else {
            panic!("not refused");
        };
        assert_eq!(refused.allow_with, None, "a deny entry decided it");
    }

    #[test]
    fn a_name_that_resolved_to_a_local_address_needs_the_address_listed_too() {
        let gate = Lists(NetworkPolicy::from_lists(&["listed.test:8080"], &[]).unwrap());
        let names = Names::new();
        names.learn("listed.test", &["10.1.2.3".parse().unwrap()]);
        let Outcome::Refused(_, refused) = connect(&gate, &names, "10.1.2.3:8080".parse().unwrap())
        else {
            panic!("not refused");
        };
        assert!(
            refused.reason.contains("private address"),
            "{}",
            refused.reason
        );
        assert_eq!(
            refused.allow_with.as_deref(),
            Some("sandgate policy allow domain 10.1.2.3:8080")
        );
        assert_eq!(
            names.names_of("::ffff:10.1.2.3".parse().unwrap()),
            ["listed.test"]
        );
    }
}
