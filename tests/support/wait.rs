//! Waiting for a child process with a deadline, and children that die with
//! the test: a test of something that must not hang fails after the deadline
//! instead of hanging the suite, and a failing test leaves no process behind.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::ops::{Deref, DerefMut};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Waits for `child` at most `secs` seconds and returns its output; past
/// the deadline the child is killed and the test fails naming `what`.
///
/// Its stdout and stderr (when piped) are read while it runs, so a child
/// that writes more than a pipe holds still finishes; a grandchild that
/// keeps them open past the deadline fails the test too.
pub fn finish(mut child: Child, secs: u64, what: &str) -> Output {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let collect = |pipe: Option<mpsc::Receiver<Vec<u8>>>, name: &str| {
        let Some(pipe) = pipe else { return Vec::new() };
        let left = deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(5);
        pipe.recv_timeout(left).unwrap_or_else(|_| {
            panic!("{what}: exited, but something it started still holds its {name} after {secs} s")
        })
    };
    Output {
        status,
        stdout: collect(stdout, "stdout"),
        stderr: collect(stderr, "stderr"),
    }
}

/// Reads `pipe` to its end on a thread; the bytes arrive on the channel.
fn drain(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(bytes);
    });
    rx
}

/// Runs `cmd` like [`Command::output`] (stdin empty, stdout and stderr
/// captured), for at most `secs` seconds.
pub fn output_within(cmd: &mut Command, secs: u64, what: &str) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    finish(child, secs, what)
}

/// Polls `ready` every 20 ms for at most `secs` seconds; past the deadline
/// the test fails naming `what`.
pub fn until(secs: u64, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !ready() {
        assert!(
            Instant::now() < deadline,
            "{what}: not ready after {secs} s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child that is killed (and reaped) when dropped, so that a test that
/// fails or panics midway leaves no helper running and holding its pipes.
pub struct Guard(Option<Child>);

impl Guard {
    pub fn new(child: Child) -> Guard {
        Guard(Some(child))
    }

    /// Starts `cmd` under a guard.
    pub fn spawn(cmd: &mut Command) -> Guard {
        Guard::new(cmd.spawn().unwrap())
    }

    /// [`finish`] for the guarded child.
    pub fn finish(mut self, secs: u64, what: &str) -> Output {
        finish(self.0.take().unwrap(), secs, what)
    }
}

impl Deref for Guard {
    type Target = Child;
    fn deref(&self) -> &Child {
        self.0.as_ref().unwrap()
    }
}

impl DerefMut for Guard {
    fn deref_mut(&mut self) -> &mut Child {
        self.0.as_mut().unwrap()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The lines of a child's pipe, read on a thread, each wait with a deadline.
pub struct Lines(mpsc::Receiver<String>);

impl Lines {
    pub fn new(pipe: impl Read + Send + 'static) -> Lines {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines(rx)
    }

    /// The next line (without its newline), waiting at most `secs` seconds;
    /// `None` at the end of the pipe.
    pub fn next_within(&self, secs: u64, what: &str) -> Option<String> {
        match self.0.recv_timeout(Duration::from_secs(secs)) {
            Ok(line) => Some(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: no line after {secs} s"),
        }
    }

    /// Every line up to the end of the pipe, each followed by a newline,
    /// waiting at most `secs` seconds in all.
    pub fn rest_within(&self, secs: u64, what: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        let mut text = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.0.recv_timeout(left) {
                Ok(line) => {
                    text.push_str(&line);
                    text.push('\n');
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return text,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("{what}: the pipe was still open after {secs} s; so far: {text}")
                }
            }
        }
    }
}

/// Waits for `child` at most `secs` seconds and returns its status; past the
/// deadline the child is killed and the test fails naming `what`.
pub fn status_within(child: &mut Child, secs: u64, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
