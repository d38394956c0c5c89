//! The hook payload Codex CLI writes on stdin (Claude Code's wire format,
//! with its own tools: `shell`, `apply_patch`): reading it never panics; a
//! payload that reads maps to the calls the policy judges, or to an error in
//! words, and every call is judged without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sandgate_fuzz::hook::{check, map};

fuzz_target!(|data: &[u8]| check(data, map::claude));
