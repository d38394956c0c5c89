//! The terminal prompt: the [`Resolver`] that asks the person at the terminal.
//!
//! It talks to `/dev/tty`, not to stdin/stdout, so it works while those are
//! pipes. One keypress answers: `1` allow once, `2` allow always, `3` deny
//! once, `4` deny always; Esc and Ctrl-C deny once. An unanswered prompt is a
//! DENY when its timeout runs out, with a visible countdown.
//!
//! Only one prompt is shown at a time: threads of one process take turns on
//! an in-process slot, and processes sharing the terminal take turns on a lock
//! file. A prompt that does not get the slot before its own timeout is a DENY.
//!
//! Without a terminal (no `/dev/tty`, a background job, `--no-ui`,
//! `SANDGATE_NO_UI=1`, a daemon) every ASK is an immediate DENY and one WARN
//! line on stderr names the tool and the subject.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::style::{Attribute, Color, Print, ResetColor, SetAttribute, SetForegroundColor};
use crossterm::terminal::{self, Clear, ClearType};
use crossterm::{cursor, queue};
use fs4::FileExt;
use sandgate_policy::ask::{Answer, Question, Resolution, Resolver};

/// Environment variable that switches the prompt off (`1`, `true`, `yes`).
pub const NO_UI_ENV: &str = "SANDGATE_NO_UI";
/// Environment variable naming the prompt lock file (default: under the runtime dir or `~/.sandgate`).
pub const LOCK_ENV: &str = "SANDGATE_PROMPT_LOCK";

/// How often the countdown is redrawn and the lock file retried.
const TICK: Duration = Duration::from_millis(100);

/// Asks the person at the terminal.
#[derive(Debug, Clone)]
pub struct TerminalPrompt {
    /// Why there is no terminal to ask, when that is known up front.
    headless: Option<String>,
}

impl TerminalPrompt {
    /// A prompt for an interactive command. `no_ui` is the `--no-ui` flag;
    /// `SANDGATE_NO_UI=1` has the same effect.
    pub fn new(no_ui: bool) -> Self {
        let headless = if no_ui {
            Some("--no-ui".to_string())
        } else if env_flag(NO_UI_ENV) {
            Some(format!("{NO_UI_ENV}=1"))
        } else {
            None
        };
        TerminalPrompt { headless }
    }

    /// A prompt that never asks: for daemons and servers, which have no terminal
    /// of their own even when one happens to be attached.
    // Kept for the long-running surfaces (MCP server), which must never prompt.
    #[allow(dead_code)]
    pub fn daemon(reason: impl Into<String>) -> Self {
        TerminalPrompt {
            headless: Some(reason.into()),
        }
    }

    fn ask_terminal(&self, ask: &Question) -> Resolution {
        if let Some(reason) = &self.headless {
            return unavailable(reason.clone());
        }
        let deadline = Instant::now() + ask.timeout;
        let tty = match open_tty() {
            Ok(t) => t,
            Err(reason) => return unavailable(reason),
        };
        let Some(_slot) = Slot::acquire(deadline) else {
            return waited_out(ask.timeout);
        };
        let lock = match lock_file_path(&tty) {
            Some(path) => match acquire_lock_file(&path, deadline) {
                LockOutcome::Held(file) => Some(file),
                LockOutcome::TimedOut => return waited_out(ask.timeout),
                // Without a usable lock file the in-process slot still serialises
                // this process; other processes may then overlap.
                LockOutcome::Unavailable => None,
            },
            None => None,
        };
        let result = run_prompt(&tty, ask, deadline);
        drop(lock);
        match result {
            Ok(resolution) => resolution,
            Err(e) => unavailable(format!("the terminal failed: {e}")),
        }
    }
}

impl Resolver for TerminalPrompt {
    fn resolve(&self, ask: &Question) -> Resolution {
        let resolution = self.ask_terminal(ask);
        if let Resolution::Unavailable { reason } = &resolution {
            eprintln!(
                "sandgate: WARN no terminal to ask ({reason}); denied {} {} `{}`",
                ask.tool,
                ask.kind.as_str(),
                printable(&ask.subject)
            );
        }
        resolution
    }
}

fn unavailable(reason: String) -> Resolution {
    Resolution::Unavailable { reason }
}

fn waited_out(timeout: Duration) -> Resolution {
    Resolution::TimedOut {
        reason: format!(
            "another prompt held the terminal for the whole {} s",
            timeout.as_secs()
        ),
    }
}

/// Whether `SANDGATE_NO_UI` switches questions off.
pub fn no_ui_by_env() -> bool {
    env_flag(NO_UI_ENV)
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| {
        let v = v.trim();
        v == "1" || v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("yes")
    })
}

/// Open the controlling terminal, and make sure this process is in its foreground.
fn open_tty() -> Result<File, String> {
    let tty = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|e| format!("no terminal: /dev/tty cannot be opened: {e}"))?;
    // A background job that touches the terminal is stopped by the kernel
    // (SIGTTIN/SIGTTOU) and would hold the prompt slot while stopped.
    match nix::unistd::tcgetpgrp(&tty) {
        Ok(foreground) if foreground == nix::unistd::getpgrp() => Ok(tty),
        Ok(_) => Err("running in the background of the terminal".into()),
        Err(e) => Err(format!("no terminal: {e}")),
    }
}

/// The in-process prompt slot: one prompt at a time across threads.
struct Slot;

static SLOT_BUSY: Mutex<bool> = Mutex::new(false);
static SLOT_FREED: Condvar = Condvar::new();

struct SlotGuard;

impl Slot {
    /// Wait for the slot until `deadline`; `None` when it never came free.
    fn acquire(deadline: Instant) -> Option<SlotGuard> {
        let mut busy = lock_ignoring_poison(&SLOT_BUSY);
        while *busy {
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            busy = match SLOT_FREED.wait_timeout(busy, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        *busy = true;
        Some(SlotGuard)
    }
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        *lock_ignoring_poison(&SLOT_BUSY) = false;
        SLOT_FREED.notify_one();
    }
}

/// The slot flag stays meaningful even if a prompting thread panicked.
fn lock_ignoring_poison(m: &Mutex<bool>) -> MutexGuard<'_, bool> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The lock file shared by every sandgate process on this terminal.
fn lock_file_path(tty: &File) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(LOCK_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    // In the per-login runtime directory (a tmpfs, emptied at logout) each
    // terminal gets its own lock: processes share a terminal when they share
    // its session. Under `~/.sandgate`, which persists, one lock serves all
    // terminals of the user rather than leaving a file per session behind.
    if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").filter(|p| !p.is_empty()) {
        let dir = PathBuf::from(run);
        if dir.is_dir() {
            let name = match nix::sys::termios::tcgetsid(tty) {
                Ok(sid) => format!("prompt-{}.lock", sid.as_raw()),
                Err(_) => "prompt.lock".to_string(),
            };
            return Some(dir.join("sandgate").join(name));
        }
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".sandgate").join("prompt.lock"))
}

enum LockOutcome {
    Held(File),
    TimedOut,
    Unavailable,
}

fn acquire_lock_file(path: &Path, deadline: Instant) -> LockOutcome {
    if let Some(dir) = path.parent() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        if builder.create(dir).is_err() {
            return LockOutcome::Unavailable;
        }
    }
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let Ok(file) = options.open(path) else {
        return LockOutcome::Unavailable;
    };
    loop {
        match FileExt::try_lock(&file) {
            Ok(()) => return LockOutcome::Held(file),
            Err(fs4::TryLockError::WouldBlock) => {}
            Err(fs4::TryLockError::Error(_)) => return LockOutcome::Unavailable,
        }
        let now = Instant::now();
        if now >= deadline {
            return LockOutcome::TimedOut;
        }
        std::thread::sleep(TICK.min(deadline - now));
    }
}

/// Restores the terminal mode however the prompt ends.
struct RawMode;

impl RawMode {
    fn enable() -> io::Result<RawMode> {
        terminal::enable_raw_mode()?;
        Ok(RawMode)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = terminal::disable_raw_mode();
    }
}

/// Signals that end sandgate while a prompt is open. They are held back
/// until the terminal is restored, then take their default effect.
const ENDING_SIGNALS: [i32; 4] = [
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGQUIT,
];

/// Notes ending signals while registered; see [`ENDING_SIGNALS`].
struct HeldSignals {
    flags: Vec<(i32, Arc<AtomicBool>, signal_hook::SigId)>,
}

impl HeldSignals {
    fn hold() -> HeldSignals {
        let flags = ENDING_SIGNALS
            .iter()
            .filter_map(|&sig| {
                let flag = Arc::new(AtomicBool::new(false));
                signal_hook::flag::register(sig, flag.clone())
                    .ok()
                    .map(|id| (sig, flag, id))
            })
            .collect();
        HeldSignals { flags }
    }

    fn arrived(&self) -> bool {
        self.flags.iter().any(|(_, f, _)| f.load(Ordering::Relaxed))
    }

    /// Stop holding; a signal that arrived meanwhile now ends the process as it would have.
    fn release(self) {
        let mut arrived = None;
        for (sig, flag, id) in self.flags {
            signal_hook::low_level::unregister(id);
            if arrived.is_none() && flag.load(Ordering::Relaxed) {
                arrived = Some(sig);
            }
        }
        if let Some(sig) = arrived {
            let _ = signal_hook::low_level::emulate_default_handler(sig);
        }
    }
}

fn run_prompt(tty: &File, ask: &Question, deadline: Instant) -> io::Result<Resolution> {
    let mut out = tty;
    let signals = HeldSignals::hold();
    let result = prompt_loop(&mut out, ask, deadline, &signals);
    // The terminal is restored by now (the raw-mode guard lives in the loop).
    signals.release();
    result
}

fn prompt_loop(
    out: &mut &File,
    ask: &Question,
    deadline: Instant,
    signals: &HeldSignals,
) -> io::Result<Resolution> {
    draw_question(out, ask)?;
    let raw = RawMode::enable()?;
    // Keys typed before the question was shown must not answer it.
    while event::poll(Duration::ZERO)? {
        let _ = event::read()?;
    }
    let mut shown_secs = None;
    let resolution = loop {
        let now = Instant::now();
        if signals.arrived() {
            break Resolution::Unavailable {
                reason: "sandgate was stopped by a signal".into(),
            };
        }
        if now >= deadline {
            break Resolution::TimedOut {
                reason: format!("no answer within {} s", ask.timeout.as_secs()),
            };
        }
        let left = deadline - now;
        let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
        if shown_secs != Some(secs) {
            draw_menu(out, secs)?;
            shown_secs = Some(secs);
        }
        if event::poll(TICK.min(left))? {
            if let Event::Key(key) = event::read()? {
                if let Some(answer) = answer_for(key) {
                    break Resolution::Answered(answer);
                }
            }
        }
    };
    drop(raw);
    draw_outcome(out, &resolution)?;
    Ok(resolution)
}

/// The answer a key gives, or `None` for a key that is not an answer.
pub fn answer_for(key: KeyEvent) -> Option<Answer> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    match key.code {
        KeyCode::Char('1') => Some(Answer::AllowOnce),
        KeyCode::Char('2') => Some(Answer::AllowAlways),
        KeyCode::Char('3') => Some(Answer::DenyOnce),
        KeyCode::Char('4') => Some(Answer::DenyAlways),
        KeyCode::Esc => Some(Answer::DenyOnce),
        KeyCode::Char('c' | 'd') if key.modifiers.contains(KeyModifiers::CONTROL) => {
            Some(Answer::DenyOnce)
        }
        _ => None,
    }
}

fn draw_question(out: &mut impl Write, ask: &Question) -> io::Result<()> {
    queue!(
        out,
        Print("\r\n"),
        SetForegroundColor(Color::Yellow),
        SetAttribute(Attribute::Bold),
        Print("sandgate: permission required: "),
        Print(printable(&ask.tool)),
        SetAttribute(Attribute::Reset),
        ResetColor,
        Print("\r\n"),
        Print(format!(
            "  {}: {}\r\n",
            ask.kind.as_str(),
            printable(&ask.subject)
        )),
        Print(format!("  why: {}\r\n", printable(&ask.reason))),
    )?;
    out.flush()
}

fn draw_menu(out: &mut impl Write, secs_left: u64) -> io::Result<()> {
    let menu = Answer::ALL
        .iter()
        .enumerate()
        .map(|(i, a)| format!("[{}] {}", i + 1, a.label()))
        .collect::<Vec<_>>()
        .join("  ");
    queue!(
        out,
        cursor::MoveToColumn(0),
        Clear(ClearType::UntilNewLine),
        Print("  "),
        Print(menu),
        SetAttribute(Attribute::Dim),
        Print(format!("  ({secs_left} s, Esc = deny once) ")),
        SetAttribute(Attribute::Reset),
    )?;
    out.flush()
}

fn draw_outcome(out: &mut impl Write, resolution: &Resolution) -> io::Result<()> {
    let text = match resolution {
        Resolution::Answered(a) => format!("→ {}", a.label()),
        Resolution::TimedOut { reason } => format!("→ deny ({reason})"),
        Resolution::Unavailable { reason } | Resolution::Declined { reason } => {
            format!("→ deny ({reason})")
        }
    };
    queue!(
        out,
        cursor::MoveToColumn(0),
        Clear(ClearType::UntilNewLine),
        Print("  "),
        Print(text),
        Print("\r\n"),
    )?;
    out.flush()
}

/// `text` with control characters escaped, so a subject cannot move the
/// cursor, recolour or hide parts of the prompt.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn keys_map_to_answers() {
        let none = KeyModifiers::NONE;
        let table = [
            (key(KeyCode::Char('1'), none), Some(Answer::AllowOnce)),
            (key(KeyCode::Char('2'), none), Some(Answer::AllowAlways)),
            (key(KeyCode::Char('3'), none), Some(Answer::DenyOnce)),
            (key(KeyCode::Char('4'), none), Some(Answer::DenyAlways)),
            (key(KeyCode::Esc, none), Some(Answer::DenyOnce)),
            (
                key(KeyCode::Char('c'), KeyModifiers::CONTROL),
                Some(Answer::DenyOnce),
            ),
            (key(KeyCode::Char('c'), none), None),
            (key(KeyCode::Char('5'), none), None),
            (key(KeyCode::Enter, none), None),
            (key(KeyCode::Char('y'), none), None),
        ];
        for (k, want) in table {
            assert_eq!(answer_for(k), want, "{k:?}");
        }
    }

    #[test]
    fn subjects_cannot_inject_terminal_sequences() {
        assert_eq!(
            printable("rm -rf ~\u{1b}[2K\rls\n"),
            "rm -rf ~\\u{1b}[2K\\rls\\n"
        );
        assert_eq!(printable("ünï cödé"), "ünï cödé");
    }

    #[test]
    fn headless_prompts_deny_at_once() {
        let ask = Question {
            tool: "exec_run".into(),
            kind: sandgate_policy::ask::SubjectKind::Command,
            subject: "make".into(),
            reason: "no allow rule matched the command".into(),
            timeout: Duration::from_secs(25),
        };
        let started = Instant::now();
        let r = TerminalPrompt::new(true).resolve(&ask);
        assert_eq!(
            r,
            Resolution::Unavailable {
                reason: "--no-ui".into()
            }
        );
        let r = TerminalPrompt::daemon("mcp server").resolve(&ask);
        assert_eq!(r.verdict(), sandgate_policy::Verdict::Deny);
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn the_slot_is_taken_in_turn_and_times_out() {
        let first = Slot::acquire(Instant::now() + Duration::from_secs(1)).expect("free slot");
        let started = Instant::now();
        assert!(Slot::acquire(Instant::now() + Duration::from_millis(200)).is_none());
        assert!(started.elapsed() >= Duration::from_millis(200));
        let waiter =
            std::thread::spawn(|| Slot::acquire(Instant::now() + Duration::from_secs(5)).is_some());
        std::thread::sleep(Duration::from_millis(100));
        drop(first);
        assert!(waiter.join().unwrap()); // not a wait: the thread gives up by its own 5 s deadline
    }

    #[test]
    fn the_lock_file_is_taken_in_turn() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("run/prompt.lock");
        let held = match acquire_lock_file(&path, Instant::now() + Duration::from_secs(1)) {
            LockOutcome::Held(f) => f,
            _ => panic!("the lock must be free"),
        };
        let started = Instant::now();
        assert!(matches!(
            acquire_lock_file(&path, Instant::now() + Duration::from_millis(300)),
            LockOutcome::TimedOut
        ));
        assert!(started.elapsed() >= Duration::from_millis(300));
        drop(held);
        assert!(matches!(
            acquire_lock_file(&path, Instant::now() + Duration::from_millis(300)),
            LockOutcome::Held(_)
        ));
    }
}
