//! Shell analysis: what a command line would run, as a list of simple commands.
//!
//! [`analyse`] parses a command as bash (with tree-sitter-bash) and returns an
//! [`Analysis`]: every simple command it contains — in lists, pipelines,
//! subshells, groups, `if`/`for`/`while`/`case` bodies, functions, command and
//! process substitutions and the scripts of `bash -c` — with its source text,
//! its normalized text (words after quote removal, joined by single spaces) and
//! the forms left after stripping wrappers (`env`, `sudo`, `timeout`, …: the
//! entries of [`REGISTRY`] with a [`Wrapper`]); every file a redirection writes; and everything that could not
//! be analysed, with the reason. The analysis is a pure function of the text.
//!
//! What it knows about programs is one entry per program in one registry
//! ([`registry::REGISTRY`]): each program's option grammar, read by the one
//! argv parser ([`options`]), and what its options and operands do. The
//! walk is in `parse` (with the `plain` shortcut for lines of plain words),
//! the code that reads the entries in [`programs`], [`reads`] and `wrappers`,
//! and the reasons for what cannot be analysed in [`reason`].
//!
//! ```
//! use sandgate_shell::analyse;
//!
//! let a = analyse("git status; timeout 5 r''m -rf / > out");
//! let texts: Vec<&str> = a.commands.iter().map(|c| c.normalized.as_str()).collect();
//! assert_eq!(texts, ["git status", "timeout 5 rm -rf /"]);
//! assert!(a.commands[1].forms.iter().any(|f| f.text == "rm -rf /"));
//! assert_eq!(a.redirects[0].target, "out");
//! assert!(a.unanalysable.is_empty());
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod braces;
pub mod entry;
pub mod grammar;
mod kinds;
pub mod options;
mod parse;
mod plain;
pub mod programs;
pub mod reads;
pub mod reason;
pub mod registry;
mod words;
mod wrappers;

pub use reason::{Nesting, Reason};
pub use registry::{entry_named, Entry, Shell, REGISTRY};
pub use wrappers::{Wrapper, HIJACKING_VARIABLES};

/// Everything found in one command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Every simple command, in source order (a substitution before the command it is part of).
    pub commands: Vec<SimpleCommand>,
    /// Every file a redirection writes.
    pub redirects: Vec<Redirect>,
    /// Every file an input redirection reads (`< file`, `0< file`, `<& file`).
    pub reads: Vec<Read>,
    /// Patterns the shell expands outside a command's words (`for f in
    /// ~/x/*`, `a=(~/x/*)`): each lists the directories it goes through.
    pub patterns: Vec<ShellWord>,
    /// What could not be analysed. Non-empty means the command cannot be allowed by rules.
    pub unanalysable: Vec<Unanalysable>,
}

impl Analysis {
    /// Whether the whole command line was analysed.
    pub fn is_complete(&self) -> bool {
        self.unanalysable.is_empty()
    }
}

/// One simple command: optional assignments, a command name and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The command as written.
    pub source: String,
    /// Its words after quote removal, joined by single spaces (`r''m  -rf` → `rm -rf`).
    pub normalized: String,
    /// Every text rules are matched against: the source, the normalized text and
    /// the forms left after stripping each wrapper in turn, without duplicates.
    pub forms: Vec<Form>,
    /// The command only hands a script to a shell (`bash -c '…'`) whose commands
    /// are listed on their own; it needs no allow rule itself.
    pub transparent: bool,
    /// Its words after quote removal: the leading `NAME=value` assignments,
    /// then the command name and its arguments.
    pub words: Vec<ShellWord>,
    /// The index in [`SimpleCommand::words`] of the name of what runs once
    /// every wrapper is stripped (`rm` in `sudo timeout 5 rm x`); `None` for a
    /// line of assignments, a wrapper that runs nothing, or one that could not
    /// be read.
    pub command_at: Option<usize>,
}

/// One word of a simple command after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellWord {
    /// The text, expansions kept as written (`$HOME/x`).
    pub text: String,
    /// The word holds a parameter, command, arithmetic or process expansion.
    pub expansion: bool,
    /// The word holds an unquoted glob or brace pattern (`*`, `?`, `[`, `{`).
    pub pattern: bool,
    /// The word is a `NAME=value` assignment before the command name.
    pub assignment: bool,
}

impl SimpleCommand {
    /// The forms an allow rule must match to allow the command: what runs once
    /// every wrapper is stripped (the innermost [`FormKind::Unwrapped`] form), or
    /// the source and normalized text when nothing was stripped. Allowing
    /// `^timeout ` therefore does not allow `timeout 5 rm x`, and a form past
    /// `sudo` never counts: `sudo git status` needs a rule naming `sudo`.
    pub fn allow_forms(&self) -> impl Iterator<Item = &Form> {
        let innermost = self
            .forms
            .iter()
            .rposition(|f| f.kind == FormKind::Unwrapped);
        self.forms
            .iter()
            .enumerate()
            .filter(move |(i, f)| match innermost {
                Some(j) => *i == j,
                None => matches!(f.kind, FormKind::Source | FormKind::Normalized),
            })
            .map(|(_, f)| f)
    }

    /// The innermost form: the command after every wrapper is stripped.
    pub fn unwrapped(&self) -> &str {
        self.forms
            .iter()
            .rev()
            .find(|f| f.kind == FormKind::Unwrapped || f.kind == FormKind::DenyOnly)
            .map_or(self.normalized.as_str(), |f| f.text.as_str())
    }
}

/// One text of a simple command that rules are matched against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    /// The text.
    pub text: String,
    /// Where it comes from, which decides whether an allow rule may match it.
    pub kind: FormKind,
}

/// Where a [`Form`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormKind {
    /// The source text.
    Source,
    /// The words after quote removal.
    Normalized,
    /// Leading assignments or a wrapper stripped; the innermost one is matched
    /// against allow rules, every one against deny rules.
    Unwrapped,
    /// Checked against deny rules only: the form left after stripping `sudo`/`doas`
    /// or an assignment to a variable such as `PATH` or `LD_PRELOAD` (see
    /// [`HIJACKING_VARIABLES`]), or the command name reduced to its last path
    /// component (`/bin/rm` → `rm`).
    DenyOnly,
    /// Checked against deny rules only: the command with its flags in one
    /// spelling (`rm -fr /` → `rm -f -r /`, see
    /// [`programs::spelled`] and [`programs::spellings`]).
    Spelling,
}

/// A file written by a redirection (`>`, `>>`, `&>`, `&>>`, `>|`, `<>`, `>&`, and `N>` forms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The redirection as written (`2>> log`).
    pub source: String,
    /// The target after quote removal, not yet canonicalized (`~` kept).
    pub target: String,
}

/// A file an input redirection reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    /// The redirection as written (`< in.txt`).
    pub source: String,
    /// The target after quote removal, expansions kept as written.
    pub target: ShellWord,
}

/// Something that could not be analysed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unanalysable {
    /// The part of the command concerned.
    pub source: String,
    /// Why it could not be analysed (`Display` says it in words).
    pub reason: Reason,
}

/// Analyses `command` as a bash command line. Never panics; what it cannot
/// understand is listed in [`Analysis::unanalysable`].
pub fn analyse(command: &str) -> Analysis {
    parse::analyse(command, true)
}

/// [`analyse`] without the shortcut for lines of plain words: every line goes
/// through tree-sitter-bash. Both give the same analysis; this one exists so
/// tests and the fuzz target can check that they do.
#[doc(hidden)]
pub fn analyse_with_parser(command: &str) -> Analysis {
    parse::analyse(command, false)
}

/// Whether [`analyse`] decides `command` without tree-sitter-bash (a line of
/// plain words and simple quoting, see the `plain` module). For tests.
#[doc(hidden)]
pub fn skips_the_parser(command: &str) -> bool {
    plain::plain_commands(command).is_some()
}

/// `word` written so that the shell reads it back as exactly one word with
/// this text: as is when every character is plain, else single-quoted.
pub fn quote_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Whether a redirection target needs no path rule (`/dev/null`, `/dev/stdout`, `/dev/stderr`).
pub fn is_harmless_target(target: &str) -> bool {
    matches!(target, "/dev/null" | "/dev/stdout" | "/dev/stderr")
}

#[cfg(test)]
mod tests;
