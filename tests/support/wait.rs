//! Waiting for a child process with a deadline: a test of something that
//! must not hang fails after the deadline instead of hanging the suite.

use std::process::{Child, Output};
use std::time::{Duration, Instant};

/// Waits for `child` at most `secs` seconds and returns its output; past
/// the deadline the child is killed and the test fails naming `what`.
pub fn finish(mut child: Child, secs: u64, what: &str) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
