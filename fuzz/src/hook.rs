//! The binary's hook readers, built from its own source files: the payload
//! reader and the per-agent mappers need nothing of the binary but each
//! other, sandgate-policy and serde_json.

#![allow(dead_code, unused_imports)]

#[path = "../../crates/sandgate/src/hook/payload.rs"]
mod payload;
pub use payload::{parse_payload, InputError, Payload};

#[path = "../../crates/sandgate/src/hook/map.rs"]
pub mod map;
#[path = "../../crates/sandgate/src/hook/patch.rs"]
pub mod patch;
#[path = "../../crates/sandgate/src/hook/pattern.rs"]
pub mod pattern;
