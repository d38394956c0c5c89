//! The vocabulary of a decision: verdicts, rule references, the decision
//! itself, and the parts a command's decision is made of.

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

/// What a path rule is about: reading, writing, or (no access named) both.
///
/// `paths.read.allow` holds rules of access [`Access::Read`], `paths.write.deny`
/// rules of access [`Access::Write`]; `paths.allow`, `paths.deny`, the floor
/// and every command rule have none: they apply to both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Reading: `file_read`, `file_grep`, `file_list`, a command's path words.
    Read,
    /// Writing: `file_write`, `file_edit`, redirection targets, write operands.
    Write,
}

impl Access {
    /// The lowercase name, as in `paths.read.allow`.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

impl fmt::Display for Access {
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
    /// For a path rule of `paths.read.*` or `paths.write.*`: the access it is
    /// about. `None`: both (and every command and floor rule).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<Access>,
    /// Where it was written.
    pub origin: Origin,
}

impl RuleRef {
    /// Whether this rule decides an access of kind `access`.
    pub fn applies_to(&self, access: Access) -> bool {
        self.access.is_none_or(|a| a == access)
    }

    /// The list in words: `allow`, `deny`, `floor`, `read allow`, `write deny`.
    pub fn list_words(&self) -> String {
        match self.access {
            None => self.list.as_str().to_string(),
            Some(a) => format!("{a} {}", self.list),
        }
    }

    /// The key of the path list in a policy file: `paths.allow`,
    /// `paths.read.deny`, … (`floor` for the floor).
    pub fn path_key(&self) -> String {
        match (self.list, self.access) {
            (List::Floor, _) => "floor".into(),
            (list, None) => format!("paths.{list}"),
            (list, Some(a)) => format!("paths.{a}.{list}"),
        }
    }
}

impl fmt::Display for RuleRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} rule `{}` ({})",
            self.list_words(),
            self.pattern,
            self.origin
        )
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

/// What a part of a command line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PartKind {
    /// The whole command line (deny rules only).
    Line,
    /// A simple command.
    Command,
    /// A redirection that writes a file.
    Redirect,
    /// A word of a command that names a path (or may: its value is unknown),
    /// or the directory the command runs in.
    Path,
    /// A file a command writes through its operands or options (`cp x DEST`,
    /// `sort -o FILE`, `sed -i`, `rm -r DIR`).
    Write,
    /// Something that could not be analysed.
    Unanalysable,
}

/// The verdict of one part of a command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Part {
    /// What the part is.
    pub kind: PartKind,
    /// The part as written (a simple command's source, a redirection, …).
    pub source: String,
    /// A simple command's words after quote removal; a redirection's target.
    pub text: String,
    /// The verdict of this part alone.
    pub verdict: Verdict,
    /// The rule that decided this part, if a rule did.
    pub rule: Option<RuleRef>,
    /// Why, in words.
    pub reason: String,
}

/// A command decision with every part that led to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandExplanation {
    /// Whether the command was analysed as shell (`commands.shell`).
    pub shell: bool,
    /// The decision.
    pub decision: Decision,
    /// Each part and its verdict, in the order they were checked (empty in raw mode).
    pub parts: Vec<Part>,
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
