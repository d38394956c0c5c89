//! No module of any crate of the workspace refers to a module that refers
//! back to it, through any chain: the modules of each crate form layers.
//! Read from the source files, so that it keeps holding: every
//! `crate::`, `super::` and `self::` path counts (in `use` items, in code,
//! in tests and in the intra-doc links of `//!` and `///` comments, which
//! rustdoc resolves like code), and a name the crate root re-exports
//! (`crate::RunPlan`) counts as the module that defines it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The crates checked: every directory under `crates/` with a `src/`.
fn crates(root: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    found.sort();
    found
}

/// Modules whose submodules are checked as one module, by crate: none (the
/// shell analysis, which was one such module of `sandgate-policy`, is the
/// crate `sandgate-shell` and is checked like every crate here).
const CHECKED_WHOLE: &[(&str, &str)] = &[];

/// `edges` with the submodules of each of `whole` merged into it.
fn merged(
    edges: BTreeMap<String, BTreeSet<String>>,
    whole: &[&str],
) -> BTreeMap<String, BTreeSet<String>> {
    let top = |m: &str| -> String {
        for w in whole {
            if m.starts_with(&format!("{w}::")) {
                return (*w).to_string();
            }
        }
        m.to_string()
    };
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in edges {
        let from = top(&from);
        let to: BTreeSet<String> = to.iter().map(|d| top(d)).filter(|d| *d != from).collect();
        out.entry(from).or_default().extend(to);
    }
    out
}

/// The crate's root file: `lib.rs`, else `main.rs`.
fn root_file(src: &Path) -> PathBuf {
    let lib = src.join("lib.rs");
    if lib.exists() {
        lib
    } else {
        src.join("main.rs")
    }
}

/// Every `.rs` file beneath `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a source file holds (`supervisor::judge`); `""` for the root
/// (`lib.rs` or `main.rs`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts == ["lib"] || parts == ["main"] {
        return String::new();
    }
    parts.join("::")
}

/// The text with the ordinary `//` comments removed (doc comments stay:
/// their links are references too).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) if !line[i..].starts_with("///") && !line[i..].starts_with("//!") => {
                // `"//"` in a string literal is not a comment.
                if line[..i].matches('"').count() % 2 == 1 {
                    line
                } else {
                    &line[..i]
                }
            }
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path that starts with `crate`, `super` or `self` in `text`, with
/// `use` groups (`crate::{a, b::{c, d}}`) spelled out one path each.
fn paths(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = ["crate::", "super::", "self::"].iter().find(|p| {
            let p: Vec<char> = p.chars().collect();
            chars[i..].starts_with(&p) && (i == 0 || !is_ident(chars[i - 1]))
        });
        let Some(_) = starts else {
            i += 1;
            continue;
        };
        let (path, end) = path_at(&chars, i);
        out.extend(path);
        i = end.max(i + 1);
    }
    out
}

/// The paths spelled from `start`, and where they end.
fn path_at(chars: &[char], start: usize) -> (Vec<String>, usize) {
    let mut i = start;
    let mut prefix = String::new();
    loop {
        let begin = i;
        while i < chars.len() && (is_ident(chars[i]) || chars[i] == '*') {
            i += 1;
        }
        prefix.extend(&chars[begin..i]);
        if chars[i..].starts_with(&[':', ':']) {
            prefix.push_str("::");
            i += 2;
            if chars.get(i) == Some(&'{') {
                let mut depth = 0;
                let open = i;
                while i < chars.len() {
                    match chars[i] {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                let body: String = chars[open + 1..i.min(chars.len())].iter().collect();
                let mut all = Vec::new();
                for item in split_top(&body) {
                    let item: Vec<char> = item.trim().chars().collect();
                    if item.is_empty() {
                        continue;
                    }
                    let (inner, _) = path_at(&item, 0);
                    all.extend(inner.into_iter().map(|p| format!("{prefix}{p}")));
                }
                return (all, i + 1);
            }
            continue;
        }
        return (vec![prefix], i);
    }
}

/// `body` split at the commas outside braces.
fn split_top(body: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0);
    for c in body.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

/// The module `path`, written in `module`, refers to.
fn resolve(
    module: &str,
    path: &str,
    modules: &BTreeSet<String>,
    reexports: &BTreeMap<String, String>,
) -> Option<String> {
    let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<&str> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").collect()
    };
    match segs.first().copied() {
        Some("crate") => base.clear(),
        Some("self") => {}
        Some("super") => {
            while segs.first() == Some(&"super") {
                base.pop();
                segs.remove(0);
            }
            segs.insert(0, "super");
        }
        _ => return None,
    }
    let rest = &segs[1..];
    // The longest module the path names.
    let mut found = base.join("::");
    let mut at = base.clone();
    for (n, seg) in rest.iter().enumerate() {
        at.push(seg);
        let name = at.join("::");
        if modules.contains(&name) {
            found = name;
        } else {
            if at.len() == 1 && n == 0 {
                if let Some(m) = reexports.get(*seg) {
                    found = m.clone();
                }
            }
            break;
        }
    }
    Some(found)
}

/// The modules of the crate at `dir`, and the modules each refers to.
fn graph(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let src = dir.join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    // The names the root re-exports, by the module that defines them.
    let lib = without_comments(&fs::read_to_string(root_file(&src)).unwrap());
    let mut reexports = BTreeMap::new();
    for stmt in lib.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let top = rest.split("::").next().unwrap_or("").trim().to_string();
        if !modules.contains(&top) {
            continue;
        }
        for p in paths(&format!("self::{rest}")) {
            let last = p.rsplit("::").next().unwrap_or("");
            let name = last.rsplit(" as ").next().unwrap_or(last).trim();
            reexports.insert(name.to_string(), top.clone());
        }
    }
    let mut edges = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        if module.is_empty() {
            continue;
        }
        let text = without_comments(&fs::read_to_string(file).unwrap());
        let deps: BTreeSet<String> = paths(&text)
            .iter()
            .filter_map(|p| resolve(&module, p, &modules, &reexports))
            .filter(|d| {
                !d.is_empty()
                    && *d != module
                    && !module.starts_with(&format!("{d}::"))
                    && !d.starts_with(&format!("{module}::"))
            })
            .collect();
        edges.insert(module, deps);
    }
    edges
}

/// A chain of references that comes back to where it started, if any.
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        at: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|m| m == at) {
            let mut found = stack[i..].to_vec();
            found.push(at.to_string());
            return Some(found);
        }
        if done.contains(at) {
            return None;
        }
        stack.push(at.to_string());
        for next in edges.get(at).into_iter().flatten() {
            if let Some(found) = visit(next, edges, done, stack) {
                return Some(found);
            }
        }
        stack.pop();
        done.insert(at.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for start in edges.keys() {
        if let Some(found) = visit(start, edges, &mut done, &mut Vec::new()) {
            return Some(found);
        }
    }
    None
}

#[test]
fn the_modules_of_each_crate_form_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let all = crates(root);
    let names: Vec<String> = all
        .iter()
        .map(|c| c.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in [
        "sandgate",
        "sandgate-confine",
        "sandgate-grant",
        "sandgate-policy",
        "sandgate-sandbox",
        "sandgate-tools",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} not found in {names:?}"
        );
    }
    let mut modules = 0;
    for (dir, name) in all.iter().zip(&names) {
        let edges = graph(dir);
        modules += edges.len();
        let whole: Vec<&str> = CHECKED_WHOLE
            .iter()
            .filter(|(c, _)| c == name)
            .map(|(_, m)| *m)
            .collect();
        let edges = merged(edges, &whole);
        if let Some(found) = cycle(&edges) {
            panic!(
                "{name}: the modules refer to each other in a circle: {}",
                found.join(" -> ")
            );
        }
    }
    assert!(modules > 100, "too few modules found: {modules}");
}

/// The reader finds what it must: each kind of reference, and a circle.
#[test]
fn the_reader_sees_every_kind_of_reference() {
    let text = "use crate::a::{self, B};\nuse super::b;\n/// See [`crate::c`].\n// crate::d in a comment\nfn f() { crate::e::g(); let s = \"//\"; crate::h::X }\nuse crate::{i::{J, k::L}, m};\n";
    let found = paths(&without_comments(text));
    for want in [
        "crate::a::self",
        "crate::a::B",
        "super::b",
        "crate::c",
        "crate::e::g",
        "crate::h::X",
        "crate::i::J",
        "crate::i::k::L",
        "crate::m",
    ] {
        assert!(found.iter().any(|p| p == want), "{want}: {found:?}");
    }
    assert!(!found.iter().any(|p| p.contains("crate::d")), "{found:?}");
    let modules: BTreeSet<String> = ["a", "b", "s", "s::t", "s::u"].map(String::from).into();
    let reexports = BTreeMap::from([("Plan".to_string(), "a".to_string())]);
    let at = |m: &str, p: &str| resolve(m, p, &modules, &reexports);
    assert_eq!(at("b", "crate::a::B").as_deref(), Some("a"));
    assert_eq!(at("b", "super::a").as_deref(), Some("a"));
    assert_eq!(at("s::t", "super::u::X").as_deref(), Some("s::u"));
    assert_eq!(at("s::t", "crate::Plan").as_deref(), Some("a"));
    assert_eq!(at("s", "self::t").as_deref(), Some("s::t"));
    let edges: BTreeMap<String, BTreeSet<String>> =
        [("a", vec!["b"]), ("b", vec!["s::t"]), ("s::t", vec!["a"])]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
            .collect();
    assert_eq!(cycle(&edges).unwrap().len(), 4);
    // Merged into `s`, the circle through `s::t` is still found; one only
    // among `s`'s own submodules is not.
    assert_eq!(cycle(&merged(edges, &["s"])).unwrap().len(), 4);
    let inner: BTreeMap<String, BTreeSet<String>> =
        [("s::t", vec!["s::u"]), ("s::u", vec!["s::t"])]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
            .collect();
    assert!(cycle(&inner).is_some());
    assert_eq!(cycle(&merged(inner, &["s"])), None);
}
