//! The sandgate decision engine.
//!
//! A [`Policy`] is compiled once from up to three policy files (managed, central,
//! local), merged tighten-only. [`Policy::evaluate`] maps a tool call to a
//! [`Decision`]: deny → allow → otherwise ask, always with the reason.
#![deny(missing_docs)]

pub mod config;
pub mod decision;

pub use decision::{Decision, List, Origin, RuleRef, Tier, Verdict};
