//! The binary's ACP readers, built from its own source files: the framing
//! (`acp/frame.rs`) needs nothing else; the judge of ACP tool calls and
//! client methods (`acp/judge.rs`) needs the hooks' mapping, which
//! [`crate::hook`] builds.

#![allow(dead_code, unused_imports)]

#[path = "../../crates/sandgate/src/acp/frame.rs"]
pub mod frame;
#[path = "../../crates/sandgate/src/acp/judge.rs"]
pub mod judge;
