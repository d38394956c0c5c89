//! The binary's hook readers, built from its own source files: the payload
//! reader and the per-agent mappers need nothing of the binary but each
//! other, sandgate-policy and serde_json.

#![allow(dead_code, unused_imports)]

#[path = "../../crates/sandgate/src/agentcall/payload.rs"]
mod payload;
pub use payload::{parse_payload, InputError, Payload};

#[path = "../../crates/sandgate/src/agentcall/map.rs"]
pub mod map;
#[path = "../../crates/sandgate/src/agentcall/patch.rs"]
pub mod patch;
#[path = "../../crates/sandgate/src/agentcall/pattern.rs"]
pub mod pattern;

/// The property every hook target checks: reading `data` as a payload never
/// panics; a payload that reads has an absolute `cwd` and maps, through
/// `mapper` (the agent's), to the calls the policy judges or to an error in
/// words, and every call is judged without panicking.
pub fn check(
    data: &[u8],
    mapper: fn(
        &str,
        &serde_json::Map<String, serde_json::Value>,
        &str,
    ) -> Result<map::Gate, InputError>,
) {
    let Some(text) = crate::text(data) else {
        return;
    };
    let payload = match parse_payload(text) {
        Ok(p) => p,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    assert!(payload.cwd.starts_with('/'), "{text:?}");
    let t = crate::tree();
    match mapper(&payload.tool, &payload.input, &payload.cwd) {
        Ok(map::Gate::Calls(checks)) => {
            for check in checks {
                let _ = t.policy.evaluate(&check.call, &t.ctx);
            }
        }
        Ok(map::Gate::OutOfScope) => {}
        Err(e) => assert!(!e.to_string().is_empty(), "{text:?}"),
    }
}
