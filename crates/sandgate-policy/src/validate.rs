//! Every structural problem of a policy file at once, in words.
//!
//! serde stops at the first error and words it for programmers ("expected
//! sequence start"). When a file does not parse, it is read again as a plain
//! YAML tree (the events of `granit-parser`, the parser serde-saphyr itself
//! uses, each with its position) and walked against the JSON Schema the
//! binary ships ([`SCHEMA`]): every unknown key (with "did you mean"), every
//! value of the wrong type ("`deny` must be a list of globs") and every value
//! outside its choices is reported with its line and column. Only a file that
//! serde rejected is walked, so the walk can never reject a file serde accepts.

use std::path::Path;

use granit_parser::{Event, Marker, Parser, ScalarStyle};
use serde_json::Value;

use crate::error::Problem;

/// The JSON Schema of a policy file (`sandgate policy schema` prints it).
pub const SCHEMA: &str = include_str!("../permissions.schema.json");

/// A YAML node with where it starts.
#[derive(Debug)]
struct Node {
    at: Marker,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Map(Vec<(String, Marker, Node)>),
    Seq(Vec<Node>),
    Scalar(String, ScalarStyle),
    Other,
}

/// Build the tree of the first document; `None` when the YAML itself is broken.
fn tree(text: &str) -> Option<Node> {
    let mut events = Parser::new_from_str(text).filter_map(|e| match e {
        Ok((Event::Comment(..), _)) => None,
        other => Some(other),
    });
    loop {
        match events.next()?.ok()? {
            (Event::StreamStart, _) | (Event::DocumentStart(..), _) => continue,
            (Event::StreamEnd, _) | (Event::DocumentEnd, _) => return None,
            (event, span) => return node(event, span.start, &mut events),
        }
    }
}

fn node<'a, I>(event: Event<'a>, at: Marker, events: &mut I) -> Option<Node>
where
    I: Iterator<Item = Result<(Event<'a>, granit_parser::Span), granit_parser::ScanError>>,
{
    let kind = match event {
        Event::Scalar(text, style, ..) => Kind::Scalar(text.into_owned(), style),
        Event::SequenceStart(..) => {
            let mut items = Vec::new();
            loop {
                let (e, span) = events.next()?.ok()?;
                if matches!(e, Event::SequenceEnd) {
                    break;
                }
                items.push(node(e, span.start, events)?);
            }
            Kind::Seq(items)
        }
        Event::MappingStart(..) => {
            let mut entries = Vec::new();
            loop {
                let (e, span) = events.next()?.ok()?;
                if matches!(e, Event::MappingEnd) {
                    break;
                }
                let key = node(e, span.start, events)?;
                let (e, vspan) = events.next()?.ok()?;
                let value = node(e, vspan.start, events)?;
                let name = match key.kind {
                    Kind::Scalar(s, _) => s,
                    _ => String::from("?"),
                };
                entries.push((name, key.at, value));
            }
            Kind::Map(entries)
        }
        _ => Kind::Other,
    };
    Some(Node { at, kind })
}

/// What the walk of a file that serde rejected finds.
#[derive(Debug, Default)]
pub struct Found {
    /// Where the file breaks the schema (unknown keys, wrong types), in file
    /// order; empty when the walk finds nothing (the caller then reports
    /// serde's own error).
    pub structural: Vec<Problem>,
    /// Rules that would be rejected once the file parses (a command regex
    /// that does not compile), so that they are reported with the rest.
    pub rules: Vec<Problem>,
}

/// The problems of `text` measured against the schema, and its rules that
/// do not compile.
pub fn problems(text: &str, path: &Path) -> Found {
    let Some(root) = tree(text) else {
        return Found::default();
    };
    let Ok(schema) = serde_json::from_str::<Value>(SCHEMA) else {
        return Found::default();
    };
    let mut found = Found::default();
    let walk = Walk {
        schema: &schema,
        path,
    };
    walk.check(&root, &schema, "", "the file", &mut found);
    found
}

struct Walk<'a> {
    schema: &'a Value,
    path: &'a Path,
}

impl Walk<'_> {
    fn dereference<'s>(&'s self, mut s: &'s Value) -> &'s Value {
        while let Some(r) = s.get("$ref").and_then(Value::as_str) {
            let name = r.rsplit('/').next().unwrap_or("");
            match self.schema.get("definitions").and_then(|d| d.get(name)) {
                Some(target) => s = target,
                None => break,
            }
        }
        s
    }

    fn problem(&self, at: &Marker, message: String, hint: Option<String>) -> Problem {
        Problem {
            file: self.path.to_path_buf(),
            position: Some((at.line() as u32, at.col() as u32 + 1)),
            rule: None,
            message,
            hint,
        }
    }

    /// Check `node` against `schema`; `key` is its key, `parent` the key above it.
    fn check(&self, node: &Node, schema: &Value, key: &str, parent: &str, found: &mut Found) {
        let schema = self.dereference(schema);
        if is_null(node) {
            return;
        }
        if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
            let names: Vec<&str> = choices.iter().filter_map(Value::as_str).collect();
            let ok = matches!(&node.kind, Kind::Scalar(s, _) if names.contains(&s.as_str()));
            if !ok {
                let given = scalar_text(node);
                let hint = given
                    .as_deref()
                    .and_then(|g| closest(g, &names))
                    .map(|c| format!("did you mean `{c}`?"));
                found.structural.push(self.problem(
                    &node.at,
                    format!(
                        "`{key}` must be one of {}{}",
                        list(&names),
                        given.map(|g| format!(", not `{g}`")).unwrap_or_default()
                    ),
                    hint,
                ));
            }
            return;
        }
        let want = schema.get("type").and_then(Value::as_str).unwrap_or("");
        match (want, &node.kind) {
            ("object", Kind::Map(entries)) => {
                let props = schema.get("properties").and_then(Value::as_object);
                let names: Vec<&str> = props
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                for (i, (name, at, value)) in entries.iter().enumerate() {
                    if let Some((_, first, _)) = entries[..i].iter().find(|(n, ..)| n == name) {
                        let first = (first.line() as u64, first.col() as u64 + 1);
                        let (message, hint) = duplicate_key(name, Some(first));
                        found.structural.push(self.problem(at, message, Some(hint)));
                    }
                    match props.and_then(|p| p.get(name)) {
                        Some(sub) => self.check(value, sub, name, key, found),
                        None => {
                            let place = if key.is_empty() {
                                "at the top of the file".to_string()
                            } else {
                                format!("under `{key}`")
                            };
                            let hint = match closest(name, &names) {
                                Some(c) => format!(
                                    "did you mean `{c}`? the keys {place} are {}",
                                    list(&names)
                                ),
                                None => format!("the keys {place} are {}", list(&names)),
                            };
                            found.structural.push(self.problem(
                                at,
                                format!("unknown key `{name}` {place}"),
                                Some(hint),
                            ));
                        }
                    }
                }
            }
            ("array", Kind::Seq(items)) => {
                if let Some(item) = schema.get("items") {
                    for i in items {
                        self.check(i, item, key, parent, found);
                    }
                }
            }
            ("string", Kind::Scalar(text, _)) => {
                if parent == "commands" && matches!(key, "allow" | "deny" | "ask") {
                    if let Some((message, hint)) = crate::rules::regex_problem(text) {
                        found.rules.push(Problem {
                            rule: Some(text.clone()),
                            ..self.problem(&node.at, message, hint)
                        });
                    }
                }
                if parent == "network" && matches!(key, "allow" | "deny") {
                    if let Err(e) = crate::network::Entry::parse(text) {
                        found.rules.push(Problem {
                            rule: Some(text.clone()),
                            ..self.problem(
                                &node.at,
                                format!("invalid network entry: {}", e.message),
                                Some(e.hint),
                            )
                        });
                    }
                }
            }
            ("boolean", Kind::Scalar(s, ScalarStyle::Plain)) if is_bool(s) => {}
            ("integer", Kind::Scalar(s, ScalarStyle::Plain))
                if s.parse::<u64>().is_ok_and(|n| n >= minimum(schema)) => {}
            ("", _) => {}
            _ => {
                let words = self.words(schema, key, parent);
                let given = found_words(node);
                found.structural.push(self.problem(
                    &node.at,
                    format!("`{key}` must be {words}, not {given}"),
                    example(schema, key, node, parent),
                ));
            }
        }
    }

    fn words(&self, schema: &Value, key: &str, parent: &str) -> String {
        match schema.get("type").and_then(Value::as_str).unwrap_or("") {
            "object" => "a mapping of keys".into(),
            "array" => {
                let items = schema.get("items").map(|i| self.dereference(i));
                let of_maps =
                    items.and_then(|i| i.get("type")).and_then(Value::as_str) == Some("object");
                let what = match parent {
                    _ if key == "tests" => {
                        "tests (`{command: …, expect: …}` or `{path: …, expect: …}`)"
                    }
                    _ if of_maps => "mappings",
                    "paths" | "read" | "write" => "globs",
                    "commands" => "regexes",
                    "network" => "hosts",
                    _ => "strings",
                };
                let _ = key;
                format!("a list of {what}")
            }
            "boolean" => "`true` or `false`".into(),
            "integer" => match minimum(schema) {
                0 => "a whole number of 0 or more".into(),
                least => format!("a whole number of at least {least}"),
            },
            "string" => "a string".into(),
            other => format!("of type {other}"),
        }
    }
}

/// The words for a key written twice in one mapping, and how to merge the
/// two: `first` is where the first one is (line and column, 1-based).
pub(crate) fn duplicate_key(key: &str, first: Option<(u64, u64)>) -> (String, String) {
    let message = match first {
        Some((line, column)) => format!(
            "the key `{key}` appears twice in the same mapping (first at line {line}, column {column})"
        ),
        None => format!("the key `{key}` appears twice in the same mapping"),
    };
    let hint = format!(
        "YAML keeps one value per key: keep one `{key}:` and move the entries of the other \
         under it (for a list, its items one after the other), then delete the empty one"
    );
    (message, hint)
}

/// How to write it instead, for the common slip of a single rule without a list.
fn example(schema: &Value, key: &str, node: &Node, _parent: &str) -> Option<String> {
    let want = schema.get("type").and_then(Value::as_str)?;
    match (want, &node.kind) {
        ("array", Kind::Scalar(s, _)) => Some(format!(
            "write the rule as a one-item list: `{key}: [{}]`",
            serde_json::to_string(s).unwrap_or_default()
        )),
        ("boolean", _) => Some(format!("write `{key}: true` or `{key}: false`")),
        _ => None,
    }
}

/// The schema's `minimum` for an integer (0 when it has none).
fn minimum(schema: &Value) -> u64 {
    schema.get("minimum").and_then(Value::as_u64).unwrap_or(0)
}

fn is_null(node: &Node) -> bool {
    matches!(&node.kind, Kind::Scalar(s, ScalarStyle::Plain) if s.is_empty() || s == "~" || s.eq_ignore_ascii_case("null"))
}

fn is_bool(s: &str) -> bool {
    matches!(s, "true" | "false" | "True" | "False" | "TRUE" | "FALSE")
}

fn scalar_text(node: &Node) -> Option<String> {
    match &node.kind {
        Kind::Scalar(s, _) => Some(s.clone()),
        _ => None,
    }
}

fn found_words(node: &Node) -> String {
    match &node.kind {
        Kind::Map(_) => "a mapping".into(),
        Kind::Seq(_) => "a list".into(),
        Kind::Scalar(s, ScalarStyle::Plain) if is_bool(s) => format!("the boolean `{s}`"),
        Kind::Scalar(s, ScalarStyle::Plain) if s.parse::<f64>().is_ok() => {
            format!("the number `{s}`")
        }
        Kind::Scalar(s, _) => format!("the string `{s}`"),
        Kind::Other => "an alias".into(),
    }
}

fn list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The choice nearest to `given`, if it is near enough to be a typo.
pub fn closest<'a>(given: &str, choices: &[&'a str]) -> Option<&'a str> {
    let given = given.to_ascii_lowercase();
    choices
        .iter()
        .map(|c| (distance(&given, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3) && *d < c.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let old = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(row[j + 1])
            };
            prev = old;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(text: &str) -> Vec<String> {
        problems(text, Path::new("p.yaml"))
            .structural
            .iter()
            .map(|p| p.to_string())
            .collect()
    }

    #[test]
    fn reports_every_problem_with_its_position() {
        let text = "permisions:\n  sandbox: true\nhooks:\n  gemini:\n    ask: maybe\n";
        let m = messages(text);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(
            m[0].starts_with("p.yaml:1:1: unknown key `permisions`"),
            "{m:?}"
        );
        assert!(m[0].contains("did you mean `permissions`?"), "{m:?}");
        assert!(
            m[1].starts_with("p.yaml:5:10: `ask` must be one of `deny`, `allow`, not `maybe`"),
            "{m:?}"
        );

        let text = "permissions:\n  paths:\n    deny: \"/etc/**\"\n  commands:\n    allow: {a: 1}\n    shel: true\n  sandbox: yes\n";
        let m = messages(text);
        assert_eq!(m.len(), 4, "{m:?}");
        assert!(
            m[0].contains("3:11: `deny` must be a list of globs, not the string `/etc/**`"),
            "{m:?}"
        );
        assert!(m[0].contains("`deny: [\"/etc/**\"]`"), "{m:?}");
        assert!(
            m[1].contains("5:12: `allow` must be a list of regexes, not a mapping"),
            "{m:?}"
        );
        assert!(
            m[2].contains("unknown key `shel` under `commands`")
                && m[2].contains("did you mean `shell`?"),
            "{m:?}"
        );
        assert!(
            m[3].contains("`sandbox` must be `true` or `false`, not the string `yes`"),
            "{m:?}"
        );
    }

    #[test]
    fn tests_keys_are_checked_with_did_you_mean() {
        let text = "tests:\n  - {comand: \"git status\", expect: allow}\n  - {path: x, expect: maybe}\n  - {path: x, tool: file_raed, expect: deny}\n";
        let m = messages(text);
        assert_eq!(m.len(), 3, "{m:?}");
        assert!(
            m[0].contains("2:6: unknown key `comand` under `tests`")
                && m[0].contains("did you mean `command`?"),
            "{m:?}"
        );
        assert!(
            m[1].contains("`expect` must be one of `allow`, `ask`, `deny`, not `maybe`"),
            "{m:?}"
        );
        assert!(m[2].contains("did you mean `file_read`?"), "{m:?}");
        let m = messages("tests: \"git status\"\n");
        assert!(m[0].contains("`tests` must be a list of tests"), "{m:?}");
    }

    #[test]
    fn the_read_and_write_lists_are_known_keys_of_globs() {
        let text = "permissions:\n  paths:\n    reed:\n      allow: [\"~/x/**\"]\n    write:\n      deny: \"/etc/**\"\n      alow: []\n";
        let m = messages(text);
        assert_eq!(m.len(), 3, "{m:?}");
        assert!(
            m[0].contains("3:5: unknown key `reed` under `paths`")
                && m[0].contains("did you mean `read`?"),
            "{m:?}"
        );
        assert!(
            m[1].contains("6:13: `deny` must be a list of globs, not the string `/etc/**`"),
            "{m:?}"
        );
        assert!(
            m[2].contains("unknown key `alow` under `write`")
                && m[2].contains("did you mean `allow`?"),
            "{m:?}"
        );
        let good = "permissions:\n  paths:\n    read:\n      allow: [\"~/x/**\"]\n      deny: []\n    write:\n      deny: [\"./vendor/**\"]\n";
        assert!(messages(good).is_empty());
    }

    #[test]
    fn a_good_file_has_no_problems() {
        let text = "permissions:\n  sandbox: true\n  paths:\n    deny: [\"/etc/**\"]\n    allow:\n  commands:\n    shell: false\n  prompt:\n    timeout: 3\n";
        assert!(messages(text).is_empty());
    }

    #[test]
    fn a_regex_that_does_not_compile_is_found_beside_the_structural_problems() {
        let text = "permissions:\n  paths:\n    deny: \"/etc/**\"\n  commands:\n    deny: [\"^rm (\", \"^ok\"]\n    allow:\n      - \"[a-\"\n";
        let found = problems(text, Path::new("p.yaml"));
        let structural: Vec<String> = found.structural.iter().map(|p| p.to_string()).collect();
        assert_eq!(structural.len(), 1, "{structural:?}");
        assert!(structural[0].starts_with("p.yaml:3:11:"), "{structural:?}");
        let rules: Vec<String> = found
            .rules
            .iter()
            .map(|p| format!("{:?} {:?}", p.position, p.rule))
            .collect();
        assert_eq!(
            rules,
            [
                "Some((5, 12)) Some(\"^rm (\")",
                "Some((7, 9)) Some(\"[a-\")"
            ]
        );
        assert!(
            found.rules[0].message.starts_with("invalid regex: "),
            "{:?}",
            found.rules
        );
    }

    #[test]
    fn typos_are_near_and_others_are_not() {
        assert_eq!(
            closest("permisions", &["permissions", "hooks"]),
            Some("permissions")
        );
        assert_eq!(closest("alow", &["deny", "allow"]), Some("allow"));
        assert_eq!(closest("zzz", &["deny", "allow"]), None);
    }
}
