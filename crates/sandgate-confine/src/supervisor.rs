//! The supervisor: receives each write-class system call of the confined
//! tree, decides it from the plan, and continues it, fails it, performs it on
//! the program's behalf, or asks the human first.
//!
//! Decisions never need a restart: an allowed write that the Landlock floor
//! would refuse is performed by the supervisor itself (see [`super::onbehalf`]).
//! Asks are queued to one asking thread, so the human sees one question at a
//! time while writes that need no question keep flowing.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use sandgate_policy::ask::{Question, Resolution, Resolver, SubjectKind};
use sandgate_policy::persist::Effect;
use sandgate_policy::{Decision, Verdict};

use super::callerpath;
use super::callers::{Callers, Creds};
use super::metadata;
use super::onbehalf::{perform, try_perform, Anchors, Op};
use super::plan::{normalize, RunAnswers, RunPlan, Standing};
use super::seccomp::{read_cstring, read_memory, Listener, Notif, Ready, WRITE_OPEN_FLAGS};
use super::settings::{ListKind, SandboxFile};

/// A write-class call the supervisor decided: who tried to do what, where.
#[derive(Debug, Clone)]
pub struct Attempt {
    /// The process (thread) id.
    pub pid: u32,
    /// The process name and command line.
    pub process: String,
    /// What it tries to do (`write`, `delete`, `rename`, …).
    pub operation: String,
    /// The path it acts on (canonical).
    pub path: PathBuf,
}

impl Attempt {
    /// The question for the human about this attempt, which is outside the
    /// allowed set (the one ask vocabulary of [`sandgate_policy::ask`]).
    pub fn question(&self, timeout: Duration) -> Question {
        Question {
            tool: format!("run ({})", self.operation),
            kind: SubjectKind::Path,
            subject: self.path.to_string_lossy().into_owned(),
            reason: format!(
                "{} [pid {}] tries to {} outside the allowed set; it waits for your answer",
                self.process, self.pid, self.operation
            ),
            timeout,
        }
    }
}

/// Why a write was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenyReason {
    /// The path is beneath the built-in floor (`~/.ssh`, …).
    Floor,
    /// The path is protected (`.sandgate/`, strict `.git`, `~/.sandgate`).
    Protected,
    /// The path is in the `deny` list.
    DenyList,
    /// The human rejected it.
    Rejected,
    /// The question timed out.
    TimedOut,
    /// There was no one to ask.
    NoTerminal,
    /// A hard link to a file outside the allowed set (it fails with `EXDEV`,
    /// as across file systems, without a question).
    LinkFromOutside,
}

/// What the supervisor reports to the caller (for the terminal and the audit log).
#[derive(Debug, Clone)]
pub enum Event {
    /// A write was refused.
    Denied {
        /// Who and what.
        attempt: Attempt,
        /// Why.
        reason: DenyReason,
    },
    /// A write outside the allowed set was allowed by the human.
    Allowed {
        /// Who and what.
        attempt: Attempt,
        /// Whether it was "allow always".
        always: bool,
    },
    /// A write inside the allowed set will fail from file modes or ownership
    /// (not a sandbox denial); reported once per path.
    PermissionHint {
        /// The path.
        path: PathBuf,
        /// The process.
        process: String,
    },
    /// Something went wrong in the supervisor (e.g. `sandbox.json` not writable).
    Error(String),
}

impl DenyReason {
    /// Why, in words, for the write of `path`.
    pub fn describe(self, path: &Path) -> String {
        match self {
            DenyReason::Floor => format!(
                "`{}` is beneath the built-in floor ({}): \
                 no answer and no sandbox.json entry can allow it",
                path.display(),
                sandgate_policy::floor::FLOOR
                    .iter()
                    .map(|entry| format!("`~/{}`", entry.dir))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            DenyReason::Protected => format!(
                "`{}` is read-only to the confined program (a protected path: sandgate's own files, git's hooks and config, shell start-up files, agent and editor settings)",
                path.display()
            ),
            DenyReason::DenyList => "it is in the deny list of sandbox.json".into(),
            DenyReason::Rejected => "rejected".into(),
            DenyReason::TimedOut => "no answer in time".into(),
            DenyReason::NoTerminal => "no terminal to ask (headless or --no-ui)".into(),
            DenyReason::LinkFromOutside => {
                "a hard link would give the workspace a name for a file outside; it fails as across file systems, so copy it instead".into()
            }
        }
    }
}

impl Event {
    /// The decision the supervisor made, for the audit log: a refused or an
    /// allowed write (`None` for hints and errors).
    pub fn decision(&self) -> Option<Decision> {
        let (verdict, attempt, why) = match self {
            Event::Denied { attempt, reason } => {
                (Verdict::Deny, attempt, reason.describe(&attempt.path))
            }
            Event::Allowed { attempt, always } => {
                let how = if *always {
                    "allowed always"
                } else {
                    "allowed once"
                };
                (Verdict::Allow, attempt, how.to_string())
            }
            Event::PermissionHint { .. } | Event::Error(_) => return None,
        };
        Some(Decision::new(
            verdict,
            attempt.path.to_string_lossy(),
            format!(
                "sandgate run: {} by {}: {why}",
                attempt.operation, attempt.process
            ),
        ))
    }
}

/// Receives the supervisor's [`Event`]s.
pub trait Reporter: Send + Sync {
    /// Called for each event, from the supervisor's threads.
    fn report(&self, event: &Event);
}

struct Shared {
    plan: RunPlan,
    answers: Mutex<RunAnswers>,
    hinted: Mutex<HashSet<PathBuf>>,
    callers: Callers,
    anchors: Anchors,
    listener: Listener,
    file: SandboxFile,
    reporter: Arc<dyn Reporter>,
}

struct Pending {
    notif: Notif,
    op: Op,
    outside: Vec<PathBuf>,
}

/// A running supervisor; stop it with [`Supervisor::stop`].
pub struct Supervisor {
    stop: Arc<AtomicBool>,
    loop_thread: Option<JoinHandle<()>>,
    ask_thread: Option<JoinHandle<()>>,
}

impl Supervisor {
    /// Starts supervising `listener` with `plan`. Writes outside the allowed
    /// set are put to `resolver`, one at a time, each with `timeout`; "always"
    /// answers go to `file`.
    pub fn start(
        listener: Listener,
        plan: RunPlan,
        file: SandboxFile,
        resolver: Box<dyn Resolver>,
        timeout: Duration,
        reporter: Arc<dyn Reporter>,
    ) -> Supervisor {
        let anchors = Anchors::open(plan.carved().map(Path::to_path_buf).collect::<Vec<_>>());
        let shared = Arc::new(Shared {
            plan,
            answers: Mutex::new(RunAnswers::default()),
            hinted: Mutex::new(HashSet::new()),
            callers: Callers::default(),
            anchors,
            listener,
            file,
            reporter,
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let ask_shared = Arc::clone(&shared);
        let ask_thread = thread::spawn(move || ask_loop(&ask_shared, &*resolver, timeout, &rx));
        let loop_stop = Arc::clone(&stop);
        let loop_thread = thread::spawn(move || notify_loop(&shared, &tx, &loop_stop));
        Supervisor {
            stop,
            loop_thread: Some(loop_thread),
            ask_thread: Some(ask_thread),
        }
    }

    /// Stops both threads (pending questions are abandoned; their callers get
    /// `ENOSYS` from the kernel once the listener closes).
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // The loop thread blocks in the kernel until the next notification;
        // it is not waited for (it ends with the process).
        drop(self.loop_thread.take());
        // The ask thread ends when the loop thread drops its sender; a question
        // still on screen is not waited for.
        drop(self.ask_thread.take());
    }
}

fn notify_loop(shared: &Arc<Shared>, asks: &Sender<Pending>, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        match shared.listener.recv() {
            Ok(notif) => handle(shared, notif, asks),
            // ENOENT: the caller went away before we received it, or no
            // process uses the filter any more (then the kernel says so at
            // once, again and again: stop rather than spin).
            Err(err) if err.raw_os_error() == Some(libc::ENOENT) => {
                if shared.listener.wait(0).unwrap_or(Ready::Gone) == Ready::Gone {
                    break;
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            // No process uses the filter any more, or the listener broke.
            Err(_) => match shared.listener.wait(100) {
                Ok(Ready::Gone) | Err(_) => break,
                Ok(_) => continue,
            },
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Decides one notification.
fn handle(shared: &Arc<Shared>, notif: Notif, asks: &Sender<Pending>) {
    let listener = &shared.listener;
    match notif.nr {
        libc::SYS_chdir | libc::SYS_fchdir | libc::SYS_umask => {
            shared.callers.context_changes(notif.pid);
            listener.allow(notif.id);
            return;
        }
        libc::SYS_setuid
        | libc::SYS_setgid
        | libc::SYS_setreuid
        | libc::SYS_setregid
        | libc::SYS_setresuid
        | libc::SYS_setresgid
        | libc::SYS_setfsuid
        | libc::SYS_setfsgid
        | libc::SYS_setgroups
        | libc::SYS_capset => {
            shared.callers.creds_change();
            listener.allow(notif.id);
            return;
        }
        _ => {}
    }
    let op = if let Some(meta) = metadata::decode(&notif) {
        let cwd = || shared.callers.cwd(notif.pid, true);
        let Some(path) = meta.target_path(notif.pid, cwd) else {
            listener.allow(notif.id);
            return;
        };
        Op::Meta {
            path,
            change: meta.change,
        }
    } else {
        let Some(request) = decode(&notif) else {
            // Not a write after all (a read-only `openat2`), or not ours to judge:
            // the Landlock floor decides.
            listener.allow(notif.id);
            return;
        };
        if matches!(request, Request::Rename(..) | Request::Remove(_, true)) {
            // A directory may move or go: some working directory with it.
            shared.callers.paths_change();
        }
        if let Some(op) = request.read_op_lexically(&shared.callers, notif.pid) {
            if fast(shared, &notif, &op) {
                return;
            }
        }
        let Some(op) = request.read_op(&shared.callers, notif.pid) else {
            listener.allow(notif.id);
            return;
        };
        if let Op::Rename { from, .. } = &op {
            shared.anchors.moving(from);
        }
        op
    };
    decide(shared, notif, op, asks);
}

/// Decides `op` from its canonical paths: fails it, asks about it,
/// continues it or performs it.
fn decide(shared: &Arc<Shared>, notif: Notif, op: Op, asks: &Sender<Pending>) {
    let listener = &shared.listener;
    let targets = targets(&op);
    let answers = lock(&shared.answers).clone();
    let standings: Vec<(PathBuf, Standing)> = targets
        .iter()
        .map(|(path, entry)| (path.clone(), shared.plan.standing(path, *entry, &answers)))
        .collect();
    drop(answers);
    if let Some((path, standing)) = standings
        .iter()
        .find(|(_, s)| matches!(s, Standing::Floor | Standing::Protected | Standing::Denied))
    {
        let reason = match standing {
            Standing::Floor => DenyReason::Floor,
            Standing::Protected => DenyReason::Protected,
            _ => DenyReason::DenyList,
        };
        // Reported first: the log line is out before the program goes on.
        shared.reporter.report(&Event::Denied {
            attempt: attempt(notif.pid, &op, path),
            reason,
        });
        listener.fail(notif.id, libc::EACCES);
        return;
    }
    let outside: Vec<PathBuf> = standings
        .iter()
        .filter(|(_, s)| *s == Standing::Outside)
        .map(|(p, _)| p.clone())
        .collect();
    if let Some(errno) = fails_anyway(&op) {
        // The kernel checks existence before permissions: answer as it would,
        // without a question (e.g. `mv`'s `RENAME_NOREPLACE` probe).
        listener.fail(notif.id, errno);
        return;
    }
    if let Op::Link { from, to } = &op {
        if outside.contains(from) && !outside.contains(to) {
            // A hard link to a file outside would be a name in the allowed
            // set through which writes change that file. It fails as a link
            // across file systems does, without a question, so tools copy
            // instead (`git clone` of a local repository).
            shared.reporter.report(&Event::Denied {
                attempt: attempt(notif.pid, &op, from),
                reason: DenyReason::LinkFromOutside,
            });
            listener.fail(notif.id, libc::EXDEV);
            return;
        }
    }
    if !outside.is_empty() {
        let pending = Pending { notif, op, outside };
        if let Err(mpsc::SendError(pending)) = asks.send(pending) {
            listener.fail(pending.notif.id, libc::EACCES);
        }
        return;
    }
    if matches!(op, Op::Meta { .. }) {
        // Not a write: file modes are the kernel's business, with no hint.
        listener.allow(notif.id);
    } else if standings.iter().all(|(_, s)| *s == Standing::Covered) {
        let creds = creds_of(shared, notif.pid);
        if let Some((path, _)) = targets
            .iter()
            .find(|(path, entry)| dac_refuses(&creds, path, *entry))
        {
            hint(shared, notif.pid, path);
        }
        listener.allow(notif.id);
    } else {
        perform_checked(shared, &notif, &op);
    }
}

/// Decides `op` from its lexical paths (absolute, without `..`) when that
/// needs no canonical path: everything beneath a Landlock rule continues
/// (Landlock checks the real path), and an allowed write the floor would
/// refuse is performed with symlink-free resolution. Returns `false` when
/// the slow path must decide (outside the allowed set, protected, or a
/// symlink on the way).
fn fast(shared: &Shared, notif: &Notif, op: &Op) -> bool {
    let plan = &shared.plan;
    let targets = lexical_targets(op);
    if targets
        .iter()
        .any(|(p, _)| plan.is_protected(p) || plan.is_floor(p))
    {
        return false;
    }
    if targets.iter().all(|(p, entry)| {
        if *entry {
            plan.covers_entry(p)
        } else {
            plan.covers_content(p)
        }
    }) {
        if !plan.mounted.is_empty() && !plainly_covered(plan, &targets) {
            return false;
        }
        let creds = creds_of(shared, notif.pid);
        if let Some((path, _)) = targets
            .iter()
            .find(|(p, entry)| dac_refuses(&creds, p, *entry))
        {
            hint(shared, notif.pid, path);
        }
        shared.listener.allow(notif.id);
        return true;
    }
    let answers = lock(&shared.answers).allow.clone();
    if !targets.iter().all(|(p, _)| plan.is_allowed(p, &answers)) {
        return false;
    }
    let creds = creds_of(shared, notif.pid);
    if let Some((path, _)) = targets
        .iter()
        .find(|(path, entry)| dac_refuses(&creds, path, *entry))
    {
        hint(shared, notif.pid, path);
        shared.listener.fail(notif.id, libc::EACCES);
        return true;
    }
    let umask = creds.map_or(0o022, |c| c.umask);
    if !shared.listener.id_valid(notif.id) {
        return true;
    }
    if let Op::Rename { from, .. } = op {
        shared.anchors.moving(from);
    }
    try_perform(&shared.listener, &shared.anchors, notif.id, op, umask)
}

/// Whether `targets` may take the shortcut with the mount layer as they
/// would when carving. The mount layer gives the workspace root a rule of its
/// own, so a path through a symbolic link in it (`ln -s .sandgate sg`, then
/// `echo x > sg/sandbox.json`) looks covered while the kernel will refuse it
/// (a read-only bind, or Landlock beyond the link); carving would have sent
/// it the full way, which reports the refusal. So each component below the
/// rule is checked with `lstat`, down to the first one that carving would
/// have given a rule (which it trusts on its literal path too).
fn plainly_covered(plan: &RunPlan, targets: &[(PathBuf, bool)]) -> bool {
    targets.iter().all(|(path, entry)| {
        let Some(rule) = plan.rule_dir_of(path) else {
            // A file rule: Landlock holds it on the file itself.
            return plan.covers_content(path);
        };
        let below: Vec<&Path> = path.ancestors().take_while(|p| *p != rule).collect();
        for component in below.into_iter().rev() {
            if plan.carving_covers(component, !*entry && component == path.as_path()) {
                return true;
            }
            if fs::symlink_metadata(component).is_ok_and(|m| m.file_type().is_symlink()) {
                return false;
            }
        }
        true
    })
}

/// The paths of `op`, each marked as an entry change when the operation may
/// create, remove or rename it (a creating open counts as one: the parent's
/// rule then covers the contents too).
fn lexical_targets(op: &Op) -> Vec<(PathBuf, bool)> {
    match op {
        Op::Open { path, flags, .. } => {
            if flags & libc::O_TMPFILE == libc::O_TMPFILE {
                vec![(path.join(".tmpfile"), true)]
            } else {
                vec![(path.clone(), flags & libc::O_CREAT != 0)]
            }
        }
        _ => targets(op),
    }
}

/// Performs `op` if its caller is still waiting, with the caller's umask,
/// and only if its file modes would let the caller do it itself.
fn perform_checked(shared: &Shared, notif: &Notif, op: &Op) {
    if matches!(op, Op::Meta { .. }) {
        shared.listener.allow(notif.id);
        return;
    }
    let creds = creds_of(shared, notif.pid);
    if let Some((path, _)) = targets(op)
        .iter()
        .find(|(path, entry)| dac_refuses(&creds, path, *entry))
    {
        hint(shared, notif.pid, path);
        shared.listener.fail(notif.id, libc::EACCES);
        return;
    }
    let umask = creds.map_or(0o022, |c| c.umask);
    // The caller may have died and its pid been reused while we looked.
    if !shared.listener.id_valid(notif.id) {
        return;
    }
    perform(&shared.listener, &shared.anchors, notif.id, op, umask);
}

fn hint(shared: &Shared, pid: u32, path: &Path) {
    if lock(&shared.hinted).insert(path.to_path_buf()) {
        shared.reporter.report(&Event::PermissionHint {
            path: path.to_path_buf(),
            process: describe(pid),
        });
    }
}

fn ask_loop(shared: &Shared, resolver: &dyn Resolver, timeout: Duration, rx: &Receiver<Pending>) {
    while let Ok(pending) = rx.recv() {
        let Pending { notif, op, outside } = pending;
        let mut verdict = None;
        for path in &outside {
            let entry = targets(&op)
                .into_iter()
                .find(|(p, _)| p == path)
                .is_some_and(|(_, e)| e);
            let standing = shared
                .plan
                .standing(path, entry, &lock(&shared.answers).clone());
            match standing {
                Standing::Covered | Standing::Allowed => continue,
                Standing::Floor => {
                    verdict = Some(DenyReason::Floor);
                    break;
                }
                Standing::Denied | Standing::Protected => {
                    verdict = Some(DenyReason::DenyList);
                    break;
                }
                Standing::Outside => {}
            }
            if !shared.listener.id_valid(notif.id) {
                verdict = Some(DenyReason::Rejected);
                break;
            }
            let attempt = attempt(notif.pid, &op, path);
            let resolution = resolver.resolve(&attempt.question(timeout));
            let (list, denied) = outcome(&resolution);
            if let Some(list) = list {
                remember(shared, list, path);
            }
            match denied {
                Some(reason) => {
                    shared.reporter.report(&Event::Denied { attempt, reason });
                    verdict = Some(reason);
                    break;
                }
                None => shared.reporter.report(&Event::Allowed {
                    attempt,
                    always: list.is_some(),
                }),
            }
        }
        match verdict {
            Some(_) => shared.listener.fail(notif.id, libc::EACCES),
            None => perform_checked(shared, &notif, &op),
        }
    }
}

/// Records an "always" answer for this run and in `sandbox.json`.
fn remember(shared: &Shared, list: ListKind, path: &Path) {
    {
        let mut answers = lock(&shared.answers);
        match list {
            ListKind::Allow => answers.allow.push(path.to_path_buf()),
            ListKind::Deny => answers.deny.push(path.to_path_buf()),
        }
    }
    let entry = path.to_string_lossy();
    if let Err(err) = shared.file.persist(list, &entry) {
        shared.reporter.report(&Event::Error(err.to_string()));
    }
}

/// What a resolution means for one write: the `sandbox.json` list an
/// "always" answer goes to, and why the write is refused (`None`: allowed).
fn outcome(resolution: &Resolution) -> (Option<ListKind>, Option<DenyReason>) {
    match resolution {
        Resolution::Answered(answer) => {
            let list = answer.persists().map(|effect| match effect {
                Effect::Allow => ListKind::Allow,
                Effect::Deny => ListKind::Deny,
            });
            let denied = (answer.verdict() == Verdict::Deny).then_some(DenyReason::Rejected);
            (list, denied)
        }
        Resolution::TimedOut { .. } => (None, Some(DenyReason::TimedOut)),
        Resolution::Unavailable { .. } | Resolution::Declined { .. } => {
            (None, Some(DenyReason::NoTerminal))
        }
    }
}

fn attempt(pid: u32, op: &Op, path: &Path) -> Attempt {
    Attempt {
        pid,
        process: describe(pid),
        operation: op.verb().to_string(),
        path: path.to_path_buf(),
    }
}

/// `name (cmdline)` of a process, for questions and logs.
fn describe(pid: u32) -> String {
    let comm = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let line = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(String::from_utf8_lossy)
        .collect::<Vec<_>>()
        .join(" ");
    let line = if line.chars().count() > 120 {
        line.chars().take(117).collect::<String>() + "..."
    } else {
        line
    };
    format!("{} ({line})", comm.trim())
}

/// The error the kernel gives `op` before any permission check, if any:
/// creating an existing entry, or removing or renaming a missing one.
fn fails_anyway(op: &Op) -> Option<i32> {
    let exists = |p: &Path| fs::symlink_metadata(p).is_ok();
    match op {
        Op::Open { path, flags, .. }
            if flags & libc::O_CREAT != 0 && flags & libc::O_EXCL != 0 && exists(path) =>
        {
            Some(libc::EEXIST)
        }
        Op::Mkdir { path, .. } | Op::Mknod { path, .. } | Op::Symlink { path, .. }
            if exists(path) =>
        {
            Some(libc::EEXIST)
        }
        Op::Remove { path, .. } if !exists(path) => Some(libc::ENOENT),
        Op::Rename { from, .. } | Op::Link { from, .. } if !exists(from) => Some(libc::ENOENT),
        Op::Rename { to, flags, .. } if flags & libc::RENAME_NOREPLACE != 0 && exists(to) => {
            Some(libc::EEXIST)
        }
        Op::Link { to, .. } if exists(to) => Some(libc::EEXIST),
        _ => None,
    }
}

/// The paths a write touches, and for each whether it changes an entry
/// (create, remove, rename) rather than contents.
fn targets(op: &Op) -> Vec<(PathBuf, bool)> {
    match op {
        Op::Open { path, flags, .. } => {
            if flags & libc::O_TMPFILE == libc::O_TMPFILE {
                vec![(path.join(".tmpfile"), true)]
            } else {
                let creates = flags & libc::O_CREAT != 0 && fs::symlink_metadata(path).is_err();
                vec![(path.clone(), creates)]
            }
        }
        Op::Truncate { path, .. } | Op::Meta { path, .. } => vec![(path.clone(), false)],
        Op::Mkdir { path, .. }
        | Op::Mknod { path, .. }
        | Op::Remove { path, .. }
        | Op::Symlink { path, .. } => vec![(path.clone(), true)],
        Op::Rename { from, to, .. } | Op::Link { from, to } => {
            vec![(from.clone(), true), (to.clone(), true)]
        }
    }
}

/// A path argument before resolution.
#[derive(Debug, Clone, Copy)]
struct PathArg {
    dirfd: i32,
    addr: u64,
}

/// A decoded system call, paths still in the caller's memory.
#[derive(Debug)]
enum Request {
    Open(PathArg, i32, u32),
    Mkdir(PathArg, u32),
    Mknod(PathArg, u32),
    Remove(PathArg, bool),
    Rename(PathArg, PathArg, u32),
    Link(PathArg, PathArg, bool),
    Symlink(u64, PathArg),
    Truncate(PathArg, i64),
}

fn decode(n: &Notif) -> Option<Request> {
    let a = n.args;
    let cwd = |addr: u64| PathArg {
        dirfd: libc::AT_FDCWD,
        addr,
    };
    let at = |fd: u64, addr: u64| PathArg {
        dirfd: fd as i32,
        addr,
    };
    Some(match n.nr {
        libc::SYS_open => Request::Open(cwd(a[0]), a[1] as i32, a[2] as u32),
        libc::SYS_openat => Request::Open(at(a[0], a[1]), a[2] as i32, a[3] as u32),
        libc::SYS_openat2 => {
            let mut how = [0u8; 16];
            if read_memory(n.pid, a[2], &mut how).ok()? != 16 {
                return None;
            }
            let flags = u64::from_ne_bytes(how[..8].try_into().ok()?);
            let mode = u64::from_ne_bytes(how[8..].try_into().ok()?);
            if flags as u32 & WRITE_OPEN_FLAGS == 0 {
                return None;
            }
            Request::Open(at(a[0], a[1]), flags as i32, mode as u32)
        }
        libc::SYS_creat => Request::Open(
            cwd(a[0]),
            libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            a[1] as u32,
        ),
        libc::SYS_mkdir => Request::Mkdir(cwd(a[0]), a[1] as u32),
        libc::SYS_mkdirat => Request::Mkdir(at(a[0], a[1]), a[2] as u32),
        libc::SYS_mknod => Request::Mknod(cwd(a[0]), a[1] as u32),
        libc::SYS_mknodat => Request::Mknod(at(a[0], a[1]), a[2] as u32),
        libc::SYS_unlink => Request::Remove(cwd(a[0]), false),
        libc::SYS_rmdir => Request::Remove(cwd(a[0]), true),
        libc::SYS_unlinkat => {
            Request::Remove(at(a[0], a[1]), a[2] as i32 & libc::AT_REMOVEDIR != 0)
        }
        libc::SYS_rename => Request::Rename(cwd(a[0]), cwd(a[1]), 0),
        libc::SYS_renameat => Request::Rename(at(a[0], a[1]), at(a[2], a[3]), 0),
        libc::SYS_renameat2 => Request::Rename(at(a[0], a[1]), at(a[2], a[3]), a[4] as u32),
        libc::SYS_link => Request::Link(cwd(a[0]), cwd(a[1]), false),
        libc::SYS_linkat => {
            if a[4] as i32 & libc::AT_EMPTY_PATH != 0 {
                return None;
            }
            Request::Link(
                at(a[0], a[1]),
                at(a[2], a[3]),
                a[4] as i32 & libc::AT_SYMLINK_FOLLOW != 0,
            )
        }
        libc::SYS_symlink => Request::Symlink(a[0], cwd(a[1])),
        libc::SYS_symlinkat => Request::Symlink(a[0], at(a[1], a[2])),
        libc::SYS_truncate => Request::Truncate(cwd(a[0]), a[1] as i64),
        _ => return None,
    })
}

impl Request {
    /// Reads the paths from the caller and makes them canonical. `None` when
    /// they cannot be read (the Landlock floor then decides alone).
    fn read_op(&self, callers: &Callers, pid: u32) -> Option<Op> {
        let path = |arg: PathArg, follow: bool| locate(callers, pid, arg, follow);
        Some(match *self {
            Request::Open(arg, flags, mode) => {
                let follow = flags & libc::O_NOFOLLOW == 0
                    && !(flags & libc::O_CREAT != 0 && flags & libc::O_EXCL != 0);
                Op::Open {
                    path: path(arg, follow)?,
                    flags,
                    mode,
                }
            }
            Request::Mkdir(arg, mode) => Op::Mkdir {
                path: path(arg, false)?,
                mode,
            },
            Request::Mknod(arg, mode) => Op::Mknod {
                path: path(arg, false)?,
                mode,
            },
            Request::Remove(arg, dir) => Op::Remove {
                path: path(arg, false)?,
                dir,
            },
            Request::Rename(from, to, flags) => Op::Rename {
                from: path(from, false)?,
                to: path(to, false)?,
                flags,
            },
            Request::Link(from, to, follow) => Op::Link {
                from: path(from, follow)?,
                to: path(to, false)?,
            },
            Request::Symlink(target, arg) => Op::Symlink {
                target: read_cstring(pid, target).ok()?,
                path: path(arg, false)?,
            },
            Request::Truncate(arg, len) => Op::Truncate {
                path: path(arg, true)?,
                len,
            },
        })
    }
}

impl Request {
    /// Reads the paths and makes them absolute without touching the file
    /// system (the working directory as cached); `None` when a path has a
    /// `..` (or cannot be read).
    fn read_op_lexically(&self, callers: &Callers, pid: u32) -> Option<Op> {
        let path = |arg: PathArg| {
            let path = absolute(callers, pid, arg, false)?;
            (!path
                .components()
                .any(|c| c == std::path::Component::ParentDir))
            .then(|| normalize(&path))
        };
        Some(match *self {
            Request::Open(arg, flags, mode) => Op::Open {
                path: path(arg)?,
                flags,
                mode,
            },
            Request::Mkdir(arg, mode) => Op::Mkdir {
                path: path(arg)?,
                mode,
            },
            Request::Mknod(arg, mode) => Op::Mknod {
                path: path(arg)?,
                mode,
            },
            Request::Remove(arg, dir) => Op::Remove {
                path: path(arg)?,
                dir,
            },
            Request::Rename(from, to, flags) => Op::Rename {
                from: path(from)?,
                to: path(to)?,
                flags,
            },
            // A following link and a truncate resolve the final symlink.
            Request::Link(_, _, true) | Request::Truncate(..) => return None,
            Request::Link(from, to, false) => Op::Link {
                from: path(from)?,
                to: path(to)?,
            },
            Request::Symlink(target, arg) => Op::Symlink {
                target: read_cstring(pid, target).ok()?,
                path: path(arg)?,
            },
        })
    }
}

/// `arg` made absolute against the caller's working directory (`fresh`: read
/// now, else as cached) or directory descriptor.
fn absolute(callers: &Callers, pid: u32, arg: PathArg, fresh: bool) -> Option<PathBuf> {
    let raw = read_cstring(pid, arg.addr).ok()?;
    if raw.is_empty() {
        return None;
    }
    let raw = Path::new(OsStr::from_bytes(&raw));
    if raw.is_absolute() {
        return Some(raw.to_path_buf());
    }
    let base = if arg.dirfd == libc::AT_FDCWD {
        callers.cwd(pid, fresh)?
    } else {
        fs::read_link(format!("/proc/{pid}/fd/{}", arg.dirfd)).ok()?
    };
    Some(base.join(raw))
}

/// The canonical path a write to `arg` lands on, resolved as the caller
/// would (every symlink but, unless `follow`, the last one; `/proc/self` is
/// the caller). `None` when it reaches no path (a pipe through
/// `/proc/self/fd`): the Landlock floor decides.
fn locate(callers: &Callers, pid: u32, arg: PathArg, follow: bool) -> Option<PathBuf> {
    callerpath::resolve(&absolute(callers, pid, arg, true)?, follow, pid)
}

/// The current credentials of `pid` (as cached, see [`super::callers`]).
fn creds_of(shared: &Shared, pid: u32) -> Option<Creds> {
    shared.callers.creds(pid)
}

/// Whether file modes or ownership (not the sandbox) will refuse the write.
fn dac_refuses(creds: &Option<Creds>, path: &Path, entry: bool) -> bool {
    let Some(creds) = creds else {
        return false;
    };
    if creds.dac_override {
        return false;
    }
    let (target, need) = if entry {
        (path.parent().unwrap_or(Path::new("/")), 0o3)
    } else {
        (path, 0o2)
    };
    let Ok(meta) = fs::metadata(target) else {
        return false;
    };
    let mode = meta.mode();
    let bits = if meta.uid() == creds.uid {
        mode >> 6
    } else if meta.gid() == creds.gid || creds.groups.contains(&meta.gid()) {
        mode >> 3
    } else {
        mode
    };
    bits & need != need
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandgate_policy::ask::Answer;

    fn attempt() -> Attempt {
        Attempt {
            pid: 42,
            process: "sh (sh -c x)".into(),
            operation: "write".into(),
            path: PathBuf::from("/srv/out"),
        }
    }

    #[test]
    fn an_attempt_is_asked_in_the_one_vocabulary() {
        let q = attempt().question(Duration::from_secs(9));
        assert_eq!(q.tool, "run (write)");
        assert_eq!(q.kind, SubjectKind::Path);
        assert_eq!(q.subject, "/srv/out");
        assert!(
            q.reason.contains("[pid 42] tries to write outside"),
            "{}",
            q.reason
        );
        assert_eq!(q.timeout, Duration::from_secs(9));
    }

    #[test]
    fn each_resolution_has_one_outcome() {
        let cases = [
            (Resolution::Answered(Answer::AllowOnce), (None, None)),
            (
                Resolution::Answered(Answer::AllowAlways),
                (Some(ListKind::Allow), None),
            ),
            (
                Resolution::Answered(Answer::DenyOnce),
                (None, Some(DenyReason::Rejected)),
            ),
            (
                Resolution::Answered(Answer::DenyAlways),
                (Some(ListKind::Deny), Some(DenyReason::Rejected)),
            ),
            (
                Resolution::TimedOut { reason: "t".into() },
                (None, Some(DenyReason::TimedOut)),
            ),
            (
                Resolution::Unavailable { reason: "u".into() },
                (None, Some(DenyReason::NoTerminal)),
            ),
        ];
        for (resolution, want) in cases {
            assert_eq!(outcome(&resolution), want, "{resolution:?}");
        }
    }

    #[test]
    fn decided_events_carry_their_decision_and_others_none() {
        let denied = Event::Denied {
            attempt: attempt(),
            reason: DenyReason::Protected,
        }
        .decision()
        .unwrap();
        assert_eq!(denied.verdict, Verdict::Deny);
        assert_eq!(denied.subject, "/srv/out");
        assert!(denied
            .reason
            .starts_with("sandgate run: write by sh (sh -c x): `/srv/out` is read-only"));
        let allowed = Event::Allowed {
            attempt: attempt(),
            always: true,
        }
        .decision()
        .unwrap();
        assert_eq!(allowed.verdict, Verdict::Allow);
        assert!(allowed.reason.ends_with(": allowed always"));
        assert!(Event::Error("x".into()).decision().is_none());
    }
}
