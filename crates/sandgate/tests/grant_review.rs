//! `sandgate grant --review` driven in headless Chromium through chromedriver.
//!
//! The test speaks the W3C WebDriver protocol (JSON over HTTP) to Debian's
//! `chromedriver` with a few lines of std networking, so it needs no async
//! runtime. It skips, saying why, when `chromium` or `chromedriver` is missing
//! (`.ci/run` installs both).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/wait.rs"]
mod wait;

use wait::{Bounded, DEADLINE};

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const LOOP: &str = "\
providers:
  providers:
    - command: claude
validations:
  - detector:
      script: {command: cargo, args: [test]}
skills:
  acquisition_order: [marketplace]
constraints:
  human_checkpoint:
    - before publishing <a release>
";

fn find_program(candidates: &[&str]) -> Option<PathBuf> {
    for c in candidates {
        let p = Path::new(c);
        if p.is_absolute() {
            if p.exists() {
                return Some(p.to_path_buf());
            }
            continue;
        }
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {c}"))
            .output_within(DEADLINE)
            .ok()?;
        let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if out.status.success() && path.starts_with('/') {
            return Some(PathBuf::from(path));
        }
    }
    None
}

/// The port in chromedriver's "ChromeDriver was started successfully on
/// port 44227." line.
fn started_on(line: &str) -> Option<u16> {
    let rest = line.split("started successfully on port ").nth(1)?;
    rest.trim_end().trim_end_matches('.').parse().ok()
}

#[test]
fn chromedrivers_start_line_names_its_port() {
    assert_eq!(
        started_on("ChromeDriver was started successfully on port 44227."),
        Some(44227)
    );
    assert_eq!(started_on("Starting ChromeDriver 156.0 on port 0"), None);
}

/// One HTTP/1.1 request with `Connection: close`; returns the JSON body.
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> std::io::Result<Value> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    // chromedriver may keep the connection open: read the head, then exactly the body.
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let lower = head.to_ascii_lowercase();
    let length = lower
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    let body = match length {
        Some(n) => {
            let mut buf = vec![0; n];
            reader.read_exact(&mut buf)?;
            String::from_utf8_lossy(&buf).into_owned()
        }
        None => {
            let mut rest = String::new();
            reader.read_to_string(&mut rest)?;
            if lower.contains("transfer-encoding: chunked") {
                dechunk(&rest)
            } else {
                rest
            }
        }
    };
    serde_json::from_str(&body).map_err(|e| std::io::Error::other(format!("{e}: {body}")))
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || after.len() < size {
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    out
}

struct Driver {
    process: Child,
    port: u16,
    session: String,
    _profile: tempfile::TempDir,
}

impl Driver {
    fn start(chromedriver: &Path, chromium: &Path) -> Driver {
        // Port 0: chromedriver binds a free port itself and prints it, so no
        // other process can take the port between a choice and the bind.
        // Its own process group: the chromium it starts dies with it.
        let mut process = std::os::unix::process::CommandExt::process_group(
            Command::new(chromedriver)
                .arg("--port=0")
                .stdout(Stdio::piped())
                .stderr(Stdio::null()),
            0,
        )
        .spawn()
        .unwrap();
        let (tx, rx) = mpsc::channel();
        let stdout = process.stdout.take().unwrap();
        thread::spawn(move || {
            // Read to the end, so chromedriver never blocks on a full pipe.
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(port) = started_on(&line) {
                    let _ = tx.send(port);
                }
            }
        });
        let Ok(port) = rx.recv_timeout(Duration::from_secs(30)) else {
            wait::reap(&mut process);
            panic!("chromedriver did not say which port it listens on within 30 s");
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(status) = http(port, "GET", "/status", None) {
                if status["value"]["ready"] == true {
                    break;
                }
            }
            if Instant::now() > deadline {
                wait::reap(&mut process);
                panic!("chromedriver did not start");
            }
            thread::sleep(Duration::from_millis(100));
        }
        let profile = tempfile::tempdir().unwrap();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium.display().to_string(),
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage",
                    format!("--user-data-dir={}", profile.path().display()),
                ]
            }
        }}});
        let created = http(port, "POST", "/session", Some(&caps));
        let Some(session) = created
            .as_ref()
            .ok()
            .and_then(|c| c["value"]["sessionId"].as_str())
            .map(str::to_string)
        else {
            wait::reap(&mut process);
            panic!("chromedriver could not start chromium: {created:?}");
        };
        Driver {
            process,
            port,
            session,
            _profile: profile,
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let path = format!("/session/{}{path}", self.session);
        let reply = http(self.port, method, &path, body.as_ref()).unwrap();
        if reply["value"]["error"].is_string() {
            panic!("webdriver {method} {path}: {reply}");
        }
        reply["value"].clone()
    }

    fn goto(&self, url: &str) {
        self.call("POST", "/url", Some(json!({"url": url})));
    }

    fn element(&self, css: &str) -> String {
        let found = self.call(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}: {found}"))
            .to_string()
    }

    /// The text of `css` once the page shows it (after a click, the page
    /// writes its answer when the server has replied), for up to 20 s.
    fn text_when_shown(&self, css: &str) -> String {
        let path = format!("/session/{}/element", self.session);
        let query = json!({"using": "css selector", "value": css});
        for _ in 0..200 {
            let reply = http(self.port, "POST", &path, Some(&query)).unwrap();
            if !reply["value"]["error"].is_string() {
                return self.text(css);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        self.text(css)
    }

    fn text(&self, css: &str) -> String {
        let id = self.element(css);
        self.call("GET", &format!("/element/{id}/text"), None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    fn click(&self, css: &str) {
        let id = self.element(css);
        self.call("POST", &format!("/element/{id}/click"), Some(json!({})));
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = http(
            self.port,
            "DELETE",
            &format!("/session/{}", self.session),
            None,
        );
        wait::reap(&mut self.process);
    }
}

/// `sandgate grant --review --no-open` with `HOME` at `home`, and the
/// one-time link it prints.
fn start_review(dir: &Path, home: &Path, settings: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sandgate"))
        .arg("grant")
        .arg(dir.join("loop.yaml"))
        .arg("--review")
        .arg("--no-open")
        .args(["--review-timeout", "120"])
        .arg("--write")
        .arg(settings)
        .env("HOME", home)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.find("http://127.0.0.1:") {
                let url = line[at..]
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .to_string();
                let _ = tx.send(url);
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the review link is printed");
    (child, url)
}

fn wait_for(child: &mut Child) -> (i32, String) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut out = String::new();
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut out)
                .unwrap();
            return (status.code().unwrap_or(-1), out);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("sandgate did not finish after the decision");
        }
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn approve_writes_the_grant_and_cancel_writes_nothing() {
    let (Some(chromium), Some(chromedriver)) = (
        find_program(&[
            "/usr/lib/chromium/chromium",
            "chromium",
            "chromium-browser",
            "google-chrome",
        ]),
        find_program(&["chromedriver", "/usr/lib/chromium/chromedriver"]),
    ) else {
        eprintln!("skipping: chromium and chromedriver are needed (apt-get install chromium chromium-driver)");
        return;
    };
    let driver = Driver::start(&chromedriver, &chromium);
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    fs::write(dir.path().join("loop.yaml"), LOOP).unwrap();
    let scope = format!("/{}/**", fs::canonicalize(dir.path()).unwrap().display());

    // Approve: the page shows the rules, both sentences and the checkpoints; the file is written.
    let settings = dir.path().join(".claude/settings.local.json");
    let (mut child, url) = start_review(dir.path(), home, &settings);
    driver.goto(&url);
    let rules = driver.text("#rules");
    for rule in [
        "Bash(cargo:*)",
        "Bash(claude:*)",
        "Bash(npx skills:*)",
        "WebFetch(domain:claudemarketplaces.com)",
        &format!("Read({scope})"),
        &format!("Edit({scope})"),
    ] {
        assert!(rules.contains(rule), "{rules}");
    }
    assert_eq!(rules.lines().count(), 6, "{rules}");
    let deny = driver.text("#deny");
    for rule in ["Read(~/.ssh/**)", "Edit(~/.ssh/**)", "Edit(~/.sandgate/**)"] {
        assert!(deny.contains(rule), "{deny}");
    }
    assert_eq!(deny.lines().count(), 8, "{deny}");
    assert_eq!(
        driver.text("#nothing-else"),
        "Nothing outside this list is requested."
    );
    assert_eq!(
        driver.text("#checkpoints-stop"),
        "Human checkpoints still stop and wait, whatever this grant allows:"
    );
    assert_eq!(driver.text("#checkpoints"), "before publishing <a release>");
    assert!(!settings.exists(), "nothing is written before Approve");
    driver.click("#approve");
    assert_eq!(driver.text_when_shown("#result"), "Approved");
    let (code, stdout) = wait_for(&mut child);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.starts_with(&format!(
            "wrote 14 permission rule(s) to {} (6 allow, 8 deny)",
            settings.display()
        )),
        "{stdout}"
    );
    let written: Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(written["permissions"]["allow"].as_array().unwrap().len(), 6);
    assert_eq!(written["permissions"]["deny"].as_array().unwrap().len(), 8);

    // The link was one-time: opening it again is refused.
    let (mut child, url) = start_review(dir.path(), home, &dir.path().join("other.json"));
    driver.goto(&url);
    driver.goto(&url);
    assert!(
        driver.text("#message").contains("already been opened"),
        "a second visit is refused"
    );
    wait::reap(&mut child);

    // Cancel: nothing is written and the command reports failure.
    let untouched = dir.path().join("cancel/settings.local.json");
    let (mut child, url) = start_review(dir.path(), home, &untouched);
    driver.goto(&url);
    driver.click("#cancel");
    assert_eq!(driver.text_when_shown("#result"), "Cancelled");
    let (code, _) = wait_for(&mut child);
    assert_eq!(code, 1);
    assert!(!untouched.exists());
    assert!(!dir.path().join("cancel").exists());

    // A wrong token shows nothing.
    let (mut child, url) = start_review(dir.path(), home, &untouched);
    let (base, _) = url.split_once("?token=").unwrap();
    driver.goto(&format!("{base}?token=0000"));
    assert!(driver.text("#message").contains("not valid"));
    driver.goto(&url);
    driver.click("#cancel");
    let (code, _) = wait_for(&mut child);
    assert_eq!(code, 1);
    assert!(!untouched.exists());
}
