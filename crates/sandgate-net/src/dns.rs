//! The resolver of a contained program's network namespace: DNS over UDP
//! and TCP on the namespace's `127.0.0.1:53`, served from outside (the
//! sockets are made inside and handed out, as the proxy's is), answering
//! only names the lists allow.
//!
//! A query names one host. When the allow list lets some port of that
//! name through ([`NetworkPolicy::names_host`]), sandgate resolves it
//! itself ([`Gate::resolve`]) and answers its `A` (IPv4) or `AAAA` (IPv6)
//! addresses; every other type of query for such a name gets an empty
//! answer. Each answer is remembered ([`Names::learn`]), so that a direct
//! connect to one of the addresses maps back to the name. Any other name,
//! where the lists do not decide it and a person allows it when asked
//! ([`Gate::ask`]) is refused with `NXDOMAIN`, *before* anything is
//! resolved: no query for a name that is not allowed leaves the machine.
//!
//! Only the few parts of the DNS message format this needs are read and
//! written here (a header, one question, address answers), so no DNS
//! crate is taken on: the parser reads a question, nothing that a server
//! sent, and refuses what it does not know (`FORMERR`). A query with
//! compression in its question, several questions or a truncated name is
//! refused.
//!
//! [`NetworkPolicy::names_host`]: sandgate_policy::network::NetworkPolicy::names_host

use std::collections::HashSet;
use std::io::{self, Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sandgate_policy::network::host_port;
use sandgate_policy::{Decision, Verdict};

use crate::direct::Names;
use crate::{Gate, Record, Target, Via};

/// The time to live of an answer, in seconds: short, so that a program
/// asks again and the answer stays the one sandgate's resolution gives.
pub const TTL: u32 = 30;
/// The largest answer over UDP without EDNS.
const UDP_LIMIT: usize = 512;
/// How many queries are answered at once; more are dropped (the client
/// asks again).
const MAX_QUERIES: usize = 64;
/// How long a TCP client has to send a query.
const TCP_TIMEOUT: Duration = Duration::from_secs(10);

/// `A`.
pub const TYPE_A: u16 = 1;
/// `AAAA`.
pub const TYPE_AAAA: u16 = 28;

/// Response codes.
const NOERROR: u8 = 0;
const FORMERR: u8 = 1;
const SERVFAIL: u8 = 2;
const NXDOMAIN: u8 = 3;
const NOTIMP: u8 = 4;

/// One question, as read from a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The name, lower case, without the trailing dot.
    pub name: String,
    /// The query type.
    pub qtype: u16,
    /// The query class.
    pub qclass: u16,
    /// Where the question ends in the query.
    end: usize,
}

/// Reads the one question of `query`; `Err` is the response code.
pub fn question(query: &[u8]) -> Result<Question, u8> {
    if query.len() < 12 {
        return Err(FORMERR);
    }
    // QR set: not a query.
    if query[2] & 0x80 != 0 {
        return Err(FORMERR);
    }
    let opcode = (query[2] >> 3) & 0x0f;
    if opcode != 0 {
        return Err(NOTIMP);
    }
    let count = |at: usize| u16::from_be_bytes([query[at], query[at + 1]]);
    if count(4) != 1 || count(6) != 0 || count(8) != 0 {
        return Err(FORMERR);
    }
    let mut at = 12;
    let mut labels: Vec<String> = Vec::new();
    let mut total = 0usize;
    loop {
        let len = usize::from(*query.get(at).ok_or(FORMERR)?);
        at += 1;
        if len == 0 {
            break;
        }
        // Compression (0xc0) or the reserved label types.
        if len > 63 {
            return Err(FORMERR);
        }
        let label = query.get(at..at + len).ok_or(FORMERR)?;
        total += len + 1;
        if total > 254 {
            return Err(FORMERR);
        }
        labels.push(String::from_utf8_lossy(label).to_ascii_lowercase());
        at += len;
    }
    let fixed = query.get(at..at + 4).ok_or(FORMERR)?;
    Ok(Question {
        name: labels.join("."),
        qtype: u16::from_be_bytes([fixed[0], fixed[1]]),
        qclass: u16::from_be_bytes([fixed[2], fixed[3]]),
        end: at + 4,
    })
}

/// The response to `query` with code `rcode`, its question and `addrs` as
/// answers (each of the question's type), cut to `limit` bytes with the
/// truncation bit set where they do not fit.
pub fn response(
    query: &[u8],
    q: Option<&Question>,
    rcode: u8,
    addrs: &[IpAddr],
    limit: usize,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(limit.min(UDP_LIMIT));
    let id = query.get(..2).unwrap_or(&[0, 0]);
    out.extend_from_slice(id);
    // QR, the query's opcode and RD; RA.
    let flags0 = 0x80 | (query.get(2).copied().unwrap_or(0) & 0x79);
    out.push(flags0);
    out.push(0x80 | (rcode & 0x0f));
    let qd = u16::from(q.is_some());
    out.extend_from_slice(&qd.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    let Some(q) = q else {
        return out;
    };
    out.extend_from_slice(&query[12..q.end]);
    let mut answers = 0u16;
    for addr in addrs {
        let data: Vec<u8> = match addr {
            IpAddr::V4(a) => a.octets().to_vec(),
            IpAddr::V6(a) => a.octets().to_vec(),
        };
        // A pointer to the question's name, type, class, TTL, length, data.
        let size = 2 + 2 + 2 + 4 + 2 + data.len();
        if out.len() + size > limit {
            out[2] |= 0x02; // TC
            break;
        }
        out.extend_from_slice(&[0xc0, 12]);
        out.extend_from_slice(&q.qtype.to_be_bytes());
        out.extend_from_slice(&1u16.to_be_bytes());
        out.extend_from_slice(&TTL.to_be_bytes());
        out.extend_from_slice(&(data.len() as u16).to_be_bytes());
        out.extend_from_slice(&data);
        answers += 1;
    }
    out[6..8].copy_from_slice(&answers.to_be_bytes());
    out
}

/// The resolver of one contained program: its gate, and the names it
/// answered, shared with its direct connects.
pub struct Resolver<G: Gate + ?Sized> {
    gate: Arc<G>,
    names: Arc<Names>,
    /// Names whose refusal was recorded already (a client asks for `A`
    /// and `AAAA` at once, and again on every retry).
    refused: Mutex<HashSet<String>>,
    /// Set by [`Resolver::stop`]: the serving loops end.
    stopped: AtomicBool,
}

impl<G: Gate + ?Sized> Resolver<G> {
    /// A resolver that decides by `gate` and remembers its answers in `names`.
    pub fn new(gate: Arc<G>, names: Arc<Names>) -> Resolver<G> {
        Resolver {
            gate,
            names,
            refused: Mutex::new(HashSet::new()),
            stopped: AtomicBool::new(false),
        }
    }

    /// Ends the serving loops once their sockets are shut down (a shut-down
    /// UDP socket receives empty datagrams, which are never queries).
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// The answer to `query`, at most `limit` bytes.
    pub fn answer(&self, query: &[u8], limit: usize) -> Vec<u8> {
        let q = match question(query) {
            Ok(q) => q,
            Err(rcode) => return response(query, None, rcode, &[], limit),
        };
        if q.qclass != 1 {
            return response(query, Some(&q), NOTIMP, &[], limit);
        }
        let Some(target) = Target::parse(&q.name) else {
            return response(query, Some(&q), NXDOMAIN, &[], limit);
        };
        if let Target::Addr(_) = target {
            // An address is its own answer, and no query.
            return response(query, Some(&q), NXDOMAIN, &[], limit);
        }
        if !self.allowed(&target) {
            return response(query, Some(&q), NXDOMAIN, &[], limit);
        }
        if q.qtype != TYPE_A && q.qtype != TYPE_AAAA {
            return response(query, Some(&q), NOERROR, &[], limit);
        }
        let addrs = match self.gate.resolve(&q.name, 0) {
            Ok(addrs) => addrs,
            Err(_) => return response(query, Some(&q), NXDOMAIN, &[], limit),
        };
        if addrs.is_empty() {
            return response(query, Some(&q), SERVFAIL, &[], limit);
        }
        self.names.learn(&q.name, &addrs);
        let wanted: Vec<IpAddr> = addrs
            .into_iter()
            .filter(|a| a.is_ipv4() == (q.qtype == TYPE_A))
            .collect();
        response(query, Some(&q), NOERROR, &wanted, limit)
    }

    /// Whether `name` may be resolved: some port of it is allowed, or a
    /// person allows it when asked. A refusal is recorded once per name.
    fn allowed(&self, target: &Target) -> bool {
        let policy = self.gate.policy();
        if policy.names_host(target) {
            return true;
        }
        // The decision on the usual port, for its words and to ask about.
        let port = 443;
        let decision = policy.decide(target, port);
        let decision = if decision.verdict == Verdict::Ask {
            let answered = crate::answer_ask(&*self.gate, target, port, decision);
            if answered.verdict == Verdict::Allow {
                return true;
            }
            answered
        } else {
            decision
        };
        let name = target.to_string();
        // A name serves every port: say how to allow another one too.
        let reason = match &decision.rule {
            Some(_) => format!("the name `{name}` was not resolved: {}", decision.reason),
            None => format!(
                "the name `{name}` was not resolved: no network allow entry names it \
                 (`sandgate policy allow domain {name}` would allow it for ports 80 and 443, \
                 `sandgate policy allow domain {name}:PORT` for another port){}",
                decision
                    .reason
                    .rsplit_once("; ")
                    .map(|(_, why)| format!("; {why}"))
                    .unwrap_or_default()
            ),
        };
        let first = self
            .refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.clone());
        if first {
            let subject = host_port(target, port);
            self.gate.record(&Record {
                host: name.clone(),
                port,
                via: Via::Dns,
                peer: None,
                decision: Decision {
                    subject,
                    reason,
                    ..decision
                },
            });
        }
        false
    }
}

/// Answers the queries that arrive on `socket` (UDP) until it fails for
/// good, each on a thread of its own.
pub fn serve_udp<G: Gate + ?Sized>(
    socket: UdpSocket,
    resolver: Arc<Resolver<G>>,
) -> io::Result<()> {
    let active = Arc::new(AtomicUsize::new(0));
    let socket = Arc::new(socket);
    let mut buf = [0u8; 4096];
    loop {
        let (n, from) = match socket.recv_from(&mut buf) {
            Ok(got) => got,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if resolver.stopped.load(Ordering::SeqCst) {
            return Ok(());
        }
        if active.load(Ordering::SeqCst) >= MAX_QUERIES {
            continue;
        }
        let query = buf[..n].to_vec();
        let (socket, resolver) = (Arc::clone(&socket), Arc::clone(&resolver));
        spawn_counted(&active, "sandgate-dns", move || {
            let answer = resolver.answer(&query, UDP_LIMIT);
            let _ = socket.send_to(&answer, from);
        });
    }
}

/// Runs `work` on a thread of its own named `name`, counted in `active`
/// while it runs (the caller has checked `active` against [`MAX_QUERIES`]).
/// A thread that cannot be started is not counted.
fn spawn_counted(active: &Arc<AtomicUsize>, name: &str, work: impl FnOnce() + Send + 'static) {
    active.fetch_add(1, Ordering::SeqCst);
    let active_thread = Arc::clone(active);
    let spawned = std::thread::Builder::new()
        .name(name.into())
        .stack_size(128 * 1024)
        .spawn(move || {
            work();
            active_thread.fetch_sub(1, Ordering::SeqCst);
        });
    if spawned.is_err() {
        active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Answers the connections that arrive on `listener` (DNS over TCP), each
/// on a thread of its own, until it fails for good.
pub fn serve_tcp<G: Gate + ?Sized>(
    listener: TcpListener,
    resolver: Arc<Resolver<G>>,
) -> io::Result<()> {
    let active = Arc::new(AtomicUsize::new(0));
    loop {
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if crate::retry_accept(&e) => continue,
            Err(e) => return Err(e),
        };
        if resolver.stopped.load(Ordering::SeqCst) {
            return Ok(());
        }
        if active.load(Ordering::SeqCst) >= MAX_QUERIES {
            continue;
        }
        let resolver = Arc::clone(&resolver);
        spawn_counted(&active, "sandgate-dns-tcp", move || {
            let _ = serve_stream(stream, &resolver);
        });
    }
}

/// The queries of one TCP connection, each with its two-byte length.
fn serve_stream<G: Gate + ?Sized>(mut stream: TcpStream, resolver: &Resolver<G>) -> io::Result<()> {
    stream.set_read_timeout(Some(TCP_TIMEOUT))?;
    loop {
        let mut len = [0u8; 2];
        match stream.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        let mut query = vec![0u8; usize::from(u16::from_be_bytes(len))];
        stream.read_exact(&mut query)?;
        let answer = resolver.answer(&query, usize::from(u16::MAX));
        stream.write_all(&(answer.len() as u16).to_be_bytes())?;
        stream.write_all(&answer)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NetworkPolicy;

    fn query(name: &str, qtype: u16) -> Vec<u8> {
        let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for label in name.split('.') {
            q.push(label.len() as u8);
            q.extend_from_slice(label.as_bytes());
        }
        q.push(0);
        q.extend_from_slice(&qtype.to_be_bytes());
        q.extend_from_slice(&1u16.to_be_bytes());
        q
    }

    struct Lists(NetworkPolicy, Mutex<Vec<String>>);
    impl Gate for Lists {
        fn policy(&self) -> &NetworkPolicy {
            &self.0
        }
        fn resolve(&self, name: &str, _port: u16) -> io::Result<Vec<IpAddr>> {
            self.1.lock().unwrap().push(name.to_string());
            Ok(vec![
                "192.0.2.5".parse().unwrap(),
                "2001:db8::5".parse().unwrap(),
            ])
        }
    }

    fn resolver() -> (Arc<Lists>, Resolver<Lists>, Arc<Names>) {
        let gate = Arc::new(Lists(
            NetworkPolicy::from_lists(
                &["listed.test", "*.wild.test:8443"],
                &["bad.wild.test:8443"],
            )
            .unwrap(),
            Mutex::new(Vec::new()),
        ));
        let names = Arc::new(Names::new());
        (
            Arc::clone(&gate),
            Resolver::new(gate, Arc::clone(&names)),
            names,
        )
    }

    #[test]
    fn a_listed_name_is_answered_and_remembered() {
        let (gate, r, names) = resolver();
        let a = r.answer(&query("Listed.Test", TYPE_A), UDP_LIMIT);
        assert_eq!(a[3] & 0x0f, NOERROR);
        assert_eq!(u16::from_be_bytes([a[6], a[7]]), 1);
        assert_eq!(&a[a.len() - 4..], &[192, 0, 2, 5]);
        let aaaa = r.answer(&query("a.wild.test", TYPE_AAAA), UDP_LIMIT);
        assert_eq!(u16::from_be_bytes([aaaa[6], aaaa[7]]), 1);
        assert_eq!(aaaa[aaaa.len() - 16], 0x20);
        assert_eq!(
            names.names_of("192.0.2.5".parse().unwrap()),
            ["a.wild.test", "listed.test"]
        );
        assert_eq!(*gate.1.lock().unwrap(), ["listed.test", "a.wild.test"]);
    }

    #[test]
    fn an_unlisted_or_denied_name_is_refused_without_being_resolved() {
        let (gate, r, _) = resolver();
        for name in ["other.test", "bad.wild.test", "wild.test"] {
            let a = r.answer(&query(name, TYPE_A), UDP_LIMIT);
            assert_eq!(a[3] & 0x0f, NXDOMAIN, "{name}");
            assert_eq!(u16::from_be_bytes([a[6], a[7]]), 0);
        }
        assert!(gate.1.lock().unwrap().is_empty());
    }

    #[test]
    fn what_it_cannot_read_is_a_format_error() {
        let (_, r, _) = resolver();
        let mut compressed = query("listed.test", TYPE_A);
        compressed.truncate(12);
        compressed.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1]);
        for bad in [
            &b"\x12"[..],
            &compressed,
            &query("listed.test", TYPE_A)[..20],
        ] {
            let a = r.answer(bad, UDP_LIMIT);
            assert_eq!(a[3] & 0x0f, FORMERR, "{bad:?}");
        }
        let mut two = query("listed.test", TYPE_A);
        two[5] = 2;
        assert_eq!(r.answer(&two, UDP_LIMIT)[3] & 0x0f, FORMERR);
    }

    #[test]
    fn other_types_of_a_listed_name_get_an_empty_answer() {
        let (gate, r, _) = resolver();
        let txt = r.answer(&query("listed.test", 16), UDP_LIMIT);
        assert_eq!(txt[3] & 0x0f, NOERROR);
        assert_eq!(u16::from_be_bytes([txt[6], txt[7]]), 0);
        assert!(gate.1.lock().unwrap().is_empty());
    }
}
