//! A compiled-policy cache entry is read back from a file anyone with the
//! user's rights can write: whatever it holds, loading through the cache
//! never panics. The first byte picks the entry and how the input is used:
//! as the whole file (its header is checked), or as the body under a header
//! with the right key and checksum, so that the body decoder itself is
//! reached.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sandgate_policy::cache::{load_with, CacheStatus};
use sha2::{Digest, Sha256};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let t = sandgate_fuzz::tree();
    let dir = t.home.join(".cache/sandgate");
    // A fresh entry, to learn its name and header.
    let (_, status) = load_with(&t.sources, &t.ctx, Some(&dir)).expect("the policy loads");
    assert_ne!(status, CacheStatus::Bypassed);
    // Every kind of entry (the policy, its tests' results, its globs): the
    // first byte picks one.
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("the cache directory")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cache"))
        .collect();
    entries.sort();
    assert!(!entries.is_empty(), "an entry");
    let entry = entries[usize::from(mode / 2) % entries.len()].clone();
    let bytes = if mode % 2 == 0 {
        rest.to_vec()
    } else {
        let old = std::fs::read(&entry).expect("the entry");
        let mut lines = old.split(|&b| b == b'\n');
        let mut header = Vec::new();
        for _ in 0..4 {
            header.extend_from_slice(lines.next().expect("a header line"));
            header.push(b'\n');
        }
        let sum: String = Sha256::digest(rest)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        header.extend_from_slice(sum.as_bytes());
        header.push(b'\n');
        header.extend_from_slice(rest);
        header
    };
    std::fs::write(&entry, &bytes).expect("write the entry");
    if let Ok((policy, _)) = load_with(&t.sources, &t.ctx, Some(&dir)) {
        let call = sandgate_policy::ToolCall::new(
            "exec_run",
            serde_json::json!({"command": "git status && cat ~/.ssh/id_rsa"}),
        );
        let _ = policy.evaluate(&call, &t.ctx);
    }
});
