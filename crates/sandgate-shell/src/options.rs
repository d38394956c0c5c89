//! The one argv parser: reads a program's options the way the program's own
//! parser does, from the grammar in the program's entry of the registry
//! ([`super::registry`]).
//!
//! Every walker of the shell analysis that needs to know which words of a
//! command are options, which are option values and which are operands asks
//! [`parse`]. It knows the parsers programs are built on ([`ParserKind`]):
//! GNU `getopt_long` (any unique prefix of a long option, `--opt=VALUE` or
//! `--opt VALUE` for a required value, only `--opt=VALUE` / `-oVALUE` for an
//! optional one, clustered short options where a value-taking option ends the
//! cluster, `--`, options after operands), git's parse-options, Python's
//! argparse, npm's nopt, and parsers that only take exact names (clap, Go's
//! `flag`, ripgrep, jq). Written by hand: no crate parses *someone else's*
//! command line by that program's rules, which is what the gate needs.
//!
//! An abbreviation that fits several options makes a GNU program fail; the
//! parser reports every option it could mean ([`Arg::ambiguous`]), so a walker
//! that asks "is `--output` given?" hears yes: reading it wider never lets
//! through something the exact spelling would not. [`ambiguous_option`] finds
//! such a word, and the walker reports the command as one it cannot analyse
//! (the gate asks), since not every build of a program refuses it.

use super::grammar::Grammar;
pub use super::grammar::{ParserKind, ValueKind};
use super::reason::Reason;
use super::registry::{alias_of, entry_named};

/// An option, by the name its grammar gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptName {
    /// `-o`.
    Short(char),
    /// `--output` (without the dashes).
    Long(&'static str),
}

impl OptName {
    /// Whether this is the option spelled `spelled` in full (`-o`, `--output`).
    pub fn is(self, spelled: &str) -> bool {
        match self {
            OptName::Short(c) => {
                let mut chars = spelled.chars();
                chars.next() == Some('-') && chars.next() == Some(c) && chars.next().is_none()
            }
            OptName::Long(name) => spelled.strip_prefix("--") == Some(name),
        }
    }

    /// The option as written in full.
    pub fn spelled(self) -> String {
        match self {
            OptName::Short(c) => format!("-{c}"),
            OptName::Long(name) => format!("--{name}"),
        }
    }
}

/// Where an option's value is: `words[word][offset..]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Value {
    /// The index of the word that holds it.
    pub word: usize,
    /// Where in that word it starts (after `--output=`, `-o`).
    pub offset: usize,
}

impl Value {
    /// The value's text in `words`.
    pub fn text<'a>(self, words: &[&'a str]) -> &'a str {
        words
            .get(self.word)
            .and_then(|w| w.get(self.offset..))
            .unwrap_or("")
    }
}

/// One argument as the program reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// An option of the grammar.
    Opt {
        /// Its name.
        name: OptName,
        /// The word it is written in.
        word: usize,
        /// Its value, if it has one.
        value: Option<Value>,
        /// The word was an abbreviation of several options: the program
        /// rejects it, and every option it could mean is listed.
        ambiguous: bool,
    },
    /// An option the grammar does not know (the program rejects it, or the
    /// grammar is incomplete): read as a flag, so no operand is lost.
    Unknown {
        /// The word.
        word: usize,
    },
    /// An operand.
    Operand(usize),
}

impl Arg {
    /// Whether the option was an ambiguous abbreviation.
    pub fn ambiguous(&self) -> bool {
        matches!(
            self,
            Arg::Opt {
                ambiguous: true,
                ..
            }
        )
    }
}

/// A command's arguments as its program reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The arguments in order.
    pub args: Vec<Arg>,
    /// The index of the `--` that ended the options.
    pub end_of_options: Option<usize>,
}

impl Parsed {
    /// Every option given that is `spelled` (`-r`, `--recursive`).
    pub fn given<'a>(&'a self, spelled: &'a str) -> impl Iterator<Item = &'a Arg> + 'a {
        self.args
            .iter()
            .filter(move |a| matches!(a, Arg::Opt { name, .. } if name.is(spelled)))
    }

    /// Whether the option `spelled` is given. `-uu` means `-u` given twice
    /// or more (`rg -uu`).
    pub fn has(&self, spelled: &str) -> bool {
        let mut letters = spelled.chars().skip(1);
        if let Some(c) = letters.next() {
            let repeats = spelled.len() > 2
                && spelled.starts_with('-')
                && c != '-'
                && spelled[1..].chars().all(|l| l == c);
            if repeats {
                let wanted = spelled.len() - 1;
                let given = self
                    .args
                    .iter()
                    .filter(|a| matches!(a, Arg::Opt { name: OptName::Short(l), .. } if *l == c))
                    .count();
                return given >= wanted;
            }
        }
        self.given(spelled).next().is_some()
    }

    /// Whether any of the options `spelled` is given.
    pub fn has_any(&self, spelled: &[&str]) -> bool {
        spelled.iter().any(|s| self.has(s))
    }

    /// The values given to the option `spelled`.
    pub fn values<'a>(&'a self, spelled: &'a str) -> impl Iterator<Item = Value> + 'a {
        self.given(spelled).filter_map(|a| match a {
            Arg::Opt { value, .. } => *value,
            _ => None,
        })
    }

    /// The indices of the operands, in order.
    pub fn operands(&self) -> Vec<usize> {
        self.args
            .iter()
            .filter_map(|a| match a {
                Arg::Operand(i) => Some(*i),
                _ => None,
            })
            .collect()
    }

    /// The word indices that hold options or option values.
    pub fn option_words(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for a in &self.args {
            match a {
                Arg::Opt { word, value, .. } => {
                    out.push(*word);
                    if let Some(v) = value {
                        out.push(v.word);
                    }
                }
                Arg::Unknown { word } => out.push(*word),
                Arg::Operand(_) => {}
            }
        }
        out.dedup();
        out
    }
}

/// The grammar of `program` (a bare name, `/usr/bin/x` counts as `x`) and,
/// for programs with subcommands, of its subcommand `sub`.
pub fn grammar_of(program: &str, sub: Option<&str>) -> Option<&'static Grammar> {
    let name = program.rsplit('/').next().unwrap_or(program);
    let e = entry_named(alias_of(name))?;
    match sub {
        None => e.grammar.as_ref(),
        Some(s) => e.subcommands.iter().find(|g| g.subcommand == Some(s)),
    }
}

/// Whether `program` has grammars of its own per subcommand (`cargo
/// build`, `ruff check`, `uv run`): its options before the subcommand are
/// read with its own grammar, the ones after with the subcommand's.
pub fn has_subcommand_grammars(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    entry_named(alias_of(name)).is_some_and(|e| !e.subcommands.is_empty())
}

/// A grammar that knows no option: every `-x` word is an unknown flag.
pub static UNKNOWN: Grammar = Grammar {
    program: "",
    subcommand: None,
    parser: ParserKind::Gnu,
    short: "",
    long: "",
    old_style: false,
    plus: "",
};

/// Reads `words[start..]` as `grammar`'s program reads its arguments.
pub fn parse(grammar: &Grammar, words: &[&str], start: usize) -> Parsed {
    if grammar.parser.is_shell() {
        return parse_shell(grammar, words, start);
    }
    let mut out = Parsed::default();
    let mut i = start;
    let mut options = true;
    while i < words.len() {
        let t = words[i];
        if !options {
            out.args.push(Arg::Operand(i));
            i += 1;
            continue;
        }
        if t == "--" {
            out.end_of_options = Some(i);
            options = false;
            i += 1;
            continue;
        }
        if grammar.old_style && i == start && !t.starts_with('-') && !t.is_empty() {
            // `tar czf out.tgz dir`: the first word is a cluster without its
            // dash, and each letter that takes a value takes the next word.
            let mut next = i + 1;
            for c in t.chars() {
                let value = match grammar.short_kind(c) {
                    Some(ValueKind::Required) => {
                        let v = (next < words.len()).then_some(Value {
                            word: next,
                            offset: 0,
                        });
                        next += 1;
                        v
                    }
                    _ => None,
                };
                push_short(&mut out, grammar, c, i, value);
            }
            i = next;
            continue;
        }
        if let Some(long) = t.strip_prefix("--").filter(|l| !l.is_empty()) {
            i = parse_long(grammar, words, i, long, &mut out);
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            i = parse_cluster(grammar, words, i, &mut out);
            continue;
        }
        out.args.push(Arg::Operand(i));
        if grammar.parser == ParserKind::GnuStop {
            options = false;
        }
        i += 1;
    }
    out
}

/// A shell's own options ([`ParserKind::Bash`], [`ParserKind::Ash`],
/// [`ParserKind::Ksh`]) at `words[start..]`: they end at the first operand,
/// and every word from there on is one.
fn parse_shell(grammar: &Grammar, words: &[&str], start: usize) -> Parsed {
    let mut out = Parsed::default();
    let mut i = start;
    while let Some(&t) = words.get(i) {
        if t == "-" || t == "--" || (t == "+" && grammar.parser == ParserKind::Ksh) {
            out.end_of_options = Some(i);
            i += 1;
            break;
        }
        if t == "+" {
            i += 1;
            continue;
        }
        let long = match t.strip_prefix("--") {
            Some(name) => Some(name),
            // bash reads `-norc` as `--norc` when it names a long option.
            None if grammar.parser == ParserKind::Bash => t
                .strip_prefix('-')
                .filter(|name| grammar.longs().any(|(n, _)| n == *name)),
            None => None,
        };
        if let Some(name) = long {
            match grammar.longs().find(|(n, _)| *n == name) {
                Some((n, kind)) => {
                    let value =
                        (kind == ValueKind::Required && i + 1 < words.len()).then_some(Value {
                            word: i + 1,
                            offset: 0,
                        });
                    out.args.push(Arg::Opt {
                        name: OptName::Long(n),
                        word: i,
                        value,
                        ambiguous: false,
                    });
                    i += 1 + usize::from(value.is_some());
                }
                None => {
                    out.args.push(Arg::Unknown { word: i });
                    i += 1;
                }
            }
            continue;
        }
        let Some(letters) = t.strip_prefix(['-', '+']).filter(|l| !l.is_empty()) else {
            break;
        };
        let plus = t.starts_with('+');
        let mut next = i + 1;
        for (pos, c) in letters.char_indices() {
            if plus && !grammar.plus.contains(c) {
                push_short(&mut out, &UNKNOWN, c, i, None);
                continue;
            }
            let kind = grammar.short_kind(c);
            let named = match kind {
                Some(ValueKind::Required) => true,
                Some(ValueKind::UnlessOption) => {
                    words.get(next).is_some_and(|w| !w.starts_with(['-', '+']))
                }
                _ => false,
            };
            if !named {
                push_short(&mut out, grammar, c, i, None);
                continue;
            }
            let rest = 1 + pos + c.len_utf8();
            if grammar.parser == ParserKind::Ksh && rest < t.len() {
                // zsh's and mksh's `-oerrexit`: the rest of the word.
                let value = Value {
                    word: i,
                    offset: rest,
                };
                push_short(&mut out, grammar, c, i, Some(value));
                break;
            }
            // The next word not yet taken by a letter before it.
            let value = (next < words.len()).then_some(Value {
                word: next,
                offset: 0,
            });
            next += usize::from(value.is_some());
            push_short(&mut out, grammar, c, i, value);
            if grammar.parser == ParserKind::Ksh {
                break;
            }
        }
        i = next;
    }
    out.args.extend((i..words.len()).map(Arg::Operand));
    out
}

fn push_short(out: &mut Parsed, grammar: &Grammar, c: char, word: usize, value: Option<Value>) {
    if grammar.short_kind(c).is_some() {
        out.args.push(Arg::Opt {
            name: OptName::Short(c),
            word,
            value,
            ambiguous: false,
        });
    } else if !matches!(out.args.last(), Some(Arg::Unknown { word: w }) if *w == word) {
        out.args.push(Arg::Unknown { word });
    }
}

/// `--NAME`, `--NAME=VALUE` at `words[i]`; returns the next index.
fn parse_long(grammar: &Grammar, words: &[&str], i: usize, long: &str, out: &mut Parsed) -> usize {
    let (name, attached) = match long.split_once('=') {
        Some((n, _)) => (n, Some(n.len() + 3)),
        None => (long, None),
    };
    let matches = grammar.resolve_long(name);
    if matches.is_empty() {
        out.args.push(Arg::Unknown { word: i });
        return i + 1;
    }
    let ambiguous = matches.len() > 1;
    // Several options fit: the next word is a value only when each would take it.
    let kind = if matches.iter().all(|(_, k)| *k == ValueKind::Required) {
        ValueKind::Required
    } else if matches.iter().all(|(_, k)| *k == ValueKind::None) {
        ValueKind::None
    } else {
        ValueKind::Optional
    };
    let mut next = i + 1;
    let value = match (attached, kind) {
        (Some(offset), ValueKind::Required | ValueKind::Optional | ValueKind::UnlessOption) => {
            Some(Value { word: i, offset })
        }
        (Some(_), ValueKind::None) => None,
        (None, ValueKind::Required) => {
            next = i + 2;
            (i + 1 < words.len()).then_some(Value {
                word: i + 1,
                offset: 0,
            })
        }
        (None, ValueKind::Optional) if takes_next_optional(grammar, words.get(i + 1)) => {
            next = i + 2;
            Some(Value {
                word: i + 1,
                offset: 0,
            })
        }
        (None, _) => None,
    };
    for (name, _) in matches {
        out.args.push(Arg::Opt {
            name: OptName::Long(name),
            word: i,
            value,
            ambiguous,
        });
    }
    next
}

/// argparse's `nargs='?'` takes the next word unless it looks like an option.
fn takes_next_optional(grammar: &Grammar, next: Option<&&str>) -> bool {
    matches!(grammar.parser, ParserKind::Argparse | ParserKind::Nopt)
        && next.is_some_and(|n| !n.starts_with('-'))
}

/// A short cluster `-abc`, `-ovalue` at `words[i]`; returns the next index.
fn parse_cluster(grammar: &Grammar, words: &[&str], i: usize, out: &mut Parsed) -> usize {
    let t = words[i];
    for (pos, c) in t.char_indices().skip(1) {
        let rest = pos + c.len_utf8();
        let kind = grammar.short_kind(c);
        let unless_option = kind == Some(ValueKind::UnlessOption)
            && (rest < t.len() || words.get(i + 1).is_none_or(|w| w.starts_with(['-', '+'])));
        match kind {
            _ if unless_option => push_short(out, grammar, c, i, None),
            Some(ValueKind::Required | ValueKind::UnlessOption) => {
                let (value, next) = if rest < t.len() {
                    (
                        Some(Value {
                            word: i,
                            offset: rest,
                        }),
                        i + 1,
                    )
                } else if i + 1 < words.len() {
                    (
                        Some(Value {
                            word: i + 1,
                            offset: 0,
                        }),
                        i + 2,
                    )
                } else {
                    (None, i + 1)
                };
                push_short(out, grammar, c, i, value);
                return next;
            }
            Some(ValueKind::Optional) => {
                if rest < t.len() {
                    push_short(
                        out,
                        grammar,
                        c,
                        i,
                        Some(Value {
                            word: i,
                            offset: rest,
                        }),
                    );
                    return i + 1;
                }
                if takes_next_optional(grammar, words.get(i + 1)) {
                    let value = Value {
                        word: i + 1,
                        offset: 0,
                    };
                    push_short(out, grammar, c, i, Some(value));
                    return i + 2;
                }
                push_short(out, grammar, c, i, None);
                return i + 1;
            }
            _ => push_short(out, grammar, c, i, None),
        }
    }
    i + 1
}

impl Grammar {
    /// How the short option `c` takes a value; `None` when the grammar does
    /// not know it.
    pub fn short_kind(&self, c: char) -> Option<ValueKind> {
        let s = self.short;
        let pos = s
            .char_indices()
            .find(|(_, x)| *x == c && !matches!(c, ':' | ';'))?
            .0;
        let after = &s[pos + c.len_utf8()..];
        Some(if after.starts_with("::") {
            ValueKind::Optional
        } else if after.starts_with(':') {
            ValueKind::Required
        } else if after.starts_with(';') {
            ValueKind::UnlessOption
        } else {
            ValueKind::None
        })
    }

    /// Every long option of the grammar with its value kind.
    pub fn longs(&self) -> impl Iterator<Item = (&'static str, ValueKind)> {
        self.long.split_ascii_whitespace().map(|spec| {
            if let Some(n) = spec.strip_suffix("=?") {
                (n, ValueKind::Optional)
            } else if let Some(n) = spec.strip_suffix('=') {
                (n, ValueKind::Required)
            } else {
                (spec, ValueKind::None)
            }
        })
    }

    /// The long options `--name` means: the one so named, or else every one
    /// it abbreviates (when the program's parser takes abbreviations).
    pub fn resolve_long(&self, name: &str) -> Vec<(&'static str, ValueKind)> {
        if let Some(exact) = self.longs().find(|(n, _)| *n == name) {
            return vec![exact];
        }
        if name.is_empty() || !self.parser.prefixes() {
            return Vec::new();
        }
        self.longs().filter(|(n, _)| n.starts_with(name)).collect()
    }

    /// Whether the grammar names the option `spelled` (`-o`, `--output`).
    pub fn knows(&self, spelled: &str) -> bool {
        match spelled.strip_prefix("--") {
            Some(long) => self.longs().any(|(n, _)| n == long),
            None => {
                let mut chars = spelled.chars().skip(1);
                match (chars.next(), chars.next()) {
                    (Some(c), None) => self.short_kind(c).is_some(),
                    _ => false,
                }
            }
        }
    }
}

/// The words of `words[at..]` parsed by the grammar of the program
/// `words[at]` (its subcommand's, when `sub` gives the index of one); an
/// unknown program's `-x` words are all unknown flags.
pub fn parse_command(words: &[&str], at: usize, sub: Option<usize>) -> Parsed {
    let program = words[at];
    match sub {
        Some(s) => {
            let g = grammar_of(program, words.get(s).copied()).unwrap_or(&UNKNOWN);
            parse(g, words, s + 1)
        }
        None => parse(grammar_of(program, None).unwrap_or(&UNKNOWN), words, at + 1),
    }
}

/// The first long option of the command `words[at..]` written as an
/// abbreviation of several of its program's options (`grep --re`), read as
/// the program reads its words: its own options, and for a program with
/// grammars per subcommand, the subcommand's after it. `None` when there is
/// none, or when no grammar reads abbreviations.
///
/// GNU `getopt_long`, git's parse-options and argparse refuse such a word
/// and the program fails; npm's nopt, or another build of the program
/// (busybox), reads it its own way. The gate does not assume either: the
/// walker reports the command as one it cannot analyse
/// ([`Reason::AmbiguousOption`]), which is asked about, while every option
/// the word could mean is still read ([`Arg::ambiguous`]) so deny rules and
/// path checks see the widest reading.
pub fn ambiguous_option(words: &[&str], at: usize) -> Option<Reason> {
    // Only a `--NAME` word can be an abbreviation: most commands have none.
    if !words
        .get(at + 1..)?
        .iter()
        .any(|t| t.len() > 2 && t.starts_with("--"))
    {
        return None;
    }
    let program = words[at];
    let own = grammar_of(program, None).unwrap_or(&UNKNOWN);
    let parsed = parse(own, words, at + 1);
    let mut own_args: &[Arg] = &parsed.args;
    let mut sub = None;
    if has_subcommand_grammars(program) {
        // The program's own options end at the subcommand.
        let end = parsed
            .args
            .iter()
            .position(|a| matches!(a, Arg::Operand(_)))
            .unwrap_or(parsed.args.len());
        sub = match parsed.args.get(end) {
            Some(Arg::Operand(s)) => Some(*s),
            _ => None,
        };
        own_args = &parsed.args[..end];
    }
    let reason = |args: &[Arg], name: String| {
        let first = args.iter().find(|a| a.ambiguous())?;
        let Arg::Opt { word, .. } = first else {
            return None;
        };
        let candidates = args
            .iter()
            .filter_map(|a| match a {
                Arg::Opt {
                    name,
                    word: w,
                    ambiguous: true,
                    ..
                } if w == word => Some(name.spelled()),
                _ => None,
            })
            .collect();
        let written = words[*word];
        let option = written.split_once('=').map_or(written, |(o, _)| o);
        Some(Reason::AmbiguousOption {
            program: name,
            option: option.to_string(),
            candidates,
        })
    };
    let base = program.rsplit('/').next().unwrap_or(program);
    if let Some(r) = reason(own_args, base.to_string()) {
        return Some(r);
    }
    let s = sub?;
    let g = grammar_of(program, Some(words[s]))?;
    reason(&parse(g, words, s + 1).args, format!("{base} {}", words[s]))
}

#[cfg(test)]
mod tests {
    use super::super::registry::grammars;
    use super::*;

    fn split(s: &str) -> Vec<&str> {
        s.split(' ').collect()
    }

    /// `(option, value)` pairs and operands of `line`, spelled out.
    fn read(line: &str) -> (Vec<String>, Vec<String>) {
        let w = split(line);
        let p = parse_command(&w, 0, None);
        let mut opts = Vec::new();
        for a in &p.args {
            if let Arg::Opt { name, value, .. } = a {
                opts.push(match value {
                    Some(v) => format!("{}={}", name.spelled(), v.text(&w)),
                    None => name.spelled(),
                });
            }
        }
        let ops = p.operands().iter().map(|&i| w[i].to_string()).collect();
        (opts, ops)
    }

    #[test]
    fn gnu_long_options() {
        assert_eq!(read("sort --o=F x").0, ["--output=F"]);
        assert_eq!(
            read("sort --ou F x"),
            (vec!["--output=F".into()], vec!["x".into()])
        );
        assert_eq!(read("grep --recur KEY ~").0, ["--recursive"]);
        assert_eq!(read("grep --dir=rec KEY ~").0, ["--directories=rec"]);
        assert_eq!(read("wc --files0-f=-").0, ["--files0-from=-"]);
        assert_eq!(read("du --al ~").0, ["--all"]);
        // An exact name wins over the longer names it abbreviates.
        assert_eq!(read("rm --dir x").0, ["--dir"]);
        // `--re` fits `--recursive` and `--regexp`: both are reported.
        let (opts, ops) = read("grep --re KEY ~");
        assert!(
            opts.contains(&"--recursive".to_string()) && opts.contains(&"--regexp".to_string())
        );
        assert_eq!(ops, ["KEY", "~"]);
        assert!(parse_command(&split("grep --re KEY"), 0, None).args[0].ambiguous());
    }

    #[test]
    fn optional_values_are_only_attached() {
        assert_eq!(
            read("cp --preserve a b"),
            (vec!["--preserve".into()], vec!["a".into(), "b".into()])
        );
        assert_eq!(read("cp --backup=numbered a b").0, ["--backup=numbered"]);
        assert_eq!(read("cp --back a b").1, ["a", "b"]);
        assert_eq!(read("sed -i.bak s/a/b/ f").0, ["-i=.bak"]);
        assert_eq!(read("sed -i s/a/b/ f").1, ["s/a/b/", "f"]);
        assert_eq!(read("rm --interactive x").1, ["x"]);
        assert_eq!(read("tee --output-error x").1, ["x"]);
    }

    #[test]
    fn clusters_and_the_end_of_options() {
        assert_eq!(read("sort -ro F x").0, ["-r", "-o=F"]);
        assert_eq!(read("sort -roF x").0, ["-r", "-o=F"]);
        assert_eq!(read("cp -t D a b").1, ["a", "b"]);
        assert_eq!(read("rm -- -rf").1, ["-rf"]);
        // Options after operands (GNU permutation).
        assert_eq!(
            read("cp a b --target-directory D").0,
            ["--target-directory=D"]
        );
        // `env` stops at the command it runs.
        assert_eq!(read("env -i ls -l").1, ["ls", "-l"]);
        assert_eq!(read("tar czf out.tgz dir").0, ["-c", "-z", "-f=out.tgz"]);
        assert_eq!(read("tar czf out.tgz dir").1, ["dir"]);
    }

    /// `x;` takes the next word unless it starts with `-` or `+`, in a
    /// shell's loop (bash's `set -o -o NAME`) and in getopt's alike.
    #[test]
    fn a_value_unless_the_next_word_is_an_option() {
        for parser in [ParserKind::Ash, ParserKind::Gnu] {
            let g = Grammar {
                program: "x",
                subcommand: None,
                parser,
                short: "o;e",
                long: "",
                old_style: false,
                plus: "o",
            };
            let texts = |line: &str| {
                let w = split(line);
                let p = parse(&g, &w, 1);
                let values: Vec<String> = p.values("-o").map(|v| v.text(&w).to_string()).collect();
                let ops: Vec<String> = p.operands().iter().map(|&i| w[i].to_string()).collect();
                (values, ops, p.has("-e"))
            };
            let none: Vec<String> = Vec::new();
            assert_eq!(texts("x -o n"), (vec!["n".into()], none.clone(), false));
            assert_eq!(texts("x -o -o n"), (vec!["n".into()], none.clone(), false));
            assert_eq!(texts("x -o -e n"), (none.clone(), vec!["n".into()], true));
            // A shell's letter takes the next word, getopt's the rest of its own.
            let cluster = texts("x -oe n");
            if parser == ParserKind::Ash {
                assert_eq!(cluster, (vec!["n".into()], none.clone(), true));
            } else {
                assert_eq!(cluster, (none.clone(), vec!["n".into()], true));
            }
            assert_eq!(texts("x -o -- n"), (none.clone(), vec!["n".into()], false));
        }
    }

    /// Every optional-value option of every program read by getopt_long or
    /// parse-options: bare, it takes no word; attached, its value.
    #[test]
    fn every_optional_value_is_only_attached() {
        let mut count = 0;
        for g in grammars().filter(|g| matches!(g.parser, ParserKind::Gnu | ParserKind::Git)) {
            let start = usize::from(g.subcommand.is_some());
            for (name, kind) in g.longs() {
                if kind != ValueKind::Optional {
                    continue;
                }
                count += 1;
                let bare = format!("--{name}");
                let mut words = vec![g.program];
                words.extend(g.subcommand);
                words.extend([bare.as_str(), "X", "Y"]);
                let p = parse(g, &words, start + 1);
                let ops: Vec<&str> = p.operands().iter().map(|&i| words[i]).collect();
                assert_eq!(ops, ["X", "Y"], "{words:?}");
                assert_eq!(p.values(&bare).count(), 0, "{words:?}");
                let attached = format!("--{name}=v");
                let last = words.len() - 3;
                words[last] = &attached;
                let p = parse(g, &words, start + 1);
                let v: Vec<&str> = p.values(&bare).map(|v| v.text(&words)).collect();
                assert_eq!(v, ["v"], "{words:?}");
                assert_eq!(p.operands().len(), 2, "{words:?}");
            }
            for c in g.short.chars().filter(|c| *c != ':') {
                if g.short_kind(c) != Some(ValueKind::Optional) {
                    continue;
                }
                count += 1;
                let bare = format!("-{c}");
                let attached = format!("-{c}v");
                let mut words = vec![g.program];
                words.extend(g.subcommand);
                words.extend([bare.as_str(), "X"]);
                let p = parse(g, &words, start + 1);
                assert_eq!(p.operands().len(), 1, "{words:?}");
                let last = words.len() - 2;
                words[last] = &attached;
                let p = parse(g, &words, start + 1);
                let v: Vec<&str> = p.values(&bare).map(|v| v.text(&words)).collect();
                assert_eq!(v, ["v"], "{words:?}");
            }
        }
        assert!(count >= 100, "{count} optional-value options");
    }

    /// Every long option of every program whose parser reads abbreviations
    /// is read from its shortest unique prefix, and from no prefix that
    /// fits another option too.
    #[test]
    fn every_long_option_is_read_from_its_abbreviations() {
        let mut count = 0;
        for g in grammars().filter(|g| g.parser.prefixes()) {
            for (name, _) in g.longs() {
                for n in 1..=name.len() {
                    let m = g.resolve_long(&name[..n]);
                    let others = g
                        .longs()
                        .filter(|(o, _)| *o != name && o.starts_with(&name[..n]))
                        .count();
                    let exact = g.longs().any(|(o, _)| o == &name[..n]);
                    if exact {
                        // An option named so wins over the longer ones.
                        assert_eq!(m.len(), 1, "{} --{}", g.program, &name[..n]);
                    } else if others == 0 || n == name.len() {
                        assert!(
                            m.iter().any(|(o, _)| *o == name),
                            "{} --{}",
                            g.program,
                            &name[..n]
                        );
                        if n < name.len() {
                            assert_eq!(m.len(), 1, "{} --{}", g.program, &name[..n]);
                            count += 1;
                        }
                    } else {
                        assert_eq!(m.len(), others + 1, "{} --{}", g.program, &name[..n]);
                    }
                }
            }
        }
        assert!(count >= 1000, "{count} abbreviations");
    }
}
