//! Credential stores beyond the floor: where other tools keep tokens and
//! passwords in the home directory.
//!
//! Unlike the floor, these are ordinary deny rules: every starter preset
//! writes them into `paths.deny`, so a person who wants an agent to read one
//! removes its line. While the rule is in the policy, `sandgate policy
//! explain` names the store, exec isolation hides it like a denied directory,
//! and `sandgate run` hides it from reads like the floor. This is the one
//! list; each entry says why it is there.

use std::path::{Path, PathBuf};

/// One credential store: a path rule and why it is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CredentialStore {
    /// The deny rule as the presets write it (`~/.netrc`, `~/.kube/**`).
    pub rule: &'static str,
    /// What it holds, in words.
    pub why: &'static str,
}

/// The credential stores, in the order the presets list them.
pub const CREDENTIAL_STORES: &[CredentialStore] = &[
    CredentialStore {
        rule: "~/.netrc",
        why: "logins and passwords for hosts (curl, git, ftp)",
    },
    CredentialStore {
        rule: "~/.git-credentials",
        why: "git's stored passwords and tokens",
    },
    CredentialStore {
        rule: "~/.config/gh/hosts.yml",
        why: "the GitHub CLI's token",
    },
    CredentialStore {
        rule: "~/.docker/config.json",
        why: "container registry logins",
    },
    CredentialStore {
        rule: "~/.kube/**",
        why: "Kubernetes cluster credentials",
    },
    CredentialStore {
        rule: "~/.npmrc",
        why: "npm registry tokens",
    },
    CredentialStore {
        rule: "~/.pypirc",
        why: "PyPI upload tokens",
    },
    CredentialStore {
        rule: "~/.cargo/credentials.toml",
        why: "the crates.io token",
    },
    CredentialStore {
        rule: "~/.cargo/credentials",
        why: "the crates.io token",
    },
    CredentialStore {
        rule: "~/.config/gcloud/**",
        why: "Google Cloud credentials",
    },
    CredentialStore {
        rule: "~/.azure/**",
        why: "Azure CLI tokens",
    },
    CredentialStore {
        rule: "~/.password-store/**",
        why: "the passwords of `pass`",
    },
    CredentialStore {
        rule: "~/.vault-token",
        why: "a HashiCorp Vault token",
    },
    CredentialStore {
        rule: "~/.local/share/keyrings/**",
        why: "the desktop keyring's passwords",
    },
    CredentialStore {
        rule: "~/.mozilla/firefox/**",
        why: "Firefox profiles: saved passwords and session cookies",
    },
    CredentialStore {
        rule: "~/.config/google-chrome/**",
        why: "Chrome profiles: saved passwords and session cookies",
    },
    CredentialStore {
        rule: "~/.config/chromium/**",
        why: "Chromium profiles: saved passwords and session cookies",
    },
    CredentialStore {
        rule: "~/.config/BraveSoftware/**",
        why: "Brave profiles: saved passwords and session cookies",
    },
    CredentialStore {
        rule: "~/.config/microsoft-edge/**",
        why: "Edge profiles: saved passwords and session cookies",
    },
];

impl CredentialStore {
    /// The path the rule names beneath `home` (the directory for a `/**`
    /// rule).
    pub fn path(&self, home: &Path) -> PathBuf {
        let rest = self.rule.trim_start_matches("~/");
        home.join(rest.strip_suffix("/**").unwrap_or(rest))
    }

    /// Whether the rule names a directory and everything beneath it.
    pub fn is_dir(&self) -> bool {
        self.rule.ends_with("/**")
    }
}

/// The credential store whose rule is `pattern` as written, if it is one.
pub fn store_of_rule(pattern: &str) -> Option<&'static CredentialStore> {
    CREDENTIAL_STORES.iter().find(|s| s.rule == pattern.trim())
}

/// The credential stores that `deny` (a policy's `paths.deny` rules, as
/// written) still lists: those a surface hides.
pub fn denied<'a>(deny: impl IntoIterator<Item = &'a str>) -> Vec<&'static CredentialStore> {
    let deny: Vec<&str> = deny.into_iter().map(str::trim).collect();
    CREDENTIAL_STORES
        .iter()
        .filter(|s| deny.contains(&s.rule))
        .collect()
}

/// The credential stores whose deny rule `policy` still has for reading;
/// every one when no policy file exists (as the presets would write them).
pub fn denied_by(policy: &crate::Policy) -> Vec<&'static CredentialStore> {
    if policy.has_no_policy_files() {
        return CREDENTIAL_STORES.iter().collect();
    }
    let rules = policy
        .path_rules()
        .0
        .iter()
        .filter(|r| r.applies_to(crate::decision::Access::Read));
    denied(rules.map(|r| r.pattern.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_store_is_beneath_the_home_and_says_why() {
        for store in CREDENTIAL_STORES {
            assert!(store.rule.starts_with("~/."), "{store:?}");
            assert!(!store.why.is_empty(), "{store:?}");
            let body = store.rule.strip_suffix("/**").unwrap_or(store.rule);
            assert!(!body.contains(['*', '?', '[', '{']), "{store:?}");
        }
        let home = Path::new("/home/ann");
        assert_eq!(
            store_of_rule("~/.kube/**").map(|s| s.path(home)),
            Some(home.join(".kube"))
        );
        assert_eq!(
            store_of_rule(" ~/.netrc ").map(|s| (s.path(home), s.is_dir())),
            Some((home.join(".netrc"), false))
        );
        assert_eq!(store_of_rule("~/.netrc.bak"), None);
        let kept = denied(["~/.netrc", "/etc/**", "~/.azure/**"]);
        let rules: Vec<&str> = kept.iter().map(|s| s.rule).collect();
        assert_eq!(rules, ["~/.netrc", "~/.azure/**"]);
    }
}
