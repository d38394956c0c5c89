//! `file_grep`: a regex search over a file or tree, built on ripgrep's crates.
//!
//! The walk respects `.gitignore`, follows no symlink, and passes every entry
//! through the path gate before a byte of it is read. Each file is opened
//! beneath the walk's held root without following a symlink
//! ([`crate::judged::Root`]), so a swap during the walk cannot point a read
//! at another file.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::WalkState;
use serde_json::json;

use crate::error::ToolError;
use crate::judged::{Root, Target};
use crate::output::ToolOutput;
use crate::walk::{
    changed_note, glob_matches, name_glob, searching_walker, skipped_note, EntryGate, WalkOptions,
};

/// Characters of one matching line that are returned; the rest is cut.
pub const MAX_LINE_CHARS: usize = 400;

/// What to search for.
#[derive(Debug, Clone)]
pub struct GrepQuery<'a> {
    /// The regex (Rust `regex` syntax).
    pub pattern: &'a str,
    /// Only files whose name (or relative path, if it has a `/`) matches this glob.
    pub glob: Option<&'a str>,
    /// Match case-insensitively.
    pub ignore_case: bool,
    /// Stop after this many matching lines.
    pub max_results: usize,
    /// Walk options.
    pub options: WalkOptions,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Hit {
    path: PathBuf,
    line: u64,
    text: String,
}

/// Run `file_grep` under `root` (a directory or one file).
pub fn grep(
    target: &Target,
    query: &GrepQuery<'_>,
    gate: &EntryGate,
) -> Result<ToolOutput, ToolError> {
    let root = target.path.as_path();
    let (held, root_stat) = Root::open(target)?;
    let held = &held;
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(query.ignore_case)
        .build(query.pattern)
        .map_err(|e| {
            ToolError::invalid(format!(
                "`pattern` `{}` is not a valid regex: {}",
                query.pattern,
                first_line(&e.to_string())
            ))
        })?;
    let filter = match query.glob {
        Some(g) => Some(name_glob(g, "glob")?),
        None => None,
    };
    let hits: Mutex<Vec<Hit>> = Mutex::new(Vec::new());
    let found = AtomicUsize::new(0);
    let files_searched = AtomicUsize::new(0);
    let changed = AtomicUsize::new(0);
    let max = query.max_results;
    let walker = searching_walker(root, query.options, gate);
    walker.build_parallel().run(|| {
        let matcher = matcher.clone();
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .build();
        let filter = filter.clone();
        let hits = &hits;
        let found = &found;
        let files_searched = &files_searched;
        let changed = &changed;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            if let Some((m, by_path)) = &filter {
                if !glob_matches(m, *by_path, entry.path(), root) {
                    return WalkState::Continue;
                }
            }
            let path = entry.path();
            let opened = if entry.depth() == 0 {
                target
                    .open_read("read")
                    .ok()
                    .filter(|(_, st)| st.is_file() && !root_stat.is_dir())
            } else {
                match held.open_file(path) {
                    Ok(Some((file, st))) if Some(st.ino) == entry.ino() => Some((file, st)),
                    Ok(_) => None,
                    Err(e) if sandgate_sandbox::beneath::is_swapped(&e) => None,
                    Err(_) => return WalkState::Continue,
                }
            };
            let Some((file, _)) = opened else {
                changed.fetch_add(1, Ordering::Relaxed);
                return WalkState::Continue;
            };
            files_searched.fetch_add(1, Ordering::Relaxed);
            let mut local = Vec::new();
            let _ = searcher.search_file(
                &matcher,
                &file,
                Lossy(|line, text| {
                    if found.fetch_add(1, Ordering::Relaxed) >= max {
                        return Ok(false);
                    }
                    local.push(Hit {
                        path: path.to_path_buf(),
                        line,
                        text: clip(text.trim_end_matches(['\n', '\r'])),
                    });
                    Ok(true)
                }),
            );
            if !local.is_empty() {
                if let Ok(mut all) = hits.lock() {
                    all.extend(local);
                }
            }
            if found.load(Ordering::Relaxed) >= max {
                WalkState::Quit
            } else {
                WalkState::Continue
            }
        })
    });
    let mut hits = hits.into_inner().unwrap_or_else(|p| p.into_inner());
    hits.sort();
    let truncated = found.load(Ordering::Relaxed) > max;
    let mut text = String::new();
    for h in &hits {
        text.push_str(&format!("{}:{}:{}\n", h.path.display(), h.line, h.text));
    }
    if hits.is_empty() {
        text.push_str(&format!(
            "no match for `{}` under `{}`\n",
            query.pattern,
            root.display()
        ));
    }
    if truncated {
        text.push_str(&format!(
            "[sandgate: stopped after {max} matching lines; narrow the search or raise `max_results`]\n"
        ));
    }
    text.push_str(&skipped_note(gate.skipped()));
    let changed = changed.load(Ordering::Relaxed);
    text.push_str(&changed_note(changed));
    let matches: Vec<_> = hits
        .iter()
        .map(|h| json!({"path": h.path, "line": h.line, "text": h.text}))
        .collect();
    Ok(ToolOutput::new(
        text,
        json!({
            "root": root,
            "matches": matches,
            "files_searched": files_searched.load(Ordering::Relaxed),
            "skipped": gate.skipped(),
            "changed": changed,
            "truncated": truncated,
        }),
    ))
}

fn clip(line: &str) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        return line.to_string();
    }
    let cut: String = line.chars().take(MAX_LINE_CHARS).collect();
    format!("{cut} [… line cut]")
}

fn first_line(s: &str) -> &str {
    s.lines().last().unwrap_or(s).trim()
}
