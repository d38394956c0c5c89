//! Running a loop's script detectors: argv only, no shell, from the loop directory.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::config::LoopConfig;

/// A detector's verdict, ordered from best to worst; a run's verdict is the max.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Exit 0: the check passed.
    Pass,
    /// Exit 1: the check failed.
    Fail,
    /// Exit 2: this machine cannot run the check.
    CannotRun,
    /// Any other exit, a signal, or the program could not be started.
    Error,
}

impl Outcome {
    /// The exit code that reports this outcome: 0, 1, 2 or 3.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Pass => 0,
            Outcome::Fail => 1,
            Outcome::CannotRun => 2,
            Outcome::Error => 3,
        }
    }

    /// A short machine-readable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::CannotRun => "cannot-run",
            Outcome::Error => "error",
        }
    }

    fn from_code(code: Option<i32>) -> Outcome {
        match code {
            Some(0) => Outcome::Pass,
            Some(1) => Outcome::Fail,
            Some(2) => Outcome::CannotRun,
            _ => Outcome::Error,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::CannotRun => "cannot run here",
            Outcome::Error => "error",
        })
    }
}

/// What one detector did.
#[derive(Debug, Clone)]
pub struct DetectorRun {
    /// The validation's name, or `validation N`.
    pub name: String,
    /// The program as written in the config.
    pub command: String,
    /// Its literal arguments.
    pub args: Vec<String>,
    /// The verdict.
    pub outcome: Outcome,
    /// The exit code, when the program exited normally.
    pub exit_code: Option<i32>,
    /// Why it is an error when there is no exit code (not started, killed by a signal).
    pub problem: Option<String>,
    /// What it printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
}

/// Run every script detector of `config` in order, from `loop_dir`.
///
/// A program name with a `/` is resolved against `loop_dir`; a bare name is
/// looked up on `PATH`. Standard input is empty; output is captured. A
/// detector still running after `timeout` is killed and is an error.
pub fn run_detectors(
    config: &LoopConfig,
    loop_dir: &Path,
    timeout: Option<Duration>,
) -> Vec<DetectorRun> {
    config
        .scripts()
        .map(|(name, script)| {
            let command = script.command.value.clone();
            let program = program_path(&command, loop_dir);
            let result = Command::new(&program)
                .args(&script.args)
                .current_dir(loop_dir)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .map(|child| finish(child, timeout));
            let mut run = DetectorRun {
                name,
                command,
                args: script.args.clone(),
                outcome: Outcome::Error,
                exit_code: None,
                problem: None,
                stdout: String::new(),
                stderr: String::new(),
            };
            match result {
                Ok(finished) => {
                    run.stdout = String::from_utf8_lossy(&finished.stdout).into_owned();
                    run.stderr = String::from_utf8_lossy(&finished.stderr).into_owned();
                    match finished.status {
                        Some(status) if !finished.timed_out => {
                            run.exit_code = status.code();
                            run.outcome = Outcome::from_code(run.exit_code);
                            if run.exit_code.is_none() {
                                run.problem = Some(describe_abnormal_exit(&status));
                            }
                        }
                        _ => {
                            let secs = timeout.map(|t| t.as_secs_f64()).unwrap_or_default();
                            run.problem = Some(format!("timed out after {secs} s and was killed"));
                        }
                    }
                }
                Err(e) => {
                    run.problem = Some(format!("cannot start `{}`: {e}", program.display()));
                }
            }
            run
        })
        .collect()
}

/// The worst outcome of `runs`; no detectors at all is a pass.
pub fn worst(runs: &[DetectorRun]) -> Outcome {
    runs.iter()
        .map(|r| r.outcome)
        .max()
        .unwrap_or(Outcome::Pass)
}

struct Finished {
    status: Option<ExitStatus>,
    timed_out: bool,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Wait for `child` (killing it after `timeout`) while draining its output.
fn finish(mut child: Child, timeout: Option<Duration>) -> Finished {
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if timeout.is_some_and(|t| started.elapsed() >= t) {
            timed_out = true;
            let _ = child.kill();
            break child.wait().ok();
        }
        thread::sleep(Duration::from_millis(10));
    };
    // A process the detector started may still hold the pipes. Without a timeout we
    // wait for them as `Command::output` would; with one, only briefly.
    let collect = |(buffer, reader): (Arc<Mutex<Vec<u8>>>, thread::JoinHandle<()>)| {
        if timeout.is_some() {
            let deadline = Instant::now() + Duration::from_secs(2);
            while !reader.is_finished() && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(10));
            }
        } else {
            let _ = reader.join();
        }
        let bytes = match buffer.lock() {
            Ok(b) => b.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        bytes
    };
    Finished {
        status,
        timed_out,
        stdout: collect(stdout),
        stderr: collect(stderr),
    }
}

/// Read `pipe` to its end on a thread, into a shared buffer.
fn drain(
    pipe: Option<impl Read + Send + 'static>,
) -> (Arc<Mutex<Vec<u8>>>, thread::JoinHandle<()>) {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&buffer);
    let handle = thread::spawn(move || {
        let Some(mut pipe) = pipe else { return };
        let mut chunk = [0u8; 8192];
        loop {
            match pipe.read(&mut chunk) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(0) | Err(_) => break,
                Ok(n) => match sink.lock() {
                    Ok(mut b) => b.extend_from_slice(&chunk[..n]),
                    Err(_) => break,
                },
            }
        }
    });
    (buffer, handle)
}

fn program_path(command: &str, loop_dir: &Path) -> PathBuf {
    let path = Path::new(command);
    if command.contains('/') && path.is_relative() {
        loop_dir.join(path)
    } else {
        path.to_path_buf()
    }
}

#[cfg(unix)]
fn describe_abnormal_exit(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(sig) => format!("killed by signal {sig}"),
        None => "ended without an exit code".into(),
    }
}

#[cfg(not(unix))]
fn describe_abnormal_exit(_status: &std::process::ExitStatus) -> String {
    "ended without an exit code".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_order_from_pass_to_error() {
        assert!(Outcome::Pass < Outcome::Fail);
        assert!(Outcome::Fail < Outcome::CannotRun);
        assert!(Outcome::CannotRun < Outcome::Error);
        assert_eq!(Outcome::from_code(Some(3)), Outcome::Error);
        assert_eq!(Outcome::from_code(Some(127)), Outcome::Error);
        assert_eq!(Outcome::from_code(None), Outcome::Error);
        assert_eq!(worst(&[]), Outcome::Pass);
    }

    #[test]
    fn relative_paths_resolve_against_the_loop_dir_and_bare_names_do_not() {
        let dir = Path::new("/loops/a");
        assert_eq!(
            program_path("./check.sh", dir),
            Path::new("/loops/a/./check.sh")
        );
        assert_eq!(
            program_path("scripts/x", dir),
            Path::new("/loops/a/scripts/x")
        );
        assert_eq!(program_path("cargo", dir), Path::new("cargo"));
        assert_eq!(program_path("/bin/true", dir), Path::new("/bin/true"));
    }
}
