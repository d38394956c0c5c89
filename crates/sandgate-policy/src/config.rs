//! The policy file model (`permissions.yaml`), as written by a person.
//!
//! Every struct denies unknown fields, so a typo is an error with a line number
//! rather than a rule that silently does nothing.

use serde::Deserialize;
use serde_saphyr::Spanned;

/// One rule as written: its text and where it stands in the file.
pub type RuleText = Spanned<String>;

/// A whole policy file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// The permissions block.
    #[serde(default)]
    pub permissions: Permissions,
    /// Settings for agent hooks.
    #[serde(default)]
    pub hooks: HooksConfig,
    /// Self-tests: calls and the verdict each must get (see the `selftest` module).
    #[serde(default)]
    pub tests: Vec<Spanned<TestSpec>>,
    /// The audit log.
    #[serde(default)]
    pub audit: AuditConfig,
}

/// One entry of `tests:` as written: a command or a path, the tool, and the
/// verdict the merged policy must give it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestSpec {
    /// A command, judged as `exec_run` (or `tool`) judges it.
    pub command: Option<String>,
    /// A path, judged as `file_read` (or `tool`) judges it.
    pub path: Option<String>,
    /// The gated tool making the call (default `exec_run` for a command,
    /// `file_read` for a path).
    pub tool: Option<String>,
    /// The verdict the call must get.
    pub expect: Option<crate::decision::Verdict>,
}

/// The smallest `audit.max_bytes` a policy may set: below it the log would
/// rotate away almost every record as soon as it is written.
pub const MIN_AUDIT_BYTES: u64 = 4096;

/// The `audit:` block.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// The size at which `audit.jsonl` is rotated to `audit.jsonl.1` (bytes,
    /// at least [`MIN_AUDIT_BYTES`]).
    #[serde(default, deserialize_with = "audit_bytes")]
    pub max_bytes: Option<u64>,
}

fn audit_bytes<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let value = Option::<u64>::deserialize(d)?;
    match value {
        Some(n) if n < MIN_AUDIT_BYTES => Err(serde::de::Error::custom(format!(
            "`max_bytes` must be a whole number of at least {MIN_AUDIT_BYTES}, not {n}"
        ))),
        other => Ok(other),
    }
}

/// The `permissions:` block.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Permissions {
    /// Whether the gate (and isolation) is on. Only the central file may turn it off.
    pub sandbox: Option<bool>,
    /// Path rules (globs).
    #[serde(default)]
    pub paths: PathLists,
    /// Command rules (regexes).
    #[serde(default)]
    pub commands: CommandRules,
    /// The terminal prompt.
    #[serde(default)]
    pub prompt: PromptConfig,
    /// How allowed commands run.
    #[serde(default)]
    pub exec: ExecConfig,
    /// The hosts contained programs may reach (see [`crate::network`]);
    /// absent: the network is not filtered by host.
    pub network: Option<RuleLists>,
}

/// A deny and an allow list of path globs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleLists {
    /// Rules whose match denies.
    #[serde(default)]
    pub deny: Vec<RuleText>,
    /// Rules whose match allows.
    #[serde(default)]
    pub allow: Vec<RuleText>,
}

/// Path globs: `deny` and `allow` for reading and writing alike, and
/// `read` / `write` lists for one kind of access only.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathLists {
    /// Rules whose match denies reading and writing.
    #[serde(default)]
    pub deny: Vec<RuleText>,
    /// Rules whose match allows reading and writing.
    #[serde(default)]
    pub allow: Vec<RuleText>,
    /// Rules about reading only (`file_read`, `file_grep`, a command's path words, …).
    #[serde(default)]
    pub read: RuleLists,
    /// Rules about writing only (`file_write`, `file_edit`, redirections, write operands).
    #[serde(default)]
    pub write: RuleLists,
}

/// Command regexes and how commands are analysed.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandRules {
    /// Rules whose match denies.
    #[serde(default)]
    pub deny: Vec<RuleText>,
    /// Rules whose match allows.
    #[serde(default)]
    pub allow: Vec<RuleText>,
    /// Parse commands as shell (default `true`); `false` matches one regex over the raw string.
    pub shell: Option<bool>,
}

/// The terminal prompt.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptConfig {
    /// Seconds before an unanswered prompt is a DENY (default 25).
    pub timeout: Option<u64>,
}

/// How allowed commands are executed.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecConfig {
    /// OS isolation of allowed commands.
    pub isolation: Option<IsolationConfig>,
}

/// The isolation mechanism for allowed commands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IsolationMode {
    /// Run the command unchanged under `/bin/sh -c`.
    #[default]
    None,
    /// A user-supplied wrapper template.
    Custom,
    /// Native Landlock + seccomp.
    Landlock,
    /// A bubblewrap preset.
    Bwrap,
    /// macOS `sandbox-exec`.
    Seatbelt,
}

/// `permissions.exec.isolation`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IsolationConfig {
    /// Which mechanism.
    pub mode: Option<IsolationMode>,
    /// Wrapper template for `custom`, with `{cmd}` and `{workdir}`.
    pub template: Option<String>,
    /// The writable directory (default `./`, resolved against the CWD).
    pub workdir: Option<String>,
    /// Also allow writes to the temp dir.
    pub allow_tmp: Option<bool>,
    /// Allow network access.
    pub network: Option<bool>,
    /// Start even when the kernel cannot fully enforce the plan.
    pub best_effort: Option<bool>,
    /// More protected paths (see [`crate::protected`]): relative to the
    /// workdir, `~/…`, or absolute.
    pub protect: Option<Vec<String>>,
    /// UNIX socket paths the command may `connect()` to (absolute, `~/…`,
    /// or relative to the working directory); every other is refused.
    pub unix_sockets: Option<Vec<String>>,
}

/// Settings for `sandgate hook …`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksConfig {
    /// Claude Code.
    #[serde(default)]
    pub claude: ClaudeHookConfig,
    /// Gemini CLI.
    #[serde(default)]
    pub gemini: GeminiHookConfig,
}

/// What an ASK becomes for Claude Code, whose own permission system may ask too.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ClaudeAsk {
    /// No opinion: Claude Code's own rules and mode decide, and its dialog asks
    /// (default). Only where Claude Code really asks: see docs/agents.md.
    #[default]
    Defer,
    /// Answer `ask`: Claude Code shows its dialog, even where its own rules allow.
    Ask,
    /// Block the call, naming the rule that would allow it.
    Deny,
}

impl ClaudeAsk {
    /// The word in the policy file.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaudeAsk::Defer => "defer",
            ClaudeAsk::Ask => "ask",
            ClaudeAsk::Deny => "deny",
        }
    }
}

/// `hooks.claude`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaudeHookConfig {
    /// What an ASK becomes.
    pub ask: Option<ClaudeAsk>,
}

/// What an ASK becomes for Gemini CLI, which has no ask.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AskFallback {
    /// Block the call (default).
    #[default]
    Deny,
    /// Let the call run.
    Allow,
}

/// `hooks.gemini`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeminiHookConfig {
    /// What an ASK becomes.
    pub ask: Option<AskFallback>,
}
