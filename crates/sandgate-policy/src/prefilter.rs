//! A literal prefilter for command rules, so only the rules that can match a
//! command are compiled and run.
//!
//! For each regex we find a set of *required literals*: strings of which every
//! match must contain at least one. A rule with no such set is always a
//! candidate. One Aho-Corasick automaton over all literals then names the
//! candidate rules of a command in a single pass. The prefilter only ever
//! removes rules that cannot match, so it never changes which rules match.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex_syntax::hir::{Class, Hir, HirKind};

/// Alternatives a required-literal set may have before it is not worth it.
const MAX_ALTERNATIVES: usize = 32;

/// The required literals of `pattern`, or `None` when every command must be
/// checked against it. Literals are compared ASCII-case-insensitively (see
/// [`LiteralIndex`]), so a case-insensitive letter counts as a literal.
#[cfg(test)]
pub(crate) fn required_literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    // The same parser settings as the regex crate's defaults, so the HIR is
    // exactly what `Regex::new` compiles. A pattern that does not parse has no
    // literals: it is then checked against every command (and fails there).
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    literals_of(&hir)
}

/// The required literals of a parsed regex (see [`required_literals`]).
pub(crate) fn literals_of(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    required(hir).filter(|set| set.iter().all(|lit| !lit.is_empty()))
}

/// A set of literals, one of which occurs in every match of `hir`.
fn required(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    match hir.kind() {
        HirKind::Literal(lit) => Some(vec![lit.0.to_vec()]),
        HirKind::Class(class) => single_char(class).map(|c| vec![c]),
        HirKind::Capture(cap) => required(&cap.sub),
        HirKind::Repetition(rep) if rep.min >= 1 => required(&rep.sub),
        HirKind::Concat(items) => {
            let mut best: Option<Vec<Vec<u8>>> = None;
            let mut run: Vec<u8> = Vec::new();
            for item in items {
                if let Some(bytes) = single_literal(item) {
                    run.extend_from_slice(&bytes);
                    continue;
                }
                if !run.is_empty() {
                    keep_better(&mut best, vec![std::mem::take(&mut run)]);
                }
                if let Some(set) = required(item) {
                    keep_better(&mut best, set);
                }
            }
            if !run.is_empty() {
                keep_better(&mut best, vec![run]);
            }
            best
        }
        HirKind::Alternation(alts) => {
            let mut all = Vec::new();
            for alt in alts {
                all.extend(required(alt)?);
                if all.len() > MAX_ALTERNATIVES {
                    return None;
                }
            }
            all.sort();
            all.dedup();
            Some(all)
        }
        // Empty, look-arounds (`^`, `$`, `\b`) and optional repetitions require nothing.
        _ => None,
    }
}

/// The bytes `hir` matches when it matches exactly one string (up to ASCII case).
fn single_literal(hir: &Hir) -> Option<Vec<u8>> {
    match hir.kind() {
        HirKind::Literal(lit) => Some(lit.0.to_vec()),
        HirKind::Class(class) => single_char(class),
        HirKind::Capture(cap) => single_literal(&cap.sub),
        _ => None,
    }
}

/// A class of one character, or of one ASCII letter in both cases.
fn single_char(class: &Class) -> Option<Vec<u8>> {
    match class {
        Class::Unicode(c) => {
            let ranges = c.ranges();
            let chars: Vec<char> = ranges
                .iter()
                .flat_map(|r| (r.start()..=r.end()).take(3))
                .collect();
            let count: u32 = ranges
                .iter()
                .map(|r| r.end() as u32 - r.start() as u32 + 1)
                .sum();
            if count > 2 {
                return None;
            }
            match chars.as_slice() {
                [c] => Some(c.to_string().into_bytes()),
                [a, b] if a.is_ascii_alphabetic() && a.eq_ignore_ascii_case(b) => {
                    Some(vec![a.to_ascii_lowercase() as u8])
                }
                _ => None,
            }
        }
        Class::Bytes(c) => {
            let count: u32 = c
                .ranges()
                .iter()
                .map(|r| u32::from(r.end()) - u32::from(r.start()) + 1)
                .sum();
            if count > 2 {
                return None;
            }
            let bytes: Vec<u8> = c
                .ranges()
                .iter()
                .flat_map(|r| (r.start()..=r.end()).take(3))
                .collect();
            match bytes.as_slice() {
                [b] => Some(vec![*b]),
                [a, b] if a.is_ascii_alphabetic() && a.eq_ignore_ascii_case(b) => {
                    Some(vec![a.to_ascii_lowercase()])
                }
                _ => None,
            }
        }
    }
}

/// Keep the set that filters better: longer shortest literal, then fewer alternatives.
fn keep_better(best: &mut Option<Vec<Vec<u8>>>, candidate: Vec<Vec<u8>>) {
    if candidate.is_empty() || candidate.len() > MAX_ALTERNATIVES {
        return;
    }
    let score = |set: &[Vec<u8>]| {
        (
            set.iter().map(Vec::len).min().unwrap_or(0),
            usize::MAX - set.len(),
        )
    };
    if best.as_ref().is_none_or(|b| score(&candidate) > score(b)) {
        *best = Some(candidate);
    }
}

/// Which rules can match a haystack, from their required literals.
#[derive(Debug, Clone)]
pub(crate) struct LiteralIndex {
    /// One automaton over every distinct literal (ASCII case-insensitive).
    automaton: Option<AhoCorasick>,
    /// For each automaton pattern, the rules that require it.
    pattern_rules: Vec<Vec<u32>>,
    /// Rules without required literals.
    always: Vec<u32>,
    rule_count: usize,
}

impl LiteralIndex {
    /// Index `literals` (one entry per rule, in rule order).
    pub(crate) fn new(literals: &[Option<Vec<Vec<u8>>>]) -> LiteralIndex {
        let mut patterns: Vec<Vec<u8>> = Vec::new();
        let mut pattern_rules: Vec<Vec<u32>> = Vec::new();
        let mut seen: std::collections::HashMap<Vec<u8>, usize> = Default::default();
        let mut always = Vec::new();
        for (rule, set) in literals.iter().enumerate() {
            let rule = rule as u32;
            match set {
                None => always.push(rule),
                Some(set) => {
                    for lit in set {
                        let key = lit.to_ascii_lowercase();
                        let id = *seen.entry(key.clone()).or_insert_with(|| {
                            patterns.push(key);
                            pattern_rules.push(Vec::new());
                            patterns.len() - 1
                        });
                        pattern_rules[id].push(rule);
                    }
                }
            }
        }
        let automaton = if patterns.is_empty() {
            None
        } else {
            match AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                // The automaton is built once per process and run on a few short
                // commands: the NFA builds fastest, and searches them fast enough.
                .kind(Some(AhoCorasickKind::NoncontiguousNFA))
                .build(&patterns)
            {
                Ok(ac) => Some(ac),
                // Without an automaton every rule is a candidate: slower, never wrong.
                Err(_) => {
                    always = (0..literals.len() as u32).collect();
                    pattern_rules.clear();
                    None
                }
            }
        };
        LiteralIndex {
            automaton,
            pattern_rules,
            always,
            rule_count: literals.len(),
        }
    }

    /// The rules that can match `haystack`, in rule order.
    pub(crate) fn candidates(&self, haystack: &[u8]) -> Vec<usize> {
        let mut hit = vec![false; self.rule_count];
        for &r in &self.always {
            hit[r as usize] = true;
        }
        if let Some(ac) = &self.automaton {
            for m in ac.find_overlapping_iter(haystack) {
                for &r in &self.pattern_rules[m.pattern().as_usize()] {
                    hit[r as usize] = true;
                }
            }
        }
        hit.iter()
            .enumerate()
            .filter_map(|(i, &h)| h.then_some(i))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lits(p: &str) -> Option<Vec<String>> {
        required_literals(p).map(|s| {
            s.into_iter()
                .map(|l| String::from_utf8(l).unwrap())
                .collect()
        })
    }

    #[test]
    fn extracts_the_most_selective_literal() {
        assert_eq!(lits("^git status( |$)"), Some(vec!["git status".into()]));
        assert_eq!(lits("^\\s*rm\\s+-rf\\s+/"), Some(vec!["-rf".into()]));
        assert_eq!(lits("\\|\\s*sh\\b"), Some(vec!["sh".into()]));
        assert_eq!(lits("(?i)^git\\s+push"), Some(vec!["git".into()]));
        assert_eq!(
            lits("^git (-f|--force)$"),
            Some(vec!["git ".into()]),
            "a longer shortest literal wins"
        );
        assert_eq!(
            lits("(-f|--force)\\s"),
            Some(vec!["--force".into(), "-f".into()])
        );
        assert_eq!(lits("^.*$"), None);
        assert_eq!(lits("a?"), None);
        assert_eq!(lits("(a|)"), None);
    }

    #[test]
    fn candidates_include_every_rule_that_can_match() {
        let patterns = ["^git status", "rm\\s+-rf", "(?i)PUSH", ".*"];
        let literals: Vec<_> = patterns.iter().map(|p| required_literals(p)).collect();
        let index = LiteralIndex::new(&literals);
        assert_eq!(index.candidates(b"git status"), vec![0, 3]);
        assert_eq!(index.candidates(b"git push"), vec![2, 3]);
        assert_eq!(index.candidates(b"sudo rm -rf /"), vec![1, 3]);
    }
}
