//! `permissions.network` under `sandgate run`, as root and as
//! `sandgate-test`: the whole program tree in a network namespace whose one
//! way out is the filtering proxy. Real servers on loopback under test host
//! names (an `/etc/hosts` of the test's own, in a mount namespace the test
//! makes), real clients (`curl` with and without the proxy variables,
//! Python's `socket`).
//!
//! Every escape row runs first unconfined, as the same user in the same
//! mount namespace, where it must reach the recording server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::Ordering;
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
use serde_json::Value;
use wait::{Bounded, BoundedChild, DEADLINE};

/// `network` is the `permissions.network` block (YAML, indented under
/// `permissions:`), or none.
fn tree(who: Who, network: Option<&str>) -> Tree {
    let policy = match network {
        Some(network) => format!("permissions:\n{network}"),
        None => "permissions: {}\n".to_string(),
    };
    tree_with("sandgate-netrun-", who, &policy)
}

fn allow_list(entries: &[String]) -> String {
    let quoted: Vec<String> = entries.iter().map(|e| format!("\"{e}\"")).collect();
    format!("  network:\n    allow: [{}]\n", quoted.join(", "))
}

impl Tree {
    /// `argv` as this tree's user with the test's host names, in the
    /// workspace, with a clean environment.
    fn command(&self, argv: &[String]) -> Command {
        let full = named_argv(self.who, &self.hosts, argv);
        let mut cmd = Command::new(&full[0]);
        cmd.args(&full[1..])
            .env_clear()
            .env("PATH", PATH)
            .env("HOME", &self.home)
            .env("SANDGATE_SANDBOX", "1")
            .env("SANDGATE_NO_UI", "1")
            .env("SANDGATE_MANAGED_CONFIG", self.root.join("no-managed.yaml"))
            .current_dir(&self.work)
            .stdin(Stdio::null());
        cmd
    }

    /// `argv` unconfined.
    fn plain(&self, argv: &[&str]) -> Output {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        self.command(&argv).output_within(DEADLINE).unwrap()
    }

    /// `sandgate run --no-ui -- argv`.
    fn run(&self, argv: &[&str]) -> Output {
        self.command(&self.run_argv(argv))
            .output_within(DEADLINE)
            .unwrap()
    }

    fn run_argv(&self, argv: &[&str]) -> Vec<String> {
        let mut full = vec![
            self.bin.to_string_lossy().into_owned(),
            "run".into(),
            "--no-ui".into(),
            "--".into(),
        ];
        full.extend(argv.iter().map(|s| s.to_string()));
        full
    }

    /// The audit log's records of the network.
    fn network_records(&self) -> Vec<Value> {
        fs::read_to_string(self.home.join(".sandgate/audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|r| r["tool"] == "network")
            .collect()
    }
}

fn curl(url: &str) -> Vec<&str> {
    vec!["curl", "-sS", "--max-time", "20", url]
}

fn ready() -> bool {
    if !has("curl") || !has("python3") {
        missing("`curl` and `python3` are needed");
        return false;
    }
    can_name_hosts()
}

#[test]
fn the_whole_program_tree_reaches_listed_hosts_through_the_proxy_and_nothing_else() {
    if !ready() {
        return;
    }
    let (web, served) = http_server();
    let rec = recorders();
    let listed = format!("http://{LISTED}:{web}/hi");
    let unlisted = format!("http://{UNLISTED}:{web}/no");
    for who in users() {
        // The listed name resolves to loopback: its address is listed too.
        let t = tree(
            who,
            Some(&allow_list(&[
                format!("{LISTED}:{web}"),
                format!("127.0.0.1:{web}"),
            ])),
        );
        let case = format!("{who:?}");
        // The listed name, through the proxy variables the run sets: plain
        // HTTP, and a CONNECT tunnel.
        let ok = t.run(&curl(&listed));
        assert!(text(&ok).contains("served /hi"), "{case}: {}", text(&ok));
        let mut tunnel = curl(&listed);
        tunnel.insert(1, "--proxytunnel");
        let ok = t.run(&tunnel);
        assert!(text(&ok).contains("served /hi"), "{case}: {}", text(&ok));
        // A grandchild of the program is held the same way.
        let script = format!("sh -c 'curl -sS --max-time 20 {listed}'");
        let ok = t.run(&["sh", "-c", &script]);
        assert!(text(&ok).contains("served /hi"), "{case}: {}", text(&ok));

        // A program that ignores the proxy variables reaches the listed
        // host by its own connect, the name resolved inside by sandgate's
        // resolver (curl told to go direct, and Python's raw connect).
        let direct = t.run(&[
            "curl",
            "-sS",
            "--noproxy",
            "*",
            "--max-time",
            "20",
            &format!("http://{LISTED}:{web}/direct"),
        ]);
        assert!(
            text(&direct).contains("served /direct"),
            "{case}: {}",
            text(&direct)
        );
        let raw = t.run(&["python3", "-c", TCP_CONNECT, &web.to_string()]);
        assert!(text(&raw).contains("connected"), "{case}: {}", text(&raw));

        // An unlisted name: unconfined it is served…
        let plain = t.plain(&curl(&unlisted));
        assert!(
            text(&plain).contains("served /no"),
            "{case}: {}",
            text(&plain)
        );
        // …confined it gets a 403 naming the command that would allow it.
        let before = served.load(Ordering::SeqCst);
        let no = t.run(&["curl", "-sS", "-i", "--max-time", "20", &unlisted]);
        assert!(text(&no).contains(" 403"), "{case}: {}", text(&no));
        assert!(
            text(&no).contains(&format!("sandgate policy allow domain {UNLISTED}:{web}")),
            "{case}: {}",
            text(&no)
        );
        assert_eq!(served.load(Ordering::SeqCst), before, "{case}: served");

        // A program that ignores the proxy: unconfined it connects…
        let before = rec.connections.load(Ordering::SeqCst);
        let plain = t.plain(&["python3", "-c", TCP_CONNECT, &rec.tcp.to_string()]);
        assert!(
            text(&plain).contains("connected"),
            "{case}: {}",
            text(&plain)
        );
        wait_for(&rec.connections, before + 1, "the unconfined connect");
        // …confined (and from a grandchild) it reaches nothing.
        let before = rec.connections.load(Ordering::SeqCst);
        let confined = t.run(&["python3", "-c", TCP_CONNECT, &rec.tcp.to_string()]);
        assert!(
            text(&confined).contains("Error"),
            "{case}: {}",
            text(&confined)
        );
        let nested = format!("python3 -c \"{TCP_CONNECT}\" {} & wait", rec.tcp);
        let confined = t.run(&["sh", "-c", &nested]);
        assert!(
            text(&confined).contains("Error"),
            "{case}: {}",
            text(&confined)
        );
        // curl told to go direct, to the same host: nothing either.
        let direct = format!("http://127.0.0.1:{}/", rec.tcp);
        let confined = t.run(&["curl", "-sS", "--noproxy", "*", "--max-time", "10", &direct]);
        assert!(!confined.status.success(), "{case}: {}", text(&confined));

        // A UDP packet (a DNS query): unconfined the server records it…
        let before_q = rec.queries.load(Ordering::SeqCst);
        let sent = t.plain(&["python3", "-c", UDP_SEND, &rec.udp.to_string()]);
        assert!(text(&sent).contains("sent"), "{case}: {}", text(&sent));
        wait_for(&rec.queries, before_q + 1, "the unconfined query");
        // …confined it never arrives.
        let before_q = rec.queries.load(Ordering::SeqCst);
        let confined = t.run(&["python3", "-c", UDP_SEND, &rec.udp.to_string()]);
        assert!(
            String::from_utf8_lossy(&confined.stdout).contains("sent"),
            "{case}: {}",
            text(&confined)
        );
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            rec.queries.load(Ordering::SeqCst),
            before_q,
            "{case}: a query leaked"
        );
        assert_eq!(
            rec.connections.load(Ordering::SeqCst),
            before,
            "{case}: a connection leaked"
        );

        // Each decision is in the audit log, as the run's.
        let records = t.network_records();
        let of = |subject: &str, verdict: &str| {
            records.iter().any(|r| {
                r["surface"] == "run" && r["subject"] == subject && r["verdict"] == verdict
            })
        };
        assert!(
            of(&format!("{LISTED}:{web}"), "allow"),
            "{case}: {records:#?}"
        );
        assert!(
            of(&format!("{UNLISTED}:{web}"), "deny"),
            "{case}: {records:#?}"
        );
    }
}

/// IPv6 is held exactly like IPv4: a listed `[::1]:PORT` is reached through
/// the proxy and by a direct connect; an unlisted one, reached unconfined,
/// is refused (a 403 naming it) and never reached.
#[test]
fn ipv6_literals_are_held_like_ipv4() {
    if !ready() {
        return;
    }
    let (web6, served6) = http_server_on("[::1]:0");
    let (other6, others) = http_server_on("[::1]:0");
    let listed = format!("http://[::1]:{web6}/v6");
    let unlisted = format!("http://[::1]:{other6}/no6");
    for who in users() {
        let case = format!("{who:?}");
        let t = tree(who, Some(&allow_list(&[format!("[::1]:{web6}")])));
        // Through the proxy variables, and by the program's own connect.
        let ok = t.run(&curl(&listed));
        assert!(text(&ok).contains("served /v6"), "{case}: {}", text(&ok));
        let raw = t.run(&["python3", "-c", TCP6_GET, &web6.to_string()]);
        assert!(
            text(&raw).contains("served /direct6"),
            "{case}: {}",
            text(&raw)
        );
        assert!(served6.load(Ordering::SeqCst) >= 2, "{case}");
        // The unlisted port: unconfined, both ways reach it…
        ipv6_reached_unconfined(&case, |argv| t.plain(argv), &curl(&unlisted), other6);
        // …confined, a 403 naming the entry that would allow it, and a
        // direct connect that reaches nothing.
        let before = others.load(Ordering::SeqCst);
        let no = t.run(&["curl", "-sS", "-i", "--max-time", "20", &unlisted]);
        assert!(text(&no).contains(" 403"), "{case}: {}", text(&no));
        assert!(
            text(&no).contains(&format!("sandgate policy allow domain [::1]:{other6}")),
            "{case}: {}",
            text(&no)
        );
        let raw = t.run(&["python3", "-c", TCP6_GET, &other6.to_string()]);
        assert!(
            text(&raw).contains("Error") && !text(&raw).contains("served"),
            "{case}: {}",
            text(&raw)
        );
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(others.load(Ordering::SeqCst), before, "{case}: reached");
    }
}

/// A listed name that resolves to a loopback address is refused unless the
/// address is listed too (no DNS rebinding onto local services).
#[test]
fn a_listed_name_on_loopback_needs_its_address_listed() {
    if !ready() {
        return;
    }
    let (web, served) = http_server();
    let t = tree(Who::Root, Some(&allow_list(&[format!("{LISTED}:{web}")])));
    let before = served.load(Ordering::SeqCst);
    let out = t.run(&[
        "curl",
        "-sS",
        "-i",
        "--max-time",
        "20",
        &format!("http://{LISTED}:{web}/"),
    ]);
    assert!(text(&out).contains(" 403"), "{}", text(&out));
    assert!(text(&out).contains("127.0.0.1"), "{}", text(&out));
    assert_eq!(served.load(Ordering::SeqCst), before);
}

/// Without `permissions.network` the run's network is as it was: a raw
/// connect reaches a loopback server, and no proxy variable is set.
#[test]
fn without_the_section_the_network_is_unchanged() {
    if !ready() {
        return;
    }
    let rec = recorders();
    for who in users() {
        let t = tree(who, None);
        let before = rec.connections.load(Ordering::SeqCst);
        let out = t.run(&["python3", "-c", TCP_CONNECT, &rec.tcp.to_string()]);
        assert!(text(&out).contains("connected"), "{who:?}: {}", text(&out));
        wait_for(&rec.connections, before + 1, "the connect under run");
        let env = t.run(&["sh", "-c", "echo proxy=${HTTPS_PROXY:-none}"]);
        assert!(text(&env).contains("proxy=none"), "{who:?}: {}", text(&env));
    }
}

/// `--dry-run` shows the lists the run enforces.
#[test]
fn dry_run_shows_the_network_lists() {
    if !ready() {
        return;
    }
    let t = tree(Who::Root, Some(&allow_list(&["example.org".to_string()])));
    let mut cmd = t.command(&[
        t.bin.to_string_lossy().into_owned(),
        "run".into(),
        "--dry-run".into(),
    ]);
    let out = cmd.output_within(DEADLINE).unwrap();
    assert!(
        text(&out).contains("network: filtered by `permissions.network`"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("allow: example.org"), "{}", text(&out));
}

/// Fail closed: once sandgate is gone, its proxy is gone with it, and the
/// program that outlives it reaches nothing.
#[test]
fn the_program_has_no_network_once_sandgate_is_gone() {
    if !ready() {
        return;
    }
    let (web, served) = http_server();
    let rec = recorders();
    for who in users() {
        let t = tree(who, Some(&allow_list(&[format!("127.0.0.1:{web}")])));
        let case = format!("{who:?}");
        // Reaches the host, says so, waits for a line on its stdin, then
        // tries again through the proxy and directly; all on its stdout.
        let script = format!(
            "exec 2>&1; curl -sS --max-time 20 http://127.0.0.1:{web}/one; echo; echo READY; \
             read go; curl -sS --max-time 10 http://127.0.0.1:{web}/two; \
             python3 -c \"{TCP_CONNECT}\" {tcp}; echo FINISHED",
            tcp = rec.tcp,
        );
        let mut cmd = t.command(&t.run_argv(&["sh", "-c", &script]));
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut guard = wait::Guard::spawn(&mut cmd);
        let mut stdin = guard.stdin.take().unwrap();
        let lines = wait::Lines::new(guard.stdout.take().unwrap());
        let mut first = String::new();
        while let Some(line) = lines.next_within(60, "the first request") {
            if line == "READY" {
                break;
            }
            first.push_str(&line);
        }
        assert!(first.contains("served /one"), "{case}: {first}");
        // `unshare`, `sh` and `setpriv` exec each other: the child is sandgate.
        let pid = guard.id();
        let killed = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .output_within(DEADLINE)
            .unwrap();
        assert!(killed.status.success(), "{case}: {}", text(&killed));
        let _ = guard.wait_within(DEADLINE);
        let before = served.load(Ordering::SeqCst);
        let before_c = rec.connections.load(Ordering::SeqCst);
        use std::io::Write as _;
        stdin.write_all(b"go\n").unwrap();
        drop(stdin);
        let said = lines.rest_within(60, "the program's second try");
        assert!(said.contains("FINISHED"), "{case}: {said}");
        assert!(!said.contains("served /two"), "{case}: {said}");
        assert!(!said.contains("\nconnected"), "{case}: {said}");
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(served.load(Ordering::SeqCst), before, "{case}: {said}");
        assert_eq!(
            rec.connections.load(Ordering::SeqCst),
            before_c,
            "{case}: {said}"
        );
        drop(guard);
    }
}

const MENU: &str = "[4] deny always";

/// `sandgate run` in a real terminal (a pty), not `--no-ui`: a host no
/// entry decides is asked on the run's question route, shown whole with
/// the host and port, and answered by a deliberate key. Allow once lets
/// the program through; deny once refuses it; allow always writes the
/// entry to the central policy file and is not asked again.
#[test]
fn an_unlisted_host_is_asked_on_the_run_s_question_route() {
    use expectrl::process::unix::WaitStatus;
    use expectrl::session::OsSession as Session;
    use expectrl::{Eof, Expect};
    if !ready() {
        return;
    }
    let (web, served) = http_server();
    let t = tree(Who::Root, Some(&allow_list(&[format!("127.0.0.1:{web}")])));
    let subject = format!("{UNLISTED}:{web}");
    let url = format!("http://{UNLISTED}:{web}/asked");
    let spawn = |script: &str| {
        let mut argv = t.run_argv(&["sh", "-c", script]);
        argv.remove(2); // `--no-ui`: this run has a person to ask.
        let mut cmd = t.command(&argv);
        cmd.env_remove("SANDGATE_NO_UI").env("TERM", "xterm");
        let mut s = Session::spawn(cmd).expect("spawn in a pty");
        s.set_expect_timeout(Some(Duration::from_secs(60)));
        s.get_process_mut().set_window_size(200, 40).unwrap();
        s
    };
    let press = |s: &mut Session, key: &str| {
        std::thread::sleep(Duration::from_millis(900));
        s.send(key).unwrap();
    };
    let finish = |mut s: Session| -> String {
        let rest = s.expect(Eof).expect("the program ends");
        let text = String::from_utf8_lossy(rest.as_bytes()).into_owned();
        match pty::wait_within(&mut s, DEADLINE).expect("wait") {
            WaitStatus::Exited(_, 0) => {}
            other => panic!("unexpected end: {other:?}: {text}"),
        }
        text
    };
    let script = format!("curl -sS --max-time 60 {url}; echo; echo done");
    // Allow once: served.
    let before = served.load(Ordering::SeqCst);
    let mut s = spawn(&script);
    s.expect(format!("   {subject}\r"))
        .expect("the host is asked about");
    s.expect(MENU).expect("the menu is shown");
    press(&mut s, "1");
    let text = finish(s);
    assert!(text.contains("served /asked"), "{text}");
    assert_eq!(served.load(Ordering::SeqCst), before + 1);
    // Deny once: a 403, nothing served, nothing written.
    let policy_file = t.home.join(".sandgate/permissions.yaml");
    let policy_before = fs::read_to_string(&policy_file).unwrap();
    let mut s = spawn(&script);
    s.expect(format!("   {subject}\r")).expect("asked again");
    s.expect(MENU).unwrap();
    press(&mut s, "3");
    let text = finish(s);
    assert!(text.contains("refused when asked"), "{text}");
    assert!(!text.contains("served /asked"), "{text}");
    assert_eq!(served.load(Ordering::SeqCst), before + 1);
    assert_eq!(fs::read_to_string(&policy_file).unwrap(), policy_before);
    // Allow always: confirmed by the same key, written, and not asked again
    // (the second request of the same run, and the next run).
    let twice = format!("curl -sS --max-time 60 {url} {url}; echo; echo done");
    let mut s = spawn(&twice);
    s.expect(format!("   {subject}\r")).expect("asked again");
    s.expect(MENU).unwrap();
    press(&mut s, "2");
    s.expect("again to confirm")
        .expect("confirmation asked for");
    press(&mut s, "2");
    let text = finish(s);
    assert_eq!(text.matches("served /asked").count(), 2, "{text}");
    let written = fs::read_to_string(&policy_file).unwrap();
    assert!(written.contains(&subject), "{written}");
    let out = t.run(&curl(&url));
    assert!(
        network_common::text(&out).contains("served /asked"),
        "{}",
        network_common::text(&out)
    );
    // Each answer is in the audit log.
    let asked: Vec<Value> = fs::read_to_string(t.home.join(".sandgate/audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["surface"] == "run prompt" && r["subject"] == subject)
        .collect();
    assert_eq!(asked.len(), 3, "{asked:#?}");
}
