//! `sandgate run`'s use of the shared seccomp supervisor
//! ([`sandgate_sandbox::supervisor`]): receives each write-class system call
//! of the confined tree, decides it from the run's plan, and continues it,
//! fails it, has it performed on the program's behalf, or asks the human
//! first.
//!
//! Decisions never need a restart: an allowed write that the Landlock floor
//! would refuse is performed by the shared performer
//! ([`sandgate_sandbox::supervisor::perform`]). Asks are queued to one
//! asking thread, so the human sees one question at a time while writes
//! that need no question keep flowing.
//!
//! The loop that receives the notifications
//! ([`sandgate_sandbox::supervisor::serve`]), what a notification is
//! ([`sandgate_sandbox::supervisor::decode`]), how
//! its paths are read from the caller
//! ([`sandgate_sandbox::supervisor::resolve`]), how a call is made for it
//! and how a socket is connected for it
//! ([`sandgate_sandbox::supervisor::connect`]) are the shared supervisor's;
//! what is only the run's is here, one module per job:
//!
//! - [`scope`]: what the run plugs into the one notification loop
//!   ([`sandgate_sandbox::supervisor::serve`]), routing each decoded call;
//! - [`judge`]: deciding a write from its paths and the plan (the lexical
//!   fast path first, then the canonical one);
//! - [`ask`]: the asking thread, the answers it keeps and what each
//!   resolution means;
//! - [`connect`]: `connect()` with the run's reach (the sockets listed in
//!   `sandbox.json`, the program's own listeners), on a thread of its own,
//!   and the report of a refused socket;
//! - [`access`]: whether file modes would let the caller do an allowed
//!   write itself, before it is performed for it, and the paths a write
//!   touches;
//! - [`report`]: what the supervisor reports ([`Event`]) and how it describes
//!   an attempt.

mod access;
mod ask;
mod connect;
mod judge;
mod report;
mod scope;

pub use report::{Attempt, DenyReason, Event, Reporter};

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use sandgate_policy::ask::Resolver;

use super::plan::{RunAnswers, RunPlan, RunPlanExt};
use super::seccomp::{Listener, Notif};
use super::settings::SandboxFile;
use sandgate_sandbox::supervisor::callers::Callers;
pub use sandgate_sandbox::supervisor::lineage::Lineage;
use sandgate_sandbox::supervisor::perform::{Anchors, Op};
use sandgate_sandbox::supervisor::serve;

struct Shared {
    plan: RunPlan,
    answers: Arc<Mutex<RunAnswers>>,
    hinted: Mutex<HashSet<PathBuf>>,
    repositories: Mutex<HashSet<PathBuf>>,
    callers: Callers,
    anchors: Anchors,
    listener: Listener,
    file: SandboxFile,
    reporter: Arc<dyn Reporter>,
    peers: connect::Peers,
    sockets: sandgate_sandbox::supervisor::connect::Sockets,
    lineage: Arc<Lineage>,
    /// With `permissions.network`: what decides the program's TCP connects
    /// to addresses ([`sandgate_sandbox::supervisor::direct`]).
    route: Option<Arc<dyn sandgate_sandbox::supervisor::direct::Route>>,
}

struct Pending {
    notif: Notif,
    op: Op,
    outside: Vec<PathBuf>,
}

/// A running supervisor's answers for the run, from outside it: a path
/// granted here is allowed, with everything beneath, for the rest of the
/// run, as after an "allow" answer kept for the run.
#[derive(Clone)]
pub struct Grants(Arc<Mutex<RunAnswers>>);

impl Grants {
    /// Allows writes beneath `path` for the rest of the run.
    pub fn allow(&self, path: &Path) {
        lock(&self.0).allow.push(path.to_path_buf());
    }
}

/// A running supervisor; stop it with [`Supervisor::stop`].
pub struct Supervisor {
    answers: Arc<Mutex<RunAnswers>>,
    stop: Arc<AtomicBool>,
    loop_thread: Option<JoinHandle<()>>,
    ask_thread: Option<JoinHandle<()>>,
}

impl Supervisor {
    /// Starts supervising `listener` with `plan`. Writes outside the allowed
    /// set are put to `resolver`, one at a time, each with `timeout`; "always"
    /// answers go to `file`. `lineage` tracks the program's `exec`s (made
    /// with [`Lineage::new`] for `program`): a write a grant bound there
    /// covers passes without a question. `route`, with
    /// `permissions.network`, decides the program's TCP connects to
    /// addresses.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        program: u32,
        lineage: Arc<Lineage>,
        listener: Listener,
        plan: RunPlan,
        file: SandboxFile,
        resolver: Box<dyn Resolver>,
        timeout: Duration,
        reporter: Arc<dyn Reporter>,
        route: Option<Arc<dyn sandgate_sandbox::supervisor::direct::Route>>,
    ) -> Supervisor {
        let anchors = Anchors::open(plan.carved().map(Path::to_path_buf).collect::<Vec<_>>());
        let plan_sockets = plan.unix_sockets.clone();
        let answers = Arc::new(Mutex::new(RunAnswers::default()));
        let shared = Arc::new(Shared {
            plan,
            answers: Arc::clone(&answers),
            hinted: Mutex::new(HashSet::new()),
            repositories: Mutex::new(HashSet::new()),
            callers: Callers::default(),
            anchors,
            listener,
            file,
            reporter,
            peers: connect::Peers::new(program),
            sockets: sandgate_sandbox::supervisor::connect::Sockets::open(&plan_sockets),
            lineage,
            route,
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let ask_shared = Arc::clone(&shared);
        let ask_thread =
            thread::spawn(move || ask::ask_loop(&ask_shared, &*resolver, timeout, &rx));
        let loop_stop = Arc::clone(&stop);
        let loop_thread = thread::spawn(move || {
            let mut scope = scope::Run {
                shared: Arc::clone(&shared),
                asks: tx,
            };
            serve::serve(&shared.listener, &mut scope, &loop_stop);
        });
        Supervisor {
            answers,
            stop,
            loop_thread: Some(loop_thread),
            ask_thread: Some(ask_thread),
        }
    }

    /// Its answers for the run, to grant more from outside.
    pub fn grants(&self) -> Grants {
        Grants(Arc::clone(&self.answers))
    }

    /// Stops both threads (pending questions are abandoned; their callers get
    /// `ENOSYS` from the kernel once the listener closes).
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // The loop thread waits in the kernel for the next notification (it
        // sees the flag then, or ends when no process uses the filter); it
        // is not waited for (it ends with the process at the latest).
        drop(self.loop_thread.take());
        // The ask thread ends when the loop thread drops its sender; a question
        // still on screen is not waited for.
        drop(self.ask_thread.take());
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Reports, once per path, that file modes or ownership will refuse a write.
fn hint(shared: &Shared, pid: u32, path: &Path) {
    if lock(&shared.hinted).insert(path.to_path_buf()) {
        shared.reporter.report(&Event::PermissionHint {
            path: path.to_path_buf(),
            process: report::describe(pid),
        });
    }
}

/// Reports, once per path, that `op` of `pid` makes a git repository below
/// a workspace root: a new `.git` (directory, file or link) in a
/// subdirectory. The workspace's own `.git` is held by the protected paths.
fn note_repository(shared: &Shared, pid: u32, op: &Op) {
    let path = match op {
        Op::Mkdir { path, .. } | Op::Symlink { path, .. } => path,
        Op::Open { path, flags, .. } if flags & libc::O_CREAT != 0 => path,
        Op::Rename { to, .. } | Op::Link { to, .. } => to,
        _ => return,
    };
    if path.file_name() != Some(std::ffi::OsStr::new(".git")) {
        return;
    }
    let Some(parent) = path.parent() else {
        return;
    };
    let below = shared
        .plan
        .workspaces
        .iter()
        .any(|ws| parent.starts_with(ws) && parent != ws);
    if !below || std::fs::symlink_metadata(path).is_ok() {
        return;
    }
    if lock(&shared.repositories).insert(path.clone()) {
        shared.reporter.report(&Event::Repository {
            path: path.clone(),
            process: report::describe(pid),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_poisoned_by_a_panicking_thread_still_opens() {
        let mutex = Arc::new(Mutex::new(vec![1]));
        let held = Arc::clone(&mutex);
        let panicked = thread::spawn(move || {
            let _guard = held.lock().unwrap();
            panic!("poison the lock");
        })
        .join(); // not a wait: the thread panics at once
        assert!(panicked.is_err());
        assert!(mutex.is_poisoned());
        lock(&mutex).push(2);
        assert_eq!(*lock(&mutex), [1, 2]);
    }
}
