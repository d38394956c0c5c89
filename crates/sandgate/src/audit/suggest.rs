//! `sandgate audit suggest`: for questions the log shows asked again and
//! again, the narrowest allow rule that would have settled them.
//!
//! Every asked call is decided again by the current policy (a call a rule
//! now decides needs nothing). The simple commands of the calls that still
//! ask go into a tree of words (the form an allow rule must match: what runs
//! once wrappers are stripped), the paths into a tree of path components.
//! The tree is walked from the leaves up: a node whose asks, not already
//! covered by a deeper suggestion, number at least `min` becomes a
//! whole-word prefix rule (`^npm run test:unit( |$)`) or a path rule (the
//! exact file, or `dir/**`), and takes in the suggestions beneath it. Reads
//! and writes are kept apart: asked reads give `paths.read.allow` rules,
//! asked writes `paths.write.allow` rules.
//!
//! A candidate is checked with the real policy engine before it is offered:
//! it is withheld when, added to the policy, it would allow a call the log
//! shows denied (by a rule or the floor, or by a human's answer), when on its
//! own it would allow a simple command a deny rule refused in the log (so
//! `^npm( |$)` is withheld once `npm publish` was denied), or when a path
//! rule would cover any directory of the built-in floor, or when `sandgate
//! policy allow` would refuse it without `--force`. A withheld rule
//! withholds every broader one above it, since each of those allows all it
//! does. Each offered rule is verified to allow the asks it counts.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use sandgate_policy::load::LoadedFile;
use sandgate_policy::policy::Merged;
use sandgate_policy::request::{tool_kind, ToolKind};
use sandgate_policy::rules::SourceRule;
use sandgate_policy::{Access, Context, Origin, PartKind, Policy, Sources, ToolCall, Verdict};
use serde::Serialize;
use serde_json::json;

use super::read::{Entry, Log, VerdictWord};

/// What a suggested rule is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleKind {
    /// A command regex.
    Command,
    /// A path glob.
    Path,
}

impl RuleKind {
    fn as_str(self) -> &'static str {
        match self {
            RuleKind::Command => "command",
            RuleKind::Path => "path",
        }
    }
}

/// What a candidate rule is: its kind and, for a path rule, the access it
/// is about (`paths.read.allow`, `paths.write.allow`; `None`: `paths.allow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Target {
    kind: RuleKind,
    access: Option<Access>,
}

/// One suggested rule.
#[derive(Debug, Clone, Serialize)]
pub struct Suggestion {
    /// `command` or `path`.
    pub kind: RuleKind,
    /// For a path rule: `read` or `write` when it is about one access only.
    pub access: Option<&'static str>,
    /// The rule, as `sandgate policy allow` takes it.
    pub rule: String,
    /// How many asked calls it would have allowed (each simple command of a
    /// compound call counts on its own).
    pub count: usize,
    /// Up to three of them, most asked first.
    pub examples: Vec<String>,
    /// The one command that adds it, quoted for a POSIX shell.
    pub command: String,
    /// The same command as arguments, for tools.
    pub args: Vec<String>,
}

/// A rule that was not offered, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Withheld {
    /// `command` or `path`.
    pub kind: RuleKind,
    /// For a path rule: `read` or `write` when it is about one access only.
    pub access: Option<&'static str>,
    /// The rule.
    pub rule: String,
    /// How many asks it would have covered.
    pub count: usize,
    /// Why not.
    pub why: String,
}

/// A command asked often that no rule can settle safely: it runs a shell,
/// an interpreter or a program that runs programs (a download piped into a
/// shell among them), and a rule allowing it would allow any program.
#[derive(Debug, Clone, Serialize)]
pub struct NoSafeRule {
    /// The asked command, as it was asked.
    pub command: String,
    /// How often it was asked.
    pub count: usize,
    /// Why no rule is offered.
    pub why: String,
}

/// Everything `suggest` found.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    /// The rules, most asks first.
    pub suggestions: Vec<Suggestion>,
    /// Candidates that would have opened too much.
    pub withheld: Vec<Withheld>,
    /// Commands asked at least `min` times that no rule can settle safely,
    /// most asks first.
    pub no_safe_rule: Vec<NoSafeRule>,
    /// Asked calls in the log (gated tools only).
    pub asked: usize,
    /// Of them, how many the current policy decides without asking.
    pub decided_now: usize,
}

/// The current policy, and what candidates are compiled from.
pub struct Engine {
    sources: Sources,
    merged: Merged,
    current: Policy,
    ctx: Context,
}

impl Engine {
    /// The policy of `sources` (as every subcommand loads it), for `ctx`.
    pub fn load(sources: &Sources, ctx: &Context) -> Result<Engine, String> {
        let files: Vec<LoadedFile> =
            sandgate_policy::load::read_policy_files(sources).map_err(|e| e.to_string())?;
        let merged = Policy::merge(sources, &files);
        let current = Policy::from_merged(sources.clone(), merged.clone(), None, ctx)
            .map_err(|e| e.to_string())?;
        Ok(Engine {
            sources: sources.clone(),
            merged,
            current,
            ctx: ctx.clone(),
        })
    }

    fn compile(&self, merged: Merged) -> Option<Policy> {
        Policy::from_merged(self.sources.clone(), merged, None, &self.ctx).ok()
    }

    /// The policy with `rule` added to its allow list.
    fn with(&self, target: Target, rule: &str) -> Option<Policy> {
        let mut merged = self.merged.clone();
        merged.tests.clear();
        list(&mut merged, target.kind).push(candidate(rule, target.access));
        self.compile(merged)
    }

    /// A policy of `rule` alone: no deny rules (the floor stays, as always).
    fn alone(&self, target: Target, rule: &str) -> Option<Policy> {
        let mut merged = self.merged.clone();
        merged.tests.clear();
        merged.command_deny.clear();
        merged.command_allow.clear();
        merged.path_deny.clear();
        merged.path_allow.clear();
        list(&mut merged, target.kind).push(candidate(rule, target.access));
        self.compile(merged)
    }

    /// The context of a call made in `cwd` (the current one when it is gone).
    fn context(&self, cwd: Option<&str>) -> Context {
        cwd.and_then(|dir| Context::new(Path::new(dir), &self.ctx.home).ok())
            .unwrap_or_else(|| self.ctx.clone())
    }
}

fn list(merged: &mut Merged, kind: RuleKind) -> &mut Vec<SourceRule> {
    match kind {
        RuleKind::Command => &mut merged.command_allow,
        RuleKind::Path => &mut merged.path_allow,
    }
}

fn candidate(rule: &str, access: Option<Access>) -> SourceRule {
    SourceRule {
        text: rule.to_string(),
        origin: Origin::Builtin,
        column: 0,
        access,
    }
}

/// One distinct call of the log, with how often it appears.
struct Call {
    tool: String,
    subject: String,
    ctx: Context,
    times: usize,
}

impl Call {
    fn tool_call(&self) -> ToolCall {
        match tool_kind(&self.tool) {
            ToolKind::Exec => ToolCall::new(&self.tool, json!({ "command": self.subject })),
            _ => ToolCall::new(&self.tool, json!({ "path": self.subject })),
        }
    }
}

/// The distinct calls of gated tools among `entries`, most frequent first.
fn distinct<'a>(
    engine: &Engine,
    entries: impl Iterator<Item = &'a Entry>,
    contexts: &mut HashMap<Option<String>, Context>,
) -> Vec<Call> {
    let mut counts: HashMap<(&str, &str, Option<&str>), usize> = HashMap::new();
    let mut order = Vec::new();
    for e in entries {
        if tool_kind(&e.tool) == ToolKind::OutOfScope {
            continue;
        }
        let key = (e.tool.as_str(), e.subject.as_str(), e.cwd.as_deref());
        let n = counts.entry(key).or_insert(0);
        if *n == 0 {
            order.push(key);
        }
        *n += 1;
    }
    let mut calls: Vec<Call> = order
        .into_iter()
        .map(|key @ (tool, subject, cwd)| {
            let ctx = contexts
                .entry(cwd.map(str::to_string))
                .or_insert_with(|| engine.context(cwd))
                .clone();
            Call {
                tool: tool.to_string(),
                subject: subject.to_string(),
                ctx,
                times: counts.get(&key).copied().unwrap_or(0),
            }
        })
        .collect();
    calls.sort_by_key(|c| std::cmp::Reverse(c.times));
    calls
}

/// One asked thing a rule could settle: a simple command (its words, as an
/// allow rule must match them) or a canonical path, and the call it is in.
struct Asked {
    key: Vec<String>,
    call: usize,
    /// The simple command's normalized text (to find it again in an explanation).
    part: Option<String>,
}

/// Find the rules for `log` with `engine`; `min` asks make a suggestion.
pub fn suggest(log: &Log, engine: &Engine, min: usize) -> Report {
    let min = min.max(1);
    let mut contexts = HashMap::new();
    let asks = distinct(
        engine,
        log.entries.iter().filter(|e| e.verdict == VerdictWord::Ask),
        &mut contexts,
    );
    let denied = distinct(
        engine,
        log.entries.iter().filter(|e| e.denied()),
        &mut contexts,
    );
    let mut report = Report {
        asked: asks.iter().map(|c| c.times).sum(),
        ..Report::default()
    };
    let mut commands = Vec::new();
    // Reads, writes, and tools whose access is not known (both).
    let mut paths: [Vec<Asked>; 3] = Default::default();
    for (i, call) in asks.iter().enumerate() {
        if engine
            .current
            .evaluate(&call.tool_call(), &call.ctx)
            .verdict
            != Verdict::Ask
        {
            report.decided_now += call.times;
            continue;
        }
        match tool_kind(&call.tool) {
            ToolKind::Exec => match runs_any_program(engine, call) {
                // None of its commands gets a rule, not even the download
                // that feeds the shell.
                Some(why) => {
                    if call.times >= min {
                        report.no_safe_rule.push(NoSafeRule {
                            command: call.subject.clone(),
                            count: call.times,
                            why,
                        });
                    }
                }
                None => commands.extend(asked_commands(engine, call, i)),
            },
            ToolKind::File => paths[access_index(access_of(&call.tool))].push(Asked {
                key: components(&call.subject),
                call: i,
                part: None,
            }),
            ToolKind::OutOfScope => {}
        }
    }
    let denied: Vec<Denied> = denied
        .iter()
        .map(|call| Denied::new(engine, call))
        .collect();
    let judge = Judge {
        engine,
        asks: &asks,
        denied: &denied,
        min,
    };
    let [reads, writes, both] = paths;
    let path = |access| Target {
        kind: RuleKind::Path,
        access,
    };
    let trees = [
        (
            Target {
                kind: RuleKind::Command,
                access: None,
            },
            commands,
        ),
        (path(Some(Access::Read)), reads),
        (path(Some(Access::Write)), writes),
        (path(None), both),
    ];
    for (target, items) in trees {
        let mut tree = Node::default();
        for (i, item) in items.iter().enumerate() {
            tree.insert(&item.key, i, asks[item.call].times);
        }
        let mut prefix = Vec::new();
        let mut found = Vec::new();
        judge.walk(
            target,
            &tree,
            &mut prefix,
            &items,
            &mut found,
            &mut report.withheld,
        );
        report.suggestions.extend(found);
    }
    report
        .suggestions
        .sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.rule.cmp(&b.rule)));
    report
}

/// The program-running word of a command rule's words after which no
/// program is named (`sudo`, `sudo -u root`, `env FOO=1`, `timeout 60`):
/// the rule would allow whatever program follows. A word after an option
/// is taken for its value, so a rule is withheld where in doubt.
fn open_runner(words: &[String]) -> Option<&str> {
    use sandgate_policy::shell::entry_named;
    let mut open = None;
    let mut after_option = false;
    for word in words {
        let name = word.rsplit('/').next().unwrap_or(word);
        let option = word.starts_with('-');
        if entry_named(name).is_some_and(|e| e.wrapper.is_some() || e.runs_any) {
            open = Some(word.as_str());
        } else if open.is_some()
            // A word after an option may be its value (`sudo -u root`).
            && !after_option
            && !option
            && !word.contains('=')
            && !word.chars().all(|c| c.is_ascii_digit() || c == '.')
        {
            open = None;
        }
        after_option = option;
    }
    open
}

/// Why no rule can settle `call` safely: one of the parts that ask (what a
/// rule would have to allow) runs a shell, an interpreter or a program that
/// runs programs (in any form: `sudo bash` runs `bash`), or a program the
/// analyser cannot see into (`eval`, `source`). A shell whose script the
/// gate reads (`sh -c 'npm test'`) is not such a part: what asks is the
/// script's commands. `None` when every part may get a rule.
fn runs_any_program(engine: &Engine, call: &Call) -> Option<String> {
    let explained = engine.current.explain_command(&call.subject, &call.ctx);
    let analysis = sandgate_policy::shell::analyse(&call.subject);
    let asking: Vec<_> = explained
        .parts
        .iter()
        .filter(|p| p.verdict == Verdict::Ask)
        .collect();
    let fed = if asking.len() > 1 && call.subject.contains('|') {
        ", fed by the commands before it"
    } else {
        ""
    };
    for part in &asking {
        let texts: Vec<&str> = match analysis.commands.iter().find(|c| c.normalized == part.text) {
            Some(simple) => simple.forms.iter().map(|f| f.text.as_str()).collect(),
            None => vec![part.text.as_str(), part.source.as_str()],
        };
        for text in texts {
            if let Some((name, what)) = runner(text) {
                return Some(format!(
                    "it runs `{name}`, {what}{fed}: a rule that allows it allows any program"
                ));
            }
        }
    }
    None
}

/// The program `text` (a simple command's words) runs, and what it is, when
/// it is a shell, an interpreter or a program that runs programs.
fn runner(text: &str) -> Option<(&str, &'static str)> {
    use sandgate_policy::shell::{entry_named, reads};
    // The program: the first word that is not a `NAME=value` prefix.
    let first = text.split(' ').find(|w| {
        !w.split_once('=').is_some_and(|(n, _)| {
            !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    })?;
    let name = first.rsplit('/').next().unwrap_or(first);
    let entry = entry_named(name);
    let what = if entry.is_some_and(|e| e.shell.is_some()) {
        "a shell"
    } else if reads::interpreter_named(name).is_some() {
        "an interpreter"
    } else if entry.is_some_and(|e| e.runs_any || e.opaque.is_some()) {
        "a program that runs programs"
    } else {
        return None;
    };
    Some((name, what))
}

/// The simple commands of an asked call that no allow rule matched.
fn asked_commands(engine: &Engine, call: &Call, index: usize) -> Vec<Asked> {
    let explained = engine.current.explain_command(&call.subject, &call.ctx);
    let analysis = sandgate_policy::shell::analyse(&call.subject);
    let mut out = Vec::new();
    for part in &explained.parts {
        if part.kind != PartKind::Command || part.verdict != Verdict::Ask {
            continue;
        }
        let Some(simple) = analysis.commands.iter().find(|c| c.normalized == part.text) else {
            continue;
        };
        let Some(form) = simple.allow_forms().last() else {
            continue;
        };
        let key: Vec<String> = form.text.split(' ').map(str::to_string).collect();
        if key.iter().all(String::is_empty) {
            continue;
        }
        out.push(Asked {
            key,
            call: index,
            part: Some(part.text.clone()),
        });
    }
    out
}

/// The access a file tool has: `None` for one sandgate does not know (a read
/// and a write).
fn access_of(tool: &str) -> Option<Access> {
    sandgate_policy::request::gated_tool(tool).and_then(|t| t.access)
}

fn access_index(access: Option<Access>) -> usize {
    match access {
        Some(Access::Read) => 0,
        Some(Access::Write) => 1,
        None => 2,
    }
}

/// The components of a canonical path: `/a/b` → `["a", "b"]`.
fn components(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

/// A tree of words or path components; each node counts the asks beneath it.
#[derive(Default)]
struct Node {
    children: BTreeMap<String, Node>,
    /// Asks that end here (the whole command, the path itself).
    here: usize,
    /// The asked things at or beneath it (indices into the items).
    items: Vec<usize>,
}

impl Node {
    fn insert(&mut self, key: &[String], item: usize, times: usize) {
        let mut node = self;
        node.items.push(item);
        for word in key {
            node = node.children.entry(word.clone()).or_default();
            node.items.push(item);
        }
        node.here += times;
    }
}

struct Judge<'a> {
    engine: &'a Engine,
    asks: &'a [Call],
    denied: &'a [Denied<'a>],
    min: usize,
}

/// A call the log shows denied, with what the current policy makes of it
/// (worked out once, not for every candidate).
struct Denied<'a> {
    call: &'a Call,
    /// The current policy allows it now: no candidate can change that.
    allowed_now: bool,
    /// Its simple commands that a command deny rule refuses.
    refused: Vec<String>,
}

impl<'a> Denied<'a> {
    fn new(engine: &Engine, call: &'a Call) -> Denied<'a> {
        let allowed_now = engine
            .current
            .evaluate(&call.tool_call(), &call.ctx)
            .verdict
            == Verdict::Allow;
        let refused = if tool_kind(&call.tool) == ToolKind::Exec {
            engine
                .current
                .explain_command(&call.subject, &call.ctx)
                .parts
                .into_iter()
                .filter(|p| {
                    p.kind == PartKind::Command
                        && p.verdict == Verdict::Deny
                        && p.rule
                            .as_ref()
                            .is_some_and(|r| r.list == sandgate_policy::List::Deny)
                })
                .map(|p| p.text)
                .collect()
        } else {
            Vec::new()
        };
        Denied {
            call,
            allowed_now,
            refused,
        }
    }
}

/// What a subtree left for the nodes above it.
enum Left {
    /// Asks not yet covered by a suggestion.
    Uncovered(usize),
    /// A rule here or beneath was withheld: every broader one would be too.
    Blocked,
}

impl Judge<'_> {
    fn walk(
        &self,
        target: Target,
        node: &Node,
        prefix: &mut Vec<String>,
        items: &[Asked],
        found: &mut Vec<Suggestion>,
        withheld: &mut Vec<Withheld>,
    ) -> Left {
        let mut uncovered = node.here;
        let mut blocked = false;
        let before = found.len();
        for (word, child) in &node.children {
            prefix.push(word.clone());
            match self.walk(target, child, prefix, items, found, withheld) {
                Left::Uncovered(n) => uncovered += n,
                Left::Blocked => blocked = true,
            }
            prefix.pop();
        }
        if blocked {
            return Left::Blocked;
        }
        if prefix.is_empty() || uncovered < self.min {
            return Left::Uncovered(uncovered);
        }
        let Some(rule) = rule_for(target.kind, prefix, node, &self.engine.ctx.home) else {
            return Left::Uncovered(uncovered);
        };
        if target.kind == RuleKind::Command {
            if let Some(runner) = open_runner(prefix) {
                let count: usize = node
                    .items
                    .iter()
                    .filter_map(|&i| items.get(i))
                    .map(|a| self.asks[a.call].times)
                    .sum();
                withheld.push(Withheld {
                    kind: target.kind,
                    access: None,
                    rule,
                    count,
                    why: format!(
                        "`{runner}` runs the program named after it, and the rule does not say which"
                    ),
                });
                return Left::Blocked;
            }
        }
        let covered: Vec<&Asked> = node.items.iter().filter_map(|&i| items.get(i)).collect();
        let count: usize = covered.iter().map(|a| self.asks[a.call].times).sum();
        let (Some(with), Some(alone)) = (
            self.engine.with(target, &rule),
            self.engine.alone(target, &rule),
        ) else {
            return Left::Uncovered(0);
        };
        if let Some(why) = self.unsafe_because(target.kind, &with, &alone) {
            withheld.push(Withheld {
                kind: target.kind,
                access: target.access.map(Access::as_str),
                rule,
                count,
                why,
            });
            return Left::Blocked;
        }
        let verified = verify(self.asks, &with, &covered);
        if verified.0 < self.min {
            return Left::Uncovered(0);
        }
        // Only what `sandgate policy allow` takes without `--force` is offered.
        let subject = match target.kind {
            RuleKind::Command => sandgate_policy::ask::SubjectKind::Command,
            RuleKind::Path => sandgate_policy::ask::SubjectKind::Path,
        };
        let refusal = sandgate_policy::lint::allow_refusal(
            &self.engine.sources,
            &self.engine.ctx,
            subject,
            &rule,
            target.access,
        );
        if let Some(why) = refusal.unwrap_or_else(|e| Some(e.to_string())) {
            withheld.push(Withheld {
                kind: target.kind,
                access: target.access.map(Access::as_str),
                rule,
                count,
                why: format!("`sandgate policy allow` refuses it: {why}"),
            });
            return Left::Blocked;
        }
        // The rule takes in every suggestion beneath it.
        found.truncate(before);
        found.push(offer(target, rule, verified.0, verified.1));
        Left::Uncovered(0)
    }

    /// Why `rule` must not be offered, or `None` when it may.
    fn unsafe_because(&self, kind: RuleKind, with: &Policy, alone: &Policy) -> Option<String> {
        if kind == RuleKind::Path {
            let home = &self.engine.ctx.home;
            for dir in sandgate_policy::floor::dirs(home) {
                for probe in [dir.clone(), dir.join("x")] {
                    if alone
                        .path_matches(&probe)
                        .iter()
                        .any(|r| r.list == sandgate_policy::List::Allow)
                    {
                        return Some(format!(
                            "it covers `{}`, which the built-in floor protects",
                            dir.display()
                        ));
                    }
                }
            }
        }
        for denied in self.denied {
            let call = denied.call;
            let same_kind = match kind {
                RuleKind::Command => tool_kind(&call.tool) == ToolKind::Exec,
                RuleKind::Path => tool_kind(&call.tool) == ToolKind::File,
            };
            if !same_kind {
                continue;
            }
            if !denied.allowed_now
                && with.evaluate(&call.tool_call(), &call.ctx).verdict == Verdict::Allow
            {
                return Some(format!(
                    "it would allow `{}`, which the log shows denied",
                    call.subject
                ));
            }
            if let Some(what) = refused_part_it_matches(alone, denied) {
                return Some(format!(
                    "it matches `{what}`, which the log shows denied (`{}`)",
                    call.subject
                ));
            }
        }
        None
    }
}

/// With the candidate added (`with`), how many of the covered asks become
/// allowed, and the examples.
fn verify(asks: &[Call], with: &Policy, covered: &[&Asked]) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut examples: Vec<(usize, String)> = Vec::new();
    for asked in covered {
        let call = &asks[asked.call];
        let allowed = match &asked.part {
            None => with.evaluate(&call.tool_call(), &call.ctx).verdict == Verdict::Allow,
            Some(text) => with
                .explain_command(&call.subject, &call.ctx)
                .parts
                .iter()
                .any(|p| {
                    p.kind == PartKind::Command && &p.text == text && p.verdict == Verdict::Allow
                }),
        };
        if allowed {
            count += call.times;
            let shown = asked.part.clone().unwrap_or_else(|| call.subject.clone());
            match examples.iter_mut().find(|(_, e)| *e == shown) {
                Some((n, _)) => *n += call.times,
                None => examples.push((call.times, shown)),
            }
        }
    }
    examples.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    (
        count,
        examples.into_iter().take(3).map(|(_, e)| e).collect(),
    )
}

/// For a call denied by a command deny rule: the first simple command the
/// rule refused that `alone` (the candidate rule by itself) allows.
fn refused_part_it_matches(alone: &Policy, denied: &Denied<'_>) -> Option<String> {
    if denied.refused.is_empty() {
        return None;
    }
    alone
        .explain_command(&denied.call.subject, &denied.call.ctx)
        .parts
        .into_iter()
        .find(|p| {
            p.kind == PartKind::Command
                && p.verdict == Verdict::Allow
                && denied.refused.contains(&p.text)
        })
        .map(|p| p.text)
}

/// The rule for the node at `prefix`: a whole-word command prefix, or the
/// exact path (a leaf) or `dir/**` (a directory), with `~` for the home.
fn rule_for(kind: RuleKind, prefix: &[String], node: &Node, home: &Path) -> Option<String> {
    match kind {
        RuleKind::Command => {
            let words: Vec<String> = prefix.iter().map(|w| regex_escape(w)).collect();
            Some(format!("^{}( |$)", words.join(" ")))
        }
        RuleKind::Path => {
            let path: PathBuf = std::iter::once("/".to_string())
                .chain(prefix.iter().cloned())
                .collect();
            let exact = sandgate_policy::persist::path_rule(&path).ok()?;
            let home_rule = sandgate_policy::persist::path_rule(home).ok()?;
            let exact = match exact.strip_prefix(&home_rule) {
                Some(rest) if rest.starts_with('/') => format!("~{rest}"),
                Some("") => "~".to_string(),
                _ => exact,
            };
            if node.children.is_empty() {
                Some(exact)
            } else {
                Some(format!("{}/**", exact.trim_end_matches('/')))
            }
        }
    }
}

/// `word` as a regex that matches it literally. Only the metacharacters are
/// escaped (`regex::escape` also escapes `-`, `#`, `&` and `~`, which would
/// make `--watch` read `\-\-watch`).
fn regex_escape(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for c in word.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn offer(target: Target, rule: String, count: usize, examples: Vec<String>) -> Suggestion {
    let mut args = vec![
        "sandgate".to_string(),
        "policy".to_string(),
        "allow".to_string(),
        target.kind.as_str().to_string(),
    ];
    if let Some(access) = target.access {
        args.push(format!("--{}", access.as_str()));
    }
    args.push(rule.clone());
    let command = args
        .iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ");
    Suggestion {
        kind: target.kind,
        access: target.access.map(Access::as_str),
        rule,
        count,
        examples,
        command,
        args,
    }
}

/// `text` as one word for a POSIX shell.
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_escaped_as_regex_literals() {
        assert_eq!(regex_escape("test:unit"), "test:unit");
        assert_eq!(regex_escape("a.b"), "a\\.b");
        assert_eq!(regex_escape("--watch"), "--watch");
        assert_eq!(regex_escape("x(1)"), "x\\(1\\)");
        assert_eq!(
            regex_escape("a*b?[c]{2}|$^"),
            "a\\*b\\?\\[c\\]\\{2\\}\\|\\$\\^"
        );
    }

    #[test]
    fn shell_quoting_keeps_the_rule_one_word() {
        assert_eq!(shell_quote("command"), "command");
        assert_eq!(shell_quote("^npm test( |$)"), "'^npm test( |$)'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
