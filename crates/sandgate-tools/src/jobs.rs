//! Commands started by `exec_run`, and the table of those that outlived their
//! timeout and became background jobs (`exec_status`, `exec_tail`,
//! `exec_kill`, `exec_stat`).
//!
//! Each command runs in its own process group, so `exec_kill` stops the whole
//! group (a shell and what it started), not just the shell. Output (stdout and
//! stderr, interleaved as they arrive) is kept up to [`MAX_KEPT_OUTPUT`] bytes;
//! beyond that the oldest bytes are dropped and counted.

use std::collections::{BTreeMap, VecDeque};
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use crate::error::ToolError;

/// Output bytes kept per command; older bytes are dropped.
pub const MAX_KEPT_OUTPUT: usize = 1024 * 1024;
/// Background jobs that may run at once.
pub const MAX_RUNNING_JOBS: usize = 16;
/// Finished jobs kept for inspection before the oldest are forgotten.
pub const MAX_FINISHED_JOBS: usize = 64;
/// How long `exec_kill` waits after SIGTERM before it sends SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long a finished command's output pipes may stay open before the result is returned.
const DRAIN_GRACE: Duration = Duration::from_millis(200);

/// How a command ended, or that it has not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Still running.
    Running,
    /// Exited with a code.
    Exited(i32),
    /// Ended by a signal.
    Signalled(i32),
}

impl JobState {
    /// `running`, `exited` or `signalled`.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Running => "running",
            JobState::Exited(_) => "exited",
            JobState::Signalled(_) => "signalled",
        }
    }

    fn from_status(status: ExitStatus) -> JobState {
        match (status.code(), status.signal()) {
            (Some(code), _) => JobState::Exited(code),
            (None, Some(sig)) => JobState::Signalled(sig),
            (None, None) => JobState::Exited(-1),
        }
    }

    /// The state in words, e.g. `exited with code 0`.
    pub fn describe(self) -> String {
        match self {
            JobState::Running => "running".into(),
            JobState::Exited(code) => format!("exited with code {code}"),
            JobState::Signalled(sig) => {
                let name = Signal::try_from(sig).map(|s| s.as_str()).unwrap_or("?");
                format!("ended by signal {sig} ({name})")
            }
        }
    }
}

#[derive(Debug, Default)]
struct Shared {
    state: Option<JobState>,
    output: VecDeque<u8>,
    dropped: u64,
    open_streams: usize,
    ended_at: Option<Instant>,
    killed: bool,
}

/// One command started by `exec_run`.
#[derive(Debug)]
pub struct Job {
    /// The job id (assigned when it enters the table; 0 before).
    id: Mutex<u64>,
    /// The command line.
    pub command: String,
    /// Where it runs.
    pub cwd: String,
    /// The process group id (the shell's pid).
    pub pid: u32,
    started: Instant,
    started_wall: SystemTime,
    shared: Mutex<Shared>,
    changed: Condvar,
}

fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A panic while holding the lock leaves plain data behind; keep using it.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Job {
    /// Start `cmd` (program, arguments and working directory already set) in its
    /// own process group, with stdin closed and output captured.
    pub fn spawn(mut cmd: Command, command: &str, cwd: &str) -> Result<Arc<Job>, ToolError> {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child: Child = cmd.spawn().map_err(|e| {
            ToolError::failed(format!(
                "cannot start `{command}`: {}",
                crate::error::io_text(&e)
            ))
        })?;
        let job = Arc::new(Job {
            id: Mutex::new(0),
            command: command.to_string(),
            cwd: cwd.to_string(),
            pid: child.id(),
            started: Instant::now(),
            started_wall: SystemTime::now(),
            shared: Mutex::new(Shared {
                open_streams: 2,
                ..Shared::default()
            }),
            changed: Condvar::new(),
        });
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        for stream in [
            stdout.map(|s| Box::new(s) as Box<dyn Read + Send>),
            stderr.map(|s| Box::new(s) as Box<dyn Read + Send>),
        ] {
            let job = Arc::clone(&job);
            std::thread::spawn(move || job.pump(stream));
        }
        let waiter = Arc::clone(&job);
        std::thread::spawn(move || {
            let state = match child.wait() {
                Ok(status) => JobState::from_status(status),
                Err(_) => JobState::Exited(-1),
            };
            let mut s = lock(&waiter.shared);
            s.state = Some(state);
            s.ended_at = Some(Instant::now());
            waiter.changed.notify_all();
        });
        Ok(job)
    }

    fn pump(&self, stream: Option<Box<dyn Read + Send>>) {
        if let Some(mut stream) = stream {
            let mut buf = [0u8; 8192];
            loop {
                match stream.read(&mut buf) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut s = lock(&self.shared);
                        s.output.extend(&buf[..n]);
                        let over = s.output.len().saturating_sub(MAX_KEPT_OUTPUT);
                        if over > 0 {
                            s.output.drain(..over);
                            s.dropped += over as u64;
                        }
                        self.changed.notify_all();
                    }
                }
            }
        }
        let mut s = lock(&self.shared);
        s.open_streams -= 1;
        self.changed.notify_all();
    }

    /// The job id (0 while it is not a background job).
    pub fn id(&self) -> u64 {
        *self.id.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The current state.
    pub fn state(&self) -> JobState {
        lock(&self.shared).state.unwrap_or(JobState::Running)
    }

    /// Wait until the command ends (and its output is drained) or `timeout`
    /// passes; returns the state then.
    pub fn wait(&self, timeout: Duration) -> JobState {
        let deadline = Instant::now() + timeout;
        let mut s = lock(&self.shared);
        loop {
            let now = Instant::now();
            match s.state {
                // Ended: give the pipes a moment to drain; a grandchild that
                // keeps them open must not hold the answer back.
                Some(state) => {
                    let drained_by = s.ended_at.unwrap_or(now) + DRAIN_GRACE;
                    if s.open_streams == 0 || now >= drained_by {
                        return state;
                    }
                    let (g, _) = self
                        .changed
                        .wait_timeout(s, drained_by - now)
                        .unwrap_or_else(|p| p.into_inner());
                    s = g;
                }
                None => {
                    if now >= deadline {
                        return JobState::Running;
                    }
                    let (g, _) = self
                        .changed
                        .wait_timeout(s, deadline - now)
                        .unwrap_or_else(|p| p.into_inner());
                    s = g;
                }
            }
        }
    }

    /// All kept output, lossily decoded, and how many older bytes were dropped.
    pub fn output(&self) -> (String, u64) {
        let s = lock(&self.shared);
        let (a, b) = s.output.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        (String::from_utf8_lossy(&bytes).into_owned(), s.dropped)
    }

    /// The last `lines` lines of the output.
    pub fn tail(&self, lines: usize) -> String {
        let (text, _) = self.output();
        tail_lines(&text, lines).to_string()
    }

    /// Seconds since the start (until the end, if it ended).
    pub fn runtime(&self) -> Duration {
        let s = lock(&self.shared);
        s.ended_at.unwrap_or_else(Instant::now) - self.started
    }

    /// Stop the whole process group: SIGTERM, then SIGKILL after [`KILL_GRACE`].
    pub fn kill(&self) -> JobState {
        if self.state() != JobState::Running {
            return self.state();
        }
        lock(&self.shared).killed = true;
        let group = Pid::from_raw(self.pid as i32);
        let _ = killpg(group, Signal::SIGTERM);
        let state = self.wait(KILL_GRACE);
        if state == JobState::Running {
            let _ = killpg(group, Signal::SIGKILL);
            return self.wait(KILL_GRACE);
        }
        // The shell is gone; make sure nothing it started lingers in the group.
        let _ = killpg(group, Signal::SIGKILL);
        state
    }

    /// The job as JSON.
    pub fn summary(&self) -> Value {
        let state = self.state();
        let s = lock(&self.shared);
        let (code, signal) = match state {
            JobState::Exited(c) => (Some(c), None),
            JobState::Signalled(sig) => (None, Some(sig)),
            JobState::Running => (None, None),
        };
        let runtime = s.ended_at.unwrap_or_else(Instant::now) - self.started;
        json!({
            "id": self.id(),
            "command": self.command,
            "cwd": self.cwd,
            "pid": self.pid,
            "state": state.as_str(),
            "exit_code": code,
            "signal": signal,
            "killed": s.killed,
            "runtime_s": (runtime.as_millis() as f64) / 1000.0,
            "started": self.started_wall.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
            "output_bytes": s.output.len() as u64 + s.dropped,
        })
    }
}

/// The last `n` lines of `text`.
pub fn tail_lines(text: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    let trimmed = text.strip_suffix('\n').unwrap_or(text);
    let mut count = 0;
    for (i, b) in trimmed.bytes().enumerate().rev() {
        if b == b'\n' {
            count += 1;
            if count == n {
                return &text[i + 1..];
            }
        }
    }
    text
}

/// The background jobs of one server.
#[derive(Debug, Default)]
pub struct JobTable {
    inner: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    next: u64,
    jobs: BTreeMap<u64, Arc<Job>>,
}

impl JobTable {
    /// An empty table.
    pub fn new() -> Self {
        JobTable::default()
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether another background job may start.
    pub fn has_room(&self) -> bool {
        let t = self.table();
        t.jobs
            .values()
            .filter(|j| j.state() == JobState::Running)
            .count()
            < MAX_RUNNING_JOBS
    }

    /// Keep `job` as a background job and give it an id.
    pub fn adopt(&self, job: Arc<Job>) -> u64 {
        let mut t = self.table();
        t.next += 1;
        let id = t.next;
        *job.id.lock().unwrap_or_else(|p| p.into_inner()) = id;
        t.jobs.insert(id, job);
        // Forget the oldest finished jobs beyond the limit.
        let finished: Vec<u64> = t
            .jobs
            .iter()
            .filter(|(_, j)| j.state() != JobState::Running)
            .map(|(id, _)| *id)
            .collect();
        for old in finished
            .iter()
            .take(finished.len().saturating_sub(MAX_FINISHED_JOBS))
        {
            t.jobs.remove(old);
        }
        id
    }

    /// The job with `id`.
    pub fn get(&self, id: u64) -> Result<Arc<Job>, ToolError> {
        let t = self.table();
        t.jobs.get(&id).cloned().ok_or_else(|| {
            let known: Vec<String> = t.jobs.keys().map(|k| k.to_string()).collect();
            ToolError::invalid(if known.is_empty() {
                format!("there is no job {id}; no command has become a background job")
            } else {
                format!("there is no job {id}; known jobs: {}", known.join(", "))
            })
        })
    }

    /// Every job, oldest first.
    pub fn all(&self) -> Vec<Arc<Job>> {
        self.table().jobs.values().cloned().collect()
    }

    /// Stop every running job (when the server shuts down).
    pub fn kill_all(&self) {
        for job in self.all() {
            if job.state() == JobState::Running {
                let _ = killpg(Pid::from_raw(job.pid as i32), Signal::SIGKILL);
            }
        }
    }
}

impl Drop for JobTable {
    fn drop(&mut self) {
        self.kill_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn a_quick_command_finishes_with_its_output() {
        let job = Job::spawn(sh("echo out; echo err >&2; exit 3"), "x", "/").unwrap();
        assert_eq!(job.wait(Duration::from_secs(5)), JobState::Exited(3));
        let (out, dropped) = job.output(); // not a wait: what the job captured so far
        assert!(out.contains("out\n") && out.contains("err\n"), "{out}");
        assert_eq!(dropped, 0);
    }

    #[test]
    fn a_slow_command_keeps_running_and_can_be_killed() {
        let job = Job::spawn(sh("echo started; sleep 30"), "x", "/").unwrap();
        assert_eq!(job.wait(Duration::from_millis(300)), JobState::Running);
        let table = JobTable::new();
        let id = table.adopt(Arc::clone(&job));
        assert_eq!(table.get(id).unwrap().tail(5), "started\n");
        let state = job.kill();
        assert_eq!(state, JobState::Signalled(15));
        assert!(table.get(id + 1).is_err());
    }

    #[test]
    fn tails_lines() {
        assert_eq!(tail_lines("a\nb\nc\n", 2), "b\nc\n");
        assert_eq!(tail_lines("a\nb\nc", 2), "b\nc");
        assert_eq!(tail_lines("a\n", 5), "a\n");
        assert_eq!(tail_lines("a\nb\n", 0), "");
    }
}
