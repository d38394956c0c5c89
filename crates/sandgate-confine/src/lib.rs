//! `sandgate run`: confine the writes of a whole process tree, and ask the
//! human when it reaches outside.
//!
//! Two layers:
//!
//! - **Landlock** (the hard floor) denies every write-class access except
//!   beneath the plan's rules ([`RunScope::rules`]). It is inherited by every
//!   descendant and cannot be lifted.
//! - **seccomp user notification** hands each write-class system call
//!   (write-opens, `mkdir`, `unlink`, `rename`, `link`, `symlink`,
//!   `truncate`, `mknod`), and each metadata change (`chmod`, `chown`,
//!   timestamps, extended attributes, which Landlock does not cover) to the
//!   [`Supervisor`] in the sandgate process,
//!   which continues it (Landlock then decides), fails it, asks the human,
//!   or performs it on the program's behalf when the policy allows what the
//!   floor would not. So an "allow" takes effect in place: no restart.
//!
//! The supervisor is `sandgate-sandbox`'s, shared with exec isolation: its
//! one decoder of the notified calls, its one performer of calls on the
//! program's behalf and its one `connect` made for the program
//! ([`sandgate_sandbox::supervisor`]). This crate holds what is only the
//! run's: its part of the one plan type ([`RunPlan`], which is
//! [`sandgate_sandbox::plan::Plan`] with the run's [`RunScope`]) and the
//! judgement and questions built on it, the run's filter, the mount layer, the preload fast path,
//! `sandbox.json` and the adoption of the program's orphans.
//!
//! Write-opens from dynamically linked programs skip that round trip when
//! Landlock allows them: the [`preload`] library marks them for the filter,
//! and retries a refused one unmarked, for the supervisor.
//!
//! The protected paths that exist at start are read-only bind mounts in the
//! program's own mount namespace ([`Protection::Mount`]), so the directories
//! around them keep Landlock rules of their own; where no namespace can be
//! made they are carved around instead ([`Protection::Carve`]).
//!
//! The plan is data ([`RunPlanExt::build`]); applying it is [`spawn()`].

#![deny(missing_docs)]
// `unsafe` only in the modules whose documentation says so (each allows
// `unsafe_code` itself), and every block with its `SAFETY:` comment.
#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod landlock;
mod mounts;
mod plan;
pub mod preload;
mod seccomp;
mod settings;
mod spawn;
mod supervisor;
mod unasked;

pub use mounts::{probe_plan as probe_mounts, Requested, UnknownProtection, PROTECTION_ENV};
pub use plan::{
    canonical_or_lexical, floor_file_readable, AllowKind, Allowed, FloorDir, FloorMount,
    Protection, Rule, RunAnswers, RunPlan, RunPlanExt, RunPlanInputs, RunScope, Standing,
    DEFAULT_STATE_DIRS,
};
pub use sandgate_sandbox::supervisor::decode::Change;
pub use sandgate_sandbox::supervisor::lineage::{pass_credentials, read_line_with_sender};
pub use sandgate_sandbox::supervisor::perform::Op;
pub use seccomp::{Listener, Notif, Ready};
pub use settings::{ListKind, SandboxFile, SandboxSettings, SettingsError, FILE_NAME, STATE_DIR};
pub use spawn::{
    adopt_orphans, clear_umask, forward_signals, hold_forwarded, reap_orphans, Confined,
    AROUND_CONFINEMENT, FORWARDED,
};
pub use supervisor::{Attempt, DenyReason, Event, Grants, Lineage, Reporter, Supervisor};
pub use unasked::Unasked;

use std::io;
use std::process::Command;

use serde::Serialize;

/// How strongly the confinement is enforced on this machine.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Mechanism {
    /// `landlock+seccomp-notify`.
    pub name: &'static str,
    /// The kernel's Landlock ABI (0: none).
    pub landlock_abi: u32,
    /// `full` (every write right handled, incl. truncate and cross-directory
    /// links), `partial` (an older ABI: some rights unhandled) or `none`.
    pub enforcement: &'static str,
    /// Whether answers are applied in place (always true: no restart).
    pub decide_in_place: bool,
    /// How protected paths inside allowed directories are held: `mount`
    /// (read-only bind mounts) or `carve` (see [`Protection`]).
    pub protection: Protection,
    /// Whether this build has the preload library of the write-open fast
    /// path (x86-64 Linux; see [`preload`]). A run uses it when it can put
    /// it beneath `~/.sandgate/`.
    pub write_open_fast_path: bool,
}

impl Mechanism {
    /// Probes the running kernel, for a plan that carves (see [`RunPlanExt::build`]).
    pub fn probe() -> Mechanism {
        Mechanism::probe_for(Protection::Carve)
    }

    /// Probes the running kernel; `protection` is the one in force.
    pub fn probe_for(protection: Protection) -> Mechanism {
        let abi = landlock::abi();
        Mechanism {
            name: "landlock+seccomp-notify",
            landlock_abi: abi,
            enforcement: match abi {
                0 => "none",
                1 | 2 => "partial",
                _ => "full",
            },
            decide_in_place: true,
            protection,
            write_open_fast_path: preload::LIBRARY.is_some(),
        }
    }
}

/// Why the program could not be started confined.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The kernel has no Landlock.
    #[error("this kernel has no Landlock support (it is needed for `sandgate run`); enable it or run unarmed")]
    NoLandlock,
    /// The Landlock ruleset could not be built.
    #[error("cannot build the Landlock ruleset: {0}")]
    Ruleset(io::Error),
    /// The mount layer could not be made (nothing was started).
    #[error("cannot hold the protected paths read-only with bind mounts: {0}")]
    Mounts(io::Error),
    /// The floor could be reached under another name (nothing was started).
    #[error("{0}")]
    FloorReach(String),
    /// The program could not be started.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The cause.
        source: io::Error,
    },
}

/// Starts `cmd` confined by `plan`. The caller then runs a [`Supervisor`] on
/// the returned listener and waits for the child. On
/// [`ConfineError::Mounts`] nothing was started: plan again with
/// [`Protection::Carve`] and spawn a fresh `Command` (this one keeps the
/// failed child setup).
pub fn spawn(cmd: &mut Command, plan: &RunPlan) -> Result<Confined, ConfineError> {
    let abi = landlock::abi();
    if abi == 0 {
        return Err(ConfineError::NoLandlock);
    }
    if let Some(why) = &plan.floor_unreachable {
        return Err(ConfineError::FloorReach(why.clone()));
    }
    // A descriptor open on the floor would pass every rule by path.
    let floor = sandgate_policy::floor::FloorInodes::collect(&plan.floor_roots);
    sandgate_sandbox::floorlinks::inherited(&floor)
        .map_err(|e| ConfineError::FloorReach(e.to_string()))?;
    let ruleset =
        landlock::build(&plan.rules, &plan.read_rules, abi).map_err(ConfineError::Ruleset)?;
    // Without the library the program is just as confined, only slower.
    preload::arm(cmd, plan);
    let mounts = mounts::setup_for(plan, cmd).map_err(ConfineError::Mounts)?;
    spawn::spawn(cmd, &ruleset, mounts).map_err(|e| match e {
        spawn::SpawnError::Mounts(e) => ConfineError::Mounts(e),
        spawn::SpawnError::Start(source) => ConfineError::Spawn {
            program: cmd.get_program().to_string_lossy().into_owned(),
            source,
        },
    })
}
