//! The protected paths a repository names beyond the built-in list
//! ([`sandgate_policy::protected`]). Git runs what they hold, outside any
//! sandbox, as it runs `.git/hooks`:
//! - the hooks and config of each submodule's repository in `.git/modules`;
//! - each linked worktree's `commondir` and `config.worktree` in
//!   `.git/worktrees/NAME`, which git reads when it runs in that worktree;
//! - the directory the repository's `core.hooksPath` names (`.githooks`,
//!   husky's `.husky/_`);
//! - the repositories inside the project at start: each submodule checkout
//!   that `.gitmodules` lists and each directory directly inside the root
//!   (a folder of projects) whose `.git` is a directory (its hooks and
//!   config, and the same again for what it holds) or a file (which names
//!   the repository git uses there: held as a whole, with the repository it
//!   names when that is not a submodule's).
//!
//! The two git files read, `.git/config` for `core.hooksPath` and
//! `.gitmodules` for the submodules' paths, are read by hand: one key each,
//! in files sandgate holds read-only for the whole run, so what they say
//! cannot change under it. A git-config crate would add a dozen crates to
//! every `sandgate exec` for those two keys. Values set only in
//! `~/.gitconfig`, in the system config or through `include.path` are not
//! read: a hooks directory named there usually lies outside the writable
//! tree, and one inside can be listed with `protect`. Repositories deeper
//! than one directory below the root that no `.gitmodules` lists are not
//! looked for.

use std::path::{Path, PathBuf};

use sandgate_policy::canon::normalize_lexically;
use sandgate_policy::protected::{ProtectedPath, GIT_FILE_WHY, SUBMODULE_ENTRIES, SUBMODULE_WHY};

/// Why the `core.hooksPath` directory is protected.
pub const HOOKS_PATH_WHY: &str =
    "the hooks directory this repository's core.hooksPath names: git runs the programs in it";

/// Why a linked worktree's entries are protected.
pub const WORKTREE_WHY: &str =
    "a linked worktree's settings: git run in that worktree reads them (commondir sends it to another directory's config and hooks)";

/// Why a repository inside the project is protected like the project's own.
pub const NESTED_WHY: &str =
    "a repository inside the project: git run there runs what its config and hooks name";

/// What a linked worktree's directory (`.git/worktrees/NAME`) holds that
/// sends git elsewhere.
const WORKTREE_ENTRIES: &[&str] = &["commondir", "config.worktree"];

/// The largest git file read (a larger one is not looked into).
const CONFIG_LIMIT: u64 = 1 << 20;

/// How many repositories (submodules, worktrees, nested ones) are looked
/// at, at most, and how many directories inside a root are looked into.
const REPOSITORY_BUDGET: usize = 1_000;
const CHILD_BUDGET: usize = 4_096;

/// How deep repositories inside repositories are followed.
const NESTING: usize = 3;

/// The protected paths repository `root` names, whether or not each exists.
/// The `.git` entries of `root` itself are the built-in list's.
pub fn protected_entries(root: &Path) -> Vec<ProtectedPath> {
    let mut out = Vec::new();
    let mut budget = REPOSITORY_BUDGET;
    collect(root, NESTING, &mut budget, &mut out);
    out
}

fn entry(path: PathBuf, why: &str, only_file: bool) -> ProtectedPath {
    ProtectedPath {
        path,
        why: why.to_string(),
        only_file,
    }
}

fn collect(root: &Path, depth: usize, budget: &mut usize, out: &mut Vec<ProtectedPath>) {
    let git_dir = root.join(".git");
    out.extend(
        git_dir_entries(&git_dir, budget)
            .into_iter()
            .map(|(path, why)| entry(path, why, false)),
    );
    if let Some(dir) = configured_hooks(root) {
        out.push(entry(dir, HOOKS_PATH_WHY, false));
    }
    if depth == 0 {
        return;
    }
    for child in inner_candidates(root) {
        if *budget == 0 {
            return;
        }
        let dot_git = child.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
            continue;
        };
        *budget -= 1;
        if meta.is_dir() {
            for name in SUBMODULE_ENTRIES {
                out.push(entry(dot_git.join(name), NESTED_WHY, false));
            }
            collect(&child, depth - 1, budget, out);
        } else if meta.is_file() {
            out.push(entry(dot_git.clone(), GIT_FILE_WHY, true));
            // The repository it names, unless it is a submodule's, whose
            // entries the walk of `.git/modules` lists already.
            if let Some(named) = gitdir_of(&dot_git) {
                if !named.starts_with(root.join(".git/modules")) {
                    for name in SUBMODULE_ENTRIES {
                        out.push(entry(named.join(name), NESTED_WHY, false));
                    }
                }
            }
            collect(&child, depth - 1, budget, out);
        }
    }
}

/// The entries of git directory `git_dir` beyond the built-in list: each
/// submodule repository's in `modules` (nested ones too) and each linked
/// worktree's in `worktrees`, of the git directory and of every submodule
/// repository. Nothing when `git_dir` is not a directory or has neither
/// (the usual case: two failed `open`s). A directory in `modules` with a
/// `HEAD` is a repository; symbolic links are not followed.
fn git_dir_entries(git_dir: &Path, budget: &mut usize) -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    let mut repositories = vec![git_dir.to_path_buf()];
    let mut pending = vec![git_dir.join("modules")];
    while let Some(dir) = pending.pop() {
        for path in subdirectories(&dir) {
            if *budget == 0 {
                break;
            }
            if std::fs::symlink_metadata(path.join("HEAD")).is_ok() {
                *budget -= 1;
                for name in SUBMODULE_ENTRIES {
                    out.push((path.join(name), SUBMODULE_WHY));
                }
                pending.push(path.join("modules"));
                repositories.push(path);
            } else {
                // A submodule named `a/b` lives in `modules/a/b`.
                pending.push(path);
            }
        }
    }
    for repository in repositories {
        for worktree in subdirectories(&repository.join("worktrees")) {
            if *budget == 0 {
                break;
            }
            *budget -= 1;
            for name in WORKTREE_ENTRIES {
                out.push((worktree.join(name), WORKTREE_WHY));
            }
        }
    }
    out.sort();
    out
}

/// The directories directly in `dir` (not through symbolic links), sorted.
fn subdirectories(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .take(CHILD_BUDGET)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// Where a repository inside `root` may be: each submodule path
/// `root/.gitmodules` lists (inside `root`), then each directory directly
/// in `root` but `.git`, each once.
fn inner_candidates(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = read_small(&root.join(".gitmodules"))
        .map(|text| {
            values(&text, |section| section.starts_with("submodule"), "path")
                .into_iter()
                .map(|path| normalize_lexically(&root.join(path)))
                .filter(|path| path.starts_with(root) && path != root)
                .collect()
        })
        .unwrap_or_default();
    for dir in subdirectories(root) {
        if dir.file_name().is_some_and(|n| n != ".git") && !out.contains(&dir) {
            out.push(dir);
        }
    }
    out
}

/// The repository a `.git` file names, read as git reads it: the text
/// after `gitdir: ` up to a NUL, without the line breaks at its end (blanks
/// stay: they are part of the name), relative to the file's directory.
fn gitdir_of(dot_git: &Path) -> Option<PathBuf> {
    let text = read_small(dot_git)?;
    let named = gitdir_named(&text)?;
    Some(normalize_lexically(&dot_git.parent()?.join(named)))
}

fn gitdir_named(text: &str) -> Option<&str> {
    let text = text.split('\0').next()?;
    let named = text
        .strip_prefix("gitdir: ")?
        .trim_end_matches(['\n', '\r']);
    (!named.is_empty()).then_some(named)
}

/// The text of regular file `file`, when it is one of at most
/// [`CONFIG_LIMIT`] bytes.
/// A symbolic link is not followed, and a FIFO swapped in after a look is
/// refused on the opened descriptor, so nothing a program leaves in the
/// workdir can hang the next start.
fn read_small(file: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(file).ok()?;
    if !meta.is_file() {
        return None;
    }
    let bytes = sandgate_policy::load::read_regular(file, CONFIG_LIMIT).ok()?;
    String::from_utf8(bytes).ok()
}

/// The directory `core.hooksPath` in `root/.git/config` names: relative to
/// `root` (where git runs hooks) or absolute; `None` when it is not set, is
/// empty, starts with `~` or the file cannot be read.
fn configured_hooks(root: &Path) -> Option<PathBuf> {
    let text = read_small(&root.join(".git/config"))?;
    let value = hooks_path(&text)?;
    if value.is_empty() || value.starts_with('~') {
        return None;
    }
    Some(normalize_lexically(&root.join(value)))
}

/// The last `core.hooksPath` in git config text (a later one wins).
fn hooks_path(text: &str) -> Option<String> {
    values(
        text,
        |section| section.eq_ignore_ascii_case("core"),
        "hookspath",
    )
    .pop()
}

/// Every value of `key` (compared without case) in the sections of git
/// config text whose header (between the brackets, trimmed) `section`
/// accepts, in order. A header may share its line with a key; `#` and `;`
/// start comments outside quotes.
fn values(text: &str, section: impl Fn(&str) -> bool, key: &str) -> Vec<String> {
    let mut inside = false;
    let mut found = Vec::new();
    for line in text.lines() {
        let mut rest = line.trim();
        if rest.starts_with('[') {
            let Some(end) = rest.find(']') else {
                inside = false;
                continue;
            };
            inside = section(rest[1..end].trim());
            rest = rest[end + 1..].trim();
        }
        if !inside || rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
            continue;
        }
        let (name, value) = rest.split_once('=').unwrap_or((rest, ""));
        if name.trim().eq_ignore_ascii_case(key) {
            found.push(config_value(value.trim()));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submodule_repositories_are_found_nested_and_by_slashed_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let entries = |root: &Path| -> Vec<PathBuf> {
            git_dir_entries(&root.join(".git"), &mut { REPOSITORY_BUDGET })
                .into_iter()
                .map(|(path, _)| path)
                .collect()
        };
        assert!(entries(root).is_empty());
        for repo in ["a", "lib/b", "a/modules/c"] {
            let git_dir = root.join(".git/modules").join(repo);
            std::fs::create_dir_all(git_dir.join("objects")).unwrap();
            std::fs::write(git_dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        }
        let found = entries(root);
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
        assert!(entries(worktree.path()).is_empty());
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

    #[test]
    fn linked_worktrees_are_found_in_the_repository_and_its_submodules() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for admin in [".git/worktrees/wt", ".git/modules/lib/worktrees/other"] {
            std::fs::create_dir_all(root.join(admin)).unwrap();
        }
        std::fs::write(root.join(".git/modules/lib/HEAD"), "ref: refs/heads/main\n").unwrap();
        let found: Vec<PathBuf> = protected_entries(root)
            .into_iter()
            .map(|e| e.path)
            .collect();
        for want in [
            ".git/worktrees/wt/commondir",
            ".git/worktrees/wt/config.worktree",
            ".git/modules/lib/worktrees/other/commondir",
            ".git/modules/lib/hooks",
        ] {
            assert!(found.contains(&root.join(want)), "{want}: {found:?}");
        }
    }

    #[test]
    fn repositories_inside_the_project_are_protected_like_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // A folder of projects: one repository per directory, one of them
        // with a submodule of its own, checked out with a `.git` file.
        for d in [
            "a/.git/modules/x",
            "b/.git",
            "a/deep/x",
            "plain/sub/.git",
            "other/.git",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("a/.git/modules/x/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(
            root.join("a/.gitmodules"),
            "[submodule \"x\"]\n\tpath = deep/x\n",
        )
        .unwrap();
        std::fs::write(root.join("a/deep/x/.git"), "gitdir: ../../.git/modules/x\n").unwrap();
        // A worktree checked out in the project, and a `.git` file naming a
        // repository that is no submodule's.
        std::fs::create_dir_all(root.join("wt")).unwrap();
        std::fs::write(root.join("wt/.git"), "gitdir: ../store/wt.git\n").unwrap();
        // `.gitmodules` paths outside the root are not followed.
        std::fs::write(
            root.join(".gitmodules"),
            "[submodule \"out\"]\n\tpath = ../elsewhere\n[submodule \"in\"]\n\tpath = plain/sub\n",
        )
        .unwrap();
        let entries = protected_entries(root);
        let has = |p: &str, only_file: bool| {
            entries
                .iter()
                .any(|e| e.path == root.join(p) && e.only_file == only_file)
        };
        for p in [
            "a/.git/hooks",
            "a/.git/config",
            "b/.git/config",
            "other/.git/commondir",
            "plain/sub/.git/hooks",
        ] {
            assert!(has(p, false), "{p}: {entries:?}");
        }
        assert!(has("a/.git/modules/x/config", false), "{entries:?}");
        assert!(has("a/deep/x/.git", true), "{entries:?}");
        assert!(has("wt/.git", true), "{entries:?}");
        assert!(has("store/wt.git/hooks", false), "{entries:?}");
        assert_eq!(
            entries
                .iter()
                .filter(|e| e.path == root.join("a/.git/modules/x/hooks"))
                .count(),
            1,
            "a submodule's repository is listed once, as a submodule's: {entries:?}"
        );
        assert!(
            !entries.iter().any(|e| !e.path.starts_with(root)),
            "{entries:?}"
        );
        assert!(
            !has(".git/hooks", false),
            "the root's own entries are the built-in list's"
        );
    }

    #[test]
    fn gitmodules_paths_are_read_from_submodule_sections() {
        let text = "[submodule \"a\"]\n\tpath = libs/a\n\turl = x\n[core]\n\tpath = no\n[submodule \"b\"] path = \"libs/b c\"\n";
        assert_eq!(
            values(text, |s| s.starts_with("submodule"), "path"),
            ["libs/a", "libs/b c"]
        );
    }

    #[test]
    fn a_git_file_is_read_as_git_reads_it() {
        let long = format!("gitdir: ../x{}", "\n".repeat(9_000));
        let cases: &[(&str, Option<&str>)] = &[
            ("gitdir: ../.git/modules/a\n", Some("../.git/modules/a")),
            ("gitdir: spaced \r\n", Some("spaced ")),
            (&long, Some("../x")),
            ("gitdir: a\0b\n", Some("a")),
            ("gitdir:a\n", None),
            ("gitdir: \n", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(gitdir_named(text), *want, "{text:?}");
        }
    }
}
