//! The audit log file: where it is (`~/.sandgate/audit.jsonl`, or
//! `SANDGATE_AUDIT_LOG`; `SANDGATE_AUDIT=off` turns it off), the settings the
//! records of this process are written with, and appending one line. The
//! records themselves are made by the `audit` module. A failure to write never
//! changes a decision; it is reported once per process on stderr.
//!
//! The log is bounded: when appending a line would take `audit.jsonl` past
//! `audit.max_bytes` (default [`DEFAULT_MAX_BYTES`]), it is renamed to
//! `audit.jsonl.1` (replacing the older one) and a new `audit.jsonl` begins.
//! Several processes append at once (every hook call is one), so writers
//! coordinate through `flock` on `audit.jsonl.lock` beside the log: a writer
//! holds it from opening the log to writing its line (microseconds), and
//! rotates only while holding it. A rename therefore never falls between
//! another writer's open and its write, and each line is one `O_APPEND`
//! write, so no record is torn or lost and each file stays within the size.
//! When the lock cannot be had in time (or at all), the line is still
//! appended, without rotating.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use fs4::FileExt;
use sandgate_policy::load::not_regular;
use sandgate_policy::Settings;

static WARNED: AtomicBool = AtomicBool::new(false);

/// The size at which the log is rotated when neither the policy
/// (`audit.max_bytes`) nor `SANDGATE_AUDIT_MAX_BYTES` says otherwise: 10 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;

/// Environment variable that overrides `audit.max_bytes`.
pub const MAX_BYTES_ENV: &str = "SANDGATE_AUDIT_MAX_BYTES";

/// How long an append waits for the lock file before writing without it.
const LOCK_WAIT: Duration = Duration::from_secs(1);

/// `audit.max_bytes` of the loaded policy (0: not set).
static POLICY_MAX_BYTES: AtomicU64 = AtomicU64::new(0);

/// The working directory and agent session the records of this process are about.
static SCOPE: Mutex<Scope> = Mutex::new(Scope {
    cwd: None,
    session: None,
    tool_call: None,
});

struct Scope {
    cwd: Option<String>,
    session: Option<String>,
    tool_call: Option<String>,
}

/// Take the log's settings from the loaded policy and name the working
/// directory that the following records are about.
pub fn configure(settings: &Settings, cwd: &Path) {
    POLICY_MAX_BYTES.store(settings.audit_max_bytes.unwrap_or(0), Ordering::Relaxed);
    let mut scope = SCOPE.lock().unwrap_or_else(PoisonError::into_inner);
    scope.cwd = Some(cwd.to_string_lossy().into_owned());
}

/// Name the agent session (from a hook payload) the following records belong to.
pub fn set_session(session: Option<&str>) {
    let mut scope = SCOPE.lock().unwrap_or_else(PoisonError::into_inner);
    scope.session = session.map(str::to_string);
}

/// Name the agent's tool call (an ACP `toolCallId`) the following records
/// are about.
pub fn set_tool_call(tool_call: Option<&str>) {
    let mut scope = SCOPE.lock().unwrap_or_else(PoisonError::into_inner);
    scope.tool_call = tool_call.map(str::to_string);
}

/// The working directory, session and tool call named by [`configure`],
/// [`set_session`] and [`set_tool_call`].
pub fn scope() -> (Option<String>, Option<String>, Option<String>) {
    let scope = SCOPE.lock().unwrap_or_else(PoisonError::into_inner);
    (
        scope.cwd.clone(),
        scope.session.clone(),
        scope.tool_call.clone(),
    )
}

/// Where the log is written, or `None` when it is off.
pub fn log_path() -> Option<PathBuf> {
    if std::env::var("SANDGATE_AUDIT").is_ok_and(|v| v.eq_ignore_ascii_case("off")) {
        return None;
    }
    configured_path()
}

/// Where the log is (also when writing it is off): `SANDGATE_AUDIT_LOG`, else
/// `~/.sandgate/audit.jsonl`.
pub fn configured_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SANDGATE_AUDIT_LOG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".sandgate/audit.jsonl"))
}

/// The older half of the log: `audit.jsonl.1` beside `audit.jsonl`.
pub fn rotated_path(path: &Path) -> PathBuf {
    sibling(path, ".1")
}

/// The lock file writers coordinate on: `audit.jsonl.lock`.
pub fn lock_path(path: &Path) -> PathBuf {
    sibling(path, ".lock")
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// The size at which the log rotates: `SANDGATE_AUDIT_MAX_BYTES`, else the
/// policy's `audit.max_bytes`, else [`DEFAULT_MAX_BYTES`]. A bad value of the
/// variable is named in a warning and not used.
pub fn max_bytes() -> u64 {
    if let Some(value) = std::env::var_os(MAX_BYTES_ENV).filter(|v| !v.is_empty()) {
        let text = value.to_string_lossy();
        match text.trim().parse::<u64>() {
            Ok(n) if n >= sandgate_policy::config::MIN_AUDIT_BYTES => return n,
            _ => warn_once(&format!(
                "`{MAX_BYTES_ENV}` must be a whole number of bytes of at least {}, not `{text}`; \
                 it is not used",
                sandgate_policy::config::MIN_AUDIT_BYTES
            )),
        }
    }
    match POLICY_MAX_BYTES.load(Ordering::Relaxed) {
        0 => DEFAULT_MAX_BYTES,
        n => n,
    }
}

/// How a rotation error begins (the record itself was written).
const ROTATE: &str = "the audit record was written, but";

/// Write one record's `line` to the log at `path`; a failure is reported
/// once per process on stderr and changes nothing else.
pub fn write(path: &Path, line: &[u8]) {
    match append(path, line, max_bytes()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::Other && e.to_string().starts_with(ROTATE) => {
            warn_once(&format!("{e}; decisions are not affected"));
        }
        Err(e) => warn_write(path, &e),
    }
}

/// Say once that the log at `path` cannot be written.
pub fn warn_write(path: &Path, e: &std::io::Error) {
    warn_once(&format!(
        "cannot write the audit log `{}`: {e}; decisions are not affected",
        path.display()
    ));
}

fn warn_once(message: &str) {
    if !WARNED.swap(true, Ordering::Relaxed) {
        eprintln!("sandgate: warning: {message}");
    }
}

/// Append one line to the log at `path`, rotating it first when the line
/// would take it past `max` bytes (see the module doc).
pub fn append(path: &Path, line: &[u8], max: u64) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let lock = open_lock(&lock_path(path));
    let locked = lock
        .as_ref()
        .is_some_and(|f| wait_for(|| FileExt::try_lock(f)));
    let mut file = open_log(path)?;
    let size = file.metadata()?.len();
    let mut rotate_error = None;
    // Only under the lock: no other writer is between its open and its write.
    if locked && size > 0 && size.saturating_add(line.len() as u64) > max {
        match std::fs::rename(path, rotated_path(path)) {
            Ok(()) => file = open_log(path)?,
            Err(e) => rotate_error = Some(e),
        }
    }
    // One write of one line: O_APPEND keeps the lines of writers that could
    // not take the lock whole too.
    file.write_all(line)?;
    drop(lock);
    match rotate_error {
        None => Ok(()),
        Some(e) => Err(std::io::Error::other(format!(
            "{ROTATE} `{}` could not be renamed to `{}` (the log grows until it can): {e}",
            path.display(),
            rotated_path(path).display()
        ))),
    }
}

/// Retry `attempt` until it succeeds or [`LOCK_WAIT`] has passed; an error
/// other than "held by another" gives up at once.
fn wait_for(mut attempt: impl FnMut() -> Result<(), fs4::TryLockError>) -> bool {
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        match attempt() {
            Ok(()) => return true,
            Err(fs4::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(_) => return false,
        }
    }
}

/// The lock file, or `None` when it cannot be had (the append goes on without it).
fn open_lock(path: &Path) -> Option<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    let regular = file.metadata().ok()?.file_type().is_file();
    regular.then_some(file)
}

/// Open the log for appending; only a regular file will do.
fn open_log(path: &Path) -> std::io::Result<File> {
    // O_NONBLOCK: a named pipe put where the log goes must not hold a hook
    // call; it is refused on the opened descriptor below.
    let opened = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path);
    let file = match opened {
        Ok(f) => f,
        // A named pipe without a reader cannot be opened for writing: say what it is.
        Err(e) => {
            return Err(std::fs::metadata(path)
                .ok()
                .and_then(|m| not_regular(m.file_type()))
                .unwrap_or(e))
        }
    };
    if let Some(e) = not_regular(file.metadata()?.file_type()) {
        return Err(e);
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Threads append at once, each through its own descriptors as separate
    /// processes would, across one rotation: each line is in one of the two
    /// files exactly once. Without the lock, writers that opened the full log
    /// before it was renamed rename the fresh one over `.1` and lose lines.
    #[test]
    fn appends_across_a_rotation_keep_every_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        const THREADS: usize = 8;
        const EACH: usize = 400;
        let line = |t: usize, i: usize| format!("{{\"subject\": \"line {t:02}-{i:04}\"}}\n");
        let total: u64 = (0..THREADS)
            .flat_map(|t| (0..EACH).map(move |i| line(t, i).len() as u64))
            .sum();
        let max = total * 5 / 8;
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let path = &path;
                s.spawn(move || {
                    for i in 0..EACH {
                        append(path, line(t, i).as_bytes(), max).unwrap();
                    }
                });
            }
        });
        let mut lines: Vec<String> = [rotated_path(&path), path.clone()]
            .iter()
            .flat_map(|f| {
                std::fs::read_to_string(f)
                    .unwrap()
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        lines.sort();
        let mut expected: Vec<String> = (0..THREADS)
            .flat_map(|t| (0..EACH).map(move |i| line(t, i).trim_end().to_string()))
            .collect();
        expected.sort();
        assert_eq!(lines.len(), expected.len());
        assert_eq!(lines, expected);
        assert!(std::fs::metadata(rotated_path(&path)).unwrap().len() <= max);
    }

    #[test]
    fn a_line_larger_than_the_limit_still_goes_into_a_fresh_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        append(&path, b"small\n", 10).unwrap();
        append(&path, b"larger than ten\n", 10).unwrap();
        append(&path, b"again larger than ten\n", 10).unwrap();
        assert_eq!(
            std::fs::read(rotated_path(&path)).unwrap(),
            b"larger than ten\n"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"again larger than ten\n");
    }

    #[test]
    fn a_rotation_that_fails_still_writes_the_record_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::create_dir(rotated_path(&path)).unwrap();
        std::fs::create_dir(rotated_path(&path).join("x")).unwrap();
        append(&path, b"first\n", 8).unwrap();
        let e = append(&path, b"second\n", 8).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the audit record was written, but `"),
            "{e}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"first\nsecond\n");
    }
}
