//! What the gate knows about single programs' arguments, kept as data beside
//! [`super::WRAPPERS`]: which programs only print or compare their arguments
//! (so a word whose value is unknown cannot make them open a file), and which
//! options take a message rather than a path.

/// Programs that never open a file named by an argument: they print, compare
/// or compute with their words. A word holding an unknown expansion
/// (`echo "$X"`) is no path for them.
pub const TEXT_ONLY_PROGRAMS: &[&str] = &[
    "echo", "printf", "true", "false", ":", "test", "[", "sleep", "expr", "seq", "basename",
    "dirname", "export", "local", "declare", "typeset", "readonly", "unset", "shift", "exit",
    "return", "let",
];

/// Per program, the options whose value is a message, not a path
/// (`git commit -m "$(cat <<'EOF' … EOF)"`), as written attached (`--message=`)
/// or as the next word.
pub const TEXT_OPTIONS: &[(&str, &[&str])] = &[("git", &["-m", "--message"])];

/// Whether `program` only prints or compares its words.
pub fn text_only(program: &str) -> bool {
    TEXT_ONLY_PROGRAMS.contains(&program)
}

/// Whether `option` of `program` takes a message.
pub fn text_option(program: &str, option: &str) -> bool {
    TEXT_OPTIONS
        .iter()
        .any(|(p, opts)| *p == program && opts.contains(&option))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_a_plain_name() {
        for p in TEXT_ONLY_PROGRAMS {
            assert!(!p.is_empty() && !p.contains([' ', '/']), "{p:?}");
        }
        for (p, opts) in TEXT_OPTIONS {
            assert!(!p.is_empty() && !opts.is_empty(), "{p:?}");
            for o in *opts {
                assert!(o.starts_with('-') && !o.contains('='), "{o:?}");
                assert!(text_option(p, o));
            }
        }
        assert!(text_only("echo") && !text_only("cat"));
        assert!(!text_option("git", "-o"));
    }
}
