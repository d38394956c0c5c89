//! The sandgate decision engine.
//!
//! A [`Policy`] is compiled once from up to three policy files (managed, central,
//! local), merged tighten-only. [`Policy::evaluate`] maps a tool call to a
//! [`Decision`]: deny → allow → otherwise ask, always with the reason.
//!
//! ```
//! use sandgate_policy::{Context, Policy, Sources, ToolCall, Verdict};
//! let dir = std::env::temp_dir();
//! let ctx = Context::new(&dir, &dir).unwrap();
//! let policy = Policy::load(&Sources::default(), &ctx).unwrap();
//! let call = ToolCall::new("file_read", serde_json::json!({"path": "~/.ssh/id_rsa"}));
//! assert_eq!(policy.evaluate(&call, &ctx).verdict, Verdict::Deny);
//! ```
//!
//! The engine does no IO beyond reading policy files and resolving paths, and
//! starts no async runtime. What a decision reads from the file system besides
//! resolving paths (what is at a file tool's path, patterns expanded, the
//! floor's inodes, the files deny rules name) goes through one [`disk::Disk`], which the policy holds
//! ([`Policy::with_disk`]).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod ask;
pub mod atomic;
pub mod cache;
pub mod canon;
mod command;
pub mod config;
pub mod coverage;
pub mod credentials;
pub mod decision;
pub mod disk;
pub mod error;
pub mod floor;
mod gate;
pub mod lint;
pub mod load;
pub mod network;
mod pathwords;
pub mod persist;
pub mod policy;
mod prefilter;
pub mod protected;
pub mod remove;
pub mod request;
pub mod rules;
pub mod selftest;
pub mod validate;

pub use decision::{
    Access, CommandExplanation, Decision, List, Origin, Part, PartKind, RuleRef, Tier, Verdict,
};
pub use error::{LoadError, Problem};
pub use floor::{FloorEntry, FLOOR};
pub use load::Sources;
pub use pathwords::{brace_expand_within, component_matches};
pub use policy::{Policy, Settings};
pub use request::{Context, RequestError, ToolCall, ToolKind};
/// The shell analysis (the `sandgate-shell` crate), which the command gate
/// judges.
pub use sandgate_shell as shell;
