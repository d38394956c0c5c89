//! The hook payload Claude Code writes on stdin: reading it never panics; a
//! payload that reads maps to the calls the policy judges, or to an error in
//! words, and every call is judged without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sandgate_fuzz::hook::{map, parse_payload};

fuzz_target!(|data: &[u8]| {
    let Some(text) = sandgate_fuzz::text(data) else {
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
    let t = sandgate_fuzz::tree();
    match map::claude(&payload.tool, &payload.input, &payload.cwd) {
        Ok(map::Gate::Calls(checks)) => {
            for check in checks {
                let _ = t.policy.evaluate(&check.call, &t.ctx);
            }
        }
        Ok(map::Gate::OutOfScope) => {}
        Err(e) => assert!(!e.to_string().is_empty(), "{text:?}"),
    }
});
