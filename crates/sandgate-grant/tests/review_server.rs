//! The review server over real loopback sockets: tokens, host and origin checks,
//! one decision, and Approve performing the merge.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

use sandgate_grant::review::{Review, ReviewOutcome, ReviewServer};
use sandgate_grant::Grant;

fn review(target: PathBuf) -> Review {
    Review {
        source: "loop.yaml".into(),
        grant: Grant {
            allow: ["Bash(cargo:*)", "Read(//srv/loop/**)"]
                .iter()
                .map(|s| s.to_string())
                .collect::<BTreeSet<_>>(),
            deny: ["Read(~/.ssh/**)"]
                .iter()
                .map(|s| s.to_string())
                .collect::<BTreeSet<_>>(),
        },
        checkpoints: vec!["before <publishing>".into()],
        target,
        force: false,
    }
}

/// (port, link token) from the server's URL.
fn parts(url: &str) -> (u16, String) {
    let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
    let (port, token) = rest.split_once("/?token=").unwrap();
    (port.parse().unwrap(), token.to_string())
}

/// Send a raw request; return (status, body).
fn send(port: u16, request: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = raw
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn get(port: u16, host: &str, path: &str) -> (u16, String) {
    send(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
    )
}

fn post(port: u16, origin: Option<&str>, body: &str) -> (u16, String) {
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    send(
        port,
        &format!(
            "POST /decide HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{origin}\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

fn form_token(page: &str) -> String {
    let at = page.find("name=\"token\" value=\"").unwrap() + "name=\"token\" value=\"".len();
    page[at..].split('"').next().unwrap().to_string()
}

#[test]
fn the_link_works_once_for_the_right_host_and_approve_writes() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join(".claude/settings.local.json");
    let server = ReviewServer::start(review(target.clone())).unwrap();
    let (port, token) = parts(server.url());
    let host = format!("127.0.0.1:{port}");

    assert_eq!(get(port, &host, "/?token=wrong").0, 403);
    assert_eq!(get(port, &host, "/").0, 403);
    assert_eq!(
        get(port, "evil.example:80", &format!("/?token={token}")).0,
        403,
        "DNS rebinding"
    );

    let (status, page) = get(port, &host, &format!("/?token={token}"));
    assert_eq!(status, 200);
    assert!(page.contains("<code>Bash(cargo:*)</code>"));
    let deny_list = page.find("id=\"deny\"").expect("the deny rules are shown");
    assert!(
        page[deny_list..].starts_with("id=\"deny\"><li><code>Read(~/.ssh/**)</code></li></ul>"),
        "{page}"
    );
    assert!(page.contains("It also denies 1 rule(s)"), "{page}");
    assert!(page.contains("<code>permissions.deny</code>"), "{page}");
    assert!(page.contains("Nothing outside this list is requested."));
    assert!(page.contains("Human checkpoints still stop and wait, whatever this grant allows:"));
    assert!(
        page.contains("before &lt;publishing&gt;"),
        "checkpoints are escaped"
    );
    assert!(page.contains("id=\"approve\"") && page.contains("id=\"cancel\""));
    let (status, again) = get(port, &host, &format!("/?token={token}"));
    assert_eq!(status, 403);
    assert!(again.contains("already been opened"));

    let form = form_token(&page);
    assert_ne!(form, token, "the form carries its own secret");
    assert_eq!(
        post(port, None, &format!("token={token}&decision=approve")).0,
        403
    );
    assert_eq!(
        post(
            port,
            Some("http://evil.example"),
            &format!("token={form}&decision=approve")
        )
        .0,
        403
    );
    assert_eq!(
        post(
            port,
            Some("null"),
            &format!("token={form}&decision=approve")
        )
        .0,
        403,
        "an opaque origin is refused"
    );
    assert_eq!(
        post(port, None, &format!("token={form}&decision=maybe")).0,
        400
    );
    assert!(
        !target.exists(),
        "nothing is written before a valid Approve"
    );

    let (status, body) = post(
        port,
        Some(&format!("http://127.0.0.1:{port}")),
        &format!("token={form}&decision=approve"),
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("wrote 3 permission rule(s) to ") && body.contains(" (2 allow, 1 deny)"),
        "{body}"
    );
    assert_eq!(
        post(port, None, &format!("token={form}&decision=cancel")).0,
        409
    );

    match server.wait(Duration::from_secs(10)) {
        ReviewOutcome::Approved(outcome) => assert_eq!(outcome.required, 3),
        other => panic!("{other:?}"),
    }
    let written = std::fs::read_to_string(&target).unwrap();
    assert!(written.contains("\"Bash(cargo:*)\""));
    let value: serde_json::Value = serde_json::from_str(&written).unwrap();
    assert_eq!(
        value["permissions"]["deny"],
        serde_json::json!(["Read(~/.ssh/**)"])
    );
}

#[test]
fn cancel_writes_nothing_and_a_refused_merge_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("settings.json");
    let server = ReviewServer::start(review(target.clone())).unwrap();
    let (port, token) = parts(server.url());
    let (_, page) = get(
        port,
        &format!("localhost:{port}"),
        &format!("/?token={token}"),
    );
    let (status, body) = post(
        port,
        None,
        &format!("token={}&decision=cancel", form_token(&page)),
    );
    assert_eq!(status, 200);
    assert!(body.contains("nothing was written"));
    assert!(matches!(
        server.wait(Duration::from_secs(10)),
        ReviewOutcome::Cancelled
    ));
    assert!(!target.exists());

    std::fs::write(&target, r#"{"permissions": 3}"#).unwrap();
    let server = ReviewServer::start(review(target.clone())).unwrap();
    let (port, token) = parts(server.url());
    let (_, page) = get(
        port,
        &format!("127.0.0.1:{port}"),
        &format!("/?token={token}"),
    );
    let (status, body) = post(
        port,
        None,
        &format!("token={}&decision=approve", form_token(&page)),
    );
    assert_eq!(status, 500);
    assert!(body.contains("not an object"), "{body}");
    assert!(matches!(
        server.wait(Duration::from_secs(10)),
        ReviewOutcome::Failed(_)
    ));
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        r#"{"permissions": 3}"#
    );
}

#[test]
fn no_decision_times_out_and_stops_serving() {
    let dir = tempfile::tempdir().unwrap();
    let server = ReviewServer::start(review(dir.path().join("s.json"))).unwrap();
    let (port, _) = parts(server.url());
    assert!(matches!(
        server.wait(Duration::from_millis(200)),
        ReviewOutcome::TimedOut
    ));
    // `wait` has stopped serving when it returns: no pause before looking.
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the port is closed"
    );
    assert!(!dir.path().join("s.json").exists());
}
