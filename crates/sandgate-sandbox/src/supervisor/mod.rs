//! The seccomp user-notification supervisor's shared parts, for both scopes
//! that supervise a confined tree: one command (exec isolation and MCP
//! `exec_run`: the `supervise` and `protect` modules) and a whole
//! agent (`sandgate run`, the `sandgate-confine` crate).
//!
//! - [`caller`]: acting for a supervised caller (a copy of one of its
//!   descriptors, a path opened beneath a directory, a socket bound or
//!   connected with the address bytes as copied);
//! - [`connect`]: the one place a supervised caller's `connect` is made,
//!   and where a network allow-list hooks in.
//!
//! The listener, the notifications and reading the caller's memory are
//! [`crate::notify`]'s.

pub mod caller;
pub mod connect;
