//! The policy loader must never panic on any file: it either parses or
//! names at least one problem, each in words with a position inside the
//! file; the first problem is what the one-problem reader reports; a file
//! that parses compiles into a policy or fails with problems, never a panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sandgate_policy::decision::Tier;
use sandgate_policy::load::{parse_policy, parse_policy_all, parse_policy_of};

fuzz_target!(|data: &[u8]| {
    let Some(text) = sandgate_fuzz::text(data) else {
        return;
    };
    let path = Path::new("/fuzz/permissions.yaml");
    // Lines as YAML counts them: `\r\n`, `\n` and a lone `\r` each end one.
    let breaks = text.matches('\n').count() + text.replace("\r\n", "\n").matches('\r').count();
    let lines = breaks as u32 + 1;
    match parse_policy_all(text, path) {
        Ok(_) => assert!(parse_policy(text, path).is_ok()),
        Err(problems) => {
            assert!(!problems.is_empty(), "{text:?}");
            for p in &problems {
                assert!(!p.message.is_empty(), "{text:?}: {p:?}");
                if let Some((line, _)) = p.position {
                    assert!(line >= 1 && line <= lines, "{text:?}: {p:?}");
                }
            }
            let first = parse_policy(text, path).expect_err("the same file fails");
            assert_eq!(first.message, problems[0].message, "{text:?}");
        }
    }
    let _ = parse_policy_of(text, path, Tier::Local);
});
