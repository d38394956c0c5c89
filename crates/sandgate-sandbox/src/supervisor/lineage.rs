//! Exec tracking for `sandgate run`: which process of the confined tree is
//! Claude Code's own spawn of which command, so that a person's "Yes" in
//! Claude Code's own dialog can let the writes of exactly that call pass.
//!
//! The run's filter hands every `execve` and `execveat` to the supervisor,
//! which calls [`Lineage::exec`] and then lets the call continue. For every
//! child of the top process (below) it records that it has run `exec` (keyed
//! by process id **and** start time from `/proc/PID/stat`, so that a reused
//! id is never taken for the process that had it; entries of processes that
//! are gone are pruned); any other process's `exec` continues after one read
//! of its parent, since a process that is not a child of the top process
//! never becomes one (assumptions 2 and 3). For a process at its **first**
//! `exec` whose parent is the program `sandgate run` started (the *top*
//! process, Claude Code), it reads the arguments the process is about to
//! run ([`read_argv`], with `process_vm_readv`, while the call waits) and
//! keeps what they are ([`Spawn`]): Claude Code's `Bash` wrapper around a
//! command ([`claude_bash_command`]), Claude Code's spawn of `sandgate hook
//! claude`, or anything else.
//!
//! A pending grant ([`Lineage::register`]: the exact command the person is
//! asked about in Claude Code's dialog, the paths it will write, a deadline)
//! is consumed by the first such spawn of exactly that command and bound to
//! that process; a write of one of its paths by that process or one of its
//! descendants (the parent chain is walked at each write, each link checked
//! by its start time) then passes without a question
//! ([`Lineage::granted`]), while that process lives.
//!
//! **Why a process at its first exec, child of the top process, is Claude
//! Code's own spawn.** Such a process was forked by the top process and has
//! run nothing but the top process's code since: its memory, and so the
//! arguments it passes to `exec`, are Claude Code's. This holds only while
//! each of these assumptions does, and each has its check:
//!
//! 1. *Every `exec` of the tree is seen.* The run's filter notifies
//!    `execve` and `execveat` (`sandgate_confine::seccomp::NOTIFIED`);
//!    x32 calls fail; an i386 `execve` (`int 0x80`) is not seen, so a
//!    process that made one only counts as not having run `exec` if it was
//!    a fresh child of the top process, which runs Claude Code's code and
//!    makes no such call.
//! 2. *No process of the tree but the top process has the top process as
//!    parent without having been forked by it.* `clone` with `CLONE_PARENT`
//!    (which gives the new process its caller's parent) is refused in both
//!    ABIs, and `clone3` (whose flags no filter can read) fails with
//!    `ENOSYS`, so the C library falls back to `clone`
//!    ([`LINEAGE_REFUSED`], the run's lineage filter).
//! 3. *No orphan is re-parented to the top process.* The top process cannot
//!    become a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)` is refused);
//!    `sandgate run` is the subreaper of the tree, so orphans go to it,
//!    outside. The run makes no PID namespace, so the top process is not
//!    the init of one (and a namespace made inside only moves later
//!    children).
//! 4. *No process writes into another's memory.* `ptrace` attaching
//!    (`PTRACE_ATTACH`, `PTRACE_SEIZE`) and `process_vm_writev` are refused
//!    in both ABIs; a write-open of `/proc/PID/mem` is refused without a
//!    question (`sandgate_confine`'s unasked paths). A tracer by
//!    `PTRACE_TRACEME` is the tracee's parent, chosen by the tracee.
//! 5. *The argument strings are not in memory another process can write.*
//!    Claude Code builds them on its own heap, not in a shared mapping of a
//!    file the program could change.
//! 6. *A process's identity is its id and start time.* Both are read from
//!    `/proc` while the process waits in its notification, and again at
//!    each link of the parent chain: a process that is gone, or an id now
//!    used by another process, fails the check (no grant: fail closed).
//!
//! What this does not cover, and the run's documentation says: the grant
//! lets the *paths* the person saw be written by the process tree of the
//! call, not a content; the wrapper sources Claude Code's shell snapshot
//! (`~/.claude/shell-snapshots`, which the program may write) before the
//! command; and Claude Code spawns processes from its own configuration too
//! (MCP servers listed in `~/.claude.json`, which the program may write):
//! one spawned with exactly the wrapper of a command while its question is
//! open would take the grant (the person's call is then asked again by the
//! run).
//!
//! This module contains `unsafe` code: reading a request together with the
//! credentials the kernel attaches to it ([`read_line_with_sender`]).

#![allow(unsafe_code)]

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::notify::{read_memory, Notif};

/// The most arguments read of a spawn of the top process (Claude Code's
/// wrapper has three; more matches nothing).
pub const MAX_ARGS: usize = 16;

/// The most bytes read of the arguments of one spawn.
pub const MAX_ARGV_BYTES: usize = 4 << 20;

/// How many `exec`s pass between two prunings of the processes that are gone.
const PRUNE_EVERY: u64 = 256;

/// How long after its deadline a pending grant still makes a write of its
/// paths a question of the run's own (rather than a refusal): a "Yes" given
/// late in the agent's dialog then reaches the person again.
pub const LATE: Duration = Duration::from_secs(30 * 60);

/// How many links of a parent chain are walked at most.
const MAX_DEPTH: usize = 256;

/// `PTRACE_SEIZE`.
pub const PTRACE_SEIZE: u32 = 0x4206;

/// `PR_SET_CHILD_SUBREAPER`.
pub const PR_SET_CHILD_SUBREAPER: u32 = 36;

/// What the run's lineage filter refuses, in words (for `--dry-run` and the
/// documentation): see assumptions 2 to 4 of the module documentation.
pub const LINEAGE_REFUSED: &[&str] = &[
    "clone with CLONE_PARENT",
    "clone3 (ENOSYS: the C library falls back to clone)",
    "ptrace PTRACE_ATTACH and PTRACE_SEIZE",
    "process_vm_writev",
    "prctl PR_SET_CHILD_SUBREAPER",
];

/// A process: its id and its start time (clock ticks after boot, field 22
/// of `/proc/PID/stat`), which together never name two processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    /// The process id (the thread group's).
    pub pid: u32,
    /// Its start time.
    pub start: u64,
}

/// What `/proc/PID/stat` says of a process that matters here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// The parent's process id.
    pub ppid: u32,
    /// The start time.
    pub start: u64,
}

/// Parses the text of `/proc/PID/stat` (the command name, in parentheses,
/// may hold anything, so the fields are counted after its last `)`).
pub fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (3), ppid (4), …, starttime (22).
    Some(Stat {
        ppid: fields.get(1)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// The stat of process (or thread) `pid`, if it exists.
pub fn stat(pid: u32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The process (thread group) of thread `tid`.
pub fn tgid(tid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The key of process `pid`, if it exists.
pub fn key(pid: u32) -> Option<Key> {
    stat(pid).map(|s| Key {
        pid,
        start: s.start,
    })
}

/// Reads the argument vector at `addr` of `pid` (as `execve` will), at most
/// [`MAX_ARGS`] arguments and [`MAX_ARGV_BYTES`] bytes; `None` when it is
/// longer or cannot be read.
pub fn read_argv(pid: u32, addr: u64) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut total = 0usize;
    for i in 0..=MAX_ARGS as u64 {
        let mut word = [0u8; 8];
        if read_memory(pid, addr.checked_add(i * 8)?, &mut word).ok()? != 8 {
            return None;
        }
        let at = u64::from_ne_bytes(word);
        if at == 0 {
            return Some(out);
        }
        if out.len() == MAX_ARGS {
            return None;
        }
        let arg = read_string(pid, at, MAX_ARGV_BYTES - total)?;
        total += arg.len() + 1;
        out.push(arg);
    }
    None
}

/// A NUL-terminated string of at most `limit` bytes at `addr` of `pid`.
fn read_string(pid: u32, addr: u64, limit: usize) -> Option<Vec<u8>> {
    const PAGE: u64 = 4096;
    let mut out = Vec::new();
    let mut cursor = addr;
    while out.len() <= limit {
        // Never across a page boundary in one read: the next may be unmapped.
        let chunk = (PAGE - cursor % PAGE) as usize;
        let mut page = [0u8; PAGE as usize];
        let buf = &mut page[..chunk];
        let n = read_memory(pid, cursor, buf).ok()?;
        if n == 0 {
            return None;
        }
        if let Some(end) = buf[..n].iter().position(|b| *b == 0) {
            out.extend_from_slice(&buf[..end]);
            return (out.len() <= limit).then_some(out);
        }
        out.extend_from_slice(&buf[..n]);
        cursor = cursor.checked_add(n as u64)?;
    }
    None
}

/// The part of Claude Code 2.1.332's `Bash` wrapper, after the snapshot is
/// sourced and before the command, that follows the shell's own options:
/// the aliases and functions `which` and `unsetenv` removed.
const CLAUDE_UNALIASES: &str = " && { \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true";

/// Claude Code 2.1.332's options for bash.
const CLAUDE_BASH_OPTIONS: &str = "\\builtin shopt -u extglob 2>/dev/null || true";

/// Claude Code 2.1.332's options for zsh.
const CLAUDE_ZSH_OPTIONS: &str = "\\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_RC_QUOTES NO_EQUALS 2>/dev/null || true";

/// The same part in Claude Code 2.1.197 (bash).
const CLAUDE_FIXED_2_1_197: &str = "shopt -u extglob 2>/dev/null || true";

/// The fixed parts Claude Code puts between the snapshot and the command
/// for `shell` (`bash` or `zsh`).
fn fixed_parts(shell: &str) -> Vec<String> {
    match shell {
        "bash" => vec![
            format!("{CLAUDE_BASH_OPTIONS}{CLAUDE_UNALIASES}"),
            CLAUDE_FIXED_2_1_197.to_string(),
        ],
        "zsh" => vec![format!("{CLAUDE_ZSH_OPTIONS}{CLAUDE_UNALIASES}")],
        _ => Vec::new(),
    }
}

/// The characters Claude Code leaves unquoted in a word.
fn bare(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@+,-".contains(c))
}

/// The command inside Claude Code's `Bash` wrapper `argv`, parsed strictly;
/// `None` for anything else. The wrapper (Claude Code 2.1.332) is
///
/// ```text
/// /bin/bash -c "source SNAPSHOT 2>/dev/null || true && FIXED && eval 'COMMAND' < /dev/null && pwd -P >| TMP/claude-HEX-cwd"
/// ```
///
/// where `source …` is missing when Claude Code has no shell snapshot,
/// `FIXED` is the shell's part of `fixed_parts` (the options of bash or
/// zsh, then `CLAUDE_UNALIASES`; 2.1.197: `CLAUDE_FIXED_2_1_197`), the command is quoted with each `'` as
/// `'"'"'` (or left bare when it is one word of plain characters), and
/// ` < /dev/null` is missing when the command reads its own input. The shell
/// is an absolute `bash` or `zsh`; every part must be exactly so.
pub fn claude_bash_command(argv: &[Vec<u8>]) -> Option<String> {
    let [shell, dash_c, script] = argv else {
        return None;
    };
    let shell = std::str::from_utf8(shell).ok()?;
    let name = shell.strip_prefix('/')?.rsplit('/').next()?;
    if !matches!(name, "bash" | "zsh") || dash_c.as_slice() != b"-c" {
        return None;
    }
    let script = std::str::from_utf8(script).ok()?;
    let rest = match script.strip_prefix("source ") {
        Some(sourced) => {
            let (snapshot, rest) = sourced.split_once(" 2>/dev/null || true && ")?;
            if !bare(snapshot) || !snapshot.contains("/shell-snapshots/snapshot-") {
                return None;
            }
            rest
        }
        None => script,
    };
    let rest = fixed_parts(name)
        .iter()
        .find_map(|fixed| rest.strip_prefix(fixed.as_str()))?
        .strip_prefix(" && eval ")?;
    let (quoted, cwd_file) = rest.rsplit_once(" && pwd -P >| ")?;
    let name = cwd_file.rsplit('/').next()?;
    let hex = name.strip_prefix("claude-")?.strip_suffix("-cwd")?;
    if !cwd_file.starts_with('/')
        || !bare(cwd_file)
        || hex.is_empty()
        || !hex.chars().all(|c| c.is_ascii_hexdigit())
    {
        return None;
    }
    let quoted = quoted.strip_suffix(" < /dev/null").unwrap_or(quoted);
    unquote(quoted)
}

/// A word as Claude Code quotes it: bare, or `'…'` with each `'` inside as
/// `'"'"'`; `None` for anything else.
fn unquote(word: &str) -> Option<String> {
    if bare(word) {
        return Some(word.to_string());
    }
    let inner = word.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut out = String::with_capacity(inner.len());
    let mut rest = inner;
    while let Some(at) = rest.find('\'') {
        out.push_str(&rest[..at]);
        rest = rest[at..].strip_prefix("'\"'\"'")?;
        out.push('\'');
    }
    out.push_str(rest);
    Some(out)
}

/// Whether `argv` is Claude Code's spawn of a `sandgate hook claude`
/// command (`/bin/sh -c 'SANDGATE hook claude'`, `SANDGATE` a path whose
/// last part is `sandgate`, possibly quoted).
pub fn is_claude_hook(argv: &[Vec<u8>]) -> bool {
    let [shell, dash_c, command] = argv else {
        return false;
    };
    if shell.as_slice() != b"/bin/sh" || dash_c.as_slice() != b"-c" {
        return false;
    }
    let Ok(command) = std::str::from_utf8(command) else {
        return false;
    };
    let words: Vec<&str> = command.split_whitespace().collect();
    let [program, "hook", "claude"] = words.as_slice() else {
        return false;
    };
    let program = program
        .strip_prefix('\'')
        .and_then(|p| p.strip_suffix('\''))
        .unwrap_or(program);
    !program.contains('\'') && program.rsplit('/').next() == Some("sandgate")
}

/// What a fresh child of the top process ran at its first `exec`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spawn {
    /// Claude Code's `Bash` wrapper around this command.
    Bash(String),
    /// Claude Code's spawn of `sandgate hook claude`.
    Hook,
    /// Anything else.
    Other,
}

impl Spawn {
    /// What `argv` is.
    pub fn of(argv: &[Vec<u8>]) -> Spawn {
        if let Some(command) = claude_bash_command(argv) {
            Spawn::Bash(command)
        } else if is_claude_hook(argv) {
            Spawn::Hook
        } else {
            Spawn::Other
        }
    }
}

/// A grant waiting for Claude Code's spawn of its command.
#[derive(Debug, Clone)]
struct Pending {
    command: String,
    paths: Vec<PathBuf>,
    until: Instant,
}

/// A grant bound to a spawn: its writes of `paths` pass while it lives.
#[derive(Debug, Clone)]
struct Bound {
    root: Key,
    paths: Vec<PathBuf>,
}

/// The bookkeeping, without the `/proc` reads (tested on its own).
#[derive(Debug, Default)]
pub struct Book {
    top: Option<Key>,
    /// The processes known to have run `exec`: id → start time.
    execd: HashMap<u32, u64>,
    /// What each fresh child of the top process ran at its first `exec`.
    spawns: HashMap<Key, Spawn>,
    pending: Vec<Pending>,
    bound: Vec<Bound>,
    events: u64,
}

impl Book {
    /// The book of a tree whose top process is `top`.
    pub fn new(top: Option<Key>) -> Book {
        Book {
            top,
            ..Book::default()
        }
    }

    /// Whether process `key` is at its first `exec`; records that it has
    /// run one.
    pub fn first_exec(&mut self, key: Key) -> bool {
        self.events += 1;
        self.execd.insert(key.pid, key.start) != Some(key.start)
    }

    /// Whether `ppid` (of a process started after the top process) is the
    /// top process.
    pub fn child_of_top(&self, ppid: u32) -> bool {
        self.top.is_some_and(|top| top.pid == ppid)
    }

    /// Records what fresh child `key` of the top process ran at its first
    /// `exec`; a `Bash` spawn of a pending grant's command consumes the
    /// grant (the oldest) and is bound to it. Returns whether one was.
    pub fn spawned(&mut self, key: Key, spawn: Spawn, now: Instant) -> bool {
        self.pending.retain(|p| p.until + LATE > now);
        let mut bound = false;
        if let Spawn::Bash(command) = &spawn {
            let due = |p: &Pending| &p.command == command && p.until > now;
            if let Some(at) = self.pending.iter().position(due) {
                let grant = self.pending.remove(at);
                self.bound.push(Bound {
                    root: key,
                    paths: grant.paths,
                });
                bound = true;
            }
        }
        self.spawns.insert(key, spawn);
        bound
    }

    /// Adds a pending grant of `paths` for Claude Code's next spawn of
    /// exactly `command`, until `until`.
    pub fn register(&mut self, command: String, paths: Vec<PathBuf>, until: Instant) {
        self.pending.push(Pending {
            command,
            paths,
            until,
        });
    }

    /// Whether a pending (not yet spawned) grant names `path`, up to
    /// [`LATE`] after its deadline.
    pub fn pending_covers(&mut self, path: &Path, now: Instant) -> bool {
        self.pending.retain(|p| p.until + LATE > now);
        self.pending
            .iter()
            .any(|p| p.paths.iter().any(|g| path.starts_with(g)))
    }

    /// Whether a grant bound to one of `chain` (a process and its
    /// ancestors, each checked by its start time) covers `path`.
    pub fn granted(&self, chain: &[Key], path: &Path) -> bool {
        self.bound
            .iter()
            .any(|b| chain.contains(&b.root) && b.paths.iter().any(|g| path.starts_with(g)))
    }

    /// What fresh child `key` of the top process ran first, if known.
    pub fn spawn_of(&self, key: &Key) -> Option<&Spawn> {
        self.spawns.get(key)
    }

    /// Whether it is time to prune.
    fn due(&self) -> bool {
        self.events.is_multiple_of(PRUNE_EVERY)
    }

    /// Forgets every process for which `alive` says no.
    pub fn prune(&mut self, alive: impl Fn(&Key) -> bool) {
        self.execd.retain(|pid, start| {
            alive(&Key {
                pid: *pid,
                start: *start,
            })
        });
        self.spawns.retain(|k, _| alive(k));
        self.bound.retain(|b| alive(&b.root));
    }
}

/// The exec tracking of one run (see the module documentation).
#[derive(Debug)]
pub struct Lineage {
    book: Mutex<Book>,
}

impl Lineage {
    /// Tracking for the tree whose top process is `top`.
    pub fn new(top: u32) -> Lineage {
        Lineage {
            book: Mutex::new(Book::new(key(top))),
        }
    }

    fn book(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An `execve`/`execveat` notification, whose argument vector is at
    /// `argv`: records it, before the call continues. Returns whether a
    /// pending grant was bound to the process.
    pub fn exec(&self, notif: &Notif, argv: u64) -> bool {
        // Only a child of the top process can be its spawn, and a process
        // that is not one never becomes one (assumptions 2 and 3): the
        // others' `exec`s (a shell's `PATH` search tries one in each
        // directory) continue after this one read. A thread's `stat` names
        // its process's parent.
        let Some(own) = stat(notif.pid) else {
            return false;
        };
        if !self.book().child_of_top(own.ppid) {
            return false;
        }
        let Some(pid) = tgid(notif.pid) else {
            return false;
        };
        // The thread is its process (the usual case): its `stat` is the one read.
        let Some(stat) = (if pid == notif.pid {
            Some(own)
        } else {
            stat(pid)
        }) else {
            return false;
        };
        let key = Key {
            pid,
            start: stat.start,
        };
        let (first, of_top) = {
            let mut book = self.book();
            let first = book.first_exec(key);
            if book.due() {
                book.prune(|k| self::key(k.pid) == Some(*k));
            }
            (first, book.child_of_top(stat.ppid))
        };
        if !first || !of_top {
            return false;
        }
        // A fresh child of the top process: its memory is the top process's
        // code's (see the module documentation).
        let spawn = read_argv(notif.pid, argv).map_or(Spawn::Other, |a| Spawn::of(&a));
        // Still the same process (and its ids not reused) while it was read.
        if self::key(pid) != Some(key) {
            return false;
        }
        self.book().spawned(key, spawn, Instant::now())
    }

    /// Adds a pending grant of `paths` for Claude Code's next spawn of
    /// exactly `command`, for `window`.
    pub fn register(&self, command: String, paths: Vec<PathBuf>, window: Duration) {
        self.book()
            .register(command, paths, Instant::now() + window);
    }

    /// Whether a pending grant names `path` (its command not spawned yet).
    pub fn pending_covers(&self, path: &Path) -> bool {
        self.book().pending_covers(path, Instant::now())
    }

    /// Whether a write of `path` by thread `tid` is covered by a grant
    /// bound to its process or one of its ancestors.
    pub fn granted(&self, tid: u32, path: &Path) -> bool {
        let Some(pid) = tgid(tid) else {
            return false;
        };
        let chain = chain(pid);
        self.book().granted(&chain, path)
    }

    /// Whether process `pid`, or its parent, is Claude Code's own spawn of
    /// `sandgate hook claude` (the shell may run `sandgate` as itself or as
    /// its child).
    pub fn from_claude_hook(&self, pid: u32) -> bool {
        let Some(own) = stat(pid) else {
            return false;
        };
        let me = Key {
            pid,
            start: own.start,
        };
        let parent = key(own.ppid);
        let book = self.book();
        let is_hook = |k: &Key| book.spawn_of(k) == Some(&Spawn::Hook);
        let found = is_hook(&me) || parent.as_ref().is_some_and(is_hook);
        drop(book);
        // The process still exists as read (its id not reused meanwhile).
        found && key(pid) == Some(me)
    }
}

/// Process `pid` and its ancestors, each with its start time, up to the
/// first one that cannot be read.
fn chain(pid: u32) -> Vec<Key> {
    let mut out = Vec::new();
    let mut at = pid;
    while out.len() < MAX_DEPTH && at > 1 {
        let Some(s) = stat(at) else {
            break;
        };
        out.push(Key {
            pid: at,
            start: s.start,
        });
        at = s.ppid;
    }
    out
}

/// Reads one line (up to `limit` bytes) from a UNIX stream socket that has
/// `SO_PASSCRED` on, with the process id of its sender: the kernel attaches
/// the sender's credentials to each message, and a read never joins two
/// messages with different credentials. `None` as the sender when the
/// line's parts came from different processes or had none.
pub fn read_line_with_sender(
    sock: BorrowedFd<'_>,
    limit: usize,
) -> io::Result<(Vec<u8>, Option<u32>)> {
    let mut line = Vec::new();
    let mut sender: Option<Option<u32>> = None;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // Room for one `SCM_CREDENTIALS` message, aligned.
        let mut control = [0u64; 8];
        // SAFETY: a zeroed msghdr is a valid empty one; its pointers are set
        // to live buffers below.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        // SAFETY: `msg` points at `iov` and `control`, which outlive the call.
        let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        if n == 0 {
            break;
        }
        let mut from = None;
        // SAFETY: the CMSG macros walk the control buffer the kernel filled,
        // within `msg_controllen`.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET
                    && (*cmsg).cmsg_type == libc::SCM_CREDENTIALS
                {
                    let cred: libc::ucred = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast());
                    from = u32::try_from(cred.pid).ok().filter(|p| *p > 0);
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
        }
        sender = Some(match sender {
            None => from,
            Some(earlier) if earlier == from => from,
            Some(_) => None,
        });
        let got = &buf[..n as usize];
        match got.iter().position(|b| *b == b'\n') {
            Some(end) => {
                line.extend_from_slice(&got[..=end]);
                break;
            }
            None => line.extend_from_slice(got),
        }
        if line.len() > limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request too long",
            ));
        }
    }
    Ok((line, sender.flatten()))
}

/// Turns on `SO_PASSCRED` for `sock` (a listener: the connections it
/// accepts inherit it).
pub fn pass_credentials(sock: BorrowedFd<'_>) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: the kernel reads one live `c_int`.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PASSCRED,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(parts: &[&str]) -> Vec<Vec<u8>> {
        parts.iter().map(|p| p.as_bytes().to_vec()).collect()
    }

    /// Claude Code 2.1.332's bash part between the snapshot and the command.
    fn bash_fixed() -> String {
        fixed_parts("bash").remove(0)
    }

    /// Claude Code 2.1.332's wrapper as captured from its spawn.
    fn wrapper(quoted: &str, stdin: bool) -> String {
        let fixed = bash_fixed();
        format!(
            "source /h/.claude/shell-snapshots/snapshot-bash-1796455340918-fnnegb.sh 2>/dev/null || true && {fixed} && eval {quoted}{} && pwd -P >| /tmp/t/claude-8bca-cwd",
            if stdin { " < /dev/null" } else { "" }
        )
    }

    #[test]
    fn the_wrapper_gives_back_the_exact_command() {
        let w = wrapper("'echo hello > /o/x; echo rc=$?'", true);
        assert_eq!(
            claude_bash_command(&argv(&["/bin/bash", "-c", &w])).as_deref(),
            Some("echo hello > /o/x; echo rc=$?")
        );
        // Quotes inside, as Claude Code escapes them.
        let w = wrapper(
            "'cp a b; echo '\"'\"'it'\"'\"'\"'\"'\"'\"'\"'\"'s'\"'\"''",
            true,
        );
        assert_eq!(
            claude_bash_command(&argv(&["/bin/bash", "-c", &w])).as_deref(),
            Some("cp a b; echo 'it'\"'\"'s'")
        );
        // A bare word, a command with its own input, no snapshot, zsh.
        let w = wrapper("ls", true);
        assert_eq!(
            claude_bash_command(&argv(&["/usr/bin/bash", "-c", &w])).as_deref(),
            Some("ls")
        );
        assert_eq!(
            claude_bash_command(&argv(&["/usr/bin/zsh", "-c", &w])),
            None
        );
        let w = wrapper("'cat < f > /o/x'", false);
        assert_eq!(
            claude_bash_command(&argv(&["/bin/bash", "-c", &w])).as_deref(),
            Some("cat < f > /o/x")
        );
        let fixed = bash_fixed();
        let w = format!("{fixed} && eval 'true' < /dev/null && pwd -P >| /t/claude-ab-cwd");
        assert_eq!(
            claude_bash_command(&argv(&["/bin/bash", "-c", &w])).as_deref(),
            Some("true")
        );
        // Claude Code 2.1.197, as captured from its spawn.
        let w = "source /h/.claude/shell-snapshots/snapshot-bash-1796457412308-77nlk9.sh 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval 'echo hello > /o/x' < /dev/null && pwd -P >| /tmp/claude-77c3-cwd";
        assert_eq!(
            claude_bash_command(&argv(&["/bin/bash", "-c", w])).as_deref(),
            Some("echo hello > /o/x")
        );
        // zsh (Claude Code 2.1.332 takes it when it is installed), as captured.
        let w = r"source /h/.claude/shell-snapshots/snapshot-zsh-1796459040132-jyp36q.sh 2>/dev/null || true && \builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_RC_QUOTES NO_EQUALS 2>/dev/null || true && { \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true && eval 'echo hello > /o/x' < /dev/null && pwd -P >| /tmp/claude-152e-cwd";
        assert_eq!(
            claude_bash_command(&argv(&["/usr/bin/zsh", "-c", w])).as_deref(),
            Some("echo hello > /o/x")
        );
        // Each shell's part only with its shell.
        assert_eq!(claude_bash_command(&argv(&["/bin/bash", "-c", w])), None);
        // Both fixed parts, or either twice, is neither.
        for w in [
            format!("{fixed} && {CLAUDE_FIXED_2_1_197} && eval 'true' < /dev/null && pwd -P >| /t/claude-ab-cwd"),
            format!("{CLAUDE_FIXED_2_1_197} && {CLAUDE_FIXED_2_1_197} && eval 'true' < /dev/null && pwd -P >| /t/claude-ab-cwd"),
        ] {
            assert_eq!(claude_bash_command(&argv(&["/bin/bash", "-c", &w])), None, "{w}");
        }
    }

    #[test]
    fn anything_unexpected_in_the_wrapper_matches_nothing() {
        let good = wrapper("'echo x > /o/x'", true);
        let bad: Vec<Vec<Vec<u8>>> = vec![
            argv(&["bash", "-c", &good]),
            argv(&["/bin/sh", "-c", &good]),
            argv(&["/bin/bash", "-lc", &good]),
            argv(&["/bin/bash", "-c", &good, "extra"]),
            argv(&["/bin/bash", "-c"]),
            // A quote not escaped as Claude Code does.
            argv(&["/bin/bash", "-c", &wrapper("'echo 'x' > /o/x'", true)]),
            argv(&["/bin/bash", "-c", &wrapper("'a' 'b'", true)]),
            argv(&["/bin/bash", "-c", &wrapper("echo x", true)]),
            argv(&["/bin/bash", "-c", &wrapper("$(x)", true)]),
            // Something before, between or after.
            argv(&["/bin/bash", "-c", &format!("x; {good}")]),
            argv(&[
                "/bin/bash",
                "-c",
                &good.replace(" && eval", " && true && eval"),
            ]),
            argv(&["/bin/bash", "-c", &format!("{good}; x")]),
            argv(&["/bin/bash", "-c", &good.replace("claude-8bca-cwd", "x-cwd")]),
            argv(&[
                "/bin/bash",
                "-c",
                &good.replace("claude-8bca-cwd", "claude-8bca-cwd x"),
            ]),
            argv(&["/bin/bash", "-c", &good.replace("snapshot-bash", "snap")]),
            argv(&[
                "/bin/bash",
                "-c",
                &good.replace("source /h", "source '/h x'"),
            ]),
        ];
        for a in &bad {
            assert_eq!(claude_bash_command(a), None, "{a:?}");
            assert_eq!(Spawn::of(a), Spawn::Other, "{a:?}");
        }
    }

    #[test]
    fn only_sandgates_hook_spawn_is_a_hook() {
        for ok in [
            "/usr/bin/sandgate hook claude",
            "'/work/target/debug/sandgate' hook claude",
            "sandgate hook claude",
        ] {
            assert!(is_claude_hook(&argv(&["/bin/sh", "-c", ok])), "{ok}");
        }
        for no in [
            "sandgate hook gemini",
            "sandgate hook claude; rm x",
            "/x/notsandgate hook claude",
            "echo sandgate hook claude",
            "'/x/sandgate hook claude",
        ] {
            assert!(!is_claude_hook(&argv(&["/bin/sh", "-c", no])), "{no}");
        }
        assert!(!is_claude_hook(&argv(&[
            "/bin/bash",
            "-c",
            "sandgate hook claude"
        ])));
    }

    #[test]
    fn stat_is_read_after_the_name() {
        let text = "42 (a) b) 1 2) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1 2";
        assert_eq!(
            parse_stat(text),
            Some(Stat {
                ppid: 7,
                start: 98765
            })
        );
        assert_eq!(parse_stat("42 (x) S"), None);
        let own = stat(std::process::id()).unwrap();
        assert_eq!(key(std::process::id()).unwrap().start, own.start);
        assert_eq!(tgid(std::process::id()), Some(std::process::id()));
    }

    fn k(pid: u32, start: u64) -> Key {
        Key { pid, start }
    }

    #[test]
    fn a_pending_grant_is_bound_to_one_spawn_of_its_exact_command() {
        let now = Instant::now();
        let top = k(10, 1);
        let mut book = Book::new(Some(top));
        let out = PathBuf::from("/o/x");
        book.register(
            "echo hi > /o/x".into(),
            vec![out.clone()],
            now + Duration::from_secs(60),
        );
        assert!(book.pending_covers(&out, now));
        // A first exec of another command binds nothing.
        assert!(book.first_exec(k(11, 5)));
        assert!(!book.spawned(k(11, 5), Spawn::Bash("echo hi > /o/y".into()), now));
        assert!(!book.granted(&[k(11, 5), top], &out));
        // The exact command: bound, and consumed.
        assert!(book.first_exec(k(12, 6)));
        assert!(book.spawned(k(12, 6), Spawn::Bash("echo hi > /o/x".into()), now));
        assert!(!book.pending_covers(&out, now));
        assert!(book.granted(&[k(13, 7), k(12, 6), top], &out));
        assert!(book.granted(&[k(12, 6), top], Path::new("/o/x")));
        assert!(!book.granted(&[k(12, 6), top], Path::new("/o/other")));
        // Not for a process with the same id and another start time.
        assert!(!book.granted(&[k(12, 9), top], &out));
        // A second spawn of the same command gets nothing.
        assert!(book.first_exec(k(14, 8)));
        assert!(!book.spawned(k(14, 8), Spawn::Bash("echo hi > /o/x".into()), now));
        assert!(!book.granted(&[k(14, 8), top], &out));
        // The second exec of a process is not a first.
        assert!(!book.first_exec(k(12, 6)));
        // A reused id with a new start time is.
        assert!(book.first_exec(k(12, 99)));
        // Gone: pruned, the grant with it.
        book.prune(|key| *key != k(12, 6));
        assert!(!book.granted(&[k(12, 6), top], &out));
    }

    #[test]
    fn a_pending_grant_expires_unused() {
        let now = Instant::now();
        let mut book = Book::new(Some(k(10, 1)));
        book.register(
            "true".into(),
            vec![PathBuf::from("/o")],
            now + Duration::from_secs(1),
        );
        let later = now + Duration::from_secs(2);
        // Past its deadline no spawn takes it, but its paths are still
        // asked about by the run for a while.
        assert!(!book.spawned(k(11, 2), Spawn::Bash("true".into()), later));
        assert!(book.pending_covers(Path::new("/o/x"), later));
        assert!(!book.pending_covers(Path::new("/o/x"), later + LATE));
        assert!(!book.child_of_top(11));
        assert!(book.child_of_top(10));
    }
}
