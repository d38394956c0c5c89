//! `permissions.network`: the hosts a contained program may reach.
//!
//! ```yaml
//! permissions:
//!   network:
//!     allow: ["github.com", "*.githubusercontent.com", "github.com:22", "127.0.0.1:8080"]
//!     deny:  ["*.ngrok.io"]
//! ```
//!
//! An entry is a host name, `*.name` (every subdomain of `name`, not `name`
//! itself), an IPv4 literal or an `[IPv6]` literal, each with an optional
//! `:port`; without one it is about ports 80 and 443. Names are compared
//! without case and without a trailing dot. `*`, a wildcard over a
//! top-level domain (`*.com`, `*.co.uk`), a scheme (`https://…`) and a path
//! (`…/x`) are load errors with a hint: each would allow far more than it
//! says, or nothing at all.
//!
//! A request is decided in this order:
//! 1. a `deny` entry that matches the host (or, for a resolved name, the
//!    address it resolved to) and port: DENY;
//! 2. an address that is loopback, link-local, private or otherwise not
//!    public (see [`is_special`]): DENY, unless an `allow` entry names that
//!    very address and port. For a name, every address it resolved to is
//!    checked this way ([`NetworkPolicy::decide_address`]), so a listed name
//!    that resolves to a local address reaches nothing (no DNS rebinding onto
//!    local services);
//! 3. an `allow` entry that matches: ALLOW;
//! 4. otherwise ASK (a person answers where one can; elsewhere it is a DENY).
//!
//! The tighten-only files (managed, local) contribute their `deny` entries;
//! their `allow` entries are ignored, as for every other list. This module
//! only decides: it does no IO and resolves no name.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use crate::decision::{Decision, List, Origin, RuleRef, Verdict};
use crate::error::Problem;
use crate::rules::SourceRule;

/// The ports an entry without `:port` is about.
pub const DEFAULT_PORTS: [u16; 2] = [80, 443];

/// Two-label public suffixes under which `*.name` would still match every
/// registrant (`*.co.uk`): refused like `*.com`. The list is short and
/// deliberate (no public-suffix database is shipped): the widest-used
/// second-level registries.
const PUBLIC_SECOND_LEVEL: &[&str] = &[
    "ac.uk", "co.uk", "gov.uk", "ltd.uk", "me.uk", "net.uk", "org.uk", "plc.uk", "com.au",
    "net.au", "org.au", "edu.au", "gov.au", "co.nz", "net.nz", "org.nz", "co.jp", "ne.jp", "or.jp",
    "ac.jp", "go.jp", "co.kr", "or.kr", "co.in", "net.in", "org.in", "co.za", "org.za", "com.br",
    "net.br", "org.br", "com.cn", "net.cn", "org.cn", "com.tw", "com.hk", "com.sg", "com.mx",
    "com.ar", "com.tr", "co.il", "com.ua", "co.id", "com.my", "com.ph", "com.vn",
];

/// The host part of an entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HostPattern {
    /// Exactly this name (lower case, no trailing dot).
    Name(String),
    /// Every name that ends in `.` + this name (`*.name`), not the name itself.
    Subdomains(String),
    /// This address (an IPv4-mapped IPv6 address is held as its IPv4 address).
    Addr(IpAddr),
}

/// One entry of `network.allow` / `network.deny`, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Entry {
    /// Which hosts.
    pub host: HostPattern,
    /// Which port; `None`: 80 and 443 ([`DEFAULT_PORTS`]).
    pub port: Option<u16>,
}

/// Why an entry cannot be used: what is wrong and how to write it instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryError {
    /// What is wrong.
    pub message: String,
    /// How to write it instead.
    pub hint: String,
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (hint: {})", self.message, self.hint)
    }
}

fn entry_error(message: impl Into<String>, hint: impl Into<String>) -> EntryError {
    EntryError {
        message: message.into(),
        hint: hint.into(),
    }
}

impl Entry {
    /// Parse an entry as written in a policy file.
    pub fn parse(text: &str) -> Result<Entry, EntryError> {
        let hint_host = "write the host alone, as in `github.com`, `*.github.com`, \
                         `github.com:22`, `127.0.0.1:8080` or `[::1]:8080`";
        if text.is_empty() {
            return Err(entry_error("an empty network entry", hint_host));
        }
        if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(entry_error(
                "a network entry holds no spaces or control characters",
                hint_host,
            ));
        }
        if let Some(at) = text.find("://") {
            let rest = &text[at + 3..];
            let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
            return Err(entry_error(
                format!("`{text}` has a scheme (`{}://`)", &text[..at]),
                format!(
                    "an entry is a host, not a URL: write `{}` (with `:port` for a port other \
                     than 80 and 443)",
                    if host.is_empty() { "HOST" } else { host }
                ),
            ));
        }
        if let Some(at) = text.find(['/', '?', '#']) {
            let host = &text[..at];
            return Err(entry_error(
                format!("`{text}` has a path; the network is allowed by host, not by path"),
                format!(
                    "write the host alone: `{}`",
                    if host.is_empty() { "HOST" } else { host }
                ),
            ));
        }
        if text.contains('@') {
            return Err(entry_error(
                format!("`{text}` names a user; an entry is a host"),
                hint_host,
            ));
        }
        let (host, port) = split_port(text)?;
        let port = match port {
            None => None,
            Some(p) => Some(parse_port(p, text)?),
        };
        let host = parse_host_pattern(host, text)?;
        Ok(Entry { host, port })
    }

    /// Whether this entry covers `port`.
    pub fn has_port(&self, port: u16) -> bool {
        match self.port {
            Some(p) => p == port,
            None => DEFAULT_PORTS.contains(&port),
        }
    }

    /// Whether this entry matches a connection to `target` on `port`.
    pub fn matches(&self, target: &Target, port: u16) -> bool {
        self.has_port(port) && self.matches_host(target)
    }

    /// Whether this entry's host part matches `target`, whatever the port.
    pub fn matches_host(&self, target: &Target) -> bool {
        match (&self.host, target) {
            (HostPattern::Name(n), Target::Name(t)) => n == t,
            (HostPattern::Subdomains(n), Target::Name(t)) => {
                t.len() > n.len() + 1 && t.ends_with(n.as_str()) && {
                    let dot = t.len() - n.len() - 1;
                    t.as_bytes()[dot] == b'.'
                }
            }
            (HostPattern::Addr(a), Target::Addr(t)) => a == t,
            _ => false,
        }
    }

    /// Whether every host and port this entry matches is matched by `other`
    /// too (so `other` decides everything this entry would).
    pub fn covered_by(&self, other: &Entry) -> bool {
        let ports = match (self.port, other.port) {
            (_, None) => self.port.is_none_or(|p| DEFAULT_PORTS.contains(&p)),
            (Some(a), Some(b)) => a == b,
            (None, Some(_)) => false,
        };
        let hosts = match (&self.host, &other.host) {
            (a, b) if a == b => true,
            (HostPattern::Name(n), _) => other.matches_host(&Target::Name(n.clone())),
            (HostPattern::Subdomains(n), HostPattern::Subdomains(o)) => {
                n.ends_with(o.as_str()) && n.len() > o.len() && {
                    n.as_bytes()[n.len() - o.len() - 1] == b'.'
                }
            }
            _ => false,
        };
        ports && hosts
    }

    /// Whether this entry names exactly the address `addr`.
    pub fn names_address(&self, addr: IpAddr) -> bool {
        self.host == HostPattern::Addr(normalize(addr))
    }
}

impl fmt::Display for Entry {
    /// The entry in its canonical spelling (lower case, `[…]` around IPv6).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostPattern::Name(n) => write!(f, "{n}")?,
            HostPattern::Subdomains(n) => write!(f, "*.{n}")?,
            HostPattern::Addr(IpAddr::V4(a)) => write!(f, "{a}")?,
            HostPattern::Addr(IpAddr::V6(a)) => write!(f, "[{a}]")?,
        }
        match self.port {
            Some(p) => write!(f, ":{p}"),
            None => Ok(()),
        }
    }
}

/// Split `host:port`, `[v6]:port`, `[v6]`, `host`. A bare IPv6 address is an
/// error asking for brackets.
fn split_port(text: &str) -> Result<(&str, Option<&str>), EntryError> {
    if let Some(rest) = text.strip_prefix('[') {
        let Some(close) = rest.find(']') else {
            return Err(entry_error(
                format!("`{text}` opens `[` without closing it"),
                "write an IPv6 address as `[::1]` or `[::1]:8080`",
            ));
        };
        let inside = &rest[..close];
        let after = &rest[close + 1..];
        return match after {
            "" => Ok((&text[..close + 2], None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((&text[..close + 2], Some(port))),
                None => Err(entry_error(
                    format!("`{text}` has `{after}` after the address `[{inside}]`"),
                    "write an IPv6 address as `[::1]` or `[::1]:8080`",
                )),
            },
        };
    }
    match text.matches(':').count() {
        0 => Ok((text, None)),
        1 => {
            let (host, port) = text.split_once(':').unwrap_or((text, ""));
            Ok((host, Some(port)))
        }
        _ => {
            let bare = Ipv6Addr::from_str(text).is_ok();
            Err(entry_error(
                format!("`{text}` has more than one `:`"),
                if bare {
                    format!("put an IPv6 address in brackets: `[{text}]` (and `[{text}]:PORT` for a port)")
                } else {
                    "write `host:port`, or an IPv6 address in brackets as `[::1]:8080`".into()
                },
            ))
        }
    }
}

fn parse_port(port: &str, text: &str) -> Result<u16, EntryError> {
    let hint = "a port is a number from 1 to 65535, as in `github.com:22`; without one an entry \
                is about ports 80 and 443";
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) || port.len() > 5 {
        return Err(entry_error(
            format!("`{text}` has no valid port after `:`"),
            hint,
        ));
    }
    match port.parse::<u32>() {
        Ok(p @ 1..=65535) => Ok(p as u16),
        _ => Err(entry_error(
            format!("`{text}` has the port {port}, outside 1 to 65535"),
            hint,
        )),
    }
}

fn parse_host_pattern(host: &str, text: &str) -> Result<HostPattern, EntryError> {
    if let Some(inside) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return match Ipv6Addr::from_str(inside) {
            Ok(a) => Ok(HostPattern::Addr(normalize(IpAddr::V6(a)))),
            Err(_) => Err(entry_error(
                format!("`[{inside}]` in `{text}` is not an IPv6 address"),
                "brackets hold an IPv6 address, as in `[2001:db8::1]:443`",
            )),
        };
    }
    if host == "*" || host == "*." {
        return Err(entry_error(
            format!("`{text}` would allow every host"),
            "list the hosts the tools need (`github.com`, `*.githubusercontent.com`); for an \
             unfiltered network leave `permissions.network` out",
        ));
    }
    let (wild, name) = match host.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, host),
    };
    if name.contains('*') {
        return Err(entry_error(
            format!("`{text}` has a `*` that is not the whole first label"),
            "a wildcard is only `*.name` (every subdomain of name), as in `*.github.com`",
        ));
    }
    if !name.is_ascii() {
        return Err(entry_error(
            format!("`{text}` is not ASCII"),
            "write an international name in its ASCII form (`xn--…`), as DNS carries it",
        ));
    }
    let name = name.to_ascii_lowercase();
    let name = name.strip_suffix('.').unwrap_or(&name).to_string();
    if name.is_empty() {
        return Err(entry_error(
            format!("`{text}` names no host"),
            "write a host name, as in `github.com`",
        ));
    }
    if looks_numeric(&name) {
        return match Ipv4Addr::from_str(&name) {
            Ok(a) if !wild => Ok(HostPattern::Addr(IpAddr::V4(a))),
            Ok(_) => Err(entry_error(
                format!("`{text}` puts a wildcard before an address"),
                "a wildcard is for names (`*.github.com`); list each address on its own",
            )),
            Err(_) => Err(entry_error(
                format!("`{name}` in `{text}` is not an IPv4 address"),
                "write an IPv4 address in full, as in `127.0.0.1:8080`",
            )),
        };
    }
    if let Some(problem) = name_problem(&name) {
        return Err(entry_error(
            format!("`{text}` is not a host name: {problem}"),
            "a name is made of labels of letters, digits, `-` and `_`, separated by dots",
        ));
    }
    if wild {
        let labels = name.split('.').count();
        if labels == 1 || PUBLIC_SECOND_LEVEL.contains(&name.as_str()) {
            return Err(entry_error(
                format!(
                    "`{text}` would allow every site under the public suffix `.{name}`, anyone's"
                ),
                format!("name the sites themselves, as in `*.example.{name}`"),
            ));
        }
        return Ok(HostPattern::Subdomains(name));
    }
    Ok(HostPattern::Name(name))
}

/// Digits and dots only (an IPv4 literal, or an attempt at one).
fn looks_numeric(name: &str) -> bool {
    name.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// What is wrong with a lower-case name without trailing dot, if anything.
fn name_problem(name: &str) -> Option<String> {
    if name.len() > 253 {
        return Some("longer than 253 characters".into());
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Some("it has an empty label (`..` or a leading dot)".into());
        }
        if label.len() > 63 {
            return Some(format!("the label `{label}` is longer than 63 characters"));
        }
        if let Some(c) = label
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
        {
            return Some(format!("`{c}` is not allowed in a name"));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Some(format!("the label `{label}` starts or ends with `-`"));
        }
    }
    None
}

/// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is its IPv4 address.
pub fn normalize(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

/// Whether `addr` is an address only an entry naming it may reach: loopback,
/// unspecified, private (RFC 1918, IPv6 unique local), link-local, shared
/// (RFC 6598), benchmarking, documentation, reserved, multicast, broadcast,
/// IPv6 site-local, and an IPv4-mapped, NAT64 or 6to4 address of any of those.
pub fn is_special(addr: IpAddr) -> bool {
    match normalize(addr) {
        IpAddr::V4(a) => is_special_v4(a),
        IpAddr::V6(a) => {
            let s = a.segments();
            // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address.
            if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
                let [.., a1, a2, a3, a4] = a.octets();
                return is_special_v4(Ipv4Addr::new(a1, a2, a3, a4));
            }
            if s[0] == 0x2002 {
                let o = a.octets();
                return is_special_v4(Ipv4Addr::new(o[2], o[3], o[4], o[5]));
            }
            a.is_loopback()
                || a.is_unspecified()
                || a.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (s[0] & 0xffc0) == 0xfec0 // site-local fec0::/10
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || (s[0] == 0 && s[1..6] == [0, 0, 0, 0, 0]) // IPv4-compatible, ::/96
        }
    }
}

fn is_special_v4(a: Ipv4Addr) -> bool {
    let o = a.octets();
    a.is_loopback()
        || a.is_private()
        || a.is_link_local()
        || a.is_broadcast()
        || a.is_multicast()
        || a.is_documentation()
        || o[0] == 0 // "this network"
        || (o[0] == 100 && (o[1] & 0xc0) == 64) // shared, 100.64/10
        || (o[0] == 198 && (o[1] & 0xfe) == 18) // benchmarking, 198.18/15
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments
        || o[0] >= 240 // reserved
}

/// What a program asks to reach: a name or an address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// A host name, lower case, without trailing dot.
    Name(String),
    /// An address (IPv4-mapped IPv6 as IPv4).
    Addr(IpAddr),
}

impl Target {
    /// Read a host as a program gives it (an HTTP `CONNECT` or `Host`, a
    /// SOCKS5 name, a DNS question): a name, an IPv4 literal, an IPv6
    /// literal with or without brackets. `None` for anything else (a name
    /// with characters DNS names do not have), which is refused.
    pub fn parse(host: &str) -> Option<Target> {
        let inside = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        if let Ok(addr) = IpAddr::from_str(inside) {
            return Some(Target::Addr(normalize(addr)));
        }
        if !host.is_ascii() {
            return None;
        }
        let name = host.to_ascii_lowercase();
        let name = name.strip_suffix('.').unwrap_or(&name).to_string();
        if name.is_empty() || looks_numeric(&name) || name_problem(&name).is_some() {
            return None;
        }
        Some(Target::Name(name))
    }
}

/// Read `host`, `host:port`, `[v6]` or `[v6]:port` as a person types it
/// (`sandgate policy explain --domain`); the port is `None` when not given.
pub fn parse_host_port(text: &str) -> Result<(Target, Option<u16>), String> {
    let (host, port) = split_port(text).map_err(|e| format!("{} ({})", e.message, e.hint))?;
    let port = match port {
        None => None,
        Some(p) => Some(parse_port(p, text).map_err(|e| e.message)?),
    };
    match Target::parse(host) {
        Some(t) => Ok((t, port)),
        None => Err(format!("`{host}` is not a host name or address")),
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Name(n) => write!(f, "{n}"),
            Target::Addr(IpAddr::V4(a)) => write!(f, "{a}"),
            Target::Addr(IpAddr::V6(a)) => write!(f, "[{a}]"),
        }
    }
}

/// `host:port` in words (`[…]` around IPv6).
pub fn host_port(target: &Target, port: u16) -> String {
    format!("{target}:{port}")
}

/// The entry that allows exactly `target` on `port`, as `sandgate policy
/// allow domain` and an "always" answer write it: no port for 80 and 443
/// (the default covers both), `:port` otherwise.
pub fn entry_for(target: &Target, port: u16) -> String {
    if DEFAULT_PORTS.contains(&port) {
        target.to_string()
    } else {
        format!("{target}:{port}")
    }
}

/// A compiled entry with where it was written.
#[derive(Debug, Clone)]
struct Compiled {
    entry: Entry,
    rule: RuleRef,
}

/// The merged, compiled network lists.
#[derive(Debug, Clone, Default)]
pub struct NetworkPolicy {
    deny: Vec<Compiled>,
    allow: Vec<Compiled>,
}

/// The network lists merged from every tier, not yet compiled.
#[derive(Debug, Clone, Default)]
pub struct MergedNetwork {
    /// `deny` entries of every tier.
    pub deny: Vec<SourceRule>,
    /// `allow` entries of the central file.
    pub allow: Vec<SourceRule>,
}

impl NetworkPolicy {
    /// Compile merged entries; every entry that does not parse is a problem
    /// with its file, line and column.
    pub fn compile(merged: &MergedNetwork) -> Result<NetworkPolicy, Vec<Problem>> {
        let mut problems = Vec::new();
        let deny = compile_list(&merged.deny, List::Deny, &mut problems);
        let allow = compile_list(&merged.allow, List::Allow, &mut problems);
        if problems.is_empty() {
            Ok(NetworkPolicy { deny, allow })
        } else {
            Err(problems)
        }
    }

    /// Compile lists given directly (built-in origin), as a caller that
    /// holds entries of its own does; a bad entry is an error.
    pub fn from_lists(allow: &[&str], deny: &[&str]) -> Result<NetworkPolicy, Vec<Problem>> {
        let rules = |list: &[&str]| {
            list.iter()
                .map(|t| SourceRule {
                    text: (*t).to_string(),
                    origin: Origin::Builtin,
                    column: 0,
                    access: None,
                })
                .collect()
        };
        NetworkPolicy::compile(&MergedNetwork {
            allow: rules(allow),
            deny: rules(deny),
        })
    }

    /// The deny and the allow entries, each with its origin.
    pub fn rules(&self) -> (Vec<&RuleRef>, Vec<&RuleRef>) {
        (
            self.deny.iter().map(|c| &c.rule).collect(),
            self.allow.iter().map(|c| &c.rule).collect(),
        )
    }

    /// The parsed deny and allow entries, in list order.
    pub fn entries(&self) -> (Vec<&Entry>, Vec<&Entry>) {
        (
            self.deny.iter().map(|c| &c.entry).collect(),
            self.allow.iter().map(|c| &c.entry).collect(),
        )
    }

    /// Every entry that matches `target` on `port`, deny first.
    pub fn matches(&self, target: &Target, port: u16) -> Vec<&RuleRef> {
        self.deny
            .iter()
            .chain(&self.allow)
            .filter(|c| c.entry.matches(target, port))
            .map(|c| &c.rule)
            .collect()
    }

    /// Whether some port of `target` is allowed (so that the name may be
    /// resolved; each connection is still decided with its port).
    pub fn names_host(&self, target: &Target) -> bool {
        self.allow
            .iter()
            .filter(|c| c.entry.matches_host(target))
            .flat_map(|c| match c.entry.port {
                Some(p) => vec![p],
                None => DEFAULT_PORTS.to_vec(),
            })
            .any(|port| self.decide(target, port).verdict == Verdict::Allow)
    }

    /// Decide a connection to `target` on `port` (steps 1 to 4 of the
    /// module documentation). For a name this is the decision before it is
    /// resolved; every address it resolves to must then pass
    /// [`NetworkPolicy::decide_address`].
    pub fn decide(&self, target: &Target, port: u16) -> Decision {
        let subject = host_port(target, port);
        if let Some(c) = self.deny.iter().find(|c| c.entry.matches(target, port)) {
            let reason = format!("`{subject}` matches the network {}", c.rule);
            return Decision::by_rule(Verdict::Deny, subject, c.rule.clone(), reason);
        }
        if let Target::Addr(addr) = target {
            if is_special(*addr) {
                return match self.allow_naming(*addr, port) {
                    Some(c) => {
                        let reason = format!(
                            "`{subject}` is a local or private address, named by the network {}",
                            c.rule
                        );
                        Decision::by_rule(Verdict::Allow, subject, c.rule.clone(), reason)
                    }
                    None => Decision::new(
                        Verdict::Deny,
                        subject.clone(),
                        format!(
                            "`{subject}` is a loopback, link-local or private address, which is \
                             reached only when an allow entry names it: `sandgate policy allow \
                             domain {}` would allow it",
                            entry_for(target, port)
                        ),
                    ),
                };
            }
        }
        if let Some(c) = self.allow.iter().find(|c| c.entry.matches(target, port)) {
            let reason = format!("`{subject}` matches the network {}", c.rule);
            return Decision::by_rule(Verdict::Allow, subject, c.rule.clone(), reason);
        }
        Decision::new(
            Verdict::Ask,
            subject.clone(),
            format!(
                "no network allow entry matches `{subject}`: `sandgate policy allow domain {}` \
                 would allow it",
                entry_for(target, port)
            ),
        )
    }

    /// Decide a connection to `addr` on `port` that a program asked for by
    /// the name `name` (allowed by [`NetworkPolicy::decide`]): a deny entry
    /// naming the address refuses it, and a local or private address is
    /// refused unless an allow entry names that address and port.
    pub fn decide_address(&self, name: &Target, addr: IpAddr, port: u16) -> Decision {
        let addr = normalize(addr);
        let at = Target::Addr(addr);
        let subject = host_port(name, port);
        if let Some(c) = self.deny.iter().find(|c| c.entry.matches(&at, port)) {
            let reason = format!(
                "`{subject}` resolved to {}, which matches the network {}",
                host_port(&at, port),
                c.rule
            );
            return Decision::by_rule(Verdict::Deny, subject, c.rule.clone(), reason);
        }
        if !is_special(addr) {
            return Decision::new(
                Verdict::Allow,
                subject.clone(),
                format!(
                    "`{subject}` resolved to the public address {}",
                    host_port(&at, port)
                ),
            );
        }
        match self.allow_naming(addr, port) {
            Some(c) => {
                let reason = format!(
                    "`{subject}` resolved to the local or private address {}, named by the network {}",
                    host_port(&at, port),
                    c.rule
                );
                Decision::by_rule(Verdict::Allow, subject, c.rule.clone(), reason)
            }
            None => Decision::new(
                Verdict::Deny,
                subject.clone(),
                format!(
                    "`{subject}` resolved to the loopback, link-local or private address {}, \
                     which a name may reach only when an allow entry names the address too \
                     (`sandgate policy allow domain {}`)",
                    host_port(&at, port),
                    entry_for(&at, port)
                ),
            ),
        }
    }

    /// The allow entry that names `addr` itself with `port`.
    fn allow_naming(&self, addr: IpAddr, port: u16) -> Option<&Compiled> {
        self.allow
            .iter()
            .find(|c| c.entry.names_address(addr) && c.entry.has_port(port))
    }
}

fn compile_list(rules: &[SourceRule], list: List, problems: &mut Vec<Problem>) -> Vec<Compiled> {
    let mut out = Vec::new();
    for r in rules {
        match Entry::parse(&r.text) {
            Ok(entry) => out.push(Compiled {
                entry,
                rule: RuleRef {
                    pattern: r.text.clone(),
                    list,
                    access: None,
                    origin: r.origin.clone(),
                },
            }),
            Err(e) => problems.push(entry_problem(r, &e)),
        }
    }
    out
}

/// The load problem for an entry that does not parse.
pub fn entry_problem(rule: &SourceRule, e: &EntryError) -> Problem {
    let (file, position) = match &rule.origin {
        Origin::File { path, line, .. } => (path.to_path_buf(), Some((*line, rule.column))),
        Origin::Builtin => (std::path::PathBuf::new(), None),
    };
    Problem {
        file,
        position,
        rule: Some(rule.text.clone()),
        message: format!("invalid network entry: {}", e.message),
        hint: Some(e.hint.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> Entry {
        Entry::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn name(n: &str) -> Target {
        Target::parse(n).unwrap_or_else(|| panic!("{n} is no target"))
    }

    #[test]
    fn entries_parse_to_their_hosts_and_ports() {
        assert_eq!(
            entry("GitHub.COM."),
            Entry {
                host: HostPattern::Name("github.com".into()),
                port: None
            }
        );
        assert_eq!(entry("github.com:22").port, Some(22));
        assert_eq!(
            entry("*.githubusercontent.com").host,
            HostPattern::Subdomains("githubusercontent.com".into())
        );
        assert_eq!(
            entry("127.0.0.1:8080").host,
            HostPattern::Addr("127.0.0.1".parse().unwrap())
        );
        assert_eq!(
            entry("[::1]:8080").host,
            HostPattern::Addr("::1".parse().unwrap())
        );
        assert_eq!(entry("[::1]").port, None);
        assert_eq!(
            entry("[::ffff:10.0.0.1]:5").host,
            HostPattern::Addr("10.0.0.1".parse().unwrap())
        );
        assert_eq!(entry("*.example.co.uk").to_string(), "*.example.co.uk");
        assert_eq!(entry("[0:0::1]:80").to_string(), "[::1]:80");
    }

    #[test]
    fn broad_or_malformed_entries_are_errors_with_hints() {
        for (bad, words) in [
            ("*", "every host"),
            ("*.com", "public suffix"),
            ("*.COM.", "public suffix"),
            ("*.co.uk", "public suffix"),
            ("https://github.com", "scheme"),
            ("github.com/org", "path"),
            ("git@github.com", "user"),
            ("", "empty"),
            ("github.com:", "valid port"),
            ("github.com:0", "outside"),
            ("github.com:65536", "outside"),
            ("github.com:ssh", "valid port"),
            ("::1", "more than one"),
            ("[::1", "without closing"),
            ("[::1]x", "after the address"),
            ("[github.com]", "not an IPv6"),
            ("gith*b.com", "not the whole first label"),
            ("a.*.com", "not the whole first label"),
            ("*.1.2.3.4", "wildcard before an address"),
            ("1.2.3", "not an IPv4"),
            ("999.1.1.1", "not an IPv4"),
            ("exa mple.com", "spaces"),
            ("bücher.de", "ASCII"),
            ("a..b", "empty label"),
            ("-a.com", "starts or ends"),
            ("a!.com", "not allowed"),
        ] {
            let e = Entry::parse(bad).expect_err(bad);
            assert!(e.message.contains(words), "{bad}: {e}");
            assert!(!e.hint.is_empty());
        }
        let e = Entry::parse("::1").unwrap_err();
        assert!(e.hint.contains("[::1]"), "{e}");
        let e = Entry::parse("https://github.com/x").unwrap_err();
        assert!(e.hint.contains("`github.com`"), "{e}");
    }

    #[test]
    fn matching_is_by_host_and_port() {
        let e = entry("github.com");
        assert!(e.matches(&name("GITHUB.com."), 443));
        assert!(e.matches(&name("github.com"), 80));
        assert!(!e.matches(&name("github.com"), 22));
        assert!(!e.matches(&name("api.github.com"), 443));
        assert!(!e.matches(&name("evilgithub.com"), 443));
        let w = entry("*.github.com");
        assert!(w.matches(&name("api.github.com"), 443));
        assert!(w.matches(&name("a.b.github.com"), 443));
        assert!(!w.matches(&name("github.com"), 443));
        assert!(!w.matches(&name("evilgithub.com"), 443));
        let a = entry("[::1]:8080");
        assert!(a.matches(&name("[::1]"), 8080));
        assert!(a.matches(&name("::1"), 8080));
        assert!(!a.matches(&name("127.0.0.1"), 8080));
        let m = entry("10.1.2.3:9");
        assert!(m.matches(&name("::ffff:10.1.2.3"), 9));
    }

    fn policy(allow: &[&str], deny: &[&str]) -> NetworkPolicy {
        let rules = |list: &[&str]| {
            list.iter()
                .map(|t| SourceRule {
                    text: t.to_string(),
                    origin: Origin::Builtin,
                    column: 0,
                    access: None,
                })
                .collect()
        };
        NetworkPolicy::compile(&MergedNetwork {
            allow: rules(allow),
            deny: rules(deny),
        })
        .unwrap()
    }

    #[test]
    fn deny_wins_then_private_addresses_then_allow_then_ask() {
        let p = policy(
            &[
                "*.ngrok.io",
                "github.com",
                "127.0.0.1:8080",
                "github.com:22",
            ],
            &["evil.ngrok.io"],
        );
        let v = |host: &str, port| p.decide(&name(host), port).verdict;
        assert_eq!(v("evil.ngrok.io", 443), Verdict::Deny);
        assert_eq!(v("good.ngrok.io", 443), Verdict::Allow);
        assert_eq!(v("github.com", 443), Verdict::Allow);
        assert_eq!(v("github.com", 22), Verdict::Allow);
        assert_eq!(v("github.com", 8443), Verdict::Ask);
        assert_eq!(v("gitlab.com", 443), Verdict::Ask);
        assert_eq!(v("127.0.0.1", 8080), Verdict::Allow);
        assert_eq!(v("127.0.0.1", 8081), Verdict::Deny);
        assert_eq!(v("[::1]", 8080), Verdict::Deny);
        assert_eq!(v("10.0.0.1", 443), Verdict::Deny);
        assert_eq!(v("169.254.169.254", 80), Verdict::Deny);
        assert_eq!(v("[fe80::1]", 443), Verdict::Deny);
        assert_eq!(v("[::ffff:127.0.0.1]", 8080), Verdict::Allow);
        assert_eq!(v("93.184.215.14", 443), Verdict::Ask);
        let ask = p.decide(&name("gitlab.com"), 443);
        assert!(
            ask.reason
                .contains("sandgate policy allow domain gitlab.com`"),
            "{}",
            ask.reason
        );
        let ask = p.decide(&name("gitlab.com"), 2222);
        assert!(ask.reason.contains("gitlab.com:2222"), "{}", ask.reason);
    }

    #[test]
    fn a_listed_name_reaches_a_private_address_only_when_it_is_listed() {
        let p = policy(&["internal.test", "10.0.0.5:443"], &["203.0.113.9"]);
        let gh = name("internal.test");
        let at = |a: &str, port| p.decide_address(&gh, a.parse().unwrap(), port).verdict;
        assert_eq!(at("140.82.112.3", 443), Verdict::Allow);
        assert_eq!(at("127.0.0.1", 443), Verdict::Deny);
        assert_eq!(at("::1", 443), Verdict::Deny);
        assert_eq!(at("10.0.0.5", 443), Verdict::Allow);
        assert_eq!(at("10.0.0.5", 80), Verdict::Deny);
        assert_eq!(at("::ffff:10.0.0.5", 443), Verdict::Allow);
        assert_eq!(at("64:ff9b::7f00:1", 443), Verdict::Deny);
    }

    #[test]
    fn special_addresses_are_the_local_and_private_ones() {
        for a in [
            "127.0.0.1",
            "127.5.5.5",
            "10.1.1.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "fc00::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "2002:7f00:1::",
            "::127.0.0.1",
        ] {
            assert!(is_special(a.parse().unwrap()), "{a}");
        }
        for a in ["1.1.1.1", "140.82.112.3", "172.32.0.1", "2606:4700::1111"] {
            assert!(!is_special(a.parse().unwrap()), "{a}");
        }
    }

    #[test]
    fn coverage_compares_hosts_and_ports() {
        let c = |a: &str, b: &str| entry(a).covered_by(&entry(b));
        assert!(c("api.github.com", "*.github.com"));
        assert!(c("*.api.github.com", "*.github.com"));
        assert!(!c("github.com", "*.github.com"));
        assert!(!c("*.github.com", "api.github.com"));
        assert!(c("github.com:443", "github.com"));
        assert!(!c("github.com:22", "github.com"));
        assert!(!c("github.com", "github.com:443"));
        assert!(c("GitHub.com.", "github.com"));
        assert!(!c("xgithub.com", "*.github.com"));
    }

    #[test]
    fn targets_refuse_what_is_no_host() {
        assert_eq!(Target::parse("Example.COM."), Some(name("example.com")));
        assert!(Target::parse("a b").is_none());
        assert!(Target::parse("").is_none());
        assert!(Target::parse("1.2.3").is_none());
        assert!(Target::parse("x\u{0}.com").is_none());
        assert_eq!(entry_for(&name("a.com"), 443), "a.com");
        assert_eq!(entry_for(&name("::1"), 22), "[::1]:22");
    }
}
