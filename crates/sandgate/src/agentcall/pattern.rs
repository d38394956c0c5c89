//! Glob patterns in agent tool calls: what a pattern could reach.
//!
//! `Glob`, Gemini CLI's `glob` and `read_many_files` take patterns, and any
//! path parameter may hold one. The agent expands them itself, so the gate
//! judges the directory each pattern starts from (its literal prefix, after
//! braces are expanded) and every floor directory the pattern could match.
//! The agents' glob libraries let `*` match a leading dot and `**` any number
//! of directories, so the matching here does too: it may see a reach the
//! agent would not, never the other way round.

use std::path::{Path, PathBuf};

/// The most words one pattern's braces may expand to.
pub const MAX_ALTERNATIVES: usize = 256;

/// Whether `s` holds a glob character (`*`, `?`, `[`, `{`).
pub fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

/// The longest pattern, and the most braces in one, that are expanded: the
/// hook must answer before the agent's timeout, which some agents take as
/// a pass.
const MAX_PATTERN_BYTES: usize = 4096;
const MAX_BRACES: usize = 64;

/// Brace expansion (`a{b,c}d` → `abd`, `acd`, nested, in order); a `{`
/// without a top-level comma stays literal. `None` beyond
/// [`MAX_ALTERNATIVES`] words, or for a pattern longer than 4096 bytes or
/// with more than 64 braces.
pub fn brace_expand(s: &str) -> Option<Vec<String>> {
    if s.len() > MAX_PATTERN_BYTES || s.bytes().filter(|&b| b == b'{').count() > MAX_BRACES {
        return None;
    }
    sandgate_policy::brace_expand_within(s, MAX_ALTERNATIVES)
}

/// The components of an absolute path or pattern, `.`, `..` and repeated
/// slashes collapsed as text.
pub fn lexical(absolute: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = Vec::new();
    for part in absolute.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts
}

/// An absolute pattern split where its first glob component starts: the
/// literal directory before it, and the components from it on (empty when
/// the pattern has no glob character).
pub fn split_literal(absolute: &str) -> (String, Vec<&str>) {
    let comps: Vec<&str> = absolute.split('/').filter(|c| !c.is_empty()).collect();
    let at = comps
        .iter()
        .position(|c| has_glob(c))
        .unwrap_or(comps.len());
    (format!("/{}", comps[..at].join("/")), comps[at..].to_vec())
}

/// Whether the pattern components `pattern` could name a path below `dir`.
/// A pattern that ends at `dir` names the directory, not what is in it (the
/// agents' glob tools return files), and the directory's own name is judged
/// as a path.
pub fn reaches(pattern: &[&str], dir: &Path) -> bool {
    let names: Vec<&str> = dir
        .to_str()
        .unwrap_or("")
        .split('/')
        .filter(|c| !c.is_empty())
        .collect();
    for (i, name) in names.iter().enumerate() {
        let Some(pat) = pattern.get(i) else {
            return false;
        };
        if pat.contains("**") {
            return true;
        }
        if !sandgate_policy::component_matches(pat.as_bytes(), name.as_bytes()) {
            return false;
        }
    }
    pattern.len() > names.len()
}

/// The directories of `floor` that the absolute pattern components could
/// reach below.
pub fn floor_reached(pattern: &[&str], floor: &[PathBuf]) -> Vec<PathBuf> {
    floor
        .iter()
        .filter(|dir| reaches(pattern, dir))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_expand_in_order_and_nested() {
        assert_eq!(
            brace_expand("{/h/.ssh,/x}/*").unwrap(),
            ["/h/.ssh/*", "/x/*"]
        );
        assert_eq!(
            brace_expand("a{b,c{d,e}}f").unwrap(),
            ["abf", "acdf", "acef"]
        );
        assert_eq!(brace_expand("{x}").unwrap(), ["{x}"]);
        assert!(brace_expand(&"{a,b}".repeat(9)).is_none());
        // Answered at once, however the braces are piled up.
        let start = std::time::Instant::now();
        assert!(brace_expand(&"{".repeat(1 << 20)).is_none());
        assert!(brace_expand(&"{a,".repeat(60)).is_some());
        assert!(brace_expand(&format!("{}x", "{".repeat(60))).is_some());
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn the_literal_directory_is_what_comes_before_the_first_glob_component() {
        let (dir, rest) = split_literal("/h/u/.ssh/*");
        assert_eq!((dir.as_str(), rest), ("/h/u/.ssh", vec!["*"]));
        let (dir, rest) = split_literal("/h/.s*/id_*");
        assert_eq!((dir.as_str(), rest), ("/h", vec![".s*", "id_*"]));
        assert_eq!(split_literal("/**").0, "/");
        assert_eq!(split_literal("/a/b").1, Vec::<&str>::new());
        assert_eq!(lexical("/w/../h/./.ssh//*"), ["h", ".ssh", "*"]);
    }

    /// (pattern, whether it could match a path in /h/.ssh).
    #[test]
    fn a_pattern_reaches_the_floor_when_a_component_could_match_it() {
        let floor = Path::new("/h/.ssh");
        for (pattern, want) in [
            ("/h/.ssh/*", true),
            ("/h/.ssh", false),
            ("/h/.ss?", false),
            ("/h/**", true),
            ("/h/.s*/*", true),
            ("/h/*/id_rsa", true),
            ("/h/?ssh/x", true),
            ("/h/[.]ssh/x", true),
            ("/h/.[s]sh/x", true),
            ("/h/.[!a]sh/x", true),
            ("/h/**/*.pem", true),
            ("/**", true),
            ("/*/*/id_rsa", true),
            ("/h/\\.ssh/x", true),
            ("/h/*", false),
            ("/h/src/**", false),
            ("/h/.a*/*", false),
            ("/h/.[!s]sh/x", false),
            ("/x/.ssh/*", false),
        ] {
            let comps: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
            assert_eq!(reaches(&comps, floor), want, "{pattern}");
        }
    }
}
