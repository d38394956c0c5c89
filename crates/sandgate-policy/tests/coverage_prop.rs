//! Properties of what lint and `policy allow` decide about rules: a regex
//! called impossible matches no command, a `^literal` form said to cover
//! another matches every command the other matches, a glob said to cover
//! another matches every path the other matches, and a regex said to match
//! every command matches any command.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use proptest::prelude::*;
use regex::Regex;
use sandgate_policy::coverage::{glob_covers, matches_every_command, never_matches, CommandForm};

/// Regex pieces, anchors and impossible bits included.
const PIECES: &[&str] = &[
    "^",
    "$",
    "\\A",
    "\\z",
    "a",
    "b",
    "ls",
    " ",
    "x",
    ".",
    ".*",
    "[^\\s\\S]",
    "(a|b)",
    "(a|^b)",
    "(ls$)",
    "a?",
    "(^)*",
    "\\s",
    "\\b",
    "(?m)^",
    "[ab]",
    "( |$)",
    "(\\s|$)",
    "-",
];

/// Commands drawn from the same letters, so pieces can match them.
fn command() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        proptest::sample::select(vec!["a", "b", "ls", " ", "x", "-", "\n", "\t"]),
        1..6,
    )
    .prop_map(|parts| parts.concat())
}

fn regex() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(PIECES.to_vec()), 1..5)
        .prop_map(|parts| parts.concat())
}

const LITERALS: &[&str] = &["ls", "ls ", "ls -a", "lsx", "git", "git status", "l"];

fn form() -> impl Strategy<Value = String> {
    (
        proptest::sample::select(LITERALS.to_vec()),
        proptest::sample::select(vec!["", "$", "( |$)", "(\\s|$)", " .*", "x"]),
    )
        .prop_map(|(l, t)| format!("^{}{t}", regex::escape(l)))
}

fn form_command() -> impl Strategy<Value = String> {
    (
        proptest::sample::select(LITERALS.to_vec()),
        proptest::sample::select(vec!["", " ", " -l", "\t-l", "x", "k"]),
    )
        .prop_map(|(l, t)| format!("{l}{t}"))
}

const GLOBS: &[&str] = &[
    "/srv/**",
    "/srv/data/**",
    "/srv/*",
    "/srv/*.txt",
    "/srv/data/a.txt",
    "/srv",
    "/**",
    "/s*/**",
    "/srv/data",
    "/srvx/**",
    "/srv/**/*.txt",
];
const PATHS: &[&str] = &[
    "/srv",
    "/srv/a.txt",
    "/srv/data",
    "/srv/data/a.txt",
    "/srv/data/b/c.txt",
    "/srvx/a",
    "/etc/x",
    "/srv/b",
];

fn matches_glob(glob: &str, path: &str) -> bool {
    let variants = std::iter::once(glob.to_string()).chain(glob.strip_suffix("/**").map(|d| {
        if d.is_empty() {
            "/".into()
        } else {
            d.to_string()
        }
    }));
    variants.into_iter().any(|g| {
        globset::GlobBuilder::new(&g)
            .literal_separator(true)
            .build()
            .unwrap()
            .compile_matcher()
            .is_match(Path::new(path))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn an_impossible_regex_matches_no_command(pattern in regex(), commands in proptest::collection::vec(command(), 16)) {
        let Ok(re) = Regex::new(&pattern) else { return Ok(()) };
        if let Some(why) = never_matches(&pattern) {
            for c in &commands {
                prop_assert!(!re.is_match(c), "{pattern:?} ({why}) matches {c:?}");
            }
        }
    }

    #[test]
    fn every_command_means_any_command(pattern in regex(), c in command()) {
        // A blank command is denied before any rule is asked.
        prop_assume!(!c.trim().is_empty());
        let Ok(re) = Regex::new(&pattern) else { return Ok(()) };
        if matches_every_command(&re) {
            prop_assert!(re.is_match(&c), "{pattern:?} misses {c:?}");
        }
    }

    #[test]
    fn a_covering_form_matches_all_the_covered_one_does(broad in form(), narrow in form(), c in form_command()) {
        let (Some(b), Some(n)) = (CommandForm::of(&broad), CommandForm::of(&narrow)) else {
            return Ok(());
        };
        if b.covers(&n) && Regex::new(&narrow).unwrap().is_match(&c) {
            prop_assert!(Regex::new(&broad).unwrap().is_match(&c), "{broad:?} covers {narrow:?} but misses {c:?}");
        }
    }
}

#[test]
fn a_covering_glob_matches_all_the_covered_one_does() {
    for broad in GLOBS {
        for narrow in GLOBS {
            if !glob_covers(broad, narrow) {
                continue;
            }
            for path in PATHS {
                if matches_glob(narrow, path) {
                    assert!(
                        matches_glob(broad, path),
                        "{broad} covers {narrow} but misses {path}"
                    );
                }
            }
        }
    }
}
