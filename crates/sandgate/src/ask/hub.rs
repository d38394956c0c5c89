//! The [`Resolver`] of `sandgate run`: holds the open questions, serves them
//! on the run's questions socket, and puts each one where the person sees it
//! whole (see the parent module for the order of the routes).
//!
//! The clock is the hub's: [`Questions::resolve`] waits for an answer on a
//! condition variable until the question's deadline, whatever any window
//! showing it does, so a question ends on time even when no window can
//! show it or one stops drawing.

use std::collections::{BTreeMap, HashSet};
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
use nix::sys::termios::{self, SetArg};
use nix::unistd::{getpgrp, tcgetpgrp, tcsetpgrp, Pid};
use sandgate_policy::ask::{Answer, Question, Resolution, Resolver};

use super::wire::{self, Open, Reply, Request};
use crate::prompt::printable;

/// A `sandgate answer` window counts as open this long after it last looked.
const WATCH_FRESH: Duration = Duration::from_millis(1500);
/// How long a window showing a closed question may take to go away.
const WINDOW_GRACE: Duration = Duration::from_secs(3);
/// A tmux popup that closes this soon with a failure could not be shown.
const POPUP_FAILS_WITHIN: Duration = Duration::from_secs(2);

/// The routes this run can use, found when it starts.
#[derive(Debug, Clone, Default)]
pub struct Routes {
    /// `tmux` and the pane of the person's tmux (`$TMUX_PANE`), when inside tmux.
    pub tmux: Option<(PathBuf, String)>,
    /// Whether the run has a terminal and may hold the program to ask there.
    pub terminal: bool,
    /// `notify-send`, when a desktop session is there to show it.
    pub notify: Option<PathBuf>,
}

impl Routes {
    /// The routes of this environment; `terminal` says whether the run has a terminal.
    pub fn detect(terminal: bool) -> Routes {
        let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let tmux = match (env("TMUX"), env("TMUX_PANE"), find_program("tmux")) {
            (Some(_), Some(pane), Some(tmux)) => Some((tmux, pane.to_string_lossy().into_owned())),
            _ => None,
        };
        let desktop = env("DISPLAY").is_some()
            || env("WAYLAND_DISPLAY").is_some()
            || env("DBUS_SESSION_BUS_ADDRESS").is_some();
        let notify = find_program("notify-send").filter(|_| desktop);
        Routes {
            tmux,
            terminal,
            notify,
        }
    }
}

fn find_program(name: &str) -> Option<PathBuf> {
    crate::program::find(std::ffi::OsStr::new(name))
}

struct Entry {
    question: Question,
    deadline: Instant,
    answer: Option<Answer>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    open: BTreeMap<u64, Entry>,
    watched_at: Option<Instant>,
    /// The run is ending: no new question, and every open one is closed.
    closing: bool,
}

struct Inner {
    state: Mutex<State>,
    changed: Condvar,
    socket: PathBuf,
    run_pid: u32,
    program: String,
    exe: PathBuf,
    routes: Routes,
    /// Windows this run started that may connect although they are its descendants.
    helpers: Mutex<HashSet<u32>>,
    /// Threads showing a question; waited for when the run ends.
    windows: Mutex<Vec<JoinHandle<()>>>,
    /// How many windows are up (each gives the terminal back, and continues
    /// the program, when it goes).
    showing: AtomicUsize,
}

/// The open questions of one run, and the resolver that asks them.
#[derive(Clone)]
pub struct Questions {
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Questions {
    /// Listens on the questions socket of this run under `home`.
    pub fn start(home: &Path, program: &str, routes: Routes) -> Result<Questions, String> {
        let run_pid = std::process::id();
        let socket = wire::socket_path(home, run_pid);
        if socket.as_os_str().len() > wire::SOCKET_PATH_MAX {
            return Err(format!(
                "the questions socket `{}` is longer than a socket address holds",
                socket.display()
            ));
        }
        let dir = wire::runs_dir(home);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("`{}`: {e}", dir.display()))?;
        let _ = std::fs::remove_file(&socket);
        let listener =
            UnixListener::bind(&socket).map_err(|e| format!("`{}`: {e}", socket.display()))?;
        let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
        let inner = Arc::new(Inner {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            socket,
            run_pid,
            program: program.to_string(),
            exe,
            routes,
            helpers: Mutex::new(HashSet::new()),
            windows: Mutex::new(Vec::new()),
            showing: AtomicUsize::new(0),
        });
        let serving = Arc::clone(&inner);
        thread::Builder::new()
            .name("sandgate-questions".into())
            .spawn(move || serve(&serving, &listener))
            .map_err(|e| e.to_string())?;
        Ok(Questions { inner })
    }

    /// Ends every open question unanswered, waits (briefly) for the windows
    /// showing them to give the terminal back, and removes the socket.
    /// Whether a question was open.
    pub fn close(&self) -> bool {
        let was_open = {
            let mut state = lock(&self.inner.state);
            state.closing = true;
            let was_open = !state.open.is_empty();
            state.open.clear();
            was_open
        };
        self.inner.changed.notify_all();
        let until = Instant::now() + WINDOW_GRACE;
        while self.inner.showing.load(Ordering::SeqCst) > 0 && Instant::now() < until {
            thread::sleep(Duration::from_millis(20));
        }
        lock(&self.inner.windows).clear();
        let _ = std::fs::remove_file(&self.inner.socket);
        was_open
    }
}

impl Resolver for Questions {
    fn resolve(&self, question: &Question) -> Resolution {
        let inner = &self.inner;
        let deadline = Instant::now() + question.timeout;
        let (id, watched) = {
            let mut state = lock(&inner.state);
            if state.closing {
                return Resolution::Unavailable {
                    reason: "the run is ending".into(),
                };
            }
            state.next_id += 1;
            let id = state.next_id;
            state.open.insert(
                id,
                Entry {
                    question: question.clone(),
                    deadline,
                    answer: None,
                },
            );
            let watched = state
                .watched_at
                .is_some_and(|at| at.elapsed() < WATCH_FRESH);
            (id, watched)
        };
        inner.changed.notify_all();
        notify_desktop(inner, question);
        let window = if watched {
            None
        } else {
            let shown = Arc::clone(inner);
            inner.showing.fetch_add(1, Ordering::SeqCst);
            let started = thread::Builder::new()
                .name("sandgate-question-window".into())
                .spawn(move || {
                    show(&shown, id);
                    shown.showing.fetch_sub(1, Ordering::SeqCst);
                })
                .ok();
            if started.is_none() {
                inner.showing.fetch_sub(1, Ordering::SeqCst);
            }
            started
        };
        let titled = window.is_none() && set_title(question);
        let resolution = wait_for_answer(inner, id, deadline, question);
        inner.changed.notify_all();
        if titled {
            restore_title();
        }
        if let Some(window) = window {
            // The window sees the question closed and goes; the program
            // goes on once the terminal is its own again.
            let until = Instant::now() + WINDOW_GRACE;
            while !window.is_finished() && Instant::now() < until {
                thread::sleep(Duration::from_millis(10));
            }
            if !window.is_finished() {
                lock(&inner.windows).push(window);
            }
        }
        resolution
    }
}

fn wait_for_answer(inner: &Inner, id: u64, deadline: Instant, question: &Question) -> Resolution {
    let mut state = lock(&inner.state);
    loop {
        match state.open.get(&id) {
            None => {
                return Resolution::Unavailable {
                    reason: "the run ended while the question was open".into(),
                }
            }
            Some(Entry {
                answer: Some(answer),
                ..
            }) => {
                let answer = *answer;
                state.open.remove(&id);
                return Resolution::Answered(answer);
            }
            Some(_) => {}
        }
        let now = Instant::now();
        if now >= deadline {
            state.open.remove(&id);
            return Resolution::TimedOut {
                reason: format!("no answer within {} s", question.timeout.as_secs()),
            };
        }
        state = match inner.changed.wait_timeout(state, deadline - now) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        };
    }
}

fn is_open(inner: &Inner, id: u64) -> bool {
    lock(&inner.state)
        .open
        .get(&id)
        .is_some_and(|e| e.answer.is_none())
}

/// Shows question `id` in a window: a tmux popup, else the run's own
/// terminal with the program held.
fn show(inner: &Inner, id: u64) {
    if let Some((tmux, pane)) = &inner.routes.tmux {
        // Shown again if the popup is closed while the question is open.
        loop {
            let started = Instant::now();
            let ok = popup(inner, tmux, pane, id);
            if !is_open(inner, id) {
                return;
            }
            if !ok && started.elapsed() < POPUP_FAILS_WITHIN {
                break;
            }
        }
    }
    if inner.routes.terminal && is_open(inner, id) {
        hold_and_ask(inner, id);
    }
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// `tmux display-popup` running `sandgate question`; whether it ran.
fn popup(inner: &Inner, tmux: &Path, pane: &str, id: u64) -> bool {
    let command = format!(
        "{} question --socket {} --id {id}",
        quote(&inner.exe.to_string_lossy()),
        quote(&inner.socket.to_string_lossy())
    );
    Command::new(tmux)
        .args(["display-popup", "-E", "-w", "90%", "-h", "18", "-t", pane])
        .args(["-T", " sandgate ", &command])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Asks on the run's own terminal: a `sandgate question` in a process group
/// of its own takes the terminal's foreground (the program, now in the
/// background, stops when it writes to it or reads from it); afterwards
/// the terminal is the program's again, in its own modes and with its
/// screen as it left it (or empty, for a program that redraws everything
/// when continued), and the program is continued and told to redraw.
fn hold_and_ask(inner: &Inner, id: u64) {
    let Ok(tty) = OpenOptions::new().read(true).write(true).open("/dev/tty") else {
        return;
    };
    let program_group = match tcgetpgrp(&tty) {
        Ok(group) if group == getpgrp() => group,
        // Someone else holds the terminal: the question waits for `sandgate answer`.
        _ => return,
    };
    let saved = termios::tcgetattr(&tty).ok();
    let held = stop_group(program_group);
    let child = {
        let mut helpers = lock(&inner.helpers);
        let child = Command::new(&inner.exe)
            .arg("question")
            .arg("--socket")
            .arg(&inner.socket)
            .args(["--id", &id.to_string()])
            .args(["--foreground", &program_group.as_raw().to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        if let Ok(child) = &child {
            helpers.insert(child.id());
        }
        child
    };
    if let Ok(mut child) = child {
        wait_child(&mut child, inner, id);
        lock(&inner.helpers).remove(&child.id());
    }
    // Whatever became of the window: the terminal goes back to the program.
    let _ = tcsetpgrp(&tty, program_group);
    if let Some(saved) = &saved {
        let _ = termios::tcsetattr(&tty, SetArg::TCSANOW, saved);
    }
    // A program that catches SIGCONT (Claude Code) forgets what its screen
    // held when it is continued and draws everything again from the cursor,
    // over what the restored screen shows: it gets an empty screen with the
    // cursor at the top. Others get their screen back as they left it.
    if held.iter().any(|pid| catches_sigcont(*pid)) {
        let _ = (&tty).write_all(b"\x1b[H\x1b[2J");
        let _ = (&tty).flush();
    }
    for pid in held {
        let _ = kill(pid, Signal::SIGCONT);
    }
    let _ = killpg(program_group, Signal::SIGCONT);
    let _ = killpg(program_group, Signal::SIGWINCH);
}

/// Whether process `pid` has a handler for `SIGCONT` (`SigCgt` in its
/// `/proc` status): a full-screen program that redraws itself after a stop.
fn catches_sigcont(pid: Pid) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (Signal::SIGCONT as i32 - 1)) != 0)
}

/// Stops every process of `group` below this one (`SIGSTOP`: the program's,
/// not the shell's that started sandgate, which a terminal multiplexer
/// would continue at once), until none is left running (a process may fork
/// while the group is stopped), and returns them. A call one of them makes
/// that waits for the supervisor stays waiting (the filter's waits are
/// killable only).
fn stop_group(group: Pid) -> Vec<Pid> {
    let me = std::process::id();
    let mut stopped = Vec::new();
    for _ in 0..20 {
        let running: Vec<Pid> = members(group)
            .into_iter()
            .filter(|(pid, state)| {
                *pid != me && !matches!(state, 'T' | 't' | 'Z' | 'X') && descends_from(*pid, me)
            })
            .filter_map(|(pid, _)| i32::try_from(pid).ok().map(Pid::from_raw))
            .filter(|pid| !stopped.contains(pid))
            .collect();
        if running.is_empty() {
            break;
        }
        for pid in running {
            if kill(pid, Signal::SIGSTOP).is_ok() {
                stopped.push(pid);
            }
        }
        // The stops take effect asynchronously; look again once they have.
        thread::sleep(Duration::from_millis(5));
    }
    stopped
}

/// The processes of process group `group`, with their states.
fn members(group: Pid) -> Vec<(u32, char)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // `pid (comm) state ppid pgrp …`; comm may hold anything.
            let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
            let state = fields.next()?.chars().next()?;
            let pgrp: i32 = fields.nth(1)?.parse().ok()?;
            (pgrp == group.as_raw()).then_some((pid, state))
        })
        .collect()
}

/// Waits for a window; one that outlives its question by the grace time is killed.
fn wait_child(child: &mut Child, inner: &Inner, id: u64) {
    let mut closed_at = None;
    loop {
        // An error is a child already collected by the run's reaper of orphans.
        if !matches!(child.try_wait(), Ok(None)) {
            return;
        }
        if is_open(inner, id) {
            closed_at = None;
        } else {
            let at = *closed_at.get_or_insert_with(Instant::now);
            if at.elapsed() > WINDOW_GRACE {
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// A desktop notification, where a desktop session is there to show it.
fn notify_desktop(inner: &Inner, question: &Question) {
    let Some(notify) = &inner.routes.notify else {
        return;
    };
    let body = format!(
        "{} {}\nanswer it in the popup or with `sandgate answer`",
        question.tool,
        printable(&question.subject)
    );
    if let Ok(mut child) = Command::new(notify)
        .args(["-a", "sandgate", "sandgate: a question waits"])
        .arg(body)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        thread::spawn(move || child.wait());
    }
}

/// Announces a question that no window shows here in the terminal's title,
/// which full-screen programs leave alone. Whether it was set.
fn set_title(question: &Question) -> bool {
    let Ok(mut tty) = OpenOptions::new().write(true).open("/dev/tty") else {
        return false;
    };
    let title = format!(
        "sandgate: a question waits ({} {}) - sandgate answer",
        question.tool,
        printable(&question.subject)
    );
    let title: String = title.chars().take(120).collect();
    // Push the title, set it; popped when the question closes.
    write!(tty, "\x1b[22;0t\x1b]2;{title}\x07").is_ok()
}

fn restore_title() {
    if let Ok(mut tty) = OpenOptions::new().write(true).open("/dev/tty") {
        let _ = write!(tty, "\x1b[23;0t");
    }
}

/// Accepts clients until the process ends.
fn serve(inner: &Arc<Inner>, listener: &UnixListener) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let inner = Arc::clone(inner);
        thread::spawn(move || {
            if let Err(why) = admit(&inner, &stream) {
                let reply = Reply {
                    ok: false,
                    error: Some(why),
                    ..Reply::default()
                };
                respond(&stream, &reply);
                return;
            }
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut line = String::new();
            if BufReader::new(&stream).read_line(&mut line).is_err() {
                return;
            }
            let reply = match serde_json::from_str::<Request>(&line) {
                Ok(request) => handle(&inner, request),
                Err(e) => Reply {
                    ok: false,
                    error: Some(format!("bad request: {e}")),
                    ..Reply::default()
                },
            };
            respond(&stream, &reply);
        });
    }
}

fn respond(stream: &UnixStream, reply: &Reply) {
    if let Ok(mut text) = serde_json::to_string(reply) {
        text.push('\n');
        let _ = (&*stream).write_all(text.as_bytes());
    }
}

/// Refuses a peer of another user, or one of the run's own process tree
/// (but for the windows it started itself).
fn admit(inner: &Inner, stream: &UnixStream) -> Result<(), String> {
    let creds = getsockopt(stream, PeerCredentials).map_err(|e| format!("peer: {e}"))?;
    if creds.uid() != nix::unistd::geteuid().as_raw() {
        return Err("refused: the peer runs as another user".into());
    }
    let pid = u32::try_from(creds.pid()).map_err(|_| "refused: no peer process".to_string())?;
    let helpers = lock(&inner.helpers);
    if helpers.contains(&pid) {
        return Ok(());
    }
    if descends_from(pid, inner.run_pid) {
        return Err("refused: the program of a run cannot answer its own questions".into());
    }
    Ok(())
}

/// Whether `pid` is `ancestor` or below it. An unknown parent counts as below:
/// refusing is the safe side.
fn descends_from(pid: u32, ancestor: u32) -> bool {
    let mut current = pid;
    for _ in 0..4096 {
        if current == ancestor {
            return true;
        }
        if current <= 1 {
            return false;
        }
        match parent_of(current) {
            Some(parent) => current = parent,
            None => return true,
        }
    }
    true
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: the fields follow the last `)`.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn handle(inner: &Inner, request: Request) -> Reply {
    let mut reply = Reply {
        ok: true,
        pid: inner.run_pid,
        program: inner.program.clone(),
        ..Reply::default()
    };
    match request {
        Request::List { watching } => {
            let mut state = lock(&inner.state);
            if watching {
                state.watched_at = Some(Instant::now());
            }
            let now = Instant::now();
            reply.questions = state
                .open
                .iter()
                .filter(|(_, e)| e.answer.is_none() && e.deadline > now)
                .map(|(id, e)| Open {
                    id: *id,
                    tool: e.question.tool.clone(),
                    kind: e.question.kind.as_str().to_string(),
                    subject: e.question.subject.clone(),
                    reason: e.question.reason.clone(),
                    left_ms: u64::try_from((e.deadline - now).as_millis()).unwrap_or(u64::MAX),
                })
                .collect();
        }
        Request::Answer { id, answer } => {
            let Some(answer) = wire::parse_answer(&answer) else {
                reply.ok = false;
                reply.error = Some(format!("unknown answer `{answer}`"));
                return reply;
            };
            let mut state = lock(&inner.state);
            match state.open.get_mut(&id) {
                Some(entry) if entry.answer.is_none() && entry.deadline > Instant::now() => {
                    entry.answer = Some(answer);
                    drop(state);
                    inner.changed.notify_all();
                }
                _ => {
                    reply.ok = false;
                    reply.error = Some(format!("question {id} is no longer open"));
                }
            }
        }
    }
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_descends_from_itself_and_from_its_parent_not_from_a_stranger() {
        let me = std::process::id();
        assert!(descends_from(me, me));
        let parent = parent_of(me).expect("a parent");
        assert!(descends_from(me, parent));
        assert!(!descends_from(parent, me));
        // An unknown process counts as the run's own.
        assert!(descends_from(u32::MAX - 1, me));
    }
}
