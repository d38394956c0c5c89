//! The seccomp user-notification supervisor's shared parts, for both scopes
//! that supervise a confined tree: one command (exec isolation and MCP
//! `exec_run`: the `supervise` and `protect` modules) and a whole agent
//! (`sandgate run`, the `sandgate-confine` crate). Each scope installs its
//! own filter and judges by its own rules; what a notification is, how a
//! call is made for the caller and how a socket is connected for it are
//! here, once:
//!
//! - [`decode`]: the one decoder of the notified system calls
//!   ([`decode::Syscall`]);
//! - [`resolve`]: a decoded write's paths read from the caller, absolute or
//!   canonical as the caller would resolve them ([`perform::Op`]), with
//!   [`callerpath`] (`/proc/self` as the caller's) and [`callers`] (what is
//!   known about each calling thread: working directory, credentials,
//!   umask); [`metadata`]: what a metadata change acts on;
//! - [`perform`]: the one performer of calls on a caller's behalf
//!   ([`perform::act`]);
//! - [`connect`]: the one place a caller's `connect` is made, and where a
//!   network allow-list hooks in ([`direct`]: a TCP connect to an address
//!   decided by the allow-list and made from sandgate's namespace);
//! - [`lineage`]: `sandgate run`'s exec tracking: which process is the
//!   agent's own spawn of which command, and the grants bound to one;
//! - [`caller`]: the system calls that act for a caller (a copy of one of
//!   its descriptors, a path opened beneath a directory, a socket bound or
//!   connected with the address bytes as copied, a thread's own file-system
//!   context).
//!
//! The listener, the notifications and reading the caller's memory are
//! [`crate::notify`]'s.

pub mod caller;
pub mod callerpath;
pub mod callers;
pub mod connect;
pub mod decode;
pub mod direct;
pub mod lineage;
pub mod metadata;
pub mod perform;
pub mod resolve;
pub mod serve;
