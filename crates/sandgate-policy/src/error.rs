//! Errors in policy files: every problem names the file, line, column, rule and a hint.

use std::fmt;
use std::path::PathBuf;

/// One problem in one policy file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The policy file.
    pub file: PathBuf,
    /// 1-based line and column, when known.
    pub position: Option<(u32, u32)>,
    /// The rule text, when the problem is a rule.
    pub rule: Option<String>,
    /// What is wrong, lowercase, no final period.
    pub message: String,
    /// What to write instead, when we know.
    pub hint: Option<String>,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, column)) = self.position {
            write!(f, ":{line}:{column}")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(rule) = &self.rule {
            write!(f, "\n    rule: `{rule}`")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\n    hint: {hint}")?;
        }
        Ok(())
    }
}

/// A policy that could not be loaded. It never degrades to allow-all: callers
/// answer DENY (or exit 2) instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// Every problem found, in file order.
    pub problems: Vec<Problem>,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        write!(
            f,
            "the policy cannot be loaded ({n} problem{})",
            if n == 1 { "" } else { "s" }
        )?;
        for p in &self.problems {
            write!(f, "\n  {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

/// A hint for a regex the engine rejected, from the constructs people reach for.
pub fn regex_hint(pattern: &str) -> Option<String> {
    if ["(?=", "(?!", "(?<=", "(?<!"]
        .iter()
        .any(|p| pattern.contains(p))
    {
        return Some(
            "lookaround is not supported by the regex engine; match the wider text in an allow rule \
             and put the exception in a deny rule (deny always wins)"
                .into(),
        );
    }
    if pattern.contains("\\Q") || pattern.contains("\\E") {
        return Some(
            "`\\Q…\\E` is not supported; write the literal with each metacharacter escaped, \
             e.g. `a\\.b\\*` for `a.b*`"
                .into(),
        );
    }
    if pattern
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b'\\' && w[1].is_ascii_digit() && w[1] != b'0')
    {
        return Some("backreferences are not supported by the regex engine".into());
    }
    if pattern.contains("(?P=") || pattern.contains("\\k<") {
        return Some("named backreferences are not supported by the regex engine".into());
    }
    None
}
