//! The README is the front door: it stays short, links every page under
//! `docs/`, and every link in the README and the pages leads somewhere (a
//! file that exists, and a heading that exists for a `#fragment`).

#![allow(clippy::expect_used)]
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pages checked: the README and every Markdown file under `docs/`.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.expect("a readable docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The lines of a page outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// A heading's anchor as GitHub makes it: lower case, punctuation other than
/// `-` and `_` dropped, spaces made hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .into_iter()
        .filter_map(|line| {
            let hashes = line.chars().take_while(|&c| c == '#').count();
            (1..=6).contains(&hashes).then(|| &line[hashes..])
        })
        .filter(|rest| rest.starts_with(' '))
        .map(anchor)
        .collect()
}

/// Every `[text](target)` link target on the page's prose lines, without
/// inline code spans.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in prose(text) {
        let mut outside_code = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                outside_code.push_str(part);
            }
        }
        let mut rest = outside_code.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    found
}

#[test]
fn every_link_in_the_readme_and_the_docs_leads_somewhere() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("a readable page");
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") {
                continue;
            }
            let (file, fragment) = match link.split_once('#') {
                Some((file, fragment)) => (file, Some(fragment)),
                None => (link.as_str(), None),
            };
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().expect("a page has a directory").join(file)
            };
            if !target.exists() {
                broken.push(format!("{}: `{link}`: no such file", page.display()));
                continue;
            }
            if let Some(fragment) = fragment {
                let target_text = std::fs::read_to_string(&target).unwrap_or_default();
                if !anchors(&target_text).contains(fragment) {
                    broken.push(format!("{}: `{link}`: no such heading", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_a_short_front_door_that_links_every_docs_page() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 400,
        "README.md has {lines} lines; the reference belongs in docs/"
    );
    let linked: BTreeSet<String> = links(&readme).into_iter().collect();
    for page in pages().into_iter().skip(1) {
        let name = format!(
            "docs/{}",
            page.file_name().expect("a page name").to_string_lossy()
        );
        assert!(
            linked
                .iter()
                .any(|link| link.split('#').next() == Some(name.as_str())),
            "README.md does not link {name}"
        );
    }
    for pair in ["cargo install --locked", "cargo test --workspace --locked"] {
        assert!(readme.contains(pair), "README.md lacks `{pair}`");
    }
}

#[test]
fn the_anchor_rules_are_githubs() {
    assert_eq!(
        anchor(" Starter policies: `sandgate init`"),
        "starter-policies-sandgate-init"
    );
    assert_eq!(
        anchor(" `sandgate policy allow|deny|remove` and `sandgate policy lint`"),
        "sandgate-policy-allowdenyremove-and-sandgate-policy-lint"
    );
    assert_eq!(
        links("see [a](docs/x.md#y) and `[b](c)` [d](#e)"),
        ["docs/x.md#y", "#e"]
    );
}
