//! The one program registry: everything the shell analysis knows about a
//! program is one [`Entry`] of [`REGISTRY`], found by its name.
//!
//! An entry holds the program's option grammar and its subcommands'
//! ([`Grammar`]: which options take a value, required, optional-attached or
//! absent, and which parser reads them), and what its options and operands
//! do: run programs or hide them, write files the gate does not judge, or
//! take file names from input ([`Program`]); which operands and option
//! values it writes ([`Writer`]); the trees it reads ([`RecursiveReader`]);
//! whether it reads its program from standard input ([`Interpreter`]), wraps
//! another command ([`Wrapper`]), is a shell, runs text nobody can see,
//! names files in option values of its own form, only prints its words,
//! takes a message option, changes directory, writes an output file of its
//! own, runs another program named after a word, or exists to run others
//! (`runs_any`); how its common flags are spelled ([`FlagSpelling`]); and,
//! where a program needs code that is not data, the named behaviour that
//! code implements ([`Special`]). The walkers (`parse`, `programs`, `reads`,
//! `wrappers`), the policy's path checks and `sandgate audit`'s suggestions
//! ask the registry and hold no program names of their own
//! (`tests/one_registry.rs` checks it). The one argv parser
//! (the `options` module) reads commands with the entry's grammar, a shell's
//! own options included (`bash -oO pipefail dotglob -c`, `+c`, `-norc`,
//! `fish -c A -c B`: [`ParserKind::Bash`], [`ParserKind::Ash`],
//! [`ParserKind::Ksh`], and fish's `getopt_long`), and `set`'s (`o;`: bash's
//! `set -o -o globstar`), `shopt`'s, `trap`'s, and `cd`'s, `pushd`'s and
//! `popd`'s (`reads::directory_change`: `pushd -n DIR` stays, `pushd --
//! -dir` moves, `+N`/`-N` leave the directory unknown); what the options
//! mean (which one gives the script, reads from input, runs startup files,
//! sets a pattern option, prints instead of setting a trap, keeps the
//! directory) is named by the entry's `shell` and [`Special`].
//!
//! Still read by code rather than by the parser, because the parser would
//! read less, and the gate reads wider on purpose (fail closed):
//! - git's `--format`/`--pretty` values (the entry's `asking_values`: `%G`,
//!   and the ref-filter atom `%(signature)` of `for-each-ref`, `branch` and
//!   `tag`): every word after `git` is scanned, attached or not, and under
//!   any abbreviation (`--form=`, which parse-options takes), so the option
//!   is seen after a subcommand that has no grammar (an alias: `git l
//!   --format=%G?`), after `--` and as another option's value; the parser
//!   reads it only where a subcommand's grammar names it.
//! - pnpm's `--config.KEY` words (`asking_prefixes`): a family of options,
//!   one per KEY, that no grammar string can name; any word with the prefix
//!   counts, also after `--` or a script's name.
//! - The clusters `programs::spelled` writes out for deny rules: a word of
//!   the entry's flag letters is split even where the grammar reads it as
//!   another option's value (`git push -o -f`), so a deny rule matches it.
//! - `find`'s expression (`-name P`, `-exec CMD ;`, `( … )`): a language of
//!   its own, not options; find stops its options at the first word that is
//!   not `-H`, `-L`, `-P`, `-D LIST` or `-OLEVEL`, which getopt would read
//!   as a cluster (`-name`), so those are read with the grammar's letters
//!   one word at a time (`reads`' `find_start_points`).
//!
//! A facet still spells its program's name (`writer("cp", …)` in `cp`'s
//! entry); a test checks that it is the entry's.
//!
//! Adding a program, or an option of one, is one edit here: its entry (kept
//! in name order, which [`entry_named`] relies on), with the option in its
//! grammar's string and, if it does something, in the facet that says what.
//! Option names in the facets are written in full; how a command spells them
//! (abbreviated, clustered, attached) is the grammar's.
//!
//! The grammars of GNU coreutils, grep, diff, sed, tar, findutils' xargs,
//! make, wget, curl, rsync, git's subcommands, cargo, node, pip, pytest,
//! mypy, pylint, flake8, black, ruff, uv, tox, nox, pyright, rustc, rustup,
//! yarn and pnpm were taken from the programs' own `--help` (`git SUB -h`),
//! npm's from `npm help 7 config`, on a Debian 12 system; the shells' from
//! running bash 5.2, dash 0.5.12, busybox 1.35 ash, zsh 5.9, mksh R59c and
//! fish 3.6 (`tests/shell_options.rs` runs them); the others from their
//! manuals. A short option string is `getopt`'s: a letter alone is a
//! flag, `x:` takes a value, `x::` takes one only attached (`-xVALUE`), and
//! `x;` the next word unless it starts with `-` or `+` (bash's `set -o`). Long
//! options are separated by blanks: `name` is a flag, `name=` takes a value,
//! `name=?` takes one only attached (`--name=VALUE`).

use super::entry::{
    FileForm, FlagSpelling, Interpreter, Program, Reach, RecursiveReader, Roots, RunningOption,
    Runs, Wrapper, Writer, WrittenOperands,
};
use super::grammar::{Grammar, ParserKind};

/// Everything the analysis knows about one program.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// The command name (a path's last component is looked up).
    pub name: &'static str,
    /// Another program whose grammar this name reads with (`egrep` is
    /// `grep -E`, `gtar` is `tar`).
    pub alias: Option<&'static str>,
    /// The program's own options (before a subcommand, for a program that
    /// has [`Entry::subcommands`]).
    pub grammar: Option<Grammar>,
    /// The grammars of its subcommands (`git diff`, `cargo build`).
    pub subcommands: &'static [Grammar],
    /// Options and subcommands that run programs, hide them, write what the
    /// gate does not judge, or take file names from input.
    pub runs: Option<Program>,
    /// Which operands and option values it writes.
    pub writes: Option<Writer>,
    /// The trees it reads, per subcommand.
    pub reads: &'static [RecursiveReader],
    /// It reads its program from standard input when given none.
    pub interpreter: Option<Interpreter>,
    /// It runs the command given in its arguments.
    pub wrapper: Option<Wrapper>,
    /// It is a shell.
    pub shell: Option<Shell>,
    /// It runs text the gate cannot see, and why (`eval`, `source`).
    pub opaque: Option<&'static str>,
    /// How its common flags are spelled, per subcommand.
    pub spellings: &'static [FlagSpelling],
    /// Options whose value names a file in a form of its own (`curl -d @F`).
    pub file_values: &'static [(&'static str, FileForm)],
    /// Its request items name a file after an `@` (HTTPie's `@FILE`,
    /// `NAME@FILE`, `NAME=@FILE`, `NAME:=@FILE`).
    pub file_items: bool,
    /// It never opens a file named by an argument: it prints, compares or
    /// computes with its words.
    pub text_only: bool,
    /// Options whose value is a message, not a path (`git commit -m`).
    pub text_options: &'static [&'static str],
    /// Options that make it work in another directory (`make -C DIR`); for
    /// a wrapper, the command it runs.
    pub directory_options: &'static [&'static str],
    /// Options naming a file a wrapper writes of its own (`time -o FILE`).
    pub outputs: &'static [&'static str],
    /// The word after which another program's name and arguments follow
    /// (`python -m pytest`, `uv run pytest`), read by that program's entry.
    pub runner: Option<&'static str>,
    /// What the walkers do for it in code, not data.
    pub special: &'static [Special],
    /// Its purpose is to run other programs, named anywhere in its words
    /// (`su`, `chroot`, `strace`, `npx`): a rule allowing it allows
    /// whatever it is told to run, so `sandgate audit` suggests none. The
    /// wrappers the analysis strips are judged by what they run instead.
    pub runs_any: bool,
}

/// A shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// Its `-c SCRIPT` is parsed as a bash script of its own.
    Bash,
    /// Its language is not bash's: what it runs cannot be read (why).
    Unread(&'static str),
}

/// A behaviour of a program that the walkers implement in code, named by
/// its entry so that the entry stays the one place that says what the
/// analysis knows about the program. Each variant says which walker
/// implements it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// Changes the working directory of the commands after it, reading its
    /// options with its grammar (`reads::directory_change`); the policy's
    /// path checks follow it (`pathwords`, `Places::follow`).
    ChangesDirectory(Chdir),
    /// Adds words read from its input to the command it runs, or puts them
    /// where its replacement text (`-I R`, `-i`, `--replace`) stands
    /// (`xargs`): a script holding that text is built at run time (`parse`),
    /// and any word could name a protected path (`pathwords`).
    ArgumentsFromInput,
    /// Writes this file in the working directory (`nohup.out`) (`pathwords`).
    WritesFile(&'static str),
    /// Its scripts (`-e`, `--expression`, else the first operand) are sed
    /// scripts, scanned for what runs programs or opens files; `-i` writes
    /// its file operands (`programs::sed_scripts`, `programs::written`).
    SedScripts,
    /// Its expression is read word by word (`-exec CMD ;`, `-delete`,
    /// `-fprint FILE`), not by a grammar; `-delete` removes what it finds
    /// below its start points (`parse::given`, `programs::written`,
    /// `reads::recursive_reads`).
    FindExpression,
    /// `--output=FILE` and `--output-directory=DIR` of every subcommand
    /// write FILE, and `-o` does too in these subcommands (git's
    /// `format-patch`, `archive`) (`programs::written`).
    OutputOptions {
        /// The subcommands whose `-o` names the output.
        short_o: &'static [&'static str],
    },
    /// Settings given on the line (`git -c KEY=VALUE`, `git config KEY
    /// VALUE`) whose key names a program or more settings make the command
    /// unanalysable (`parse`).
    ProgramSettings {
        /// The global option that sets one (`-c`).
        option: &'static str,
        /// The subcommand that sets one (`config`).
        subcommand: &'static str,
        /// Keys, or beginnings of keys ending in `.`, that name a program
        /// (compared without case).
        keys: &'static [&'static str],
        /// Last parts of keys that name a program.
        key_ends: &'static [&'static str],
    },
    /// Removes the sources it moves: everything below them is written
    /// (`mv`) (`programs::written`).
    RemovesSources,
    /// Its last operand may be a copy of a symlink the line makes
    /// (`rsync -l`) (`pathwords::copies_of_links`).
    CopiesLinks,
    /// `-s` or this long option makes it make symlinks (`ln --symbolic`,
    /// `cp --symbolic-link`) (`reads::symlinks_made`).
    MakesSymlinks(&'static str),
    /// Its `NAME=value` operands assign variables (`export`, `declare`), as
    /// a `NAME=value` prefix does (`parse`).
    AssignsVariables,
    /// tree-sitter-bash reads its operands as names to declare or unset (a
    /// `declaration_command` or `unset_command`): one that is no name is a
    /// syntax error to it, so the plain-line shortcut leaves such a line
    /// to the parser (`plain`).
    DeclaresNames,
    /// Its first operand is a script that runs later (`trap ACTION SIG`)
    /// (`parse`).
    RunsLater,
    /// It sets shell options that can widen what a pattern matches
    /// (`shopt -s dotglob`, `set -o globstar`, `bash -O nocaseglob`)
    /// (`reads::glob_widening`).
    SetsGlobOptions(GlobOptions),
    /// These options run a command before the script (fish's `-C`) (`parse`).
    InitCommand(&'static [&'static str]),
}

/// How a directory changer picks its directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chdir {
    /// `cd [-L|-P|-e|-@] [DIR]`: options first; no directory is `$HOME`.
    Cd,
    /// `pushd [-n] [+N | -N | DIR]`: `-n` keeps the directory, `+N` / `-N`
    /// rotate the stack and no operand swaps its top two (known only when
    /// it runs), `--` makes the next word the directory.
    Pushd,
    /// `popd [-n] [+N | -N]`: `-n` keeps the directory; otherwise it is
    /// only known at run time.
    Popd,
}

/// How a command sets shell options that widen patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobOptions {
    /// `shopt -s NAME…`.
    Shopt,
    /// zsh's `setopt NAME…` and `unsetopt NAME…`.
    Setopt,
    /// `-o NAME`, `+o NAME`, `-O NAME`, `+O NAME` before the script; with
    /// `capital_g`, a `-G` flag too (ksh's `set -G`, globstar).
    Flags {
        /// `-G` turns on globstar.
        capital_g: bool,
    },
}

const fn entry(name: &'static str) -> Entry {
    Entry {
        name,
        alias: None,
        grammar: None,
        subcommands: &[],
        runs: None,
        writes: None,
        reads: &[],
        interpreter: None,
        wrapper: None,
        shell: None,
        opaque: None,
        spellings: &[],
        file_values: &[],
        file_items: false,
        text_only: false,
        text_options: &[],
        directory_options: &[],
        outputs: &[],
        runner: None,
        special: &[],
        runs_any: false,
    }
}

/// The entry of the program called `name` exactly (no path, no alias): a
/// binary search of [`REGISTRY`], which is kept in name order.
pub fn entry_named(name: &str) -> Option<&'static Entry> {
    REGISTRY
        .binary_search_by(|e| e.name.cmp(name))
        .ok()
        .map(|i| &REGISTRY[i])
}

/// The entry of the command `word` (`/usr/bin/rm` is `rm`).
pub fn entry_of(word: &str) -> Option<&'static Entry> {
    entry_named(word.rsplit('/').next().unwrap_or(word))
}

/// `name` without the version a program's name may carry
/// (`python3.12`, `python3` → `python`).
pub fn without_version(name: &str) -> &str {
    match name.strip_prefix("python") {
        Some(version) if version.chars().all(|c| c.is_ascii_digit() || c == '.') => "python",
        _ => name,
    }
}

/// The program whose grammar `name` reads with: its entry's alias
/// (`egrep` → `grep`), `python3.12` → `python`, or the name itself.
pub fn alias_of(name: &str) -> &str {
    let bare = without_version(name);
    if bare != name {
        return bare;
    }
    entry_named(name).and_then(|e| e.alias).unwrap_or(name)
}

/// Whether the program called `name` (exactly) has the behaviour `special`.
pub fn has_special(name: &str, special: Special) -> bool {
    entry_named(name).is_some_and(|e| e.has(special))
}

impl Entry {
    /// Whether the entry names the behaviour `special`.
    pub fn has(&self, special: Special) -> bool {
        self.special.contains(&special)
    }
}

/// Every grammar of the registry: each program's own, then its subcommands'.
pub fn grammars() -> impl Iterator<Item = &'static Grammar> {
    REGISTRY
        .iter()
        .flat_map(|e| e.grammar.iter().chain(e.subcommands))
}

/// Every entry's [`Program`] facet.
pub fn programs() -> impl Iterator<Item = &'static Program> {
    REGISTRY.iter().filter_map(|e| e.runs.as_ref())
}

/// Every entry's [`Writer`] facet.
pub fn writers() -> impl Iterator<Item = &'static Writer> {
    REGISTRY.iter().filter_map(|e| e.writes.as_ref())
}

/// Every entry's [`RecursiveReader`]s.
pub fn recursive_readers() -> impl Iterator<Item = &'static RecursiveReader> {
    REGISTRY.iter().flat_map(|e| e.reads)
}

/// Every entry's [`Interpreter`] facet.
pub fn interpreters() -> impl Iterator<Item = &'static Interpreter> {
    REGISTRY.iter().filter_map(|e| e.interpreter.as_ref())
}

/// Every entry's [`Wrapper`] facet.
pub fn wrappers() -> impl Iterator<Item = &'static Wrapper> {
    REGISTRY.iter().filter_map(|e| e.wrapper.as_ref())
}

/// Every entry's [`FlagSpelling`]s.
pub fn flag_spellings() -> impl Iterator<Item = &'static FlagSpelling> {
    REGISTRY.iter().flat_map(|e| e.spellings)
}

const fn with(
    parser: ParserKind,
    program: &'static str,
    short: &'static str,
    long: &'static str,
) -> Grammar {
    Grammar {
        program,
        subcommand: None,
        parser,
        short,
        long,
        old_style: false,
        plus: "",
    }
}

/// gawk's options that load code from files (`-i`, `-l`), and those that
/// name its program's file: shared by `awk` and `gawk`.
const AWK_LOADS: &[RunningOption] = &[
    hidden("-i"),
    hidden("--include"),
    hidden("-l"),
    hidden("--load"),
];
const AWK_PROGRAM_FILES: &[&str] = &["-f", "--file", "-E", "--exec"];

/// HTTPie's options, the same for `http` and `xh` (its Rust twin).
const HTTPIE_SHORT: &str = "a:A:b:d:fFhjmo:p:P:qsSvx";
const HTTPIE_LONG: &str = "auth= auth-type= body check-status download follow form headers help \
     ignore-stdin json offline output= print= session= session-read-only= verbose verify= version";

/// A program read by GNU `getopt_long`.
const fn gnu(program: &'static str, short: &'static str, long: &'static str) -> Grammar {
    with(ParserKind::Gnu, program, short, long)
}

/// A program read by `getopt_long` that stops at its first operand (the
/// command it runs).
const fn stop(program: &'static str, short: &'static str, long: &'static str) -> Grammar {
    with(ParserKind::GnuStop, program, short, long)
}

/// A program that takes only whole option names.
const fn exact(program: &'static str, short: &'static str, long: &'static str) -> Grammar {
    with(ParserKind::Exact, program, short, long)
}

/// A shell's own options, read by its own loop (`parser`); `plus` holds the
/// letters that mean after `+` what they mean after `-`.
const fn shell(
    parser: ParserKind,
    program: &'static str,
    short: &'static str,
    long: &'static str,
    plus: &'static str,
) -> Grammar {
    Grammar {
        plus,
        ..with(parser, program, short, long)
    }
}

/// bash's options (`bash --help`, `bash -c 'help set'`; shell.c reads its
/// long options first, then letters, and `c`, `l`, `s`, `o` and `O` mean
/// the same after `+`). `sh` is dash on Debian and bash elsewhere: it is
/// read with bash's grammar, whose reading takes in dash's (`+s`, which
/// bash reads from input and dash turns off, is read as bash does).
const BASH: Grammar = shell(
    ParserKind::Bash,
    "bash",
    "abBcCDefhHiklmnNo:O:prsStTuvxX",
    "debug debugger dump-po-strings dump-strings help init-file= login noediting \
     noprofile norc posix pretty-print protected rcfile= restricted verbose version",
    "clsoO",
);

/// dash's options (its manual: `dash [-aCefnuvxIimqVEbp] [+aCefnuvxIimqVEbp]
/// [-o option_name] [+o option_name] [-c string | -s]`, and `-l`); `c`, `l`
/// and `o` mean the same after `+`; no long options.
const DASH: Grammar = shell(ParserKind::Ash, "dash", "abCcEefIilmnpqsuVvxo:", "", "clo");

/// busybox ash's options (`busybox sh --help`): as dash's, with `--login`,
/// and `+s` reads from input as `-s` does. busybox's `hush` is read so too.
const BUSYBOX_ASH: Grammar = shell(
    ParserKind::Ash,
    "ash",
    "abCcEefIilmnpqsuVvxo:",
    "login",
    "clso",
);

/// zsh's options (`zsh --help`, zshoptions(1)): every letter and digit is a
/// setting, `-o NAME` takes the rest of its word or the next one, `--NAME`
/// sets an option by name (no value); only `c` and `o` mean the same after
/// `+` (`+s` and `+l` turn the setting off).
const ZSH: Grammar = shell(
    ParserKind::Ksh,
    "zsh",
    "0123456789abcdefghijklmnpqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZo:",
    "emacs help interactive login version vi",
    "co",
);

/// mksh's options (mksh(1): `[-+abCefhiklmnprUuvXx] [-T [!]tty | -] [-+o
/// option] [-c string | -is | file]`); only `o` means the same after `+`
/// (`+c` is no command, `+l` no login). Its relatives of the pdksh family
/// (`ksh`, `lksh`, `loksh`, `oksh`, `posh`) and the shells this project has
/// not run (`bosh`, `yash`) are read so too: like the reading before this
/// grammar, `+c` is no command for them. ksh's `-G` (globstar) is a letter.
const KSH: Grammar = shell(
    ParserKind::Ksh,
    "mksh",
    "abCcefGhiklmnprsUuvXxT:o:",
    "",
    "o",
);

/// fish's options (`fish --help`; `getopt_long` with `+`): `-c COMMAND` and
/// `-C COMMANDS` take their script as a value, and may be given again.
const FISH: Grammar = stop(
    "fish",
    "c:C:d:f:hilNno:p:Pv",
    "command= debug= debug-output= features= help init-command= interactive login no-config \
     no-execute print-debug-categories print-rusage-self private profile= profile-startup= \
     version",
);

/// bash's `set` (`help set`), with ksh's `-G` and zsh's letters read as
/// flags: `-o NAME` / `+o NAME` take the next word in turn, unless it starts
/// with `-` or `+` (`o;`): bash's `set -o` then takes no name and prints the
/// settings, and reads that word as options (`set -o -o globstar` sets
/// `globstar`); dash, zsh, mksh and busybox ash take any word as the name
/// and refuse `-o`, or (mksh's `set -o -f`) set the letter, which reading
/// the word as options sees too. An empty word is taken as the name, as
/// mksh and busybox ash take it (bash ends the options there). `-O NAME`
/// is read as `-o NAME` (no shell's `set` has it; reading it wider only
/// makes more commands widen patterns).
const SET: Grammar = shell(
    ParserKind::Ash,
    "set",
    "abBCeEfGhHkmnpPtTuvxo;O;",
    "",
    "abBCeEfGhHkmnpPtTuvxoO",
);

/// A program built on Python's argparse or optparse.
const fn argparse(program: &'static str, short: &'static str, long: &'static str) -> Grammar {
    with(ParserKind::Argparse, program, short, long)
}

/// A git subcommand read by git's parse-options.
const fn git(sub: &'static str, short: &'static str, long: &'static str) -> Grammar {
    Grammar {
        subcommand: Some(sub),
        ..with(ParserKind::Git, "git", short, long)
    }
}

/// A git subcommand whose options git reads by whole names only
/// (`setup_revisions`, or parse-options keeping unknown options).
const fn git_exact(sub: &'static str, short: &'static str, long: &'static str) -> Grammar {
    Grammar {
        subcommand: Some(sub),
        ..with(ParserKind::Exact, "git", short, long)
    }
}

/// The options of coreutils' checksum programs (`md5sum`, `sha*sum`,
/// `b2sum`): one parser.
const SUM_SHORT: &str = "bctwz";

/// Their long options.
const SUM_LONG: &str =
    "binary check help ignore-missing quiet status strict tag text version warn \
         zero";

/// The short options of git's diff machinery (`git diff`; `git log`,
/// `git show` and `git whatchanged` add the revision walker's).
const LOG_SHORT: &str = "aB::bC::DG:I:l:M::O:pRS:sU::uWX::wz";

/// The diff machinery's long options, which `git diff` and the log family
/// read (as a macro, so that `concat!` can join them with each one's own).
macro_rules! log_long {
    () => {
        "abbrev=? anchored= binary break-rewrites=? check color=? color-moved=? color-moved-ws= color-words=? \
         compact-summary cumulative default-prefix diff-algorithm= diff-filter= dirstat=? \
         dirstat-by-file=? dst-prefix= exit-code ext-diff \
         find-copies=? find-copies-harder find-object= find-renames=? follow full-index \
         function-context histogram ignore-all-space ignore-blank-lines \
         ignore-cr-at-eol ignore-matching-lines= ignore-space-at-eol ignore-space-change \
         ignore-submodules=? indent-heuristic inter-hunk-context= irreversible-delete \
         ita-invisible-in-index ita-visible-in-index line-prefix= minimal name-only \
         name-status no-abbrev no-color-moved no-color-moved-ws no-compact-summary \
         no-exit-code no-ext-diff no-find-copies-harder no-follow no-full-index \
         no-function-context no-ignore-matching-lines no-indent-heuristic no-patch \
         no-prefix no-quiet no-relative no-rename-empty no-renames no-text no-textconv \
         numstat output= output-indicator-context= output-indicator-new= \
         output-indicator-old= patch patch-with-raw patch-with-stat patience \
         pickaxe-all pickaxe-regex quiet raw relative=? rename-empty rotate-to= \
         shortstat skip-to= src-prefix= stat=? stat-count= stat-graph-width= stat-name-width= stat-width= \
         submodule=? summary text textconv unified=? word-diff=? word-diff-regex= \
         ws-error-highlight="
    };
}

/// The short options of `git log`, `git show` and `git whatchanged`: the
/// diff machinery's and the revision walker's.
const LOG_WALK_SHORT: &str = "aB::bC::DG:I:L:l:M::O:pqRS:sU::uWX::wz";

/// Their long options: the diff machinery's and the revision walker's that
/// `git log -h` lists.
const LOG_WALK_LONG: &str = concat!(
    "clear-decorations decorate=? decorate-refs= decorate-refs-exclude= mailmap \
     source use-mailmap ",
    log_long!()
);

const fn program(name: &'static str) -> Program {
    Program {
        name,
        options: &[],
        subcommands: &[],
        text_operand: None,
        asking_globals: &[],
        asking_values: &[],
        module_keywords: &[],
        asking_prefixes: &[],
    }
}

const fn hidden(name: &'static str) -> RunningOption {
    RunningOption {
        name,
        runs: Runs::Hidden,
    }
}

const fn runs(name: &'static str, runs: Runs) -> RunningOption {
    RunningOption { name, runs }
}

const fn names_from(name: &'static str) -> RunningOption {
    RunningOption {
        name,
        runs: Runs::NamesFromInput,
    }
}

const fn writes(name: &'static str) -> RunningOption {
    RunningOption {
        name,
        runs: Runs::Writes,
    }
}

/// `--files0-from`, as `sort`, `wc` and `du` spell it.
const FILES0_FROM: &[RunningOption] = &[names_from("--files0-from")];

/// `-c`/`--check`: the checksum tools read the files a list names.
const CHECK_LIST: &[RunningOption] = &[names_from("-c"), names_from("--check")];

/// cargo: a configuration given on the line can name a runner, a linker or
/// flags that run programs; the target, artifact and log files go where
/// the options say; `--fix` rewrites sources; `--open` starts a browser.
const CARGO_OPTIONS: &[RunningOption] = &[
    hidden("--config"),
    hidden("-Z"),
    hidden("-C"),
    hidden("--manifest-path"),
    hidden("--open"),
    // nextest's configuration files name setup scripts and wrappers.
    hidden("--config-file"),
    hidden("--tool-config-file"),
    hidden("--user-config-file"),
    writes("--fix"),
    writes("--target-dir"),
    writes("--artifact-dir"),
    writes("--logfile"),
];

/// npm: the shell that runs scripts, the programs it starts, configuration
/// files, another prefix, and where logs and the cache are written.
const NPM_OPTIONS: &[RunningOption] = &[
    hidden("--script-shell"),
    hidden("--shell"),
    hidden("--node-options"),
    hidden("--node-gyp"),
    hidden("--git"),
    hidden("--call"),
    hidden("--userconfig"),
    hidden("--globalconfig"),
    hidden("--prefix"),
    hidden("-C"),
    hidden("--editor"),
    hidden("--browser"),
    hidden("--viewer"),
    hidden("--init-module"),
    writes("--logs-dir"),
    writes("--cache"),
];

/// yarn: another directory, its configuration file, and where the cache
/// and the modules go.
const YARN_OPTIONS: &[RunningOption] = &[
    hidden("--cwd"),
    hidden("--use-yarnrc"),
    writes("--cache-folder"),
    writes("--preferred-cache-folder"),
    writes("--global-folder"),
    writes("--link-folder"),
    writes("--modules-folder"),
];

/// pnpm: another directory, more settings, and where its state and store go.
const PNPM_OPTIONS: &[RunningOption] = &[
    hidden("-C"),
    hidden("--dir"),
    hidden("--env-file"),
    hidden("--npmrc-auth-file"),
    writes("--state-dir"),
    writes("--store-dir"),
];

/// node: options that load other code or write profiles, traces, reports
/// and test results.
const NODE_OPTIONS: &[RunningOption] = &[
    hidden("-e"),
    hidden("--eval"),
    hidden("-p"),
    hidden("--print"),
    hidden("-r"),
    hidden("--require"),
    hidden("--import"),
    hidden("--loader"),
    hidden("--experimental-loader"),
    hidden("--test-reporter"),
    hidden("--run"),
    hidden("--inspect"),
    hidden("--inspect-brk"),
    hidden("--inspect-wait"),
    // An env file can set NODE_OPTIONS; OpenSSL's configuration loads engines.
    hidden("--env-file"),
    hidden("--env-file-if-exists"),
    hidden("--openssl-config"),
    writes("--tls-keylog"),
    writes("--cpu-prof-dir"),
    writes("--heap-prof-dir"),
    writes("--test-reporter-destination"),
    writes("--prof"),
    writes("--cpu-prof"),
    writes("--heap-prof"),
    writes("--heapsnapshot-signal"),
    writes("--heapsnapshot-near-heap-limit"),
    writes("--diagnostic-dir"),
    writes("--trace-events-enabled"),
    writes("--trace-event-categories"),
    writes("--trace-event-file-pattern"),
    writes("--redirect-warnings"),
    writes("--report-on-signal"),
    writes("--report-on-fatalerror"),
    writes("--report-uncaught-exception"),
    writes("--report-dir"),
    writes("--report-directory"),
    writes("--report-filename"),
    writes("--build-snapshot"),
    writes("--perf-basic-prof"),
    writes("--perf-basic-prof-only-functions"),
    writes("--perf-prof"),
    writes("--logfile"),
    writes("--experimental-sea-config"),
];

/// pytest: `--basetemp` is emptied before the run; result, log and debug
/// files are written; settings given on the line can move them.
const PYTEST_OPTIONS: &[RunningOption] = &[
    writes("--basetemp"),
    writes("--junitxml"),
    writes("--junit-xml"),
    writes("--debug"),
    writes("--report-log"),
    writes("--log-file"),
    writes("--html"),
    writes("--cov-report"),
    writes("--rootdir"),
    hidden("-c"),
    hidden("--config-file"),
    hidden("-o"),
    hidden("--override-ini"),
    hidden("--pdbcls"),
    hidden("--pastebin"),
];

/// pip: the log and cache files, another interpreter.
const PIP_OPTIONS: &[RunningOption] = &[writes("--log"), writes("--cache-dir"), hidden("--python")];

/// mypy: another interpreter, installing stubs, reports and the cache.
const MYPY_OPTIONS: &[RunningOption] = &[
    hidden("--python-executable"),
    hidden("--install-types"),
    hidden("--config-file"),
    writes("--junit-xml"),
    writes("--cache-dir"),
    writes("--html-report"),
    writes("--xml-report"),
    writes("--txt-report"),
    writes("--xslt-html-report"),
    writes("--xslt-txt-report"),
    writes("--linecount-report"),
    writes("--linecoverage-report"),
    writes("--lineprecision-report"),
    writes("--cobertura-xml-report"),
    writes("--any-exprs-report"),
];

const fn writer(name: &'static str, operands: WrittenOperands) -> Writer {
    Writer {
        name,
        operands,
        writes_value: &[],
        recursive: &[],
        assigned: &[],
    }
}

/// `-t DIR`, `--target-directory=DIR`.
const TARGET_DIRECTORY: &[&str] = &["-t", "--target-directory"];

const fn reader(name: &'static str, roots: Roots, reach: Reach) -> RecursiveReader {
    RecursiveReader {
        name,
        subcommand: None,
        recursive: &[],
        hidden: None,
        roots,
        default_here: false,
        reach,
        not_reading: &[],
    }
}

const GREP_PATTERN: &[&str] = &["-e", "-f", "--regexp", "--file"];

const GREP_RECURSIVE: &[&str] = &[
    "-r",
    "-R",
    "--recursive",
    "--dereference-recursive",
    "-d recurse",
    "--directories recurse",
];

const fn grep(name: &'static str, recursive: &'static [&'static str]) -> RecursiveReader {
    RecursiveReader {
        recursive,
        default_here: true,
        ..reader(name, Roots::AfterPattern(GREP_PATTERN), Reach::Contents)
    }
}

const fn interpreter(name: &'static str) -> Interpreter {
    Interpreter {
        name,
        program_options: &[],
        stops: &["--version", "--help", "-h"],
        interactive: &[],
    }
}

const PYTHON: Interpreter = Interpreter {
    program_options: &["-c", "-m"],
    stops: &["--version", "-V", "--help", "-h", "--help-all"],
    interactive: &["-i"],
    ..interpreter("python")
};

const NO: &[&str] = &[];

const fn wrapper(name: &'static str) -> Wrapper {
    Wrapper {
        name,
        numeric_flags: false,
        operands: 0,
        assignments: false,
        elevates: false,
        opaque: NO,
    }
}

/// Keys of `git -c KEY=VALUE` and `git config KEY VALUE` whose value is a
/// program, a script or a file of more settings. Matched case-insensitively,
/// as whole keys, as prefixes ending in `.`, or as a last part.
pub const GIT_PROGRAM_KEYS: &[&str] = &[
    "alias.",
    "pager.",
    "filter.",
    "include.",
    "includeif.",
    // Signatures run gpg or ssh-keygen; formats may show them.
    "gpg.",
    "log.showsignature",
    "pretty.",
    "format.pretty",
    // Another work tree; files read or written elsewhere.
    "core.worktree",
    "core.attributesfile",
    "core.excludesfile",
    "mailmap.",
    "blame.ignorerevsfile",
    "trace2.",
];

/// Last parts of git configuration keys that name a program.
pub const GIT_PROGRAM_KEY_ENDS: &[&str] = &[
    "pager",
    "editor",
    "sshcommand",
    "fsmonitor",
    "hookspath",
    "askpass",
    "gitproxy",
    "external",
    "textconv",
    "command",
    "cmd",
    "program",
    "helper",
    "driver",
    "packobjectshook",
    "path",
];

/// Every program the analysis knows, in name order.
pub const REGISTRY: &[Entry] = &[
    Entry {
        opaque: Some("`.` runs the commands of a file"),
        ..entry(".")
    },
    Entry {
        grammar: Some(exact("7z", "", "")),
        reads: &[
            RecursiveReader {
                subcommand: Some("a"),
                ..reader("7z", Roots::AllButFirst, Reach::Contents)
            },
        ],
        ..entry("7z")
    },
    Entry {
        grammar: Some(exact("7za", "", "")),
        reads: &[
            RecursiveReader {
                subcommand: Some("a"),
                ..reader("7za", Roots::AllButFirst, Reach::Contents)
            },
        ],
        ..entry("7za")
    },
    Entry {
        text_only: true,
        ..entry(":")
    },
    Entry {
        grammar: Some(exact(
            "R",
            "e:f:gh",
            "args file= help interactive no-save quiet save slave vanilla version",
        )),
        runs: Some(Program {
            options: &[hidden("-e")],
            ..program("R")
        }),
        interpreter: Some(Interpreter {
            program_options: &["-e", "-f", "--file"],
            stops: &["--version", "--help", "-h"],
            ..interpreter("R")
        }),
        ..entry("R")
    },
    Entry {
        grammar: Some(exact("Rscript", "e:", "default-packages= help verbose version")),
        runs: Some(Program {
            options: &[hidden("-e")],
            ..program("Rscript")
        }),
        interpreter: Some(Interpreter {
            program_options: &["-e"],
            stops: &["--version", "--help"],
            ..interpreter("Rscript")
        }),
        ..entry("Rscript")
    },
    Entry {
        text_only: true,
        ..entry("[")
    },
    Entry {
        grammar: Some(argparse(
            "ack",
            "A:B:C:fg:hHiIlLm:noQsvwx1",
            "after-context= before-context= color colour context=? count dump env \
             files-from= filter follow group heading help help-types ignore-case \
             ignore-dir= ignore-directory= ignore-file= insensitive invert-match literal \
             match= max-count= noenv nofilter nofollow nogroup noheading nopager output= \
             pager= print0 recurse smart-case sort-files type= type-add= type-del= \
             type-set= version with-filename word-regexp",
        )),
        reads: &[
            RecursiveReader {
                default_here: true,
                not_reading: &["--version", "--help", "--help-types"],
                ..reader(
                    "ack",
                    Roots::AfterPattern(&["--match", "-f", "-g"]),
                    Reach::Contents,
                )
            },
        ],
        ..entry("ack")
    },
    Entry {
        grammar: Some(gnu(
            "ag",
            "A:aB:C:DfG:g:hilLm:np:QrsStuUvVwW:z0",
            "ackmate after= all-text all-types before= break case-sensitive color \
             color-line-number= color-match= color-path= column context=? count depth= \
             file-search-regex= files-with-matches files-without-matches filename follow \
             group heading help hidden ignore= ignore-case ignore-dir= invert-match \
             line-numbers list-file-types literal max-count= noaffinity nobreak nocolor \
             nofilename nofollow nogroup noheading nomultiline nopager numbers one-device \
             only-matching pager= parallel path-to-ignore= print-all-files print-long-lines \
             search-binary search-files search-zip silent skip-vcs-ignores smart-case stats \
             unrestricted version vimgrep width= word-regexp workers= zip",
        )),
        reads: &[
            RecursiveReader {
                hidden: Some(&["--hidden", "-u", "--unrestricted"]),
                default_here: true,
                not_reading: &["--version", "--help", "-h"],
                ..reader("ag", Roots::AfterPattern(&["-g"]), Reach::Contents)
            },
        ],
        ..entry("ag")
    },
    Entry {
        grammar: Some(BUSYBOX_ASH),
        shell: Some(Shell::Bash),
        special: &[Special::SetsGlobOptions(GlobOptions::Flags { capital_g: false })],
        ..entry("ash")
    },
    Entry {
        alias: Some("gawk"),
        runs: Some(Program {
            options: AWK_LOADS,
            text_operand: Some(AWK_PROGRAM_FILES),
            ..program("awk")
        }),
        ..entry("awk")
    },
    Entry {
        grammar: Some(gnu(
            "b2sum",
            "bcl:twz",
            "binary check help ignore-missing length= quiet status strict tag text version \
             warn zero",
        )),
        runs: Some(Program {
            options: CHECK_LIST,
            ..program("b2sum")
        }),
        ..entry("b2sum")
    },
    Entry {
        grammar: Some(gnu("base64", "diw:", "decode help ignore-garbage version wrap=")),
        ..entry("base64")
    },
    Entry {
        grammar: Some(gnu("basename", "as:z", "help multiple suffix= version zero")),
        text_only: true,
        ..entry("basename")
    },
    Entry {
        grammar: Some(BASH),
        shell: Some(Shell::Bash),
        special: &[Special::SetsGlobOptions(GlobOptions::Flags { capital_g: false })],
        ..entry("bash")
    },
    Entry {
        grammar: Some(exact(
            "black",
            "Cc:hl:qSt:vW:x",
            "cache-dir= check code= color= config= diff enable-unstable-feature= \
             exclude= extend-exclude= fast= force-exclude= help include= ipynb \
             line-length= line-ranges= no-cache preview pyi python-cell-magics= quiet \
             required-version= skip-magic-trailing-comma skip-source-first-line \
             skip-string-normalization stdin-filename= target-version= unstable verbose \
             version workers=",
        )),
        runs: Some(Program {
            options: &[writes("--cache-dir")],
            ..program("black")
        }),
        ..entry("black")
    },
    Entry {
        grammar: Some(Grammar {
            program: "bosh",
            ..KSH
        }),
        shell: Some(Shell::Bash),
        ..entry("bosh")
    },
    Entry {
        grammar: Some(stop("builtin", "", "")),
        wrapper: Some(wrapper("builtin")),
        ..entry("builtin")
    },
    Entry {
        grammar: Some(exact("bun", "e:p:r:", "eval= print= preload= help version")),
        runs: Some(Program {
            options: &[hidden("-e"), hidden("--eval")],
            ..program("bun")
        }),
        runs_any: true,
        ..entry("bun")
    },
    Entry {
        runs_any: true,
        ..entry("bunx")
    },
    Entry {
        grammar: Some(stop("busybox", "", "list list-full")),
        // `busybox APPLET …` runs the applet named.
        wrapper: Some(wrapper("busybox")),
        ..entry("busybox")
    },
    Entry {
        grammar: Some(exact(
            "cargo",
            "C:hqVvZ:",
            "color= config= explain= frozen help list locked offline quiet verbose version",
        )),
        subcommands: &[
            Grammar {
                subcommand: Some("build"),
                ..exact(
                    "cargo",
                    "F:hj:p::qrvZ:",
                    "all all-features all-targets artifact-dir= bench=? benches bin=? bins color= \
                     config= example=? examples exclude= features= frozen future-incompat-report \
                     help ignore-rust-version jobs= keep-going lib locked manifest-path= \
                     message-format= no-default-features offline package=? profile= quiet release \
                     target=? target-dir= test=? tests timings unit-graph verbose workspace",
                )
            },
            Grammar {
                subcommand: Some("check"),
                ..exact(
                    "cargo",
                    "F:hj:p::qrvZ:",
                    "all all-features all-targets bench=? benches bin=? bins color= config= \
                     example=? examples exclude= features= frozen future-incompat-report help \
                     ignore-rust-version jobs= keep-going lib locked manifest-path= message-format= \
                     no-default-features offline package=? profile= quiet release target=? \
                     target-dir= test=? tests timings unit-graph verbose workspace",
                )
            },
            // `logfile=` is the test harness's (`cargo test -- --logfile F`), read
            // here too: cargo refuses it before `--`, so reading it only asks more.
            Grammar {
                subcommand: Some("test"),
                ..exact(
                    "cargo",
                    "F:hj:p::qrvZ:",
                    "all all-features all-targets bench=? benches bin=? bins color= config= doc \
                     example=? examples exclude= features= frozen future-incompat-report help \
                     ignore-rust-version jobs= lib locked logfile= manifest-path= message-format= \
                     no-default-features no-fail-fast no-run offline package=? profile= quiet \
                     release target=? target-dir= test=? tests timings unit-graph verbose workspace",
                )
            },
            Grammar {
                subcommand: Some("clippy"),
                ..exact(
                    "cargo",
                    "hV",
                    "fix frozen help locked manifest-path= no-deps offline version",
                )
            },
            Grammar {
                subcommand: Some("doc"),
                ..exact(
                    "cargo",
                    "F:hj:p::qrvZ:",
                    "all all-features bin=? bins color= config= document-private-items example=? \
                     examples exclude= features= frozen help ignore-rust-version jobs= keep-going \
                     lib locked manifest-path= message-format= no-default-features no-deps offline \
                     open package=? profile= quiet release target=? target-dir= timings unit-graph \
                     verbose workspace",
                )
            },
            Grammar {
                subcommand: Some("bench"),
                ..exact(
                    "cargo",
                    "F:hj:p::qvZ:",
                    "all all-features all-targets bench=? benches bin=? bins color= config= \
                     example=? examples exclude= features= frozen help ignore-rust-version jobs= \
                     lib locked manifest-path= message-format= no-default-features no-fail-fast \
                     no-run offline package=? profile= quiet target=? target-dir= test=? tests \
                     timings unit-graph verbose workspace",
                )
            },
            Grammar {
                subcommand: Some("tree"),
                ..exact(
                    "cargo",
                    "de:F:f:hi::p::qvZ:",
                    "all-features charset= color= config= depth= duplicates edges= exclude= \
                     features= format= frozen help invert=? locked manifest-path= no-dedupe \
                     no-default-features offline package=? prefix= prune= quiet target=? verbose \
                     workspace",
                )
            },
            Grammar {
                subcommand: Some("metadata"),
                ..exact(
                    "cargo",
                    "F:hqvZ:",
                    "all-features color= config= features= filter-platform= format-version= frozen \
                     help locked manifest-path= no-default-features no-deps offline quiet verbose",
                )
            },
            Grammar {
                subcommand: Some("fmt"),
                ..exact(
                    "cargo",
                    "hp:qv",
                    "all check help manifest-path= message-format= package= quiet verbose version",
                )
            },
            Grammar {
                subcommand: Some("run"),
                ..exact(
                    "cargo",
                    "F:hj:p::qrvZ:",
                    "all-features bin=? color= config= example=? features= frozen help \
                     ignore-rust-version jobs= keep-going locked manifest-path= message-format= \
                     no-default-features offline package=? profile= quiet release target=? \
                     target-dir= timings unit-graph verbose",
                )
            },
            Grammar {
                subcommand: Some("nextest"),
                ..exact(
                    "cargo",
                    "hP:Vv",
                    "color= config-file= help manifest-path= no-pager override-version-check \
                     profile= tool-config-file= user-config-file= verbose version",
                )
            },
        ],
        // A build tool of the presets: options that run a program named on
        // the line, load code from elsewhere, or write outside what the gate
        // judges.
        runs: Some(Program {
            options: CARGO_OPTIONS,
            ..program("cargo")
        }),
        ..entry("cargo")
    },
    Entry {
        grammar: Some(gnu(
            "cat",
            "AbEensTtuv",
            "help number number-nonblank show-all show-ends show-nonprinting show-tabs \
             squeeze-blank version",
        )),
        ..entry("cat")
    },
    Entry {
        grammar: Some(exact("cd", "@eLP", "")),
        special: &[Special::ChangesDirectory(Chdir::Cd)],
        ..entry("cd")
    },
    Entry {
        grammar: Some(gnu(
            "chgrp",
            "cfHhLPRv",
            "changes dereference help no-dereference no-preserve-root preserve-root quiet \
             recursive reference= silent verbose version",
        )),
        writes: Some(Writer {
            recursive: &["-R", "--recursive"],
            ..writer("chgrp", WrittenOperands::AllButFirst)
        }),
        ..entry("chgrp")
    },
    Entry {
        grammar: Some(gnu(
            "chmod",
            "cfRv",
            "changes help no-preserve-root preserve-root quiet recursive reference= silent \
             verbose version",
        )),
        writes: Some(Writer {
            recursive: &["-R", "--recursive"],
            ..writer("chmod", WrittenOperands::AllButFirst)
        }),
        spellings: &[
            FlagSpelling {
                program: "chmod",
                subcommand: None,
                letters: "Rvcf",
                long: &[
                    ("--recursive", "-R"),
                    ("--verbose", "-v"),
                    ("--changes", "-c"),
                    ("--silent", "-f"),
                    ("--quiet", "-f"),
                ],
                same: &[],
            },
        ],
        ..entry("chmod")
    },
    Entry {
        grammar: Some(gnu(
            "chown",
            "cfHhLPRv",
            "changes dereference from= help no-dereference no-preserve-root preserve-root \
             quiet recursive reference= silent verbose version",
        )),
        writes: Some(Writer {
            recursive: &["-R", "--recursive"],
            ..writer("chown", WrittenOperands::AllButFirst)
        }),
        spellings: &[
            FlagSpelling {
                program: "chown",
                subcommand: None,
                letters: "RvcfhHLP",
                long: &[
                    ("--recursive", "-R"),
                    ("--verbose", "-v"),
                    ("--changes", "-c"),
                    ("--silent", "-f"),
                    ("--quiet", "-f"),
                    ("--no-dereference", "-h"),
                ],
                same: &[],
            },
        ],
        ..entry("chown")
    },
    Entry {
        runs_any: true,
        ..entry("chroot")
    },
    Entry {
        grammar: Some(gnu(
            "cmp",
            "bi:ln:sv",
            "bytes= help ignore-initial= print-bytes quiet silent verbose version",
        )),
        ..entry("cmp")
    },
    Entry {
        grammar: Some(gnu(
            "comm",
            "123z",
            "check-order help nocheck-order output-delimiter= total version zero-terminated",
        )),
        ..entry("comm")
    },
    Entry {
        grammar: Some(stop("command", "pvV", "")),
        wrapper: Some(wrapper("command")),
        ..entry("command")
    },
    Entry {
        grammar: Some(gnu(
            "cp",
            "abdfHiLlnPpRrS:sTt:uvxZ",
            "archive attributes-only backup=? context=? copy-contents dereference force \
             help interactive link no-clobber no-dereference no-preserve= \
             no-target-directory one-file-system parents preserve=? recursive reflink=? \
             remove-destination sparse= strip-trailing-slashes suffix= symbolic-link \
             target-directory= update verbose version",
        )),
        writes: Some(Writer {
            writes_value: TARGET_DIRECTORY,
            recursive: &["-r", "-R", "--recursive", "-a", "--archive"],
            ..writer("cp", WrittenOperands::Last)
        }),
        reads: &[
            RecursiveReader {
                recursive: &["-r", "-R", "--recursive", "-a", "--archive"],
                ..reader("cp", Roots::AllButLast, Reach::Contents)
            },
        ],
        special: &[Special::MakesSymlinks("--symbolic-link")],
        ..entry("cp")
    },
    Entry {
        grammar: Some(gnu(
            "cpio",
            "0aA:bBcC:dD:E:f:F:H:iI:LmM:nO:oprR:sStuvV",
            "absolute-filenames append block-size= create dereference directory= dot file= \
             force-local format= help io-size= link list make-directories message= \
             no-absolute-filenames no-preserve-owner nonmatching null numeric-uid-gid \
             only-verify-crc owner= pass-through pattern-file= preserve-modification-time \
             quiet rename rename-batch-file= reset-access-time rsh-command= sparse swap \
             swap-bytes swap-halfwords to-stdout unconditional usage verbose version \
             warning=",
        )),
        runs: Some(Program {
            options: &[
                names_from("-o"),
                names_from("--create"),
                names_from("-p"),
                names_from("--pass-through"),
            ],
            ..program("cpio")
        }),
        ..entry("cpio")
    },
    Entry {
        shell: Some(Shell::Unread("`csh` runs commands in a language the gate does not read")),
        ..entry("csh")
    },
    Entry {
        grammar: Some(gnu(
            "csplit",
            "b:f:kn:sz",
            "digits= elide-empty-files help keep-files prefix= quiet silent suffix-format= \
             suppress-matched version",
        )),
        ..entry("csplit")
    },
    Entry {
        // curl reads unique prefixes of its long options too.
        grammar: Some(gnu(
            "curl",
            "#012346A:aBb:C:c:D:d:E:e:F:fGgH:h:IiJjK:kLlMm:NnOo:P:pQ:qRr:SsT:t:U:u:Vvw:X:xY:y:Zz:",
            "variable= abstract-unix-socket= alt-svc= anyauth append aws-sigv4= basic cacert= capath= \
             cert= cert-status cert-type= ciphers= compressed compressed-ssh config= \
             connect-timeout= connect-to= continue-at= cookie= cookie-jar= create-dirs \
             create-file-mode= crlf crlfile= curves= data= data-ascii= data-binary= \
             data-raw= data-urlencode= delegation= digest disable disable-eprt disable-epsv \
             disallow-username-in-url dns-interface= dns-ipv4-addr= dns-ipv6-addr= \
             dns-servers= doh-cert-status doh-insecure doh-url= dump-header= egd-file= \
             engine= etag-compare= etag-save= expect100-timeout= fail fail-early \
             fail-with-body false-start form= form-escape form-string= ftp-account= \
             ftp-alternative-to-user= ftp-create-dirs ftp-method= ftp-pasv ftp-port= \
             ftp-pret ftp-skip-pasv-ip ftp-ssl-ccc ftp-ssl-ccc-mode= ftp-ssl-control get \
             globoff happy-eyeballs-timeout-ms= haproxy-protocol head header= help= \
             hostpubmd5= hostpubsha256= hsts= http0 http1 http2 http2-prior-knowledge http3 \
             http3-only ignore-content-length include insecure interface= ipv4 ipv6 json= \
             junk-session-cookies keepalive-time= key= key-type= krb= libcurl= limit-rate= \
             list-only local-port= location location-trusted login-options= mail-auth= \
             mail-from= mail-rcpt= mail-rcpt-allowfails manual max-filesize= max-redirs= \
             max-time= metalink negotiate netrc netrc-file= netrc-optional next no-alpn \
             no-buffer no-clobber no-keepalive no-npn no-progress-meter no-sessionid \
             noproxy= ntlm ntlm-wb oauth2-bearer= output= output-dir= parallel \
             parallel-immediate parallel-max= pass= path-as-is pinnedpubkey= post301 \
             post302 post303 preproxy progress-bar proto= proto-default= proto-redir= proxy \
             proxy-anyauth proxy-basic proxy-cacert= proxy-capath= proxy-cert= \
             proxy-cert-type= proxy-ciphers= proxy-crlfile= proxy-digest proxy-header= \
             proxy-insecure proxy-key= proxy-key-type= proxy-negotiate proxy-ntlm \
             proxy-pass= proxy-pinnedpubkey= proxy-service-name= proxy-ssl-allow-beast \
             proxy-ssl-auto-client-cert proxy-tls13-ciphers= proxy-tlsauthtype= \
             proxy-tlspassword= proxy-tlsuser= proxy-tlsv1 proxy-user= proxy1 proxytunnel \
             pubkey= quote= random-file= range= rate= raw referer= remote-header-name \
             remote-name remote-name-all remote-time remove-on-error request= \
             request-target= resolve= retry= retry-all-errors retry-connrefused \
             retry-delay= retry-max-time= sasl-authzid= sasl-ir service-name= show-error \
             silent socks4= socks4a= socks5= socks5-basic socks5-gssapi socks5-gssapi-nec \
             socks5-gssapi-service= socks5-hostname= speed-limit= speed-time= ssl \
             ssl-allow-beast ssl-auto-client-cert ssl-no-revoke ssl-reqd \
             ssl-revoke-best-effort sslv2 sslv3 stderr= styled-output \
             suppress-connect-headers tcp-fastopen tcp-nodelay telnet-option= tftp-blksize= \
             tftp-no-options time-cond= tls-max= tls13-ciphers= tlsauthtype= tlspassword= \
             tlsuser= tlsv1 tr-encoding trace= trace-ascii= trace-time unix-socket= \
             upload-file= url= url-query= use-ascii user= user-agent= verbose version \
             write-out= xattr",
        )),
        runs: Some(Program {
            options: &[names_from("-K"), names_from("--config")],
            ..program("curl")
        }),
        file_values: &[
            ("-d", FileForm::At),
            ("--data", FileForm::At),
            ("--data-binary", FileForm::At),
            ("--data-ascii", FileForm::At),
            ("--json", FileForm::At),
            ("-H", FileForm::At),
            ("--header", FileForm::At),
            ("--proxy-header", FileForm::At),
            ("-w", FileForm::At),
            ("--write-out", FileForm::At),
            ("--data-urlencode", FileForm::NameAt),
            ("--url-query", FileForm::NameAt),
            ("--variable", FileForm::NameAt),
            ("-F", FileForm::Form),
            ("--form", FileForm::Form),
            ("-T", FileForm::Glob),
            ("--upload-file", FileForm::Glob),
        ],
        ..entry("curl")
    },
    Entry {
        grammar: Some(gnu(
            "cut",
            "b:c:d:f:Mnsz",
            "bytes= characters= complement delimiter= fields= help only-delimited \
             output-delimiter= version zero-terminated",
        )),
        ..entry("cut")
    },
    Entry {
        grammar: Some(DASH),
        shell: Some(Shell::Bash),
        special: &[Special::SetsGlobOptions(GlobOptions::Flags { capital_g: false })],
        ..entry("dash")
    },
    Entry {
        grammar: Some(gnu(
            "date",
            "d:f:I::Rr:s:u",
            "date= debug file= help iso-8601=? reference= resolution rfc-3339= rfc-email \
             set= universal utc version",
        )),
        ..entry("date")
    },
    Entry {
        grammar: Some(gnu("dd", "", "help version")),
        writes: Some(Writer {
            assigned: &["of"],
            ..writer("dd", WrittenOperands::None)
        }),
        ..entry("dd")
    },
    Entry {
        text_only: true,
        special: &[Special::AssignsVariables, Special::DeclaresNames],
        ..entry("declare")
    },
    Entry {
        runs_any: true,
        ..entry("deno")
    },
    Entry {
        grammar: Some(gnu(
            "df",
            "aB:HhiklPTt:vx:",
            "all block-size= exclude-type= help human-readable inodes local no-sync \
             output=? portability print-type si sync total type= version",
        )),
        ..entry("df")
    },
    Entry {
        grammar: Some(gnu(
            "diff",
            "aBbC:cD:dEeF:I:ilNnpqrS:sTtU:uvW:wX:x:yZ",
            "changed-group-format= new-group-format= old-group-format= \
             unchanged-group-format= new-line-format= old-line-format= \
             unchanged-line-format= brief color=? context=? ed exclude= exclude-from= \
             expand-tabs from-file= help horizon-lines= ifdef= ignore-all-space \
             ignore-blank-lines ignore-case ignore-file-name-case ignore-matching-lines= \
             ignore-space-change ignore-tab-expansion ignore-trailing-space initial-tab \
             label= left-column line-format= minimal new-file no-dereference \
             no-ignore-file-name-case normal paginate palette= rcs recursive \
             report-identical-files show-c-function show-function-line= side-by-side \
             speed-large-files starting-file= strip-trailing-cr suppress-blank-empty \
             suppress-common-lines tabsize= text to-file= unidirectional-new-file unified=? \
             version width=",
        )),
        runs: Some(Program {
            // The output goes through `pr`.
            options: &[hidden("-l"), hidden("--paginate")],
            ..program("diff")
        }),
        reads: &[
            // Without `-r` diff still reads every file directly in a directory it is
            // given (`diff -N ~ .` reads `~/.netrc`); read as a tree, that is asked
            // or denied as a recursive read would be, which holds the files one
            // level down too.
            reader("diff", Roots::All, Reach::Contents),
        ],
        ..entry("diff")
    },
    Entry {
        grammar: Some(gnu("dirname", "z", "help version zero")),
        text_only: true,
        ..entry("dirname")
    },
    Entry {
        grammar: Some(stop("doas", "a:C:Lnsu:", "")),
        wrapper: Some(Wrapper {
            elevates: true,
            ..wrapper("doas")
        }),
        ..entry("doas")
    },
    Entry {
        grammar: Some(gnu(
            "du",
            "0aB:bcDd:HhkLlmPSst:X:x",
            "all apparent-size block-size= bytes count-links dereference dereference-args \
             exclude= exclude-from= files0-from= help human-readable inodes max-depth= \
             no-dereference null one-file-system separate-dirs si summarize threshold= \
             time=? time-style= total version",
        )),
        runs: Some(Program {
            options: FILES0_FROM,
            ..program("du")
        }),
        reads: &[
            RecursiveReader {
                // Without `-a` it still walks every directory below and lists each.
                default_here: true,
                ..reader("du", Roots::All, Reach::Names)
            },
        ],
        ..entry("du")
    },
    Entry {
        grammar: Some(exact("echo", "eEn", "")),
        text_only: true,
        ..entry("echo")
    },
    Entry {
        alias: Some("grep"),
        reads: &[
            grep("egrep", GREP_RECURSIVE),
        ],
        ..entry("egrep")
    },
    Entry {
        shell: Some(Shell::Unread("`elvish` runs commands in a language the gate does not read")),
        ..entry("elvish")
    },
    Entry {
        grammar: Some(stop(
            "env",
            "0C:iS:u:v",
            "block-signal=? chdir= debug default-signal=? help ignore-environment \
             ignore-signal=? list-signal-handling null split-string= unset= version",
        )),
        wrapper: Some(Wrapper {
            assignments: true,
            opaque: &["-S", "--split-string"],
            ..wrapper("env")
        }),
        directory_options: &["-C", "--chdir"],
        ..entry("env")
    },
    Entry {
        opaque: Some("`eval` runs a string built at run time"),
        ..entry("eval")
    },
    Entry {
        grammar: Some(stop("exec", "a:cl", "")),
        wrapper: Some(Wrapper {
            // `exec -l bash -c …` and `exec -a -bash bash -c …` run a login
            // shell (its startup files), `exec -a NAME busybox …` another applet.
            opaque: &["-a", "-l"],
            ..wrapper("exec")
        }),
        ..entry("exec")
    },
    Entry {
        text_only: true,
        ..entry("exit")
    },
    Entry {
        grammar: Some(gnu("expand", "it:", "help initial tabs= version")),
        ..entry("expand")
    },
    Entry {
        runs_any: true,
        ..entry("expect")
    },
    Entry {
        text_only: true,
        special: &[Special::AssignsVariables, Special::DeclaresNames],
        ..entry("export")
    },
    Entry {
        text_only: true,
        ..entry("expr")
    },
    Entry {
        text_only: true,
        ..entry("false")
    },
    Entry {
        grammar: Some(exact(
            "fd",
            "aB::c:d:e:E:gHhiIj:LlpqsS:t:uVx:X:0",
            "absolute-path base-directory= case-sensitive changed-before= changed-within= \
             color= exclude= exec= exec-batch= extension= follow full-path glob help hidden \
             ignore-case ignore-file= list-details max-depth= max-results= min-depth= \
             no-ignore no-ignore-vcs one-file-system owner= path-separator= print0 quiet \
             search-path= show-errors size= threads= type= unrestricted version",
        )),
        reads: &[
            RecursiveReader {
                hidden: Some(&["-H", "--hidden", "-u", "--unrestricted"]),
                default_here: true,
                not_reading: &["--version", "--help", "-h"],
                ..reader("fd", Roots::AfterPattern(&[]), Reach::Names)
            },
        ],
        ..entry("fd")
    },
    Entry {
        alias: Some("grep"),
        reads: &[
            grep("fgrep", GREP_RECURSIVE),
        ],
        ..entry("fgrep")
    },
    Entry {
        grammar: Some(exact("find", "D:HLO::P", "help version")),
        runs: Some(Program {
            options: &[
                runs("-exec", Runs::CommandUntilTerminator),
                runs("-execdir", Runs::CommandUntilTerminator),
                runs("-ok", Runs::CommandUntilTerminator),
                runs("-okdir", Runs::CommandUntilTerminator),
                names_from("-files0-from"),
            ],
            ..program("find")
        }),
        reads: &[
            RecursiveReader {
                default_here: true,
                not_reading: &["--version", "--help"],
                ..reader("find", Roots::StartPoints, Reach::Names)
            },
        ],
        special: &[Special::FindExpression],
        ..entry("find")
    },
    Entry {
        grammar: Some(FISH),
        shell: Some(Shell::Bash),
        special: &[Special::SetsGlobOptions(GlobOptions::Flags { capital_g: false }), Special::InitCommand(&["-C", "--init-command"])],
        ..entry("fish")
    },
    Entry {
        grammar: Some(argparse(
            "flake8",
            "hj:qv",
            "append-config= benchmark bug-report builtins= color= config= count \
             disable-noqa doctests enable-extensions= exclude= exit-zero \
             extend-exclude= extend-ignore= extend-select= filename= format= \
             hang-closing help ignore= indent-size= isolated jobs= max-complexity= \
             max-doc-length= max-line-length= no-show-source output-file= \
             per-file-ignores= quiet require-plugins= select= show-source statistics \
             stdin-display-name= tee verbose version",
        )),
        runs: Some(Program {
            options: &[
                writes("--output-file"),
                hidden("--config"),
                hidden("--append-config"),
            ],
            ..program("flake8")
        }),
        ..entry("flake8")
    },
    Entry {
        runs_any: true,
        ..entry("flock")
    },
    Entry {
        grammar: Some(gnu(
            "fmt",
            "cg:p:stuw:",
            "crown-margin goal= help prefix= split-only tagged-paragraph uniform-spacing \
             version width=",
        )),
        ..entry("fmt")
    },
    Entry {
        grammar: Some(gnu("fold", "bsw:", "bytes help spaces version width=")),
        ..entry("fold")
    },
    Entry {
        grammar: Some(gnu(
            "gawk",
            "bcCd::D::e:E:f:F:ghi:I:l:L::MnNo::Op::PrsStVv:Y",
            "assign= bignum characters-as-bytes copyright debug=? dump-variables=? exec= \
             field-separator= file= gen-pot help include= lint=? load= no-optimize \
             non-decimal-data optimize posix pretty-print=? profile=? re-interval sandbox \
             source= traditional use-lc-numeric version",
        )),
        runs: Some(Program {
            options: AWK_LOADS,
            text_operand: Some(AWK_PROGRAM_FILES),
            ..program("gawk")
        }),
        ..entry("gawk")
    },
    Entry {
        runs_any: true,
        ..entry("gdb")
    },
    Entry {
        // git: its own options before the subcommand (whole names only), then
        // each subcommand's (parse-options: unique prefixes, `--no-NAME`).
        grammar: Some(exact(
            "git",
            "C:c:hPpv",
            "attr-source= bare config-env= exec-path=? git-dir= glob-pathspecs help \
             html-path icase-pathspecs info-path list-cmds= literal-pathspecs man-path \
             namespace= no-advice no-lazy-fetch no-optional-locks no-pager \
             no-replace-objects noglob-pathspecs paginate super-prefix= version work-tree=",
        )),
        subcommands: &[
            // `git_exact`: git's own scripts and hand-written loops, which
            // read whole names only.
            git_exact(
                "filter-branch",
                "d:f",
                "commit-filter= env-filter= force index-filter= msg-filter= original= \
                 parent-filter= prune-empty setup= state-branch= subdirectory-filter= \
                 tag-name-filter= tree-filter=",
            ),
            git_exact(
                "mergetool",
                "gO:t:y",
                "gui no-gui no-prompt prompt tool-help tool=",
            ),
            git_exact(
                "daemon",
                "",
                "access-hook= allow-override= base-path= base-path-relaxed detach disable= \
                 enable= export-all forbid-override= group= inetd informative-errors \
                 init-timeout= interpolated-path= listen= log-destination= max-connections= \
                 no-informative-errors pid-file= port= reuseaddr strict-paths syslog timeout= \
                 user-path=? user= verbose",
            ),
            git("diff", LOG_SHORT, concat!("no-index ", log_long!())),
            git(
                "rebase",
                "C:fimnqr::S::s:vX:x:",
                "abort apply autosquash autostash committer-date-is-author-date continue \
                 edit-todo exec= ff force-rebase fork-point gpg-sign=? ignore-whitespace \
                 interactive keep-base merge no-autosquash no-autostash \
                 no-committer-date-is-author-date no-exec no-ff no-force-rebase no-fork-point \
                 no-gpg-sign no-ignore-whitespace no-keep-base no-onto no-quiet \
                 no-reapply-cherry-picks no-rebase-merges no-rerere-autoupdate \
                 no-reschedule-failed-exec no-reset-author-date no-root no-signoff no-stat \
                 no-strategy no-strategy-option no-update-refs no-verbose no-verify \
                 no-whitespace onto= quiet quit reapply-cherry-picks rebase-merges=? \
                 rerere-autoupdate reschedule-failed-exec reset-author-date root \
                 show-current-patch signoff skip stat strategy= strategy-option= update-refs \
                 verbose verify whitespace=",
            ),
            git_exact(
                "format-patch",
                "kNno:pqsv:",
                "add-header= attach=? base= binary cc= cover-from-description= cover-letter \
                 creation-factor= description-file= filename-max-length= force-in-body-from \
                 ignore-if-in-upstream in-reply-to= interdiff= keep-subject no-add-header \
                 no-attach no-base no-binary no-cc no-cover-from-description no-cover-letter \
                 no-creation-factor no-description-file no-filename-max-length \
                 no-force-in-body-from no-ignore-if-in-upstream no-in-reply-to no-interdiff \
                 no-numbered no-progress no-quiet no-range-diff no-reroll-count no-rfc \
                 no-signature no-signature-file no-signoff no-start-number no-stat no-stdout \
                 no-suffix no-thread no-to no-zero-commit numbered output-directory= progress \
                 quiet range-diff= reroll-count= rfc=? signature= signature-file= signoff \
                 start-number= stdout subject-prefix= suffix= thread=? to= zero-commit \
                 from=? inline=? numbered-files",
            ),
            git(
                "archive",
                "lo:v",
                "add-file= add-virtual-file= format= list mtime= no-add-file \
                 no-add-virtual-file no-format no-list no-output no-prefix no-remote no-verbose \
                 no-worktree-attributes output= prefix= remote= verbose worktree-attributes \
                 exec=",
            ),
            git(
                "difftool",
                "dgt:x:y",
                "dir-diff extcmd= gui index no-dir-diff no-extcmd no-gui no-index no-prompt \
                 no-symlinks no-tool no-tool-help no-trust-exit-code symlinks tool= tool-help \
                 trust-exit-code",
            ),
            git(
                "hash-object",
                "t:w",
                "filters literally no-filters no-literally no-path no-stdin no-stdin-paths \
                 path= stdin stdin-paths",
            ),
            git(
                "update-index",
                "gqz",
                "add again assume-unchanged clear-resolve-undo force-remove \
                 force-untracked-cache force-write-index fsmonitor fsmonitor-valid \
                 ignore-skip-worktree-entries ignore-submodules index-info index-version= \
                 info-only no-add no-force-remove no-force-untracked-cache no-force-write-index \
                 no-fsmonitor no-fsmonitor-valid no-ignore-skip-worktree-entries \
                 no-ignore-submodules no-index-version no-info-only no-remove no-replace \
                 no-show-index-version no-skip-worktree no-split-index no-test-untracked-cache \
                 no-unmerged no-untracked-cache no-verbose really-refresh refresh remove \
                 replace show-index-version skip-worktree split-index stdin \
                 test-untracked-cache unmerged unresolve untracked-cache verbose",
            ),
            git(
                "checkout-index",
                "afnquz",
                "all create force ignore-skip-worktree-bits index no-all no-create no-force \
                 no-ignore-skip-worktree-bits no-index no-prefix no-quiet no-stdin no-temp \
                 prefix= quiet stdin temp",
            ),
            git(
                "clean",
                "de:finqXx",
                "dry-run exclude= force interactive no-dry-run no-force no-interactive no-quiet \
                 quiet",
            ),
            git(
                "push",
                "46dfno:quv",
                "all atomic branches delete dry-run exec= follow-tags force force-if-includes \
                 force-with-lease=? ipv4 ipv6 mirror no-all no-atomic no-branches no-delete \
                 no-dry-run no-exec no-follow-tags no-force no-force-if-includes \
                 no-force-with-lease no-mirror no-porcelain no-progress no-prune no-push-option \
                 no-quiet no-receive-pack no-repo no-set-upstream no-signed no-tags no-thin \
                 no-verbose no-verify porcelain progress prune push-option= quiet receive-pack= \
                 repo= set-upstream signed=? tags thin verbose verify \
                 recurse-submodules=",
            ),
            git(
                "reset",
                "Npq",
                "hard intent-to-add keep merge mixed no-intent-to-add no-patch \
                 no-pathspec-file-nul no-pathspec-from-file no-quiet no-recurse-submodules \
                 no-refresh patch pathspec-file-nul pathspec-from-file= quiet \
                 recurse-submodules=? refresh soft",
            ),
            git(
                "checkout",
                "23B:b:dflmpqt::",
                "conflict= detach force guess ignore-other-worktrees ignore-skip-worktree-bits \
                 merge no-conflict no-detach no-force no-guess no-ignore-other-worktrees \
                 no-ignore-skip-worktree-bits no-merge no-orphan no-overlay no-overwrite-ignore \
                 no-patch no-pathspec-file-nul no-pathspec-from-file no-progress no-quiet \
                 no-recurse-submodules no-track orphan= ours overlay overwrite-ignore patch \
                 pathspec-file-nul pathspec-from-file= progress quiet recurse-submodules=? \
                 theirs track=?",
            ),
            git(
                "branch",
                "aCcDdfilMmqrt::u:v",
                "abbrev=? all column=? contains= copy create-reflog delete edit-description \
                 force format= ignore-case list merged= move no-abbrev no-column no-contains= \
                 no-copy no-create-reflog no-delete no-edit-description no-force no-format \
                 no-ignore-case no-list no-merged= no-move no-omit-empty no-points-at no-quiet \
                 no-recurse-submodules no-set-upstream-to no-show-current no-sort no-track \
                 no-verbose omit-empty points-at= quiet recurse-submodules remotes \
                 set-upstream-to= show-current sort= track=? verbose",
            ),
            git(
                "commit",
                "aC:c:eF:im:nopqS::st:u::vz",
                "ahead-behind all amend author= branch date= dry-run edit file= gpg-sign=? \
                 include interactive long message= no-ahead-behind no-all no-amend no-author \
                 no-branch no-date no-dry-run no-edit no-file no-gpg-sign no-include \
                 no-interactive no-long no-message no-null no-only no-patch \
                 no-pathspec-file-nul no-pathspec-from-file no-porcelain no-post-rewrite \
                 no-quiet no-reedit-message no-reset-author no-reuse-message no-short \
                 no-signoff no-squash no-status no-template no-untracked-files no-verbose \
                 no-verify null only patch pathspec-file-nul pathspec-from-file= porcelain \
                 post-rewrite quiet reedit-message= reset-author reuse-message= short signoff \
                 squash= status template= trailer= untracked-files=? verbose verify",
            ),
            git(
                "grep",
                "A:aB:C:cEe:Ff:GHhIiLlm:nO::oPpqrvWwz",
                "after-context= all-match and basic-regexp before-context= break cached column \
                 context= count exclude-standard ext-grep extended-regexp files-with-matches \
                 files-without-match fixed-strings full-name function-context heading \
                 ignore-case index invert-match line-number max-count= max-depth= name-only \
                 no-after-context no-all-match no-basic-regexp no-before-context no-break \
                 no-cached no-column no-context no-count no-exclude-standard no-ext-grep \
                 no-extended-regexp no-files-with-matches no-files-without-match \
                 no-fixed-strings no-full-name no-function-context no-heading no-ignore-case \
                 no-index no-invert-match no-line-number no-max-count no-name-only no-null \
                 no-only-matching no-open-files-in-pager no-perl-regexp no-quiet \
                 no-recurse-submodules no-recursive no-show-function no-text no-textconv \
                 no-threads no-untracked no-word-regexp not null only-matching \
                 open-files-in-pager=? or perl-regexp quiet recurse-submodules recursive \
                 show-function text textconv threads= untracked word-regexp \
                 color=?",
            ),
            git(
                "status",
                "bM::su::vz",
                "ahead-behind branch column=? find-renames=? ignore-submodules=? ignored=? long \
                 no-ahead-behind no-branch no-column no-ignore-submodules no-ignored no-long \
                 no-null no-porcelain no-renames no-short no-show-stash no-untracked-files \
                 no-verbose null porcelain=? renames short show-stash untracked-files=? verbose",
            ),
            git(
                "blame",
                "bC::cefL:lM::npS:stw",
                "abbrev=? color-by-age color-lines contents= ignore-rev= ignore-revs-file= \
                 incremental minimal no-abbrev no-color-by-age no-color-lines no-contents \
                 no-ignore-rev no-ignore-revs-file no-incremental no-minimal no-porcelain \
                 no-progress no-root no-score-debug no-show-name no-show-number no-show-stats \
                 porcelain progress root score-debug show-name show-number show-stats \
                 line-porcelain show-email",
            ),
            git(
                "shortlog",
                "cens",
                "committer email group= no-committer no-email no-group no-numbered no-summary \
                 numbered summary",
            ),
            git(
                "describe",
                "",
                "abbrev=? all always broken=? contains debug exact-match exclude= first-parent \
                 long match= no-abbrev no-all no-always no-broken no-contains no-debug \
                 no-exact-match no-exclude no-first-parent no-long no-match no-tags tags \
                 candidates= dirty=?",
            ),
            git(
                "ls-files",
                "cdfikmostuvX:x:z",
                "abbrev=? cached debug deduplicate deleted directory empty-directory eol \
                 error-unmatch exclude= exclude-from= exclude-per-directory= exclude-standard \
                 format= full-name ignored killed modified no-abbrev no-cached no-debug \
                 no-deduplicate no-deleted no-directory no-empty-directory no-eol \
                 no-error-unmatch no-exclude-per-directory no-ignored no-killed no-modified \
                 no-others no-recurse-submodules no-resolve-undo no-sparse no-stage no-unmerged \
                 no-with-tree others recurse-submodules resolve-undo sparse stage unmerged \
                 with-tree=",
            ),
            git(
                "ls-tree",
                "dlrtz",
                "abbrev=? format= full-name full-tree long name-only name-status no-abbrev \
                 no-full-name no-full-tree object-only",
            ),
            git(
                "cat-file",
                "epstZz",
                "allow-unknown-type batch=? batch-all-objects batch-check=? batch-command=? \
                 buffer filters follow-symlinks mailmap no-allow-unknown-type no-buffer \
                 no-follow-symlinks no-mailmap no-unordered no-use-mailmap textconv unordered \
                 use-mailmap \
                 path=",
            ),
            git(
                "tag",
                "adeF:film:n::su:v",
                "annotate column=? contains= create-reflog delete edit file= force format= \
                 ignore-case list local-user= merged= message= no-annotate no-column \
                 no-contains= no-create-reflog no-edit no-file no-force no-format \
                 no-ignore-case no-local-user no-merged= no-omit-empty no-points-at no-sign \
                 no-sort omit-empty points-at= sign sort= trailer= verify \
                 cleanup= color=?",
            ),
            git("remote", "v", "no-verbose verbose"),
            git(
                "fetch",
                "46afj:kmno:Ppqtuv",
                "all append atomic auto-gc auto-maintenance deepen= depth= dry-run filter= \
                 force ipv4 ipv6 jobs= keep multiple negotiation-tip= no-all no-append \
                 no-atomic no-auto-gc no-auto-maintenance no-deepen no-depth no-dry-run \
                 no-filter no-force no-jobs no-keep no-multiple no-negotiation-tip no-porcelain \
                 no-prefetch no-progress no-prune no-quiet no-recurse-submodules \
                 no-server-option no-set-upstream no-shallow-exclude no-shallow-since \
                 no-show-forced-updates no-stdin no-tags no-update-head-ok no-upload-pack \
                 no-verbose no-write-commit-graph no-write-fetch-head porcelain prefetch \
                 progress prune quiet recurse-submodules=? refetch refmap= server-option= \
                 set-upstream shallow-exclude= shallow-since= show-forced-updates stdin tags \
                 unshallow update-head-ok upload-pack= verbose write-commit-graph \
                 write-fetch-head \
                 negotiate-only prune-tags update-shallow",
            ),
            git(
                "pull",
                "46afj::kno:pqr::S::s:tvX:",
                "all allow-unrelated-histories append autostash commit deepen= depth= dry-run \
                 edit ff ff-only force gpg-sign=? ipv4 ipv6 keep log=? negotiation-tip= no-all \
                 no-allow-unrelated-histories no-append no-autostash no-commit no-deepen \
                 no-depth no-dry-run no-edit no-ff no-force no-gpg-sign no-ipv4 no-ipv6 no-keep \
                 no-log no-negotiation-tip no-progress no-prune no-quiet no-rebase \
                 no-recurse-submodules no-server-option no-set-upstream no-shallow-exclude \
                 no-shallow-since no-show-forced-updates no-signoff no-squash no-stat \
                 no-strategy no-strategy-option no-tags no-upload-pack no-verbose no-verify \
                 no-verify-signatures progress prune quiet rebase=? recurse-submodules=? \
                 refmap= server-option= set-upstream shallow-exclude= shallow-since= \
                 show-forced-updates signoff=? squash stat strategy= strategy-option= tags \
                 unshallow upload-pack= verbose verify verify-signatures \
                 cleanup= jobs=? update-shallow",
            ),
            git(
                "merge",
                "eF:m:nqS::s:vX:",
                "abort allow-unrelated-histories autostash commit continue edit ff ff-only \
                 file= gpg-sign=? into-name= log=? message= no-abort \
                 no-allow-unrelated-histories no-autostash no-commit no-continue no-edit no-ff \
                 no-gpg-sign no-into-name no-log no-message no-overwrite-ignore no-progress \
                 no-quiet no-quit no-rerere-autoupdate no-signoff no-squash no-stat no-strategy \
                 no-strategy-option no-summary no-verbose no-verify no-verify-signatures \
                 overwrite-ignore progress quiet quit rerere-autoupdate signoff squash stat \
                 strategy= strategy-option= summary verbose verify verify-signatures",
            ),
            git(
                "add",
                "AefiNnpuv",
                "all dry-run edit force ignore-errors intent-to-add interactive no-all \
                 no-dry-run no-edit no-force no-ignore-errors no-intent-to-add no-interactive \
                 no-patch no-pathspec-file-nul no-pathspec-from-file no-refresh no-renormalize \
                 no-sparse no-update no-verbose patch pathspec-file-nul pathspec-from-file= \
                 refresh renormalize sparse update verbose \
                 chmod= ignore-missing ignore-removal",
            ),
            git(
                "rm",
                "fnqr",
                "cached dry-run force no-cached no-dry-run no-force no-pathspec-file-nul \
                 no-pathspec-from-file no-quiet no-sparse pathspec-file-nul pathspec-from-file= \
                 quiet sparse \
                 ignore-unmatch",
            ),
            git(
                "mv",
                "fknv",
                "dry-run force no-dry-run no-force no-sparse no-verbose sparse verbose",
            ),
            git(
                "restore",
                "23mpqSs:W",
                "conflict= ignore-skip-worktree-bits ignore-unmerged merge no-conflict \
                 no-ignore-skip-worktree-bits no-ignore-unmerged no-merge no-overlay no-patch \
                 no-pathspec-file-nul no-pathspec-from-file no-progress no-quiet \
                 no-recurse-submodules no-source no-staged no-worktree ours overlay patch \
                 pathspec-file-nul pathspec-from-file= progress quiet recurse-submodules=? \
                 source= staged theirs worktree",
            ),
            git(
                "switch",
                "C:c:dfmqt::",
                "conflict= create= detach discard-changes force force-create= guess \
                 ignore-other-worktrees merge no-conflict no-create no-detach \
                 no-discard-changes no-force no-force-create no-guess no-ignore-other-worktrees \
                 no-merge no-orphan no-overwrite-ignore no-progress no-quiet \
                 no-recurse-submodules no-track orphan= overwrite-ignore progress quiet \
                 recurse-submodules=? track=?",
            ),
            git(
                "apply",
                "3C:Np:qRvz",
                "3way add allow-empty allow-overlap apply build-fake-ancestor= cached check \
                 directory= exclude= ignore-space-change ignore-whitespace include= index \
                 intent-to-add no-3way no-add no-allow-empty no-allow-overlap no-apply \
                 no-build-fake-ancestor no-cached no-check no-directory no-ignore-space-change \
                 no-ignore-whitespace no-index no-intent-to-add no-numstat no-quiet no-recount \
                 no-reject no-reverse no-stat no-summary no-unidiff-zero no-unsafe-paths \
                 no-verbose no-whitespace numstat ours quiet recount reject reverse stat \
                 summary theirs unidiff-zero union unsafe-paths verbose whitespace= \
                 inaccurate-eof",
            ),
            git(
                "am",
                "3C:cikmnp:qrS::su",
                "3way abort allow-empty committer-date-is-author-date continue directory= \
                 gpg-sign=? ignore-date ignore-space-change ignore-whitespace interactive keep \
                 keep-cr no-3way no-committer-date-is-author-date no-directory no-gpg-sign \
                 no-ignore-date no-ignore-space-change no-ignore-whitespace no-interactive \
                 no-keep no-keep-cr no-patch-format no-quiet no-reject no-rerere-autoupdate \
                 no-scissors no-signoff no-utf8 no-verify no-whitespace patch-format= quiet \
                 quit quoted-cr= reject rerere-autoupdate resolved retry scissors \
                 show-current-patch=? signoff skip utf8 verify whitespace=",
            ),
            git(
                "cherry-pick",
                "em:nS::sX:x",
                "abort allow-empty allow-empty-message commit continue edit ff gpg-sign=? \
                 keep-redundant-commits mainline= no-allow-empty no-allow-empty-message \
                 no-commit no-edit no-ff no-gpg-sign no-keep-redundant-commits no-mainline \
                 no-rerere-autoupdate no-signoff no-strategy no-strategy-option quit \
                 rerere-autoupdate signoff skip strategy= strategy-option= \
                 cleanup= empty=",
            ),
            git(
                "revert",
                "em:nS::sX:",
                "abort commit continue edit gpg-sign=? mainline= no-commit no-edit no-gpg-sign \
                 no-mainline no-reference no-rerere-autoupdate no-signoff no-strategy \
                 no-strategy-option quit reference rerere-autoupdate signoff skip strategy= \
                 strategy-option= \
                 cleanup=",
            ),
            git(
                "clone",
                "46b:c:j:lno:qsu:v",
                "also-filter-submodules bare branch= bundle-uri= checkout config= depth= \
                 dissociate filter= hardlinks ipv4 ipv6 jobs= local mirror \
                 no-also-filter-submodules no-bare no-branch no-bundle-uri no-checkout \
                 no-config no-depth no-dissociate no-filter no-hardlinks no-jobs no-local \
                 no-mirror no-origin no-progress no-quiet no-recurse-submodules no-recursive \
                 no-ref-format no-reference no-reference-if-able no-remote-submodules \
                 no-separate-git-dir no-server-option no-shallow-exclude no-shallow-since \
                 no-shallow-submodules no-shared no-single-branch no-sparse no-tags no-template \
                 no-upload-pack no-verbose origin= progress quiet recurse-submodules=? \
                 recursive=? ref-format= reference= reference-if-able= remote-submodules \
                 separate-git-dir= server-option= shallow-exclude= shallow-since= \
                 shallow-submodules shared single-branch sparse tags template= upload-pack= \
                 verbose \
                 reject-shallow",
            ),
            git("notes", "", "no-ref ref="),
            git_exact("log", LOG_WALK_SHORT, LOG_WALK_LONG),
            git_exact("show", LOG_WALK_SHORT, LOG_WALK_LONG),
            git_exact("whatchanged", LOG_WALK_SHORT, LOG_WALK_LONG),
        ],
        runs: Some(Program {
            options: &[
                hidden("--exec-path"),
                hidden("--config-env"),
                names_from("--pathspec-from-file"),
                // Verifying a signature runs gpg or ssh-keygen, which read and
                // lock files in the floor (`~/.gnupg`, `~/.ssh/allowed_signers`).
                hidden("--show-signature"),
                hidden("--verify-signatures"),
            ],
            subcommands: &[
                (&["submodule", "foreach"], &[runs("", Runs::ScriptWords)]),
                (&["hash-object"], &[names_from("--stdin-paths")]),
                (&["update-index"], &[names_from("--stdin")]),
                (&["checkout-index"], &[names_from("--stdin")]),
                (
                    &["rebase"],
                    &[runs("--exec", Runs::Script), runs("-x", Runs::Script)],
                ),
                (&["bisect", "run"], &[runs("", Runs::CommandWords)]),
                (
                    &["difftool"],
                    &[runs("--extcmd", Runs::Script), runs("-x", Runs::Script)],
                ),
                (
                    &["filter-branch"],
                    &[
                        runs("--env-filter", Runs::Script),
                        runs("--tree-filter", Runs::Script),
                        runs("--index-filter", Runs::Script),
                        runs("--parent-filter", Runs::Script),
                        runs("--msg-filter", Runs::Script),
                        runs("--commit-filter", Runs::Script),
                        runs("--tag-name-filter", Runs::Script),
                    ],
                ),
                (&["mergetool"], &[hidden("--tool"), hidden("-t")]),
                (&["daemon"], &[hidden("--access-hook")]),
                (&["verify-commit"], &[runs("", Runs::Hidden)]),
                (&["verify-tag"], &[runs("", Runs::Hidden)]),
                (&["tag"], &[hidden("-v"), hidden("--verify")]),
            ],
            asking_globals: &[
                (
                    "--git-dir",
                    "works on another repository, whose settings can run programs",
                ),
                ("--work-tree", "reads another work tree"),
                ("--namespace", "works in another namespace"),
                ("--super-prefix", "works as part of another repository"),
                (
                    "-p",
                    "pipes its output through a pager, which writes its history file",
                ),
                (
                    "--paginate",
                    "pipes its output through a pager, which writes its history file",
                ),
            ],
            asking_values: &[
                (
                    "--format",
                    "%G",
                    "shows signatures, which runs gpg or ssh-keygen on the floor",
                ),
                (
                    "--pretty",
                    "%G",
                    "shows signatures, which runs gpg or ssh-keygen on the floor",
                ),
                // The ref-filter atom of `for-each-ref`, `branch` and `tag`.
                (
                    "--format",
                    "%(signature",
                    "verifies signatures, which runs gpg or ssh-keygen on the floor",
                ),
            ],
            ..program("git")
        }),
        reads: &[
            RecursiveReader {
                subcommand: Some("diff"),
                recursive: &["--no-index"],
                ..reader("git", Roots::All, Reach::Contents)
            },
            RecursiveReader {
                subcommand: Some("grep"),
                recursive: &["--no-index", "--untracked"],
                default_here: true,
                ..reader("git", Roots::AfterPattern(&["-e", "-f"]), Reach::Contents)
            },
        ],
        spellings: &[
            FlagSpelling {
                program: "git",
                subcommand: Some("clean"),
                letters: "dfxXnqi",
                long: &[
                    ("--force", "-f"),
                    ("--dry-run", "-n"),
                    ("--quiet", "-q"),
                    ("--interactive", "-i"),
                ],
                same: &[],
            },
            FlagSpelling {
                program: "git",
                subcommand: Some("push"),
                letters: "fuvqn",
                long: &[
                    ("--force", "-f"),
                    ("--set-upstream", "-u"),
                    ("--verbose", "-v"),
                    ("--quiet", "-q"),
                    ("--dry-run", "-n"),
                ],
                same: &[],
            },
            FlagSpelling {
                program: "git",
                subcommand: Some("reset"),
                letters: "qp",
                long: &[("--quiet", "-q"), ("--patch", "-p")],
                same: &[],
            },
            FlagSpelling {
                program: "git",
                subcommand: Some("checkout"),
                letters: "fqp",
                long: &[("--force", "-f"), ("--quiet", "-q"), ("--patch", "-p")],
                same: &[],
            },
            FlagSpelling {
                program: "git",
                subcommand: Some("branch"),
                letters: "dDfrav",
                long: &[
                    ("--delete", "-d"),
                    ("--force", "-f"),
                    ("--remotes", "-r"),
                    ("--all", "-a"),
                ],
                same: &[],
            },
        ],
        text_options: &["-m", "--message"],
        directory_options: &["-C"],
        special: &[Special::OutputOptions {
            short_o: &["format-patch", "archive"],
            }, Special::ProgramSettings {
                option: "-c",
                subcommand: "config",
                keys: GIT_PROGRAM_KEYS,
                key_ends: GIT_PROGRAM_KEY_ENDS,
        }],
        ..entry("git")
    },
    Entry {
        grammar: Some(gnu(
            "grep",
            "A:aB:bC:cD:d:Ee:Ff:GHhIiLlm:noPqRrsTUVvwxZz",
            "after-context= basic-regexp before-context= binary binary-files= byte-offset \
             color=? colour=? context= count dereference-recursive devices= directories= \
             exclude= exclude-dir= exclude-from= extended-regexp file= files-with-matches \
             files-without-match fixed-strings group-separator= help ignore-case include= \
             initial-tab invert-match label= line-buffered line-number line-regexp \
             max-count= no-filename no-group-separator no-ignore-case no-messages null \
             null-data only-matching perl-regexp quiet recursive regexp= silent text \
             version with-filename word-regexp",
        )),
        reads: &[
            grep("grep", GREP_RECURSIVE),
        ],
        ..entry("grep")
    },
    Entry {
        alias: Some("sed"),
        ..entry("gsed")
    },
    Entry {
        alias: Some("tar"),
        ..entry("gtar")
    },
    Entry {
        grammar: Some(gnu(
            "head",
            "c:n:qvz",
            "bytes= help lines= quiet silent verbose version zero-terminated",
        )),
        ..entry("head")
    },
    Entry {
        grammar: Some(exact(
            "http",
            HTTPIE_SHORT,
            HTTPIE_LONG,
        )),
        file_items: true,
        ..entry("http")
    },
    Entry {
        alias: Some("http"),
        file_items: true,
        ..entry("https")
    },
    Entry {
        grammar: Some(Grammar {
            program: "hush",
            ..BUSYBOX_ASH
        }),
        shell: Some(Shell::Bash),
        special: &[Special::SetsGlobOptions(GlobOptions::Flags { capital_g: false })],
        ..entry("hush")
    },
    Entry {
        grammar: Some(gnu(
            "id",
            "aGgnruZz",
            "context group groups help name real user version zero",
        )),
        ..entry("id")
    },
    Entry {
        grammar: Some(gnu(
            "install",
            "bCcDdg:m:o:pS:sTt:vZ",
            "backup=? compare context=? directory group= help mode= no-target-directory \
             owner= preserve-context preserve-timestamps strip strip-program= suffix= \
             target-directory= verbose version",
        )),
        writes: Some(Writer {
            writes_value: TARGET_DIRECTORY,
            ..writer("install", WrittenOperands::Last)
        }),
        ..entry("install")
    },
    Entry {
        grammar: Some(stop(
            "ionice",
            "c:hn:P:p:tu:V",
            "class= classdata= help ignore pgid= pid= uid= version",
        )),
        wrapper: Some(wrapper("ionice")),
        ..entry("ionice")
    },
    Entry {
        grammar: Some(gnu(
            "join",
            "1:2:a:e:ij:o:t:v:z",
            "check-order header help ignore-case nocheck-order version zero-terminated",
        )),
        ..entry("join")
    },
    Entry {
        grammar: Some(exact(
            "jq",
            "acCe:f:hjL:MnrsStV",
            "arg= argjson= args ascii-output color-output compact-output exit-status \
             from-file= help indent= join-output jsonargs monochrome-output null-input \
             raw-input raw-output raw-output0 rawfile= seq slurp slurpfile= sort-keys \
             stream stream-errors tab unbuffered version",
        )),
        runs: Some(Program {
            options: &[hidden("-f"), hidden("--from-file")],
            module_keywords: &["import", "include"],
            ..program("jq")
        }),
        ..entry("jq")
    },
    Entry {
        grammar: Some(exact(
            "julia",
            "C:e:E:hiJ:L:O::p:qt:v",
            "compile= cpu-target= eval= help load= print= project=? startup-file= sysimage= \
             threads= version",
        )),
        runs: Some(Program {
            options: &[
                hidden("-e"),
                hidden("-E"),
                hidden("--eval"),
                hidden("--print"),
            ],
            ..program("julia")
        }),
        interpreter: Some(Interpreter {
            program_options: &["-e", "-E", "--eval", "--print"],
            stops: &["--version", "-v", "--help", "-h"],
            ..interpreter("julia")
        }),
        ..entry("julia")
    },
    Entry {
        grammar: Some(Grammar {
            program: "ksh",
            ..KSH
        }),
        shell: Some(Shell::Bash),
        special: &[Special::SetsGlobOptions(GlobOptions::Flags { capital_g: true })],
        ..entry("ksh")
    },
    Entry {
        shell: Some(Shell::Bash),
        ..entry("ksh93")
    },
    Entry {
        text_only: true,
        ..entry("let")
    },
    Entry {
        grammar: Some(Grammar {
            program: "lksh",
            ..KSH
        }),
        shell: Some(Shell::Bash),
        ..entry("lksh")
    },
    Entry {
        grammar: Some(gnu(
            "ln",
            "bdFfiLnPrS:sTt:v",
            "backup=? directory force help interactive logical no-dereference \
             no-target-directory physical relative suffix= symbolic target-directory= \
             verbose version",
        )),
        writes: Some(Writer {
            writes_value: TARGET_DIRECTORY,
            ..writer("ln", WrittenOperands::Last)
        }),
        special: &[Special::MakesSymlinks("--symbolic")],
        ..entry("ln")
    },
    Entry {
        text_only: true,
        special: &[Special::AssignsVariables, Special::DeclaresNames],
        ..entry("local")
    },
    Entry {
        grammar: Some(Grammar {
            program: "loksh",
            ..KSH
        }),
        shell: Some(Shell::Bash),
        ..entry("loksh")
    },
    Entry {
        grammar: Some(gnu(
            "ls",
            "1AaBbCcDdFfGgHhI:ikLlmNnopQqRrSsT:tUuvw:XxZ",
            "all almost-all author block-size= classify=? color=? context dereference \
             dereference-command-line dereference-command-line-symlink-to-dir directory \
             dired escape file-type format= full-time group-directories-first help hide= \
             hide-control-chars human-readable hyperlink=? ignore= ignore-backups \
             indicator-style= inode kibibytes literal no-group numeric-uid-gid quote-name \
             quoting-style= recursive reverse show-control-chars si size sort= tabsize= \
             time= time-style= version width= zero",
        )),
        reads: &[
            RecursiveReader {
                recursive: &["-R", "--recursive"],
                hidden: Some(&["-a", "-A", "--all", "--almost-all"]),
                default_here: true,
                ..reader("ls", Roots::All, Reach::Names)
            },
        ],
        ..entry("ls")
    },
    Entry {
        runs_any: true,
        ..entry("ltrace")
    },
    Entry {
        grammar: Some(exact("lua", "e:il:vEW", "")),
        runs: Some(Program {
            options: &[hidden("-e")],
            ..program("lua")
        }),
        interpreter: Some(Interpreter {
            program_options: &["-e"],
            stops: &["-v"],
            ..interpreter("lua")
        }),
        ..entry("lua")
    },
    Entry {
        grammar: Some(exact("luajit", "b:e:ij:l:O::vE", "")),
        interpreter: Some(Interpreter {
            program_options: &["-e"],
            stops: &["-v"],
            ..interpreter("luajit")
        }),
        ..entry("luajit")
    },
    Entry {
        grammar: Some(gnu(
            "make",
            "BbC:dE:ef:hI:ikLmnO::o:pqRrSstvW:w",
            "always-make assume-new= assume-old= check-symlink-times debug=? directory= \
             dry-run environment-overrides eval= file= help ignore-errors include-dir= \
             jobs=? just-print keep-going load-average=? makefile= max-load=? new-file= \
             no-builtin-rules no-builtin-variables no-keep-going no-print-directory \
             no-silent old-file= output-sync=? print-data-base print-directory question \
             quiet recon silent stop touch trace version warn-undefined-variables what-if=",
        )),
        directory_options: &["-C", "--directory"],
        ..entry("make")
    },
    Entry {
        grammar: Some(exact("mawk", "F:f:v:W:", "")),
        runs: Some(Program {
            text_operand: Some(&["-f"]),
            ..program("mawk")
        }),
        ..entry("mawk")
    },
    Entry {
        grammar: Some(gnu("md5sum", SUM_SHORT, SUM_LONG)),
        runs: Some(Program {
            options: CHECK_LIST,
            ..program("md5sum")
        }),
        ..entry("md5sum")
    },
    Entry {
        grammar: Some(gnu(
            "mkdir",
            "m:pvZ",
            "context=? help mode= parents verbose version",
        )),
        writes: Some(writer("mkdir", WrittenOperands::All)),
        ..entry("mkdir")
    },
    Entry {
        grammar: Some(KSH),
        shell: Some(Shell::Bash),
        special: &[Special::SetsGlobOptions(GlobOptions::Flags { capital_g: true })],
        ..entry("mksh")
    },
    Entry {
        grammar: Some(gnu(
            "mktemp",
            "dp:qtu",
            "directory dry-run help quiet suffix= tmpdir=? version",
        )),
        ..entry("mktemp")
    },
    Entry {
        grammar: Some(gnu(
            "mv",
            "bfinS:Tt:uvZ",
            "backup=? context force help interactive no-clobber no-target-directory \
             strip-trailing-slashes suffix= target-directory= update verbose version",
        )),
        writes: Some(Writer {
            writes_value: TARGET_DIRECTORY,
            ..writer("mv", WrittenOperands::Last)
        }),
        special: &[Special::RemovesSources],
        ..entry("mv")
    },
    Entry {
        grammar: Some(argparse(
            "mypy",
            "c:hm:n:O:p:Vv",
            "allow-redefinition allow-redefinition-new allow-redefinition-old \
             allow-untyped-globals always-false= always-true= any-exprs-report= \
             cache-dir= cache-fine-grained check-untyped-defs cobertura-xml-report= \
             command= config-file= custom-typeshed-dir= custom-typing-module= \
             deprecated-calls-exclude= disable-error-code= disallow-any-decorated \
             disallow-any-explicit disallow-any-expr disallow-any-generics \
             disallow-any-unimported disallow-incomplete-defs disallow-subclassing-any \
             disallow-untyped-calls disallow-untyped-decorators disallow-untyped-defs \
             enable-error-code= enable-incomplete-feature= exclude= exclude-gitignore \
             explicit-package-bases extra-checks find-occurrences= follow-imports= \
             follow-untyped-imports help hide-error-codes html-report= \
             ignore-missing-imports implicit-optional install-types junit-format= \
             junit-xml= linecount-report= linecoverage-report= lineprecision-report= \
             module= no-color-output no-error-summary no-fixed-format-cache \
             no-implicit-reexport no-incremental no-namespace-packages no-native-parser \
             no-silence-site-packages no-site-packages no-strict-bytes \
             no-strict-optional no-warn-no-return non-interactive num-workers= output= \
             package= pdb platform= pretty python-executable= python-version= \
             raise-exceptions report-deprecated-as-note scripts-are-modules \
             shadow-file= show-absolute-path show-column-numbers show-error-code-links \
             show-error-context show-error-end show-traceback skip-cache-mtime-checks \
             skip-version-check sqlite-cache strict strict-equality \
             strict-equality-for-none tb txt-report= untyped-calls-exclude= verbose \
             version warn-incomplete-stub warn-redundant-casts warn-return-any \
             warn-unreachable warn-unused-configs warn-unused-ignores xml-report= \
             xslt-html-report= xslt-txt-report=",
        )),
        runs: Some(Program {
            options: MYPY_OPTIONS,
            ..program("mypy")
        }),
        ..entry("mypy")
    },
    Entry {
        grammar: Some(stop("nice", "n:", "adjustment= help version")),
        wrapper: Some(Wrapper {
            numeric_flags: true,
            ..wrapper("nice")
        }),
        ..entry("nice")
    },
    Entry {
        grammar: Some(gnu(
            "nl",
            "b:d:f:h:i:l:n:ps:v:w:",
            "body-numbering= footer-numbering= header-numbering= help join-blank-lines= \
             line-increment= no-renumber number-format= number-separator= number-width= \
             section-delimiter= starting-line-number= version",
        )),
        ..entry("nl")
    },
    Entry {
        grammar: Some(exact(
            "node",
            "C:ce:hip:r:v",
            "print= run= inspect=? inspect-brk=? inspect-wait=? trace-events-enabled \
             report-uncaught-exception perf-basic-prof perf-basic-prof-only-functions perf-prof \
             logfile= abort-on-uncaught-exception allow-addons allow-child-process allow-fs-read= \
             allow-fs-write= allow-wasi allow-worker build-snapshot check completion-bash \
             conditions= cpu-prof cpu-prof-dir= cpu-prof-interval= cpu-prof-name= \
             debug-port diagnostic-dir= disable-proto= disable-warning= \
             disallow-code-generation-from-strings dns-result-order= \
             enable-etw-stack-walking enable-fips enable-network-family-autoselection \
             enable-source-maps env-file= env-file-if-exists= eval= \
             experimental-default-type= experimental-eventsource \
             experimental-import-meta-resolve experimental-loader= \
             experimental-network-imports experimental-network-inspection \
             experimental-permission experimental-policy= experimental-print-required-tla \
             experimental-sea-config= experimental-test-coverage \
             experimental-test-module-mocks experimental-vm-modules experimental-websocket \
             expose-gc force-context-aware force-fips \
             force-node-api-uncaught-exceptions-policy frozen-intrinsics heap-prof \
             heap-prof-dir= heap-prof-interval= heap-prof-name= \
             heapsnapshot-near-heap-limit= heapsnapshot-signal= help \
             huge-max-old-generation-size icu-data-dir= import= input-type= \
             insecure-http-parser inspect-port= inspect-publish-uid= interactive \
             interpreted-frames-native-stack jitless loader max-http-header-size= \
             network-family-autoselection-attempt-timeout= no-addons no-deprecation \
             no-experimental-detect-module no-experimental-fetch \
             no-experimental-global-customevent no-experimental-global-webcrypto \
             no-experimental-repl-await no-experimental-require-module \
             no-extra-info-on-fatal-exception no-force-async-hooks-checks \
             no-global-search-paths no-network-family-autoselection no-warnings \
             node-memory-debug openssl-config= openssl-legacy-provider \
             openssl-shared-config pending-deprecation policy-integrity= preserve-symlinks \
             preserve-symlinks-main prof prof-process redirect-warnings= report-compact \
             report-dir= report-directory report-exclude-network report-filename= \
             report-on-fatalerror report-on-signal report-signal= require= secure-heap= \
             secure-heap-min= snapshot-blob= test test-concurrency= test-force-exit \
             test-name-pattern= test-only test-reporter= test-reporter-destination= \
             test-shard= test-timeout= throw-deprecation title= tls-cipher-list= \
             tls-keylog= trace-atomics-wait trace-deprecation trace-event-categories= \
             trace-event-file-pattern= trace-exit trace-promises trace-require-module= \
             trace-sigint trace-sync-io trace-tls trace-uncaught trace-warnings \
             track-heap-objects unhandled-rejections= use-bundled-ca use-largepages= \
             use-openssl-ca v8-options v8-pool-size= version watch watch-path= \
             watch-preserve-output zero-fill-buffers",
        )),
        runs: Some(Program {
            options: NODE_OPTIONS,
            ..program("node")
        }),
        interpreter: Some(Interpreter {
            program_options: &["-e", "--eval", "-p", "--print", "--test", "--run"],
            stops: &["--version", "-v", "--help", "-h", "--check", "-c"],
            interactive: &["-i", "--interactive"],
            ..interpreter("node")
        }),
        ..entry("node")
    },
    Entry {
        alias: Some("node"),
        interpreter: Some(Interpreter {
            program_options: &["-e", "--eval", "-p", "--print"],
            stops: &["--version", "-v", "--help", "-h"],
            ..interpreter("nodejs")
        }),
        ..entry("nodejs")
    },
    Entry {
        grammar: Some(stop("nohup", "", "help version")),
        wrapper: Some(wrapper("nohup")),
        special: &[Special::WritesFile("nohup.out")],
        ..entry("nohup")
    },
    Entry {
        grammar: Some(argparse(
            "nox",
            "d:e:f:hj:k:lNP:p:Rrs:t:vx",
            "add-timestamp allow-parallel default-venv-backend= download-python= \
             envdir= error-on-external-run error-on-missing-interpreters extra-python=? \
             extra-pythons=? force-color force-python=? force-pythons=? \
             force-venv-backend= forcecolor help install-only json keywords= list \
             list-sessions no-allow-parallel no-color no-dependencies \
             no-error-on-external-run no-error-on-missing-interpreters no-install \
             no-reuse-existing-virtualenvs no-stop-on-first-error no-venv no-verbose \
             nocolor non-interactive noxfile= parallel= python=? pythons=? report= \
             reuse-existing-virtualenvs reuse-venv= script-mode= script-venv-backend= \
             session=? sessions=? stop-on-first-error tags=? usage= verbose version",
        )),
        runs: Some(Program {
            options: &[
                hidden("-f"),
                hidden("--noxfile"),
                writes("--envdir"),
                writes("--report"),
            ],
            ..program("nox")
        }),
        ..entry("nox")
    },
    Entry {
        // npm (nopt): unique prefixes of its configuration keys.
        grammar: Some(Grammar {
            parser: ParserKind::Nopt,
            ..exact(
                "npm",
                "BC:DdEfghlOPqSsvw:y",
                "access= all allow-directory= allow-file= allow-git= allow-remote= \
                 allow-same-version allow-scripts-pending allow-scripts-pin allow-scripts= \
                 also= audit audit-level= auth-type= before= bin-links browser= bypass-2fa \
                 ca= cache-max= cache-min= cache= cafile= call= cert= cidr= color= \
                 commit-hooks cpu= dangerously-allow-all-scripts depth= description dev \
                 diff-dst-prefix= diff-ignore-all-space diff-name-only diff-no-prefix \
                 diff-src-prefix= diff-text diff-unified= diff= dry-run editor= \
                 engine-strict expect-result-count= expect-results expires= fetch-retries= \
                 fetch-retry-factor= fetch-retry-maxtimeout= fetch-retry-mintimeout= \
                 fetch-timeout= force foreground-scripts format-package-lock fund \
                 git-tag-version git= global global-style globalconfig= heading= \
                 https-proxy= if-present ignore-scripts include-attestations include-staged \
                 include-workspace-root include= init-author-email= init-author-name= \
                 init-author-url= init-license= init-module= init-private init-type= \
                 init-version= install-links install-strategy= json key= legacy-bundling \
                 legacy-peer-deps libc= link local-address= location= lockfile-version= \
                 loglevel= logs-dir= logs-max= long maxsockets= message= \
                 min-release-age-exclude= min-release-age= name= node-gyp= node-options= \
                 noproxy= offline omit-lockfile-registry-resolved omit= only= optional \
                 orgs-permission= orgs= os= otp= pack-destination= package-lock \
                 package-lock-only package= packages-all packages-and-scopes-permission= \
                 packages= parseable password= prefer-dedupe prefer-offline prefer-online \
                 prefix= preid= production progress provenance provenance-file= proxy= \
                 read-only rebuild-bundle registry= replace-registry-host= save save-bundle \
                 save-dev save-exact save-optional save-peer save-prefix= save-prod \
                 sbom-format= sbom-type= scope= scopes= script-shell= searchexclude= \
                 searchlimit= searchopts= searchstaleness= shell= shrinkwrap \
                 sign-git-commit sign-git-tag strict-allow-scripts strict-peer-deps \
                 strict-ssl tag-version-prefix= tag= timing token-description= umask= \
                 unicode update-notifier usage user-agent= userconfig= version versions \
                 viewer= which= workspace= workspaces workspaces-update yes",
            )
        }),
        runs: Some(Program {
            options: NPM_OPTIONS,
            ..program("npm")
        }),
        ..entry("npm")
    },
    Entry {
        runs_any: true,
        ..entry("npx")
    },
    Entry {
        runs_any: true,
        ..entry("nsenter")
    },
    Entry {
        shell: Some(Shell::Unread("`nu` runs commands in a language the gate does not read")),
        ..entry("nu")
    },
    Entry {
        grammar: Some(exact(
            "nvim",
            "c:dDeEhHi:lLmMnNoOpPq:rRs:S::u:vVw:W:x",
            "clean cmd= embed headless help listen= noplugin startuptime= version",
        )),
        runs: Some(Program {
            options: &[hidden("-c"), hidden("--cmd"), hidden("-S")],
            ..program("nvim")
        }),
        ..entry("nvim")
    },
    Entry {
        grammar: Some(gnu(
            "od",
            "A:abcdfij:lN:oS:st:vw::x",
            "address-radix= endian= format= help output-duplicates read-bytes= skip-bytes= \
             strings=? traditional version width=?",
        )),
        ..entry("od")
    },
    Entry {
        grammar: Some(Grammar {
            program: "oksh",
            ..KSH
        }),
        shell: Some(Shell::Bash),
        ..entry("oksh")
    },
    Entry {
        runs_any: true,
        ..entry("osascript")
    },
    Entry {
        grammar: Some(argparse(
            "parallel",
            "a:C:d:E:eI:i::j:kL:l::m:n:P:qrS:s:uvXxZ0",
            "arg-file= colsep= delimiter= dry-run eof=? halt= jobs= joblog= keep-order \
             line-buffer max-args= max-chars= max-lines=? null pipe quote replace=? \
             results= retries= sshlogin= tag timeout= verbose xargs",
        )),
        runs: Some(Program {
            options: &[hidden("")],
            ..program("parallel")
        }),
        runs_any: true,
        ..entry("parallel")
    },
    Entry {
        grammar: Some(gnu(
            "paste",
            "d:sz",
            "delimiters= help serial version zero-terminated",
        )),
        ..entry("paste")
    },
    Entry {
        grammar: Some(exact("pax", "ab:cdf:HiklLnoO:p:rs:tuvwx:XzB:", "")),
        reads: &[
            RecursiveReader {
                recursive: &["-w"],
                ..reader("pax", Roots::All, Reach::Contents)
            },
        ],
        ..entry("pax")
    },
    Entry {
        grammar: Some(exact(
            "perl",
            "0::aC::cd::D::e:E:fF:hi::I:l::m:M:nprsStTuUvV::wWx::X",
            "help version",
        )),
        runs: Some(Program {
            options: &[hidden("-e"), hidden("-E")],
            ..program("perl")
        }),
        interpreter: Some(Interpreter {
            program_options: &["-e", "-E"],
            stops: &["--version", "-v", "-V", "--help", "-h"],
            ..interpreter("perl")
        }),
        ..entry("perl")
    },
    Entry {
        grammar: Some(exact(
            "php",
            "aB:c:d:e:E:f:F:hHilmnqr:R:s:S:t:vwz:",
            "interactive define= help info modules php-ini= rf= rc= re= rz= ri= server= syntax-check \
             version",
        )),
        runs: Some(Program {
            options: &[hidden("-r"), hidden("-B"), hidden("-R"), hidden("-E")],
            ..program("php")
        }),
        interpreter: Some(Interpreter {
            program_options: &["-r", "-f", "-R", "-B", "-E", "-F", "-S"],
            interactive: &["-a", "--interactive"],
            stops: &[
                "--version",
                "-v",
                "-i",
                "--info",
                "-m",
                "--modules",
                "-h",
                "--help",
            ],
            ..interpreter("php")
        }),
        ..entry("php")
    },
    Entry {
        // pip (optparse): unique prefixes; its own options, then each subcommand's.
        grammar: Some(argparse(
            "pip",
            "hqVv",
            "cache-dir= cert= client-cert= debug disable-pip-version-check \
             exists-action= help isolated keyring-provider= log= no-cache-dir no-color \
             no-input no-python-version-warning proxy= python= quiet require-virtualenv \
             retries= timeout= trusted-host= use-deprecated= use-feature= verbose \
             version",
        )),
        subcommands: &[
            Grammar {
                subcommand: Some("list"),
                ..argparse(
                    "pip",
                    "ef:hi:loquVv",
                    "cache-dir= cert= client-cert= debug disable-pip-version-check editable \
                     exclude= exclude-editable exists-action= extra-index-url= find-links= \
                     format= help include-editable index-url= isolated keyring-provider= local \
                     log= no-cache-dir no-color no-index no-input no-python-version-warning \
                     not-required outdated path= pre proxy= python= quiet require-virtualenv \
                     retries= timeout= trusted-host= uptodate use-deprecated= use-feature= user \
                     verbose version",
                )
            },
            Grammar {
                subcommand: Some("show"),
                ..argparse(
                    "pip",
                    "fhqVv",
                    "cache-dir= cert= client-cert= debug disable-pip-version-check \
                     exists-action= files help isolated keyring-provider= log= no-cache-dir \
                     no-color no-input no-python-version-warning proxy= python= quiet \
                     require-virtualenv retries= timeout= trusted-host= use-deprecated= \
                     use-feature= verbose version",
                )
            },
            Grammar {
                subcommand: Some("freeze"),
                ..argparse(
                    "pip",
                    "hlqr:Vv",
                    "all cache-dir= cert= client-cert= debug disable-pip-version-check exclude= \
                     exclude-editable exists-action= help isolated keyring-provider= local log= \
                     no-cache-dir no-color no-input no-python-version-warning path= proxy= \
                     python= quiet require-virtualenv requirement= retries= timeout= \
                     trusted-host= use-deprecated= use-feature= user verbose version",
                )
            },
            Grammar {
                subcommand: Some("check"),
                ..argparse(
                    "pip",
                    "hqVv",
                    "cache-dir= cert= client-cert= debug disable-pip-version-check \
                     exists-action= help isolated keyring-provider= log= no-cache-dir no-color \
                     no-input no-python-version-warning proxy= python= quiet require-virtualenv \
                     retries= timeout= trusted-host= use-deprecated= use-feature= verbose \
                     version",
                )
            },
        ],
        runs: Some(Program {
            options: PIP_OPTIONS,
            ..program("pip")
        }),
        ..entry("pip")
    },
    Entry {
        alias: Some("pip"),
        runs: Some(Program {
            options: PIP_OPTIONS,
            ..program("pip3")
        }),
        ..entry("pip3")
    },
    Entry {
        runs_any: true,
        ..entry("pipx")
    },
    Entry {
        grammar: Some(exact(
            "pnpm",
            "C:F:hrvwy",
            "aggregate-output changed-files-ignore-pattern= color=? dir= env-file= \
             fail-if-no-match filter= filter-prod= help http-proxy= https-proxy= \
             ignore-workspace include-workspace-root loglevel= no-fail-if-no-match \
             no-include-workspace-root no-progress no-proxy= no-sort npmrc-auth-file= \
             parallel recursive registry= reporter= reverse sort state-dir= store-dir= \
             stream test-pattern= use-stderr version workspace-concurrency= \
             workspace-packages= workspace-root yes",
        )),
        runs: Some(Program {
            options: PNPM_OPTIONS,
            asking_prefixes: &[(
                "--config.",
                "sets one of pnpm's settings (the script shell, the store, …), which the gate does not judge",
            )],
            ..program("pnpm")
        }),
        ..entry("pnpm")
    },
    Entry {
        runs_any: true,
        ..entry("pnpx")
    },
    Entry {
        // bash's `popd` reads every word: `-n`, `+N`, `-N`; `--` ends the
        // options and the words after it are ignored.
        grammar: Some(gnu("popd", "n", "")),
        special: &[Special::ChangesDirectory(Chdir::Popd)],
        ..entry("popd")
    },
    Entry {
        grammar: Some(Grammar {
            program: "posh",
            ..KSH
        }),
        shell: Some(Shell::Bash),
        special: &[Special::SetsGlobOptions(GlobOptions::Flags { capital_g: false })],
        ..entry("posh")
    },
    Entry {
        shell: Some(Shell::Unread("`powershell` runs commands in a language the gate does not read")),
        ..entry("powershell")
    },
    Entry {
        grammar: Some(gnu("printenv", "0", "help null version")),
        ..entry("printenv")
    },
    Entry {
        grammar: Some(exact("printf", "v:", "")),
        text_only: true,
        ..entry("printf")
    },
    Entry {
        // bash's `pushd`: `-n` words, then one operand (`+N`, `-N`, `-` or
        // a directory), or `--` and the directory.
        grammar: Some(stop("pushd", "n", "")),
        special: &[Special::ChangesDirectory(Chdir::Pushd)],
        ..entry("pushd")
    },
    Entry {
        grammar: Some(gnu("pwd", "LP", "help logical physical version")),
        ..entry("pwd")
    },
    Entry {
        shell: Some(Shell::Unread("`pwsh` runs commands in a language the gate does not read")),
        ..entry("pwsh")
    },
    Entry {
        alias: Some("pytest"),
        runs: Some(Program {
            options: PYTEST_OPTIONS,
            ..program("py.test")
        }),
        ..entry("py.test")
    },
    Entry {
        grammar: Some(argparse(
            "pylint",
            "d:Ee:f:hj:r:s:v",
            "additional-builtins= allow-any-import-level= \
             allow-global-unused-variables= allow-reexport-from-package= \
             allow-wildcard-with-all= allowed-redefined-builtins= \
             analyse-fallback-blocks= argument-naming-style= argument-rgx= \
             attr-naming-style= attr-rgx= bad-names= bad-names-rgxs= callbacks= \
             check-fixme-in-docstring= check-protected-access-in-special-methods= \
             check-quote-consistency= check-str-concat-over-line-jumps= \
             class-attribute-naming-style= class-attribute-rgx= \
             class-const-naming-style= class-const-rgx= class-naming-style= class-rgx= \
             clear-cache-post-run= confidence= const-naming-style= const-rgx= \
             contextmanager-decorators= defining-attr-methods= deprecated-modules= \
             disable= docstring-min-length= dummy-variables-rgx= enable= \
             enable-all-extensions errors-only evaluation= exclude-protected= \
             exclude-too-few-public-methods= exit-zero expected-line-ending-format= \
             ext-import-graph= extension-pkg-allow-list= extension-pkg-whitelist= \
             fail-on= fail-under= files from-stdin full-documentation \
             function-naming-style= function-rgx= generate-rcfile generate-toml-config \
             generated-members= good-names= good-names-rgxs= help help-msg= ignore= \
             ignore-comments= ignore-docstrings= ignore-imports= ignore-long-lines= \
             ignore-mixin-members= ignore-none= ignore-on-opaque-inference= \
             ignore-paths= ignore-pattern-in-long-lines= ignore-patterns= \
             ignore-signatures= ignored-argument-names= ignored-checks-for-mixins= \
             ignored-classes= ignored-modules= ignored-parents= import-graph= \
             include-naming-hint= indent-after-paren= indent-string= init-hook= \
             init-import= inlinevar-naming-style= inlinevar-rgx= int-import-graph= \
             jobs= known-first-party= known-side-effects-only-functions= \
             known-standard-library= known-third-party= limit-inference-results= \
             list-conf-levels list-extensions list-groups list-msgs list-msgs-enabled \
             load-plugins= logging-format-style= logging-modules= long-help max-args= \
             max-attributes= max-bool-expr= max-branches= max-line-length= max-locals= \
             max-module-lines= max-nested-blocks= max-parents= \
             max-positional-arguments= max-public-methods= max-returns= \
             max-spelling-suggestions= max-statements= method-naming-style= method-rgx= \
             min-public-methods= min-similarity-lines= missing-member-hint= \
             missing-member-hint-distance= missing-member-max-choices= mixin-class-rgx= \
             module-naming-style= module-rgx= msg-template= name-group= \
             never-returning-functions= no-docstring-rgx= notes= notes-rgx= output= \
             output-format= overgeneral-exceptions= paramspec-rgx= persistent= \
             prefer-stubs= preferred-modules= property-classes= py-version= rcfile= \
             recursive= redefining-builtins-modules= reports= score= \
             signature-mutators= single-line-class-stmt= single-line-if-stmt= \
             source-roots= spelling-dict= spelling-ignore-comment-directives= \
             spelling-ignore-words= spelling-private-dict-file= \
             spelling-store-unknown-words= suggest-join-with-non-empty-separator= \
             timeout-methods= typealias-rgx= typevar-rgx= typevartuple-rgx= \
             valid-classmethod-first-arg= valid-metaclass-classmethod-first-arg= \
             variable-naming-style= variable-rgx= verbose",
        )),
        runs: Some(Program {
            options: &[
                hidden("--init-hook"),
                hidden("--load-plugins"),
                hidden("--rcfile"),
                writes("--output"),
                // The imports checker's graphs, the spelling checker's words.
                writes("--import-graph"),
                writes("--ext-import-graph"),
                writes("--int-import-graph"),
                writes("--spelling-private-dict-file"),
            ],
            ..program("pylint")
        }),
        ..entry("pylint")
    },
    Entry {
        grammar: Some(exact("pypy", "bBc:dEhiIm:OPqsSuvVW:xX:", "help-all help version")),
        interpreter: Some(Interpreter {
            name: "pypy",
            ..PYTHON
        }),
        ..entry("pypy")
    },
    Entry {
        grammar: Some(exact("pypy3", "bBc:dEhiIm:OPqsSuvVW:xX:", "help-all help version")),
        interpreter: Some(Interpreter {
            name: "pypy3",
            ..PYTHON
        }),
        ..entry("pypy3")
    },
    Entry {
        grammar: Some(exact(
            "pyright",
            "hp:t:v:w",
            "createstub= dependencies help ignoreexternal level= outputjson project= \
             pythonpath= pythonplatform= pythonversion= skipunannotated stats threads= \
             typeshedpath= venvpath= verbose verifytypes= version warnings watch writebaseline",
        )),
        runs: Some(Program {
            options: &[
                hidden("--pythonpath"),
                hidden("--venvpath"),
                hidden("-v"),
                writes("--createstub"),
                writes("--writebaseline"),
            ],
            ..program("pyright")
        }),
        ..entry("pyright")
    },
    Entry {
        grammar: Some(argparse(
            "pytest",
            "c:hk:lm:o:p:qr:sVvW:x",
            "assert= basetemp= cache-clear cache-show= capture= co code-highlight= \
             collect-in-virtualenv collect-only color= confcutdir= config-file= \
             continue-on-collection-errors debug=? deselect= disable-plugin-autoload \
             disable-pytest-warnings disable-warnings doctest-continue-on-failure \
             doctest-glob= doctest-ignore-import-errors doctest-modules doctest-report= \
             durations= durations-min= exitfirst failed-first ff fixtures \
             fixtures-per-test force-short-summary full-trace funcargs help ignore= \
             ignore-glob= import-mode= junit-prefix= junit-xml= junitxml= keep-duplicates \
             last-failed last-failed-no-failures= lf lfnf= log-auto-indent= \
             log-cli-date-format= log-cli-format= log-cli-level= log-date-format= \
             log-disable= log-file= log-file-date-format= log-file-format= \
             log-file-level= log-file-mode= log-format= log-level= markers \
             max-warnings= maxfail= new-first nf no-fold-skipped no-header \
             no-showlocals no-summary noconftest override-ini= pastebin= pdb pdbcls= \
             pyargs pythonwarnings= quiet report-chars= rootdir= runxfail setup-only \
             setup-plan setup-show show-capture= showlocals stepwise stepwise-reset \
             stepwise-skip strict strict-config strict-markers sw sw-reset sw-skip tb= \
             trace trace-config verbose verbosity= version xfail-tb \
             cov=? cov-report= html= report-log=",
        )),
        runs: Some(Program {
            options: PYTEST_OPTIONS,
            ..program("pytest")
        }),
        ..entry("pytest")
    },
    Entry {
        grammar: Some(exact(
            "python",
            "bBc:dEhiIm:OPqsSuvVW:xX:",
            "check-hash-based-pycs= help help-all help-env help-xoptions version",
        )),
        runs: Some(Program {
            options: &[hidden("-c")],
            ..program("python")
        }),
        interpreter: Some(PYTHON),
        runner: Some("-m"),
        ..entry("python")
    },
    Entry {
        runs: Some(Program {
            options: &[hidden("-c")],
            ..program("python2")
        }),
        ..entry("python2")
    },
    Entry {
        runs: Some(Program {
            options: &[hidden("-c")],
            ..program("python3")
        }),
        ..entry("python3")
    },
    Entry {
        grammar: Some(exact(
            "rclone",
            "n",
            "config= dry-run exclude= filter= include= log-file= transfers= verbose",
        )),
        reads: &[
            RecursiveReader {
                subcommand: Some("copy"),
                ..reader("rclone", Roots::AllButLast, Reach::Contents)
            },
            RecursiveReader {
                subcommand: Some("sync"),
                ..reader("rclone", Roots::AllButLast, Reach::Contents)
            },
            RecursiveReader {
                subcommand: Some("move"),
                ..reader("rclone", Roots::AllButLast, Reach::Contents)
            },
        ],
        ..entry("rclone")
    },
    Entry {
        grammar: Some(gnu(
            "readlink",
            "efmnqsvz",
            "canonicalize canonicalize-existing canonicalize-missing help no-newline quiet \
             silent verbose version zero",
        )),
        ..entry("readlink")
    },
    Entry {
        text_only: true,
        special: &[Special::AssignsVariables, Special::DeclaresNames],
        ..entry("readonly")
    },
    Entry {
        grammar: Some(gnu(
            "realpath",
            "eLmPqsz",
            "canonicalize-existing canonicalize-missing help logical no-symlinks physical \
             quiet relative-base= relative-to= strip version zero",
        )),
        ..entry("realpath")
    },
    Entry {
        text_only: true,
        ..entry("return")
    },
    Entry {
        grammar: Some(exact(
            "rg",
            "A:B:C:d:E:e:f:g:hij:LlM:m:nopqr:SsT:t:UuVvwxz0.",
            "after-context= before-context= binary block-buffered byte-offset \
             case-sensitive color= colors= column context= context-separator= count \
             count-matches crlf debug dfa-size-limit= encoding= engine= \
             field-context-separator= field-match-separator= file= files files-with-matches \
             files-without-match fixed-strings follow glob= glob-case-insensitive heading \
             help hidden hostname-bin= hyperlink-format= iglob= ignore-case ignore-file= \
             ignore-file-case-insensitive include-zero invert-match json line-buffered \
             line-number line-regexp max-columns= max-columns-preview max-count= max-depth= \
             max-filesize= mmap multiline multiline-dotall no-config no-ignore \
             no-ignore-dot no-ignore-exclude no-ignore-files no-ignore-global \
             no-ignore-parent no-ignore-vcs no-messages no-require-git null null-data \
             one-file-system only-matching passthru path-separator= pcre2 pre= pre-glob= \
             pretty quiet regex-size-limit= regexp= replace= search-zip smart-case sort= \
             sortr= stats stop-on-nonmatch text threads= trim type= type-add= type-clear= \
             type-list type-not= unrestricted version vimgrep with-filename word-regexp",
        )),
        runs: Some(Program {
            options: &[
                hidden("--pre"),
                hidden("--hostname-bin"),
                // Compressed files are read through gzip, xz, bzip2, zstd, …
                hidden("-z"),
                hidden("--search-zip"),
            ],
            ..program("rg")
        }),
        reads: &[
            RecursiveReader {
                hidden: Some(&["--hidden", "-.", "-uu", "-uuu", "--unrestricted"]),
                default_here: true,
                not_reading: &["--type-list", "--version", "-V", "--help", "-h"],
                ..reader(
                    "rg",
                    Roots::AfterPattern(&["-e", "-f", "--regexp", "--file", "--files"]),
                    Reach::Contents,
                )
            },
        ],
        ..entry("rg")
    },
    Entry {
        alias: Some("grep"),
        reads: &[
            grep("rgrep", &[]),
        ],
        ..entry("rgrep")
    },
    Entry {
        grammar: Some(gnu(
            "rm",
            "dfIiRrv",
            "dir force help interactive=? no-preserve-root one-file-system preserve-root=? \
             recursive verbose version",
        )),
        writes: Some(Writer {
            recursive: &["-r", "-R", "--recursive"],
            ..writer("rm", WrittenOperands::All)
        }),
        spellings: &[
            FlagSpelling {
                program: "rm",
                subcommand: None,
                letters: "rRfidvI",
                long: &[
                    ("--recursive", "-r"),
                    ("--force", "-f"),
                    ("--dir", "-d"),
                    ("--verbose", "-v"),
                ],
                same: &[("-R", "-r")],
            },
        ],
        ..entry("rm")
    },
    Entry {
        grammar: Some(gnu(
            "rmdir",
            "pv",
            "help ignore-fail-on-non-empty parents verbose version",
        )),
        writes: Some(writer("rmdir", WrittenOperands::All)),
        ..entry("rmdir")
    },
    Entry {
        // rsync (popt): whole names only.
        grammar: Some(exact(
            "rsync",
            "0468AaB:bCcdEe:f:gHhIiJKkLlM:mNnOopqRrSsT:tUuVvWXxyz",
            "8-bit-output acls address= append append-verify archive atimes backup \
             backup-dir= block-size= blocking-io bwlimit= checksum checksum-choice= \
             checksum-seed= chmod= chown= compare-dest= compress compress-choice= \
             compress-level= compress-threads= confine-root= contimeout= copy-as= \
             copy-dest= copy-devices copy-dirlinks copy-links copy-unsafe-links crtimes \
             cvs-exclude debug= del delay-updates delete delete-after delete-before \
             delete-delay delete-during delete-excluded delete-missing-args devices dirs \
             drop-D dry-run early-input= exclude= exclude-from= executability existing \
             fake-super files-from= filter= force from0 fsync fuzzy group groupmap= \
             hard-links help human-readable iconv= ignore-errors ignore-existing \
             ignore-missing-args ignore-non-existing ignore-times inc-recursive include= \
             include-from= info= inplace insecure-links ipv4 ipv6 itemize-changes \
             keep-dirlinks link-dest= links list-only log-file= log-file-format= max-alloc= \
             max-delete= max-size= min-size= mkpath modify-window= munge-links no-OPTION \
             no-i-r no-implied-dirs no-inc-recursive no-motd no-whole-file numeric-ids \
             old-args old-d old-dirs omit-dir-times omit-link-times one-file-system \
             only-write-batch= open-noatime out-format= outbuf= owner partial partial-dir= \
             password-file= perms port= preallocate progress protocol= prune-empty-dirs \
             quiet read-batch= recursive relative remote-option= remove-source-files rsh= \
             rsync-path= safe-links secluded-args size-only skip-compress= sockopts= sparse \
             specials stats stderr= stop-after= stop-at= suffix= super temp-dir= timeout= \
             times trust-sender update usermap= verbose version whole-file write-batch= \
             write-devices xattrs",
        )),
        runs: Some(Program {
            options: &[
                hidden("-e"),
                hidden("--rsh"),
                hidden("--rsync-path"),
                names_from("--files-from"),
            ],
            ..program("rsync")
        }),
        reads: &[
            RecursiveReader {
                recursive: &["-r", "--recursive", "-a", "--archive"],
                ..reader("rsync", Roots::AllButLast, Reach::Contents)
            },
        ],
        special: &[Special::CopiesLinks],
        ..entry("rsync")
    },
    Entry {
        grammar: Some(exact(
            "ruby",
            "0::aC:cdE:e:F:hI:i::K:l:npr:sSTU::vWwx::y",
            "backtrace-limit= copyright disable= dump= enable= encoding= external-encoding= \
             help internal-encoding= jit verbose version yydebug",
        )),
        runs: Some(Program {
            options: &[hidden("-e")],
            ..program("ruby")
        }),
        interpreter: Some(Interpreter {
            program_options: &["-e"],
            stops: &["--version", "-v", "--help", "-h", "--copyright"],
            ..interpreter("ruby")
        }),
        ..entry("ruby")
    },
    Entry {
        grammar: Some(exact(
            "ruff",
            "hqsVv",
            "color= config= help isolated quiet silent verbose version",
        )),
        subcommands: &[
            Grammar {
                subcommand: Some("check"),
                ..exact(
                    "ruff",
                    "ehno:qsvw",
                    "add-ignore=? add-noqa=? cache-dir= color= config= diff exclude= \
                     exit-non-zero-on-fix exit-zero extend-exclude= extend-fixable= \
                     extend-per-file-ignores= extend-select= extension= fix fix-only fixable= \
                     force-exclude help ignore= ignore-noqa isolated no-cache output-file= \
                     output-format= per-file-ignores= preview quiet respect-gitignore select= \
                     show-files show-fixes show-settings silent statistics stdin-filename= \
                     target-version= unfixable= unsafe-fixes verbose watch",
                )
            },
            Grammar {
                subcommand: Some("format"),
                ..exact(
                    "ruff",
                    "hnqsv",
                    "cache-dir= check color= config= diff exclude= exit-non-zero-on-format \
                     extend-exclude= extension= force-exclude help isolated line-length= \
                     no-cache output-format= preview quiet range= respect-gitignore silent \
                     stdin-filename= target-version= verbose",
                )
            },
        ],
        runs: Some(Program {
            options: &[
                writes("--add-noqa"),
                writes("--fix"),
                writes("--fix-only"),
                writes("--unsafe-fixes"),
                writes("--output-file"),
                writes("-o"),
                writes("--cache-dir"),
                hidden("--config"),
            ],
            ..program("ruff")
        }),
        ..entry("ruff")
    },
    Entry {
        runs_any: true,
        ..entry("runuser")
    },
    Entry {
        grammar: Some(exact(
            "rustc",
            "A:C:D:F:ghL:l:Oo:VvW:",
            "allow= cap-lints= cfg= check-cfg= codegen= crate-name= crate-type= deny= \
             edition= emit= explain= forbid= force-warn= help= out-dir= print= target= \
             test verbose version warn=",
        )),
        ..entry("rustc")
    },
    Entry {
        grammar: Some(exact("rustup", "hqVv", "help quiet verbose version")),
        ..entry("rustup")
    },
    Entry {
        grammar: Some(exact("scp", "346ABCc:D:F:i:J:l:o:P:pqRrS:Tv", "")),
        reads: &[
            RecursiveReader {
                recursive: &["-r"],
                ..reader("scp", Roots::AllButLast, Reach::Contents)
            },
        ],
        ..entry("scp")
    },
    Entry {
        grammar: Some(gnu(
            "script",
            "aB:c:eE:fI:m:O:o:qT:t::",
            "append command= echo= flush force help log-in= log-io= log-out= log-timing= \
             logging-format= output-limit= quiet return timing=? version",
        )),
        runs: Some(Program {
            options: &[hidden("-c"), hidden("--command")],
            ..program("script")
        }),
        runs_any: true,
        ..entry("script")
    },
    Entry {
        grammar: Some(gnu(
            "sed",
            "Ee:f:i::l:nrsuz",
            "debug expression= file= follow-symlinks help in-place=? line-length= null-data \
             posix quiet regexp-extended sandbox separate silent unbuffered version",
        )),
        special: &[Special::SedScripts],
        ..entry("sed")
    },
    Entry {
        text_only: true,
        ..entry("seq")
    },
    Entry {
        grammar: Some(SET),
        special: &[Special::SetsGlobOptions(GlobOptions::Flags { capital_g: true })],
        ..entry("set")
    },
    Entry {
        special: &[Special::SetsGlobOptions(GlobOptions::Setopt)],
        ..entry("setopt")
    },
    Entry {
        runs_any: true,
        ..entry("setpriv")
    },
    Entry {
        runs_any: true,
        ..entry("setsid")
    },
    Entry {
        grammar: Some(Grammar {
            program: "sh",
            ..BASH
        }),
        shell: Some(Shell::Bash),
        special: &[Special::SetsGlobOptions(GlobOptions::Flags { capital_g: false })],
        ..entry("sh")
    },
    Entry {
        grammar: Some(gnu("sha1sum", SUM_SHORT, SUM_LONG)),
        runs: Some(Program {
            options: CHECK_LIST,
            ..program("sha1sum")
        }),
        ..entry("sha1sum")
    },
    Entry {
        grammar: Some(gnu("sha224sum", SUM_SHORT, SUM_LONG)),
        ..entry("sha224sum")
    },
    Entry {
        grammar: Some(gnu("sha256sum", SUM_SHORT, SUM_LONG)),
        runs: Some(Program {
            options: CHECK_LIST,
            ..program("sha256sum")
        }),
        ..entry("sha256sum")
    },
    Entry {
        grammar: Some(gnu("sha384sum", SUM_SHORT, SUM_LONG)),
        ..entry("sha384sum")
    },
    Entry {
        grammar: Some(gnu("sha512sum", SUM_SHORT, SUM_LONG)),
        runs: Some(Program {
            options: CHECK_LIST,
            ..program("sha512sum")
        }),
        ..entry("sha512sum")
    },
    Entry {
        text_only: true,
        ..entry("shift")
    },
    Entry {
        // bash's builtins read options with `internal_getopt`: letters
        // before the first operand, `--` ends them (`shopt dotglob -s` sets
        // nothing).
        grammar: Some(stop("shopt", "opqsu", "")),
        special: &[Special::SetsGlobOptions(GlobOptions::Shopt)],
        ..entry("shopt")
    },
    Entry {
        grammar: Some(gnu(
            "shred",
            "fn:s:uvxz",
            "exact force help iterations= random-source= remove=? size= verbose version \
             zero",
        )),
        writes: Some(writer("shred", WrittenOperands::All)),
        ..entry("shred")
    },
    Entry {
        grammar: Some(gnu(
            "shuf",
            "ei:n:o:rz",
            "echo head-count= help input-range= output= random-source= repeat version \
             zero-terminated",
        )),
        ..entry("shuf")
    },
    Entry {
        text_only: true,
        ..entry("sleep")
    },
    Entry {
        grammar: Some(gnu(
            "sort",
            "bCcdfghik:Mmno:RrS:sT:t:uVz",
            "batch-size= buffer-size= check=? compress-program= debug dictionary-order \
             field-separator= files0-from= general-numeric-sort help human-numeric-sort \
             ignore-case ignore-leading-blanks ignore-nonprinting key= merge month-sort \
             numeric-sort output= parallel= random-sort random-source= reverse sort= stable \
             temporary-directory= unique version version-sort zero-terminated",
        )),
        runs: Some(Program {
            options: &[
                hidden("--compress-program"),
                names_from("--files0-from"),
            ],
            ..program("sort")
        }),
        writes: Some(Writer {
            // `-T DIR`: its temporary files are written in DIR.
            writes_value: &["-o", "--output", "-T", "--temporary-directory"],
            ..writer("sort", WrittenOperands::None)
        }),
        ..entry("sort")
    },
    Entry {
        opaque: Some("`source` runs the commands of a file"),
        ..entry("source")
    },
    Entry {
        grammar: Some(gnu(
            "split",
            "a:b:C:del:n:t:ux",
            "additional-suffix= bytes= elide-empty-files filter= help hex-suffixes=? \
             line-bytes= lines= number= numeric-suffixes=? separator= suffix-length= \
             unbuffered verbose version",
        )),
        ..entry("split")
    },
    Entry {
        grammar: Some(exact(
            "ssh",
            "46AaB:b:Cc:D:E:e:F:fGgI:i:J:KkL:l:m:MNnO:o:p:Q:qR:S:sTtVvW:w:XxYy",
            "",
        )),
        runs: Some(Program {
            options: &[hidden("-o")],
            ..program("ssh")
        }),
        runs_any: true,
        ..entry("ssh")
    },
    Entry {
        grammar: Some(gnu(
            "stat",
            "c:fLt",
            "cached= dereference file-system format= help printf= terse version",
        )),
        ..entry("stat")
    },
    Entry {
        grammar: Some(stop("stdbuf", "e:i:o:", "error= help input= output= version")),
        wrapper: Some(wrapper("stdbuf")),
        ..entry("stdbuf")
    },
    Entry {
        runs_any: true,
        ..entry("strace")
    },
    Entry {
        grammar: Some(gnu(
            "su",
            "c:fg:G:lmpPs:w:",
            "command= fast group= help login pty preserve-environment session-command= \
             shell= supp-group= version whitelist-environment=",
        )),
        runs: Some(Program {
            options: &[hidden("-c")],
            ..program("su")
        }),
        runs_any: true,
        ..entry("su")
    },
    Entry {
        grammar: Some(stop(
            "sudo",
            "AbBC:D:Eeg:Hh::iKklnNp:PR:r:SsT:t:U:u:Vv",
            "askpass background bell chdir= chroot= close-from= command-timeout= edit \
             group= help host= list login no-update non-interactive other-user= \
             preserve-env=? preserve-groups prompt= remove-timestamp reset-timestamp role= \
             set-home shell stdin type= user= validate version",
        )),
        wrapper: Some(Wrapper {
            assignments: true,
            elevates: true,
            opaque: &["-e", "--edit"],
            ..wrapper("sudo")
        }),
        directory_options: &["-D", "--chdir"],
        ..entry("sudo")
    },
    Entry {
        runs_any: true,
        ..entry("systemd-run")
    },
    Entry {
        grammar: Some(gnu("tac", "brs:", "before help regex separator= version")),
        ..entry("tac")
    },
    Entry {
        grammar: Some(gnu(
            "tail",
            "c:Ffn:qs:vz",
            "bytes= follow=? help lines= max-unchanged-stats= pid= quiet retry silent \
             sleep-interval= verbose version zero-terminated",
        )),
        ..entry("tail")
    },
    Entry {
        grammar: Some(Grammar {
            old_style: true,
            ..gnu(
                "tar",
                "?AaBb:C:cdF:f:Gg:H:hI:iJjK:kL:lMmN:nOoPpRrSsT:tUuV:vWwX:xZz",
                "absolute-names acls add-file= after-date= anchored append atime-preserve=? \
                 auto-compress backup=? block-number blocking-factor= bzip2 catenate \
                 check-device check-links checkpoint=? checkpoint-action= clamp-mtime compare \
                 compress concatenate confirmation create delay-directory-restore delete \
                 dereference diff directory= exclude= exclude-backups exclude-caches \
                 exclude-caches-all exclude-caches-under exclude-from= exclude-ignore= exclude-ignore-recursive= \
                 exclude-tag= exclude-tag-all= exclude-tag-under= exclude-vcs exclude-vcs-ignores extract file= \
                 files-from= force-local format= full-time get group= group-map= gunzip gzip \
                 hard-dereference help hole-detection= ignore-case ignore-command-error ignore-failed-read \
                 ignore-zeros incremental index-file= info-script= interactive \
                 keep-directory-symlink keep-newer-files keep-old-files label= level= list \
                 listed-incremental= lzip lzma lzop mode= mtime= multi-volume \
                 new-volume-script= newer= newer-mtime= no-acls no-anchored no-auto-compress \
                 no-check-device no-delay-directory-restore no-ignore-case \
                 no-ignore-command-error no-null no-overwrite-dir no-quote-chars= no-recursion \
                 no-same-owner no-same-permissions no-seek no-selinux no-unquote \
                 no-verbatim-files-from no-wildcards no-wildcards-match-slash no-xattrs null \
                 numeric-owner occurrence=? old-archive one-file-system one-top-level=? \
                 overwrite overwrite-dir owner= owner-map= pax-option= portability posix preserve-order \
                 preserve-permissions quote-chars= quoting-style= read-full-records \
                 record-size= recursion recursive-unlink remove-files restrict rmt-command= \
                 rsh-command= same-order same-owner same-permissions seek selinux show-defaults \
                 show-omitted-dirs show-snapshot-field-ranges show-stored-names \
                 show-transformed-names skip-old-files sort= sparse sparse-version= \
                 starting-file= strip-components= suffix= tape-length= test-label to-command= \
                 to-stdout totals=? touch transform= uncompress ungzip unlink-first unquote \
                 update usage use-compress-program= utc verbatim-files-from verbose verify \
                 version volno-file= warning= wildcards wildcards-match-slash xattrs \
                 xattrs-exclude= xattrs-include= xform= xz zstd",
            )
        }),
        runs: Some(Program {
            options: &[
                hidden("--to-command"),
                hidden("-I"),
                hidden("--use-compress-program"),
                hidden("--checkpoint-action"),
                hidden("--info-script"),
                hidden("--new-volume-script"),
                hidden("-F"),
                hidden("--rsh-command"),
                hidden("--rmt-command"),
                names_from("-T"),
                names_from("--files-from"),
            ],
            ..program("tar")
        }),
        reads: &[
            RecursiveReader {
                recursive: &["-c", "--create", "-r", "--append", "-u", "--update"],
                ..reader("tar", Roots::All, Reach::Contents)
            },
        ],
        directory_options: &["-C", "--directory"],
        ..entry("tar")
    },
    Entry {
        grammar: Some(exact("tclsh", "h", "help version")),
        interpreter: Some(interpreter("tclsh")),
        ..entry("tclsh")
    },
    Entry {
        shell: Some(Shell::Unread("`tcsh` runs commands in a language the gate does not read")),
        ..entry("tcsh")
    },
    Entry {
        grammar: Some(gnu(
            "tee",
            "aip",
            "append help ignore-interrupts output-error=? version",
        )),
        writes: Some(writer("tee", WrittenOperands::All)),
        ..entry("tee")
    },
    Entry {
        text_only: true,
        ..entry("test")
    },
    Entry {
        grammar: Some(stop(
            "time",
            "af:ho:pqVv",
            "append format= help output= portability quiet verbose version",
        )),
        wrapper: Some(wrapper("time")),
        outputs: &["-o", "--output"],
        ..entry("time")
    },
    Entry {
        grammar: Some(stop(
            "timeout",
            "k:s:v",
            "foreground help kill-after= preserve-status signal= verbose version",
        )),
        wrapper: Some(Wrapper {
            operands: 1,
            ..wrapper("timeout")
        }),
        ..entry("timeout")
    },
    Entry {
        grammar: Some(gnu(
            "touch",
            "acd:fhmr:t:",
            "date= help no-create no-dereference reference= time= version",
        )),
        writes: Some(writer("touch", WrittenOperands::All)),
        ..entry("touch")
    },
    Entry {
        grammar: Some(argparse(
            "tox",
            "c:hqrvx:",
            "colored= conf= exit-and-dump-after= help installpkg= no-provision=? \
             no-recreate-provision override= quiet recreate root= runner= stderr-color= \
             verbose version workdir=",
        )),
        runs: Some(Program {
            options: &[
                hidden("-c"),
                hidden("--conf"),
                hidden("-x"),
                hidden("--override"),
                hidden("--installpkg"),
                writes("--workdir"),
                writes("--root"),
            ],
            ..program("tox")
        }),
        ..entry("tox")
    },
    Entry {
        grammar: Some(stop("toybox", "", "")),
        wrapper: Some(wrapper("toybox")),
        ..entry("toybox")
    },
    Entry {
        grammar: Some(gnu(
            "tr",
            "Ccdst",
            "complement delete help squeeze-repeats truncate-set1 version",
        )),
        ..entry("tr")
    },
    Entry {
        // `trap [-lpP] [[ACTION] SIGNAL…]`, read as `shopt`'s.
        grammar: Some(stop("trap", "lpP", "")),
        special: &[Special::RunsLater],
        ..entry("trap")
    },
    Entry {
        grammar: Some(exact(
            "tree",
            "aAcCdDfFgiI:lL:nNo:pP:qQrstuvxX",
            "charset= dirsfirst du filelimit= fromfile gitignore help inodes matchdirs \
             noreport prune si sort= timefmt= version",
        )),
        reads: &[
            RecursiveReader {
                hidden: Some(&["-a"]),
                default_here: true,
                not_reading: &["--version", "--help"],
                ..reader("tree", Roots::All, Reach::Names)
            },
        ],
        ..entry("tree")
    },
    Entry {
        text_only: true,
        ..entry("true")
    },
    Entry {
        grammar: Some(gnu(
            "truncate",
            "cor:s:",
            "help io-blocks no-create reference= size= version",
        )),
        writes: Some(writer("truncate", WrittenOperands::All)),
        ..entry("truncate")
    },
    Entry {
        text_only: true,
        special: &[Special::AssignsVariables, Special::DeclaresNames],
        ..entry("typeset")
    },
    Entry {
        grammar: Some(gnu("unexpand", "at:", "all first-only help tabs= version")),
        ..entry("unexpand")
    },
    Entry {
        grammar: Some(gnu(
            "uniq",
            "cDdf:is:uw:z",
            "all-repeated=? check-chars= count group=? help ignore-case repeated \
             skip-chars= skip-fields= unique version zero-terminated",
        )),
        ..entry("uniq")
    },
    Entry {
        grammar: Some(gnu("unlink", "", "help version")),
        writes: Some(writer("unlink", WrittenOperands::All)),
        ..entry("unlink")
    },
    Entry {
        text_only: true,
        special: &[Special::DeclaresNames],
        ..entry("unset")
    },
    Entry {
        special: &[Special::SetsGlobOptions(GlobOptions::Setopt)],
        ..entry("unsetopt")
    },
    Entry {
        runs_any: true,
        ..entry("unshare")
    },
    Entry {
        grammar: Some(exact(
            "uv",
            "hnq:Vv:",
            "allow-insecure-host= cache-dir= color= config-file= directory= help \
             managed-python no-cache no-config no-managed-python no-progress \
             no-python-downloads offline project= quiet= system-certs verbose= version",
        )),
        subcommands: &[
            Grammar {
                subcommand: Some("run"),
                ..exact(
                    "uv",
                    "C:f:hi:mnP:p:q:sUv:w:",
                    "active all-extras all-groups all-packages allow-insecure-host= cache-dir= \
                     color= compile-bytecode config-file= config-setting= \
                     config-settings-package= default-index= directory= env-file= exact \
                     exclude-newer= exclude-newer-package= extra= extra-index-url= find-links= \
                     fork-strategy= frozen group= gui-script help index= index-strategy= \
                     index-url= isolated keyring-provider= link-mode= locked managed-python \
                     module no-binary no-binary-package= no-build no-build-isolation \
                     no-build-isolation-package= no-build-package= no-cache no-config \
                     no-default-groups no-dev no-editable no-editable-package= no-env-file \
                     no-extra= no-group= no-index no-managed-python no-progress no-project \
                     no-python-downloads no-require-build-hashes no-sources no-sources-package= \
                     no-sync offline only-dev only-group= package= prerelease= \
                     prerelease-package= project= python= python-platform= quiet= refresh \
                     refresh-package= reinstall reinstall-package= require-build-hashes \
                     resolution= script system-certs upgrade upgrade-group= upgrade-package= \
                     verbose= with= with-editable= with-requirements=",
                )
            },
        ],
        runs: Some(Program {
            options: &[
                hidden("--with"),
                hidden("--with-requirements"),
                hidden("--python"),
                hidden("-p"),
                hidden("--directory"),
                hidden("--project"),
                hidden("--env-file"),
                writes("--cache-dir"),
            ],
            ..program("uv")
        }),
        runner: Some("run"),
        ..entry("uv")
    },
    Entry {
        runs_any: true,
        ..entry("uvx")
    },
    Entry {
        grammar: Some(exact(
            "vim",
            "c:dDeEhHi:lLmMnNoOpPq:rRs:S::t:T:u:U:vVw:W:xyZ",
            "clean cmd= help noplugin not-a-term nofork remote remote-expr= remote-send= \
             remote-silent remote-wait servername= startuptime= ttyfail version",
        )),
        runs: Some(Program {
            options: &[hidden("-c"), hidden("--cmd"), hidden("-S")],
            ..program("vim")
        }),
        ..entry("vim")
    },
    Entry {
        grammar: Some(stop(
            "watch",
            "bcd::eghn:pq:tvwx",
            "beep chgexit color differences=? equexit= errexit exec help interval= no-color \
             no-linewrap no-rerun no-title no-wrap precise version",
        )),
        runs: Some(Program {
            options: &[runs("", Runs::ScriptWords)],
            ..program("watch")
        }),
        runs_any: true,
        ..entry("watch")
    },
    Entry {
        grammar: Some(gnu(
            "wc",
            "cLlmw",
            "bytes chars files0-from= help lines max-line-length version words",
        )),
        runs: Some(Program {
            options: FILES0_FROM,
            ..program("wc")
        }),
        ..entry("wc")
    },
    Entry {
        grammar: Some(gnu(
            "wget",
            "46A:a:B:bcD:dEe:FHhI:i:KkLl:mNn:O:o:P:pQ:qR:rST:t:U:Vvw:X:x",
            "accept= accept-regex= adjust-extension append-output= ask-password \
             auth-no-challenge background backup-converted backups= base= bind-address= \
             body-data= body-file= ca-certificate= ca-directory= certificate= \
             certificate-type= ciphers= compression= config= connect-timeout= \
             content-disposition content-on-error continue convert-file-only convert-links \
             crl-file= cut-dirs= debug default-page= delete-after directory-prefix= \
             dns-timeout= domains= exclude-directories= exclude-domains= execute= \
             follow-ftp follow-tags= force-directories force-html ftp-password= ftp-user= \
             ftps-clear-data-connection ftps-fallback-to-ftp ftps-implicit ftps-resume-ssl \
             header= help hsts-file http-password= http-user= https-only ignore-case \
             ignore-length ignore-tags= include-directories= inet4-only inet6-only \
             input-file= keep-session-cookies level= limit-rate= load-cookies= \
             local-encoding= max-redirect method= mirror no-cache no-check-certificate \
             no-clobber no-config no-cookies no-directories no-dns-cache no-glob \
             no-host-directories no-hsts no-http-keep-alive no-if-modified-since no-iri \
             no-netrc no-parent no-passive-ftp no-proxy no-remove-listing \
             no-use-server-timestamps no-verbose no-warc-compression no-warc-digests \
             no-warc-keep-log output-document= output-file= page-requisites password= \
             pinnedpubkey= post-data= post-file= prefer-family= preserve-permissions \
             private-key= private-key-type= progress= protocol-directories proxy-password= \
             proxy-user= quiet quota= random-wait read-timeout= recursive referer= \
             regex-type= reject= reject-regex= rejected-log= relative remote-encoding= \
             report-speed= restrict-file-names= retr-symlinks retry-connrefused \
             retry-on-http-error= save-cookies= save-headers secure-protocol= \
             server-response show-progress span-hosts spider start-pos= strict-comments \
             timeout= timestamping tries= trust-server-names unlink use-askpass= user= \
             user-agent= verbose version wait= waitretry= warc-cdx warc-dedup= warc-file= \
             warc-header= warc-max-size= warc-tempdir= xattr",
        )),
        runs: Some(Program {
            options: &[names_from("--config"), hidden("-e"), hidden("--execute")],
            ..program("wget")
        }),
        ..entry("wget")
    },
    Entry {
        grammar: Some(exact("which", "as", "")),
        ..entry("which")
    },
    Entry {
        grammar: Some(stop(
            "xargs",
            "0a:d:E:e::I:i::L:l::n:oP:prs:tx",
            "arg-file= delimiter= eof=? exit help interactive max-args= max-chars= \
             max-lines= max-procs= no-run-if-empty null open-tty process-slot-var= \
             replace=? show-limits verbose version",
        )),
        wrapper: Some(wrapper("xargs")),
        special: &[Special::ArgumentsFromInput],
        ..entry("xargs")
    },
    Entry {
        grammar: Some(exact(
            "xh",
            HTTPIE_SHORT,
            HTTPIE_LONG,
        )),
        file_items: true,
        ..entry("xh")
    },
    Entry {
        alias: Some("xh"),
        file_items: true,
        ..entry("xhs")
    },
    Entry {
        shell: Some(Shell::Unread("`xonsh` runs commands in a language the gate does not read")),
        ..entry("xonsh")
    },
    Entry {
        grammar: Some(exact(
            "yarn",
            "hsv",
            "cache-folder= check-files cwd= disable-pnp emoji=? enable-pnp flat focus \
             force frozen-lockfile global-folder= har help https-proxy= ignore-engines \
             ignore-optional ignore-platform ignore-scripts json link-duplicates \
             link-folder= modules-folder= mutex= network-concurrency= network-timeout= \
             no-bin-links no-default-rc no-lockfile no-node-version-check no-progress \
             non-interactive offline otp= pnp prefer-offline preferred-cache-folder= \
             prod production=? proxy= pure-lockfile registry= \
             scripts-prepend-node-path=? silent skip-integrity-check strict-semver \
             update-checksums use-yarnrc= verbose version",
        )),
        runs: Some(Program {
            options: YARN_OPTIONS,
            ..program("yarn")
        }),
        ..entry("yarn")
    },
    Entry {
        grammar: Some(Grammar {
            program: "yash",
            ..KSH
        }),
        shell: Some(Shell::Bash),
        special: &[Special::SetsGlobOptions(GlobOptions::Flags { capital_g: false })],
        ..entry("yash")
    },
    Entry {
        grammar: Some(gnu(
            "zip",
            "0123456789@Aab:cdDefFgHhi:jJkKlLmMn:oO:qrRs:St:TuUvVwx:XyzZ:",
            "append archive-clear binary-path= copy= delete display-bytes display-counts \
             display-dots display-globaldots display-usize encrypt exclude= fix fixfix \
             from-date= grow help include= junk-paths junk-sfx latin1 license log-append \
             logfile-path= move names-stdin no-dir-entries no-extra no-wild output-file= \
             quiet recurse-paths recurse-patterns show-files suffixes= symlinks temp-path= \
             test to-crlf update verbose",
        )),
        runs: Some(Program {
            options: &[names_from("-@"), names_from("--names-stdin")],
            ..program("zip")
        }),
        reads: &[
            RecursiveReader {
                recursive: &["-r", "-R", "--recurse-paths", "--recurse-patterns"],
                ..reader("zip", Roots::AllButFirst, Reach::Contents)
            },
        ],
        ..entry("zip")
    },
    Entry {
        grammar: Some(ZSH),
        shell: Some(Shell::Bash),
        special: &[Special::SetsGlobOptions(GlobOptions::Flags { capital_g: false })],
        ..entry("zsh")
    },
];
