//! Waiting with a deadline for a program a test runs in a pseudo-terminal
//! (an `expectrl` session): past the deadline the program and its process
//! group are killed and the test fails.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use expectrl::process::unix::{Signal, WaitStatus};
use expectrl::session::OsSession;

/// How the program in `s` ended, waiting at most `limit` for it.
pub fn wait_within(s: &mut OsSession, limit: Duration) -> std::io::Result<WaitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match s.get_process().status() {
            Ok(WaitStatus::StillAlive) => {}
            Ok(status) => return Ok(status),
            Err(e) => return Err(std::io::Error::other(e)),
        }
        if Instant::now() > deadline {
            let pid = s.get_process().pid();
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .stderr(std::process::Stdio::null())
                .status();
            let _ = s.get_process_mut().kill(Signal::SIGKILL);
            panic!(
                "the program in the terminal (pid {pid}) still runs after {} s",
                limit.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
