//! Options are read as each program's own parser reads them: a unique
//! prefix of a GNU long option is that option (`sort --o=F` is
//! `--output=F`, `grep --recur` is `--recursive`), and an optional value is
//! only ever attached (`cp --backup a DEST` keeps `DEST` as its
//! destination). Every abbreviated or bare spelling gets the verdict of the
//! full one, for the examples the oracle found and for every option the
//! tables of writers, tree readers and programs that run programs name.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod shell_common;

use sandgate_policy::shell::options::{grammar_of, ParserKind, ValueKind};
use sandgate_policy::shell::programs::{Runs, WrittenOperands};
use sandgate_policy::shell::reads::Roots;
use sandgate_policy::shell::registry::{programs, recursive_readers, writers};
use sandgate_policy::{Policy, ToolCall, Verdict};
use shell_common::Home;

use Verdict::{Allow, Ask, Deny};

/// The programs of the examples allowed by name, and only the project
/// (`./**`) as a path allow rule.
const POLICY: &str = r#"
permissions:
  paths:
    allow: ["./**"]
  commands:
    allow:
      - '^cp '
      - '^rm '
      - '^mv '
      - '^install '
      - '^tee '
      - '^sort( |$)'
      - '^wc( |$)'
      - '^grep '
      - '^cat '
      - '^diff '
      - '^ls( |$)'
      - '^du( |$)'
      - '^git commit '
"#;

/// Every command allowed: the verdict comes from the paths alone.
const ANY_COMMAND: &str = r#"
permissions:
  paths:
    allow: ["./**"]
  commands:
    allow: ['.*']
"#;

fn setup() -> Home {
    let home = Home::new();
    let h = &home.ctx.home;
    std::fs::create_dir_all(h.join(".ssh")).unwrap();
    std::fs::write(h.join(".ssh/id_rsa"), "SECRET KEY\n").unwrap();
    std::fs::write(h.join(".bashrc"), "# rc\n").unwrap();
    let p = &home.ctx.cwd;
    std::fs::write(p.join("a"), "a\n").unwrap();
    std::fs::write(p.join("README.md"), "readme\n").unwrap();
    home
}

fn verdict(policy: &Policy, home: &Home, command: &str) -> (Verdict, String) {
    let call = ToolCall::new("exec_run", serde_json::json!({ "command": command }));
    let d = policy.evaluate(&call, &home.ctx);
    (d.verdict, d.reason)
}

/// `(command, its full spelling, the verdict both get)`.
const EXAMPLES: &[(&str, &str, Verdict)] = &[
    // Class 10: optional values, only attached.
    ("cp --preserve a ~/.bashrc", "cp a ~/.bashrc", Ask),
    ("cp --backup a ~/.bashrc", "cp a ~/.bashrc", Ask),
    ("cp --reflink a ~/.bashrc", "cp a ~/.bashrc", Ask),
    ("cp --context a ~/.bashrc", "cp a ~/.bashrc", Ask),
    ("cp --preserve=all a ~/.bashrc", "cp a ~/.bashrc", Ask),
    ("cp --backup a b", "cp a b", Allow),
    ("mv --backup a ~/.bashrc", "mv a ~/.bashrc", Ask),
    ("install --backup a ~/.bashrc", "install a ~/.bashrc", Ask),
    ("tee --output-error ~/.bashrc", "tee ~/.bashrc", Ask),
    ("rm --interactive ~/.bashrc", "rm ~/.bashrc", Ask),
    ("rm --interactive=never ~/.bashrc", "rm ~/.bashrc", Ask),
    ("rm --preserve-root ~/.bashrc", "rm ~/.bashrc", Ask),
    ("cp -S .bak a ~/.bashrc", "cp a ~/.bashrc", Ask),
    // Class 2: abbreviated long options.
    ("sort --o=README.md a", "sort -o README.md a", Allow),
    ("sort --o=../out.txt a", "sort -o ../out.txt a", Ask),
    (
        "sort --ou ../../pwned.txt a",
        "sort -o ../../pwned.txt a",
        Ask,
    ),
    ("sort --outp=~/.bashrc a", "sort --output=~/.bashrc a", Ask),
    ("sort --files0=-", "sort --files0-from=-", Ask),
    ("wc --files0-f=-", "wc --files0-from=-", Ask),
    ("du --files0-fr=-", "du --files0-from=-", Ask),
    ("grep --dir=rec KEY ~", "grep -r KEY ~", Deny),
    ("grep --recur KEY ~", "grep -r KEY ~", Deny),
    ("diff --rec -N ~ .", "diff -r -N ~ .", Deny),
    ("ls --recursive --almost ~", "ls -R -A ~", Ask),
    ("du --al ~", "du -a ~", Ask),
    (
        "sort --comp=touch a",
        "sort --compress-program=touch a",
        Ask,
    ),
    ("sort --temp=. a", "sort -T . a", Allow),
    ("cp --target=.. a", "cp --target-directory=.. a", Ask),
    ("cp --t=.. a", "cp -t .. a", Ask),
    ("ls --recursive src", "ls -R src", Allow),
    // A message is no path, however its option is spelled.
    (
        "git commit --mess \"$(cat notes)\"",
        "git commit --message \"$(cat notes)\"",
        Allow,
    ),
    (
        "git commit -am \"$MSG\"",
        "git commit -a -m \"$MSG\"",
        Allow,
    ),
    (
        "git commit --mess=\"$MSG\"",
        "git commit -m \"$MSG\"",
        Allow,
    ),
];

#[test]
fn the_examples_get_the_verdict_of_their_full_spelling() {
    let home = setup();
    let policy = home.policy(POLICY, None);
    let mut failures = Vec::new();
    for (command, full, want) in EXAMPLES {
        let (got, why) = verdict(&policy, &home, command);
        let (full_got, full_why) = verdict(&policy, &home, full);
        if got != *want || full_got != *want {
            failures.push(format!(
                "{command:?}: {got} ({why}); {full:?}: {full_got} ({full_why}); want {want}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The shortest prefix of `--name` that the grammar of `program` reads as it.
fn shortest_prefix(program: &str, sub: Option<&str>, name: &str) -> Option<String> {
    let g = grammar_of(program, sub)?;
    if g.parser == ParserKind::Exact {
        return None;
    }
    (1..name.len()).find_map(|n| {
        let p = &name[..n];
        let m = g.resolve_long(p);
        (m.len() == 1 && m[0].0 == name).then(|| p.to_string())
    })
}

/// For every long option the tables say something about, of every program
/// whose parser reads abbreviations, the shortest abbreviation gets the
/// full option's verdict, and so does every spelling of an optional value.
#[test]
fn every_named_option_abbreviated_reads_as_in_full() {
    let home = setup();
    let policy = home.policy(ANY_COMMAND, None);
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut add =
        |program: &str, sub: Option<&str>, option: &str, shape: &dyn Fn(&str) -> String| {
            let (opt, value) = match option.split_once(' ') {
                Some((o, v)) => (o, Some(v)),
                None => (option, None),
            };
            let Some(name) = opt.strip_prefix("--") else {
                return;
            };
            let Some(short) = shortest_prefix(program, sub, name) else {
                return;
            };
            let spell = |n: &str| match value {
                Some(v) => format!("--{n}={v}"),
                None => format!("--{n}"),
            };
            pairs.push((shape(&spell(&short)), shape(&spell(name))));
            if let Some(v) = value {
                // GNU reads an abbreviated value too (`--directories=rec`).
                pairs.push((
                    shape(&format!("--{short}={}", &v[..3])),
                    shape(&spell(name)),
                ));
            }
        };
    for w in writers() {
        let base = |opt: &str| match w.operands {
            WrittenOperands::Last => format!("{} {opt} ~ ../dest", w.name),
            WrittenOperands::AllButFirst => format!("{} {opt} 644 ~", w.name),
            _ => format!("{} {opt} ~", w.name),
        };
        for o in w.recursive {
            add(w.name, None, o, &base);
        }
        for o in w.writes_value {
            add(w.name, None, o, &|opt: &str| {
                format!("{} {opt}=../out a", w.name)
            });
        }
    }
    for r in recursive_readers() {
        let sub = r.subcommand.filter(|_| r.name == "git");
        // A recursive option with an option that reads dot-files, and the other way round.
        let hidden = r.hidden.unwrap_or_default();
        for (options, other) in [(r.recursive, hidden.first()), (hidden, r.recursive.first())] {
            let shape = |opt: &str| {
                let mut prog = match sub {
                    Some(s) => format!("git {s}"),
                    None => r.name.to_string(),
                };
                if let Some(o) = other {
                    prog = format!("{prog} {}", o.replace(' ', "="));
                }
                match r.roots {
                    Roots::AfterPattern(_) => format!("{prog} {opt} KEY ~"),
                    Roots::AllButLast => format!("{prog} {opt} ~ ../dest"),
                    Roots::AllButFirst => format!("{prog} {opt} out ~"),
                    _ => format!("{prog} {opt} ~ ."),
                }
            };
            for o in options {
                add(r.name, sub, o, &shape);
            }
        }
    }
    for p in programs() {
        for o in p.options.iter().filter(|o| !o.name.is_empty()) {
            let shape = |opt: &str| match o.runs {
                Runs::Script | Runs::ScriptWords => format!("{} {opt}='cat x' y", p.name),
                _ => format!("{} {opt}=x y", p.name),
            };
            add(p.name, None, o.name, &shape);
        }
    }
    assert!(pairs.len() >= 40, "{} pairs", pairs.len());
    let mut failures = Vec::new();
    for (short, full) in &pairs {
        let (got, why) = verdict(&policy, &home, short);
        let (want, full_why) = verdict(&policy, &home, full);
        if got != want || want == Allow {
            failures.push(format!(
                "{short:?}: {got} ({why}); {full:?}: {want} ({full_why})"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} pairs differ or allow:\n{}",
        failures.len(),
        pairs.len(),
        failures.join("\n")
    );
}

/// Every optional-value option of every writer, bare, abbreviated and with
/// its value attached, keeps the write its command makes without it.
#[test]
fn every_optional_value_of_a_writer_keeps_its_operands() {
    let home = setup();
    let policy = home.policy(ANY_COMMAND, None);
    let mut failures = Vec::new();
    let mut count = 0;
    for w in writers() {
        let Some(g) = grammar_of(w.name, None) else {
            failures.push(format!("`{}` has no grammar", w.name));
            continue;
        };
        let base = match w.operands {
            WrittenOperands::Last => "a ~/.bashrc",
            WrittenOperands::AllButFirst => "644 ~/.bashrc",
            WrittenOperands::None if w.name == "sort" => "-o ~/.bashrc a",
            WrittenOperands::None => "of=~/.bashrc",
            WrittenOperands::All => "~/.bashrc",
        };
        let plain = format!("{} {base}", w.name);
        let (want, why) = verdict(&policy, &home, &plain);
        assert_eq!(want, Ask, "{plain}: {why}");
        let mut spellings = Vec::new();
        for (name, kind) in g.longs() {
            if kind == ValueKind::Optional {
                spellings.push(format!("--{name}"));
                spellings.push(format!("--{name}=x"));
                if let Some(p) = shortest_prefix(w.name, None, name) {
                    spellings.push(format!("--{p}"));
                }
            }
        }
        let letters: Vec<char> = g.short.chars().filter(|c| *c != ':').collect();
        for c in letters {
            if g.short_kind(c) == Some(ValueKind::Optional) {
                spellings.push(format!("-{c}"));
                spellings.push(format!("-{c}x"));
            }
        }
        for s in spellings {
            count += 1;
            let command = format!("{} {s} {base}", w.name);
            let (got, why) = verdict(&policy, &home, &command);
            if got != want {
                failures.push(format!("{command:?}: {got} ({why}), want {want}"));
            }
        }
    }
    assert!(count >= 30, "{count} spellings");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
