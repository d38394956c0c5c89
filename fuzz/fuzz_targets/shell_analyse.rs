//! The shell analyser must never panic, whatever the input; its shortcut for
//! common lines (plain words, simple quoting, trailing redirections) must agree
//! with tree-sitter-bash; the program tables (writes, flag spellings, sed
//! scripts) must read whatever it finds without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sandgate_policy::shell::{analyse, analyse_with_parser, programs};

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
        assert!(!u.reason.to_string().is_empty());
    }
    // The program tables read every command without panicking, and what
    // they find lies inside the command's words.
    for c in &analysis.commands {
        if let Some(at) = c.command_at {
            assert!(at < c.words.len(), "{command:?}: {c:?}");
            let texts: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
            for w in programs::written(&texts, at) {
                assert!(w.word < texts.len(), "{command:?}: {w:?}");
                assert!(w.offset <= texts[w.word].len(), "{command:?}: {w:?}");
            }
            let _ = programs::spelled(&texts[at..]);
            for (i, script) in programs::sed_scripts(&texts, at) {
                assert!(i < texts.len());
                let _ = programs::sed_script(script);
            }
        }
    }
    let _ = programs::sed_script(command);
    assert_eq!(analysis, analyse_with_parser(command), "{command:?}");
});
