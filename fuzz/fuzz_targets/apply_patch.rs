//! Codex CLI's `apply_patch` bodies, in the tool's input and inside a shell
//! command: reading the file headers never panics, and every file found is
//! a header's text, trimmed, taken from the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sandgate_fuzz::hook::patch::{patch_files, shell_patch_files};

fuzz_target!(|data: &[u8]| {
    let Some(text) = sandgate_fuzz::text(data) else {
        return;
    };
    for (tool, path) in patch_files(text) {
        assert!(tool == "file_write" || tool == "file_edit", "{text:?}");
        assert_eq!(path, path.trim(), "{text:?}");
        assert!(text.contains(path.as_str()), "{text:?}: {path:?}");
    }
    let _ = shell_patch_files(text);
});
