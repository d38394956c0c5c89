//! What the supervisor reports: the attempt it decided ([`Attempt`]), why a
//! write was refused ([`DenyReason`]), and the [`Event`]s a [`Reporter`]
//! receives, each with its decision for the audit log.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sandgate_policy::ask::{Question, SubjectKind};
use sandgate_policy::{Decision, Verdict};

use crate::unasked::Unasked;
use sandgate_sandbox::supervisor::perform::Op;

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
    /// One of sandgate's own files (the audit log, the policy cache), which
    /// its hooks inside the run reach through the supervisor instead.
    SandgateOwn,
    /// Outside, and never a question (see [`Unasked`]).
    Unasked(Unasked),
    /// The human rejected it.
    Rejected,
    /// The question timed out.
    TimedOut,
    /// There was no one to ask.
    NoTerminal,
    /// The question was declined without asking: the agent's hook is
    /// installed and did not foresee the write.
    Declined,
    /// A hard link to a file outside the allowed set (it fails with `EXDEV`,
    /// as across file systems, without a question).
    LinkFromOutside,
    /// A `connect()` to a UNIX socket whose listener is outside the run.
    SocketOutside,
    /// A change of mode, owner, times or attributes whose file cannot be
    /// named: a path relative to a removed directory, or a descriptor whose
    /// path no longer reads back as its file.
    Unnamed,
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
    /// A git repository is being made below a workspace root (a `.git` in
    /// a subdirectory): its config and hooks are the program's, which
    /// sandgate does not hold; reported once per path.
    Repository {
        /// The new `.git`.
        path: PathBuf,
        /// The process.
        process: String,
    },
    /// Something went wrong in the supervisor (e.g. `sandbox.json` not writable).
    Error(String),
}

impl DenyReason {
    /// Whether a refusal for this reason is only logged, never shown while
    /// the program runs: sandgate's own files and the writes that are never
    /// questions.
    pub fn quiet(self) -> bool {
        matches!(self, DenyReason::SandgateOwn | DenyReason::Unasked(_))
    }

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
            DenyReason::SandgateOwn => format!(
                "`{}` is sandgate's own file, read-only to the confined program (its hooks send their records to the run instead)",
                path.display()
            ),
            DenyReason::Unasked(Unasked::Kernel) => {
                "a kernel pressure file: the program may watch memory pressure only by reading; refused without a question".into()
            }
            DenyReason::Unasked(Unasked::Memory) => {
                "another process's memory: writing there would change what it runs; refused without a question".into()
            }
            DenyReason::Unasked(Unasked::Desktop) => {
                "a desktop-integration path: an entry there would be run by the desktop outside the run; refused without a question".into()
            }
            DenyReason::Rejected => "rejected".into(),
            DenyReason::TimedOut => "no answer in time".into(),
            DenyReason::NoTerminal => "no terminal to ask (headless or --no-ui)".into(),
            DenyReason::Declined => {
                "refused without a question: the agent's sandgate hook is installed and did not foresee this write".into()
            }
            DenyReason::SocketOutside => format!(
                "the process listening on `{}` is not the program's: it would act for the program outside the run (a terminal multiplexer, a desktop bus, docker); list the socket in sandbox.json's `unixSockets` to allow it",
                path.display()
            ),
            DenyReason::Unnamed => {
                "which file it would change cannot be told (a path relative to a removed directory, or a file renamed or deleted since it was opened), and nothing else stops it outside the workspace".into()
            }
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
            Event::PermissionHint { .. } | Event::Repository { .. } | Event::Error(_) => {
                return None
            }
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

/// The attempt of `pid` at `op`, on `path`.
pub(super) fn attempt(pid: u32, op: &Op, path: &Path) -> Attempt {
    Attempt {
        pid,
        process: describe(pid),
        operation: op.verb().to_string(),
        path: path.to_path_buf(),
    }
}

/// `name (cmdline)` of a process, for questions and logs.
pub(super) fn describe(pid: u32) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_floor_refusal_names_every_floor_directory() {
        let why = DenyReason::Floor.describe(Path::new("/home/u/.ssh/config"));
        assert!(why.starts_with("`/home/u/.ssh/config` is beneath the built-in floor"));
        for entry in sandgate_policy::floor::FLOOR {
            assert!(why.contains(&format!("`~/{}`", entry.dir)), "{why}");
        }
    }

    #[test]
    fn a_process_is_described_by_its_name_and_command_line() {
        let me = describe(std::process::id());
        let comm = fs::read_to_string("/proc/self/comm").unwrap();
        assert!(me.starts_with(&format!("{} (", comm.trim())), "{me}");
        assert!(me.ends_with(')'), "{me}");
        assert!(
            me.chars().count() <= comm.trim().chars().count() + 3 + 120,
            "{me}"
        );
        // A process that is gone is still described, emptily.
        assert_eq!(describe(u32::MAX), " ()");
    }
}
