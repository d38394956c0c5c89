//! `sandgate policy allow|deny path|command RULE [--read|--write] [--local]` and
//! `sandgate policy lint`.
//!
//! Rules added by hand go through the same writer as the prompt's "always"
//! answers: comments kept, file locked, replaced atomically, no duplicates.
//! A rule is checked (glob or regex) before anything is written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use sandgate_policy::ask::SubjectKind;
use sandgate_policy::lint::{self, lint};
use sandgate_policy::persist::{append_rule, Appended, Effect, Section};
use sandgate_policy::remove::remove_rule;
use sandgate_policy::rules::{CommandRules, PathRules, SourceRule};
use sandgate_policy::{Access, Context, List, Origin, Policy, Sources, Tier};
use serde_json::json;

use crate::setup::GlobalArgs;
use crate::{EXIT_CANNOT_CHECK, EXIT_FAILED};

/// What kind of rule to add.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RuleKind {
    /// A path glob (`~/projects/**`, `./build/*`).
    Path,
    /// A command regex (`^git( |$)`).
    Command,
    /// A network entry (`github.com`, `*.githubusercontent.com`,
    /// `github.com:22`, `127.0.0.1:8080`) of `permissions.network`.
    Domain,
}

/// The rule `policy allow|deny|remove` is about, and the file it is in.
#[derive(Debug, Args)]
pub struct RuleArgs {
    /// `path` (a glob), `command` (a regex) or `domain` (a host entry).
    pub kind: RuleKind,
    /// The rule, exactly as it stands (or should stand) in the file.
    pub rule: String,
    /// The local (project) file instead of the central one (allow rules
    /// cannot go there: a local file only tightens).
    #[arg(long)]
    pub local: bool,
    /// A path rule about reading only (`paths.read.*`).
    #[arg(long, conflicts_with = "write")]
    pub read: bool,
    /// A path rule about writing only (`paths.write.*`).
    #[arg(long)]
    pub write: bool,
}

impl RuleArgs {
    /// The access a path rule is about (`None`: both).
    fn access(&self) -> Option<Access> {
        match (self.read, self.write) {
            (true, _) => Some(Access::Read),
            (_, true) => Some(Access::Write),
            _ => None,
        }
    }

    /// The policy file the rule is in, and its tier; an error already said
    /// when the options do not fit together or no such file is configured.
    fn file(&self, sources: &Sources) -> Result<(PathBuf, Tier), ExitCode> {
        if self.kind == RuleKind::Command && self.access().is_some() {
            eprintln!(
                "sandgate: `--read` and `--write` are for path rules: a command rule is about running the command"
            );
            return Err(ExitCode::from(EXIT_CANNOT_CHECK));
        }
        if self.kind == RuleKind::Domain && self.access().is_some() {
            eprintln!(
                "sandgate: `--read` and `--write` are for path rules: a domain entry is about connecting to a host"
            );
            return Err(ExitCode::from(EXIT_CANNOT_CHECK));
        }
        let (target, tier) = if self.local {
            (sources.local.clone(), Tier::Local)
        } else {
            (sources.central.clone(), Tier::Central)
        };
        match target {
            Some(target) => Ok((target, tier)),
            None => {
                eprintln!("sandgate: no {} policy file is configured", tier.as_str());
                Err(ExitCode::from(EXIT_CANNOT_CHECK))
            }
        }
    }
}

/// `policy allow|deny` arguments.
#[derive(Debug, Args)]
pub struct EditArgs {
    #[command(flatten)]
    pub rule: RuleArgs,
    /// Add an allow rule even though it matches every command or path, can
    /// never match, or is shadowed by the floor or a deny rule.
    #[arg(long)]
    pub force: bool,
}

/// Add a rule by hand.
pub fn add(global: &GlobalArgs, effect: Effect, args: EditArgs) -> ExitCode {
    let EditArgs {
        rule: mut args,
        force,
    } = args;
    // A domain entry is written in its one spelling (lower case, no
    // trailing dot), so that the same host is never listed twice.
    if args.kind == RuleKind::Domain {
        if let Ok(entry) = sandgate_policy::network::Entry::parse(&args.rule) {
            args.rule = entry.to_string();
        }
    }
    if args.local && effect == Effect::Allow {
        eprintln!(
            "sandgate: `--local` is only for deny rules: a local policy file can only tighten, \
             so an allow rule there would be ignored"
        );
        return ExitCode::from(EXIT_CANNOT_CHECK);
    }
    let ctx = match crate::setup::context(global) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let sources = crate::setup::sources(global, &ctx);
    let (target, tier) = match args.file(&sources) {
        Ok(found) => found,
        Err(code) => return code,
    };
    let section = match args.kind {
        RuleKind::Path => Section::paths_for(args.access()),
        RuleKind::Command => Section::Commands,
        RuleKind::Domain => Section::Network,
    };
    let list = to_list(effect);
    if let Err(message) = check_rule(
        args.kind,
        &args.rule,
        &target,
        tier,
        list,
        args.access(),
        &ctx,
    ) {
        eprintln!(
            "sandgate: invalid {} rule `{}`: {message}",
            args.kind.name(),
            args.rule
        );
        return ExitCode::from(EXIT_CANNOT_CHECK);
    }
    if effect == Effect::Allow && !force {
        let refusal = match args.kind {
            RuleKind::Path => {
                lint::allow_refusal(&sources, &ctx, SubjectKind::Path, &args.rule, args.access())
            }
            RuleKind::Command => lint::allow_refusal(
                &sources,
                &ctx,
                SubjectKind::Command,
                &args.rule,
                args.access(),
            ),
            RuleKind::Domain => domain_refusal(&sources, &ctx, &args.rule),
        };
        match refusal {
            Ok(None) => {}
            Ok(Some(why)) => {
                eprintln!(
                    "sandgate: refusing to add the allow rule `{}`: {why}; nothing was written \
                     (`--force` adds it anyway)",
                    args.rule
                );
                return ExitCode::from(EXIT_FAILED);
            }
            Err(e) => {
                eprintln!("sandgate: {e}");
                return ExitCode::from(EXIT_CANNOT_CHECK);
            }
        }
    }
    let appended = match append_rule(&target, section, effect, &args.rule) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("sandgate: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let (added, line) = match appended {
        Appended::Added { line } => (true, line),
        Appended::AlreadyPresent { line } => (false, line),
    };
    let place = format!("permissions.{}.{}", section.key(), effect.key());
    if global.json {
        let out = json!({
            "added": added, "rule": args.rule, "list": place,
            "file": target, "line": line,
        });
        println!("{out}");
    } else if added {
        println!(
            "added `{}` to {place} in {}:{line}",
            args.rule,
            target.display()
        );
    } else {
        println!(
            "`{}` is already in {place} at {}:{line}; nothing changed",
            args.rule,
            target.display()
        );
    }
    // The whole policy must still load; say so loudly if another file breaks it.
    if let Err(e) = Policy::load(&sources, &ctx) {
        eprintln!("sandgate: the rule was written, but the policy does not load: {e}");
        return ExitCode::from(EXIT_FAILED);
    }
    ExitCode::SUCCESS
}

/// Which list `policy remove` takes a rule from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListArg {
    /// An allow list.
    Allow,
    /// A deny list.
    Deny,
}

/// `policy remove` arguments.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    #[command(flatten)]
    pub rule: RuleArgs,
    /// Only from the allow or the deny list.
    #[arg(long, value_enum)]
    pub list: Option<ListArg>,
}

/// `sandgate policy remove`: take one exact rule out of the list that holds it.
pub fn remove(global: &GlobalArgs, args: RemoveArgs) -> ExitCode {
    let RemoveArgs { rule: args, list } = args;
    let ctx = match crate::setup::context(global) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let sources = crate::setup::sources(global, &ctx);
    let (target, tier) = match args.file(&sources) {
        Ok(found) => found,
        Err(code) => return code,
    };
    let file = match sandgate_policy::load::read_policy_file(&target, tier) {
        Ok(f) => f,
        Err(p) => {
            eprintln!("sandgate: {p}");
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    };
    let sections: Vec<Section> = match (args.kind, args.read, args.write) {
        (RuleKind::Command, _, _) => vec![Section::Commands],
        (RuleKind::Domain, _, _) => vec![Section::Network],
        (RuleKind::Path, true, _) => vec![Section::PathsRead],
        (RuleKind::Path, _, true) => vec![Section::PathsWrite],
        (RuleKind::Path, _, _) => vec![Section::Paths, Section::PathsRead, Section::PathsWrite],
    };
    let effects: Vec<Effect> = match list {
        Some(ListArg::Allow) => vec![Effect::Allow],
        Some(ListArg::Deny) => vec![Effect::Deny],
        None => vec![Effect::Allow, Effect::Deny],
    };
    let place = |s: Section, e: Effect| format!("permissions.{}.{}", s.key(), e.key());
    // A domain entry is found however it is spelt (`GitHub.com.` is `github.com`).
    let same = |written: &str| match args.kind {
        RuleKind::Domain => {
            let parse = sandgate_policy::network::Entry::parse;
            written == args.rule
                || matches!((parse(written), parse(&args.rule)), (Ok(a), Ok(b)) if a == b)
        }
        _ => written == args.rule,
    };
    let holding: Vec<(Section, Effect, String)> = sections
        .iter()
        .flat_map(|&s| effects.iter().map(move |&e| (s, e)))
        .filter_map(|(s, e)| {
            let f = file.as_ref()?;
            let r = s.list(e, &f.file).iter().find(|r| same(&r.value))?;
            Some((s, e, r.value.clone()))
        })
        .collect();
    let (section, effect, written) = match holding.as_slice() {
        [] => {
            let searched: Vec<String> = sections
                .iter()
                .flat_map(|&s| effects.iter().map(move |&e| place(s, e)))
                .collect();
            eprintln!(
                "sandgate: `{}` is not in {} of {}, so nothing was removed",
                args.rule,
                searched.join(", "),
                target.display()
            );
            return ExitCode::from(EXIT_FAILED);
        }
        [one] => one.clone(),
        several => {
            let lists: Vec<String> = several.iter().map(|(s, e, _)| place(*s, *e)).collect();
            eprintln!(
                "sandgate: `{}` is in {} of {}; say which with `--read`, `--write` or `--list allow|deny`",
                args.rule,
                lists.join(" and "),
                target.display()
            );
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    };
    let line = match remove_rule(&target, section, effect, &written) {
        Ok(line) => line,
        Err(e) => {
            eprintln!("sandgate: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let list = place(section, effect);
    if global.json {
        println!(
            "{}",
            json!({"removed": true, "rule": written, "list": list, "file": target, "line": line})
        );
    } else {
        println!(
            "removed `{}` from {list} in {} (it was on line {line})",
            written,
            target.display()
        );
    }
    if let Err(e) = Policy::load(&sources, &ctx) {
        eprintln!("sandgate: the rule was removed, but the policy does not load: {e}");
        return ExitCode::from(EXIT_FAILED);
    }
    ExitCode::SUCCESS
}

impl RuleKind {
    fn name(self) -> &'static str {
        match self {
            RuleKind::Path => "path",
            RuleKind::Command => "command",
            RuleKind::Domain => "domain",
        }
    }
}

fn to_list(effect: Effect) -> List {
    match effect {
        Effect::Allow => List::Allow,
        Effect::Deny => List::Deny,
    }
}

/// Compile the rule the way the engine will, so a broken rule is never written.
fn check_rule(
    kind: RuleKind,
    rule: &str,
    file: &Path,
    tier: Tier,
    list: List,
    access: Option<Access>,
    ctx: &Context,
) -> Result<(), String> {
    let source = SourceRule {
        text: rule.to_string(),
        origin: Origin::File {
            path: Path::new(file).into(),
            line: 0,
            tier,
        },
        column: 0,
        access,
    };
    let problems = match kind {
        RuleKind::Path => PathRules::compile(&[source], list, &ctx.cwd, &ctx.home).err(),
        RuleKind::Command => CommandRules::compile(&[source], list).err(),
        RuleKind::Domain => sandgate_policy::network::Entry::parse(rule)
            .err()
            .map(|e| vec![sandgate_policy::network::entry_problem(&source, &e)]),
    };
    match problems.and_then(|p| p.into_iter().next()) {
        None => Ok(()),
        Some(p) => Err(match p.hint {
            Some(hint) => format!("{} (hint: {hint})", p.message),
            None => p.message,
        }),
    }
}

/// Why an allow entry for the network would do nothing: a deny entry of the
/// policy refuses every host and port it names (`Ok(None)`: it would not).
fn domain_refusal(
    sources: &Sources,
    ctx: &Context,
    rule: &str,
) -> Result<Option<String>, sandgate_policy::LoadError> {
    let Ok(entry) = sandgate_policy::network::Entry::parse(rule) else {
        return Ok(None);
    };
    let policy = Policy::load_untested(sources, ctx)?;
    let Some(network) = policy.network() else {
        return Ok(None);
    };
    let (deny, _) = network.entries();
    let (rules, _) = network.rules();
    Ok(deny
        .iter()
        .zip(rules)
        .find(|(d, _)| entry.covered_by(d))
        .map(|(_, r)| {
            format!(
                "the network deny entry `{}` ({}) refuses every host and port it allows",
                r.pattern, r.origin
            )
        }))
}

/// `sandgate policy lint`: exit 0 when clean, 1 with warnings, 2 when the policy cannot be read.
pub fn run_lint(global: &GlobalArgs) -> ExitCode {
    let ctx = match crate::setup::context(global) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let sources = crate::setup::sources(global, &ctx);
    // Rules that do not compile are load errors, reported as such.
    if let Err(e) = Policy::load(&sources, &ctx) {
        eprintln!("sandgate: {e}");
        return ExitCode::from(EXIT_CANNOT_CHECK);
    }
    let warnings = match lint(&sources, &ctx) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("sandgate: {e}");
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    };
    let undecided = lint::undecided(&sources, &ctx).unwrap_or_default();
    // What a program's options can do is information, not a problem: the
    // forms that run programs or write files still ask.
    let (notes, warnings): (Vec<_>, Vec<_>) = warnings
        .into_iter()
        .partition(|w| w.kind == lint::WarningKind::RunsPrograms);
    if global.json {
        println!(
            "{}",
            json!({ "warnings": warnings, "notes": notes, "undecided": undecided })
        );
    } else if warnings.is_empty() {
        println!("no warnings");
    } else {
        for w in &warnings {
            println!(
                "{}: warning: {}: `{}`: {}",
                location(w),
                w.kind.as_str(),
                w.rule,
                w.message
            );
        }
        println!(
            "{} warning{}",
            warnings.len(),
            if warnings.len() == 1 { "" } else { "s" }
        );
    }
    if !global.json {
        for n in &notes {
            println!(
                "{}: note: {}: `{}`: {}",
                location(n),
                n.kind.as_str(),
                n.rule,
                n.message
            );
        }
        for u in &undecided {
            let against: Vec<String> = u.against.iter().map(|d| format!("`{d}`")).collect();
            println!(
                "{}:{}: note: not decided whether `{}` is shadowed by the deny rule{} {}: \
                 lint compares only exact rules, `dir/**` globs and `^literal` prefixes",
                u.file.display(),
                u.line,
                u.rule,
                if against.len() == 1 { "" } else { "s" },
                against.join(", ")
            );
        }
    }
    if warnings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    }
}

fn location(w: &sandgate_policy::lint::Warning) -> String {
    format!("{}:{}", w.file.display(), w.line)
}
