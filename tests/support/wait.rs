//! Waiting for a child process with a deadline, and children that die with
//! the test: a test of something that must not hang fails after the deadline
//! instead of hanging the suite, and a failing test leaves no process behind.
//!
//! A test never calls `output()`, `status()` or `wait()` itself: it calls
//! [`Bounded::output_within`], [`Bounded::status_within`],
//! [`BoundedChild::wait_within`] (or [`finish`], [`Guard`], [`reap`]), which
//! start the child as the leader of its own process group and, at the
//! deadline, kill that whole group and fail the test naming the command and
//! the deadline. `.ci/bounded-waits` keeps it so.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::ops::{Deref, DerefMut};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The deadline of an ordinary wait in a test: far past what a command
/// takes on a loaded two-core machine, so reaching it means a hang.
pub const DEADLINE: Duration = Duration::from_secs(180);

/// Kills the process group `child` leads (when it leads one; a child
/// started here does), then `child` itself, so nothing it started in its
/// group outlives it.
pub fn kill_group(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
}

/// Kills `child` (and its group) and reaps it: for a helper a test is done
/// with, or a `Drop` that must not panic.
pub fn reap(child: &mut Child) {
    kill_group(child);
    let _ = child.wait();
}

/// `cmd` as a person would type it (program and arguments), for a failure.
pub fn describe(cmd: &Command) -> String {
    let mut words = vec![cmd.get_program().to_string_lossy().into_owned()];
    words.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    let text = words.join(" ");
    if text.chars().count() > 300 {
        return text.chars().take(300).collect::<String>() + "…";
    }
    text
}

/// Waits of a [`Command`] with a deadline.
pub trait Bounded {
    /// [`Command::output`] that waits at most `limit`: stdin empty, stdout
    /// and stderr captured, the child the leader of its own process group.
    /// Past the deadline the group is killed and the test fails naming the
    /// command; once the child has exited, whatever it left in its group is
    /// killed too. `Err` only when the command cannot start.
    fn output_within(&mut self, limit: Duration) -> std::io::Result<Output>;

    /// [`Command::status`] (stdio as set, else inherited) that waits at most
    /// `limit`, like [`Bounded::output_within`].
    fn status_within(&mut self, limit: Duration) -> std::io::Result<ExitStatus>;

    /// [`Bounded::output_within`] with `input` on the standard input (written
    /// on a thread while the output is read; a child that exits or closes
    /// its stdin before reading it all is no failure: its exit code and
    /// output tell).
    fn output_with_stdin_within(
        &mut self,
        input: &[u8],
        limit: Duration,
    ) -> std::io::Result<Output>;

    /// Starts the command as the leader of its own process group, under a
    /// [`Guard`] that kills the group when dropped.
    fn spawn_guarded(&mut self) -> std::io::Result<Guard>;
}

impl Bounded for Command {
    fn output_within(&mut self, limit: Duration) -> std::io::Result<Output> {
        let what = describe(self);
        let child = self
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()?;
        Ok(finish_within(child, limit, &what))
    }

    fn status_within(&mut self, limit: Duration) -> std::io::Result<ExitStatus> {
        let what = describe(self);
        let mut child = self.process_group(0).spawn()?;
        let status = wait_child(&mut child, limit, &what);
        kill_group(&mut child);
        Ok(status)
    }

    fn output_with_stdin_within(
        &mut self,
        input: &[u8],
        limit: Duration,
    ) -> std::io::Result<Output> {
        use std::io::Write;
        let what = describe(self);
        let mut child = self
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()?;
        let mut stdin = child.stdin.take().unwrap();
        let input = input.to_vec();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let written = match stdin.write_all(&input) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e),
                _ => Ok(()),
            };
            let _ = tx.send(written);
        });
        let out = finish_within(child, limit, &what);
        match rx.recv_timeout(Duration::from_secs(5)) {
            Ok(Err(e)) => panic!("{what}: cannot write its standard input: {e}"),
            Ok(Ok(())) => {}
            Err(_) => panic!("{what}: its standard input still blocks after it exited"),
        }
        Ok(out)
    }

    fn spawn_guarded(&mut self) -> std::io::Result<Guard> {
        Ok(Guard::new(self.process_group(0).spawn()?))
    }
}

/// Waits of a [`Child`] with a deadline.
pub trait BoundedChild {
    /// [`Child::wait`] that waits at most `limit`; past it the child (and
    /// the group it leads) is killed and the test fails.
    fn wait_within(&mut self, limit: Duration) -> std::io::Result<ExitStatus>;

    /// [`Child::wait_with_output`] that waits at most `limit` (see [`finish`]).
    fn wait_with_output_within(self, limit: Duration) -> std::io::Result<Output>;
}

impl BoundedChild for Child {
    fn wait_within(&mut self, limit: Duration) -> std::io::Result<ExitStatus> {
        let what = format!("process {}", self.id());
        Ok(wait_child(self, limit, &what))
    }

    fn wait_with_output_within(self, limit: Duration) -> std::io::Result<Output> {
        let what = format!("process {}", self.id());
        Ok(finish_within(self, limit, &what))
    }
}

/// Waits for `child` at most `limit`; past it kills its group and fails.
fn wait_child(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            reap(child);
            panic!("{what}: still running after {} s", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `child` at most `secs` seconds and returns its output; past
/// the deadline the child is killed and the test fails naming `what`.
///
/// Its stdout and stderr (when piped) are read while it runs, so a child
/// that writes more than a pipe holds still finishes; a grandchild that
/// keeps them open past the deadline fails the test too.
pub fn finish(child: Child, secs: u64, what: &str) -> Output {
    finish_within(child, Duration::from_secs(secs), what)
}

/// [`finish`] with the deadline as a [`Duration`]; once the child and its
/// pipes are done, whatever it left in the process group it leads is killed.
pub fn finish_within(mut child: Child, limit: Duration, what: &str) -> Output {
    let secs = limit.as_secs();
    let deadline = Instant::now() + limit;
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let status = wait_child(&mut child, limit, what);
    let mut collect = |pipe: Option<mpsc::Receiver<Vec<u8>>>, name: &str| {
        let Some(pipe) = pipe else { return Vec::new() };
        let left = deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(5);
        pipe.recv_timeout(left).unwrap_or_else(|_| {
            kill_group(&mut child);
            panic!("{what}: exited, but something it started still holds its {name} after {secs} s")
        })
    };
    let (stdout, stderr) = (collect(stdout, "stdout"), collect(stderr, "stderr"));
    kill_group(&mut child);
    Output {
        status,
        stdout,
        stderr,
    }
}

/// One `read`, again for as long as it is interrupted (`EINTR`): a read
/// from a socket with a read timeout is not restarted by the kernel, and it
/// is interrupted while the process starts and reaps children, which every
/// test binary with more than one test does.
pub fn read_some(from: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match from.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            done => return done,
        }
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
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    finish(child, secs, what)
}

/// Joins the thread `handle`, waiting at most `limit`; past the deadline
/// the test fails naming `what` (the thread is left to the process's end).
pub fn join_within<T>(
    handle: std::thread::JoinHandle<T>,
    limit: Duration,
    what: &str,
) -> std::thread::Result<T> {
    let deadline = Instant::now() + limit;
    while !handle.is_finished() {
        assert!(
            Instant::now() < deadline,
            "{what}: still running after {} s",
            limit.as_secs()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    handle.join()
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

/// A child that is killed (and reaped) when dropped, with the process group
/// it leads, so that a test that fails or panics midway leaves no helper
/// running and holding its pipes.
pub struct Guard(Option<Child>);

impl Guard {
    pub fn new(child: Child) -> Guard {
        Guard(Some(child))
    }

    /// Starts `cmd` under a guard, as the leader of its own process group.
    pub fn spawn(cmd: &mut Command) -> Guard {
        Guard::new(cmd.process_group(0).spawn().unwrap())
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
            reap(&mut child);
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

    /// The lines that have come so far, each followed by a newline, without
    /// waiting: for a failure's message.
    pub fn so_far(&self) -> String {
        self.0.try_iter().map(|line| line + "\n").collect()
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
pub fn status_within(child: &mut Child, secs: u64, what: &str) -> ExitStatus {
    wait_child(child, Duration::from_secs(secs), what)
}
