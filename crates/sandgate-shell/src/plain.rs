//! The common case without the parser: a line of plain words joined by `;`,
//! `&&`, `||` or `|` (`git status && ls -la 'my dir' | grep -n "foo bar"`).
//!
//! A plain line has no expansion, pattern, comment or keyword. Its words may
//! hold simple quoting, whose removal is unambiguous: single quotes, double
//! quotes without `$`, `` ` `` or an escaping backslash, and a backslash before
//! a printable character outside quotes. A command may end in redirections that
//! write such a word (`>`, `>>`, `N>`, `N>>`) or copy a descriptor (`N>&M`).
//! Splitting such a line by hand gives exactly what the parser would (a
//! property test and the fuzz target check it); anything else returns `None`
//! and goes to tree-sitter-bash.

use std::borrow::Cow;

use crate::registry::{entry_of, Special};

/// One simple command of a plain line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PlainCommand<'a> {
    /// The command as written, without surrounding blanks.
    pub source: &'a str,
    /// Its words after quote removal.
    pub words: Vec<Cow<'a, str>>,
    /// The files its trailing redirections write.
    pub writes: Vec<Write<'a>>,
}

/// A file a redirection writes: (the redirection as written, the target after quote removal).
pub(super) type Write<'a> = (&'a str, Cow<'a, str>);

/// Bytes an unquoted word may hold.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_-./=:,+@%".contains(&b)
}

/// Words that make a line more than a list of simple commands.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "function", "time", "coproc", "in",
];

/// Whether tree-sitter-bash reads the operands of `program` as names.
fn declares_names(program: &str) -> bool {
    entry_of(program).is_some_and(|e| e.has(Special::DeclaresNames))
}

/// Whether `raw`, an argument of a declaration as written, reads the same
/// to tree-sitter-bash as to the shell: an option of letters, digits, `-`
/// and `_`, a number, a name, or a name given a value (`NAME=…`, `NAME+=…`).
fn declares_plainly(raw: &str) -> bool {
    let name_end = raw
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
        .unwrap_or(raw.len());
    let (name, rest) = raw.split_at(name_end);
    let is_name = name.bytes().next().is_some_and(|b| !b.is_ascii_digit());
    (raw.starts_with('-')
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
        || (!raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()))
        || (is_name && (rest.is_empty() || rest.starts_with('=') || rest.starts_with("+=")))
}

/// The simple commands of a plain line, or `None` when the line needs the parser.
pub(super) fn plain_commands(line: &str) -> Option<Vec<PlainCommand<'_>>> {
    let bytes = line.as_bytes();
    let mut commands = Vec::new();
    let mut words: Vec<Cow<'_, str>> = Vec::new();
    let mut writes = Vec::new();
    // Whether the current command has had a redirection (`2>&1` writes nothing).
    let mut redirected = false;
    let mut start = None;
    let mut last_end = 0;
    let mut i = 0;
    loop {
        let op_len = match bytes.get(i) {
            None => 0,
            Some(b';') => 1,
            Some(b'&') if bytes.get(i + 1) == Some(&b'&') => 2,
            Some(b'|') if bytes.get(i + 1) == Some(&b'|') => 2,
            Some(b'|') if bytes.get(i + 1) != Some(&b'&') => 1,
            Some(b' ' | b'\t') => {
                i += 1;
                continue;
            }
            Some(b'0'..=b'9' | b'>') if !words.is_empty() && is_redirection(&bytes[i..]) => {
                let (write, end) = redirection_at(line, i)?;
                writes.extend(write);
                redirected = true;
                i = end;
                continue;
            }
            // A word after a redirection (`echo >out hi`, `echo 2>&1 hi`) is
            // left to the grammar.
            Some(_) if redirected => return None,
            Some(_) => {
                let (word, end) = word_at(line, i, words.is_empty())?;
                // tree-sitter-bash drops a lone `-` in some places (before a
                // redirection): the parser decides those lines.
                if word == "-" {
                    return None;
                }
                // tree-sitter-bash reads a declaration's names as names: one
                // that is not (`export s%`) is a syntax error to it.
                if words.first().is_some_and(|w| declares_names(w))
                    && !declares_plainly(&line[i..end])
                {
                    return None;
                }
                start.get_or_insert(i);
                words.push(word);
                i = end;
                last_end = end;
                continue;
            }
        };
        // An empty command is a syntax error.
        let from = start.take()?;
        let first = words.first()?;
        if RESERVED.contains(&first.as_ref()) {
            return None;
        }
        // The last word ends the source, not the last non-blank (`a\ `).
        let source = &line[from..last_end];
        commands.push(PlainCommand {
            source,
            words: std::mem::take(&mut words),
            writes: std::mem::take(&mut writes),
        });
        redirected = false;
        if op_len == 0 {
            return Some(commands);
        }
        i += op_len;
    }
}

/// Whether `rest` starts with a redirection: `>` after optional descriptor digits.
fn is_redirection(rest: &[u8]) -> bool {
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    rest.get(digits) == Some(&b'>')
}

/// A redirection after the command's words (see [`is_redirection`]): `>file`,
/// `>> file`, `2>file` (one write each) or `2>&1` (a descriptor copy, no write).
/// Returns the write, if any, and where the redirection ends; `None` for any
/// other form (`&>`, `>|`, `>&file`, `<`, …), which goes to the parser.
fn redirection_at(line: &str, at: usize) -> Option<(Option<Write<'_>>, usize)> {
    let bytes = line.as_bytes();
    // tree-sitter-bash reads a descriptor starting with `0` (`0>x`) as an argument.
    if bytes[at] == b'0' {
        return None;
    }
    let mut i = at
        + bytes[at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
    i += 1; // `>`
    match bytes.get(i) {
        Some(b'>') => i += 1,
        Some(b'&') => {
            let digits = bytes[i + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            let end = i + 1 + digits;
            if digits == 0 || !ends_word(bytes.get(end)) {
                return None;
            }
            return Some((None, end));
        }
        _ => {}
    }
    while matches!(bytes.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    if ends_word(bytes.get(i)) {
        return None;
    }
    let (target, end) = word_at(line, i, false)?;
    Some((Some((&line[at..end], target)), end))
}

/// The word starting at byte `at` after quote removal, and where it ends; `None`
/// when it holds anything but plain bytes and simple quoting. A command name
/// (`first`) must be a plain unquoted word starting with a usual character and
/// holding no `=` (an assignment); anything else there goes to the grammar.
fn word_at(line: &str, at: usize, first: bool) -> Option<(Cow<'_, str>, usize)> {
    let bytes = line.as_bytes();
    let mut end = at;
    while bytes.get(end).copied().is_some_and(is_word_byte) {
        end += 1;
    }
    // A lone `&` or `|&` is no word; tree-sitter-bash misreads a word starting
    // with `=` (`==`).
    if matches!(bytes.get(at), None | Some(b'=' | b'&' | b'|')) {
        return None;
    }
    if first {
        let name = &bytes[at..end];
        let usual = name
            .first()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"_./".contains(b));
        // tree-sitter-bash reads `a%` or `a+` alone as a parse error.
        let unusual = |b: &u8| b"=+@%".contains(b);
        if !usual || name.iter().any(unusual) || !ends_word(bytes.get(end)) {
            return None;
        }
    }
    if ends_word(bytes.get(end)) {
        return Some((Cow::Borrowed(&line[at..end]), end));
    }
    // Quoting: build the text.
    let mut text = String::from(&line[at..end]);
    let mut i = end;
    // Whether the text before `i` ends in unquoted characters: tree-sitter-bash
    // misreads a backslash that starts a word or follows a quote (`\ `, `''\ `).
    let mut bare = end > at;
    loop {
        match bytes.get(i) {
            Some(&b) if is_word_byte(b) => {
                text.push(char::from(b));
                i += 1;
                bare = true;
                continue;
            }
            Some(b'\'') => {
                let len = bytes[i + 1..].iter().position(|&b| b == b'\'')?;
                let body = &bytes[i + 1..i + 1 + len];
                if !body.iter().all(|&b| is_printable(b)) {
                    return None;
                }
                text.push_str(&line[i + 1..i + 1 + len]);
                i += len + 2;
            }
            Some(b'"') => {
                let len = bytes[i + 1..].iter().position(|&b| b == b'"')?;
                let body = &bytes[i + 1..i + 1 + len];
                let plain = body.iter().enumerate().all(|(j, &b)| {
                    is_printable(b)
                        && !matches!(b, b'$' | b'`')
                        // A backslash is literal unless it escapes `\` or `"` (the
                        // latter ends the search above early, so it is caught too).
                        && !(b == b'\\' && matches!(body.get(j + 1), Some(b'\\') | None))
                });
                if !plain {
                    return None;
                }
                text.push_str(&line[i + 1..i + 1 + len]);
                i += len + 2;
            }
            Some(b'\\') => {
                let next = *bytes.get(i + 1)?;
                if !is_printable(next) || !bare {
                    return None;
                }
                text.push(char::from(next));
                i += 2;
                continue;
            }
            next if ends_word(next) => return Some((Cow::Owned(text), i)),
            _ => return None,
        }
        bare = false;
    }
}

/// Whether `b` (or the end of the line) ends a word.
fn ends_word(b: Option<&u8>) -> bool {
    matches!(b, None | Some(b' ' | b'\t' | b';' | b'&' | b'|'))
}

/// Printable ASCII, the space included.
fn is_printable(b: u8) -> bool {
    (0x20..0x7f).contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Option<Vec<(&str, Vec<String>)>> {
        plain_commands(line).map(|cs| {
            cs.into_iter()
                .map(|c| (c.source, c.words.into_iter().map(Cow::into_owned).collect()))
                .collect()
        })
    }

    fn sources(line: &str) -> Option<Vec<&str>> {
        plain_commands(line).map(|cs| cs.into_iter().map(|c| c.source).collect())
    }

    #[test]
    fn plain_lines_split() {
        assert_eq!(
            sources("git status && ls  -la | grep foo"),
            Some(vec!["git status", "ls  -la", "grep foo"])
        );
        assert_eq!(sources("a;b||c"), Some(vec!["a", "b", "c"]));
        assert_eq!(sources("  cargo test  "), Some(vec!["cargo test"]));
    }

    #[test]
    fn simple_quoting_is_removed() {
        assert_eq!(
            split("ls -la 'my dir' | grep -n \"foo bar\""),
            Some(vec![
                (
                    "ls -la 'my dir'",
                    vec!["ls".into(), "-la".into(), "my dir".into()]
                ),
                (
                    "grep -n \"foo bar\"",
                    vec!["grep".into(), "-n".into(), "foo bar".into()]
                ),
            ])
        );
        assert_eq!(
            split(r#"grep a\ b'$x'"c\|d"'' e"#),
            Some(vec![(
                r#"grep a\ b'$x'"c\|d"'' e"#,
                vec!["grep".into(), r"a b$xc\|d".into(), "e".into()]
            )])
        );
    }

    #[test]
    fn trailing_redirections_are_split_off() {
        let cs = plain_commands("cargo test 2>&1 | tail -n 3 >> 'my log' 2>/dev/null").unwrap();
        assert_eq!(cs[0].source, "cargo test");
        assert!(cs[0].writes.is_empty());
        assert_eq!(cs[1].source, "tail -n 3");
        let writes: Vec<(&str, &str)> =
            cs[1].writes.iter().map(|(s, t)| (*s, t.as_ref())).collect();
        assert_eq!(
            writes,
            [(">> 'my log'", "my log"), ("2>/dev/null", "/dev/null")]
        );
    }

    #[test]
    fn anything_else_needs_the_parser() {
        for line in [
            // A word after a descriptor copy, as after a write (found by the fuzz target).
            "git log 1>&1 r --format=%H",
            "echo >out hi",
            "'echo' a",
            "\"echo\" a",
            "e'cho' a",
            "\\echo a",
            "echo \\ a",
            "echo \\x",
            "echo $HOME",
            "echo \"$HOME\"",
            "echo \"a\\\"b\"",
            "echo \"a\\\\b\"",
            "echo \"a`b`\"",
            "echo `x`",
            "echo 'a",
            "echo \"a",
            "echo 'a\nb'",
            "echo a\\",
            "a < b",
            "a & b",
            "a |& b",
            "(a)",
            "{ a; }",
            "echo *",
            "echo ~",
            "a # c",
            "a\nb",
            "X=1 a",
            "if a",
            "a;",
            "; a",
            "a && && b",
            "",
            "   ",
            "! a",
            "time a",
            "echo é",
            "echo 'é'",
            "echo [x]",
            "echo a?",
            "echo ==",
            "echo a >",
            "echo a > b c",
            "echo a >| b",
            "echo a &> b",
            "echo a >& b",
            "echo a 2>&1x",
            "echo a >>> b",
            "echo a > ~/b",
            "echo a < b",
            "> b echo a",
            "echo a2>b",
        ] {
            assert_eq!(sources(line), None, "{line:?}");
        }
    }
}
