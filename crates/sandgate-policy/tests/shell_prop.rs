//! Property: an allowed simple command never carries a command that is not
//! allowed, whatever joins them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod shell_common;

use proptest::prelude::*;
use sandgate_policy::Verdict;
use shell_common::Home;

const POLICY: &str = r#"
permissions:
  commands:
    allow: ["^git( |$)", "^ls( |$)", "^echo( |$)"]
"#;

const ALLOWED: &[&str] = &["git", "ls", "echo"];

/// Plain words and `key=value` words. (A word that is only `==` is a parse
/// error for tree-sitter-bash, which asks; it is left out so the premise holds.)
fn arg() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z0-9./-]{1,8}", "[a-z]{1,4}=[a-z0-9./-]{0,4}"]
}

fn args() -> impl Strategy<Value = String> {
    prop::collection::vec(arg(), 0..4)
        .prop_map(|a| a.iter().map(|w| format!(" {w}")).collect::<String>())
}

/// An allowed simple command.
fn allowed() -> impl Strategy<Value = String> {
    (prop::sample::select(ALLOWED), args()).prop_map(|(name, args)| format!("{name}{args}"))
}

/// A command that is not allowed, sometimes quoted or wrapped.
fn not_allowed() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        prop::sample::select(&["rm", "curl", "gitk", "lsblk", "echoo", "python3", "sh", "x"][..])
            .prop_map(str::to_string),
        "[a-z]{1,8}".prop_filter("not an allowed name", |n| !ALLOWED.contains(&n.as_str())),
    ];
    let spelling = prop_oneof![
        Just(0u8), // as is
        Just(1),   // r''m
        Just(2),   // \rm
        Just(3),   // "rm"
    ];
    let wrapper = prop::sample::select(
        &[
            "",
            "timeout 5 ",
            "env X=1 ",
            "nice ",
            "command ",
            "nohup ",
            "sudo ",
        ][..],
    );
    (name, spelling, wrapper, args()).prop_map(|(name, spelling, wrapper, args)| {
        let name = match spelling {
            1 if name.len() > 1 => format!("{}''{}", &name[..1], &name[1..]),
            2 => format!("\\{name}"),
            3 => format!("\"{name}\""),
            _ => name,
        };
        format!("{wrapper}{name}{args}")
    })
}

/// Every way of putting `b` into a command line next to `a`.
fn joins(a: &str, b: &str) -> Vec<String> {
    vec![
        format!("{a}; {b}"),
        format!("{a} && {b}"),
        format!("{a} || {b}"),
        format!("{a} | {b}"),
        format!("{a} |& {b}"),
        format!("{a} & {b}"),
        format!("{a}\n{b}"),
        format!("{a} $({b})"),
        format!("{a} `{b}`"),
        format!("{a} \"$({b})\""),
        format!("{a} <({b})"),
        format!("({a}; {b})"),
        format!("{{ {a}; {b}; }}"),
        format!("{b}; {a}"),
        format!("bash -c '{a}; {b}'"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_join_of_an_allowed_and_a_refused_command_is_allowed(
        a in allowed(),
        b in not_allowed(),
    ) {
        let home = Home::new();
        let policy = home.policy(POLICY, None);
        // The premise: A alone is allowed (an allowed program's random
        // options may ask on their own, `git -p` starts a pager: such an A
        // is no case), B alone is not.
        prop_assume!(policy.evaluate_command(&a, &home.ctx).verdict == Verdict::Allow);
        prop_assert_ne!(policy.evaluate_command(&b, &home.ctx).verdict, Verdict::Allow, "{}", b);
        for line in joins(&a, &b) {
            let d = policy.evaluate_command(&line, &home.ctx);
            prop_assert_ne!(d.verdict, Verdict::Allow, "{:?} was allowed: {}", line, d.reason);
        }
    }
}

/// A line of plain words and list/pipeline operators.
fn plain_line() -> impl Strategy<Value = String> {
    let word = "[A-Za-z0-9_./:,+=-]{1,6}";
    let prefix = prop::sample::select(
        &[
            "",
            "",
            "",
            "timeout 5 ",
            "sudo -u x ",
            "env -i A=1 ",
            "nice -n 1 ",
            "xargs -0 ",
            "bash -c ",
            "sh ",
            "eval ",
            "cd ",
            "command ",
            "/bin/",
            "exec ",
            "time ",
            "git -C x ",
            "git --no-pager -c a.b=c ",
            "find . -exec ",
            "GIT_PAGER=x ",
            "rm -rf ",
            "cp -t d ",
            "sed -n ",
            "xargs -I{} sh -c ",
            "sort -o x ",
        ][..],
    );
    let command = (prefix, prop::collection::vec(word, 1..4))
        .prop_map(|(p, w)| format!("{p}{}", w.join(" ")));
    joined(move || command.clone())
}

/// One to three commands of `command()` joined by list and pipeline operators.
fn joined<S: Strategy<Value = String>>(command: impl Fn() -> S) -> impl Strategy<Value = String> {
    let op = prop::sample::select(&[";", " ; ", "&&", " && ", "||", " | ", "|"][..]);
    (command(), prop::collection::vec((op, command()), 0..3)).prop_map(|(first, rest)| {
        let mut line = first;
        for (op, c) in rest {
            line.push_str(op);
            line.push_str(&c);
        }
        line
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Lines of plain words skip the parser; the result must be the parser's.
    #[test]
    fn the_plain_line_shortcut_agrees_with_the_parser(line in plain_line()) {
        use sandgate_policy::shell::{analyse, analyse_with_parser};
        prop_assert_eq!(analyse(&line), analyse_with_parser(&line), "{:?}", line);
    }
}

/// A piece of a word: plain text, quoted text or an escaped character, with a
/// few bytes that send the line to the parser mixed in.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[A-Za-z0-9_./:,+@%=-]{1,5}",
        2 => "[ -~]{0,6}".prop_map(|s| format!("'{}'", s.replace('\'', ""))),
        2 => "[ -~]{0,6}".prop_map(|s| format!("\"{}\"", s.replace('"', ""))),
        1 => "[ -~]".prop_map(|c| format!("\\{c}")),
        1 => prop::sample::select(
            &["#", "~", "!", "*", "$x", "\\\"", "é", "{a,b}", "[x]", "^", "\\\n", "=", "''"][..]
        )
        .prop_map(str::to_string),
    ]
}

/// A simple command whose arguments hold quoting, with trailing redirections.
fn quoted_command() -> impl Strategy<Value = String> {
    let word = prop::collection::vec(piece(), 1..4).prop_map(|p| p.concat());
    let name = prop::sample::select(
        &[
            "git",
            "ls",
            "grep",
            "timeout 5 rm",
            "sudo -u x git",
            "bash -c",
            "env A=1 ls",
            "/bin/echo",
            "cd",
            "sh",
        ][..],
    );
    // Trailing redirections the shortcut takes, and forms it leaves to the parser.
    let taken = prop::sample::select(
        &[
            " > out",
            " >out",
            " >> 'a b'",
            " 2>/dev/null",
            " 2>&1",
            " 1>&2",
            " 12>x",
            " 3>>x",
            " >\"x\"y",
            " >/tmp/x",
        ][..],
    );
    let left = prop::sample::select(
        &[
            " 0>x", " 0>&1", " > ~/x", " >& x", " &> x", " >| x", " <x", " > x y", " 2>&1x", " >",
        ][..],
    );
    let redirection = prop_oneof![6 => taken, 1 => left];
    (
        name,
        prop::collection::vec(word, 0..4),
        prop::collection::vec(redirection, 0..2),
    )
        .prop_map(|(n, w, r)| {
            let line = w
                .iter()
                .fold(n.to_string(), |line, w| format!("{line} {w}"));
            format!("{line}{}", r.concat())
        })
}

/// A line of simple commands whose arguments hold quoting.
fn quoted_line() -> impl Strategy<Value = String> {
    joined(quoted_command)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Lines with simple quoting skip the parser too; the result must be the parser's.
    #[test]
    fn the_quoted_line_shortcut_agrees_with_the_parser(line in quoted_line()) {
        use sandgate_policy::shell::{analyse, analyse_with_parser};
        prop_assert_eq!(analyse(&line), analyse_with_parser(&line), "{:?}", line);
    }
}

/// Over a quarter of the generated lines are ones the shortcut takes, so the
/// property is about the shortcut and not only about the parser.
#[test]
fn most_generated_quoted_lines_skip_the_parser() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = quoted_line();
    let (mut taken, total) = (0, 1000);
    for _ in 0..total {
        let line = strategy.new_tree(&mut runner).expect("a line").current();
        taken += usize::from(sandgate_policy::shell::skips_the_parser(&line));
    }
    assert!(
        taken * 4 > total,
        "only {taken} of {total} lines skip the parser"
    );
}

/// Git's global options before a subcommand, in any number and order.
fn git_globals() -> impl Strategy<Value = String> {
    let option = prop::sample::select(
        &[
            "-C repo",
            "-Crepo",
            "-c x=y",
            "-c user.name=me",
            "--no-pager",
            "-P",
            "-p",
            "--git-dir=.git",
            "--git-dir .git",
            "--work-tree=.",
            "--work-tree .",
            "--bare",
            "--no-replace-objects",
            "--literal-pathspecs",
            "--namespace=n",
        ][..],
    );
    prop::collection::vec(option, 0..5).prop_map(|o| o.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A deny rule written for `git SUBCOMMAND` sees it past any global
    /// options, and flags in any spelling for the commands that have one.
    #[test]
    fn deny_rules_see_past_global_options_and_spellings(
        globals in git_globals(),
        flags in prop::sample::select(&["-fdx", "-xdf", "-f -d -x", "--force -d -x", "-d --force -x", "-x -fd"][..]),
        tail in prop::sample::select(&["", " .", " -- src"][..]),
    ) {
        let home = Home::new();
        let policy = home.policy(
            "permissions:\n  commands:\n    deny: ['^git reset --hard', '^git clean -d -f -x']\n    allow: ['^git( |$)']\n",
            None,
        );
        let reset = format!("git {globals} reset --hard{tail}");
        prop_assert_eq!(policy.evaluate_command(&reset, &home.ctx).verdict, Verdict::Deny, "{}", reset);
        let clean = format!("git {globals} clean {flags}{tail}");
        prop_assert_eq!(policy.evaluate_command(&clean, &home.ctx).verdict, Verdict::Deny, "{}", clean);
        // Another repository or work tree, and a pager, ask.
        let asks = globals
            .split(' ')
            .any(|g| ["-p", "--paginate"].contains(&g) || g.starts_with("--git-dir") || g.starts_with("--work-tree") || g.starts_with("--namespace"));
        let want = if asks { Verdict::Ask } else { Verdict::Allow };
        let status = format!("git {globals} status{tail}");
        prop_assert_eq!(policy.evaluate_command(&status, &home.ctx).verdict, want, "{}", status);
    }
}
