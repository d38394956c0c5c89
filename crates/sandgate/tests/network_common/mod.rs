//! What the network tests of `sandgate exec`, `sandgate run` and MCP
//! `exec_run` share: real servers on loopback (an HTTP server, on IPv4 or
//! IPv6, that answers with the path it was asked, and a TCP and a UDP
//! server that count what reaches them), test host names resolved through
//! an `/etc/hosts` of the test's own, bind mounted in a mount namespace the
//! test makes (the machine's file is never changed), the users the tests
//! run as (root, and `sandgate-test` through `setpriv`) and the isolation
//! modes.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::wait::{self, Bounded, DEADLINE};

pub const TEST_USER: &str = "sandgate-test";
pub const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The test names, all on 127.0.0.1 in the test's `/etc/hosts`.
pub const LISTED: &str = "web.sandgate.test";
pub const UNLISTED: &str = "unlisted.sandgate.test";

/// Whether CI runs the tests (its includer has `ci`, tests/support/ci.rs).
pub use crate::ci::under_ci;

/// A tool is missing: under CI the test fails saying what to install,
/// elsewhere it is skipped with the reason.
pub fn missing(why: &str) {
    assert!(!under_ci(), "{why}");
    eprintln!("skipping: {why}");
}

pub fn is_root() -> bool {
    fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

pub fn has(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .env("PATH", PATH)
        .output_within(DEADLINE)
        .is_ok_and(|o| o.status.success())
}

pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

// Not every includer uses both.
#[allow(unused_imports)]
pub use crate::ci::{users, Who};

/// Whether the test names can be given: root makes the mount namespace
/// that holds the test's `/etc/hosts` (`unshare`, `mount`).
pub fn can_name_hosts() -> bool {
    if !is_root() {
        missing("the test host names need root (a mount namespace with the test's /etc/hosts)");
        return false;
    }
    if !has("unshare") || !has("mount") {
        missing("`unshare` and `mount` are needed (package util-linux)");
        return false;
    }
    true
}

/// Writes the test's `/etc/hosts` into `dir`: every test name on 127.0.0.1.
pub fn hosts_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("hosts");
    fs::write(
        &path,
        format!("127.0.0.1 localhost\n127.0.0.1 {LISTED}\n127.0.0.1 {UNLISTED}\n"),
    )
    .unwrap();
    path
}

/// The words that start `argv` as `who`, in a mount namespace of its own
/// where `hosts` is `/etc/hosts`: `unshare` makes it, `mount --bind`
/// puts the file in place, then `setpriv` drops to the user.
pub fn named_argv(who: Who, hosts: &Path, argv: &[String]) -> Vec<String> {
    let mut out: Vec<String> = [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "/bin/sh",
        "-c",
        "mount --bind \"$1\" /etc/hosts && shift && exec \"$@\"",
        "sh",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    out.push(hosts.to_string_lossy().into_owned());
    out.extend(as_user(who, argv));
    out
}

/// `argv` as `who` (through `setpriv` for `sandgate-test`).
pub fn as_user(who: Who, argv: &[String]) -> Vec<String> {
    match who {
        Who::Root => argv.to_vec(),
        Who::User { uid, gid } => {
            let mut out = vec![
                "setpriv".to_string(),
                format!("--reuid={uid}"),
                format!("--regid={gid}"),
                "--clear-groups".to_string(),
                "--".to_string(),
            ];
            out.extend(argv.iter().cloned());
            out
        }
    }
}

/// An HTTP server on loopback that answers every request with the path it
/// was asked, and counts the requests.
pub fn http_server() -> (u16, Arc<AtomicUsize>) {
    http_server_on("127.0.0.1:0")
}

/// [`http_server`] on `at` (`[::1]:0` for IPv6).
pub fn http_server_on(at: &str) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind(at).unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&served);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let count = Arc::clone(&count);
            std::thread::spawn(move || {
                stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                let path = line.split(' ').nth(1).unwrap_or("").to_string();
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                }
                count.fetch_add(1, Ordering::SeqCst);
                let body = format!("served {path}\n");
                let mut w = stream;
                let _ = write!(
                    w,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (port, served)
}

/// A UDP server that counts the datagrams it gets (a DNS server that
/// records every query), and a TCP server that counts its connections.
pub struct Recorders {
    pub udp: u16,
    pub queries: Arc<AtomicUsize>,
    pub tcp: u16,
    pub connections: Arc<AtomicUsize>,
}

pub fn recorders() -> Recorders {
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let queries = Arc::new(AtomicUsize::new(0));
    let q = Arc::clone(&queries);
    std::thread::spawn(move || {
        let mut buf = [0u8; 1500];
        while udp.recv_from(&mut buf).is_ok() {
            q.fetch_add(1, Ordering::SeqCst);
        }
    });
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    let tcp_port = tcp.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&connections);
    std::thread::spawn(move || {
        for s in tcp.incoming() {
            if s.is_ok() {
                c.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    Recorders {
        udp: udp_port,
        queries,
        tcp: tcp_port,
        connections,
    }
}

/// Waits (bounded) until `count` reaches `at_least`.
pub fn wait_for(count: &AtomicUsize, at_least: usize, what: &str) {
    wait::until(10, what, || count.load(Ordering::SeqCst) >= at_least);
}

/// The isolation modes a filtered network is tested under: `landlock`,
/// and `bwrap` when it is installed.
pub fn modes() -> Vec<&'static str> {
    let mut modes = vec!["landlock"];
    if has("bwrap") {
        modes.push("bwrap");
    } else {
        missing("`bwrap` is not installed (package bubblewrap)");
    }
    modes
}

/// A UDP datagram shaped as a DNS query, to `127.0.0.1:PORT` (argv 1).
pub const UDP_SEND: &str = "import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); \
    s.sendto(b'\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x04leak\\x04test\\x00\\x00\\x01\\x00\\x01', ('127.0.0.1', int(sys.argv[1]))); print('sent')";

/// A raw TCP connect to `[::1]:PORT` (argv 1), ignoring every proxy
/// variable, then a GET of `/direct6`: prints what the server answered.
pub const TCP6_GET: &str = "import socket,sys; s=socket.create_connection(('::1', int(sys.argv[1])), timeout=5); \
    s.sendall(b'GET /direct6 HTTP/1.0\\r\\n\\r\\n'); print('got', s.makefile('rb').read().decode())";

/// Shows that an unlisted IPv6 port is reached unconfined both ways: `curl`
/// (`curl_argv`, a GET of `/no6`) and a raw connect to `[::1]:other6`
/// ([`TCP6_GET`]), each run by `plain`.
pub fn ipv6_reached_unconfined(
    case: &str,
    plain: impl Fn(&[&str]) -> Output,
    curl_argv: &[&str],
    other6: u16,
) {
    let out = plain(curl_argv);
    assert!(text(&out).contains("served /no6"), "{case}: {}", text(&out));
    let out = plain(&["python3", "-c", TCP6_GET, &other6.to_string()]);
    assert!(
        text(&out).contains("served /direct6"),
        "{case}: {}",
        text(&out)
    );
}

/// A raw TCP connect to `127.0.0.1:PORT` (argv 1), ignoring every proxy variable.
pub const TCP_CONNECT: &str = "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5); print('connected')";
