//! What a rule can match, decided exactly where it can be decided: command
//! regexes that can never match a command, rules that match every command or
//! every path, and one rule covering everything another matches. `sandgate
//! policy lint` reports these; `sandgate policy allow` refuses the worst.
//!
//! A regex is judged on its syntax tree (`regex-syntax`'s `Hir`, the parser
//! the `regex` crate itself uses), not on its spelling: an empty class
//! (`[^\s\S]`) or text that must come before the start (`a^b`) or after the
//! end (`^ls$x`) of the command is impossible, and a match that needs the
//! command's start after its end (`$^`) or between nothing (`^$`) needs an
//! empty command, which is never checked. Coverage is decided for the forms
//! where it is exact: a glob below a literal directory (`/srv/**`) against
//! globs whose literal part lies below it, an exact path against any glob,
//! and `^literal` prefixes (plain, with a ` ( |$)` or `(\s|$)` word boundary,
//! or exact with `$`) against regexes that begin with `^literal`. Other
//! overlaps are not decided, and not reported.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use regex::Regex;
use regex_syntax::hir::{Hir, HirKind, Look};

/// Why a command regex can never match a command, if it cannot.
pub fn never_matches(pattern: &str) -> Option<&'static str> {
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    impossible(&hir)
}

/// The reason `hir` matches no non-empty text, if it matches none.
fn impossible(hir: &Hir) -> Option<&'static str> {
    if hir.properties().minimum_len().is_none() {
        return Some("it holds a class or alternation that matches no character");
    }
    match hir.kind() {
        HirKind::Capture(c) => impossible(&c.sub),
        HirKind::Repetition(r) if r.min > 0 => impossible(&r.sub),
        HirKind::Alternation(alts) => {
            let mut why = None;
            for alt in alts {
                why = Some(impossible(alt)?);
            }
            why
        }
        HirKind::Concat(parts) => {
            if let Some(why) = parts.iter().find_map(impossible) {
                return Some(why);
            }
            impossible_concat(parts)
        }
        _ => None,
    }
}

/// Anchors in a concatenation that no non-empty text can satisfy.
fn impossible_concat(parts: &[Hir]) -> Option<&'static str> {
    let min = |range: &[Hir]| -> usize {
        range
            .iter()
            .map(|h| h.properties().minimum_len().unwrap_or(0))
            .sum()
    };
    let max_is_zero = |range: &[Hir]| {
        range
            .iter()
            .all(|h| h.properties().maximum_len() == Some(0))
    };
    let starts = |h: &Hir| h.properties().look_set_prefix().contains(Look::Start);
    let ends = |h: &Hir| h.properties().look_set_suffix().contains(Look::End);
    for (i, part) in parts.iter().enumerate() {
        if starts(part) && min(&parts[..i]) > 0 {
            return Some("it needs text before the start of the command (`^` or `\\A` after text)");
        }
        if ends(part) && min(&parts[i + 1..]) > 0 {
            return Some("it needs text after the end of the command (`$` or `\\z` before text)");
        }
        if ends(part) && parts[i + 1..].iter().any(starts) {
            return Some("it needs the start of the command after its end (`$^`), which only an empty command has");
        }
        if starts(part) {
            for j in i..parts.len() {
                if ends(&parts[j]) && max_is_zero(&parts[i..=j]) {
                    return Some(
                        "it matches only an empty command (`^$`), and no command is empty",
                    );
                }
            }
        }
    }
    None
}

/// Unlike commands: a regex that matches each of them matches every command
/// (a command holds at least one character that is not white space: a blank
/// one is denied before any rule is asked).
const EVERY_COMMAND_PROBES: &[&str] = &[
    "x",
    "rm -rf ~",
    "-",
    " ",
    "\u{1}sandgate probe\u{1}",
    "é",
    "a\nb",
    "\nx",
    "\tx",
    "x\n",
    "git status",
];

/// Whether `re` matches every command: it matches each of a set of commands
/// that have nothing in common (every one-character command of printable
/// ASCII, and a few longer ones), as `.*`, `^`, `$` or `.` do. A regex that
/// only matches the empty string (`$^`, `^$`) does not.
pub fn matches_every_command(re: &Regex) -> bool {
    let mut one = [0u8; 4];
    EVERY_COMMAND_PROBES.iter().all(|p| re.is_match(p))
        && (' '..='~').all(|c| re.is_match(c.encode_utf8(&mut one)))
}

/// What `glob` (absolute) lets through that is far more than a project: the
/// whole disk or the whole home directory, with the path that shows it.
pub fn whole_tree(glob: &str, home: &Path) -> Option<(&'static str, PathBuf)> {
    let variants: Vec<GlobMatcher> = glob_variants(glob)
        .iter()
        .filter_map(|g| matcher(g))
        .collect();
    let matches = |p: &Path| variants.iter().any(|m| m.is_match(p));
    let probes = [
        (PathBuf::from("/etc/passwd"), "the whole disk"),
        (PathBuf::from("/usr/bin/env"), "the whole disk"),
        (home.join(".bashrc"), "the whole home directory"),
        (
            home.join(".config/sandgate-lint-probe"),
            "the whole home directory",
        ),
    ];
    probes
        .into_iter()
        .find(|(p, _)| matches(p))
        .map(|(p, what)| (what, p))
}

/// A glob and, for `dir/**`, `dir` itself (which it also matches).
pub(crate) fn glob_variants(glob: &str) -> Vec<String> {
    let mut out = vec![glob.to_string()];
    if let Some(d) = glob.strip_suffix("/**") {
        out.push(if d.is_empty() { "/".into() } else { d.into() });
    }
    out
}

/// A glob matcher as the engine builds it (`*` never crosses `/`).
pub(crate) fn matcher(glob: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// The literal directory part of an absolute glob (every component before the
/// first pattern), and whether the whole glob is literal.
pub(crate) fn literal_prefix(glob: &str) -> (String, bool) {
    let mut prefix = String::new();
    let mut components = glob.split('/').filter(|c| !c.is_empty()).peekable();
    while let Some(c) = components.next() {
        if c.contains(['*', '?', '[', ']', '{', '}', '\\']) {
            return (
                if prefix.is_empty() {
                    "/".into()
                } else {
                    prefix
                },
                false,
            );
        }
        prefix.push('/');
        prefix.push_str(c);
        if components.peek().is_none() {
            return (prefix, true);
        }
    }
    ("/".into(), true)
}

/// Whether the absolute glob `broad` matches every path the absolute glob
/// `narrow` matches, when that can be decided: `broad` is a literal
/// directory's `dir/**` and `narrow`'s literal part lies in it, or `narrow`
/// is one literal path that `broad` matches. `false` when not decided.
pub fn glob_covers(broad: &str, narrow: &str) -> bool {
    let (prefix, exact) = literal_prefix(narrow);
    if exact {
        let p = Path::new(&prefix);
        if glob_variants(broad)
            .iter()
            .filter_map(|g| matcher(g))
            .any(|m| m.is_match(p))
        {
            return true;
        }
    }
    let Some(dir) = broad.strip_suffix("/**") else {
        return false;
    };
    if dir.is_empty() {
        return true;
    }
    let (dir_prefix, dir_exact) = literal_prefix(dir);
    dir_exact && (prefix == dir_prefix || prefix.starts_with(&format!("{dir_prefix}/")))
}

/// A command regex of the form `^literal…`, as far as coverage needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandForm {
    /// The literal every match starts with.
    pub literal: String,
    /// What follows the literal.
    pub tail: Tail,
}

/// What follows the literal of a [`CommandForm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// `^literal` and nothing more: a plain prefix.
    Prefix,
    /// `^literal$`: exactly that command.
    Exact,
    /// `^literal( |$)`: the literal as a whole word (then a space or the end).
    Space,
    /// `^literal(\s|$)`: then any white space or the end.
    Whitespace,
    /// Anything else: only the literal start is known.
    Other,
}

impl CommandForm {
    /// The form of `pattern`, if it starts with `^` and a literal.
    pub fn of(pattern: &str) -> Option<CommandForm> {
        let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
        let HirKind::Concat(parts) = hir.kind() else {
            return None;
        };
        let [first, second, rest @ ..] = parts.as_slice() else {
            return None;
        };
        if !matches!(first.kind(), HirKind::Look(Look::Start)) {
            return None;
        }
        let HirKind::Literal(lit) = second.kind() else {
            return None;
        };
        let literal = String::from_utf8(lit.0.to_vec()).ok()?;
        let tail = match rest {
            [] => Tail::Prefix,
            [end] if matches!(end.kind(), HirKind::Look(Look::End)) => Tail::Exact,
            [boundary] => boundary_kind(boundary).unwrap_or(Tail::Other),
            _ => Tail::Other,
        };
        Some(CommandForm { literal, tail })
    }

    /// Whether every command `narrow` matches is matched by `self` (decided
    /// only from the forms; `false` when not decided).
    pub fn covers(&self, narrow: &CommandForm) -> bool {
        let p = self.literal.as_str();
        let l = narrow.literal.as_str();
        match self.tail {
            Tail::Prefix => l.starts_with(p),
            Tail::Exact => l == p && narrow.tail == Tail::Exact,
            Tail::Space | Tail::Whitespace => {
                let word_after = l
                    .strip_prefix(p)
                    .and_then(|after| after.chars().next())
                    .is_some_and(|c| {
                        c == ' ' || (self.tail == Tail::Whitespace && c.is_whitespace())
                    });
                word_after
                    || (l == p
                        && (narrow.tail == Tail::Exact
                            || narrow.tail == self.tail
                            || (narrow.tail == Tail::Space && self.tail == Tail::Whitespace)))
            }
            Tail::Other => false,
        }
    }
}

/// `( |$)` or `(\s|$)`, possibly in a group.
fn boundary_kind(hir: &Hir) -> Option<Tail> {
    let hir = match hir.kind() {
        HirKind::Capture(c) => &*c.sub,
        _ => hir,
    };
    let HirKind::Alternation(alts) = hir.kind() else {
        return None;
    };
    let [word, end] = alts.as_slice() else {
        return None;
    };
    if !matches!(end.kind(), HirKind::Look(Look::End)) {
        return None;
    }
    match word.kind() {
        HirKind::Literal(l) if &*l.0 == b" " => Some(Tail::Space),
        HirKind::Class(_) => {
            let ws = regex_syntax::Parser::new().parse(r"\s").ok()?;
            (word == &ws).then_some(Tail::Whitespace)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_regexes_are_found_by_their_structure() {
        for never in [
            "a^b",
            "^ls$x",
            "^[^\\s\\S]",
            "$^",
            "^$",
            "x\\Ay",
            "(a^b|c\\zd)",
            "^git (status|[^\\s\\S])$x",
            "[a&&b]",
            "\\bfoo$bar",
            "^(ls$)+x",
            "ls(\\z)(x)",
        ] {
            assert!(never_matches(never).is_some(), "{never} can never match");
        }
        for can in [
            "^ls$",
            "^git( |$)",
            "$",
            "^",
            ".*",
            "(?m)a^b",
            "a^?b",
            "(a|^b)",
            "(^)*x",
            "^$|x",
            "\\|\\s*sh\\b",
            "ls$|^cat",
            "",
        ] {
            assert_eq!(never_matches(can), None, "{can} can match");
        }
        // The reason says what is impossible.
        assert!(never_matches("$^").unwrap().contains("empty command"));
        assert!(never_matches("^ls$x").unwrap().contains("after the end"));
        assert!(never_matches("a^b").unwrap().contains("before the start"));
        assert!(never_matches("^[^\\s\\S]")
            .unwrap()
            .contains("no character"));
    }

    #[test]
    fn every_command_means_every_command() {
        for every in [".*", "^", "$", "", "(?s).?", "^|x", "\\A", "."] {
            assert!(
                matches_every_command(&Regex::new(every).unwrap()),
                "{every}"
            );
        }
        for some in ["$^", "^$", "^git", "\\b", "^[^z]", "x"] {
            assert!(!matches_every_command(&Regex::new(some).unwrap()), "{some}");
        }
    }

    #[test]
    fn command_forms_cover_exactly() {
        let form = |p: &str| CommandForm::of(p).unwrap_or_else(|| panic!("{p}"));
        let covers = |b: &str, a: &str| form(b).covers(&form(a));
        assert!(covers("^git", "^gitk$"));
        assert!(covers("^git", "^git status( |$)"));
        assert!(covers("^git( |$)", "^git status$"));
        assert!(covers("^git( |$)", "^git$"));
        assert!(covers("^git( |$)", "^git( |$)"));
        assert!(covers("^git(\\s|$)", "^git( |$)"));
        assert!(covers("^git(\\s|$)", "^git\tx"));
        assert!(covers("^npm run test(\\s|$)", "^npm run test --watch$"));
        assert!(!covers("^git( |$)", "^gitk$"));
        assert!(!covers("^git( |$)", "^git(\\s|$)"));
        assert!(!covers("^git( |$)", "^git"));
        assert!(!covers("^git status$", "^git status --short$"));
        assert!(!covers("^git$", "^git( |$)"));
        assert_eq!(form("^ls -la .*").tail, Tail::Other);
        assert!(!covers("^ls -la .*", "^ls -la x$"));
        assert!(CommandForm::of("git status").is_none());
        assert!(CommandForm::of("(?i)^git").is_none());
    }

    #[test]
    fn globs_cover_what_lies_below_their_literal_directory() {
        assert!(glob_covers("/srv/**", "/srv/data/**"));
        assert!(glob_covers("/srv/**", "/srv/x"));
        assert!(glob_covers("/srv/**", "/srv"));
        assert!(glob_covers("/srv/**", "/srv/*.txt"));
        assert!(glob_covers("/**", "/anything/**"));
        assert!(glob_covers("/home/me/*.md", "/home/me/a.md"));
        assert!(!glob_covers("/srv/**", "/srvx/a"));
        assert!(!glob_covers("/srv/*", "/srv/a/b"));
        assert!(!glob_covers("/srv/*.txt", "/srv/*"));
        assert!(!glob_covers("/s*/**", "/srv/x/**"));
    }
}
