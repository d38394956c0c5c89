//! The compiled policy and its evaluation (the steps of docs/policy.md, "How
//! a call is decided").

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::canon;
use crate::config::{AskFallback, ClaudeAsk, IsolationConfig, IsolationMode};
use crate::decision::{Access, CommandExplanation, Decision, List, RuleRef, Tier, Verdict};
use crate::disk::{Disk, RealDisk};
use crate::error::{LoadError, Problem};
use crate::floor;
use crate::floor::FloorInodes;
use crate::gate::{self, Gate};
use crate::load::{read_policy_files, source_rules, source_rules_for, LoadedFile, Sources};
use crate::network::{MergedNetwork, NetworkPolicy};
use crate::request::{gated_tool, tool_kind, Context, ToolCall, ToolKind};
use crate::rules::{CommandRules, PathRules, SourceRule};
use crate::selftest::{PolicyTest, Tested};

/// Seconds an unanswered prompt waits before it is a DENY.
pub const DEFAULT_PROMPT_TIMEOUT_SECS: u64 = 25;

/// The merged settings of all tiers.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Whether the gate is on.
    pub sandbox: bool,
    /// Why the gate is on or off, in words.
    pub sandbox_reason: String,
    /// Whether commands are analysed as shell.
    pub shell: bool,
    /// How long a prompt waits.
    pub prompt_timeout: Duration,
    /// Isolation of allowed commands, and the tier that defined it.
    pub isolation: Option<(IsolationConfig, Tier)>,
    /// What an ASK becomes for Gemini CLI.
    pub gemini_ask: AskFallback,
    /// What an ASK becomes for Claude Code.
    pub claude_ask: ClaudeAsk,
    /// `audit.max_bytes`: the largest any tier sets, `None` when none does.
    pub audit_max_bytes: Option<u64>,
}

/// A rule of a tighten-only file that the merge ignored (allow rules of local and managed files).
#[derive(Debug, Clone)]
pub struct IgnoredRule {
    /// The rule.
    pub rule: RuleRef,
    /// Why it was ignored.
    pub why: &'static str,
}

/// An immutable, compiled policy.
#[derive(Debug, Clone)]
pub struct Policy {
    settings: Settings,
    sources: Sources,
    pub(crate) floor: PathRules,
    pub(crate) path_deny: PathRules,
    pub(crate) path_allow: PathRules,
    pub(crate) command_deny: CommandRules,
    pub(crate) command_allow: CommandRules,
    ignored: Vec<IgnoredRule>,
    tests: Vec<PolicyTest>,
    /// No policy file exists: an ASK says how to get one.
    no_policy_files: bool,
    /// The directories the floor globs protect (`~/.ssh`, …), canonical.
    pub(crate) floor_dirs: Vec<PathBuf>,
    /// The floor files with other hard links, found on first need.
    floor_inodes: OnceLock<FloorInodes>,
    /// What the decisions read from the file system (see [`crate::disk`]).
    disk: Arc<dyn Disk>,
    /// The network lists, when any tier has `permissions.network`.
    network: Option<NetworkPolicy>,
}

/// Policy files merged tighten-only, not yet compiled (see [`Policy::merge`]).
#[derive(Debug, Clone)]
pub struct Merged {
    /// The merged settings.
    pub settings: Settings,
    /// Path deny rules of every tier (`paths.deny`, `paths.read.deny`,
    /// `paths.write.deny`), each with its access.
    pub path_deny: Vec<SourceRule>,
    /// Path allow rules of the central file, each with its access.
    pub path_allow: Vec<SourceRule>,
    /// Command deny rules of every tier.
    pub command_deny: Vec<SourceRule>,
    /// Command allow rules of the central file.
    pub command_allow: Vec<SourceRule>,
    /// Rules the merge ignored.
    pub ignored: Vec<IgnoredRule>,
    /// The self-tests of every tier, in tier order.
    pub tests: Vec<PolicyTest>,
    /// Whether no policy file was found at all.
    pub no_policy_files: bool,
    /// `permissions.network` of every tier that has it (`None`: no tier does).
    pub network: Option<MergedNetwork>,
}

/// What an ASK adds to its reason when no policy file exists.
pub const NO_POLICY_HINT: &str =
    "no policy file was found: `sandgate init` writes a starter policy that allows reading and inspecting";

/// The required literals of the command deny and allow rules, one entry per rule
/// (see [`CommandRules::literals`]).
pub type CommandLiterals = (Vec<Option<Vec<Vec<u8>>>>, Vec<Option<Vec<Vec<u8>>>>);

/// The default settings a file may tighten.
fn default_settings() -> Settings {
    Settings {
        sandbox: true,
        sandbox_reason: "on by default".into(),
        shell: true,
        prompt_timeout: Duration::from_secs(DEFAULT_PROMPT_TIMEOUT_SECS),
        isolation: None,
        gemini_ask: AskFallback::Deny,
        claude_ask: ClaudeAsk::Defer,
        audit_max_bytes: None,
    }
}

impl Policy {
    /// Read, merge and compile the policy files of `sources`, then run their
    /// self-tests (see [`crate::selftest`]).
    ///
    /// Missing files are normal. Any unreadable or broken file, or a failed
    /// test, is an error that lists every problem; it never degrades to a more
    /// permissive policy.
    pub fn load(sources: &Sources, ctx: &Context) -> Result<Policy, LoadError> {
        let files = read_policy_files(sources)?;
        Policy::from_files(sources.clone(), &files, ctx)
    }

    /// [`Policy::load`] without running the self-tests (for `sandgate policy
    /// test`, which reports each result instead of failing on the first).
    pub fn load_untested(sources: &Sources, ctx: &Context) -> Result<Policy, LoadError> {
        let files = read_policy_files(sources)?;
        let merged = Policy::merge(sources, &files);
        Policy::from_merged(sources.clone(), merged, None, ctx)
    }

    /// Merge and compile already parsed files (tier order does not matter),
    /// then run their self-tests.
    pub fn from_files(
        sources: Sources,
        files: &[LoadedFile],
        ctx: &Context,
    ) -> Result<Policy, LoadError> {
        let merged = Policy::merge(&sources, files);
        let policy = Policy::from_merged(sources, merged, None, ctx)?;
        crate::selftest::check(&policy, ctx)?;
        Ok(policy)
    }

    /// Merge parsed files (tier order does not matter) into settings and rule
    /// lists, without compiling anything. The result depends only on the files
    /// and `sources`, which is what makes it cacheable (see the `cache` module).
    pub fn merge(sources: &Sources, files: &[LoadedFile]) -> Merged {
        let mut files: Vec<&LoadedFile> = files.iter().collect();
        files.sort_by_key(|f| f.tier);
        let mut settings = default_settings();
        let mut path_deny: Vec<SourceRule> = Vec::new();
        let mut path_allow: Vec<SourceRule> = Vec::new();
        let mut command_deny: Vec<SourceRule> = Vec::new();
        let mut command_allow: Vec<SourceRule> = Vec::new();
        let mut ignored = Vec::new();
        let mut tests = Vec::new();
        let mut network: Option<MergedNetwork> = None;

        // The central file may do everything, so its settings are the base that
        // the tighten-only tiers then tighten.
        if let Some(central) = files.iter().find(|f| f.tier == Tier::Central) {
            let p = &central.file.permissions;
            if p.sandbox == Some(false) {
                settings.sandbox = false;
                settings.sandbox_reason = format!(
                    "switched off by `sandbox: false` in {}",
                    central.path.display()
                );
            }
            if let Some(shell) = p.commands.shell {
                settings.shell = shell;
            }
            if let Some(t) = p.prompt.timeout {
                settings.prompt_timeout = Duration::from_secs(t);
            }
            if let Some(ask) = central.file.hooks.gemini.ask {
                settings.gemini_ask = ask;
            }
            if let Some(ask) = central.file.hooks.claude.ask {
                settings.claude_ask = ask;
            }
        }
        for file in &files {
            let p = &file.file.permissions;
            let path: std::sync::Arc<Path> = file.path.as_path().into();
            tests.extend(crate::selftest::from_specs(
                &file.file.tests,
                &path,
                file.tier,
            ));
            // Every path list keeps its access: a read deny rule of any tier
            // denies reading, never more and never less.
            let path_lists = [
                (&p.paths.deny, &p.paths.allow, None),
                (&p.paths.read.deny, &p.paths.read.allow, Some(Access::Read)),
                (
                    &p.paths.write.deny,
                    &p.paths.write.allow,
                    Some(Access::Write),
                ),
            ];
            for (deny, _, access) in path_lists {
                path_deny.extend(source_rules_for(deny, file, access));
            }
            command_deny.extend(source_rules(&p.commands.deny, file));
            merge_network(&mut network, &mut ignored, file);
            if file.tier == Tier::Central {
                for (_, allow, access) in path_lists {
                    path_allow.extend(source_rules_for(allow, file, access));
                }
                command_allow.extend(source_rules(&p.commands.allow, file));
                continue;
            }
            // Tighten only: no allow list of a managed or local file counts.
            let allow_lists = path_lists
                .iter()
                .map(|&(_, allow, access)| (allow, access))
                .chain([(&p.commands.allow, None)]);
            for (rules, access) in allow_lists {
                for r in source_rules_for(rules, file, access) {
                    ignored.push(IgnoredRule {
                        rule: RuleRef {
                            pattern: r.text,
                            list: List::Allow,
                            access,
                            origin: r.origin,
                        },
                        why: "allow rules of a tighten-only file are ignored",
                    });
                }
            }
            if p.sandbox == Some(true) && !settings.sandbox {
                settings.sandbox = true;
                settings.sandbox_reason = format!(
                    "forced on by `sandbox: true` in the {} file {}",
                    file.tier.as_str(),
                    file.path.display()
                );
            }
            if p.commands.shell == Some(true) {
                settings.shell = true;
            }
            if let Some(t) = p.prompt.timeout {
                settings.prompt_timeout = settings.prompt_timeout.min(Duration::from_secs(t));
            }
            if file.file.hooks.gemini.ask == Some(AskFallback::Deny) {
                settings.gemini_ask = AskFallback::Deny;
            }
            // Tighten only: `ask` over `defer`, `deny` over both.
            if let Some(ask) = file.file.hooks.claude.ask {
                settings.claude_ask = settings.claude_ask.max(ask);
            }
        }
        // A larger log only keeps more: every tier may raise the size, none lower it.
        settings.audit_max_bytes = files.iter().filter_map(|f| f.file.audit.max_bytes).max();
        settings.isolation = merge_isolation(&files);
        if sources.no_sandbox {
            settings.sandbox = false;
            settings.sandbox_reason = "switched off by --no-sandbox".into();
        }
        Merged {
            settings,
            path_deny,
            path_allow,
            command_deny,
            command_allow,
            ignored,
            tests,
            no_policy_files: files.is_empty(),
            network,
        }
    }

    /// Compile merged rules for `ctx` (the self-tests are not run: see
    /// [`crate::selftest::check`]). `command_literals` (deny, allow) are the
    /// required literals a previous [`CommandRules::compile`] of the same rules
    /// found; with them no rule is checked again: path globs and command
    /// regexes are parsed on first use.
    pub fn from_merged(
        sources: Sources,
        merged: Merged,
        command_literals: Option<CommandLiterals>,
        ctx: &Context,
    ) -> Result<Policy, LoadError> {
        Policy::from_checked(sources, merged, command_literals, None, ctx)
    }

    /// [`Policy::from_merged`], where `path_globs` (deny, allow), if given, are
    /// the absolute globs a [`crate::rules::PrefixCanonicalizer`] gave for the path
    /// rules and that are known to be still valid for `ctx` (used only with
    /// `command_literals`, that is for rules checked before).
    pub(crate) fn from_checked(
        sources: Sources,
        merged: Merged,
        command_literals: Option<CommandLiterals>,
        path_globs: Option<(Vec<String>, Vec<String>)>,
        ctx: &Context,
    ) -> Result<Policy, LoadError> {
        let Merged {
            settings,
            path_deny,
            path_allow,
            command_deny,
            command_allow,
            ignored,
            tests,
            no_policy_files,
            network,
        } = merged;
        let floor = floor::source_rules_for(&ctx.home);
        let mut problems: Vec<Problem> = Vec::new();
        // Network entries are few and cheap to parse: checked on every load.
        let network = match network.as_ref().map(NetworkPolicy::compile) {
            None => None,
            Some(Ok(n)) => Some(n),
            Some(Err(mut p)) => {
                problems.append(&mut p);
                None
            }
        };
        let floor = collect(
            PathRules::compile(&floor, List::Floor, &ctx.cwd, &ctx.home),
            &mut problems,
        );
        // With the literals of a previous compile, every rule was checked then:
        // nothing is parsed again until a subject needs it.
        let (path_deny, path_allow, command_deny, command_allow) = match command_literals {
            Some((deny, allow)) => {
                let (globs_deny, globs_allow) = match path_globs {
                    Some((d, a)) => (
                        PathRules::from_globs(&path_deny, List::Deny, d),
                        PathRules::from_globs(&path_allow, List::Allow, a),
                    ),
                    None => (
                        PathRules::from_checked(&path_deny, List::Deny, &ctx.cwd, &ctx.home),
                        PathRules::from_checked(&path_allow, List::Allow, &ctx.cwd, &ctx.home),
                    ),
                };
                (
                    globs_deny,
                    globs_allow,
                    CommandRules::from_checked(&command_deny, List::Deny, deny),
                    CommandRules::from_checked(&command_allow, List::Allow, allow),
                )
            }
            None => (
                collect(
                    PathRules::compile(&path_deny, List::Deny, &ctx.cwd, &ctx.home),
                    &mut problems,
                ),
                collect(
                    PathRules::compile(&path_allow, List::Allow, &ctx.cwd, &ctx.home),
                    &mut problems,
                ),
                collect(
                    CommandRules::compile(&command_deny, List::Deny),
                    &mut problems,
                ),
                collect(
                    CommandRules::compile(&command_allow, List::Allow),
                    &mut problems,
                ),
            ),
        };
        match (floor, path_deny, path_allow, command_deny, command_allow) {
            (
                Some(floor),
                Some(path_deny),
                Some(path_allow),
                Some(command_deny),
                Some(command_allow),
            ) if problems.is_empty() => Ok(Policy {
                settings,
                sources,
                floor_dirs: floor::floor_dirs(floor.compiled_globs()),
                floor_inodes: OnceLock::new(),
                disk: Arc::new(RealDisk),
                floor,
                path_deny,
                path_allow,
                command_deny,
                command_allow,
                ignored,
                tests,
                no_policy_files,
                network,
            }),
            _ => {
                problems.sort_by(|a, b| (&a.file, a.position).cmp(&(&b.file, b.position)));
                Err(LoadError { problems })
            }
        }
    }

    /// The policy reading the file system through `disk` while it decides
    /// (patterns expanded, the floor's inodes, the files deny rules name)
    /// instead of through [`RealDisk`], this process's file system.
    pub fn with_disk(mut self, disk: Arc<dyn Disk>) -> Policy {
        self.disk = disk;
        self.floor_inodes = OnceLock::new();
        self
    }

    /// What the decisions read from the file system.
    pub(crate) fn disk(&self) -> &dyn Disk {
        &*self.disk
    }

    /// The floor files that have other hard links (walked once, on first need).
    pub(crate) fn floor_inodes(&self) -> &FloorInodes {
        self.floor_inodes
            .get_or_init(|| FloorInodes::collect_from(self.disk(), &self.floor_dirs))
    }

    /// Whether no policy file exists (the gate then asks about everything).
    pub fn has_no_policy_files(&self) -> bool {
        self.no_policy_files
    }

    /// The merged settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The files this policy was loaded from.
    pub fn sources(&self) -> &Sources {
        &self.sources
    }

    /// The built-in floor rules.
    pub fn floor_rules(&self) -> &[RuleRef] {
        self.floor.rules()
    }

    /// Path deny rules (all tiers), path allow rules (central only); each
    /// rule's [`RuleRef::access`] says whether it is about reading, writing
    /// or both.
    pub fn path_rules(&self) -> (&[RuleRef], &[RuleRef]) {
        (self.path_deny.rules(), self.path_allow.rules())
    }

    /// Command deny rules (all tiers), command allow rules (central only).
    pub fn command_rules(&self) -> (&[RuleRef], &[RuleRef]) {
        (self.command_deny.rules(), self.command_allow.rules())
    }

    /// The network lists (`permissions.network`), `None` when no tier has
    /// them: the network is then not filtered by host.
    pub fn network(&self) -> Option<&NetworkPolicy> {
        self.network.as_ref()
    }

    /// Rules the tighten-only merge ignored.
    pub fn ignored_rules(&self) -> &[IgnoredRule] {
        &self.ignored
    }

    /// The self-tests of every file, in tier order.
    pub fn tests(&self) -> &[PolicyTest] {
        &self.tests
    }

    /// Decide a tool call (docs/policy.md, "How a call is decided"). With no
    /// policy file at all, an ASK's reason also says how to write one.
    pub fn evaluate(&self, call: &ToolCall, ctx: &Context) -> Decision {
        let mut decision = if self.settings.sandbox {
            self.evaluate_rules(call, ctx)
        } else {
            self.sandbox_off(call)
        };
        if self.no_policy_files && decision.verdict == Verdict::Ask {
            decision.reason = format!("{}; {NO_POLICY_HINT}", decision.reason);
        }
        decision
    }

    /// 1. The sandbox is off → ALLOW.
    fn sandbox_off(&self, call: &ToolCall) -> Decision {
        let subject = match tool_kind(&call.tool) {
            ToolKind::File => call.str_param("path").unwrap_or("").to_string(),
            ToolKind::Exec => call.str_param("command").unwrap_or("").to_string(),
            ToolKind::OutOfScope => call.tool.clone(),
        };
        Decision::new(
            Verdict::Allow,
            subject,
            format!("the sandbox is off ({})", self.settings.sandbox_reason),
        )
    }

    /// What the rules decide for a call, as if the sandbox were on (steps 2
    /// to 6 of [`Policy::evaluate`]). The self-tests are judged this way, so
    /// that `sandbox: false` or `--no-sandbox` does not fail them.
    pub fn evaluate_rules(&self, call: &ToolCall, ctx: &Context) -> Decision {
        let kind = tool_kind(&call.tool);
        match kind {
            // 2. Tool outside scope → ALLOW.
            ToolKind::OutOfScope => Decision::new(
                Verdict::Allow,
                call.tool.clone(),
                format!("tool `{}` is outside the gate's scope", call.tool),
            ),
            // 3.–6. for paths, as the tool reads or writes them.
            ToolKind::File => match call.params.get("path") {
                None | Some(serde_json::Value::Null) => {
                    self.evaluate_path("", file_access(&call.tool), ctx)
                }
                Some(serde_json::Value::String(p)) => {
                    self.evaluate_path(p, file_access(&call.tool), ctx)
                }
                Some(_) => Decision::new(
                    Verdict::Deny,
                    "",
                    format!("`{}` needs `path` to be a string", call.tool),
                ),
            },
            // 3.–6. for commands, judged where they run (`params.cwd`).
            ToolKind::Exec => match call.params.get("command") {
                Some(serde_json::Value::String(c)) if !c.trim().is_empty() => {
                    match call.params.get("cwd") {
                        None | Some(serde_json::Value::Null) => self.evaluate_command(c, ctx),
                        Some(serde_json::Value::String(dir)) => match ctx.with_cwd(dir) {
                            Ok(here) => self.evaluate_command(c, &here),
                            Err(e) => Decision::new(Verdict::Deny, c.as_str(), e.to_string()),
                        },
                        Some(_) => Decision::new(
                            Verdict::Deny,
                            c.as_str(),
                            format!("`{}` needs `cwd` to be a string", call.tool),
                        ),
                    }
                }
                Some(serde_json::Value::String(_)) | None | Some(serde_json::Value::Null) => {
                    Decision::new(Verdict::Deny, "", "the command is empty")
                }
                Some(_) => Decision::new(
                    Verdict::Deny,
                    "",
                    format!("`{}` needs `command` to be a string", call.tool),
                ),
            },
        }
    }

    /// The path gate alone, for reading or for writing `path`: canonicalize,
    /// then the floor, the deny rules about that access, the allow rules
    /// about it, otherwise ask.
    pub fn evaluate_path(&self, path: &str, access: Access, ctx: &Context) -> Decision {
        let canonical = match canon::canonicalize(path, &ctx.cwd, &ctx.home) {
            Ok(p) => p,
            Err(e) => {
                return Decision::new(
                    Verdict::Deny,
                    path.replace('\0', "\\0"),
                    format!("the path cannot be checked: {e}"),
                )
            }
        };
        self.decide_canonical_path(&canonical, access)
    }

    /// The path gate for a path that is already canonical, for reading or
    /// for writing it. A regular file with more than one link that is a
    /// floor file under another name is the floor file.
    pub fn decide_canonical_path(&self, canonical: &Path, access: Access) -> Decision {
        let subject = canonical.to_string_lossy().into_owned();
        let meta = self.disk().stat(canonical);
        if let Some((rule, reason)) = Gate::new(self).protected(canonical, meta.as_ref(), access) {
            return Decision {
                verdict: Verdict::Deny,
                subject,
                rule,
                reason,
            };
        }
        if let Some(rule) = self.path_allow.first_match_for(canonical, access) {
            let reason = format!(
                "`{subject}` matches the {} rule `{}` ({})",
                rule.list_words(),
                rule.pattern,
                rule.origin
            );
            return Decision::by_rule(Verdict::Allow, subject, rule.clone(), reason);
        }
        let reason = format!(
            "no allow rule matched `{subject}` for {}",
            access_noun(access)
        );
        Decision::new(Verdict::Ask, subject, reason)
    }

    /// Every rule matching a path, floor first, then deny and allow.
    pub fn path_matches(&self, canonical: &Path) -> Vec<&RuleRef> {
        let mut all = self.floor.all_matches(canonical);
        all.extend(self.path_deny.all_matches(canonical));
        all.extend(self.path_allow.all_matches(canonical));
        all
    }

    /// Every rule matching a command string (deny first, then allow).
    pub fn command_matches(&self, command: &str) -> Vec<&RuleRef> {
        let mut all = self.command_deny.all_matches(command);
        all.extend(self.command_allow.all_matches(command));
        all
    }

    /// The absolute globs the path rules compiled to, for `policy show`.
    pub fn compiled_path_globs(&self) -> (&[String], &[String], &[String]) {
        (
            self.floor.compiled_globs(),
            self.path_deny.compiled_globs(),
            self.path_allow.compiled_globs(),
        )
    }

    /// The canonical form of a path, as the gate sees it.
    pub fn canonical_path(&self, path: &str, ctx: &Context) -> Result<PathBuf, canon::CanonError> {
        canon::canonicalize(path, &ctx.cwd, &ctx.home)
    }
}

impl Tested for Policy {
    fn tests(&self) -> &[PolicyTest] {
        Policy::tests(self)
    }

    fn evaluate_rules(&self, call: &ToolCall, ctx: &Context) -> Decision {
        Policy::evaluate_rules(self, call, ctx)
    }
}

/// What a file tool does to its `path`: the [`crate::request::GATED_TOOLS`]
/// entry says; a file tool without one is judged as a write, the stricter.
fn file_access(tool: &str) -> Access {
    gated_tool(tool)
        .and_then(|t| t.access)
        .unwrap_or(Access::Write)
}

/// `reading` or `writing`.
pub(crate) fn access_noun(access: Access) -> &'static str {
    match access {
        Access::Read => "reading",
        Access::Write => "writing",
    }
}

/// Keep a compiled list, or move its problems into `problems`.
fn collect<T>(result: Result<T, Vec<Problem>>, problems: &mut Vec<Problem>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(mut p) => {
            problems.append(&mut p);
            None
        }
    }
}

/// Add `file`'s `permissions.network` to the merge: every tier's `deny`
/// entries; the central file's `allow` entries, a tighten-only file's ignored.
fn merge_network(
    network: &mut Option<MergedNetwork>,
    ignored: &mut Vec<IgnoredRule>,
    file: &LoadedFile,
) {
    let Some(lists) = &file.file.permissions.network else {
        return;
    };
    let merged = network.get_or_insert_with(MergedNetwork::default);
    merged.deny.extend(source_rules(&lists.deny, file));
    if file.tier == Tier::Central {
        merged.allow.extend(source_rules(&lists.allow, file));
        return;
    }
    for r in source_rules(&lists.allow, file) {
        ignored.push(IgnoredRule {
            rule: RuleRef {
                pattern: r.text,
                list: List::Allow,
                access: None,
                origin: r.origin,
            },
            why: "allow rules of a tighten-only file are ignored",
        });
    }
}

/// Isolation: the central file's, if it defines one; otherwise a tighten-only
/// file may add one (managed before local). A tighten-only file can neither
/// switch off nor replace the central isolation.
fn merge_isolation(files: &[&LoadedFile]) -> Option<(IsolationConfig, Tier)> {
    let defined = |f: &&&LoadedFile| {
        f.file
            .permissions
            .exec
            .isolation
            .as_ref()
            .is_some_and(|i| i.mode.unwrap_or_default() != IsolationMode::None)
    };
    let pick = files
        .iter()
        .filter(defined)
        .find(|f| f.tier == Tier::Central)
        .or_else(|| {
            files
                .iter()
                .filter(defined)
                .find(|f| f.tier == Tier::Managed)
        })
        .or_else(|| files.iter().filter(defined).find(|f| f.tier == Tier::Local))?;
    let iso = pick.file.permissions.exec.isolation.clone()?;
    Some((iso, pick.tier))
}

/// The command gate's view of this policy (`gate::Rules`): its rules, the
/// floor, the disk and the path gate, read through methods.
impl gate::Rules for Policy {
    fn shell(&self) -> bool {
        self.settings.shell
    }
    fn command_deny(&self) -> &CommandRules {
        &self.command_deny
    }
    fn command_allow(&self) -> &CommandRules {
        &self.command_allow
    }
    fn floor(&self) -> &PathRules {
        &self.floor
    }
    fn path_deny(&self) -> &PathRules {
        &self.path_deny
    }
    fn path_allow(&self) -> &PathRules {
        &self.path_allow
    }
    fn floor_dirs(&self) -> &[PathBuf] {
        &self.floor_dirs
    }
    fn floor_inodes(&self) -> &FloorInodes {
        Policy::floor_inodes(self)
    }
    fn disk(&self) -> &dyn Disk {
        Policy::disk(self)
    }
    fn evaluate_path(&self, path: &str, access: Access, ctx: &Context) -> Decision {
        Policy::evaluate_path(self, path, access, ctx)
    }
    fn decide_canonical_path(&self, canonical: &Path, access: Access) -> Decision {
        Policy::decide_canonical_path(self, canonical, access)
    }
}

/// The command gate (`command`, `pathwords`), on this policy.
impl Policy {
    /// The command gate alone, in the mode `commands.shell` selects.
    pub fn evaluate_command(&self, command: &str, ctx: &Context) -> Decision {
        Gate::new(self).evaluate_command(command, ctx)
    }

    /// Raw mode (`commands.shell: false`): one regex over the whole string.
    pub fn evaluate_command_raw(&self, command: &str) -> Decision {
        Gate::new(self).evaluate_command_raw(command)
    }

    /// The command gate with its parts: in shell mode the verdict of every
    /// simple command, redirection and unanalysable construct; in raw mode
    /// only the decision.
    pub fn explain_command(&self, command: &str, ctx: &Context) -> CommandExplanation {
        Gate::new(self).explain_command(command, ctx)
    }

    /// The first read deny rule that names, exactly (`~/.netrc`,
    /// `~/.config/gh/hosts.yml`) or as a directory (`~/.kube/**`), a path
    /// that exists strictly below `root`, with that path: a read of every
    /// file below `root` reads it. Rules with other patterns (`**/*.pem`)
    /// are not looked for. `root` is canonical.
    pub fn read_deny_below(&self, root: &Path) -> Option<(&RuleRef, PathBuf)> {
        Gate::new(self).read_deny_below(root)
    }
}
