//! The walking tools: `file_list`, `file_find`, `file_count` (and the gate that
//! `file_grep` shares with them).
//!
//! Every entry a walk visits goes through the path gate. Entries that a floor
//! or deny rule matches are skipped without a word about their content, and
//! only their number is reported. Symlinks are never followed: a link is
//! judged by where it points, listed by name at most, and never read.
//!
//! The walker goes by name, so every entry it reports is opened again beneath
//! the walk's held root ([`Root`]) without following any symlink before it is
//! listed or read: an entry that a concurrent swap put there (a directory
//! replaced by a symlink while the walk runs) is left out and counted as
//! changed.

use std::fs::FileType;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkState};
use sandgate_policy::{Access, Context, Policy, Verdict};
use serde_json::json;

use crate::error::ToolError;
use crate::judged::{Root, Target};
use crate::output::ToolOutput;

/// Entries `file_list` returns at most.
pub const MAX_LIST_ENTRIES: usize = 2000;
/// The deepest `file_list` goes.
pub const MAX_LIST_DEPTH: u64 = 20;

/// The path gate applied to every entry of a walk. Cheap to clone, shareable
/// across the walker's threads.
#[derive(Clone)]
pub struct EntryGate {
    policy: Arc<Policy>,
    ctx: Arc<Context>,
    skipped: Arc<AtomicUsize>,
}

impl EntryGate {
    /// A gate over `policy` in `ctx`, with a fresh skip counter.
    pub fn new(policy: Arc<Policy>, ctx: Arc<Context>) -> Self {
        EntryGate {
            policy,
            ctx,
            skipped: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Whether the walk may visit `path`. The walk starts at a canonical root
    /// and follows no link, so a non-link entry's path is already canonical; a
    /// link is judged by its target. A DENY is counted as skipped.
    pub fn admits(&self, path: &Path, file_type: Option<FileType>) -> bool {
        // The gate is off: every entry is allowed, as every call is.
        if !self.policy.settings().sandbox {
            return true;
        }
        let is_link = file_type.is_none_or(|t| t.is_symlink());
        let decision = if is_link {
            match path.to_str() {
                Some(p) => self.policy.evaluate_path(p, Access::Read, &self.ctx),
                None => {
                    self.skipped.fetch_add(1, Ordering::Relaxed);
                    return false;
                }
            }
        } else {
            self.policy.decide_canonical_path(path, Access::Read)
        };
        // ASK inside a walk does not prompt again: the walk's root was already
        // approved, and what is under it is covered unless a rule denies it.
        if decision.verdict == Verdict::Deny {
            self.skipped.fetch_add(1, Ordering::Relaxed);
            false
        } else {
            true
        }
    }

    /// How many entries were skipped so far.
    pub fn skipped(&self) -> usize {
        self.skipped.load(Ordering::Relaxed)
    }
}

/// Options shared by the walks that search (find, count, grep).
#[derive(Debug, Clone, Copy, Default)]
pub struct WalkOptions {
    /// Visit hidden files and directories (names starting with `.`).
    pub hidden: bool,
}

/// A walker over `root` that respects `.gitignore`, follows no link, and prunes
/// what the gate denies.
pub fn searching_walker(root: &Path, options: WalkOptions, gate: &EntryGate) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .follow_links(false)
        .hidden(!options.hidden)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .ignore(true)
        .parents(true);
    let g = gate.clone();
    builder
        .filter_entry(move |entry| entry.depth() == 0 || g.admits(entry.path(), entry.file_type()));
    builder
}

/// The note appended when entries changed during the walk.
pub fn changed_note(changed: usize) -> String {
    match changed {
        0 => String::new(),
        1 => "[sandgate: 1 entry changed during the walk (a symlink took its place) and was left out]\n".into(),
        n => format!("[sandgate: {n} entries changed during the walk (a symlink took their place) and were left out]\n"),
    }
}

/// The note appended when entries were skipped.
pub fn skipped_note(skipped: usize) -> String {
    match skipped {
        0 => String::new(),
        1 => "[sandgate: 1 entry was skipped: the policy denies it]\n".into(),
        n => format!("[sandgate: {n} entries were skipped: the policy denies them]\n"),
    }
}

fn relative(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// `file_list`: the entries of a directory down to `depth` levels (1 = its
/// direct children), directories marked with `/`, links with `@`.
pub fn list(target: &Target, depth: u64, gate: &EntryGate) -> Result<ToolOutput, ToolError> {
    let root = target.path.as_path();
    let (held, meta) = Root::open(target)?;
    if !meta.is_dir() {
        let text = format!("{} ({} bytes)\n", root.display(), meta.size);
        return Ok(ToolOutput::new(
            text,
            json!({"root": root, "entries": [{"path": ".", "kind": "file", "bytes": meta.size}], "skipped": 0, "truncated": false}),
        ));
    }
    let mut builder = WalkBuilder::new(root);
    builder
        .standard_filters(false)
        .follow_links(false)
        .max_depth(Some(depth as usize))
        .sort_by_file_name(|a, b| a.cmp(b));
    let g = gate.clone();
    builder
        .filter_entry(move |entry| entry.depth() == 0 || g.admits(entry.path(), entry.file_type()));
    let mut text = format!("{}/\n", root.display());
    let mut entries = Vec::new();
    let mut truncated = false;
    let mut changed = 0usize;
    for entry in builder.build() {
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        if entries.len() == MAX_LIST_ENTRIES {
            truncated = true;
            break;
        }
        let Some(st) = held.confirms(entry.path(), entry.ino()) else {
            changed += 1;
            continue;
        };
        let rel = relative(entry.path(), root);
        let indent = "  ".repeat(entry.depth() - 1);
        let name = entry.file_name().to_string_lossy();
        let (kind, mark, bytes) = if st.is_dir() {
            ("dir", "/", None)
        } else if st.is_symlink() {
            ("symlink", "@", None)
        } else if st.is_file() {
            ("file", "", Some(st.size))
        } else {
            ("other", "", None)
        };
        match bytes {
            Some(b) => text.push_str(&format!("{indent}{name}{mark} ({b} bytes)\n")),
            None => text.push_str(&format!("{indent}{name}{mark}\n")),
        }
        entries.push(json!({"path": rel, "kind": kind, "bytes": bytes}));
    }
    if truncated {
        text.push_str(&format!(
            "[sandgate: stopped after {MAX_LIST_ENTRIES} entries; list a subdirectory or use a smaller `depth`]\n"
        ));
    }
    text.push_str(&skipped_note(gate.skipped()));
    text.push_str(&changed_note(changed));
    Ok(ToolOutput::new(
        text,
        json!({"root": root, "entries": entries, "skipped": gate.skipped(), "changed": changed, "truncated": truncated}),
    ))
}

/// Compile a file-name glob for `file_find` / `file_grep`: a glob without `/`
/// matches the file name anywhere in the tree, one with `/` the path relative
/// to the root.
pub fn name_glob(glob: &str, param: &str) -> Result<(GlobMatcher, bool), ToolError> {
    let matcher = GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map_err(|e| {
            ToolError::invalid(format!(
                "`{param}` `{glob}` is not a valid glob: {}",
                e.kind()
            ))
        })?
        .compile_matcher();
    Ok((matcher, glob.contains('/')))
}

/// Whether `path` (under `root`) matches a glob from [`name_glob`].
pub fn glob_matches(matcher: &GlobMatcher, by_path: bool, path: &Path, root: &Path) -> bool {
    if by_path {
        path.strip_prefix(root)
            .is_ok_and(|rel| matcher.is_match(rel))
    } else {
        path.file_name().is_some_and(|n| matcher.is_match(n))
    }
}

/// `file_find`: paths under `root` matching `glob`.
pub fn find(
    target: &Target,
    glob: &str,
    max_results: usize,
    options: WalkOptions,
    gate: &EntryGate,
) -> Result<ToolOutput, ToolError> {
    let root = target.path.as_path();
    let (held, _) = Root::open(target)?;
    let (matcher, by_path) = name_glob(glob, "glob")?;
    let mut found: Vec<PathBuf> = Vec::new();
    let mut truncated = false;
    let mut changed = 0usize;
    for entry in searching_walker(root, options, gate).build() {
        let Ok(entry) = entry else { continue };
        if !glob_matches(&matcher, by_path, entry.path(), root) {
            continue;
        }
        if entry.depth() > 0 && held.confirms(entry.path(), entry.ino()).is_none() {
            changed += 1;
            continue;
        }
        if found.len() == max_results {
            truncated = true;
            break;
        }
        found.push(entry.into_path());
    }
    found.sort();
    let mut text: String = found.iter().map(|p| format!("{}\n", p.display())).collect();
    if found.is_empty() {
        text.push_str(&format!(
            "no path under `{}` matches `{glob}`\n",
            root.display()
        ));
    }
    if truncated {
        text.push_str(&format!(
            "[sandgate: stopped after {max_results} results; narrow the glob or raise `max_results`]\n"
        ));
    }
    text.push_str(&skipped_note(gate.skipped()));
    text.push_str(&changed_note(changed));
    Ok(ToolOutput::new(
        text,
        json!({"root": root, "matches": found, "skipped": gate.skipped(), "changed": changed, "truncated": truncated}),
    ))
}

/// Line, word and byte counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Newline characters, as `wc -l` counts.
    pub lines: u64,
    /// Runs of non-whitespace, as `wc -w` counts.
    pub words: u64,
    /// Bytes.
    pub bytes: u64,
}

/// Count lines, words and bytes of what `file` holds.
pub fn count_file(mut file: impl Read) -> std::io::Result<Counts> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut c = Counts::default();
    let mut in_word = false;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        c.bytes += n as u64;
        for &b in &buf[..n] {
            if b == b'\n' {
                c.lines += 1;
            }
            let space = b.is_ascii_whitespace();
            if !space && !in_word {
                c.words += 1;
            }
            in_word = !space;
        }
    }
    Ok(c)
}

/// `file_count`: lines, words and bytes of a file, or summed over a tree.
pub fn count(
    target: &Target,
    options: WalkOptions,
    gate: &EntryGate,
) -> Result<ToolOutput, ToolError> {
    let root = target.path.as_path();
    let (held, meta) = Root::open(target)?;
    if !meta.is_dir() {
        let (file, st) = target.open_read("read")?;
        if !st.is_file() {
            return Err(ToolError::failed(format!(
                "`{}` is not a regular file",
                root.display()
            )));
        }
        let c = count_file(file).map_err(|e| ToolError::io("read", root, &e))?;
        return Ok(ToolOutput::new(
            format!(
                "{} lines, {} words, {} bytes: {}\n",
                c.lines,
                c.words,
                c.bytes,
                root.display()
            ),
            json!({"root": root, "files": 1, "lines": c.lines, "words": c.words, "bytes": c.bytes, "skipped": 0}),
        ));
    }
    let mut total = Counts::default();
    let mut files = 0u64;
    let mut unreadable = 0u64;
    let mut changed = 0usize;
    for entry in searching_walker(root, options, gate).build() {
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let file = match held.open_file(entry.path()) {
            Ok(Some((file, st))) if Some(st.ino) == entry.ino() => file,
            Ok(_) => {
                changed += 1;
                continue;
            }
            Err(e) if sandgate_sandbox::beneath::is_swapped(&e) => {
                changed += 1;
                continue;
            }
            Err(_) => {
                unreadable += 1;
                continue;
            }
        };
        match count_file(file) {
            Ok(c) => {
                files += 1;
                total.lines += c.lines;
                total.words += c.words;
                total.bytes += c.bytes;
            }
            Err(_) => unreadable += 1,
        }
    }
    let mut text = format!(
        "{} lines, {} words, {} bytes in {files} file{} under {}\n",
        total.lines,
        total.words,
        total.bytes,
        if files == 1 { "" } else { "s" },
        root.display()
    );
    if unreadable > 0 {
        text.push_str(&format!(
            "[sandgate: {unreadable} files could not be read]\n"
        ));
    }
    text.push_str(&skipped_note(gate.skipped()));
    text.push_str(&changed_note(changed));
    Ok(ToolOutput::new(
        text,
        json!({"root": root, "files": files, "lines": total.lines, "words": total.words, "bytes": total.bytes, "skipped": gate.skipped(), "changed": changed, "unreadable": unreadable}),
    ))
}

/// Run `visit` on every entry of a parallel walk; `visit` returns `false` to stop the walk.
pub fn parallel_walk<F>(builder: &WalkBuilder, visit: F)
where
    F: Fn(&ignore::DirEntry) -> bool + Sync,
{
    builder.build_parallel().run(|| {
        Box::new(|entry| match entry {
            Ok(entry) => {
                if visit(&entry) {
                    WalkState::Continue
                } else {
                    WalkState::Quit
                }
            }
            Err(_) => WalkState::Continue,
        })
    });
}
