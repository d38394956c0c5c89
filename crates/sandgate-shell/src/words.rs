//! Quote removal: the text of a word as the shell passes it to the command.
//!
//! Expansions (`$X`, `${X}`, `$(…)`, `$((…))`, `<(…)`) are kept as written, because
//! their value is unknown before the command runs; the word remembers that it
//! holds one, so a command name built from an expansion can be refused.

use tree_sitter::Node;

use super::kinds::{kind, Kind};

/// One shell word after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Word {
    /// The text after quote removal (expansions kept as written).
    pub text: String,
    /// The word holds a parameter, command, arithmetic or process expansion.
    pub has_expansion: bool,
    /// The word holds an unquoted glob or brace pattern (`*`, `?`, `[`, `{`).
    pub has_pattern: bool,
    /// The grammar put an unquoted blank or operator inside one word, which the
    /// shell would have split (tree-sitter-bash does so for a line starting with
    /// a backslash): the parse cannot be trusted.
    pub misparsed: bool,
    /// Per byte of `text`: whether the shell takes it literally (quoted,
    /// escaped, or the text of an expansion), so that it is no brace syntax.
    pub quoted: Vec<bool>,
    /// Its braces make more words than the analysis follows: kept whole.
    pub unexpanded: Option<super::braces::TooMany>,
    /// The word was made by brace expansion: the source text is not what
    /// the program receives.
    pub braced: bool,
}

impl Word {
    /// Appends the word built from `node` to `self`.
    pub(crate) fn push_node(&mut self, node: Node<'_>, src: &[u8]) {
        let before = self.text.len();
        self.push_node_text(node, src);
        // Whatever a node added without marking it is quoted text.
        let marked = self.quoted.len();
        self.quoted.resize(self.text.len().max(marked), true);
        debug_assert!(self.quoted.len() >= before);
    }

    fn push_node_text(&mut self, node: Node<'_>, src: &[u8]) {
        match kind(node) {
            Kind::Word | Kind::Number => self.push_unquoted(text(node, src)),
            Kind::RawString => self.text.push_str(strip(text(node, src), "'", "'")),
            Kind::AnsiCString => decode_ansi_c(strip(text(node, src), "$'", "'"), &mut self.text),
            Kind::String => self.push_double_quoted(node, src),
            Kind::TranslatedString => {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    self.push_node(child, src);
                }
            }
            Kind::Concatenation | Kind::CommandName => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
                self.push_nodes(&children, src);
            }
            // A lone `$` before a string (`$"…"`) or at the end of a word is literal text.
            Kind::Dollar => {
                self.mark_quoted();
                self.text.push('$');
                self.quoted.push(false);
            }
            Kind::BraceExpression => {
                self.has_pattern = true;
                self.mark_quoted();
                self.text.push_str(text(node, src));
                self.quoted.resize(self.text.len(), false);
            }
            _ => {
                // Every expansion, and anything the grammar may add later, is kept as
                // written and counts as an expansion: its value is not known here.
                self.has_expansion = true;
                self.text.push_str(text(node, src));
            }
        }
    }

    /// Notes an expansion the grammar split over several nodes or left as
    /// text (`{x,$HOME/y}` is `{x,`, `$` and `HOME/y}`): an unquoted `$`
    /// before a name, `{` or `(` still expands.
    pub(crate) fn note_split_expansions(&mut self) {
        let b = self.text.as_bytes();
        let found = (0..b.len()).any(|i| {
            b[i] == b'$'
                && !self.quoted.get(i).copied().unwrap_or(true)
                && b.get(i + 1)
                    .is_some_and(|&n| n.is_ascii_alphanumeric() || b"_{(?#$!@*-".contains(&n))
        });
        if found {
            self.has_expansion = true;
        }
    }

    /// Appends the sibling nodes that make up one word.
    pub(crate) fn push_nodes(&mut self, nodes: &[Node<'_>], src: &[u8]) {
        for (i, node) in nodes.iter().enumerate() {
            if let Some(prev) = i.checked_sub(1).and_then(|p| nodes.get(p)) {
                // Text the grammar did not put in a node is kept (only a
                // backslash-newline between nodes, which vanishes).
                if node.start_byte() > prev.end_byte() {
                    self.mark_quoted();
                    self.push_unquoted(slice(src, prev.end_byte(), node.start_byte()));
                }
            }
            // `$"…"` is a translated string: the `$` is not part of the text.
            let translated = kind(*node) == Kind::Dollar
                && nodes
                    .get(i + 1)
                    .is_some_and(|n| kind(*n) == Kind::String && n.start_byte() == node.end_byte());
            if !translated {
                self.push_node(*node, src);
            }
        }
    }

    /// Marks the text added since the last mark as quoted.
    fn mark_quoted(&mut self) {
        let len = self.text.len();
        self.quoted.resize(len.max(self.quoted.len()), true);
    }

    /// Unquoted text: a backslash quotes the next character, a backslash-newline vanishes.
    fn push_unquoted(&mut self, raw: &str) {
        self.mark_quoted();
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('\n') | None => {}
                    Some(next) => {
                        self.text.push(next);
                        self.mark_quoted();
                    }
                },
                '*' | '?' | '[' | '{' => {
                    self.has_pattern = true;
                    self.text.push(c);
                }
                ' ' | '\t' | '\n' | ';' | '|' | '&' | '(' | ')' | '<' | '>' => {
                    self.misparsed = true;
                    self.text.push(c);
                }
                _ => self.text.push(c),
            }
            self.quoted.resize(self.text.len(), false);
        }
    }

    /// A `"…"` string: expansions inside are kept as written, the rest is unescaped.
    fn push_double_quoted(&mut self, node: Node<'_>, src: &[u8]) {
        let (start, end) = (node.start_byte(), node.end_byte());
        let mut pos = start;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if kind(child) == Kind::StringContent {
                continue;
            }
            if child.start_byte() > pos {
                push_dq_text(slice(src, pos, child.start_byte()), &mut self.text);
            }
            self.has_expansion = true;
            self.text.push_str(text(child, src));
            pos = child.end_byte();
        }
        if end > pos {
            push_dq_text(slice(src, pos, end), &mut self.text);
        }
    }
}

/// Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and newline.
/// The opening and closing quotes of the node are dropped here too.
fn push_dq_text(raw: &str, out: &mut String) {
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {}
            '\\' => match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            },
            _ => out.push(c),
        }
    }
}

/// Decodes the body of a `$'…'` string the way bash does.
fn decode_ansi_c(body: &str, out: &mut String) {
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            '0'..='7' => {
                let mut value = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                push_code(value & 0xff, out);
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut value = 0u32;
                let mut digits = 0;
                while digits < max {
                    match chars.peek().and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            value = value.wrapping_mul(16).wrapping_add(d);
                            chars.next();
                            digits += 1;
                        }
                        None => break,
                    }
                }
                if digits == 0 {
                    out.push('\\');
                    out.push(e);
                } else {
                    push_code(value, out);
                }
            }
            'c' => match chars.next() {
                Some(ctl) => push_code(u32::from(ctl) & 0x1f, out),
                None => out.push_str("\\c"),
            },
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
}

fn push_code(value: u32, out: &mut String) {
    out.push(char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER));
}

/// The source text of `node`; `""` if its bounds do not fall on character bounds.
pub(crate) fn text<'s>(node: Node<'_>, src: &'s [u8]) -> &'s str {
    slice(src, node.start_byte(), node.end_byte())
}

/// `src[start..end]` as text; an out-of-range or non-UTF-8 slice gives `""`.
pub(crate) fn slice(src: &[u8], start: usize, end: usize) -> &str {
    src.get(start..end)
        .and_then(|b| std::str::from_utf8(b).ok())
        .unwrap_or("")
}

fn strip<'a>(s: &'a str, prefix: &str, suffix: &str) -> &'a str {
    let s = s.strip_prefix(prefix).unwrap_or(s);
    s.strip_suffix(suffix).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_escapes_decode() {
        let mut out = String::new();
        decode_ansi_c(r"\x72m \101\n\u00e9\'\cA\q", &mut out);
        assert_eq!(out, "rm A\né'\u{1}\\q");
    }

    #[test]
    fn double_quoted_escapes() {
        let mut out = String::new();
        push_dq_text(r#""a\"b\$c\\d\e""#, &mut out);
        assert_eq!(out, r"a$c\d\e".replace("a$", "a\"b$"));
    }
}
