//! The registry's option grammars agree with the programs installed here:
//! for every GNU program and git subcommand the registry names, each long
//! option its `--help` (`git SUB -h`) lists at the start of a line is in
//! the grammar, with the value kind the help shows (`--name[=X]` optional
//! and only attached, `--name=X` or `--name <x>` required, else none).
//!
//! Under `CI=true` a program that is missing fails the test; elsewhere it
//! is skipped with a note.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/ci.rs"]
mod ci;
#[path = "../../../tests/support/wait.rs"]
mod wait;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use wait::Bounded;

use sandgate_shell::options::{grammar_of, ParserKind, ValueKind};
use sandgate_shell::registry::grammars;

/// What the help shows of an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Shown {
    Flag,
    Required,
    Optional,
}

/// Runs `program args` and returns its standard output, or `None` when it
/// is not installed. Killed (and the test failed) after 60 s.
fn help_of(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .env("LC_ALL", "C")
        .env("HOME", std::env::temp_dir())
        .env("GIT_PAGER", "cat")
        .env("PAGER", "cat")
        .current_dir(std::env::temp_dir())
        .output_within(Duration::from_secs(60))
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The long options a help text lists at the start of its lines
/// (`  -b, --backup[=CONTROL]`, `      --[no-]abbrev[=<n>]`), each with every
/// way it is shown.
fn listed(help: &str) -> BTreeMap<String, Vec<Shown>> {
    let mut out: BTreeMap<String, Vec<Shown>> = BTreeMap::new();
    for line in help.lines() {
        let t = line.trim_start();
        if t.len() == line.len() {
            continue;
        }
        // `-x, ` before the long option.
        let t = match t.as_bytes() {
            [b'-', c, b',', b' ', ..] if c.is_ascii_alphanumeric() => t[4..].trim_start(),
            _ => t,
        };
        let Some(rest) = t.strip_prefix("--") else {
            continue;
        };
        let rest = rest.strip_prefix("[no-]").unwrap_or(rest);
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(rest.len());
        let (name, after) = rest.split_at(end);
        // `diff --GTYPE-group-format=GFMT` stands for several options.
        if name.is_empty() || name.ends_with('-') || name.chars().any(|c| c.is_ascii_uppercase()) {
            continue;
        }
        let value_word = after
            .strip_prefix(' ')
            .and_then(|a| a.chars().next())
            .is_some_and(|c| matches!(c, '<' | '(' | '[') || c.is_ascii_uppercase())
            // `--[no-]path blob|tree`
            || after
                .strip_prefix(' ')
                .and_then(|a| a.split(' ').next())
                .is_some_and(|w| w.contains('|'));
        let shown = if after.starts_with("[=") {
            Shown::Optional
        } else if after.starts_with('=') || value_word {
            Shown::Required
        } else {
            Shown::Flag
        };
        out.entry(name.to_string()).or_default().push(shown);
    }
    out
}

/// The kind the program's parser gives an option shown these ways: shown
/// with an optional value, or both bare and with a value (`du --time`,
/// `du --time=WORD`), it is optional.
fn kind_of(shown: &[Shown]) -> ValueKind {
    let optional = shown.contains(&Shown::Optional)
        || (shown.contains(&Shown::Flag) && shown.contains(&Shown::Required));
    if optional {
        ValueKind::Optional
    } else if shown.contains(&Shown::Required) {
        ValueKind::Required
    } else {
        ValueKind::None
    }
}

fn check(
    program: &str,
    sub: Option<&str>,
    help: &str,
    failures: &mut Vec<String>,
    checked: &mut usize,
) {
    let g = grammar_of(program, sub).expect("registered");
    let full = match sub {
        Some(s) => format!("{program} {s}"),
        None => program.to_string(),
    };
    for (name, shown) in listed(help) {
        *checked += 1;
        let want = kind_of(&shown);
        match g.longs().find(|(n, _)| *n == name) {
            None => failures.push(format!(
                "`{full} --{name}` ({want:?}) is not in the grammar"
            )),
            Some((_, got)) if got != want => failures.push(format!(
                "`{full} --{name}`: help says {want:?}, grammar {got:?}"
            )),
            Some(_) => {}
        }
    }
}

fn missing(program: &str, failures: &mut Vec<String>) {
    if ci::under_ci() {
        failures.push(format!(
            "`{program}` is not installed; install it (coreutils, grep, sed, diffutils, findutils, tar, make, wget, git)"
        ));
    } else {
        eprintln!("skipped: `{program}` is not installed");
    }
}

/// The GNU programs whose `--help` lists their options one a line.
const GNU: &[&str] = &[
    "b2sum",
    "base64",
    "basename",
    "cat",
    "chgrp",
    "chmod",
    "chown",
    "cmp",
    "comm",
    "cp",
    "csplit",
    "cut",
    "date",
    "dd",
    "df",
    "diff",
    "dirname",
    "du",
    "env",
    "expand",
    "fmt",
    "fold",
    "grep",
    "head",
    "id",
    "install",
    "join",
    "ln",
    "ls",
    "make",
    "md5sum",
    "mkdir",
    "mktemp",
    "mv",
    "nice",
    "nl",
    "nohup",
    "od",
    "paste",
    "printenv",
    "pwd",
    "readlink",
    "realpath",
    "rm",
    "rmdir",
    "sed",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "shred",
    "shuf",
    "sort",
    "split",
    "stat",
    "stdbuf",
    "tac",
    "tail",
    "tar",
    "tee",
    "timeout",
    "touch",
    "tr",
    "truncate",
    "unexpand",
    "uniq",
    "unlink",
    "wc",
    "wget",
    "xargs",
];

#[test]
fn gnu_programs_grammars_match_their_help() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for program in GNU {
        let g = grammar_of(program, None).expect(program);
        assert!(
            matches!(g.parser, ParserKind::Gnu | ParserKind::GnuStop),
            "{program} is read as {:?}",
            g.parser
        );
        match help_of(program, &["--help"]) {
            Some(help) => check(program, None, &help, &mut failures, &mut checked),
            None => missing(program, &mut failures),
        }
    }
    assert!(checked >= 600, "only {checked} options checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn git_subcommands_grammars_match_their_help() {
    if help_of("git", &["--version"]).is_none() {
        let mut failures = Vec::new();
        missing("git", &mut failures);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        return;
    }
    let mut failures = Vec::new();
    let mut checked = 0;
    for g in grammars().filter(|g| g.program == "git") {
        // Shell scripts without parse-options' help (`git filter-branch -h`
        // sleeps ten seconds to warn).
        let Some(sub) = g
            .subcommand
            .filter(|s| !["filter-branch", "mergetool"].contains(s))
        else {
            continue;
        };
        let help = help_of("git", &[sub, "-h"]).unwrap_or_default();
        check("git", Some(sub), &help, &mut failures, &mut checked);
    }
    assert!(checked >= 600, "only {checked} options checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
