//! The analyser, case by case: what each construct yields.

use super::*;

/// Normalized texts of every simple command.
fn commands(src: &str) -> Vec<String> {
    analyse(src)
        .commands
        .into_iter()
        .map(|c| c.normalized)
        .collect()
}

/// Innermost forms of every simple command.
fn unwrapped(src: &str) -> Vec<String> {
    analyse(src)
        .commands
        .iter()
        .map(|c| c.unwrapped().to_string())
        .collect()
}

fn targets(src: &str) -> Vec<String> {
    analyse(src)
        .redirects
        .into_iter()
        .map(|r| r.target)
        .collect()
}

/// What could not be analysed, in words.
fn reasons(src: &str) -> Vec<String> {
    analyse(src)
        .unanalysable
        .into_iter()
        .map(|u| u.reason.to_string())
        .collect()
}

/// What could not be analysed, typed.
fn typed(src: &str) -> Vec<Reason> {
    analyse(src)
        .unanalysable
        .into_iter()
        .map(|u| u.reason)
        .collect()
}

fn complete(src: &str) -> bool {
    let a = analyse(src);
    if !a.is_complete() {
        eprintln!("{src:?}: {:?}", a.unanalysable);
    }
    a.is_complete()
}

/// Asserts that `line` takes the shortcut for plain lines (`plain`) or not,
/// and that the shortcut and tree-sitter-bash analyse it alike.
fn analysed_alike(line: &str, plain: bool) {
    assert_eq!(
        super::plain::plain_commands(line).is_some(),
        plain,
        "{line:?}: shortcut taken: {}",
        !plain
    );
    assert_eq!(analyse(line), analyse_with_parser(line), "{line:?}");
}

#[test]
fn lists_and_pipelines() {
    for (src, want) in [
        ("git status; rm -rf ~", &["git status", "rm -rf ~"][..]),
        ("a && b || c & d", &["a", "b", "c", "d"]),
        ("a\nb\n\nc", &["a", "b", "c"]),
        ("a | b |& c", &["a", "b", "c"]),
        ("! a | b", &["a", "b"]),
        ("a;b", &["a", "b"]),
    ] {
        assert_eq!(commands(src), want, "{src:?}");
        assert!(complete(src), "{src:?}");
    }
}

#[test]
fn compound_commands() {
    for (src, want) in [
        ("(a; b) && { c; }", &["a", "b", "c"][..]),
        (
            "if a; then b; elif c; then d; else e; fi",
            &["a", "b", "c", "d", "e"],
        ),
        ("for i in x y; do b $i; done", &["b $i"]),
        ("for ((i=0; i<3; i++)); do b; done", &["b"]),
        (
            "while a; do b; done; until c; do d; done",
            &["a", "b", "c", "d"],
        ),
        ("case $x in a) b;; *) c;; esac", &["b", "c"]),
        ("f() { rm x; }; f", &["rm x", "f"]),
        ("function g { h; }", &["h"]),
        ("[[ -f x ]] && y", &["y"]),
        ("(( i++ )) || z", &["z"]),
        ("select x in a b; do c; done", &["c"]),
    ] {
        assert_eq!(commands(src), want, "{src:?}");
        assert!(complete(src), "{src:?}");
    }
}

#[test]
fn substitutions_everywhere() {
    for (src, inner) in [
        ("ls $(rm -rf /)", "rm -rf /"),
        ("ls `rm -rf /`", "rm -rf /"),
        ("cat <(rm x)", "rm x"),
        ("tee >(rm x)", "rm x"),
        ("FOO=$(curl x) git status", "curl x"),
        ("echo ${x:-$(curl x)}", "curl x"),
        ("echo \"a $(curl x) b\"", "curl x"),
        ("echo $((1 + $(curl x)))", "curl x"),
        ("echo hi > $(curl x)", "curl x"),
        ("export A=$(curl x)", "curl x"),
        ("A=$(curl x)", "curl x"),
        ("[[ $(curl x) ]]", "curl x"),
        ("for f in $(curl x); do :; done", "curl x"),
        ("case $(curl x) in *) ;; esac", "curl x"),
        ("cat <<EOF\n$(curl x)\nEOF", "curl x"),
        ("echo $(echo $(curl x))", "curl x"),
        ("echo a`curl x`b", "curl x"),
    ] {
        assert!(
            commands(src).contains(&inner.to_string()),
            "{src:?}: {:?}",
            commands(src)
        );
    }
}

#[test]
fn quote_removal() {
    for (src, want) in [
        ("r''m -rf /", "rm -rf /"),
        ("\\rm -rf /", "rm -rf /"),
        ("\"rm\" '-rf' /", "rm -rf /"),
        ("r\"m\" -r\\f /", "rm -rf /"),
        ("$'\\x72m' -rf /", "rm -rf /"),
        ("rm   -rf    /", "rm -rf /"),
        ("echo 'a b'", "echo a b"),
        ("echo \"a\\\"b\"", "echo a\"b"),
        ("echo a\\ b", "echo a b"),
        ("echo $\"x\"", "echo x"),
        ("echo \"$HOME\"/x", "echo $HOME/x"),
        ("rm -rf \\\n /", "rm -rf /"),
    ] {
        assert_eq!(commands(src), [want], "{src:?}");
    }
}

#[test]
fn source_and_normalized_forms_are_kept() {
    let a = analyse("r''m  -rf /");
    let c = &a.commands[0];
    assert_eq!(c.source, "r''m  -rf /");
    assert_eq!(c.normalized, "rm -rf /");
    let kinds: Vec<FormKind> = c.forms.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            FormKind::Source,
            FormKind::Normalized,
            FormKind::Spelling,
            FormKind::Spelling
        ]
    );
    assert_eq!(c.forms[2].text, "rm -f -r /");
    assert_eq!(c.forms[3].text, "rm -r -f /", "each flag also first");
}

#[test]
fn wrappers_are_stripped() {
    for (src, want) in [
        ("timeout 5 rm -rf /", "rm -rf /"),
        ("timeout -s KILL 5 rm -rf /", "rm -rf /"),
        ("nice rm -rf /", "rm -rf /"),
        ("nice -n 5 rm -rf /", "rm -rf /"),
        ("env X=1 rm -rf /", "rm -rf /"),
        ("env -i X=1 Y=2 rm -rf /", "rm -rf /"),
        ("command rm -rf /", "rm -rf /"),
        ("builtin cd /", "cd /"),
        ("exec rm -rf /", "rm -rf /"),
        ("nohup rm -rf / &", "rm -rf /"),
        ("time rm -rf /", "rm -rf /"),
        ("stdbuf -oL rm -rf /", "rm -rf /"),
        ("ionice -c 3 rm -rf /", "rm -rf /"),
        ("xargs -0 -n1 rm -rf", "rm -rf"),
        ("sudo -u root rm -rf /", "rm -rf /"),
        ("doas rm -rf /", "rm -rf /"),
        ("X=1 Y=2 rm -rf /", "rm -rf /"),
        ("sudo env X=1 timeout 5 nice -n 1 rm -rf /", "rm -rf /"),
        ("/usr/bin/rm -rf /", "rm -rf /"),
        ("/usr/bin/timeout 5 /bin/rm -rf /", "rm -rf /"),
    ] {
        assert_eq!(unwrapped(src), [want], "{src:?}");
        assert!(complete(src), "{src:?}");
    }
}

#[test]
fn every_layer_is_a_form() {
    let a = analyse("sudo timeout 5 rm x");
    let texts: Vec<(&str, FormKind)> = a.commands[0]
        .forms
        .iter()
        .map(|f| (f.text.as_str(), f.kind))
        .collect();
    assert_eq!(
        texts,
        [
            ("sudo timeout 5 rm x", FormKind::Source),
            ("timeout 5 rm x", FormKind::DenyOnly),
            ("rm x", FormKind::DenyOnly),
        ]
    );
}

fn allow_forms(src: &str) -> Vec<String> {
    analyse(src).commands[0]
        .allow_forms()
        .map(|f| f.text.clone())
        .collect()
}

#[test]
fn allow_rules_see_what_runs() {
    assert_eq!(allow_forms("git  status"), ["git  status", "git status"]);
    assert_eq!(allow_forms("timeout 5 nice git status"), ["git status"]);
    assert_eq!(allow_forms("CI=1 git status"), ["git status"]);
    assert_eq!(allow_forms("xargs rm"), ["rm"]);
    assert_eq!(allow_forms("env"), ["env"]);
    // Past sudo, or past an assignment that picks the program, only the full form counts.
    assert_eq!(allow_forms("sudo git status"), ["sudo git status"]);
    assert_eq!(
        allow_forms("timeout 5 sudo git status"),
        ["sudo git status"]
    );
    assert_eq!(
        allow_forms("PATH=/tmp/evil git status"),
        ["PATH=/tmp/evil git status"]
    );
    assert_eq!(
        allow_forms("env LD_PRELOAD=x.so git status"),
        ["env LD_PRELOAD=x.so git status"]
    );
    // A path to a program is not the program of the same name.
    assert_eq!(allow_forms("/tmp/x/git status"), ["/tmp/x/git status"]);
}

#[test]
fn shell_scripts_are_parsed() {
    for (src, want) in [
        ("bash -c 'rm -rf /'", &["bash -c rm -rf /", "rm -rf /"][..]),
        ("bash -ec 'a | b'", &["bash -ec a | b", "a", "b"]),
        ("zsh -o pipefail -c a", &["zsh -o pipefail -c a", "a"]),
        (
            "dash -c 'sh -c \"rm x\"'",
            &["dash -c sh -c \"rm x\"", "sh -c rm x", "rm x"],
        ),
        (
            "timeout 5 bash -c 'rm x'",
            &["timeout 5 bash -c rm x", "rm x"],
        ),
        ("/bin/sh -c 'rm x' arg0", &["/bin/sh -c rm x arg0", "rm x"]),
    ] {
        let got = commands(src);
        // Inner commands come after the shell command that runs them.
        let mut sorted = got.clone();
        sorted.sort();
        let mut expected: Vec<String> = want.iter().map(|s| s.to_string()).collect();
        expected.sort();
        assert_eq!(sorted, expected, "{src:?}");
        assert!(complete(src), "{src:?}");
    }
    // A login shell's script is read for the deny rules, but its startup
    // files are not seen: the line cannot be allowed by rules.
    let mut got = commands("sh -lc \"git status; rm -rf ~\"");
    got.sort();
    assert_eq!(
        got,
        ["git status", "rm -rf ~", "sh -lc git status; rm -rf ~"]
    );
    assert!(!complete("sh -lc \"git status; rm -rf ~\""));
    let a = analyse("bash -c 'git status'");
    assert!(a.commands.iter().any(|c| c.transparent));
    let a = analyse("sudo bash -c 'git status'");
    assert!(!a.commands.iter().any(|c| c.transparent));
}

#[test]
fn redirection_targets() {
    assert_eq!(
        targets("cat notes > ~/.ssh/authorized_keys"),
        ["~/.ssh/authorized_keys"]
    );
    assert_eq!(
        targets("a >x 2>>y &>z &>>w >|v 3<>u >&t"),
        ["x", "y", "z", "w", "v", "u", "t"]
    );
    assert!(complete("a 3<>u"));
    assert_eq!(targets("a 2>&1 >&2 <in 2>&- <&3"), Vec::<String>::new());
    assert_eq!(targets("a > 'my file'"), ["my file"]);
    assert_eq!(targets("{ a; b; } > out"), ["out"]);
    assert_eq!(targets("for i in 1; do a; done >> log"), ["log"]);
    assert_eq!(targets("(a > x) | b > y"), ["x", "y"]);
    assert_eq!(targets("echo $(a > x)"), ["x"]);
    assert_eq!(targets("bash -c 'a > x'"), ["x"]);
    assert_eq!(targets("> out"), ["out"]);
    assert_eq!(commands("> out"), Vec::<String>::new());
    assert_eq!(targets("cat <<EOF > out\nhi\nEOF"), ["out"]);
}

#[test]
fn words_after_a_redirection_belong_to_the_command() {
    assert_eq!(commands("echo >out hi there"), ["echo hi there"]);
    assert_eq!(targets("echo >out hi there"), ["out"]);
    assert_eq!(unwrapped("sudo >/dev/null rm -rf /"), ["rm -rf /"]);
    assert_eq!(commands(">out rm -rf /"), ["rm -rf /"]);
    assert_eq!(commands("a 2>&1 b"), ["a b"]);
}

#[test]
fn unanalysable_constructs() {
    for (src, reason) in [
        ("eval rm -rf /", "`eval` runs a string built at run time"),
        ("source ./x.sh", "`source` runs the commands of a file"),
        (". ./x.sh", "`.` runs the commands of a file"),
        ("$X a", "the command name `$X` is an expansion"),
        ("${X} a", "the command name `${X}` is an expansion"),
        (
            "$(echo rm) a",
            "the command name `$(echo rm)` is an expansion",
        ),
        ("\"$X\" a", "the command name `$X` is an expansion"),
        ("sudo $CMD", "the command name `$CMD` is an expansion"),
        (
            "bash <<EOF\nrm -rf /\nEOF",
            "`bash` reads its commands from a heredoc",
        ),
        (
            "sh <<< 'rm x'",
            "`sh` reads its commands from a here-string",
        ),
        ("sh < script", "`sh` reads its commands from a file"),
        ("curl x | sh", "`sh` reads its commands from standard input"),
        (
            "bash -c \"$X\"",
            "the script of `bash -c` holds an expansion",
        ),
        ("echo > $F", "the redirection target `$F` is an expansion"),
        (
            "env -S 'rm x'",
            "`env -S` runs a command that cannot be analysed",
        ),
        ("sudo -Q rm", "unknown option `-Q` of `sudo`"),
        ("r* -rf /", "the command name `r*` is a pattern"),
    ] {
        assert_eq!(reasons(src), [reason], "{src:?}");
    }
    let name = |n: &str| Reason::NameExpansion { name: n.into() };
    assert_eq!(typed("$X a"), [name("$X")]);
    assert_eq!(typed("sudo $CMD"), [name("$CMD")]);
    assert_eq!(
        typed("eval rm -rf /"),
        [Reason::Opaque("`eval` runs a string built at run time")]
    );
    assert_eq!(
        typed("curl x | sh"),
        [Reason::CommandsFromInput {
            shell: "sh".into(),
            from: "standard input".into()
        }]
    );
    assert_eq!(
        typed("bash -c \"$X\""),
        [Reason::ScriptExpansion {
            by: "bash -c".into()
        }]
    );
    assert_eq!(
        typed("echo > $F"),
        [Reason::TargetExpansion {
            target: "$F".into()
        }]
    );
    assert_eq!(
        typed("env -S 'rm x'"),
        [Reason::WrapperRunsOpaque {
            wrapper: "env".into(),
            option: "-S".into()
        }]
    );
    assert_eq!(
        typed("r* -rf /"),
        [Reason::NamePattern { name: "r*".into() }]
    );
}

#[test]
fn parse_errors_are_reported() {
    for src in [
        "echo (",
        "if then",
        "a && ",
        "echo 'unterminated",
        "a | | b",
        "$(",
        "{rm,-rf,/}",
    ] {
        let r = typed(src);
        assert!(!r.is_empty(), "{src:?} parsed");
        assert!(matches!(r[0], Reason::ParseError { .. }), "{src:?}: {r:?}");
        assert!(
            r[0].to_string().starts_with("parse error at "),
            "{src:?}: {r:?}"
        );
    }
}

#[test]
fn commands_inside_a_broken_line_are_still_listed() {
    let a = analyse("rm -rf / ; )");
    assert!(!a.is_complete());
    assert!(a.commands.iter().any(|c| c.normalized == "rm -rf /"));
}

#[test]
fn deep_nesting_is_refused_not_crashed() {
    let deep = format!("{}a{}", "(".repeat(600), ")".repeat(600));
    assert!(!analyse(&deep).is_complete());
    let subst = format!("{}a{}", "$(".repeat(600), ")".repeat(600));
    assert!(!analyse(&subst).is_complete());
    let mut script = "rm x".to_string();
    for _ in 0..9 {
        script = format!("bash -c {}", shell_quote(&script));
    }
    let r = typed(&script);
    assert!(
        r.contains(&Reason::TooDeep {
            what: Nesting::Scripts,
            max: 8
        }),
        "{r:?}"
    );
    assert!(
        r.iter()
            .any(|r| r.to_string().contains("nested more than 8")),
        "{r:?}"
    );
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn a_word_the_shell_would_split_is_not_trusted() {
    // tree-sitter-bash reads `\rm` at the start of a line as part of the
    // previous word; the shell runs it as a command.
    let a = analyse("git a\n\\rm x");
    assert!(!a.is_complete());
    assert!(
        matches!(a.unanalysable[0].reason, Reason::MisreadWord { .. }),
        "{a:?}"
    );
    assert!(
        a.unanalysable[0]
            .reason
            .to_string()
            .contains("misread the word"),
        "{a:?}"
    );
    assert!(complete("git a \\\nb"));
}

#[test]
fn a_word_after_a_descriptor_copy_goes_to_the_parser() {
    // Found by the fuzz target: the shortcut took `r` as an argument where
    // the parser leaves it unanalysable.
    let line = "bash -c 'timeout 5 \"rm\" -rf /' | sudbody 'x y' git l repo -env ys 1>&1 r --poag --format=%H@%an";
    assert!(super::plain::plain_commands(line).is_none());
    assert_eq!(analyse(line), analyse_with_parser(line));
}

#[test]
fn plain_lines_analyse_as_the_parser_does() {
    for line in [
        "git status && ls -la | grep foo",
        "git  status;ls||true",
        "timeout 5 nice -n 3 rm -rf /tmp/x",
        "sudo -u root git status",
        "/usr/bin/git log --oneline -3",
        "bash -c x",
        "sh -c",
        "eval x",
        "source x",
        "xargs -0 rm",
        "env -i PATH=/x git status",
        "sudo -Q x",
        "cargo test -p a --test b -- --nocapture",
        "head -n 20 file.txt | wc -l",
        "fg 1",
        "a:b c,d e=f",
    ] {
        assert!(
            super::plain::plain_commands(line).is_some(),
            "{line:?} is not plain"
        );
        assert_eq!(analyse(line), analyse_with_parser(line), "{line:?}");
    }
}

#[test]
fn quoted_lines_analyse_as_the_parser_does() {
    for line in [
        "git status && ls -la 'my dir' | grep -n \"foo bar\"",
        "git commit -m 'fix: the thing' && git push",
        "grep -rn \"a\\|b\" src | head -n 5",
        "ls my\\ dir 'a'\"b\"c ''",
        "echo '$HOME' \"a'b\" 'x\"y'",
        "bash -c 'git status; ls -la'",
        "sh -c 'rm -rf /tmp/x'",
        "timeout 5 'rm' -rf /",
        "sudo -u 'x' git log",
        "git log --format=%H@%an -n 1 +x",
        "find . -name '*.rs'",
        "ls a\\  ",
        "cargo test 2>&1 | tail -n 3 >> 'my log' 2>/dev/null",
        "cd x && ls > y",
        "bash -c 'ls > a' > b",
        "git status 2>/dev/null && ls -la | grep -n \"foo bar\" > /dev/null",
        "a 12>>x 1>&2",
    ] {
        analysed_alike(line, true);
    }
    // A broken line whose `bash -c` script takes the shortcut (found by the fuzz target).
    let line = "bash -lc \"ls -\\ ";
    assert_eq!(analyse(line), analyse_with_parser(line), "{line:?}");
    // These go to the parser: tree-sitter-bash reads the first four unlike bash
    // (as parse errors), and an escaping backslash in double quotes is left to it.
    for line in [
        "a% x",
        "git \\ ",
        "git ''\\ ",
        "a+ x",
        "a 0>x",
        "a 0>>x",
        "a 0>&1",
        "echo \"a\\\"b\"",
    ] {
        assert!(
            super::plain::plain_commands(line).is_none(),
            "{line:?} skips the parser"
        );
    }
}

/// The registry's facets against its grammars: every option a facet
/// names is in its program's grammar.
mod registry {
    use crate::options::{grammar_of, ValueKind};
    use crate::reads::Roots;
    use crate::registry::{
        alias_of, flag_spellings, grammars, interpreters, programs, recursive_readers, wrappers,
        writers, REGISTRY,
    };

    /// Whether the grammar of `program` (`sub`) names `option`; `-uu` is `-u` twice.
    fn knows(program: &str, sub: Option<&str>, option: &str) -> bool {
        let option = option.split(' ').next().unwrap_or(option);
        let Some(g) = grammar_of(program, sub) else {
            return false;
        };
        let repeated = option.len() > 2
            && !option.starts_with("--")
            && option[1..]
                .chars()
                .all(|c| Some(c) == option.chars().nth(1));
        g.knows(if repeated { &option[..2] } else { option })
    }

    #[test]
    fn every_entry_is_well_formed() {
        for g in grammars() {
            assert!(!g.program.is_empty(), "{g:?}");
            let mut seen = Vec::new();
            for (name, _) in g.longs() {
                assert!(
                    !name.is_empty() && !name.starts_with('-') && !seen.contains(&name),
                    "`{}`: long option `{name}`",
                    g.program
                );
                seen.push(name);
            }
            let letters: Vec<char> = g
                .short
                .chars()
                .filter(|c| !matches!(c, ':' | ';'))
                .collect();
            for (i, c) in letters.iter().enumerate() {
                assert!(!letters[..i].contains(c), "`{}`: `-{c}` twice", g.program);
            }
            let same = grammars()
                .filter(|h| h.program == g.program && h.subcommand == g.subcommand)
                .count();
            assert_eq!(
                same, 1,
                "`{}` {:?} has {same} entries",
                g.program, g.subcommand
            );
        }
    }

    /// Every option a table says something about is in its program's grammar,
    /// so the parser reads it (and its abbreviations) as the program does.
    #[test]
    fn every_option_the_tables_name_is_in_a_grammar() {
        let mut missing = Vec::new();
        let mut check = |program: &str, sub: Option<&str>, option: &str| {
            if !knows(program, sub, option) {
                missing.push(format!("{program} {} {option}", sub.unwrap_or("")));
            }
        };
        for w in writers() {
            assert!(grammar_of(w.name, None).is_some(), "{}", w.name);
            for o in w.writes_value.iter().chain(w.recursive) {
                check(w.name, None, o);
            }
        }
        for r in recursive_readers() {
            let sub = r.subcommand.filter(|_| r.name == "git");
            let mut all: Vec<&str> = r.recursive.to_vec();
            all.extend(r.hidden.unwrap_or_default());
            all.extend(r.not_reading);
            if let Roots::AfterPattern(p) = r.roots {
                all.extend(p);
            }
            for o in all {
                check(r.name, sub, o);
            }
        }
        for p in programs().filter(|p| p.name != "find") {
            for o in p.options.iter().filter(|o| !o.name.is_empty()) {
                if p.subcommands.is_empty() {
                    // Its own grammar's, or one of its subcommands'
                    // (`ruff check --add-noqa`, `uv run --with`).
                    let sub = grammars()
                        .filter(|g| g.program == alias_of(p.name))
                        .find(|g| g.knows(o.name.split(' ').next().unwrap_or(o.name)));
                    check(p.name, sub.and_then(|g| g.subcommand), o.name);
                }
            }
            for (path, options) in p.subcommands {
                for o in options.iter().filter(|o| !o.name.is_empty()) {
                    check(p.name, Some(path[0]), o.name);
                }
            }
            for o in p.text_operand.unwrap_or_default() {
                check(p.name, None, o);
            }
        }
        for i in interpreters() {
            for o in i.program_options.iter().chain(i.stops).chain(i.interactive) {
                check(i.name, None, o);
            }
        }
        for w in wrappers() {
            for o in w.opaque {
                check(w.name, None, o);
            }
        }
        for e in REGISTRY {
            for (o, _) in e.file_values {
                check(e.name, None, o);
            }
            for o in e.directory_options.iter().chain(e.outputs) {
                check(e.name, None, o);
            }
        }
        for f in flag_spellings() {
            for (long, _) in f.long {
                check(f.program, f.subcommand, long);
            }
        }
        for e in REGISTRY {
            for o in e.text_options {
                check(e.name, Some("commit"), o);
            }
        }
        assert!(missing.is_empty(), "not in a grammar: {missing:#?}");
    }

    #[test]
    fn value_kinds_read_from_the_strings() {
        let cp = grammar_of("cp", None).expect("cp");
        assert_eq!(cp.short_kind('t'), Some(ValueKind::Required));
        assert_eq!(cp.short_kind('r'), Some(ValueKind::None));
        assert_eq!(cp.short_kind('y'), None);
        let sed = grammar_of("/bin/sed", None).expect("sed");
        assert_eq!(sed.short_kind('i'), Some(ValueKind::Optional));
        let set = grammar_of("set", None).expect("set");
        assert_eq!(set.short_kind('o'), Some(ValueKind::UnlessOption));
        assert_eq!(set.short_kind(';'), None);
        assert_eq!(cp.resolve_long("pres"), [("preserve", ValueKind::Optional)]);
        assert_eq!(grammar_of("egrep", None).map(|g| g.program), Some("grep"));
        assert_eq!(
            grammar_of("python3.12", None).map(|g| g.program),
            Some("python")
        );
    }
}

/// A name a declaration builtin declares or unsets is a literal word on both
/// paths (found by the fuzz target: `export export`).
#[test]
fn declared_names_analyse_as_the_parser_does() {
    for line in [
        "export export",
        " export export",
        "export foo",
        "declare declare",
        "local local",
        "readonly export",
        "typeset export",
        "unset unset",
        "unset export",
        "export a=b export",
        "export -n export",
        "declare -x foo bar",
    ] {
        analysed_alike(line, true);
        let words = &analyse(line).commands[0].words;
        assert!(words.iter().all(|w| !w.expansion), "{line:?}: {words:?}");
    }
    // What tree-sitter-bash cannot read as a name goes to the parser, which
    // the shortcut then agrees with.
    for line in [
        "export fff rt r --giT 7 s%",
        "export fff rt r --gis%",
        "export s%",
        "declare a b%c",
        "export a.b",
        "unset 7x",
        "local a'b'",
        // A name and a string with no blank between: one word.
        "export exsudn -u prt'x y' git l",
        "export a'b c'd e",
        "unset x'y z'",
    ] {
        analysed_alike(line, false);
    }
    let line = "export exsudn -u prt'x y' git l";
    let texts: Vec<String> = analyse_with_parser(line).commands[0]
        .words
        .iter()
        .map(|w| w.text.clone())
        .collect();
    assert_eq!(texts, ["export", "exsudn", "-u", "prtx y", "git", "l"]);
    // An expansion among the names stays one.
    let line = "export $X foo";
    let words = &analyse_with_parser(line).commands[0].words;
    assert!(words[1].expansion, "{words:?}");
}

#[test]
fn a_declared_variable_that_picks_a_program_is_named_by_the_whole_declaration() {
    for line in [
        "export PAGER=y",
        "export env PAGER=y",
        "export PAGER=y PAGER=x",
        "export  env PAGER=y  PAR=x env PAGER=x PAGER=ER=x env PAR=x",
    ] {
        assert_eq!(analyse(line), analyse_with_parser(line), "{line:?}");
        let sources: Vec<String> = analyse_with_parser(line)
            .unanalysable
            .iter()
            .map(|u| u.source.clone())
            .collect();
        assert!(!sources.is_empty(), "{line:?}");
        assert!(
            sources.iter().all(|s| s == line.trim()),
            "{line:?}: {sources:?}"
        );
    }
    // Through the parser only (an expansion), the same.
    let line = "export PAGER=$(x)";
    let sources: Vec<String> = analyse(line)
        .unanalysable
        .iter()
        .map(|u| u.source.clone())
        .collect();
    assert!(sources.contains(&line.to_string()), "{sources:?}");
}

#[test]
fn commands_that_run_commands_are_followed_up_to_a_bound() {
    // Each `-exec` is followed from every `find` that encloses it: without
    // a bound, 14 of them make 2^14 commands (found by the fuzz target).
    let line = format!("{}true", "find . -exec ".repeat(14));
    for analysis in [analyse(&line), analyse_with_parser(&line)] {
        assert!(
            analysis.commands.len() <= 1_100,
            "{} commands",
            analysis.commands.len()
        );
        let bounded: Vec<_> = analysis
            .unanalysable
            .iter()
            .filter(|u| matches!(u.reason, Reason::TooManyCommands { .. }))
            .collect();
        assert_eq!(bounded.len(), 1, "{:?}", analysis.unanalysable);
        assert!(bounded[0]
            .reason
            .to_string()
            .contains("more than 1000 commands"));
    }
    assert_eq!(analyse(&line), analyse_with_parser(&line));
}
