//! OS isolation for commands that the sandgate gate has allowed.
//!
//! The gate decides *whether* a command may run; isolation limits *what it
//! can touch* once it runs. The work is split in two:
//!
//! - [`plan`]: the one plan type ([`Plan`]), what a confined tree may read,
//!   write and reach, built for one command by a pure function from the
//!   merged settings (and for a whole agent by `sandgate-confine`);
//! - one small module per mechanism that turns the plan into something the
//!   OS enforces: [`landlock`] and [`seccomp`] (native Linux), [`bwrap`]
//!   (a bubblewrap command line), [`seatbelt`] (a macOS profile) and
//!   [`custom`] (a user-supplied wrapper template).
//!
//! [`Isolation`] ties them together: settings in, a [`std::process::Command`]
//! out, with the [`Enforcement`] level the caller can inspect and require.
//! The `unsafe` code of isolation is in the private `sys` module: the
//! `pre_exec` hook and the raw system calls it makes.
//!
//! One seccomp user-notification supervisor serves both scopes, one command
//! (exec isolation, MCP `exec_run`) and a whole agent (`sandgate run`, in
//! `sandgate-confine`): [`notify`] (installing the filter, the listener,
//! reading the caller's memory) and [`supervisor`] (the one notification
//! loop, the one decoder of the notified calls, the one performer of calls
//! on a caller's behalf, and the one place a caller's `connect` is made) are
//! shared; [`supervise`] (exec isolation's filter, listener hand-over and
//! scope of the loop) and [`protect`] (the protected paths missing at
//! start) are exec isolation's. Each of these
//! holds its own `unsafe` code. [`beneath`] (opening a judged path without
//! following a symlink, shared by `sandgate run` and the MCP file tools)
//! holds its own raw system calls, and [`mount`] the mount namespace calls
//! shared with `sandgate run`.
//!
//! ```no_run
//! use sandgate_sandbox::{Environment, Isolation};
//! use sandgate_policy::config::{IsolationConfig, IsolationMode};
//!
//! let config = IsolationConfig { mode: Some(IsolationMode::Landlock), ..Default::default() };
//! let env = Environment::new("/home/ann/proj".into(), "/home/ann".into());
//! let isolation = Isolation::new(Some(&config), true, &[], &env)?;
//! for notice in isolation.notices() {
//!     eprintln!("sandgate: {notice}");
//! }
//! let prepared = isolation.command("make test")?;
//! let mut command = prepared.command;
//! let mut child = command.spawn()?;
//! if let Some(supervision) = prepared.supervision {
//!     supervision.attach()?;
//! }
//! let status = child.wait()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]
// `unsafe` only in the modules whose documentation says so (each allows
// `unsafe_code` itself), and every block with its `SAFETY:` comment.
#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod beneath;
pub mod bpf;
pub mod bwrap;
pub mod custom;
pub mod enforcement;
pub mod floorlinks;
pub mod harden;
mod isolation;
pub mod landlock;
pub mod mount;
pub mod netns;
pub mod notify;
pub mod plan;
pub mod protect;
pub mod repository;
pub mod seatbelt;
pub mod seccomp;
pub mod supervise;
pub mod supervisor;
mod sys;

pub use enforcement::{Enforcement, EnforcementLevel};
pub use isolation::{
    Environment, Isolation, IsolationError, IsolationReport, Notice, NoticeLevel, Prepared, SHELL,
};
pub use plan::Plan;
pub use supervise::Supervision;
pub use sys::{drop_capabilities_in, landlock_abi, landlock_restrict_child};
