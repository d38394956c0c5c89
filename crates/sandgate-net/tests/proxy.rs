//! The filtering proxy against real servers and real clients, on loopback
//! only: an HTTP server and a TCP echo server this test runs, an HTTPS
//! server (`openssl s_server`) with a certificate of a test CA, and `curl`
//! and Python's `socket` as clients. Host names resolve through the test's
//! own table (the gate's resolver), never through the machine's files.
//! Every refusal row first shows that the same attempt works without the
//! proxy's check.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/ci.rs"]
mod ci;
#[path = "../../../tests/support/wait.rs"]
mod wait;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandgate_net::{Gate, NetworkPolicy, Record, Target};
use sandgate_policy::Verdict;
use wait::{read_some, Bounded, BoundedChild, DEADLINE};

/// A gate with its own name table and a log of every decision.
struct TestGate {
    policy: NetworkPolicy,
    hosts: HashMap<String, Vec<IpAddr>>,
    log: Mutex<Vec<Record>>,
    answer: Option<Verdict>,
}

impl Gate for TestGate {
    fn policy(&self) -> &NetworkPolicy {
        &self.policy
    }
    fn ask(&self, _t: &Target, _p: u16, _d: &sandgate_policy::Decision) -> Option<Verdict> {
        self.answer
    }
    fn record(&self, record: &Record) {
        self.log.lock().unwrap().push(record.clone());
    }
    fn resolve(&self, name: &str, _port: u16) -> std::io::Result<Vec<IpAddr>> {
        self.hosts
            .get(name)
            .cloned()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such name"))
    }
}

/// A proxy serving `allow`/`deny` on a loopback port; its gate.
fn start_proxy(allow: &[String], deny: &[&str], answer: Option<Verdict>) -> (u16, Arc<TestGate>) {
    let allow: Vec<&str> = allow.iter().map(String::as_str).collect();
    let gate = Arc::new(TestGate {
        policy: NetworkPolicy::from_lists(&allow, deny).unwrap(),
        hosts: [
            ("allowed.test", "127.0.0.1"),
            ("other.test", "127.0.0.1"),
            ("evil.test", "127.0.0.1"),
            ("six.test", "::1"),
        ]
        .into_iter()
        .map(|(n, a)| (n.to_string(), vec![a.parse().unwrap()]))
        .collect(),
        log: Mutex::new(Vec::new()),
        answer,
    });
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = Arc::clone(&gate);
    std::thread::spawn(move || sandgate_net::serve(listener, served));
    (port, gate)
}

/// An HTTP server that answers every request with its Host header and path.
fn http_server() -> u16 {
    serve_each("127.0.0.1:0", 10, |stream| {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() {
            return;
        }
        let path = line.split(' ').nth(1).unwrap_or("").to_string();
        let mut host = String::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                break;
            }
            if let Some(v) = h.to_ascii_lowercase().strip_prefix("host:") {
                host = v.trim().to_string();
            }
        }
        let body = format!("hello host={host} path={path}\n");
        let mut w = stream;
        let _ = write!(
            w,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    })
}

/// A server on `addr` that hands each connection, with a read timeout of
/// `timeout` seconds, to `handle` on a thread of its own; its port.
fn serve_each(addr: &str, timeout: u64, handle: fn(TcpStream)) -> u16 {
    let listener = TcpListener::bind(addr).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || {
                stream
                    .set_read_timeout(Some(Duration::from_secs(timeout)))
                    .unwrap();
                handle(stream);
            });
        }
    });
    port
}

/// A TCP server that sends a banner first, then echoes.
fn echo_server(addr: &str) -> u16 {
    serve_each(addr, 60, |mut stream| {
        let _ = stream.write_all(b"banner\n");
        let mut buf = [0u8; 1024];
        while let Ok(n) = read_some(&mut stream, &mut buf) {
            if n == 0 || stream.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    })
}

fn curl(args: &[&str]) -> Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "20", "--noproxy", ""])
        .args(args)
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .output_within(DEADLINE)
        .expect("curl runs (install curl)")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn have(tool: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output_within(DEADLINE)
        .is_ok_and(|o| o.status.success());
    if !found && ci::under_ci() {
        panic!("{tool} is needed by this test: install it");
    }
    if !found {
        eprintln!("skipped: {tool} is not installed");
    }
    found
}

#[test]
fn plain_http_is_checked_by_host_and_refusals_name_the_command() {
    if !have("curl") {
        return;
    }
    let web = http_server();
    let (proxy, gate) = start_proxy(
        &[format!("allowed.test:{web}"), format!("127.0.0.1:{web}")],
        &["evil.test"],
        None,
    );
    let px = format!("http://127.0.0.1:{proxy}");
    // Unconfined, other.test reaches the server (it is the same one).
    let direct = curl(&[
        "--resolve",
        &format!("other.test:{web}:127.0.0.1"),
        &format!("http://other.test:{web}/x"),
    ]);
    assert!(
        text(&direct).contains("hello host=other.test"),
        "{}",
        text(&direct)
    );
    // Through the proxy: the listed name passes, with its path.
    let ok = curl(&["-x", &px, &format!("http://allowed.test:{web}/a/b?c=1")]);
    assert!(ok.status.success(), "{}", text(&ok));
    assert!(
        text(&ok).contains(&format!("hello host=allowed.test:{web} path=/a/b?c=1")),
        "{}",
        text(&ok)
    );
    // An unlisted name: 403 naming the host and the command.
    let no = curl(&["-x", &px, "-i", &format!("http://other.test:{web}/x")]);
    let t = text(&no);
    assert!(t.contains("403 Forbidden"), "{t}");
    assert!(t.contains(&format!("other.test:{web}")), "{t}");
    assert!(
        t.contains(&format!("sandgate policy allow domain other.test:{web}")),
        "{t}"
    );
    // A Host header naming another host than the URL.
    let fronted = curl(&[
        "-x",
        &px,
        "-i",
        "-H",
        &format!("Host: other.test:{web}"),
        &format!("http://allowed.test:{web}/"),
    ]);
    assert!(text(&fronted).contains("403"), "{}", text(&fronted));
    assert!(!text(&fronted).contains("hello"), "{}", text(&fronted));
    let log = gate.log.lock().unwrap();
    assert!(log
        .iter()
        .any(|r| r.host == "other.test" && r.decision.verdict == Verdict::Deny));
    assert!(log
        .iter()
        .any(|r| r.host == "allowed.test" && r.decision.verdict == Verdict::Allow));
}

#[test]
fn a_listed_name_reaches_a_local_address_only_when_the_address_is_listed() {
    if !have("curl") {
        return;
    }
    let web = http_server();
    let (proxy, _) = start_proxy(&[format!("allowed.test:{web}")], &[], None);
    let out = curl(&[
        "-x",
        &format!("http://127.0.0.1:{proxy}"),
        "-i",
        &format!("http://allowed.test:{web}/"),
    ]);
    let t = text(&out);
    assert!(t.contains("403"), "{t}");
    assert!(t.contains("private address 127.0.0.1"), "{t}");
    assert!(t.contains(&format!("allow domain 127.0.0.1:{web}")), "{t}");
}

#[test]
fn connect_tunnels_pass_for_listed_hosts_only_and_asking_decides_the_rest() {
    let echo = echo_server("127.0.0.1:0");
    let (proxy, gate) = start_proxy(
        &[format!("allowed.test:{echo}"), format!("127.0.0.1:{echo}")],
        &[],
        None,
    );
    let tunnel = |host: &str| -> String {
        let mut s = TcpStream::connect(("127.0.0.1", proxy)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "CONNECT {host}:{echo} HTTP/1.1\r\nHost: {host}:{echo}\r\n\r\n"
        )
        .unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        // The host speaks first (a banner): it must arrive before we send.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !String::from_utf8_lossy(&got).contains("banner")
            && !String::from_utf8_lossy(&got).contains("403")
            && Instant::now() < deadline
        {
            match read_some(&mut s, &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        if String::from_utf8_lossy(&got).contains("banner") {
            s.write_all(b"ping\n").unwrap();
            let n = read_some(&mut s, &mut buf).unwrap_or(0);
            got.extend_from_slice(&buf[..n]);
        } else {
            let _ = s.read_to_end(&mut got);
        }
        String::from_utf8_lossy(&got).into_owned()
    };
    let ok = tunnel("allowed.test");
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(ok.contains("banner") && ok.contains("ping"), "{ok}");
    let no = tunnel("other.test");
    assert!(no.starts_with("HTTP/1.1 403"), "{no}");
    assert!(no.contains("nobody can answer"), "{no}");
    // A person who answers allow lets it through.
    let (asked, _) = start_proxy(&[format!("127.0.0.1:{echo}")], &[], Some(Verdict::Allow));
    let mut s = TcpStream::connect(("127.0.0.1", asked)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "CONNECT other.test:{echo} HTTP/1.1\r\n\r\n").unwrap();
    let mut buf = [0u8; 256];
    let n = read_some(&mut s, &mut buf).unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    drop(gate);
}

/// A supervisor starts and reaps children all the time; the kernel then
/// interrupts the proxy's reads that have a timeout (`EINTR`, never
/// restarted). Every request still goes through, the proxy waiting in its
/// first read for each (the client speaks a moment after connecting).
#[test]
fn requests_go_through_while_the_process_starts_children() {
    let http = http_server();
    let (proxy, _) = start_proxy(&[format!("127.0.0.1:{http}")], &[], None);
    /// Stops the thread starting children, also when the test fails.
    struct Stop(Arc<AtomicBool>);
    impl Drop for Stop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let stop = Stop(Arc::new(AtomicBool::new(false)));
    let stopped = Arc::clone(&stop.0);
    let children = std::thread::spawn(move || {
        let mut started = 0u32;
        while !stopped.load(Ordering::SeqCst) {
            let batch: Vec<_> = (0..20)
                .filter_map(|_| Command::new("true").process_group(0).spawn().ok())
                .collect();
            for mut child in batch {
                let _ = child.wait_within(DEADLINE);
                started += 1;
            }
        }
        started
    });
    for i in 0..100 {
        let mut s = TcpStream::connect(("127.0.0.1", proxy)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        write!(
            s,
            "GET http://127.0.0.1:{http}/n{i} HTTP/1.1\r\nHost: 127.0.0.1:{http}\r\n\r\n"
        )
        .unwrap();
        let mut got = String::new();
        let _ = s.read_to_string(&mut got);
        assert!(
            got.contains(&format!("path=/n{i}\n")),
            "request {i}: {got:?}"
        );
    }
    drop(stop);
    let started = wait::join_within(children, DEADLINE, "the thread starting children").unwrap();
    assert!(
        started > 10,
        "only {started} children were started meanwhile"
    );
}

#[test]
fn socks5_by_name_and_address_with_python_sockets() {
    if !have("python3") {
        return;
    }
    let echo = echo_server("127.0.0.1:0");
    let (proxy, _) = start_proxy(
        &[format!("allowed.test:{echo}"), format!("127.0.0.1:{echo}")],
        &[],
        None,
    );
    // A SOCKS5 client written with Python's socket module, as a program
    // that speaks SOCKS itself would.
    let script = r#"
import socket, struct, sys
proxy, host, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
s = socket.create_connection(("127.0.0.1", proxy), timeout=10)
s.sendall(b"\x05\x01\x00")
assert s.recv(2) == b"\x05\x00"
if host[0].isdigit():
    req = b"\x05\x01\x00\x01" + socket.inet_aton(host)
else:
    req = b"\x05\x01\x00\x03" + bytes([len(host)]) + host.encode()
s.sendall(req + struct.pack(">H", port))
rep = s.recv(10)
if rep[1] != 0:
    print("refused", rep[1]); sys.exit(0)
got = b""
while b"banner" not in got:
    got += s.recv(100)
s.sendall(b"hi\n")
got += s.recv(100)
print("reply", got)
"#;
    let run = |host: &str| {
        let out = Command::new("python3")
            .args(["-c", script, &proxy.to_string(), host, &echo.to_string()])
            .output_within(DEADLINE)
            .unwrap();
        text(&out)
    };
    assert!(
        run("allowed.test").contains("banner\\nhi"),
        "{}",
        run("allowed.test")
    );
    assert!(run("127.0.0.1").contains("banner\\nhi"));
    assert!(
        run("other.test").contains("refused 2"),
        "{}",
        run("other.test")
    );
}

/// A test CA and a server certificate for `allowed.test`, made with `openssl`.
fn certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .current_dir(dir)
            .args(args)
            .output_within(DEADLINE)
            .unwrap();
        assert!(out.status.success(), "openssl {args:?}: {}", text(&out));
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=sandgate test CA",
    ]);
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=allowed.test",
    ]);
    std::fs::write(dir.join("ext.cnf"), "subjectAltName=DNS:allowed.test\n").unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    )
}

#[test]
fn https_through_connect_and_domain_fronting_refused_by_sni() {
    if !have("curl") || !have("openssl") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = certificates(dir.path());
    // Bind first, so the port is known and free; s_server takes the port.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    // Dies with the test (the guard kills it when dropped).
    let server = wait::Guard::spawn(
        Command::new("openssl")
            .args(["s_server", "-quiet", "-www", "-accept"])
            .arg(port.to_string())
            .arg("-cert")
            .arg(&cert)
            .arg("-key")
            .arg(&key)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    wait::until(20, "s_server listening", || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let (proxy, gate) = start_proxy(
        &[format!("allowed.test:{port}"), format!("127.0.0.1:{port}")],
        &[],
        None,
    );
    let px = format!("http://127.0.0.1:{proxy}");
    let ca = ca.to_str().unwrap();
    let ok = curl(&[
        "-x",
        &px,
        "--cacert",
        ca,
        &format!("https://allowed.test:{port}/"),
    ]);
    assert!(ok.status.success(), "{}", text(&ok));
    assert!(text(&ok).contains("s_server"), "{}", text(&ok));
    // Fronting: connect to the allowed host, name another in the SNI.
    // Unconfined it works (the server takes any name).
    let front = |proxy_args: &[&str]| {
        let mut args = proxy_args.to_vec();
        let connect_to = format!("evil.test:{port}:allowed.test:{port}");
        let resolve = format!("allowed.test:{port}:127.0.0.1");
        let url = format!("https://evil.test:{port}/");
        args.extend([
            "-k",
            "--connect-to",
            &connect_to,
            "--resolve",
            &resolve,
            &url,
        ]);
        curl(&args)
    };
    let direct = front(&[]);
    assert!(direct.status.success(), "{}", text(&direct));
    let fronted = front(&["-x", &px]);
    assert!(!fronted.status.success(), "{}", text(&fronted));
    assert!(!text(&fronted).contains("s_server"), "{}", text(&fronted));
    let log = gate.log.lock().unwrap();
    assert!(
        log.iter()
            .any(|r| r.decision.reason.contains("domain fronting")),
        "{:?}",
        log.iter().map(|r| &r.decision.reason).collect::<Vec<_>>()
    );
    drop(server);
}

#[test]
fn ipv6_literals_are_held_like_ipv4() {
    let Ok(listener) = TcpListener::bind("[::1]:0") else {
        eprintln!("skipped: no IPv6 loopback");
        return;
    };
    drop(listener);
    let echo = echo_server("[::1]:0");
    let (proxy, _) = start_proxy(&[format!("[::1]:{echo}")], &[], None);
    let tunnel = |host: &str| {
        let mut s = TcpStream::connect(("127.0.0.1", proxy)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "CONNECT {host} HTTP/1.1\r\n\r\n").unwrap();
        let mut buf = [0u8; 64];
        let n = read_some(&mut s, &mut buf).unwrap_or(0);
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    assert!(tunnel(&format!("[::1]:{echo}")).starts_with("HTTP/1.1 200"));
    assert!(tunnel(&format!("[::1]:{}", echo.wrapping_add(1))).starts_with("HTTP/1.1 403"));
    // six.test resolves to ::1, which is not listed for it as a name.
    assert!(tunnel(&format!("six.test:{echo}")).starts_with("HTTP/1.1 403"));
}

/// Patterned bytes (no TLS record type first, so the tunnel's server-name
/// check lets them through as another protocol), `seed` telling sides apart.
fn pattern(size: usize, seed: u32) -> Vec<u8> {
    (0..size as u32)
        .map(|i| (i.wrapping_mul(31).wrapping_add(seed) % 251) as u8)
        .collect()
}

/// A TCP server that sends back everything it gets, then ends its side
/// when the client ends its own (each connection on a thread).
fn mirror_server() -> u16 {
    serve_each("127.0.0.1:0", 60, |stream| {
        let mut buf = vec![0u8; 100_000];
        let mut w = &stream;
        while let Ok(n) = read_some(&mut &stream, &mut buf) {
            if n == 0 || w.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = stream.shutdown(std::net::Shutdown::Write);
    })
}

/// An HTTP server that answers a `POST` with its body, byte for byte.
fn body_server() -> u16 {
    serve_each("127.0.0.1:0", 60, |stream| {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut length = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                break;
            }
            if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let mut w = stream;
        let _ = write!(
            w,
            "HTTP/1.1 200 OK\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
        );
        let _ = w.write_all(&body);
    })
}

/// Reads up to and with the first empty line (a response head), byte by
/// byte so nothing after it is taken.
fn read_head(s: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(
            read_some(s, &mut byte).unwrap(),
            1,
            "the head ended early: {head:?}"
        );
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// Sends `up` on `s` from a thread (then ends the sending side) while
/// reading what comes back until the other side ends; returns that.
fn exchange(s: TcpStream, up: Vec<u8>) -> Vec<u8> {
    let mut writer = s.try_clone().unwrap();
    let sending = std::thread::spawn(move || {
        writer.write_all(&up).unwrap();
        writer.shutdown(std::net::Shutdown::Write).unwrap();
    });
    let mut got = Vec::new();
    (&s).read_to_end(&mut got).unwrap();
    wait::join_within(sending, DEADLINE, "sending through the proxy").unwrap();
    got
}

#[test]
fn megabytes_cross_every_kind_of_connection_both_ways_byte_for_byte() {
    const SIZE: usize = 8 << 20;
    let mirror = mirror_server();
    let web = body_server();
    let (proxy, _) = start_proxy(
        &[
            format!("allowed.test:{mirror}"),
            format!("127.0.0.1:{mirror}"),
            format!("127.0.0.1:{web}"),
        ],
        &[],
        None,
    );
    let open = || {
        let s = TcpStream::connect(("127.0.0.1", proxy)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(60))).unwrap();
        s
    };

    // A CONNECT tunnel: what the client sends comes back whole, and the
    // end of its sending side reaches the host and comes back as the end.
    let mut s = open();
    write!(s, "CONNECT allowed.test:{mirror} HTTP/1.1\r\n\r\n").unwrap();
    assert!(read_head(&mut s).starts_with("HTTP/1.1 200"));
    let sent = pattern(SIZE, 1);
    let got = exchange(s, sent.clone());
    assert_eq!(got.len(), SIZE, "a CONNECT tunnel lost or added bytes");
    assert!(got == sent, "a CONNECT tunnel changed bytes");

    // The first bytes in the same write as the CONNECT (read with its
    // head, before the tunnel was joined) go first.
    let mut s = open();
    let sent = pattern(SIZE, 2);
    let mut first = format!("CONNECT 127.0.0.1:{mirror} HTTP/1.1\r\n\r\n").into_bytes();
    first.extend_from_slice(&sent[..1000]);
    s.write_all(&first).unwrap();
    assert!(read_head(&mut s).starts_with("HTTP/1.1 200"));
    let got = exchange(s, sent[1000..].to_vec());
    assert!(
        got == sent,
        "the bytes sent with the CONNECT were lost or moved"
    );

    // SOCKS5 by name.
    let mut s = open();
    s.write_all(&[5, 1, 0]).unwrap();
    let mut reply = [0u8; 2];
    s.read_exact(&mut reply).unwrap();
    assert_eq!(reply, [5, 0]);
    let mut request = vec![5, 1, 0, 3, b"allowed.test".len() as u8];
    request.extend_from_slice(b"allowed.test");
    request.extend_from_slice(&mirror.to_be_bytes());
    s.write_all(&request).unwrap();
    let mut reply = [0u8; 10];
    s.read_exact(&mut reply).unwrap();
    assert_eq!(reply[1], 0, "SOCKS5 refused: {reply:?}");
    let sent = pattern(SIZE, 3);
    let got = exchange(s, sent.clone());
    assert!(got == sent, "a SOCKS5 connection lost or changed bytes");

    // A plain HTTP POST: the body up (the part read with the head first),
    // the answer down.
    let s = open();
    let body = pattern(SIZE, 4);
    let mut request = format!(
        "POST http://127.0.0.1:{web}/up HTTP/1.1\r\nHost: 127.0.0.1:{web}\r\n\
         Content-Length: {SIZE}\r\n\r\n"
    )
    .into_bytes();
    request.extend_from_slice(&body);
    s.set_nodelay(true).unwrap();
    let got = exchange(s, request);
    let split = got
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let head = String::from_utf8_lossy(&got[..split]);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        got[split + 4..] == body[..],
        "a plain request's body lost or changed bytes"
    );
}
