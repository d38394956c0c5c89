//! A long option written as an abbreviation of several of its program's
//! options (`grep --re`: `--recursive` or `--regexp`) cannot be read as the
//! program reads it: GNU `getopt_long`, git's parse-options and argparse
//! refuse it and the program fails, npm's nopt (or another build of the
//! program) reads it its own way. The analysis reports such a command as one
//! it cannot analyse, with a typed reason naming every option the word fits,
//! and still reads each of them (so deny rules see the widest reading). A
//! table of programs, then every ambiguous abbreviation of every registered
//! grammar that reads abbreviations.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use sandgate_shell::registry::grammars;
use sandgate_shell::{analyse, Reason};

/// The `AmbiguousOption` reasons of `line`: (program, option, candidates).
fn ambiguous(line: &str) -> Vec<(String, String, Vec<String>)> {
    analyse(line)
        .unanalysable
        .into_iter()
        .filter_map(|u| match u.reason {
            Reason::AmbiguousOption {
                program,
                option,
                candidates,
            } => Some((program, option, candidates)),
            _ => None,
        })
        .collect()
}

#[test]
fn ambiguous_abbreviations_cannot_be_analysed() {
    // (line, program, option, every candidate)
    let cases: &[(&str, &str, &str, &[&str])] = &[
        // GNU getopt_long.
        (
            "grep --re KEY src",
            "grep",
            "--re",
            &["--recursive", "--regexp"],
        ),
        ("sort --s x", "sort", "--s", &["--sort", "--stable"]),
        (
            "cp --re a b",
            "cp",
            "--re",
            &["--recursive", "--reflink", "--remove-destination"],
        ),
        ("rm --ver x", "rm", "--ver", &["--verbose", "--version"]),
        // An attached value does not make the name less ambiguous.
        (
            "grep --re=KEY src",
            "grep",
            "--re",
            &["--recursive", "--regexp"],
        ),
        // An alias is read by its program's grammar.
        (
            "egrep --re KEY src",
            "egrep",
            "--re",
            &["--recursive", "--regexp"],
        ),
        (
            "/bin/rm --ver x",
            "rm",
            "--ver",
            &["--verbose", "--version"],
        ),
        // git's parse-options, in a subcommand.
        (
            "git diff --no-e",
            "git diff",
            "--no-e",
            &["--no-exit-code", "--no-ext-diff"],
        ),
        // A command behind a wrapper, and inside `bash -c`.
        (
            "timeout 5 rm --ver x",
            "rm",
            "--ver",
            &["--verbose", "--version"],
        ),
        (
            "bash -c 'sort --s x'",
            "sort",
            "--s",
            &["--sort", "--stable"],
        ),
    ];
    for (line, program, option, candidates) in cases {
        let found = ambiguous(line);
        assert_eq!(found.len(), 1, "{line}: {found:?}");
        let (p, o, c) = &found[0];
        assert_eq!((p.as_str(), o.as_str()), (*program, *option), "{line}");
        assert_eq!(c, candidates, "{line}");
    }
    // Names with many candidates: each is listed.
    let (_, _, c) = &ambiguous("tar --ex -f x.tar")[0];
    assert!(c.contains(&"--extract".to_string()) && c.contains(&"--exclude".to_string()));
    let (p, _, c) = &ambiguous("npm install --sa x")[0];
    assert_eq!(p, "npm");
    assert!(c.contains(&"--save".to_string()) && c.contains(&"--save-dev".to_string()));
    let (p, _, c) = &ambiguous("pytest --col")[0];
    assert_eq!(p, "pytest");
    assert!(c.len() > 1, "{c:?}");
}

#[test]
fn the_reason_names_the_word_and_what_it_fits() {
    let a = analyse("grep --re KEY src");
    assert_eq!(a.unanalysable.len(), 1);
    assert_eq!(
        a.unanalysable[0].reason.to_string(),
        "`--re` abbreviates several options of `grep` (`--recursive`, `--regexp`): \
         the program may refuse it or read it as any of them"
    );
    // The command is still listed, read as each option would read it.
    assert_eq!(a.commands.len(), 1);
}

#[test]
fn wrappers_with_ambiguous_options() {
    // `timeout --ve` fits `--verbose` and `--version`, both flags: the
    // wrapped command is still found, and the line cannot be analysed.
    let a = analyse("timeout --ve 5 rm -rf x");
    assert!(matches!(
        &a.unanalysable[..],
        [u] if matches!(&u.reason, Reason::AmbiguousOption { program, option, .. }
            if program == "timeout" && option == "--ve")
    ));
    assert!(a.commands[0].forms.iter().any(|f| f.text == "rm -rf x"));
    // `env --i` fits `--ignore-environment` (a flag) and `--ignore-signal`
    // (an optional value): where the command starts is not known.
    let a = analyse("env --i X=1 rm x");
    assert!(matches!(
        &a.unanalysable[..],
        [u] if matches!(&u.reason, Reason::AmbiguousOption { program, .. } if program == "env")
    ));
}

#[test]
fn unambiguous_spellings_stay_analysable() {
    for line in [
        // A unique prefix, an exact name that prefixes others, a full name.
        "grep --recur KEY src",
        "rm --dir x",
        "sort --output=out.txt x",
        "cp --preserve=mode a b",
        // After `--` nothing is an option; an option's value is no option.
        "grep -- --re x",
        "grep -e --re x",
        "sort -o --s x",
        // A program whose parser takes only whole names reads `--re` as an
        // unknown option, not an abbreviation.
        "rg --hid KEY",
        // Short options are never abbreviations.
        "grep -rn KEY src",
        // An unknown program: no grammar, no abbreviations.
        "frobnicate --re x",
        "git diff --no-exit-code",
        "timeout --verbose 5 rm x",
    ] {
        assert!(ambiguous(line).is_empty(), "{line}: {:?}", ambiguous(line));
        assert!(analyse(line).is_complete(), "{line}: {:?}", analyse(line));
    }
}

/// Every registered grammar that reads abbreviations: for every long option,
/// its longest prefix that fits another option too (the spelling closest to
/// a unique one) makes the command unanalysable, naming both.
#[test]
fn every_ambiguous_abbreviation_of_every_grammar() {
    let mut count = 0;
    let mut failures = Vec::new();
    for g in grammars().filter(|g| g.parser.prefixes()) {
        let longs: Vec<&str> = g.longs().map(|(n, _)| n).collect();
        let mut seen = Vec::new();
        for name in &longs {
            let prefix = (1..name.len()).rev().map(|n| &name[..n]).find(|p| {
                !longs.contains(p) && longs.iter().filter(|o| o.starts_with(p)).count() > 1
            });
            let Some(prefix) = prefix else { continue };
            if seen.contains(&prefix) {
                continue;
            }
            seen.push(prefix);
            count += 1;
            let line = match g.subcommand {
                Some(sub) => format!("{} {sub} --{prefix} X", g.program),
                None => format!("{} --{prefix} X", g.program),
            };
            let found = ambiguous(&line);
            let want = format!("--{name}");
            let ok = matches!(&found[..], [(_, o, c)] if *o == format!("--{prefix}") && c.contains(&want) && c.len() > 1);
            if !ok {
                failures.push(format!("{line}: {found:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(count >= 300, "{count} ambiguous abbreviations");
}
