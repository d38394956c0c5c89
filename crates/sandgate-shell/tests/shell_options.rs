//! Every shell's own options are read from its registry entry's grammar by
//! the one argv parser, as the shell reads them: which word is the script
//! (`bash +c SCRIPT`, `fish -c A -c B`), whether the commands come from
//! standard input, whether startup files run first (`+l`, `-login`), and
//! which `-o` / `-O` names widen patterns. Each case is also run with the
//! real shell, in a fresh temporary HOME holding startup files that print a
//! mark, with commands on its standard input: what the shell runs, the
//! analysis must see. A case marked `wider` is one the shell refuses (it
//! exits with a usage error); the analysis may read more there, never less.
//!
//! Under `CI=true` a shell that is missing fails the test; elsewhere its
//! cases are skipped with a note.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/ci.rs"]
mod ci;
#[path = "../../../tests/support/wait.rs"]
mod wait;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use wait::Bounded;

use sandgate_shell::reads::{directory_change, glob_widening, Move};
use sandgate_shell::{analyse, quote_word, Reason};

/// How the analysis reads where a shell's commands come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// The script `echo MARK` is analysed.
    Script,
    /// The script is attached to its option (`fish -cSCRIPT`): asked about.
    Attached,
    /// A script file (the first operand), or nothing.
    File,
    /// Commands from standard input: asked about.
    Stdin,
}
use Reads::*;

/// (argv, reading, startup files run first, wider than the shell)
type Case = (&'static [&'static str], Reads, bool, bool);

const CASES: &[Case] = &[
    // bash: letters after `-` or `+`; `c`, `l`, `s`, `o`, `O` mean the same after `+`.
    (&["bash", "-c", "echo MARK"], Script, false, false),
    (&["bash", "+c", "echo MARK"], Script, false, false),
    (&["bash", "-ec", "echo MARK"], Script, false, false),
    (&["bash", "-c", "-e", "echo MARK"], Script, false, false),
    (&["bash", "-s", "-c", "echo MARK"], Script, false, false),
    // A letter that takes a value takes the next word, each in turn.
    (
        &["bash", "-co", "pipefail", "echo MARK"],
        Script,
        false,
        false,
    ),
    (
        &["bash", "-oO", "pipefail", "dotglob", "-c", "echo MARK"],
        Script,
        false,
        false,
    ),
    // `-opipefail` is `-o -c`, then letters (`i`, `l` among them): bash refuses it.
    (&["bash", "-opipefail", "-c", "echo MARK"], File, true, true),
    // Long options: whole names, `--name` or `-name`, the value the next word.
    (&["bash", "--norc", "-c", "echo MARK"], Script, false, false),
    (&["bash", "-norc", "-c", "echo MARK"], Script, false, false),
    (
        &["bash", "-noprofile", "-c", "echo MARK"],
        Script,
        false,
        false,
    ),
    (&["bash", "--nor", "-c", "echo MARK"], Script, false, true),
    // `--rcfile` is read only by an interactive shell: the analysis asks anyway.
    (
        &["bash", "--rcfile", "RC", "-c", "echo MARK"],
        Script,
        true,
        true,
    ),
    (&["bash", "-l", "-c", "echo MARK"], Script, true, false),
    (&["bash", "+l", "-c", "echo MARK"], Script, true, false),
    (&["bash", "-c", "-l", "echo MARK"], Script, true, false),
    (&["bash", "--login", "-c", "echo MARK"], Script, true, false),
    (&["bash", "-login", "-c", "echo MARK"], Script, true, false),
    (&["bash", "-i", "-c", "echo MARK"], Script, true, false),
    (&["bash", "+i", "-c", "echo MARK"], Script, false, false),
    (&["bash", "-c", "echo MARK", "-l"], Script, false, false),
    (&["bash"], Stdin, false, false),
    (&["bash", "-s"], Stdin, false, false),
    (&["bash", "+s", "x"], Stdin, false, false),
    (&["bash", "x"], File, false, false),
    // `-` and `--` end the options; a `+` alone is skipped.
    (&["bash", "--", "-c", "echo MARK"], File, false, false),
    (&["bash", "-", "-c", "echo MARK"], File, false, false),
    (&["bash", "+", "-c", "echo MARK"], Script, false, false),
    // dash: `c`, `l`, `o` mean the same after `+`; `+s` turns `-s` off.
    (&["dash", "-c", "echo MARK"], Script, false, false),
    (&["dash", "+c", "echo MARK"], Script, false, false),
    (&["dash", "-c", "-e", "echo MARK"], Script, false, false),
    (
        &["dash", "-eo", "errexit", "-c", "echo MARK"],
        Script,
        false,
        false,
    ),
    (&["dash", "-oerrexit", "-c", "echo MARK"], File, true, true),
    (&["dash", "-l", "-c", "echo MARK"], Script, true, false),
    (&["dash", "+l", "-c", "echo MARK"], Script, true, false),
    (&["dash", "-s"], Stdin, false, false),
    (&["dash", "+s", "x"], File, false, false),
    (&["dash", "--", "-c", "echo MARK"], File, false, false),
    (&["dash", "+", "-c", "echo MARK"], Script, false, false),
    // busybox ash: as dash, with `--login`, and `+s` reads from input.
    (&["busybox", "ash", "+c", "echo MARK"], Script, false, false),
    (
        &["busybox", "ash", "-c", "-e", "echo MARK"],
        Script,
        false,
        false,
    ),
    (
        &["busybox", "ash", "+l", "-c", "echo MARK"],
        Script,
        true,
        false,
    ),
    (
        &["busybox", "ash", "--login", "-c", "echo MARK"],
        Script,
        true,
        false,
    ),
    (&["busybox", "ash", "+s", "x"], Stdin, false, false),
    (
        &["busybox", "ash", "+", "-c", "echo MARK"],
        Script,
        false,
        false,
    ),
    // zsh: `-o` takes the rest of its word or the next; a `+` alone ends
    // the options; only `c` and `o` mean the same after `+`.
    (&["zsh", "-c", "echo MARK"], Script, false, false),
    (&["zsh", "+c", "echo MARK"], Script, false, false),
    (
        &["zsh", "-oerrexit", "-c", "echo MARK"],
        Script,
        false,
        false,
    ),
    (
        &["zsh", "-co", "errexit", "echo MARK"],
        Script,
        false,
        false,
    ),
    (&["zsh", "-l", "-c", "echo MARK"], Script, true, false),
    (&["zsh", "+l", "-c", "echo MARK"], Script, false, false),
    (&["zsh", "--login", "-c", "echo MARK"], Script, true, false),
    (&["zsh", "-c", "--login", "echo MARK"], Script, true, false),
    (&["zsh", "+s", "x"], File, false, false),
    (&["zsh", "+", "-c", "echo MARK"], File, false, false),
    (&["zsh", "-", "-c", "echo MARK"], File, false, false),
    // mksh: only `o` means the same after `+` (`+c` is no command).
    (&["mksh", "-c", "echo MARK"], Script, false, false),
    (&["mksh", "+c", "echo MARK"], File, false, false),
    (
        &["mksh", "-oerrexit", "-c", "echo MARK"],
        Script,
        false,
        false,
    ),
    (&["mksh", "-l", "-c", "echo MARK"], Script, true, false),
    (&["mksh", "+l", "-c", "echo MARK"], Script, false, false),
    (&["mksh", "+", "-c", "echo MARK"], File, false, false),
    // fish: getopt_long; `-c` takes its script as a value, again and again.
    (&["fish", "-c", "echo MARK"], Script, false, false),
    (
        &["fish", "-c", "echo A", "-c", "echo MARK"],
        Script,
        false,
        false,
    ),
    (&["fish", "-i", "-c", "echo MARK"], Script, true, true),
    (&["fish", "-cecho MARK"], Attached, false, false),
    (&["fish", "--command=echo MARK"], Attached, false, false),
    (&["fish"], Stdin, false, false),
];

/// The shell a case runs (`busybox` for `busybox ash`).
fn program(argv: &[&str]) -> &'static str {
    match argv[0] {
        "busybox" => "busybox",
        "bash" => "bash",
        "dash" => "dash",
        "zsh" => "zsh",
        "mksh" => "mksh",
        "fish" => "fish",
        other => panic!("no case runs {other}"),
    }
}

fn installed(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output_within(Duration::from_secs(30))
        .is_ok_and(|o| o.status.success())
}

/// Whether the shells the cases run are here; a missing one fails under CI.
fn here(program: &str, failures: &mut Vec<String>) -> bool {
    if installed(program) {
        return true;
    }
    if ci::under_ci() {
        failures.push(format!(
            "`{program}` is not installed; install it (apt-get install bash dash zsh mksh busybox fish)"
        ));
    } else {
        eprintln!("skipped: `{program}` is not installed");
    }
    false
}

/// A fresh HOME whose startup files print `PROFILE`.
fn home() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        ".profile",
        ".bash_profile",
        ".bashrc",
        ".zprofile",
        ".zshrc",
        ".zlogin",
        ".mkshrc",
        ".envrc",
    ] {
        std::fs::write(dir.path().join(f), "echo PROFILE\n").unwrap();
    }
    std::fs::create_dir(dir.path().join(".config")).unwrap();
    dir
}

/// What the real shell printed for `argv`, run in `home` with `echo STDIN`
/// on its standard input.
fn run(argv: &[&str], home: &Path) -> String {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("ZDOTDIR", home)
        .env("ENV", home.join(".envrc"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".config"))
        .env("LC_ALL", "C")
        .current_dir(home)
        .output_with_stdin_within(b"echo STDIN\n", Duration::from_secs(60))
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether the real shell, run as [`run`] runs it in a fresh home, printed
/// the line `word`.
fn prints(argv: &[&str], word: &str) -> bool {
    let home = home();
    run(argv, home.path()).lines().any(|l| l == word)
}

fn line(argv: &[&str]) -> String {
    argv.iter()
        .map(|w| quote_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How the analysis reads `argv`: where the commands come from, and
/// whether startup files run first.
fn analysed(argv: &[&str]) -> (Reads, bool) {
    let a = analyse(&line(argv));
    let has = |f: fn(&Reason) -> bool| a.unanalysable.iter().any(|u| f(&u.reason));
    let reads = if a.commands.iter().any(|c| c.normalized == "echo MARK") {
        Script
    } else if has(|r| matches!(r, Reason::ScriptAttached { .. })) {
        Attached
    } else if has(|r| matches!(r, Reason::CommandsFromInput { .. })) {
        Stdin
    } else {
        File
    };
    (reads, has(|r| matches!(r, Reason::StartupFiles { .. })))
}

#[test]
fn every_shells_options_are_read_as_the_shell_reads_them() {
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut present = std::collections::BTreeMap::new();
    for &(argv, reads, startup, wider) in CASES {
        let got = analysed(argv);
        if got != (reads, startup) {
            failures.push(format!(
                "{argv:?}: read as {got:?}, want {:?}",
                (reads, startup)
            ));
        }
        let p = program(argv);
        if !*present.entry(p).or_insert_with(|| here(p, &mut failures)) {
            continue;
        }
        ran += 1;
        let home = home();
        let out = run(argv, home.path());
        let real_script = out.lines().any(|l| l == "MARK");
        let real_stdin = out.lines().any(|l| l == "STDIN");
        let real_startup = out.lines().any(|l| l == "PROFILE");
        let ok = if wider {
            // The shell refuses the line: whatever it runs, the analysis sees.
            (!real_script || matches!(reads, Script | Attached))
                && (!real_stdin || reads == Stdin)
                && (!real_startup || startup)
        } else {
            real_script == matches!(reads, Script | Attached)
                && real_stdin == (reads == Stdin)
                && real_startup == startup
        };
        if !ok {
            failures.push(format!(
                "{argv:?}: the shell printed {out:?}, the analysis reads {reads:?} (startup {startup})"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{ran} cases run with the real shell");
}

/// A bash script that prints `WIDE` when patterns are widened.
const BASH_WIDE: &str = "shopt -q dotglob && echo WIDE";

/// A zsh script that prints `WIDE` when patterns are widened.
const ZSH_WIDE: &str = "[[ -o globdots ]] && echo WIDE";

/// (argv, a script that prints `WIDE` when patterns are widened, widened
/// by the analysis, wider than the shell)
type GlobCase = (&'static [&'static str], bool, bool);

const GLOB_CASES: &[GlobCase] = &[
    (&["bash", "-O", "dotglob", "-c", BASH_WIDE], true, false),
    (&["bash", "-eO", "dotglob", "-c", BASH_WIDE], true, false),
    (
        &["bash", "-oO", "pipefail", "dotglob", "-c", BASH_WIDE],
        true,
        false,
    ),
    (&["bash", "-o", "pipefail", "-c", BASH_WIDE], false, false),
    // `+O` turns it off: any glob option named is read as widening.
    (&["bash", "+O", "dotglob", "-c", BASH_WIDE], true, true),
    // After the script, `-O` is an argument.
    (&["bash", "-c", BASH_WIDE, "-O", "dotglob"], false, false),
    (&["zsh", "-o", "globdots", "-c", ZSH_WIDE], true, false),
    (&["zsh", "-oglobdots", "-c", ZSH_WIDE], true, false),
    (&["zsh", "-eo", "globdots", "-c", ZSH_WIDE], true, false),
    (&["zsh", "-o", "errexit", "-c", ZSH_WIDE], false, false),
];

#[test]
fn shell_options_that_widen_patterns_are_read_as_the_shell_reads_them() {
    let mut failures = Vec::new();
    let mut present = std::collections::BTreeMap::new();
    for &(argv, widened, wider) in GLOB_CASES {
        let expansion = vec![false; argv.len()];
        let got = glob_widening(argv, &expansion, 0).is_some();
        if got != widened {
            failures.push(format!("{argv:?}: widened {got}, want {widened}"));
        }
        let p = program(argv);
        if !*present.entry(p).or_insert_with(|| here(p, &mut failures)) {
            continue;
        }
        let real = prints(argv, "WIDE");
        // A shell that widens nothing where the analysis reads wider is no failure.
        let excused = wider && !real;
        if real != widened && !excused {
            failures.push(format!(
                "{argv:?}: the shell widened {real}, the analysis {widened}"
            ));
        }
    }
    // `set` in a running shell: zsh's `set -eo globdots`.
    let set = ["set", "-eo", "globdots"];
    if glob_widening(&set, &[false; 3], 0).is_none() {
        failures.push("`set -eo globdots` is not read as widening".into());
    }
    if *present
        .entry("zsh")
        .or_insert_with(|| here("zsh", &mut failures))
    {
        let home = home();
        let out = run(
            &[
                "zsh",
                "-c",
                "set -eo globdots; [[ -o globdots ]] && echo WIDE",
            ],
            home.path(),
        );
        if !out.lines().any(|l| l == "WIDE") {
            failures.push(format!("zsh's `set -eo globdots` printed {out:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// (a `shopt` command, widened by the analysis): run by bash, then
/// `shopt -q dotglob` tells whether it widened patterns. bash's builtins read
/// their letters before the first operand only.
const SHOPT_CASES: &[(&str, bool)] = &[
    ("shopt -s dotglob", true),
    ("shopt -qs dotglob", true),
    ("shopt -s nullglob dotglob", true),
    ("shopt -u dotglob", false),
    ("shopt -s nullglob", false),
    ("shopt dotglob -s", false),
    ("shopt -- -s dotglob", false),
];

/// (a `trap` command, its action `echo MARK` analysed): run by bash, which
/// prints MARK when it runs the action at exit.
const TRAP_CASES: &[(&str, bool, bool)] = &[
    ("trap 'echo MARK' EXIT", true, false),
    ("trap -- 'echo MARK' EXIT", true, false),
    ("trap 'echo MARK' -p EXIT", true, false),
    ("trap -p 'echo MARK' EXIT", false, false),
    ("trap -lp", false, false),
    ("trap 'echo MARK'", false, false),
    // bash refuses the unknown option; the action is read anyway.
    ("trap -e 'echo MARK' EXIT", true, true),
];

#[test]
fn shopt_and_trap_options_are_read_as_bash_reads_them() {
    let mut failures = Vec::new();
    let bash = here("bash", &mut failures);
    for &(line, widened) in SHOPT_CASES {
        let words: Vec<&str> = line.split(' ').collect();
        let got = glob_widening(&words, &vec![false; words.len()], 0).is_some();
        if got != widened {
            failures.push(format!("`{line}`: widened {got}, want {widened}"));
        }
        if bash {
            let script = format!("{line}; {BASH_WIDE}");
            let real = prints(&["bash", "-c", &script], "WIDE");
            if real != widened {
                failures.push(format!("`{line}`: bash widened {real}"));
            }
        }
    }
    for &(line, runs, wider) in TRAP_CASES {
        let got = analyse(line)
            .commands
            .iter()
            .any(|c| c.normalized == "echo MARK");
        if got != runs {
            failures.push(format!("`{line}`: action analysed {got}, want {runs}"));
        }
        if bash {
            let real = prints(&["bash", "-c", line], "MARK");
            let excused = wider && !real;
            if real != runs && !excused {
                failures.push(format!("`{line}`: bash ran the action {real}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// (a `set` command's arguments, whether the one parser reads them as
/// turning `noglob` on (`-o noglob` or `-f`), wider than bash): bash's `set
/// -o` and `+o` take no name when the next word is empty or starts with `-`
/// or `+` (they print the settings), and that word is read as options
/// (`set -o -o noglob` sets `noglob`). Run by bash, whose reading the
/// parser follows exactly unless the case is marked wider, and by dash,
/// zsh, mksh and busybox ash, which refuse most of these lines or (mksh's
/// `set -o -f`, `set -o '' -o noglob`) set what the parser reads: none may
/// set `noglob` where the parser does not see it.
const SET_CASES: &[(&[&str], bool, bool)] = &[
    (&["-o", "noglob"], true, false),
    (&["-f"], true, false),
    (&["-o", "-o", "noglob"], true, false),
    (&["+o", "-o", "noglob"], true, false),
    (&["-eo", "-o", "noglob"], true, false),
    (&["-o", "-o", "-o", "noglob"], true, false),
    (&["-oo", "noglob"], true, false),
    (&["-o", "-oo", "noglob"], true, false),
    (&["-o", "-f"], true, false),
    (&["-o", "-e", "-o", "noglob"], true, false),
    (&["-o"], false, false),
    (&["-o", "-e"], false, false),
    (&["-o", "--", "noglob"], false, false),
    (&["-o", "-", "noglob"], false, false),
    (&["-o", "-", "-o", "noglob"], false, false),
    // `+o noglob` turns it off: any option named is read as set.
    (&["-o", "+o", "noglob"], true, true),
    // bash ends the options at the empty word; mksh and busybox ash take
    // it as the name and go on.
    (&["-o", "", "-o", "noglob"], true, true),
];

/// The shells whose `set` the cases run, as [`run`] starts them.
const SET_SHELLS: &[&[&str]] = &[
    &["bash", "-c"],
    &["dash", "-c"],
    &["zsh", "-c"],
    &["mksh", "-c"],
    &["busybox", "ash", "-c"],
];

#[test]
fn set_without_an_option_name_reads_the_next_word_as_options() {
    let mut failures = Vec::new();
    let mut present = std::collections::BTreeMap::new();
    for &(args, sets, wider) in SET_CASES {
        let mut words = vec!["set"];
        words.extend(args);
        let parsed = sandgate_shell::options::parse_command(&words, 0, None);
        let names_noglob = parsed
            .values("-o")
            .chain(parsed.values("+o"))
            .any(|v| v.text(&words) == "noglob");
        let got = names_noglob || parsed.has("-f");
        if got != sets {
            failures.push(format!(
                "{words:?}: read as setting noglob {got}, want {sets}"
            ));
        }
        // `.con*` matches the home's `.config` unless `noglob` is on.
        let script = format!("{} >/dev/null 2>&1; echo .con*", line(&words));
        for shell in SET_SHELLS {
            let p = program(shell);
            if !*present.entry(p).or_insert_with(|| here(p, &mut failures)) {
                continue;
            }
            let mut argv = shell.to_vec();
            argv.push(&script);
            let home = home();
            let out = run(&argv, home.path());
            let real = out.lines().any(|l| l == ".con*");
            if !out.lines().any(|l| l == ".con*" || l == ".config") {
                // A shell that stops at the refused `set` runs nothing after it.
                if p == "bash" {
                    failures.push(format!("{words:?}: bash printed {out:?}"));
                }
                continue;
            }
            let agrees = if p == "bash" && !wider {
                real == sets
            } else {
                !real || sets
            };
            if !agrees {
                failures.push(format!(
                    "{words:?}: {} set noglob {real}, the parser reads {sets}",
                    shell.join(" ")
                ));
            }
        }
    }
    // A pattern-widening name after a nameless `-o` widens patterns.
    for line in [
        "set -o -o globstar",
        "set +o -o globdots",
        "set -o -eo dotglob",
    ] {
        let words: Vec<&str> = line.split(' ').collect();
        if glob_widening(&words, &vec![false; words.len()], 0).is_none() {
            failures.push(format!("`{line}` is not read as widening patterns"));
        }
    }
    for line in ["set -o -- globstar", "set -o - globdots"] {
        let words: Vec<&str> = line.split(' ').collect();
        if glob_widening(&words, &vec![false; words.len()], 0).is_some() {
            failures.push(format!("`{line}` is read as widening patterns"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Where bash is after a `cd`, `pushd` or `popd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lands {
    /// Where it started.
    Stays,
    /// In the directory the word at this index names.
    In(usize),
    /// Somewhere else, known only when it runs (the stack's entries).
    Elsewhere,
}

/// (a command, how the analysis reads it, where bash lands, wider than
/// bash): run by bash in a fresh home holding the directories the words
/// name, after `pushd -n` has put two directories on its stack. A case
/// marked wider is one bash refuses: the analysis leaves the directory
/// unknown, or keeps one bash stays in, where zsh moves.
const CHDIR_CASES: &[(&[&str], Move, Lands, bool)] = &[
    (&["pushd", "a"], Move::To(1), Lands::In(1), false),
    (&["pushd", "-n", "a"], Move::Stays, Lands::Stays, false),
    (
        &["pushd", "-n", "-n", "a"],
        Move::Stays,
        Lands::Stays,
        false,
    ),
    (
        &["pushd", "-n", "--", "a"],
        Move::Stays,
        Lands::Stays,
        false,
    ),
    (&["pushd", "-n"], Move::Stays, Lands::Stays, false),
    (&["pushd", "-n", "+1"], Move::Stays, Lands::Stays, false),
    (&["pushd", "-n", "-1"], Move::Stays, Lands::Stays, false),
    (&["pushd", "-1", "-n"], Move::Stays, Lands::Stays, false),
    (&["pushd", "--", "a"], Move::To(2), Lands::In(2), false),
    (&["pushd", "--", "-d"], Move::To(2), Lands::In(2), false),
    (&["pushd", "--", "+1"], Move::To(2), Lands::In(2), false),
    (&["pushd", "--", "-n"], Move::To(2), Lands::In(2), false),
    (&["pushd", "./-d"], Move::To(1), Lands::In(1), false),
    (&["pushd", "+1"], Move::Unknown, Lands::Elsewhere, false),
    (&["pushd", "-1"], Move::Unknown, Lands::Elsewhere, false),
    (&["pushd", "+0"], Move::Unknown, Lands::Stays, false),
    (&["pushd"], Move::Unknown, Lands::Elsewhere, false),
    (&["pushd", "-"], Move::Unknown, Lands::Elsewhere, false),
    (
        &["pushd", "--", "-"],
        Move::Unknown,
        Lands::Elsewhere,
        false,
    ),
    // Two operands for the parser (too many arguments); bash reads `-n`
    // after the number: neither moves.
    (&["pushd", "+1", "-n"], Move::Stays, Lands::Stays, false),
    // Refused by bash (`-d`: an invalid number; too many arguments).
    (&["pushd", "-d"], Move::Unknown, Lands::Stays, true),
    (&["pushd", "-q", "a"], Move::Unknown, Lands::Stays, true),
    (&["pushd", "a", "b"], Move::Stays, Lands::Stays, false),
    (&["pushd", "a", "-n"], Move::Stays, Lands::Stays, false),
    (&["popd"], Move::Unknown, Lands::Elsewhere, false),
    (&["popd", "+0"], Move::Unknown, Lands::Elsewhere, false),
    (&["popd", "-n"], Move::Stays, Lands::Stays, false),
    (&["popd", "-n", "+0"], Move::Stays, Lands::Stays, false),
    (&["popd", "+0", "-n"], Move::Stays, Lands::Stays, false),
    (&["popd", "-1", "-n"], Move::Stays, Lands::Stays, false),
    // After `--` bash ignores the words: a plain `popd`.
    (
        &["popd", "--", "-n"],
        Move::Unknown,
        Lands::Elsewhere,
        false,
    ),
    (&["cd", "a"], Move::To(1), Lands::In(1), false),
    (&["cd", "-P", "a"], Move::To(2), Lands::In(2), false),
    (&["cd", "--", "a"], Move::To(2), Lands::In(2), false),
];

#[test]
fn pushd_and_popd_move_as_bash_moves() {
    let mut failures = Vec::new();
    let bash = here("bash", &mut failures);
    for &(argv, want, lands, wider) in CHDIR_CASES {
        let got = directory_change(argv, 0).map(|c| c.to);
        if got != Some(want) {
            failures.push(format!("{argv:?}: read as {got:?}, want {want:?}"));
        }
        if !bash {
            continue;
        }
        let home = home();
        for dir in ["a", "b", "-d", "+1", "-n", "s1", "s2"] {
            std::fs::create_dir(home.path().join(dir)).unwrap();
        }
        let script = format!(
            "pushd -n \"$HOME/s1\" >/dev/null; pushd -n \"$HOME/s2\" >/dev/null; \
             cd /; cd \"$HOME\"; {} >/dev/null 2>&1; echo \"AT $PWD\"",
            line(argv)
        );
        let out = run(&["bash", "-c", &script], home.path());
        let Some(at) = out.lines().find_map(|l| l.strip_prefix("AT ")) else {
            failures.push(format!("{argv:?}: bash printed {out:?}"));
            continue;
        };
        let real = if Path::new(at) == home.path() {
            Lands::Stays
        } else {
            match argv
                .iter()
                .rposition(|w| home.path().join(w) == Path::new(at))
            {
                Some(i) => Lands::In(i),
                None => Lands::Elsewhere,
            }
        };
        if real != lands {
            failures.push(format!("{argv:?}: bash is in {at}, want {lands:?}"));
        }
        // What bash does, the analysis sees: a directory it stays in or
        // moves to by a word is read so; anything else is unknown.
        let seen = match (want, real) {
            (_, _) if wider => true,
            (Move::Stays, Lands::Stays) => true,
            (Move::To(i), Lands::In(j)) => i == j,
            (Move::Unknown, Lands::Elsewhere | Lands::Stays) => true,
            _ => false,
        };
        if !seen {
            failures.push(format!(
                "{argv:?}: bash is in {at}, the analysis reads {want:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// zsh reads `cd OLD NEW` and `pushd OLD NEW` as the working directory with
/// OLD replaced by NEW, bash's `pushd -n DIR` among them: the analysis names
/// the word zsh reads as OLD, and the policy's path checks leave the
/// directory unknown when the directory holds it.
#[test]
fn zsh_reads_two_words_as_a_substitution() {
    let mut failures = Vec::new();
    for (argv, old) in [
        (&["pushd", "-n", "a"][..], Some(1)),
        (&["cd", "x-n", "xa"], Some(1)),
        (&["pushd", "-q", "-n", "a"], Some(2)),
        (&["pushd", "a"], None),
        (&["popd", "-n", "+1"], None),
    ] {
        let got = directory_change(argv, 0).and_then(|c| c.zsh_old);
        if got != old {
            failures.push(format!("{argv:?}: zsh's OLD read as {got:?}, want {old:?}"));
        }
    }
    if here("zsh", &mut failures) {
        let home = home();
        for dir in ["x-n", "xa"] {
            std::fs::create_dir(home.path().join(dir)).unwrap();
        }
        let out = run(
            &[
                "zsh",
                "-c",
                "cd x-n && pushd -n a >/dev/null 2>&1; echo \"AT $PWD\"",
            ],
            home.path(),
        );
        let want = format!("AT {}", home.path().join("xa").display());
        if !out.lines().any(|l| l == want) {
            failures.push(format!(
                "zsh's `pushd -n a` in x-n printed {out:?}, want {want:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
