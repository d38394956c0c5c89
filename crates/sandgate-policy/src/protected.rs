//! Protected paths: places inside a writable tree that stay read-only to a
//! confined command, because what is written there runs later, outside the
//! sandbox (git hooks, shell start-up files, an agent's commands and MCP
//! servers, an editor's tasks) or decides what sandgate allows.
//!
//! This is the one list. Exec isolation (`permissions.exec.isolation`) and
//! `sandgate run` both read it, `--dry-run` of each shows it, and the policy
//! extends it (`exec.isolation.protect`, `sandbox.json` `protect`). Each
//! entry says why it is there. Writing a protected path fails, and so does
//! creating one that does not exist yet; git's objects, refs and index stay
//! writable, so `git commit`, `git checkout` and `git fetch` work.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Where a protected entry is looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Base {
    /// In every writable project root (the exec workdir, each `sandgate run` workspace).
    Work,
    /// In the project roots and in the home directory.
    WorkAndHome,
}

/// One protected path, relative to its base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ProtectedEntry {
    /// The path relative to its base (`.git/hooks`).
    pub path: &'static str,
    /// Where it is looked for.
    pub base: Base,
    /// Why it is protected, in words.
    pub why: &'static str,
}

const SHELL: &str = "a shell start-up file: it runs in every new shell";
const AGENT_SETTINGS: &str =
    "the agent's settings: its hooks (sandgate's among them), which run outside any sandbox, and its permission rules";

/// The built-in list.
pub const PROTECTED: &[ProtectedEntry] = &[
    ProtectedEntry {
        path: ".git/hooks",
        base: Base::Work,
        why: "git runs these programs on commit, checkout, merge and push",
    },
    ProtectedEntry {
        path: ".git/config",
        base: Base::Work,
        why: "can name programs git runs (core.fsmonitor, core.hooksPath, aliases, filters)",
    },
    ProtectedEntry {
        path: ".git/commondir",
        base: Base::Work,
        why: "sends git to another directory's config and hooks",
    },
    ProtectedEntry {
        path: ".git/config.worktree",
        base: Base::Work,
        why: "git's per-worktree settings, read like .git/config when worktreeConfig is on",
    },
    ProtectedEntry {
        path: ".gitmodules",
        base: Base::Work,
        why: "names the submodules git fetches and where",
    },
    ProtectedEntry {
        path: ".sandgate",
        base: Base::Work,
        why: "sandgate's own settings for this project",
    },
    ProtectedEntry {
        path: ".gitconfig",
        base: Base::WorkAndHome,
        why: "git's settings: programs git runs",
    },
    ProtectedEntry {
        path: ".bashrc",
        base: Base::WorkAndHome,
        why: SHELL,
    },
    ProtectedEntry {
        path: ".bash_profile",
        base: Base::WorkAndHome,
        why: SHELL,
    },
    ProtectedEntry {
        path: ".bash_login",
        base: Base::WorkAndHome,
        why: SHELL,
    },
    ProtectedEntry {
        path: ".bash_logout",
        base: Base::WorkAndHome,
        why: SHELL,
    },
    ProtectedEntry {
        path: ".profile",
        base: Base::WorkAndHome,
        why: SHELL,
    },
    ProtectedEntry {
        path: ".zshrc",
        base: Base::WorkAndHome,
        why: SHELL,
    },
    ProtectedEntry {
        path: ".zshenv",
        base: Base::WorkAndHome,
        why: SHELL,
    },
    ProtectedEntry {
        path: ".zprofile",
        base: Base::WorkAndHome,
        why: SHELL,
    },
    ProtectedEntry {
        path: ".zlogin",
        base: Base::WorkAndHome,
        why: SHELL,
    },
    ProtectedEntry {
        path: ".ripgreprc",
        base: Base::WorkAndHome,
        why: "ripgrep's settings: can name programs it runs (--pre)",
    },
    ProtectedEntry {
        path: ".claude/settings.json",
        base: Base::WorkAndHome,
        why: AGENT_SETTINGS,
    },
    ProtectedEntry {
        path: ".claude/settings.local.json",
        base: Base::Work,
        why: AGENT_SETTINGS,
    },
    ProtectedEntry {
        path: ".claude/hooks",
        base: Base::WorkAndHome,
        why: "where the agent's hook scripts are kept: they run outside any sandbox",
    },
    ProtectedEntry {
        path: ".claude/commands",
        base: Base::WorkAndHome,
        why: "the agent's own commands, which it runs as instructions",
    },
    ProtectedEntry {
        path: ".claude/agents",
        base: Base::WorkAndHome,
        why: "the agent's own sub-agent definitions",
    },
    ProtectedEntry {
        path: ".claude/skills",
        base: Base::WorkAndHome,
        why: "the agent's skills: instructions and the scripts they tell it to run",
    },
    ProtectedEntry {
        path: ".claude/plugins",
        base: Base::WorkAndHome,
        why: "the agent's plugins: their hooks and MCP servers run outside any sandbox",
    },
    ProtectedEntry {
        path: ".codex/config.toml",
        base: Base::WorkAndHome,
        why: "Codex CLI's settings: the programs it runs (notify, MCP servers) and its hooks, sandgate's among them",
    },
    ProtectedEntry {
        path: ".codex/hooks.json",
        base: Base::WorkAndHome,
        why: "Codex CLI's hooks, sandgate's among them",
    },
    ProtectedEntry {
        path: ".codex/hooks",
        base: Base::WorkAndHome,
        why: "where Codex CLI's hook scripts are kept: they run outside any sandbox",
    },
    ProtectedEntry {
        path: ".codex/rules",
        base: Base::WorkAndHome,
        why: "Codex CLI's command rules: which commands it runs without asking",
    },
    ProtectedEntry {
        path: ".codex/agents",
        base: Base::WorkAndHome,
        why: "Codex CLI's own sub-agent definitions",
    },
    ProtectedEntry {
        path: ".codex/skills",
        base: Base::WorkAndHome,
        why: "Codex CLI's skills: instructions and the scripts they tell it to run",
    },
    ProtectedEntry {
        path: ".agents/skills",
        base: Base::WorkAndHome,
        why: "the skills Codex CLI, Gemini CLI and other agents share: instructions and the scripts they tell them to run",
    },
    ProtectedEntry {
        path: ".gemini/settings.json",
        base: Base::WorkAndHome,
        why: "Gemini CLI's settings: its hooks (sandgate's among them), MCP servers and tool discovery command",
    },
    ProtectedEntry {
        path: ".codex/prompts",
        base: Base::WorkAndHome,
        why: "Codex CLI's own prompts, which it runs as instructions",
    },
    ProtectedEntry {
        path: ".gemini/commands",
        base: Base::WorkAndHome,
        why: "Gemini CLI's own commands, which it runs as instructions",
    },
    ProtectedEntry {
        path: ".gemini/skills",
        base: Base::WorkAndHome,
        why: "Gemini CLI's skills: instructions and the scripts they tell it to run",
    },
    ProtectedEntry {
        path: ".gemini/extensions",
        base: Base::WorkAndHome,
        why: "Gemini CLI's extensions: their MCP servers and commands",
    },
    ProtectedEntry {
        path: ".cursor/mcp.json",
        base: Base::Work,
        why: "the MCP servers Cursor's agent starts in this project",
    },
    ProtectedEntry {
        path: ".mcp.json",
        base: Base::Work,
        why: "the MCP servers an agent starts in this project",
    },
    ProtectedEntry {
        path: ".vscode",
        base: Base::Work,
        why: "editor settings and tasks that run programs",
    },
    ProtectedEntry {
        path: ".idea",
        base: Base::Work,
        why: "editor settings and run configurations",
    },
];

/// The entries of a submodule's repository (`.git/modules/NAME`, checked
/// out in the project) that are protected like the project's own `.git/…`
/// ones: `git status` of the project runs git in each submodule, with its
/// config and hooks.
pub const SUBMODULE_ENTRIES: &[&str] = &["hooks", "config", "commondir", "config.worktree"];

/// Why a submodule's [`SUBMODULE_ENTRIES`] are protected.
pub const SUBMODULE_WHY: &str =
    "a submodule's repository: git runs what its config and hooks name, also in `git status` of the project";

/// Why `.git` is protected as a whole where it is a file.
pub const GIT_FILE_WHY: &str =
    "a worktree's or submodule's `.git` file: it names the repository git uses, its config and hooks with it";

/// A protected path, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProtectedPath {
    /// The absolute path.
    pub path: PathBuf,
    /// Why: the built-in entry's reason, or where the policy added it.
    pub why: String,
    /// Protected only where it is a regular file (`.git` of a worktree or a
    /// submodule checkout, which says `gitdir: …`); a directory there, or
    /// nothing, leaves the entry out. The caller, which looks at the file
    /// system, decides.
    #[serde(skip)]
    pub only_file: bool,
}

/// The protected paths for project roots `roots` and home `home`, then the
/// policy's own entries `extra`, each with its reason: relative entries are
/// relative to every root, `~/…` to the home directory, absolute ones as
/// written. Pure: touches no file system. No path appears twice.
pub fn paths(roots: &[PathBuf], home: &Path, extra: &[(String, String)]) -> Vec<ProtectedPath> {
    let mut out: Vec<ProtectedPath> = Vec::new();
    // Paths already listed, compared as `Path` compares them (by component);
    // a set, because comparing each new path with every earlier one costs
    // more than the rest of the plan on every `sandgate exec`.
    let mut seen: HashSet<PathBuf, foldhash::fast::RandomState> = HashSet::default();
    let mut add_as = |path: PathBuf, why: &str, only_file: bool| {
        if seen.insert(path.clone()) {
            out.push(ProtectedPath {
                path,
                why: why.to_string(),
                only_file,
            });
        }
    };
    let mut add = |path: PathBuf, why: &str| add_as(path, why, false);
    for entry in PROTECTED {
        for root in roots {
            add(root.join(entry.path), entry.why);
        }
        if entry.base == Base::WorkAndHome {
            add(home.join(entry.path), entry.why);
        }
    }
    for (raw, why) in extra {
        let raw = raw.trim().trim_end_matches('/');
        if raw.is_empty() {
            continue;
        }
        if raw == "~" {
            add(home.to_path_buf(), why);
        } else if let Some(rest) = raw.strip_prefix("~/") {
            add(crate::canon::normalize_lexically(&home.join(rest)), why);
        } else if Path::new(raw).is_absolute() {
            add(crate::canon::normalize_lexically(Path::new(raw)), why);
        } else {
            for root in roots {
                add(crate::canon::normalize_lexically(&root.join(raw)), why);
            }
        }
    }
    // Last, so that `.git` protected as a whole (`protect`) wins.
    for root in roots {
        add_as(root.join(".git"), GIT_FILE_WHY, true);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_get_every_entry_and_home_the_shared_ones() {
        let roots = [PathBuf::from("/w/a"), PathBuf::from("/w/b")];
        let list = paths(&roots, Path::new("/home/ann"), &[]);
        let has = |p: &str| list.iter().any(|x| x.path == Path::new(p));
        for p in [
            "/w/a/.git/hooks",
            "/w/b/.git/config",
            "/w/a/.mcp.json",
            "/w/b/.claude/commands",
            "/home/ann/.bashrc",
            "/home/ann/.gitconfig",
        ] {
            assert!(has(p), "{p}");
        }
        // The agents' settings hold their hooks, sandgate's among them.
        for p in [
            "/w/a/.claude/settings.json",
            "/w/a/.claude/settings.local.json",
            "/home/ann/.claude/settings.json",
            "/home/ann/.claude/commands",
            "/home/ann/.codex/config.toml",
            "/w/b/.codex/hooks.json",
            "/home/ann/.gemini/settings.json",
            "/w/a/.git/commondir",
            "/w/a/.agents/skills",
            "/home/ann/.agents/skills",
            "/home/ann/.codex/rules",
            "/w/b/.codex/hooks",
            "/w/a/.gemini/skills",
        ] {
            assert!(has(p), "{p}");
        }
        assert!(!has("/home/ann/.mcp.json"));
        let git = list.iter().find(|x| x.path == Path::new("/w/a/.git"));
        assert!(
            git.is_some_and(|g| g.only_file),
            "objects, refs and the index stay writable: {git:?}"
        );
        assert!(list
            .iter()
            .filter(|x| x.path != Path::new("/w/a/.git") && x.path != Path::new("/w/b/.git"))
            .all(|x| !x.only_file));
    }

    #[test]
    fn the_policy_adds_relative_home_and_absolute_entries_once() {
        let roots = [PathBuf::from("/w")];
        let extra = [
            ("Makefile".to_string(), "a.yaml:3".to_string()),
            ("~/bin/".to_string(), "a.yaml:4".to_string()),
            ("/opt/x/../y".to_string(), "a.yaml:5".to_string()),
            (".mcp.json".to_string(), "a.yaml:6".to_string()),
            ("  ".to_string(), "a.yaml:7".to_string()),
        ];
        let list = paths(&roots, Path::new("/h"), &extra);
        let why = |p: &str| {
            list.iter()
                .find(|x| x.path == Path::new(p))
                .map(|x| x.why.clone())
        };
        assert_eq!(why("/w/Makefile").as_deref(), Some("a.yaml:3"));
        assert_eq!(why("/h/bin").as_deref(), Some("a.yaml:4"));
        assert_eq!(why("/opt/y").as_deref(), Some("a.yaml:5"));
        // Already built in: listed once, with the built-in reason.
        assert_eq!(
            why("/w/.mcp.json").as_deref(),
            Some("the MCP servers an agent starts in this project")
        );
        let home_too = PROTECTED
            .iter()
            .filter(|e| e.base == Base::WorkAndHome)
            .count();
        // Each root's `.git`, protected where it is a file, comes last.
        assert_eq!(list.len(), PROTECTED.len() + home_too + 3 + 1);
        let strict = paths(
            &roots,
            Path::new("/h"),
            &[(".git".to_string(), "a.yaml:8".to_string())],
        );
        let git = strict
            .iter()
            .find(|x| x.path == Path::new("/w/.git"))
            .unwrap();
        assert!(!git.only_file, "an explicit entry protects it as a whole");
    }
}
