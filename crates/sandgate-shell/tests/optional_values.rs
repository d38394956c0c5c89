//! Options whose value is optional are read as their program reads them:
//! under GNU `getopt_long` and git's parse-options the value is only ever
//! attached (`--backup=numbered`, `-i.bak`), so a bare `cp --backup SRC DEST`
//! keeps `DEST` as an operand; under argparse and nopt a bare optional value
//! takes the next word unless it looks like an option. One table test per
//! registered grammar, for every one of its optional-value options, long
//! and short, bare, abbreviated and attached.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use sandgate_shell::options::{grammar_of, parse, Arg, OptName, Parsed, ParserKind, ValueKind};
use sandgate_shell::registry::grammars;

/// The words of `program [sub] rest…`, and where its options start.
fn words<'a>(program: &'a str, sub: Option<&'a str>, rest: &[&'a str]) -> (Vec<&'a str>, usize) {
    let mut w = vec![program];
    w.extend(sub);
    let start = w.len();
    w.extend_from_slice(rest);
    (w, start)
}

/// The option `name` as parsed, with its value's text.
fn option<'a>(parsed: &Parsed, words: &[&'a str], name: OptName) -> Option<Option<&'a str>> {
    parsed.args.iter().find_map(|a| match a {
        Arg::Opt { name: n, value, .. } if *n == name => Some(value.map(|v| v.text(words))),
        _ => None,
    })
}

fn operands<'a>(parsed: &Parsed, words: &[&'a str]) -> Vec<&'a str> {
    parsed.operands().into_iter().map(|i| words[i]).collect()
}

/// Whether a bare optional value takes the next word under this parser.
fn takes_next(parser: ParserKind) -> bool {
    matches!(parser, ParserKind::Argparse | ParserKind::Nopt)
}

/// The shortest prefix of `--name` the grammar reads as that option alone.
fn shortest_prefix(program: &str, sub: Option<&str>, name: &str) -> Option<String> {
    let g = grammar_of(program, sub)?;
    (1..name.len()).find_map(|n| {
        let p = &name[..n];
        let m = g.resolve_long(p);
        (m.len() == 1 && m[0].0 == name).then(|| p.to_string())
    })
}

#[test]
fn every_optional_value_of_every_program_parses_as_the_program_parses_it() {
    let mut failures = Vec::new();
    let mut count = 0;
    for g in grammars() {
        let sub = g.subcommand;
        let program = g.program;
        let next = takes_next(g.parser);
        let longs: Vec<&str> = g
            .longs()
            .filter(|(_, k)| *k == ValueKind::Optional)
            .map(|(n, _)| n)
            .collect();
        for name in longs {
            let mut spellings = vec![format!("--{name}")];
            if let Some(p) = shortest_prefix(program, sub, name) {
                spellings.push(format!("--{p}"));
            }
            for spelled in &spellings {
                count += 1;
                // Bare, before an operand.
                let (w, start) = words(program, sub, &[spelled, "OPERAND"]);
                let parsed = parse(g, &w, start);
                let got = option(&parsed, &w, OptName::Long(name));
                let ops = operands(&parsed, &w);
                let ok = if next {
                    got == Some(Some("OPERAND")) && ops.is_empty()
                } else {
                    got == Some(None) && ops == ["OPERAND"]
                };
                if !ok {
                    failures.push(format!(
                        "{program} {} {spelled} OPERAND: option {got:?}, operands {ops:?}",
                        sub.unwrap_or("")
                    ));
                }
                // Attached.
                let attached = format!("{spelled}=VALUE");
                let (w, start) = words(program, sub, &[&attached, "OPERAND"]);
                let parsed = parse(g, &w, start);
                let got = option(&parsed, &w, OptName::Long(name));
                let ops = operands(&parsed, &w);
                if got != Some(Some("VALUE")) || ops != ["OPERAND"] {
                    failures.push(format!(
                        "{program} {} {attached} OPERAND: option {got:?}, operands {ops:?}",
                        sub.unwrap_or("")
                    ));
                }
                // Bare before an option: never its value.
                let (w, start) = words(program, sub, &[spelled, "--", "OPERAND"]);
                let parsed = parse(g, &w, start);
                let got = option(&parsed, &w, OptName::Long(name));
                if got != Some(None) || operands(&parsed, &w) != ["OPERAND"] {
                    failures.push(format!(
                        "{program} {} {spelled} -- OPERAND: option {got:?}",
                        sub.unwrap_or("")
                    ));
                }
            }
        }
        let letters: Vec<char> = g
            .short
            .chars()
            .filter(|c| *c != ':' && g.short_kind(*c) == Some(ValueKind::Optional))
            .collect();
        for c in letters {
            count += 1;
            let bare = format!("-{c}");
            let (w, start) = words(program, sub, &[&bare, "OPERAND"]);
            let parsed = parse(g, &w, start);
            let got = option(&parsed, &w, OptName::Short(c));
            let ops = operands(&parsed, &w);
            let ok = if next {
                got == Some(Some("OPERAND")) && ops.is_empty()
            } else {
                got == Some(None) && ops == ["OPERAND"]
            };
            if !ok {
                failures.push(format!(
                    "{program} {} -{c} OPERAND: option {got:?}, operands {ops:?}",
                    sub.unwrap_or("")
                ));
            }
            let attached = format!("-{c}VALUE");
            let (w, start) = words(program, sub, &[&attached, "OPERAND"]);
            let parsed = parse(g, &w, start);
            let got = option(&parsed, &w, OptName::Short(c));
            let ops = operands(&parsed, &w);
            if got != Some(Some("VALUE")) || ops != ["OPERAND"] {
                failures.push(format!(
                    "{program} {} -{c}VALUE OPERAND: option {got:?}, operands {ops:?}",
                    sub.unwrap_or("")
                ));
            }
        }
    }
    assert!(count >= 150, "only {count} optional-value spellings");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The options the bug reports named, each with the program's own reading:
/// `(program, option as registered, value kind)`.
const NAMED: &[(&str, &str, ValueKind)] = &[
    ("cp", "backup", ValueKind::Optional),
    ("cp", "reflink", ValueKind::Optional),
    ("cp", "preserve", ValueKind::Optional),
    ("cp", "context", ValueKind::Optional),
    ("cp", "suffix", ValueKind::Required),
    ("cp", "target-directory", ValueKind::Required),
    ("mv", "backup", ValueKind::Optional),
    ("install", "backup", ValueKind::Optional),
    ("ln", "backup", ValueKind::Optional),
    ("tee", "output-error", ValueKind::Optional),
    ("rm", "interactive", ValueKind::Optional),
    ("rm", "preserve-root", ValueKind::Optional),
    ("sort", "check", ValueKind::Optional),
    ("sort", "output", ValueKind::Required),
    ("sed", "in-place", ValueKind::Optional),
    ("ls", "color", ValueKind::Optional),
    ("grep", "color", ValueKind::Optional),
    ("diff", "color", ValueKind::Optional),
    ("tail", "follow", ValueKind::Optional),
    ("du", "time", ValueKind::Optional),
];

#[test]
fn the_named_options_have_the_programs_value_kind() {
    for (program, name, kind) in NAMED {
        let g = grammar_of(program, None).expect(program);
        let got = g.longs().find(|(n, _)| n == name).map(|(_, k)| k);
        assert_eq!(got, Some(*kind), "{program} --{name}");
    }
    // `cp --preserve SRC ~/.bashrc` keeps its destination.
    let g = grammar_of("cp", None).unwrap();
    let w = ["cp", "--preserve", "SRC", "~/.bashrc"];
    let parsed = parse(g, &w, 1);
    assert_eq!(operands(&parsed, &w), ["SRC", "~/.bashrc"]);
    let w = ["cp", "--pres", "SRC", "~/.bashrc"];
    assert_eq!(operands(&parse(g, &w, 1), &w), ["SRC", "~/.bashrc"]);
    let w = ["cp", "--preserve=mode", "SRC", "~/.bashrc"];
    let parsed = parse(g, &w, 1);
    assert_eq!(
        option(&parsed, &w, OptName::Long("preserve")),
        Some(Some("mode"))
    );
    assert_eq!(operands(&parsed, &w), ["SRC", "~/.bashrc"]);
    // A required value takes the next word, attached or not, abbreviated or not.
    let g = grammar_of("sort", None).unwrap();
    for w in [
        &["sort", "--o=F", "x"][..],
        &["sort", "--out", "F", "x"],
        &["sort", "-oF", "x"],
        &["sort", "-ro", "F", "x"],
    ] {
        let parsed = parse(g, w, 1);
        assert_eq!(
            option(&parsed, w, OptName::Long("output")).or_else(|| option(
                &parsed,
                w,
                OptName::Short('o')
            )),
            Some(Some("F")),
            "{w:?}"
        );
        assert_eq!(operands(&parsed, w), ["x"], "{w:?}");
    }
}
