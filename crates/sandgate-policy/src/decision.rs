//! The vocabulary of a decision: verdicts, rule references and the decision itself.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// What the gate answers. Ordered by strictness, so combining is `max()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The call may run.
    Allow,
    /// A human (or the agent's own prompt) must decide.
    Ask,
    /// The call must not run.
    Deny,
}

impl Verdict {
    /// The lowercase wire name (`allow`, `ask`, `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which list a rule belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum List {
    /// A user or organisation deny rule.
    Deny,
    /// A user allow rule.
    Allow,
    /// The built-in deny floor, checked before everything else.
    Floor,
}

impl List {
    /// The lowercase wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            List::Deny => "deny",
            List::Allow => "allow",
            List::Floor => "floor",
        }
    }
}

impl fmt::Display for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The policy tier a file belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// `/etc/sandgate/permissions.yaml`: the organisation, tighten only.
    Managed,
    /// `~/.sandgate/permissions.yaml`: the user, everything.
    Central,
    /// `./.sandgate/permissions.yaml`: the project, tighten only.
    Local,
}

impl Tier {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Managed => "managed",
            Tier::Central => "central",
            Tier::Local => "local",
        }
    }
}

/// Where a rule was written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Built into sandgate (the deny floor).
    Builtin,
    /// A line of a policy file.
    File {
        /// The policy file (shared by every rule of the file).
        path: Arc<Path>,
        /// 1-based line of the rule.
        line: u32,
        /// The tier the file was loaded as.
        tier: Tier,
    },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Builtin => f.write_str("builtin"),
            Origin::File { path, line, .. } => write!(f, "{}:{}", path.display(), line),
        }
    }
}

impl Serialize for Origin {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The rule that decided a request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct RuleRef {
    /// The rule as written (glob or regex).
    pub pattern: String,
    /// The list it belongs to.
    pub list: List,
    /// Where it was written.
    pub origin: Origin,
}

impl fmt::Display for RuleRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} rule `{}` ({})", self.list, self.pattern, self.origin)
    }
}

/// The answer of the gate, always with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// allow, ask or deny.
    pub verdict: Verdict,
    /// The subject as matched: a canonical path or a command.
    pub subject: String,
    /// The rule that decided it, if a rule did.
    pub rule: Option<RuleRef>,
    /// Why, in words meant for a person (and a model).
    pub reason: String,
}

impl Decision {
    /// A decision with no deciding rule.
    pub fn new(verdict: Verdict, subject: impl Into<String>, reason: impl Into<String>) -> Self {
        Decision {
            verdict,
            subject: subject.into(),
            rule: None,
            reason: reason.into(),
        }
    }

    /// A decision made by `rule`.
    pub fn by_rule(
        verdict: Verdict,
        subject: impl Into<String>,
        rule: RuleRef,
        reason: impl Into<String>,
    ) -> Self {
        Decision {
            verdict,
            subject: subject.into(),
            rule: Some(rule),
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_combine_with_max() {
        assert_eq!(Verdict::Allow.max(Verdict::Ask), Verdict::Ask);
        assert_eq!(Verdict::Ask.max(Verdict::Deny), Verdict::Deny);
        assert_eq!(Verdict::Allow.max(Verdict::Allow), Verdict::Allow);
    }
}
