//! Whether an agent reads a project's settings at all: each agent ignores the
//! settings of a folder its user has not trusted.
//!
//! - Claude Code: `~/.claude.json`, `projects["<dir>"].hasTrustDialogAccepted`
//!   for the folder or one of its parents.
//! - Gemini CLI: `~/.gemini/trustedFolders.json` (or
//!   `$GEMINI_CLI_TRUSTED_FOLDERS_PATH`), the longest rule that covers the
//!   folder (`TRUST_FOLDER`, `TRUST_PARENT` for the rule's parent,
//!   `DO_NOT_TRUST`); trust is off when the user settings say
//!   `security.folderTrust.enabled: false`.
//! - Codex CLI: `[projects."<dir>"] trust_level = "trusted"` in the user's
//!   `config.toml`, for the folder or one of its parents.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Agent;

/// What the agent thinks of a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderTrust {
    /// Trusted: the agent reads its project settings. The string says by what.
    Trusted(String),
    /// Not trusted: the project settings are ignored. The string says why and how to fix it.
    Untrusted(String),
}

impl FolderTrust {
    /// Whether the folder is trusted.
    pub fn is_trusted(&self) -> bool {
        matches!(self, FolderTrust::Trusted(_))
    }

    /// The explanation.
    pub fn detail(&self) -> &str {
        match self {
            FolderTrust::Trusted(s) | FolderTrust::Untrusted(s) => s,
        }
    }
}

fn read_json(file: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(file).ok()?;
    super::install::jsonc_value(&text)
}

fn ancestors(dir: &Path) -> Vec<PathBuf> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors().map(Path::to_path_buf).collect()
}

/// Whether `agent` trusts `dir` (the folder a project install or grant writes to).
pub fn folder_trust(agent: Agent, dir: &Path, home: &Path, codex_dir: &Path) -> FolderTrust {
    match agent {
        Agent::Claude => claude(dir, home),
        Agent::Gemini => gemini(dir, home),
        Agent::Codex => codex(dir, codex_dir),
    }
}

fn claude(dir: &Path, home: &Path) -> FolderTrust {
    let file = home.join(".claude.json");
    let config = read_json(&file);
    for d in ancestors(dir) {
        let key = d.to_string_lossy();
        let accepted = config
            .as_ref()
            .and_then(|c| c.get("projects"))
            .and_then(|p| p.get(key.as_ref()))
            .and_then(|p| p.get("hasTrustDialogAccepted"))
            .and_then(Value::as_bool);
        if accepted == Some(true) {
            return FolderTrust::Trusted(format!(
                "`{}` has `projects[\"{key}\"].hasTrustDialogAccepted: true`",
                file.display()
            ));
        }
    }
    FolderTrust::Untrusted(format!(
        "Claude Code has not trusted `{}` (no `hasTrustDialogAccepted` for it in `{}`), \
         so it ignores this folder's `.claude/settings*.json`; open the folder once in \
         Claude Code (`claude` in it) and accept the trust dialog, or write to the user \
         settings instead (`~/.claude/settings.json`)",
        dir.display(),
        file.display()
    ))
}

fn gemini(dir: &Path, home: &Path) -> FolderTrust {
    let settings = read_json(&home.join(".gemini/settings.json"));
    let enabled = settings
        .as_ref()
        .and_then(|s| s.pointer("/security/folderTrust/enabled"))
        .and_then(Value::as_bool);
    if enabled == Some(false) {
        return FolderTrust::Trusted(
            "folder trust is off (`security.folderTrust.enabled: false` in ~/.gemini/settings.json)"
                .into(),
        );
    }
    let file = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".gemini/trustedFolders.json"));
    let rules = read_json(&file);
    let dir_c = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut best: Option<(usize, String)> = None;
    if let Some(Value::Object(rules)) = &rules {
        for (path, level) in rules {
            let Some(level) = level.as_str() else {
                continue;
            };
            let rule = Path::new(path);
            let effective = if level == "TRUST_PARENT" {
                rule.parent().unwrap_or(rule)
            } else {
                rule
            };
            let effective = std::fs::canonicalize(effective).unwrap_or(effective.to_path_buf());
            if dir_c.starts_with(&effective) && best.as_ref().is_none_or(|(n, _)| path.len() > *n) {
                best = Some((path.len(), level.to_string()));
            }
        }
    }
    match best {
        Some((_, level)) if level == "TRUST_FOLDER" || level == "TRUST_PARENT" => {
            FolderTrust::Trusted(format!("`{}` trusts it ({level})", file.display()))
        }
        other => FolderTrust::Untrusted(format!(
            "Gemini CLI does not trust `{}` ({}), so it ignores this folder's \
             `.gemini/settings.json` (and a headless run refuses the folder); run `gemini` \
             in the folder once and trust it, or install for the user (`--user`)",
            dir.display(),
            if other.is_some() {
                format!("`DO_NOT_TRUST` in `{}`", file.display())
            } else {
                format!("no rule for it in `{}`", file.display())
            }
        )),
    }
}

fn codex(dir: &Path, codex_dir: &Path) -> FolderTrust {
    let file = codex_dir.join("config.toml");
    let doc = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok());
    for d in ancestors(dir) {
        let key = d.to_string_lossy();
        let level = doc
            .as_ref()
            .and_then(|doc| doc.get("projects"))
            .and_then(|p| p.get(key.as_ref()))
            .and_then(|p| p.get("trust_level"))
            .and_then(|l| l.as_str())
            .map(str::to_string);
        match level.as_deref() {
            Some("trusted") => {
                return FolderTrust::Trusted(format!(
                    "`{}` has `[projects.\"{key}\"] trust_level = \"trusted\"`",
                    file.display()
                ))
            }
            Some(other) => {
                return FolderTrust::Untrusted(format!(
                    "Codex CLI marks `{key}` as `{other}` in `{}`, so it ignores this folder's \
                     `.codex/` hooks; trust the project in Codex, or install for the user (`--user`)",
                    file.display()
                ))
            }
            None => {}
        }
    }
    FolderTrust::Untrusted(format!(
        "Codex CLI has not trusted `{}` (no `[projects.\"…\"] trust_level = \"trusted\"` in `{}`), \
         so it ignores this folder's `.codex/` hooks; trust the project when Codex asks, \
         or install for the user (`--user`)",
        dir.display(),
        file.display()
    ))
}
