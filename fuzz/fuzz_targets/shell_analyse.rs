//! The shell analyser must never panic, whatever the input; its shortcut for
//! common lines (plain words, simple quoting, trailing redirections) must agree
//! with tree-sitter-bash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sandgate_policy::shell::{analyse, analyse_with_parser};

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    let analysis = analyse(command);
    for c in &analysis.commands {
        // Every simple command has something an allow rule can be matched against.
        assert!(c.allow_forms().next().is_some(), "{command:?}: {c:?}");
        assert!(!c.forms.is_empty());
    }
    for u in &analysis.unanalysable {
        assert!(!u.reason.is_empty());
    }
    assert_eq!(analysis, analyse_with_parser(command), "{command:?}");
});
