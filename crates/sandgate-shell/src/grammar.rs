//! The types of an option grammar: which parser a program's options are
//! read by ([`ParserKind`]), whether an option takes a value ([`ValueKind`]),
//! and one program's (or subcommand's) options ([`Grammar`]; the methods
//! that read its strings are the `options` module's). Every grammar is part
//! of its program's entry in the one registry (the `registry` module), and
//! the one argv parser (the `options` module) reads commands with them;
//! both sit above this module, which names neither in code or links.

/// How a program's own parser reads its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParserKind {
    /// GNU `getopt_long`: unique prefixes of long options, short clusters,
    /// optional values only attached, `--`, options after operands.
    Gnu,
    /// `getopt_long` with `+` (or `POSIXLY_CORRECT` behaviour): as
    /// [`ParserKind::Gnu`], but options end at the first operand (`env`,
    /// `timeout`, `xargs`: the rest is the command they run).
    GnuStop,
    /// git's parse-options: as [`ParserKind::Gnu`], and `--no-NAME` turns an
    /// option off.
    Git,
    /// Python's argparse (with `allow_abbrev`) and optparse: unique prefixes;
    /// an optional value is attached or the next word when that word does not
    /// start with `-`.
    Argparse,
    /// npm's nopt: unique prefixes; `--name VALUE` for an option that is not
    /// a flag.
    Nopt,
    /// Only whole names (clap, Go's `flag`, ripgrep's and jq's own parsers);
    /// short clusters and `--` as GNU.
    Exact,
    /// A shell's own option loop as bash reads its command line (and its
    /// `set`): words of `-` or `+` and letters, before the first operand; a
    /// letter that takes a value takes the next word, each in turn (`-oO
    /// pipefail dotglob`, never `-opipefail`); `-` and `--` end the options,
    /// a `+` alone is skipped; long options are whole names, before or
    /// among the letters, written `--name` or `-name`, their value the next
    /// word (`--rcfile FILE`, never `--rcfile=FILE`).
    Bash,
    /// As [`ParserKind::Bash`] without the one-dash long options: dash's
    /// and busybox ash's own loops.
    Ash,
    /// A shell's own loop as zsh and mksh read theirs: as
    /// [`ParserKind::Ash`], but a letter that takes a value takes the rest of
    /// its word when there is one (`-oerrexit`), and a `+` alone ends the
    /// options as `-` does.
    Ksh,
}

impl ParserKind {
    /// Whether the parser takes unique prefixes of long options.
    pub fn prefixes(self) -> bool {
        !matches!(
            self,
            ParserKind::Exact | ParserKind::Bash | ParserKind::Ash | ParserKind::Ksh
        )
    }

    /// Whether this is a shell's own option loop, where `+x` is an option too.
    pub fn is_shell(self) -> bool {
        matches!(self, ParserKind::Bash | ParserKind::Ash | ParserKind::Ksh)
    }
}

/// Whether and how an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// A flag: `--force`, `-f`.
    None,
    /// Attached (`--output=F`, `-oF`) or the next word (`--output F`, `-o F`).
    Required,
    /// Only attached (`--backup=numbered`, `-i.bak`); a bare `--backup`
    /// never takes the next word (but see [`ParserKind::Argparse`]).
    Optional,
    /// The next word (`x;` in a short option string), unless that word
    /// starts with `-` or `+`: then none, and that word is read as options.
    /// bash's `set -o` and `set +o` take no name so (they print the
    /// settings), and `set -o -o globstar` sets `globstar`.
    UnlessOption,
}

/// One program's option grammar.
#[derive(Debug, Clone, Copy)]
pub struct Grammar {
    /// The command name.
    pub program: &'static str,
    /// The subcommand (`git diff`); `None` for the program's own options.
    pub subcommand: Option<&'static str>,
    /// Which parser reads the options.
    pub parser: ParserKind,
    /// The short options, as a `getopt` string.
    pub short: &'static str,
    /// The long options, separated by blanks (`output=`, `backup=?`, `force`).
    pub long: &'static str,
    /// The first word may be a cluster of short options without its dash,
    /// whose values are the next words in turn (`tar czf out.tgz dir`).
    pub old_style: bool,
    /// For a shell's own loop ([`ParserKind::is_shell`]): the letters of
    /// [`Grammar::short`] that mean after `+` what they mean after `-`
    /// (bash's `+c` runs its script as `-c` does; `+o NAME` takes its name
    /// as `-o NAME` does). Any other letter after `+` turns a setting off
    /// and is read as an unknown flag.
    pub plus: &'static str,
}
