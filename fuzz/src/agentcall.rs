//! The paths `acp/judge.rs` names the hooks' mapping by
//! (`crate::agentcall::…`), pointing at the copies [`crate::hook`] builds.

pub use crate::hook::{map, InputError};
