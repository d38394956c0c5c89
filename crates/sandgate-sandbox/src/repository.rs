//! The protected paths a repository names beyond the built-in list
//! ([`sandgate_policy::protected`]): the hooks and config of each submodule's
//! repository in `.git/modules`, and the directory the repository's
//! `core.hooksPath` points to (`.githooks`, husky's `.husky/_`). Git runs
//! what is in them, outside any sandbox, as it runs `.git/hooks`.
//!
//! `core.hooksPath` is read from `.git/config` by hand: one key of one
//! section, in the file sandgate holds read-only for the whole run, so what
//! it says cannot change under it. A git-config crate would add a dozen
//! crates to every `sandgate exec` for that one key. Values set only in
//! `~/.gitconfig`, in the system config or through `include.path` are not
//! read: a hooks directory named there usually lies outside the writable
//! tree, and one inside can be listed with `protect`.

use std::path::{Path, PathBuf};

use sandgate_policy::protected::{ProtectedPath, SUBMODULE_WHY};

/// Why the `core.hooksPath` directory is protected.
pub const HOOKS_PATH_WHY: &str =
    "the hooks directory this repository's core.hooksPath names: git runs the programs in it";

/// The largest `.git/config` read (a larger one is not looked into).
const CONFIG_LIMIT: u64 = 1 << 20;

/// The protected paths repository `root` names, whether or not each exists.
pub fn protected_entries(root: &Path) -> Vec<ProtectedPath> {
    let mut out: Vec<ProtectedPath> = submodule_entries(root)
        .into_iter()
        .map(|path| ProtectedPath {
            path,
            why: SUBMODULE_WHY.to_string(),
            only_file: false,
        })
        .collect();
    if let Some(dir) = configured_hooks(root) {
        out.push(ProtectedPath {
            path: dir,
            why: HOOKS_PATH_WHY.to_string(),
            only_file: false,
        });
    }
    out
}

/// The directory `core.hooksPath` in `root/.git/config` names: relative to
/// `root` (where git runs hooks) or absolute; `None` when it is not set, is
/// empty, starts with `~` or the file cannot be read.
fn configured_hooks(root: &Path) -> Option<PathBuf> {
    let file = root.join(".git/config");
    let meta = std::fs::symlink_metadata(&file).ok()?;
    if !meta.is_file() || meta.len() > CONFIG_LIMIT {
        return None;
    }
    let text = std::fs::read_to_string(&file).ok()?;
    let value = hooks_path(&text)?;
    if value.is_empty() || value.starts_with('~') {
        return None;
    }
    Some(sandgate_policy::canon::normalize_lexically(
        &root.join(value),
    ))
}

/// The last `hooksPath` of section `core` in git config text. Section and
/// key names are case-insensitive; a section header may share its line with
/// a key; a value may be quoted (with `\"` and `\\` escapes) and followed
/// by a `#` or `;` comment.
fn hooks_path(text: &str) -> Option<String> {
    let mut in_core = false;
    let mut found = None;
    for line in text.lines() {
        let mut rest = line.trim();
        if rest.starts_with('[') {
            let Some(end) = rest.find(']') else {
                in_core = false;
                continue;
            };
            in_core = rest[1..end].trim().eq_ignore_ascii_case("core");
            rest = rest[end + 1..].trim();
        }
        if !in_core || rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
            continue;
        }
        let (key, value) = rest.split_once('=').unwrap_or((rest, ""));
        if key.trim().eq_ignore_ascii_case("hookspath") {
            found = Some(config_value(value.trim()));
        }
    }
    found
}

/// A git config value: quotes removed, escapes undone, a trailing comment
/// outside quotes dropped, surrounding blanks trimmed.
fn config_value(raw: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => {
                if let Some(next) = chars.next() {
                    out.push(match next {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                }
            }
            '#' | ';' if !quoted => break,
            other => out.push(other),
        }
    }
    out.trim().to_string()
}

/// How many submodule repositories [`submodule_entries`] looks at, at most.
const SUBMODULE_BUDGET: usize = 1_000;

/// The protected entries ([`sandgate_policy::protected::SUBMODULE_ENTRIES`])
/// of every submodule repository in `root/.git/modules`, nested ones too,
/// whether or not each entry exists: a directory there with a `HEAD` is a
/// repository. Nothing when `.git` is not a directory or has no modules
/// (the usual case: one `stat`). Symbolic links are not followed.
pub fn submodule_entries(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![root.join(".git/modules")];
    let mut budget = SUBMODULE_BUDGET;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if budget == 0 {
                return out;
            }
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let path = entry.path();
            if std::fs::symlink_metadata(path.join("HEAD")).is_ok() {
                budget -= 1;
                for name in sandgate_policy::protected::SUBMODULE_ENTRIES {
                    out.push(path.join(name));
                }
                pending.push(path.join("modules"));
            } else {
                // A submodule named `a/b` lives in `modules/a/b`.
                pending.push(path);
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submodule_repositories_are_found_nested_and_by_slashed_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(submodule_entries(root).is_empty());
        for repo in ["a", "lib/b", "a/modules/c"] {
            let git_dir = root.join(".git/modules").join(repo);
            std::fs::create_dir_all(git_dir.join("objects")).unwrap();
            std::fs::write(git_dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        }
        let found = submodule_entries(root);
        for repo in ["a", "lib/b", "a/modules/c"] {
            for name in sandgate_policy::protected::SUBMODULE_ENTRIES {
                let want = root.join(".git/modules").join(repo).join(name);
                assert!(found.contains(&want), "{}: {found:?}", want.display());
            }
        }
        assert_eq!(
            found.len(),
            3 * sandgate_policy::protected::SUBMODULE_ENTRIES.len()
        );
        // A `.git` file (a worktree) has no modules to look at.
        let worktree = tempfile::tempdir().unwrap();
        std::fs::write(worktree.path().join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert!(submodule_entries(worktree.path()).is_empty());
    }

    #[test]
    fn core_hooks_path_is_read_as_git_reads_it() {
        let cases: &[(&str, Option<&str>)] = &[
            ("[core]\n\thooksPath = .githooks\n", Some(".githooks")),
            ("[Core]\n\tHOOKSPATH=.husky/_\n", Some(".husky/_")),
            ("[core] hooksPath = hooks # shared\n", Some("hooks")),
            (
                "[core]\n\thooksPath = \"my hooks\" ; quoted\n",
                Some("my hooks"),
            ),
            (
                "[core]\n\thooksPath = a\n[core]\n\thooksPath = b\n",
                Some("b"),
            ),
            ("[user]\n\thooksPath = no\n[core]\n\tbare = false\n", None),
            ("[core \"x\"]\n\thooksPath = sub\n", None),
            ("# [core]\n# hooksPath = commented\n", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(hooks_path(text).as_deref(), *want, "{text:?}");
        }
    }

    #[test]
    fn the_hooks_directory_is_protected_relative_to_the_worktree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(protected_entries(root).is_empty());
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(
            root.join(".git/config"),
            "[core]\n\thooksPath = ./tools/../.githooks\n",
        )
        .unwrap();
        let entries = protected_entries(root);
        assert_eq!(entries.len(), 1, "{entries:?}");
        assert_eq!(entries[0].path, root.join(".githooks"));
        assert_eq!(entries[0].why, HOOKS_PATH_WHY);
        std::fs::write(root.join(".git/config"), "[core]\n\thooksPath = ~/hooks\n").unwrap();
        assert!(protected_entries(root).is_empty());
        std::fs::write(
            root.join(".git/config"),
            "[core]\n\thooksPath = /opt/hooks\n",
        )
        .unwrap();
        assert_eq!(protected_entries(root)[0].path, Path::new("/opt/hooks"));
    }
}
