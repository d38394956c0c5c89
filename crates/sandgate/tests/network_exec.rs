//! `permissions.network` under `sandgate exec` (`landlock` and `bwrap`),
//! as root and as `sandgate-test`, with real servers on loopback that the
//! test starts (an HTTP server, and a UDP "DNS" server and a TCP server that
//! record every packet and connection they get) and real clients (`curl`,
//! Python's `socket`).
//!
//! Every escape row runs first unconfined, as the same user, where it must
//! reach the recording server, so that a row that cannot fail fails.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[path = "../../../tests/support/exe.rs"]
mod exe;
#[path = "../../../tests/support/wait.rs"]
mod wait;

use wait::{Bounded, DEADLINE};

const TEST_USER: &str = "sandgate-test";
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn missing(why: &str) {
    assert!(!under_ci(), "{why}");
    eprintln!("skipping: {why}");
}

fn is_root() -> bool {
    fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn has(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .env("PATH", PATH)
        .output_within(DEADLINE)
        .is_ok_and(|o| o.status.success())
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[derive(Debug, Clone, Copy)]
enum Who {
    Root,
    User { uid: u32, gid: u32 },
}

fn users() -> Vec<Who> {
    let mut users = vec![Who::Root];
    if !is_root() {
        return users;
    }
    if !has("setpriv") {
        missing("`setpriv` is not installed (package util-linux)");
        return users;
    }
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id")
            .args([flag, TEST_USER])
            .output_within(DEADLINE)
            .ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    match (id("-u"), id("-g")) {
        (Some(uid), Some(gid)) => users.push(Who::User { uid, gid }),
        _ => missing(&format!("the user `{TEST_USER}` does not exist")),
    }
    users
}

/// An HTTP server on loopback that answers every request with its path.
fn http_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
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
    port
}

/// A UDP server that counts the datagrams it gets (a DNS server that
/// records every query), and a TCP server that counts its connections.
fn recorders() -> (u16, Arc<AtomicUsize>, u16, Arc<AtomicUsize>) {
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
    (udp_port, queries, tcp_port, connections)
}

/// A tree the user can reach: HOME, workdir, the binary and the policy.
struct Tree {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    bin: PathBuf,
    who: Who,
}

fn tree(who: Who, mode: &str, allow: &[String]) -> Tree {
    let tmp = tempfile::Builder::new()
        .prefix("sandgate-net-")
        .tempdir_in("/tmp")
        .unwrap();
    let root = tmp.path().canonicalize().unwrap();
    fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
    let home = root.join("home");
    let work = home.join("work");
    fs::create_dir_all(work.join(".sandgate")).unwrap();
    fs::create_dir_all(home.join(".sandgate")).unwrap();
    let bin = root.join("sandgate");
    exe::copy_executable(Path::new(env!("CARGO_BIN_EXE_sandgate")), &bin);
    let allow: Vec<String> = allow.iter().map(|a| format!("\"{a}\"")).collect();
    let policy = format!(
        "permissions:\n  commands:\n    shell: false\n    allow: ['^(curl|python3) ']\n  \
         exec:\n    isolation:\n      mode: {mode}\n  \
         network:\n    allow: [{}]\n",
        allow.join(", ")
    );
    fs::write(home.join(".sandgate/permissions.yaml"), policy).unwrap();
    if let Who::User { uid, gid } = who {
        let out = Command::new("chown")
            .arg("-R")
            .arg(format!("{uid}:{gid}"))
            .arg(&home)
            .output_within(DEADLINE)
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
    Tree {
        _tmp: tmp,
        home,
        work,
        bin,
        who,
    }
}

impl Tree {
    fn command(&self, program: &Path) -> Command {
        let mut cmd = match self.who {
            Who::Root => Command::new(program),
            Who::User { uid, gid } => {
                let mut c = Command::new("setpriv");
                c.arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={gid}"))
                    .arg("--clear-groups")
                    .arg("--")
                    .arg(program);
                c
            }
        };
        cmd.env_clear()
            .env("PATH", PATH)
            .env("HOME", &self.home)
            .env("SANDGATE_NO_UI", "1")
            .env("SANDGATE_AUDIT", "off")
            .current_dir(&self.work)
            .stdin(Stdio::null());
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
}

/// Runs `cmd`, killed (with its process group) at the deadline.
fn run_with_deadline(mut cmd: Command) -> Output {
    cmd.output_within(DEADLINE).unwrap()
}

const UDP_SEND: &str = "import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); \
    s.sendto(b'\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x04leak\\x04test\\x00\\x00\\x01\\x00\\x01', ('127.0.0.1', int(sys.argv[1]))); print('sent')";

const TCP_CONNECT: &str = "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5); print('connected')";

fn wait_for(count: &AtomicUsize, at_least: usize) -> bool {
    wait::until(10, "the recording server", || {
        count.load(Ordering::SeqCst) >= at_least
    });
    true
}

fn modes() -> Vec<&'static str> {
    let mut modes = vec!["landlock"];
    if has("bwrap") {
        modes.push("bwrap");
    } else {
        missing("`bwrap` is not installed (package bubblewrap)");
    }
    modes
}

#[test]
fn a_listed_host_is_reached_through_the_proxy_and_nothing_else_leaves() {
    if !has("curl") || !has("python3") {
        missing("`curl` and `python3` are needed");
        return;
    }
    let web = http_server();
    let (udp, queries, tcp, connections) = recorders();
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
            assert!(
                wait_for(&connections, before + 1),
                "{case}: unconfined connect not seen"
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
            assert!(
                wait_for(&queries, before_q + 1),
                "{case}: unconfined query not seen"
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

#[test]
fn network_false_still_means_no_network() {
    if !has("curl") {
        missing("`curl` is needed");
        return;
    }
    let web = http_server();
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
