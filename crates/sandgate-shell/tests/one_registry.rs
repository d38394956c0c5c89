//! What the analysis knows about a program is one entry of one registry
//! (`sandgate_shell::registry::REGISTRY`): its grammar, its subcommands, and
//! what its options and operands do, with the behaviours only code can
//! implement named by the entry (`Special`). This test reads the source of
//! the walkers, the argv parser and the policy's path checks, and fails when
//! a string literal spelling a registered program's name appears outside the
//! registry (a `match name { "git" => … }`, an `if name == "sed"`, a table
//! of names): such a check would be a second place that knows the program.
//! The files read are the shell crate's modules, the policy's command gate
//! and path checks, and `sandgate audit`'s rule suggestions.
//!
//! It is a textual check: string literals in code (not in comments, not in
//! `#[cfg(test)]` modules) are compared with every registered name. Names
//! without a letter (`.`, `:`, `[`) are skipped, since the same spelling is
//! a path or punctuation everywhere; the few literals that spell a program's
//! name but mean something else are listed below with why.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use sandgate_shell::registry::REGISTRY;

/// (file, literal, why it is not a program check).
const NOT_PROGRAMS: &[(&str, &str, &str)] = &[
    (
        "sandgate-shell/src/kinds.rs",
        "command",
        "a tree-sitter-bash node kind",
    ),
    (
        "sandgate-shell/src/plain.rs",
        "time",
        "bash's reserved word `time`, which the plain-line shortcut leaves to the parser",
    ),
    (
        "sandgate/src/audit/suggest.rs",
        "command",
        "the `command` parameter of a tool call, and the kind of a rule",
    ),
];

/// The files that read commands: every module of the shell crate but the
/// registry, the policy's command gate and path checks, and the rule
/// suggestions of `sandgate audit`.
fn sources() -> Vec<PathBuf> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for dir in ["sandgate-shell/src", "sandgate-policy/src/pathwords"] {
        for e in std::fs::read_dir(crates.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    for f in ["command.rs", "pathwords.rs", "gate.rs"] {
        out.push(crates.join("sandgate-policy/src").join(f));
    }
    out.push(crates.join("sandgate/src/audit/suggest.rs"));
    out.retain(|p| {
        let name = p.file_name().unwrap().to_string_lossy();
        name != "registry.rs" && name != "tests.rs"
    });
    out.sort();
    assert!(out.len() >= 15, "{out:?}");
    out
}

/// The string literals of one line of code, outside `//` comments.
fn literals(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => break,
            // A char literal (`'"'`) is not a string's start.
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 3,
            b'\'' if b.get(i + 1) == Some(&b'\\') && b.get(i + 3) == Some(&b'\'') => i += 4,
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                out.push(line[start..i.min(line.len())].to_string());
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

#[test]
fn no_program_name_is_checked_outside_the_registry() {
    let names: Vec<&str> = REGISTRY
        .iter()
        .map(|e| e.name)
        .filter(|n| n.chars().any(|c| c.is_ascii_alphabetic()))
        .collect();
    assert!(names.len() > 150, "{} names", names.len());
    let mut found = Vec::new();
    let mut excused = vec![false; NOT_PROGRAMS.len()];
    for path in sources() {
        let text = std::fs::read_to_string(&path).unwrap();
        let shown = path.to_string_lossy().replace('\\', "/");
        let rel = shown.rsplit("/../").next().unwrap_or(&shown).to_string();
        // Test modules may name programs as much as they like.
        let code = text.split("#[cfg(test)]").next().unwrap_or(&text);
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for lit in literals(line) {
                if !names.contains(&lit.as_str()) {
                    continue;
                }
                if let Some(k) = NOT_PROGRAMS
                    .iter()
                    .position(|(f, l, _)| rel.ends_with(f) && *l == lit)
                {
                    excused[k] = true;
                    continue;
                }
                found.push(format!("{rel}:{}: \"{lit}\": {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "program names outside the registry (give the program's entry a field \
         or a `Special` behaviour instead):\n{}",
        found.join("\n")
    );
    for (k, used) in excused.iter().enumerate() {
        assert!(used, "{:?} is listed but no longer found", NOT_PROGRAMS[k]);
    }
}

/// The check finds what it is for.
#[test]
fn the_check_sees_a_program_name_in_code() {
    assert_eq!(
        literals(r#"    if name == "sed" { // "git""#),
        vec!["sed".to_string()]
    );
    assert_eq!(
        literals(r#"match c { '"' => "a\"b", _ => "find" }"#),
        vec!["a\\\"b".to_string(), "find".to_string()]
    );
}

/// The registry is in name order (the lookup is a binary search), each name
/// once, and each facet of an entry belongs to that entry's program.
#[test]
fn the_registry_is_sorted_and_each_facet_names_its_entry() {
    for pair in REGISTRY.windows(2) {
        assert!(
            pair[0].name < pair[1].name,
            "`{}` before `{}`",
            pair[0].name,
            pair[1].name
        );
    }
    for e in REGISTRY {
        assert_eq!(
            sandgate_shell::registry::entry_named(e.name).map(|f| f.name),
            Some(e.name)
        );
        if let Some(g) = &e.grammar {
            assert_eq!((g.program, g.subcommand), (e.name, None), "{}", e.name);
        }
        for g in e.subcommands {
            assert!(g.program == e.name && g.subcommand.is_some(), "{}", e.name);
        }
        if let Some(p) = &e.runs {
            assert_eq!(p.name, e.name);
        }
        if let Some(w) = &e.writes {
            assert_eq!(w.name, e.name);
        }
        for r in e.reads {
            assert_eq!(r.name, e.name);
        }
        if let Some(i) = &e.interpreter {
            assert_eq!(i.name, e.name);
        }
        if let Some(w) = &e.wrapper {
            assert_eq!(w.name, e.name);
        }
        for s in e.spellings {
            assert_eq!(s.program, e.name);
        }
        if let Some(a) = e.alias {
            let target = sandgate_shell::registry::entry_named(a);
            assert!(
                target.is_some_and(|t| t.grammar.is_some()),
                "`{}` is an alias of `{a}`, which has no grammar",
                e.name
            );
        }
    }
    assert!(sandgate_shell::registry::entry_named("no-such-program").is_none());
}
