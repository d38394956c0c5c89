//! A compiled-policy cache entry is read back from a file anyone with the
//! user's rights can write: whatever it holds, loading through the cache
//! never panics. The first byte picks the entry (the policy, its tests'
//! results, its globs) and how the input is used: as the whole file (its
//! header is checked), or as the body under a header with the right key and
//! checksum, so that the body decoder itself is reached. Every entry is put
//! back as it was after each input, so that a run depends on its input only.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use sandgate_policy::cache::{load_with, CacheStatus};
use sha2::{Digest, Sha256};

/// The entries a fresh load writes, with their bytes.
fn pristine() -> &'static [(PathBuf, Vec<u8>)] {
    static ENTRIES: OnceLock<Vec<(PathBuf, Vec<u8>)>> = OnceLock::new();
    ENTRIES.get_or_init(|| {
        let t = sandgate_fuzz::tree();
        let dir = t.home.join(".cache/sandgate");
        let (_, status) = load_with(&t.sources, &t.ctx, Some(&dir)).expect("the policy loads");
        assert_ne!(status, CacheStatus::Bypassed);
        let mut entries: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
            .expect("the cache directory")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "cache"))
            .map(|p| {
                let bytes = std::fs::read(&p).expect("an entry");
                (p, bytes)
            })
            .collect();
        entries.sort();
        assert!(!entries.is_empty(), "a fresh load writes an entry");
        entries
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let t = sandgate_fuzz::tree();
    let dir = t.home.join(".cache/sandgate");
    let entries = pristine();
    let (entry, old) = &entries[usize::from(mode / 2) % entries.len()];
    let bytes = if mode % 2 == 0 {
        rest.to_vec()
    } else {
        // The entry's own magic, format, version and key, then the body's checksum.
        let mut header = Vec::new();
        for line in old.split(|&b| b == b'\n').take(4) {
            header.extend_from_slice(line);
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
    std::fs::write(entry, &bytes).expect("write the entry");
    if let Ok((policy, _)) = load_with(&t.sources, &t.ctx, Some(&dir)) {
        let call = sandgate_policy::ToolCall::new(
            "exec_run",
            serde_json::json!({"command": "git status && cat ~/.ssh/id_rsa"}),
        );
        let _ = policy.evaluate(&call, &t.ctx);
    }
    for (path, bytes) in entries {
        std::fs::write(path, bytes).expect("restore the entry");
    }
});
