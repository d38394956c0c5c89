//! Grants for unattended agent loops.
//!
//! An unattended loop cannot stop to ask for consent, and a loop that grants
//! itself blanket access is unsupervised. This crate computes the permission
//! rules a loop config actually needs ([`required`]): its programs, the file
//! tools inside the loop's own directory ([`LoopDir`]) and nowhere else, and
//! deny rules that keep those tools out of sandgate's floor. It shows them to a person
//! ([`render()`], the [`review`] page), and merges them once into the harness
//! settings ([`merge_into`]). The grant removes prompts; it is not the safety
//! mechanism — the loop's human checkpoints still stop and wait.
//!
//! It also runs a loop's script detectors ([`detect`]) and ships the
//! portability shim they source ([`COMPAT_SH`]).
//!
//! ```
//! use std::path::Path;
//!
//! let text = "providers:\n  providers:\n    - command: cargo\n\
//!             validations:\n  - detector:\n      script: {command: cargo, args: [test]}\n";
//! let config = sandgate_grant::parse_str(text, Path::new("loop.yaml"))?;
//! let dir = sandgate_grant::LoopDir::new(Path::new("/home/me/proj"), Path::new("/home/me"))?;
//! let grant = sandgate_grant::required(&config, &dir);
//! // The provider and the detector share a program: one rule, plus the file
//! // tools in the loop's directory.
//! assert_eq!(
//!     grant.allow.iter().map(String::as_str).collect::<Vec<_>>(),
//!     ["Bash(cargo:*)", "Edit(//home/me/proj/**)", "Read(//home/me/proj/**)"]
//! );
//! assert!(grant.deny.contains("Read(~/.ssh/**)"));
//! // The home directory itself would open the floor's parents: refused.
//! assert!(sandgate_grant::LoopDir::new(Path::new("/home/me"), Path::new("/home/me")).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod config;
pub mod detect;
pub mod merge;
pub mod render;
pub mod review;
pub mod rules;
pub mod shim;

pub use config::{load, parse_str, ConfigError, LoopConfig};
pub use merge::{merge_into, MergeError, MergeOutcome};
pub use render::{render, render_sandgate, CHECKPOINTS_STILL_STOP, NOTHING_ELSE};
pub use rules::{required, Grant, LoopDir, ScopeError};
pub use shim::COMPAT_SH;
