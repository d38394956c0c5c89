//! `permissions.network` under `sandgate exec` (`landlock` and `bwrap`),
//! as root and as `sandgate-test`, with real servers on loopback that the
//! test starts (an HTTP server on IPv4 and IPv6, a UDP "DNS" server and a
//! TCP server that record every packet and connection they get, and a DNS
//! server on port 53 of a `127.53.X.Y` address that records the name of every query) and real
//! clients (`curl`, `getent`, Python's `socket`): through the proxy, by a
//! direct connect, and names through the namespace's resolver, with test
//! host names in a mount namespace the test makes (its own `/etc/hosts` and
//! `/etc/resolv.conf`; the machine's files are never changed).
//!
//! Every escape row runs first unconfined, as the same user, where it must
//! reach the recording server, so that a row that cannot fail fails.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::Write;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

#[path = "../../../tests/support/ci.rs"]
mod ci;
#[path = "../../../tests/support/exe.rs"]
mod exe;
#[path = "../../../tests/support/pty.rs"]
mod pty;
#[path = "../../../tests/support/wait.rs"]
mod wait;

#[path = "network_common/tree.rs"]
mod net_tree;
mod network_common;

use net_tree::{tree_with, Tree};
use network_common::*;
use wait::{Bounded, DEADLINE};

/// Asserts that `out` (its output and errors) says `want`, naming `case`
/// and showing what it said where it does not.
fn assert_says(out: &Output, want: &str, case: &str) {
    let said = text(out);
    assert!(said.contains(want), "{case}: {said}");
}

/// The tree of `network_common` (HOME, workdir, the binary and the
/// policy, owned by the user), with a policy allowing `allow` to commands
/// isolated in `mode`.
fn tree(who: Who, mode: &str, allow: &[String]) -> Tree {
    let allow: Vec<String> = allow.iter().map(|a| format!("\"{a}\"")).collect();
    let policy = format!(
        "permissions:\n  commands:\n    shell: false\n    allow: ['^(curl|python3|getent|git|ssh) ']\n  \
         exec:\n    isolation:\n      mode: {mode}\n  \
         network:\n    allow: [{}]\n",
        allow.join(", ")
    );
    tree_with("sandgate-net-", who, &policy)
}

impl Tree {
    fn command(&self, program: &Path) -> Command {
        let who = match self.who {
            Who::Root => None,
            Who::User { uid, gid } => Some((uid, gid)),
        };
        let mut cmd = ci::as_user(program, who);
        cmd.env_clear()
            .env("PATH", PATH)
            .env("HOME", &self.home)
            .env("SANDGATE_NO_UI", "1")
            .env("SANDGATE_AUDIT", "off")
            .current_dir(&self.work)
            .stdin(Stdio::null());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// `argv` unconfined, as this tree's user.
    fn plain(&self, argv: &[&str]) -> Output {
        let mut cmd = self.command(Path::new(argv[0]));
        cmd.args(&argv[1..]);
        run_with_deadline(cmd)
    }

    /// `sandgate exec -- argv`, as this tree's user.
    fn exec(&self, argv: &[&str]) -> Output {
        let mut cmd = self.command(&self.bin);
        cmd.arg("exec").arg("--").args(argv);
        run_with_deadline(cmd)
    }

    /// [`Tree::exec`], with the audit log written to `log`.
    fn exec_audited(&self, log: &Path, argv: &[&str]) -> Output {
        let mut cmd = self.command(&self.bin);
        cmd.env_remove("SANDGATE_AUDIT")
            .env("SANDGATE_AUDIT_LOG", log)
            .arg("exec")
            .arg("--")
            .args(argv);
        run_with_deadline(cmd)
    }
}

/// Runs `cmd`, killed (with its process group) at the deadline.
fn run_with_deadline(mut cmd: Command) -> Output {
    cmd.output_within(DEADLINE).unwrap()
}

#[test]
fn a_listed_host_is_reached_through_the_proxy_and_nothing_else_leaves() {
    if !has("curl") || !has("python3") {
        missing("`curl` and `python3` are needed");
        return;
    }
    let (web, _) = http_server();
    let Recorders {
        udp,
        queries,
        tcp,
        connections,
    } = recorders();
    for who in users() {
        for mode in modes() {
            let case = format!("{who:?} {mode}");
            let t = tree(who, mode, &[format!("127.0.0.1:{web}")]);
            // The listed host, through the proxy variables sandgate sets.
            let ok = t.exec(&[
                "curl",
                "-sS",
                "--max-time",
                "20",
                &format!("http://127.0.0.1:{web}/hi"),
            ]);
            assert!(text(&ok).contains("served /hi"), "{case}: {}", text(&ok));
            // An unlisted port: 403, naming the command that would allow it.
            let no = t.exec(&[
                "curl",
                "-sS",
                "--max-time",
                "20",
                &format!("http://127.0.0.1:{tcp}/"),
            ]);
            assert!(
                text(&no).contains(&format!("sandgate policy allow domain 127.0.0.1:{tcp}")),
                "{case}: {}",
                text(&no)
            );
            // A program that ignores the proxy: unconfined it connects…
            let before = connections.load(Ordering::SeqCst);
            let plain = t.plain(&["python3", "-c", TCP_CONNECT, &tcp.to_string()]);
            assert!(
                text(&plain).contains("connected"),
                "{case}: {}",
                text(&plain)
            );
            wait_for(
                &connections,
                before + 1,
                &format!("{case}: unconfined connect not seen"),
            );
            // …confined it reaches nothing.
            let before = connections.load(Ordering::SeqCst);
            let confined = t.exec(&["python3", "-c", TCP_CONNECT, &tcp.to_string()]);
            // It ran (python reports the failed connection), and did not connect.
            assert!(
                text(&confined).contains("Error"),
                "{case}: {}",
                text(&confined)
            );
            assert!(
                !String::from_utf8_lossy(&confined.stdout).contains("connected"),
                "{case}: {}",
                text(&confined)
            );
            // A UDP packet (a DNS query): unconfined the server records it…
            let before_q = queries.load(Ordering::SeqCst);
            let sent = t.plain(&["python3", "-c", UDP_SEND, &udp.to_string()]);
            assert!(text(&sent).contains("sent"), "{case}: {}", text(&sent));
            wait_for(
                &queries,
                before_q + 1,
                &format!("{case}: unconfined query not seen"),
            );
            // …confined it never arrives.
            let before_q = queries.load(Ordering::SeqCst);
            let confined = t.exec(&["python3", "-c", UDP_SEND, &udp.to_string()]);
            // It ran and sent (to the namespace's own loopback, where nobody listens).
            assert!(
                String::from_utf8_lossy(&confined.stdout).contains("sent"),
                "{case}: {}",
                text(&confined)
            );
            std::thread::sleep(Duration::from_millis(300));
            assert_eq!(
                queries.load(Ordering::SeqCst),
                before_q,
                "{case}: a query leaked"
            );
            assert_eq!(
                connections.load(Ordering::SeqCst),
                before,
                "{case}: a connection leaked"
            );
            drop(t);
        }
    }
}

/// With the network filtered, the command starts in the network's own
/// mount namespace, and the read-only layer is made in it: a protected
/// file of the workspace stays read-only (what Landlock alone cannot do)
/// while the rest is writable, and the resolver's `/etc/resolv.conf` is
/// there, as root and as `sandgate-test`.
#[test]
fn the_read_only_layer_holds_in_the_networks_namespace() {
    if !has("python3") {
        missing("`python3` is needed");
        return;
    }
    const APPEND: &str = "import sys\ntry:\n    open(sys.argv[1], 'a').write('x\\n')\n    print('wrote', sys.argv[1])\nexcept OSError as e:\n    print('refused', sys.argv[1], e)\n";
    for who in users() {
        let case = format!("{who:?}");
        let t = tree(who, "landlock", &["127.0.0.1:9".to_string()]);
        // Unconfined, the user writes the protected file (and makes it).
        let plain = t.plain(&["python3", "-c", APPEND, ".bashrc"]);
        assert!(
            text(&plain).contains("wrote .bashrc"),
            "{case}: {}",
            text(&plain)
        );
        let before = std::fs::read_to_string(t.work.join(".bashrc")).unwrap();
        let out = t.exec(&["python3", "-c", APPEND, ".bashrc"]);
        assert!(
            text(&out).contains("refused .bashrc"),
            "{case}: {}",
            text(&out)
        );
        // The layer itself: the root read-only, the workspace writable,
        // the protected file read-only on top of it.
        let mounts = t.exec(&[
            "python3",
            "-c",
            "print(open('/proc/self/mountinfo').read())",
        ]);
        let mounts = text(&mounts);
        let work = t.work.display().to_string();
        let bashrc = t.work.join(".bashrc").display().to_string();
        for (mount, options) in [("/", "ro,"), (&work, "rw,"), (&bashrc, "ro,")] {
            assert!(
                mounts
                    .lines()
                    .any(|l| l.contains(&format!(" {mount} {options}"))),
                "{case}: {mount} not mounted {options} in:\n{mounts}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(t.work.join(".bashrc")).unwrap(),
            before,
            "{case}"
        );
        let out = t.exec(&["python3", "-c", APPEND, "other.txt"]);
        assert!(
            text(&out).contains("wrote other.txt"),
            "{case}: {}",
            text(&out)
        );
        let out = t.exec(&["python3", "-c", "print(open('/etc/resolv.conf').read())"]);
        assert!(
            text(&out).contains("nameserver 127."),
            "{case}: {}",
            text(&out)
        );
    }
}

#[test]
fn network_false_still_means_no_network() {
    if !has("curl") {
        missing("`curl` is needed");
        return;
    }
    let (web, _) = http_server();
    let t = tree(Who::Root, "landlock", &[format!("127.0.0.1:{web}")]);
    let policy = t.home.join(".sandgate/permissions.yaml");
    let text_before = fs::read_to_string(&policy).unwrap();
    fs::write(
        &policy,
        text_before.replace("mode: landlock\n", "mode: landlock\n      network: false\n"),
    )
    .unwrap();
    let out = t.exec(&[
        "curl",
        "-sS",
        "--max-time",
        "10",
        &format!("http://127.0.0.1:{web}/hi"),
    ]);
    assert!(!text(&out).contains("served"), "{}", text(&out));
}

/// A raw HTTP/1.0 request over a socket of the address's family, connected
/// by the program itself (no proxy): `argv[1]` host, `argv[2]` port,
/// `argv[3]` `timeout` (a non-blocking socket, as `settimeout` makes it) or
/// `blocking`.
const DIRECT_GET: &str = "import socket,sys\n\
fam = socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET\n\
s = socket.socket(fam, socket.SOCK_STREAM)\n\
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\n\
if sys.argv[3] == 'timeout': s.settimeout(20)\n\
try:\n    s.connect((sys.argv[1], int(sys.argv[2])))\n\
except OSError as e:\n    print('connect failed: errno', e.errno, e.strerror); sys.exit(3)\n\
assert s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0, 'TCP_NODELAY lost'\n\
assert s.family == fam, 'family changed'\n\
assert (s.gettimeout() is None) == (sys.argv[3] == 'blocking'), 'blocking mode changed'\n\
s.sendall(b'GET /direct HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n')\n\
print(s.makefile('rb').read().decode())\n";

#[test]
fn a_program_that_ignores_the_proxy_reaches_a_listed_address_directly_and_nothing_else() {
    if !has("curl") || !has("python3") {
        missing("`curl` and `python3` are needed");
        return;
    }
    let (web, _) = http_server();
    let (web6, _) = http_server_on("[::1]:0");
    let Recorders {
        tcp, connections, ..
    } = recorders();
    for who in users() {
        for mode in modes() {
            let case = format!("{who:?} {mode}");
            let t = tree(
                who,
                mode,
                &[format!("127.0.0.1:{web}"), format!("[::1]:{web6}")],
            );
            let log = t.home.join("audit.jsonl");
            // Python's own connect, blocking and not, over IPv4 and IPv6:
            // the listed address is reached from sandgate's namespace.
            for (host, port) in [("127.0.0.1", web), ("::1", web6)] {
                for how in ["blocking", "timeout"] {
                    let out = t.exec_audited(
                        &log,
                        &["python3", "-c", DIRECT_GET, host, &port.to_string(), how],
                    );
                    assert_says(&out, "served /direct", &format!("{case} {host} {how}"));
                }
            }
            // curl told to ignore every proxy.
            let out = t.exec(&[
                "curl",
                "-sS",
                "--noproxy",
                "*",
                "--max-time",
                "20",
                &format!("http://127.0.0.1:{web}/curl"),
            ]);
            assert_says(&out, "served /curl", &case);
            let audit = fs::read_to_string(&log).unwrap_or_default();
            assert!(
                audit.contains("by a direct connect")
                    && audit.contains(&format!("127.0.0.1:{web}")),
                "{case}: {audit}"
            );
            // An unlisted port of a listed address: unconfined it connects…
            let unlisted_port = tcp.to_string();
            let argv = [
                "python3",
                "-c",
                DIRECT_GET,
                "127.0.0.1",
                &unlisted_port,
                "blocking",
            ];
            let before = connections.load(Ordering::SeqCst);
            let plain = t.plain(&argv);
            assert!(
                !text(&plain).contains("connect failed"),
                "{case}: {}",
                text(&plain)
            );
            wait_for(
                &connections,
                before + 1,
                &format!("{case}: unconfined connect not seen"),
            );
            // …confined it stays in the namespace, where nothing listens.
            let before = connections.load(Ordering::SeqCst);
            let out = t.exec(&argv);
            assert_says(&out, "connect failed: errno 111", &case);
            // A public address that is not listed: refused before any packet,
            // EACCES for the program, the command that would allow it on stderr.
            for (host, entry) in [
                ("192.0.2.1", "192.0.2.1:9"),
                ("2001:db8::1", "[2001:db8::1]:9"),
            ] {
                let out =
                    t.exec_audited(&log, &["python3", "-c", DIRECT_GET, host, "9", "timeout"]);
                assert_says(&out, "connect failed: errno 13", &format!("{case} {host}"));
                assert!(
                    String::from_utf8_lossy(&out.stderr)
                        .contains(&format!("sandgate policy allow domain {entry}")),
                    "{case} {host}: {}",
                    text(&out)
                );
            }
            let audit = fs::read_to_string(&log).unwrap_or_default();
            assert!(audit.contains("192.0.2.1:9"), "{case}: {audit}");
            std::thread::sleep(Duration::from_millis(300));
            assert_eq!(
                connections.load(Ordering::SeqCst),
                before,
                "{case}: a connection leaked"
            );
            drop(t);
        }
    }
}

/// The argv of [`DNS_QUERY`]: an A query for `name` to `server` port 53
/// over `proto` (`udp` or `tcp`).
fn dns_query<'a>(name: &'a str, server: &'a str, proto: &'a str) -> [&'a str; 7] {
    ["python3", "-c", DNS_QUERY, name, server, "53", proto]
}

/// The question's name of a DNS query (no compression: a test's own
/// clients never use it).
fn query_name(q: &[u8]) -> Option<String> {
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let len = usize::from(*q.get(at)?);
        at += 1;
        if len == 0 {
            return Some(labels.join(".").to_ascii_lowercase());
        }
        labels.push(String::from_utf8_lossy(q.get(at..at + len)?).into_owned());
        at += len;
    }
}

/// A DNS answer to `q`: `A 127.0.0.1` for `known` names, NXDOMAIN for others.
fn dns_answer(q: &[u8], known: &[&str]) -> Vec<u8> {
    let name = query_name(q).unwrap_or_default();
    let mut end = 12;
    while end < q.len() && q[end] != 0 {
        end += 1 + usize::from(q[end]);
    }
    let end = (end + 5).min(q.len());
    let qtype = q
        .get(end - 4..end - 2)
        .map_or(0, |t| u16::from_be_bytes([t[0], t[1]]));
    let found = known.contains(&name.as_str());
    let a = found && qtype == 1;
    let mut r = q[..2].to_vec();
    r.extend_from_slice(&[
        0x81,
        if found { 0x80 } else { 0x83 },
        0,
        1,
        0,
        u8::from(a),
        0,
        0,
        0,
        0,
    ]);
    r.extend_from_slice(&q[12..end]);
    if a {
        r.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, 127, 0, 0, 1]);
    }
    r
}

/// The names a [`dns_recorder`] was asked for.
type Seen = Arc<std::sync::Mutex<Vec<String>>>;

/// A DNS server on port 53 (UDP and TCP) of a loopback address of its own
/// (`/etc/resolv.conf` names a server without a port), which records the
/// name of every query it gets and answers `known` names with 127.0.0.1.
/// The address is the first of `127.53.X.Y` both sockets can bind, so
/// another test run on the machine (or a service) holding one cannot make
/// this test fail; `None` when port 53 cannot be bound at all.
fn dns_recorder(known: &'static [&'static str]) -> Option<(String, Seen)> {
    let seen: Seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let base = std::process::id() % 200;
    let (address, udp, tcp) = (0..50).find_map(|i| {
        let address = format!("127.53.{base}.{}", 1 + i);
        let udp = UdpSocket::bind((address.as_str(), 53)).ok()?;
        let tcp = TcpListener::bind((address.as_str(), 53)).ok()?;
        Some((address, udp, tcp))
    })?;
    let s = Arc::clone(&seen);
    std::thread::spawn(move || {
        let mut buf = [0u8; 1500];
        while let Ok((n, from)) = udp.recv_from(&mut buf) {
            s.lock()
                .unwrap()
                .push(query_name(&buf[..n]).unwrap_or_default());
            let _ = udp.send_to(&dns_answer(&buf[..n], known), from);
        }
    });
    let s = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in tcp.incoming() {
            let Ok(mut stream) = stream else { continue };
            stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
            let mut len = [0u8; 2];
            if std::io::Read::read_exact(&mut stream, &mut len).is_err() {
                continue;
            }
            let mut q = vec![0u8; usize::from(u16::from_be_bytes(len))];
            if std::io::Read::read_exact(&mut stream, &mut q).is_err() {
                continue;
            }
            s.lock().unwrap().push(query_name(&q).unwrap_or_default());
            let r = dns_answer(&q, known);
            let _ = stream.write_all(&(r.len() as u16).to_be_bytes());
            let _ = stream.write_all(&r);
        }
    });
    Some((address, seen))
}

/// A DNS query by hand: `argv[1]` name, `argv[2]` server, `argv[3]` port,
/// `argv[4]` `udp` or `tcp`. Prints the response code, the number of
/// answers and the last four bytes (the address of an `A` answer).
const DNS_QUERY: &str = r#"import socket,struct,sys
name, server, port, proto = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
q = struct.pack('>HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0) + b''.join(bytes([len(l)]) + l.encode() for l in name.split('.')) + b'\0' + struct.pack('>HH', 1, 1)
try:
    if proto == 'udp':
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
        s.sendto(q, (server, port)); r = s.recv(4096)
    else:
        s = socket.create_connection((server, port), timeout=5)
        s.sendall(struct.pack('>H', len(q)) + q)
        n = struct.unpack('>H', s.recv(2))[0]; r = b''
        while len(r) < n: r += s.recv(n - len(r))
except OSError as e:
    print('failed: errno', e.errno, e); sys.exit(3)
print('rcode', r[3] & 15, 'answers', struct.unpack('>H', r[6:8])[0], 'last', '.'.join(str(b) for b in r[-4:]))
"#;

/// `getaddrinfo` as a program that resolves by itself calls it.
const GETADDRINFO: &str = r#"import socket,sys
try:
    print(sorted({a[4][0] for a in socket.getaddrinfo(sys.argv[1], 80, proto=socket.IPPROTO_TCP)}))
except OSError as e:
    print('failed:', e); sys.exit(3)
"#;

/// The files of a mount namespace the test makes: its own `/etc/hosts`
/// and an `/etc/resolv.conf` naming the recording server.
struct Names {
    _dir: tempfile::TempDir,
    hosts: PathBuf,
    resolv: PathBuf,
}

fn names(hosts: &str) -> Names {
    names_served_by(hosts, "127.53.0.1")
}

/// [`names`] with `nameserver` in its `/etc/resolv.conf`.
fn names_served_by(hosts: &str, nameserver: &str) -> Names {
    let dir = tempfile::Builder::new()
        .prefix("sandgate-names-")
        .tempdir_in("/tmp")
        .unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let (h, r) = (dir.path().join("hosts"), dir.path().join("resolv.conf"));
    fs::write(&h, format!("127.0.0.1 localhost\n{hosts}")).unwrap();
    fs::write(
        &r,
        format!("nameserver {nameserver}\noptions timeout:2 attempts:1\n"),
    )
    .unwrap();
    for f in [&h, &r] {
        fs::set_permissions(f, fs::Permissions::from_mode(0o644)).unwrap();
    }
    Names {
        _dir: dir,
        hosts: h,
        resolv: r,
    }
}

impl Tree {
    /// `program args` as this tree's user, in a mount namespace with the
    /// test's `/etc/hosts` and `/etc/resolv.conf` (made as root, before
    /// the user is taken on): the machine's own files are never changed.
    fn with_names(&self, names: &Names, program: &Path, args: &[&str]) -> Output {
        run_with_deadline(self.named_command(names, program, args))
    }

    /// The command [`Tree::with_names`] runs.
    fn named_command(&self, names: &Names, program: &Path, args: &[&str]) -> Command {
        let inner = self.command(program);
        let mut cmd = Command::new("unshare");
        cmd.args(["--mount", "--propagation", "private", "--", "sh", "-c"])
            .arg("mount --bind \"$1\" /etc/hosts && mount --bind \"$2\" /etc/resolv.conf && shift 2 && exec \"$@\"")
            .arg("sh")
            .arg(&names.hosts)
            .arg(&names.resolv)
            .arg(inner.get_program())
            .args(inner.get_args())
            .args(args);
        cmd.env_clear();
        for (k, v) in inner.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        cmd.current_dir(&self.work).stdin(Stdio::null());
        cmd
    }

    /// `argv` unconfined, with the test's names.
    fn plain_named(&self, names: &Names, argv: &[&str]) -> Output {
        self.with_names(names, Path::new(argv[0]), &argv[1..])
    }

    /// `sandgate exec -- argv`, with the test's names.
    fn exec_named(&self, names: &Names, argv: &[&str]) -> Output {
        let mut args = vec!["exec", "--"];
        args.extend_from_slice(argv);
        self.with_names(names, &self.bin.clone(), &args)
    }
}

#[test]
fn names_resolve_for_listed_hosts_only_and_no_other_query_leaves() {
    if !is_root() {
        missing(
            "the test's own /etc/hosts and /etc/resolv.conf need a mount namespace made as root",
        );
        return;
    }
    if !has("python3") || !has("getent") || !has("unshare") {
        missing("`python3`, `getent` and `unshare` are needed");
        return;
    }
    let Some((server, seen)) = dns_recorder(&["dnsonly.test", "leak.test"]) else {
        missing("cannot listen on port 53 of any 127.53.X.Y (UDP and TCP)");
        return;
    };
    let queried = |name: &str| seen.lock().unwrap().iter().any(|n| n == name);
    let (web, _) = http_server();
    let n = names_served_by("127.0.0.1 web.test\n", &server);
    for who in users() {
        for mode in modes() {
            let case = format!("{who:?} {mode}");
            let tag = format!("{}-{mode}", matches!(who, Who::Root));
            let t = tree(
                who,
                mode,
                &[
                    format!("web.test:{web}"),
                    format!("127.0.0.1:{web}"),
                    "dnsonly.test".to_string(),
                ],
            );
            // Unconfined, a lookup of any name reaches the name server…
            let leak = format!("leak-{tag}.test");
            let out = t.plain_named(&n, &["getent", "hosts", &leak]);
            assert_eq!(out.status.code(), Some(2), "{case}: {}", text(&out));
            assert!(queried(&leak), "{case}: the unconfined lookup was not seen");
            // …confined, an unlisted name is refused and never asked about.
            let unlisted = format!("unlisted-{tag}.test");
            let out = t.exec_named(&n, &["getent", "hosts", &unlisted]);
            assert_eq!(out.status.code(), Some(2), "{case}: {}", text(&out));
            let out = t.exec_named(&n, &["python3", "-c", GETADDRINFO, &unlisted]);
            assert_says(&out, "failed", &case);
            // By hand over UDP and TCP to the namespace's resolver: NXDOMAIN.
            for proto in ["udp", "tcp"] {
                let out = t.exec_named(&n, &dns_query(&unlisted, "127.0.0.1", proto));
                assert_says(&out, "rcode 3 answers 0", &format!("{case} {proto}"));
            }
            // Straight to the name server, UDP and TCP: unconfined it answers…
            let direct = format!("direct-{tag}.test");
            for proto in ["udp", "tcp"] {
                let out = t.plain_named(&n, &dns_query(&direct, &server, proto));
                assert_says(&out, "rcode 3", &format!("{case} {proto}"));
            }
            assert!(
                queried(&direct),
                "{case}: the unconfined query was not seen"
            );
            // …confined it is not reached (the namespace's own loopback).
            let hidden = format!("hidden-{tag}.test");
            for proto in ["udp", "tcp"] {
                let out = t.exec_named(&n, &dns_query(&hidden, &server, proto));
                assert_says(&out, "failed", &format!("{case} {proto}"));
            }
            // A public name server: no route.
            let out = t.exec_named(&n, &dns_query(&hidden, "8.8.8.8", "udp"));
            assert_says(&out, "failed: errno 101", &case);
            std::thread::sleep(Duration::from_millis(300));
            assert!(
                !queried(&unlisted) && !queried(&hidden),
                "{case}: a query leaked: {:?}",
                seen.lock().unwrap()
            );
            // Listed names resolve: from the hosts file and from the name server,
            // by getent, getaddrinfo and a query over TCP.
            let out = t.exec_named(&n, &["getent", "hosts", "web.test"]);
            assert_says(&out, "127.0.0.1", &case);
            let out = t.exec_named(&n, &["getent", "ahostsv4", "dnsonly.test"]);
            assert!(
                text(&out).contains("127.0.0.1"),
                "{case}: {:?} {} {:?}",
                out.status,
                text(&out),
                seen.lock().unwrap()
            );
            let out = t.exec_named(&n, &["python3", "-c", GETADDRINFO, "dnsonly.test"]);
            assert_says(&out, "['127.0.0.1']", &case);
            let out = t.exec_named(&n, &dns_query("dnsonly.test", "127.0.0.1", "tcp"));
            assert_says(&out, "rcode 0 answers 1 last 127.0.0.1", &case);
            // A program that resolves a listed name itself and connects to
            // what it got, ignoring the proxy.
            let out = t.exec_named(
                &n,
                &[
                    "python3",
                    "-c",
                    DIRECT_GET,
                    "web.test",
                    &web.to_string(),
                    "timeout",
                ],
            );
            assert_says(&out, "served /direct", &case);
            // curl told to ignore every proxy resolves the name itself.
            let out = t.exec_named(
                &n,
                &[
                    "curl",
                    "-sS",
                    "--noproxy",
                    "*",
                    "--max-time",
                    "20",
                    &format!("http://web.test:{web}/by-name"),
                ],
            );
            assert_says(&out, "served /by-name", &case);
            drop(t);
        }
    }
}

/// An SSH server on 127.0.0.1 that cannot lose its port: the test binds
/// the listening socket (port 0) and runs `sshd -i` on each connection.
/// Its sessions are killed when the returned list is dropped.
fn ssh_server(config: &Path) -> (u16, Arc<std::sync::Mutex<Vec<wait::Guard>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let sessions = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (config, list) = (config.to_path_buf(), Arc::clone(&sessions));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let input = stream.try_clone().unwrap();
            let session = Command::new("/usr/sbin/sshd")
                .args(["-i", "-e", "-f"])
                .arg(&config)
                .stdin(Stdio::from(std::os::fd::OwnedFd::from(input)))
                .stdout(Stdio::from(std::os::fd::OwnedFd::from(stream)))
                .stderr(Stdio::null())
                .spawn_guarded();
            if let Ok(session) = session {
                list.lock().unwrap().push(session);
            }
        }
    });
    (port, sessions)
}

fn must(cmd: &mut Command) -> Output {
    let out = cmd.output_within(DEADLINE).unwrap();
    assert!(out.status.success(), "{cmd:?}: {}", text(&out));
    out
}

#[test]
fn git_over_ssh_reaches_a_listed_host_port_and_no_other() {
    if !is_root() {
        missing(
            "the test's own /etc/hosts needs a mount namespace made as root, and sshd runs as root",
        );
        return;
    }
    for tool in [
        "/usr/sbin/sshd",
        "ssh",
        "ssh-agent",
        "ssh-add",
        "ssh-keygen",
        "git",
        "unshare",
    ] {
        if !has(tool) && !Path::new(tool).exists() {
            missing(&format!(
                "`{tool}` is needed (packages openssh-server, openssh-client, git, util-linux)"
            ));
            return;
        }
    }
    // The server: its host key, the client's key as its only authorized
    // key (for root, whoever the client runs as), and a bare repository.
    let server = tempfile::Builder::new()
        .prefix("sandgate-sshd-")
        .tempdir_in("/tmp")
        .unwrap();
    let srv = server.path().canonicalize().unwrap();
    fs::set_permissions(&srv, fs::Permissions::from_mode(0o755)).unwrap();
    for (file, comment) in [("host", "host"), ("client", "client")] {
        must(
            Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f"])
                .arg(srv.join(file)),
        );
    }
    fs::copy(srv.join("client.pub"), srv.join("authorized_keys")).unwrap();
    let config = srv.join("sshd_config");
    fs::write(
        &config,
        format!(
            "HostKey {}\nAuthorizedKeysFile {}\nUsePAM no\nStrictModes no\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n",
            srv.join("host").display(),
            srv.join("authorized_keys").display()
        ),
    )
    .unwrap();
    fs::create_dir_all("/run/sshd").unwrap();
    let remote = srv.join("remote.git");
    must(
        Command::new("git")
            .args(["init", "-q", "--bare", "-b", "main"])
            .arg(&remote),
    );
    let src = srv.join("src");
    must(
        Command::new("git")
            .args(["init", "-q", "-b", "main"])
            .arg(&src),
    );
    fs::write(src.join("file.txt"), "cloned over ssh\n").unwrap();
    let git = |args: &[&str]| {
        must(
            Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
                .args(args)
                .current_dir(&src),
        )
    };
    git(&["add", "file.txt"]);
    git(&["commit", "-q", "-m", "first"]);
    git(&["push", "-q", remote.to_str().unwrap(), "main"]);
    let (port, sessions) = ssh_server(&config);
    let host_pub = fs::read_to_string(srv.join("host.pub")).unwrap();
    let n = names("127.0.0.1 git.test\n");
    for who in users() {
        for mode in modes() {
            let case = format!("{who:?} {mode}");
            let listed = [format!("git.test:{port}"), format!("127.0.0.1:{port}")];
            for (allowed, allow) in [(true, &listed[..]), (false, &[][..])] {
                // The agent socket is listed as today; it lives in the user's HOME.
                let mut t = tree(who, mode, allow);
                let agent = t.home.join("agent.sock");
                let policy = t.home.join(".sandgate/permissions.yaml");
                let before = fs::read_to_string(&policy).unwrap();
                fs::write(
                    &policy,
                    before.replace(
                        &format!("mode: {mode}\n"),
                        &format!(
                            "mode: {mode}\n      unix_sockets: [\"{}\"]\n",
                            agent.display()
                        ),
                    ),
                )
                .unwrap();
                let key = t.home.join("client");
                fs::copy(srv.join("client"), &key).unwrap();
                fs::set_permissions(&key, fs::Permissions::from_mode(0o600)).unwrap();
                let (known, ssh_config) = (t.home.join("known_hosts"), t.home.join("ssh_config"));
                fs::write(&known, format!("[git.test]:{port} {host_pub}")).unwrap();
                fs::write(
                    &ssh_config,
                    format!(
                        "Host git.test\n  Port {port}\n  User root\n  UserKnownHostsFile {}\n  \
                         GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  BatchMode yes\n",
                        known.display()
                    ),
                )
                .unwrap();
                if let Who::User { uid, gid } = who {
                    for f in [&key, &known, &ssh_config] {
                        must(Command::new("chown").arg(format!("{uid}:{gid}")).arg(f));
                    }
                }
                let mut agent_cmd = t.command(Path::new("ssh-agent"));
                agent_cmd
                    .args(["-D", "-a"])
                    .arg(&agent)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                let _agent = agent_cmd.spawn_guarded().unwrap();
                wait::until(20, "ssh-agent", || {
                    std::os::unix::net::UnixStream::connect(&agent).is_ok()
                });
                t.env
                    .push(("SSH_AUTH_SOCK".into(), agent.display().to_string()));
                t.env.push((
                    "GIT_SSH_COMMAND".into(),
                    format!("ssh -F {}", ssh_config.display()),
                ));
                must(t.command(Path::new("ssh-add")).arg("-q").arg(&key));
                // The private key is in the agent only.
                fs::remove_file(&key).unwrap();
                let url = format!("git.test:{}", remote.display());
                // Unconfined, the clone works either way.
                let out = t.plain_named(&n, &["git", "ls-remote", &url]);
                assert_says(&out, "refs/heads/main", &case);
                let reached = sessions.lock().unwrap().len();
                let out = t.exec_named(&n, &["git", "clone", "-q", &url, "copy"]);
                let cloned = fs::read_to_string(t.work.join("copy/file.txt")).unwrap_or_default();
                if allowed {
                    assert_eq!(cloned, "cloned over ssh\n", "{case}: {}", text(&out));
                } else {
                    // A loopback address no entry names is the namespace's
                    // own: the connection stays inside, and nothing reaches
                    // the server.
                    assert!(
                        !out.status.success() && cloned.is_empty(),
                        "{case}: {}",
                        text(&out)
                    );
                    assert_eq!(
                        sessions.lock().unwrap().len(),
                        reached,
                        "{case}: sshd was reached"
                    );
                }
            }
        }
    }
    sessions.lock().unwrap().clear();
}

/// `sandgate exec -- curl URL` in a real terminal, with the test's names and
/// the prompt on; `key` answers the question. Returns what the terminal
/// showed (before and after the menu) and the exit code.
fn exec_asked(t: &Tree, n: &Names, url: &str, key: &str) -> (String, String, i32) {
    use expectrl::process::unix::WaitStatus;
    use expectrl::{Eof, Expect};
    let mut cmd = t.named_command(
        n,
        &t.bin.clone(),
        &["exec", "--", "curl", "-sS", "--max-time", "60", url],
    );
    cmd.env_remove("SANDGATE_NO_UI").env("TERM", "xterm");
    let mut s = expectrl::session::OsSession::spawn(cmd).expect("spawn in a pty");
    s.set_expect_timeout(Some(Duration::from_secs(60)));
    let shown = s.expect("[4] deny always").expect("the question is shown");
    let shown = String::from_utf8_lossy(shown.before()).into_owned();
    s.send(key).unwrap();
    let rest = s.expect(Eof).expect("the command ends");
    let rest = String::from_utf8_lossy(rest.as_bytes()).into_owned();
    let code = match pty::wait_within(&mut s, DEADLINE).expect("wait") {
        WaitStatus::Exited(_, code) => code,
        other => panic!("unexpected end: {other:?}"),
    };
    (shown, rest, code)
}

#[test]
fn an_unlisted_host_is_asked_at_the_terminal_and_always_is_written_to_the_central_file() {
    if !is_root() {
        missing("the test's own /etc/hosts needs a mount namespace made as root");
        return;
    }
    if !has("curl") || !has("unshare") {
        missing("`curl` and `unshare` are needed");
        return;
    }
    let (web, _) = http_server();
    let n = names("127.0.0.1 web.test\n");
    let url = format!("http://web.test:{web}/asked");
    // As root and as the unprivileged user: the question reaches the
    // terminal either way.
    for (who, mode) in users()
        .into_iter()
        .flat_map(|who| modes().into_iter().map(move |mode| (who, mode)))
    {
        let case = format!("{who:?} {mode}");
        // The address is listed (a name on loopback needs it); the name is not.
        let t = tree(who, mode, &[format!("127.0.0.1:{web}")]);
        let policy = t.home.join(".sandgate/permissions.yaml");
        let commented = format!(
            "# my policy: keep this comment\n{}",
            fs::read_to_string(&policy)
                .unwrap()
                .replace("  network:\n", "  network:   # hosts, by hand\n")
        );
        fs::write(&policy, &commented).unwrap();
        // Deny once: a 403, nothing written.
        let (shown, rest, _) = exec_asked(&t, &n, &url, "3");
        assert!(shown.contains("network"), "{case}: {shown}");
        assert!(
            shown.contains(&format!("host: web.test:{web}")),
            "{case}: {shown}"
        );
        assert!(shown.contains("curl"), "{case}: {shown}");
        assert!(
            rest.contains("sandgate refused the connection"),
            "{case}: {rest}"
        );
        assert_eq!(fs::read_to_string(&policy).unwrap(), commented, "{case}");
        // Allow always: the page, and the entry in the central file, comments kept.
        let (_, rest, code) = exec_asked(&t, &n, &url, "2");
        assert!(rest.contains("served /asked"), "{case}: {rest}");
        assert_eq!(code, 0, "{case}: {rest}");
        let written = fs::read_to_string(&policy).unwrap();
        assert!(
            written.contains(&format!("web.test:{web}")),
            "{case}: {written}"
        );
        assert!(
            written.contains("# my policy: keep this comment")
                && written.contains("# hosts, by hand"),
            "{case}: {written}"
        );
        // Next time it is not asked: no terminal needed.
        let out = t.exec_named(&n, &["curl", "-sS", "--max-time", "30", &url]);
        assert_says(&out, "served /asked", &case);
        // Deny always: a deny entry, and the next run is refused unasked.
        let other = format!("http://web.test:{}/other", web);
        let t2 = tree(who, mode, &[format!("127.0.0.1:{web}")]);
        let (_, rest, _) = exec_asked(&t2, &n, &other, "4");
        assert!(
            rest.contains("sandgate refused the connection"),
            "{case}: {rest}"
        );
        let written = fs::read_to_string(t2.home.join(".sandgate/permissions.yaml")).unwrap();
        assert!(written.contains("deny:"), "{case}: {written}");
        let out = t2.exec_named(&n, &["curl", "-sS", "--max-time", "30", &other]);
        assert_says(&out, "matches the network deny", &case);
        // Without a terminal, refused (nobody to ask).
        let t3 = tree(who, mode, &[format!("127.0.0.1:{web}")]);
        let mut cmd = t3.named_command(
            &n,
            Path::new("setsid"),
            &[
                t3.bin.to_str().unwrap(),
                "exec",
                "--",
                "curl",
                "-sS",
                "--max-time",
                "30",
                &format!("http://web.test:{web}/none"),
            ],
        );
        cmd.env_remove("SANDGATE_NO_UI");
        let out = run_with_deadline(cmd);
        assert!(!text(&out).contains("served"), "{case}: {}", text(&out));
        assert_says(&out, "no terminal to ask", &case);
    }
}
