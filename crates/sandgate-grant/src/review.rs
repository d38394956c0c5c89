//! The browser review: the preflight as a local page with Approve and Cancel.
//!
//! A tiny HTTP/1.1 server on `127.0.0.1`, on a port the OS picks, serves one
//! page behind a random one-time token. Opening the link uses the token up; the
//! page carries a second random token that the Approve/Cancel form must send
//! back, and the first decision ends the review. Requests naming another host
//! (DNS rebinding) or coming from another origin are refused. Approve performs
//! the same merge as `--write`.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use crate::merge::{merge_into, MergeError, MergeOutcome};
use crate::render::{
    deny_heading, CHECKPOINTS_STILL_STOP, NOTHING_ELSE, NOT_THE_SAFETY_MECHANISM, NO_CHECKPOINTS,
};
use crate::rules::Grant;

/// What the page shows and what Approve writes.
#[derive(Debug, Clone)]
pub struct Review {
    /// The loop config the grant comes from, as shown to the person.
    pub source: String,
    /// The grant, from [`crate::required`].
    pub grant: Grant,
    /// The loop's human checkpoints.
    pub checkpoints: Vec<String>,
    /// The settings file Approve merges into.
    pub target: PathBuf,
    /// Whether Approve may replace an unparseable file (keeping a `.bak`).
    pub force: bool,
}

/// How a review ended.
#[derive(Debug)]
pub enum ReviewOutcome {
    /// Approved and merged.
    Approved(MergeOutcome),
    /// Approved, but the merge refused or failed; nothing was written.
    Failed(MergeError),
    /// Cancelled in the page; nothing was written.
    Cancelled,
    /// Nobody decided in time; nothing was written.
    TimedOut,
}

/// A running review server.
pub struct ReviewServer {
    url: String,
    stop: Arc<AtomicBool>,
    decisions: Receiver<ReviewOutcome>,
    accept_thread: Option<thread::JoinHandle<()>>,
}

struct Shared {
    review: Review,
    origin: String,
    hosts: [String; 2],
    link_token: String,
    form_token: String,
    link_used: AtomicBool,
    decided: Mutex<bool>,
    decisions: Mutex<Sender<ReviewOutcome>>,
}

/// Longest request head or body the server reads.
const MAX_REQUEST: usize = 16 * 1024;

impl ReviewServer {
    /// Bind `127.0.0.1` on a random port and start serving `review`.
    pub fn start(review: Review) -> io::Result<ReviewServer> {
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))?;
        let port = listener.local_addr()?.port();
        listener.set_nonblocking(true)?;
        let link_token = random_token()?;
        let form_token = random_token()?;
        let url = format!("http://127.0.0.1:{port}/?token={link_token}");
        let (tx, rx) = mpsc::channel();
        let shared = Arc::new(Shared {
            review,
            origin: format!("http://127.0.0.1:{port}"),
            hosts: [format!("127.0.0.1:{port}"), format!("localhost:{port}")],
            link_token,
            form_token,
            link_used: AtomicBool::new(false),
            decided: Mutex::new(false),
            decisions: Mutex::new(tx),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let accept_stop = Arc::clone(&stop);
        let accept_thread = thread::spawn(move || accept_loop(&listener, &shared, &accept_stop));
        Ok(ReviewServer {
            url,
            stop,
            decisions: rx,
            accept_thread: Some(accept_thread),
        })
    }

    /// The one-time link to open in a browser.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Wait for Approve or Cancel, at most `timeout`; then stop serving.
    pub fn wait(mut self, timeout: Duration) -> ReviewOutcome {
        let outcome = match self.decisions.recv_timeout(timeout) {
            Ok(outcome) => outcome,
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                ReviewOutcome::TimedOut
            }
        };
        self.shutdown();
        outcome
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.accept_thread.take() {
            let _ = handle.join();
        }
    }
}

impl Drop for ReviewServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let shared = Arc::clone(shared);
                thread::spawn(move || {
                    let _ = handle(stream, &shared);
                });
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(20));
            }
            Err(_) => thread::sleep(Duration::from_millis(20)),
        }
    }
}

struct Request {
    method: String,
    path: String,
    query: String,
    host: Option<String>,
    origin: Option<String>,
    body: String,
}

fn read_request(stream: &mut TcpStream) -> io::Result<Request> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(Read::take(&mut *stream, MAX_REQUEST as u64 * 2));
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default().to_string();
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (target, String::new()),
    };
    let mut host = None;
    let mut origin = None;
    let mut length = 0usize;
    let mut head = line.len();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 {
            break;
        }
        head += header.len();
        if head > MAX_REQUEST {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request too large",
            ));
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            let value = value.trim().to_string();
            match name.trim().to_ascii_lowercase().as_str() {
                "host" => host = Some(value),
                "origin" => origin = Some(value),
                "content-length" => length = value.parse().unwrap_or(usize::MAX),
                _ => {}
            }
        }
    }
    if length > MAX_REQUEST {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "body too large"));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(Request {
        method,
        path,
        query,
        host,
        origin,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn handle(mut stream: TcpStream, shared: &Shared) -> io::Result<()> {
    let request = match read_request(&mut stream) {
        Ok(r) => r,
        Err(_) => {
            return respond(
                &mut stream,
                400,
                "Bad request",
                &message_page("bad request"),
            )
        }
    };
    let host_ok = request
        .host
        .as_deref()
        .is_some_and(|h| shared.hosts.iter().any(|ok| ok == h));
    if !host_ok {
        return respond(&mut stream, 403, "Forbidden", &message_page("wrong host"));
    }
    match (request.method.as_str(), request.path.as_str()) {
        ("GET", "/") => {
            let token = form_value(&request.query, "token").unwrap_or_default();
            if !same(&token, &shared.link_token) {
                return respond(
                    &mut stream,
                    403,
                    "Forbidden",
                    &message_page("this link is not valid"),
                );
            }
            if shared.link_used.swap(true, Ordering::SeqCst) {
                return respond(
                    &mut stream,
                    403,
                    "Forbidden",
                    &message_page("this review link has already been opened; run the command again for a new one"),
                );
            }
            respond(&mut stream, 200, "OK", &review_page(shared))
        }
        ("POST", "/decide") => {
            if request
                .origin
                .as_deref()
                .is_some_and(|o| o != shared.origin)
            {
                return respond(&mut stream, 403, "Forbidden", &message_page("wrong origin"));
            }
            let token = form_value(&request.body, "token").unwrap_or_default();
            if !same(&token, &shared.form_token) {
                return respond(
                    &mut stream,
                    403,
                    "Forbidden",
                    &message_page("this form is not valid"),
                );
            }
            let decision = form_value(&request.body, "decision").unwrap_or_default();
            if decision != "approve" && decision != "cancel" {
                return respond(
                    &mut stream,
                    400,
                    "Bad request",
                    &message_page("unknown decision"),
                );
            }
            let mut decided = match shared.decided.lock() {
                Ok(guard) => guard,
                Err(poisoned) => poisoned.into_inner(),
            };
            if *decided {
                return respond(
                    &mut stream,
                    409,
                    "Conflict",
                    &message_page("this review has already been decided"),
                );
            }
            *decided = true;
            let review = &shared.review;
            let outcome = if decision == "approve" {
                match merge_into(&review.target, &review.grant, review.force) {
                    Ok(merged) => ReviewOutcome::Approved(merged),
                    Err(e) => ReviewOutcome::Failed(e),
                }
            } else {
                ReviewOutcome::Cancelled
            };
            let page = outcome_page(&outcome);
            let status = if matches!(outcome, ReviewOutcome::Failed(_)) {
                500
            } else {
                200
            };
            let reason = if status == 200 {
                "OK"
            } else {
                "Internal Server Error"
            };
            let sent = respond(&mut stream, status, reason, &page);
            // Tell the waiting command only after the browser has its answer.
            if let Ok(tx) = shared.decisions.lock() {
                let _ = tx.send(outcome);
            }
            sent
        }
        _ => respond(&mut stream, 404, "Not found", &message_page("not found")),
    }
}

fn respond(stream: &mut TcpStream, status: u16, reason: &str, body: &str) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\n\
         Content-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\n\
         Cache-Control: no-store\r\n\
         Referrer-Policy: same-origin\r\n\
         X-Frame-Options: DENY\r\n\
         Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

/// The value of `key` in an `a=b&c=d` string (tokens and decisions need no decoding).
fn form_value(text: &str, key: &str) -> Option<String> {
    text.split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.trim().to_string())
}

/// Compare without stopping at the first difference.
fn same(given: &str, expected: &str) -> bool {
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

fn random_token() -> io::Result<String> {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:46em;margin:2em auto;padding:0 1em}\
code,pre{font-family:ui-monospace,monospace}ul.rules{list-style:none;padding-left:1em}\
.stop{border-left:4px solid #b00;padding-left:1em}button{font-size:1em;padding:.4em 1.2em;margin-right:1em}";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{STYLE}</style></head><body>{body}</body></html>",
        escape(title)
    )
}

fn message_page(message: &str) -> String {
    page(
        "sandgate grant",
        &format!("<p id=\"message\">{}</p>", escape(message)),
    )
}

fn review_page(shared: &Shared) -> String {
    let review = &shared.review;
    let mut body = String::new();
    body.push_str("<h1>sandgate grant: review</h1>");
    body.push_str(&format!(
        "<p>The loop <code>{}</code> needs these {} permission rule(s):</p><ul class=\"rules\" id=\"rules\">",
        escape(&review.source),
        review.grant.allow.len()
    ));
    for rule in &review.grant.allow {
        body.push_str(&format!("<li><code>{}</code></li>", escape(rule)));
    }
    body.push_str("</ul>");
    if !review.grant.deny.is_empty() {
        body.push_str(&format!(
            "<p>{}</p><ul class=\"rules\" id=\"deny\">",
            escape(&deny_heading(review.grant.deny.len()))
        ));
        for rule in &review.grant.deny {
            body.push_str(&format!("<li><code>{}</code></li>", escape(rule)));
        }
        body.push_str("</ul>");
    }
    body.push_str(&format!(
        "<p id=\"nothing-else\"><strong>{}</strong></p>",
        escape(NOTHING_ELSE)
    ));
    body.push_str(&format!(
        "<div class=\"stop\"><p id=\"checkpoints-stop\"><strong>{}</strong></p><ul id=\"checkpoints\">",
        escape(CHECKPOINTS_STILL_STOP)
    ));
    if review.checkpoints.is_empty() {
        body.push_str(&format!("<li>{}</li>", escape(NO_CHECKPOINTS)));
    }
    for checkpoint in &review.checkpoints {
        body.push_str(&format!("<li>{}</li>", escape(checkpoint)));
    }
    body.push_str("</ul></div>");
    body.push_str(&format!("<p>{}</p>", escape(NOT_THE_SAFETY_MECHANISM)));
    body.push_str(&format!(
        "<p>Approve adds these rules to <code id=\"target\">{}</code> (<code>permissions.allow</code> and <code>permissions.deny</code>; existing rules and settings are kept).</p>",
        escape(&review.target.display().to_string())
    ));
    body.push_str(&format!(
        "<form method=\"post\" action=\"/decide\"><input type=\"hidden\" name=\"token\" value=\"{}\">\
         <button id=\"approve\" type=\"submit\" name=\"decision\" value=\"approve\">Approve</button>\
         <button id=\"cancel\" type=\"submit\" name=\"decision\" value=\"cancel\">Cancel</button></form>",
        escape(&shared.form_token)
    ));
    page("sandgate grant: review", &body)
}

fn outcome_page(outcome: &ReviewOutcome) -> String {
    let body = match outcome {
        ReviewOutcome::Approved(merged) => format!(
            "<h1 id=\"result\">Approved</h1><p id=\"message\">{}</p><pre>{}</pre>\
             <p>You can close this page.</p>",
            escape(&merged.summary()),
            escape(&merged.json)
        ),
        ReviewOutcome::Failed(e) => format!(
            "<h1 id=\"result\">Not written</h1><p id=\"message\">{}</p>",
            escape(&e.to_string())
        ),
        ReviewOutcome::Cancelled | ReviewOutcome::TimedOut => {
            "<h1 id=\"result\">Cancelled</h1><p id=\"message\">nothing was written</p><p>You can close this page.</p>"
                .to_string()
        }
    };
    page("sandgate grant", &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_values_and_token_comparison() {
        assert_eq!(
            form_value("token=ab&decision=approve", "decision").as_deref(),
            Some("approve")
        );
        assert_eq!(form_value("token=ab", "decision"), None);
        assert!(same("abc", "abc"));
        assert!(!same("abd", "abc"));
        assert!(!same("ab", "abc"));
        let a = random_token().unwrap();
        assert_eq!(a.len(), 48);
        assert_ne!(a, random_token().unwrap());
    }

    #[test]
    fn pages_escape_what_they_show() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
