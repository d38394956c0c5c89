//! The network allow-list (`permissions.network`) where it is enforced: a
//! filtering proxy, a resolver and a route for direct connects, which
//! contained programs reach from a network namespace of their own.
//!
//! # Design, and why
//!
//! A contained program runs in a network namespace that holds only a
//! loopback interface: no route leads out of it, so nothing the program does
//! by itself (a UDP packet to port 53, `dig @8.8.8.8`, a raw socket, IPv6)
//! reaches another machine. The ways out are sockets that sandgate creates
//! *inside* that namespace (a socket belongs to the namespace it was made
//! in) and then serves from *outside*, with this crate, and the program's
//! own TCP connects, which sandgate's seccomp supervisor holds. Whatever
//! the program does, sandgate decides where it goes, resolves names itself
//! and connects from its own namespace. This is the namespace design of
//! srt and Codex, without their bridge process: the sockets are handed out
//! of the namespace once, over a socket pair, before the program starts.
//! It fails closed: if sandgate dies, the sockets and the supervisor die
//! with it and the namespace has no way out at all.
//!
//! ## The proxy
//!
//! The program connects to `127.0.0.1:3128` (the proxy variables say so),
//! sandgate accepts, reads what the program asks for and decides it. The
//! one port speaks three protocols, told apart by the first byte:
//!
//! - **HTTP `CONNECT host:port`** (what `HTTPS_PROXY` makes clients send):
//!   checked by its host and port. When the program then starts TLS, its
//!   ClientHello is read before a byte goes out: a server name (SNI) other
//!   than the `CONNECT` host is refused (domain fronting); to an address, a
//!   server name must be allowed itself.
//! - **Plain HTTP** (`GET http://host/path`, what `HTTP_PROXY` makes
//!   clients send): checked by the URL's host, and a `Host` header naming
//!   another host is refused. The request goes out with `Connection: close`,
//!   so every request on a connection is checked.
//! - **SOCKS5** (`ALL_PROXY=socks5h://…`), `CONNECT` only, by name or
//!   address; `BIND` and `UDP ASSOCIATE` are refused.
//!
//! Once a connection is decided (and a tunnel's first TLS record checked),
//! what sandgate read of it already goes to the host first, then the two
//! sockets are joined, one thread per direction, with `splice(2)` through
//! a pipe: the bytes stay in the kernel, never copied into sandgate and out
//! again. Where the kernel cannot splice (`EINVAL`, `ENOSYS`), they go
//! through a buffer. When one side ends its sending, the other side's
//! sending is ended (half-close), as a direct connection would.
//!
//! ## Direct connects ([`direct`])
//!
//! A program that ignores the proxy variables (`curl --noproxy '*'`,
//! Python's `socket.create_connection`, `ssh`) resolves a name and
//! `connect()`s to an address. Two designs were open: a bridge (a virtual
//! interface and a user-space TCP/IP stack or a relay process in the
//! namespace, as srt and Codex route traffic), or routing the `connect`
//! the seccomp supervisor already intercepts. We route the `connect`:
//! every `connect` of the command goes to the supervisor
//! (`sandgate_sandbox::supervisor::direct`), which hands a TCP connect to
//! an IPv4 or IPv6 address to [`direct::connect`]. Allowed, sandgate
//! connects a socket of its own from its namespace and the supervisor puts
//! it in the program's place (`SECCOMP_IOCTL_NOTIF_ADDFD` with
//! `SECCOMP_ADDFD_FLAG_SETFD`, at the program's descriptor number, with its
//! `O_NONBLOCK`, close-on-exec, `TCP_NODELAY` and `SO_KEEPALIVE`): the
//! program then holds a real TCP socket to the host, so every later call
//! (`getpeername`, `setsockopt`, `sendfile`, `splice`) behaves as outside,
//! at no cost per byte. No packet is copied and no extra process or
//! interface exists, and nothing in the namespace can route around it.
//! Refused, the call fails with `EACCES` (as a local firewall rule fails
//! it), the audit log records it, and sandgate's stderr names the host and
//! the command that would allow it.
//!
//! An address is allowed when it is listed itself with its port, or when
//! it maps back to a listed name that sandgate resolved to it (through its
//! resolver, or the exact listed names resolved again at most every
//! [`direct::RELOOK`]); the name's address must pass
//! [`NetworkPolicy::decide_address`] as through the proxy. A loopback or
//! unspecified address that no entry names is the namespace's own (the
//! proxy, the resolver, a server the program started): connected there.
//! UDP, raw and other sockets are not routed: they stay in the namespace,
//! where nothing leads out. IPv6 is decided exactly as IPv4 (an
//! IPv4-mapped address as its IPv4 address).
//!
//! What a direct connect does not check that the proxy does: the TLS server
//! name. A direct connect is decided by address, so a program may reach,
//! at a listed host's address, another name served from the same address
//! (a shared CDN address): that is the limit of any address filter, and
//! why clients that honour the proxy variables get the name checked too.
//!
//! ## The resolver ([`dns`])
//!
//! So that programs which resolve names themselves work, the namespace's
//! `/etc/resolv.conf` names `127.0.0.1`, where sandgate answers DNS over
//! UDP and TCP (sockets made inside, served outside, as the proxy's). A
//! name that the allow list lets through is resolved by sandgate and
//! answered; any other is refused (`NXDOMAIN`) before anything is
//! resolved, so no query for an unlisted name leaves the machine.
//!
//! ## Decisions
//!
//! A name is resolved by sandgate (never by the program), and every address
//! it resolves to must pass [`NetworkPolicy::decide_address`]: a listed name
//! resolving to a loopback or private address is refused unless the address
//! is listed. A refusal is a `403` whose body names the host and the command
//! that would allow it (HTTP), SOCKS5 reply 2, "not allowed by ruleset",
//! `EACCES` for a direct connect, or `NXDOMAIN` for a name; every decision
//! goes to [`Gate::record`].
//!
//! What this crate leaves to its caller: asking a person ([`Gate::ask`]),
//! the audit log ([`Gate::record`]) and name resolution ([`Gate::resolve`],
//! the system resolver by default).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod direct;
pub mod dns;
mod http;
mod pool;
mod relay;
mod socks;
pub mod tls;

use std::io::{self, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use sandgate_policy::network::{NetworkPolicy, Target};
use sandgate_policy::{Decision, Verdict};

/// How long a program has to send its request (or its TLS ClientHello).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a connection to a host may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How many connections are served at once; more wait in the backlog.
const MAX_CONNECTIONS: usize = 512;

/// How a program asked for a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// HTTP `CONNECT`.
    Connect,
    /// A plain HTTP request through the proxy.
    Http,
    /// SOCKS5 `CONNECT`.
    Socks,
    /// The program's own `connect()` to an address ([`direct`]).
    Direct,
    /// A name the program asked the namespace's resolver for ([`dns`]).
    Dns,
}

impl Via {
    /// `connect`, `http` or `socks5`.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Connect => "connect",
            Via::Http => "http",
            Via::Socks => "socks5",
            Via::Direct => "direct connect",
            Via::Dns => "resolver",
        }
    }
}

/// One decision, for the audit log.
#[derive(Debug, Clone)]
pub struct Record {
    /// The host as the program named it.
    pub host: String,
    /// The port.
    pub port: u16,
    /// How the program asked.
    pub via: Via,
    /// Who asked: the program's peer address on the proxy port (none for a
    /// direct connect).
    pub peer: Option<SocketAddr>,
    /// The decision (its rule, if one decided, and why).
    pub decision: Decision,
}

/// What the proxy needs from its caller.
pub trait Gate: Send + Sync + 'static {
    /// The network lists.
    fn policy(&self) -> &NetworkPolicy;

    /// Ask a person about a host the lists do not decide. `None`: nobody
    /// can answer here (the connection is refused). An answer of `Allow`
    /// or `Deny` is final for this connection (writing an "always" answer
    /// to the policy is the caller's business).
    fn ask(&self, _target: &Target, _port: u16, _decision: &Decision) -> Option<Verdict> {
        None
    }

    /// Why nobody could answer about `target:port` after [`Gate::ask`]
    /// gave `None` (no terminal, a client that cannot be asked), for the
    /// refusal's words; `None`: nothing more to say.
    fn why_unanswered(&self, _target: &Target, _port: u16) -> Option<String> {
        None
    }

    /// Record a decision (the audit log).
    fn record(&self, _record: &Record) {}

    /// The addresses of `name`. The default is the system resolver of
    /// sandgate's own process (never the contained program's).
    fn resolve(&self, name: &str, port: u16) -> io::Result<Vec<IpAddr>> {
        Ok((name, port).to_socket_addrs()?.map(|a| a.ip()).collect())
    }
}

/// A refused connection, in words for the program and the person.
#[derive(Debug, Clone)]
pub struct Refused {
    /// The host as the program named it, and the port.
    pub host_port: String,
    /// Why.
    pub reason: String,
    /// The command that would allow it, when an entry would.
    pub allow_with: Option<String>,
}

impl Refused {
    /// The body of the `403` a refused HTTP client gets.
    pub fn body(&self) -> String {
        let mut body = format!(
            "sandgate refused the connection to {}: {}\n",
            self.host_port, self.reason
        );
        if let Some(command) = &self.allow_with {
            body.push_str(&format!("To allow it: {command}\n"));
        }
        body
    }
}

/// Serve `listener` until it fails. Returns when `accept` fails for good
/// (the listener was closed).
///
/// The threads that serve connections accept them too: a thread waiting in
/// `accept` serves the connection it gets itself (no hand-over to another
/// thread), after making sure another thread waits in `accept` meanwhile
/// (an idle one of the pool, or a new one). Done, it waits for the next
/// connection again, or, with two others waiting already, goes back to the
/// pool. The caller's thread is one of them, and stays until the end.
pub fn serve<G: Gate>(listener: TcpListener, gate: Arc<G>) -> io::Result<()> {
    let acceptors = Arc::new(Acceptors {
        listener,
        gate,
        waiting: AtomicUsize::new(0),
        active: AtomicUsize::new(0),
    });
    accept(&acceptors, true)
}

/// What the threads accepting on one listener share.
struct Acceptors<G> {
    listener: TcpListener,
    gate: Arc<G>,
    /// Threads waiting in `accept`.
    waiting: AtomicUsize,
    /// Connections being served.
    active: AtomicUsize,
}

/// Accept and serve connections, until `accept` fails for good, or, unless
/// `for_good`, until enough other threads accept.
fn accept<G: Gate>(acceptors: &Arc<Acceptors<G>>, for_good: bool) -> io::Result<()> {
    loop {
        acceptors.waiting.fetch_add(1, Ordering::SeqCst);
        let accepted = acceptors.listener.accept();
        let others = acceptors.waiting.fetch_sub(1, Ordering::SeqCst) - 1;
        let (stream, peer) = match accepted {
            Ok(s) => s,
            Err(e) if retry_accept(&e) => continue,
            Err(e) => return Err(e),
        };
        if others == 0 {
            // Nobody else accepts while this connection is served: one more.
            let next = Arc::clone(acceptors);
            let _ = pool::run(Box::new(move || {
                let _ = accept(&next, false);
            }));
        }
        if acceptors.active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            drop(stream);
        } else {
            let _ = handle(stream, Some(peer), &*acceptors.gate);
        }
        acceptors.active.fetch_sub(1, Ordering::SeqCst);
        if !for_good && acceptors.waiting.load(Ordering::SeqCst) >= 2 {
            return Ok(());
        }
    }
}

fn retry_accept(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted | io::ErrorKind::WouldBlock
    ) || e.raw_os_error() == Some(24) // EMFILE: wait for a descriptor
}

/// Serve one connection from a contained program.
pub fn handle<G: Gate + ?Sized>(
    client: TcpStream,
    peer: Option<SocketAddr>,
    gate: &G,
) -> io::Result<()> {
    client.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    // What either side writes goes on at once: with Nagle's algorithm, a
    // response written in two parts waits for the program's delayed ACK
    // (about 40 ms) at every request of a kept-alive tunnel.
    client.set_nodelay(true)?;
    let mut first = [0u8; 1];
    let n = retrying(|| client.peek(&mut first))?;
    if n == 0 {
        return Ok(());
    }
    if first[0] == 5 {
        socks::serve(client, peer, gate)
    } else {
        http::serve(client, peer, gate)
    }
}

/// Decide a connection to `host:port` asked for `via`, ask where the lists
/// do not decide, resolve a name, check each address and connect. Every
/// decision is recorded.
pub(crate) fn open<G: Gate + ?Sized>(
    gate: &G,
    host: &str,
    port: u16,
    via: Via,
    peer: Option<SocketAddr>,
) -> Result<(TcpStream, Target), Refused> {
    let record = |decision: &Decision| {
        gate.record(&Record {
            host: host.to_string(),
            port,
            via,
            peer,
            decision: decision.clone(),
        })
    };
    let Some(target) = Target::parse(host) else {
        let decision = Decision::new(
            Verdict::Deny,
            format!("{host}:{port}"),
            format!("`{host}` is not a host name or address"),
        );
        record(&decision);
        return Err(Refused {
            host_port: format!("{host}:{port}"),
            reason: decision.reason,
            allow_with: None,
        });
    };
    let decision = decide(gate, &target, port);
    if decision.verdict != Verdict::Allow {
        record(&decision);
        return Err(refused(&target, port, &decision));
    }
    let addrs = match &target {
        Target::Addr(a) => vec![*a],
        Target::Name(n) => match gate.resolve(n, port) {
            Ok(a) if !a.is_empty() => a,
            Ok(_) | Err(_) => {
                let d = Decision::new(
                    Verdict::Deny,
                    decision.subject.clone(),
                    format!("`{n}` does not resolve"),
                );
                record(&d);
                return Err(Refused {
                    host_port: d.subject.clone(),
                    reason: d.reason,
                    allow_with: None,
                });
            }
        },
    };
    let mut last_refusal = None;
    let mut last_error = None;
    for addr in addrs {
        let checked = match &target {
            Target::Addr(_) => decision.clone(),
            Target::Name(_) => gate.policy().decide_address(&target, addr, port),
        };
        if checked.verdict != Verdict::Allow {
            last_refusal = Some(checked);
            continue;
        }
        match TcpStream::connect_timeout(&SocketAddr::new(addr, port), CONNECT_TIMEOUT) {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                let mut allowed = decision.clone();
                if checked.rule.is_some() && !matches!(target, Target::Addr(_)) {
                    allowed.reason = format!("{}; {}", decision.reason, checked.reason);
                }
                record(&allowed);
                return Ok((stream, target));
            }
            Err(e) => last_error = Some(e),
        }
    }
    let d = match (last_error, last_refusal) {
        (Some(e), _) => Decision::new(
            Verdict::Allow,
            decision.subject.clone(),
            format!("allowed, but the connection failed: {e}"),
        ),
        (None, Some(refusal)) => refusal,
        (None, None) => Decision::new(Verdict::Deny, decision.subject.clone(), "no address"),
    };
    record(&d);
    Err(Refused {
        host_port: d.subject.clone(),
        reason: d.reason.clone(),
        allow_with: (d.verdict == Verdict::Deny && d.rule.is_none()).then(|| {
            format!(
                "sandgate policy allow domain {}",
                sandgate_policy::network::entry_for(&target, port)
            )
        }),
    })
}

/// The lists' decision, with a person's answer where they ask.
fn decide<G: Gate + ?Sized>(gate: &G, target: &Target, port: u16) -> Decision {
    let decision = gate.policy().decide(target, port);
    if decision.verdict != Verdict::Ask {
        return decision;
    }
    answer_ask(gate, target, port, decision)
}

/// A person's answer to the asking `decision`: allowed or refused when
/// asked, refused where nobody can answer.
fn answer_ask<G: Gate + ?Sized>(
    gate: &G,
    target: &Target,
    port: u16,
    decision: Decision,
) -> Decision {
    match gate.ask(target, port, &decision) {
        Some(Verdict::Allow) => Decision {
            verdict: Verdict::Allow,
            reason: format!("{}; allowed when asked", decision.reason),
            ..decision
        },
        Some(_) => Decision {
            verdict: Verdict::Deny,
            reason: format!("{}; refused when asked", decision.reason),
            ..decision
        },
        None => Decision {
            verdict: Verdict::Deny,
            reason: match gate.why_unanswered(target, port) {
                Some(why) => format!(
                    "{}; nobody can answer here ({why}), so it is refused",
                    decision.reason
                ),
                None => format!(
                    "{}; nobody can answer here, so it is refused",
                    decision.reason
                ),
            },
            ..decision
        },
    }
}

fn refused(target: &Target, port: u16, decision: &Decision) -> Refused {
    // A deny entry's refusal is not undone by an allow entry.
    let allow_with = decision.rule.is_none().then(|| {
        format!(
            "sandgate policy allow domain {}",
            sandgate_policy::network::entry_for(target, port)
        )
    });
    Refused {
        host_port: sandgate_policy::network::host_port(target, port),
        reason: decision.reason.clone(),
        allow_with,
    }
}

/// After a tunnel is allowed: when the program starts TLS, its server name
/// must be the host it asked for (or, to an address, a host that is
/// allowed itself). `sent` is what the program sent already; the result
/// holds that and the rest of its first TLS record, which then goes to the
/// host before the two connections are joined. A ClientHello that does not
/// fit one record, or a record too large to hold, is refused: its name
/// cannot be read.
pub(crate) fn check_server_name<G: Gate + ?Sized>(
    gate: &G,
    sent: Vec<u8>,
    client: &mut TcpStream,
    target: &Target,
    port: u16,
    via: Via,
    peer: Option<SocketAddr>,
) -> Result<Vec<u8>, Refused> {
    let start = match tls::read_first_record(sent, client) {
        Ok(bytes) => bytes,
        Err(_) => return Ok(Vec::new()),
    };
    let name = match tls::server_name(&start) {
        Some(name) => name,
        None if tls::is_unreadable_hello(&start) => "(a ClientHello that cannot be read)".into(),
        None => return Ok(start),
    };
    let ok = match target {
        Target::Name(host) => Target::parse(&name).is_some_and(|t| t == Target::Name(host.clone())),
        Target::Addr(_) => Target::parse(&name)
            .is_some_and(|t| gate.policy().decide(&t, port).verdict == Verdict::Allow),
    };
    if ok {
        return Ok(start);
    }
    let subject = sandgate_policy::network::host_port(target, port);
    let decision = Decision::new(
        Verdict::Deny,
        subject.clone(),
        format!(
            "the TLS server name `{name}` is not the host `{target}` the tunnel was allowed for \
             (domain fronting)"
        ),
    );
    gate.record(&Record {
        host: target.to_string(),
        port,
        via,
        peer,
        decision: decision.clone(),
    });
    Err(Refused {
        host_port: subject,
        reason: decision.reason,
        allow_with: None,
    })
}

/// Join a tunnel's two connections until both directions end. What the
/// host sends reaches the program at once (a server may speak first); what
/// the program sends goes out only after its first TLS record, if it starts
/// TLS, passed [`check_server_name`]. A refusal closes both connections.
#[allow(clippy::too_many_arguments)]
pub(crate) fn join_checked<G: Gate + ?Sized>(
    gate: &G,
    client: TcpStream,
    upstream: TcpStream,
    sent: Vec<u8>,
    target: &Target,
    port: u16,
    via: Via,
    peer: Option<SocketAddr>,
) -> io::Result<()> {
    let (up_r, client_w) = (upstream.try_clone()?, client.try_clone()?);
    let down = beside(move || {
        let _ = relay::relay(&up_r, &client_w);
        let _ = client_w.shutdown(Shutdown::Write);
    })?;
    let mut client_r = client;
    let mut up_w = upstream;
    // The program may wait for the host to speak first, for as long as it likes.
    client_r.set_read_timeout(None)?;
    match check_server_name(gate, sent, &mut client_r, target, port, via, peer) {
        Ok(start) => {
            if up_w.write_all(&start).is_ok() && !start.is_empty() {
                let _ = relay::relay(&client_r, &up_w);
            }
            let _ = up_w.shutdown(Shutdown::Write);
        }
        Err(_) => {
            let _ = up_w.shutdown(Shutdown::Both);
            let _ = client_r.shutdown(Shutdown::Both);
        }
    }
    down.wait();
    Ok(())
}

/// Join a plain request's two connections, `start` sent to the host first.
pub(crate) fn join(client: TcpStream, upstream: TcpStream, start: &[u8]) -> io::Result<()> {
    client.set_read_timeout(None)?;
    let mut up = upstream;
    if !start.is_empty() {
        up.write_all(start)?;
    }
    let (client_r, up_w) = (client.try_clone()?, up.try_clone()?);
    let forward = beside(move || {
        let _ = relay::relay(&client_r, &up_w);
        let _ = up_w.shutdown(Shutdown::Write);
    })?;
    let _ = relay::relay(&up, &client);
    let _ = client.shutdown(Shutdown::Write);
    forward.wait();
    Ok(())
}

/// `io` again for as long as it fails with `EINTR`. A read from a socket
/// with a timeout (`SO_RCVTIMEO`) is never restarted after an interruption
/// (signal(7)), and it is interrupted even with no signal handler
/// installed: on Linux 6.18, while another thread of the process starts and
/// reaps children in quick succession, as a supervisor does.
pub(crate) fn retrying<T>(mut io: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match io() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            done => return done,
        }
    }
}

/// Work running on a thread of the pool beside the caller's.
struct Beside(std::sync::mpsc::Receiver<()>);

impl Beside {
    /// Wait until it is done (or ended by a panic).
    fn wait(self) {
        let _ = self.0.recv();
    }
}

/// Run `work` on a thread of the pool, beside the caller's.
fn beside(work: impl FnOnce() + Send + 'static) -> io::Result<Beside> {
    let (done, finished) = std::sync::mpsc::sync_channel(1);
    pool::run(Box::new(move || {
        work();
        let _ = done.send(());
    }))?;
    Ok(Beside(finished))
}
