//! A literal prefilter for command rules, so only the rules that can match a
//! command are compiled and run.
//!
//! For each regex we find a set of *required literals*: strings of which every
//! match must contain at least one. A rule with no such set is always a
//! candidate. A trie of the literals (or, for thousands of literals, one
//! Aho-Corasick automaton) then names the candidate rules of a command. The
//! prefilter only ever removes rules that cannot match, so it never changes
//! which rules match.

use std::collections::HashMap;

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

/// The required literals of a parsed regex: a set of literals, one of which
/// occurs in every match, none of them empty.
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

/// Distinct literals from which the index builds an Aho-Corasick automaton.
/// Below it, a plain trie walked from each position finds the candidates of a
/// short command about as fast, and costs almost nothing to build: a process
/// that decides one call (a hook) builds it for every call.
const AUTOMATON_MIN_LITERALS: usize = 2048;

/// Which rules can match a haystack, from their required literals.
#[derive(Debug, Clone)]
pub(crate) struct LiteralIndex {
    /// For each pattern, the rules that require it.
    pattern_rules: Vec<Vec<u32>>,
    /// How patterns are found in a haystack.
    finder: Finder,
    /// Rules without required literals.
    always: Vec<u32>,
    rule_count: usize,
}

#[derive(Debug, Clone)]
enum Finder {
    /// A trie of the patterns, walked from each position of the haystack.
    Trie(Trie),
    /// One automaton over every pattern (ASCII case-insensitive).
    Automaton(AhoCorasick),
    /// Every rule is a candidate (the automaton could not be built).
    Everything,
}

/// A trie of lowercased patterns: one hash-map entry per edge, so building it
/// costs a few instructions per pattern byte.
#[derive(Debug, Clone)]
struct Trie {
    /// `(node << 8) | byte` → child node; the root is node 0.
    edges: HashMap<u64, u32, foldhash::fast::RandomState>,
    /// For each node, the pattern that ends there, or [`Trie::NONE`].
    ends: Vec<u32>,
}

impl Trie {
    const NONE: u32 = u32::MAX;

    fn with_capacity(edges: usize) -> Trie {
        Trie {
            edges: HashMap::with_capacity_and_hasher(edges, Default::default()),
            ends: vec![Self::NONE],
        }
    }

    /// Insert `pattern` (ASCII-lowercased on the way) and give its id: `next_id`
    /// if it is new, else the id it was inserted with before.
    fn insert(&mut self, pattern: &[u8], next_id: u32) -> u32 {
        let mut node = 0u32;
        for &b in pattern {
            let next = self.ends.len() as u32;
            node = *self
                .edges
                .entry(u64::from(node) << 8 | u64::from(b.to_ascii_lowercase()))
                .or_insert(next);
            if node == next {
                self.ends.push(Self::NONE);
            }
        }
        let end = &mut self.ends[node as usize];
        if *end == Self::NONE {
            *end = next_id;
        }
        *end
    }

    /// Call `found` with every pattern that starts at some position of `haystack`.
    fn find(&self, haystack: &[u8], mut found: impl FnMut(u32)) {
        for at in 0..haystack.len() {
            let mut node = 0u32;
            for &b in &haystack[at..] {
                let key = u64::from(node) << 8 | u64::from(b.to_ascii_lowercase());
                let Some(&child) = self.edges.get(&key) else {
                    break;
                };
                node = child;
                let end = self.ends[node as usize];
                if end != Self::NONE {
                    found(end);
                }
            }
        }
    }
}

impl LiteralIndex {
    /// Index `literals` (one entry per rule, in rule order).
    pub(crate) fn new(literals: &[Option<Vec<Vec<u8>>>]) -> LiteralIndex {
        Self::with_automaton_from(literals, AUTOMATON_MIN_LITERALS)
    }

    /// [`LiteralIndex::new`], building the automaton from `min_literals` distinct literals on.
    fn with_automaton_from(literals: &[Option<Vec<Vec<u8>>>], min_literals: usize) -> LiteralIndex {
        let mut patterns: Vec<&[u8]> = Vec::new();
        let mut pattern_rules: Vec<Vec<u32>> = Vec::new();
        let edges = literals.iter().flatten().flatten().map(Vec::len).sum();
        // The trie also names each distinct literal (ASCII case-insensitively) once.
        let mut trie = Trie::with_capacity(edges);
        let mut always = Vec::new();
        for (rule, set) in literals.iter().enumerate() {
            let rule = rule as u32;
            match set {
                None => always.push(rule),
                Some(set) => {
                    for lit in set {
                        let id = trie.insert(lit, patterns.len() as u32) as usize;
                        if id == patterns.len() {
                            patterns.push(lit);
                            pattern_rules.push(Vec::new());
                        }
                        pattern_rules[id].push(rule);
                    }
                }
            }
        }
        let finder = if patterns.len() < min_literals {
            // Literals are never empty (see `literals_of`); an empty one would
            // match everywhere, so its rules are always candidates.
            for (id, pattern) in patterns.iter().enumerate() {
                if pattern.is_empty() {
                    always.extend(&pattern_rules[id]);
                }
            }
            Finder::Trie(trie)
        } else {
            match AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .kind(Some(AhoCorasickKind::NoncontiguousNFA))
                .build(&patterns)
            {
                Ok(ac) => Finder::Automaton(ac),
                // Without an automaton every rule is a candidate: slower, never wrong.
                Err(_) => Finder::Everything,
            }
        };
        always.sort_unstable();
        always.dedup();
        LiteralIndex {
            pattern_rules,
            finder,
            always,
            rule_count: literals.len(),
        }
    }

    /// The rules that can match `haystack`, in rule order.
    pub(crate) fn candidates(&self, haystack: &[u8]) -> Vec<usize> {
        let mut hits: Vec<u32> = self.always.clone();
        let mut mark = |pattern: u32| hits.extend(&self.pattern_rules[pattern as usize]);
        match &self.finder {
            Finder::Trie(trie) => trie.find(haystack, &mut mark),
            Finder::Automaton(ac) => {
                for m in ac.find_overlapping_iter(haystack) {
                    mark(m.pattern().as_usize() as u32);
                }
            }
            Finder::Everything => return (0..self.rule_count).collect(),
        }
        if hits.len() <= 32 {
            hits.sort_unstable();
            hits.dedup();
            return hits.into_iter().map(|r| r as usize).collect();
        }
        // Many hits: a flag per rule is cheaper than sorting them.
        let mut flags = vec![false; self.rule_count];
        for r in hits {
            flags[r as usize] = true;
        }
        flags
            .iter()
            .enumerate()
            .filter_map(|(i, &f)| f.then_some(i))
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

    #[test]
    fn trie_and_automaton_name_the_same_candidates() {
        let words = [
            "git", "rm", "curl", "x", "-rf", "push", "a", "ssh", "sudo", "npm run",
        ];
        let literals: Vec<Option<Vec<Vec<u8>>>> = (0..3000)
            .map(|i| match i % 7 {
                0 => None,
                1 => Some(vec![words[i % words.len()].as_bytes().to_vec()]),
                2 => Some(vec![format!("tool{i}").into_bytes(), b"-F".to_vec()]),
                3 => Some(vec![format!("Git {i}").into_bytes()]),
                _ => Some(vec![
                    format!("{}{}", words[i % words.len()], i % 13).into_bytes()
                ]),
            })
            .collect();
        let trie = LiteralIndex::with_automaton_from(&literals, usize::MAX);
        let automaton = LiteralIndex::with_automaton_from(&literals, 0);
        assert!(matches!(trie.finder, Finder::Trie(_)));
        assert!(matches!(automaton.finder, Finder::Automaton(_)));
        for haystack in [
            "",
            "x",
            "git status",
            "GIT 17 && rm -rf /",
            "tool42 -f",
            "sudo npm run build; curl7 | ssh2",
            "aaaaaaaa",
            "push12 a",
        ] {
            let t = trie.candidates(haystack.as_bytes());
            assert_eq!(t, automaton.candidates(haystack.as_bytes()), "{haystack}");
            // Every rule without literals, and only a few others, are candidates.
            assert!(t.iter().filter(|&&i| i % 7 == 0).count() == 3000 / 7 + 1);
        }
    }
}
