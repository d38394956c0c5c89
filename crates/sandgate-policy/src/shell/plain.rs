//! The common case without the parser: a line of plain words joined by `;`,
//! `&&`, `||` or `|` (`git status && ls -la | grep foo`). Such a line has no
//! quoting, expansion, redirection, pattern, comment or keyword, so splitting
//! it by hand gives exactly what the parser would; anything else returns
//! `None` and goes to tree-sitter-bash.

/// Bytes a plain line may hold, besides the operators and blanks.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_-./=:,".contains(&b)
}

/// Words that make a line more than a list of simple commands.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "function", "time", "coproc", "in",
];

/// The simple commands of a plain line, each as its source text, or `None`
/// when the line needs the parser.
pub(super) fn plain_commands(line: &str) -> Option<Vec<&str>> {
    let bytes = line.as_bytes();
    let mut commands = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i <= bytes.len() {
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
            // tree-sitter-bash misreads a word starting with `=` (`==`).
            Some(b'=') if i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b';' | b'&' | b'|') => {
                return None;
            }
            Some(&b) if is_word_byte(b) => {
                i += 1;
                continue;
            }
            Some(_) => return None,
        };
        let command = line[start..i].trim_matches([' ', '\t']);
        let first = command.split([' ', '\t']).next().unwrap_or("");
        // An empty command is a syntax error; an assignment, a keyword or an
        // unusual command name (`-`, `+x`, …) goes to the grammar.
        let usual_name = first
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"_./".contains(&b));
        if !usual_name || first.contains('=') || RESERVED.contains(&first) {
            return None;
        }
        commands.push(command);
        if op_len == 0 {
            break;
        }
        i += op_len;
        start = i;
    }
    Some(commands)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_split() {
        assert_eq!(
            plain_commands("git status && ls  -la | grep foo"),
            Some(vec!["git status", "ls  -la", "grep foo"])
        );
        assert_eq!(plain_commands("a;b||c"), Some(vec!["a", "b", "c"]));
        assert_eq!(plain_commands("  cargo test  "), Some(vec!["cargo test"]));
    }

    #[test]
    fn anything_else_needs_the_parser() {
        for line in [
            "echo 'a'",
            "echo \"a\"",
            "echo $HOME",
            "echo `x`",
            "a > b",
            "a < b",
            "a & b",
            "a |& b",
            "(a)",
            "{ a; }",
            "echo *",
            "echo ~",
            "a # c",
            "a\nb",
            "a\\ b",
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
            "echo [x]",
            "echo a?",
        ] {
            assert_eq!(plain_commands(line), None, "{line:?}");
        }
    }
}
