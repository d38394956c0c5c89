//! `sandgate policy lint`: rules that are probably not what their author meant.
//!
//! | kind | what |
//! | --- | --- |
//! | too broad | an allow rule that lets through the whole home, the whole disk or any command (`~/**`, `/**`, `.*`, `^git` without a boundary) |
//! | unanchored | a command allow without `^`, which matches anywhere in a command |
//! | shadowed | an allow rule that can never decide: every subject it matches is denied by a deny rule or the floor |
//! | ignored | an allow rule in a tighten-only file (local, managed), which the merge ignores |
//! | duplicate | the same rule twice in the same list |
//! | covered | a rule every subject of which a broader rule of the same list already matches (`/srv/data/**` after `/srv/**`, `^git status$` after `^git( |$)`) |
//! | never matches | a command regex no command can match (`a^b`, `^ls$x`, `^[^\s\S]`, `$^`), decided on its syntax tree |
//! | runs programs | a command allow covering a program whose options can run other programs or write files (`^git( |$)`, `^sed -n`, `^find `); the warning names the forms that still ask |
//!
//! Every warning names the file and line of the rule. Shadowing and coverage
//! are reported only when they are certain (see [`crate::coverage`] for the
//! forms that are decided: exact rules, globs below a literal directory and
//! `^literal` prefixes), never guessed; overlaps of other forms are not
//! reported.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use regex::Regex;
use regex_syntax::hir::{HirKind, Look};

use crate::coverage;
use crate::decision::{Access, Origin, Tier};
use crate::error::LoadError;
use crate::floor;
use crate::load::{read_policy_files, source_rules, source_rules_for, LoadedFile, Sources};
use crate::request::Context;
use crate::rules::{absolute_glob, SourceRule};

/// What a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// The allow rule lets through far more than one project or one command.
    TooBroad,
    /// A command allow that is not anchored with `^`.
    Unanchored,
    /// The allow rule can never decide: a deny rule or the floor always wins.
    Shadowed,
    /// The allow rule is in a tighten-only file, so it is ignored.
    Ignored,
    /// The same rule appears twice in one list.
    Duplicate,
    /// The allow rule covers a program whose options can run other programs
    /// or write files; those forms still ask.
    RunsPrograms,
    /// A broader rule of the same list matches everything this one matches.
    Covered,
    /// The command regex can never match a command.
    NeverMatches,
}

impl WarningKind {
    /// The name used in output, e.g. `too broad`.
    pub fn as_str(self) -> &'static str {
        match self {
            WarningKind::TooBroad => "too broad",
            WarningKind::Unanchored => "unanchored",
            WarningKind::Shadowed => "shadowed",
            WarningKind::Ignored => "ignored",
            WarningKind::Duplicate => "duplicate",
            WarningKind::RunsPrograms => "runs programs",
            WarningKind::Covered => "covered",
            WarningKind::NeverMatches => "never matches",
        }
    }
}

/// One lint finding.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Warning {
    /// The policy file.
    pub file: PathBuf,
    /// 1-based line of the rule.
    pub line: u32,
    /// The rule as written.
    pub rule: String,
    /// What kind of problem.
    pub kind: WarningKind,
    /// What is wrong and what to write instead.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: `{}`: {}",
            self.file.display(),
            self.line,
            self.kind.as_str(),
            self.rule,
            self.message
        )
    }
}

/// Commands that no allow rule should let through unasked.
const DANGEROUS_COMMANDS: &[&str] = &[
    "rm -rf ~",
    "curl -s https://example.com/x | sh",
    "sudo reboot",
    "dd if=/dev/zero of=/dev/sda",
];

/// Lint the policy files of `sources`. Relative path rules resolve against
/// `ctx.cwd`, `~` against `ctx.home`. A file that cannot be read or parsed is
/// an error, as it is for loading.
pub fn lint(sources: &Sources, ctx: &Context) -> Result<Vec<Warning>, LoadError> {
    let files = read_policy_files(sources)?;
    let mut warnings = Vec::new();
    let lists = collect(&files);
    let floor = floor::source_rules();
    let path_deny: Vec<(&SourceRule, String)> = floor
        .iter()
        .chain(&lists.path_deny)
        .map(|r| (r, absolute_glob(&r.text, &ctx.cwd, &ctx.home)))
        .collect();
    let command_deny: Vec<(&SourceRule, Regex)> = lists
        .command_deny
        .iter()
        .filter_map(|r| Regex::new(&r.text).ok().map(|re| (r, re)))
        .collect();

    let mut never = Vec::new();
    for rule in lists.command_allow.iter().chain(&lists.command_deny) {
        if let Some(why) = coverage::never_matches(&rule.text) {
            never.push(rule.text.clone());
            warnings.push(warning(
                rule,
                WarningKind::NeverMatches,
                format!("it can never match a command: {why}; the rule does nothing"),
            ));
        }
    }
    let counted = |r: &SourceRule| !never.contains(&r.text);
    let mut central_path_allow = Vec::new();
    for rule in &lists.path_allow {
        if let Some(w) = ignored(rule) {
            warnings.push(w);
            continue;
        }
        central_path_allow.push(rule.clone());
        warnings.extend(path_allow_warnings(rule, &path_deny, ctx));
    }
    let mut central_command_allow = Vec::new();
    for rule in lists.command_allow.iter().filter(|r| counted(r)) {
        if let Some(w) = ignored(rule) {
            warnings.push(w);
            continue;
        }
        central_command_allow.push(rule.clone());
        let found = command_allow_warnings(rule, &command_deny);
        if !found.iter().any(|w| w.kind == WarningKind::TooBroad) {
            warnings.extend(runs_programs(rule));
        }
        warnings.extend(found);
    }
    for list in [
        &lists.path_allow,
        &lists.path_deny,
        &lists.command_allow,
        &lists.command_deny,
    ] {
        warnings.extend(duplicates(list));
    }
    let command_deny_rules: Vec<SourceRule> = lists
        .command_deny
        .iter()
        .filter(|r| counted(r))
        .cloned()
        .collect();
    // A rule covered by a too broad one is not the rule to remove.
    let too_broad: Vec<String> = warnings
        .iter()
        .filter(|w| w.kind == WarningKind::TooBroad)
        .map(|w| w.rule.clone())
        .collect();
    warnings.extend(covered_paths(&central_path_allow, &too_broad, ctx));
    warnings.extend(covered_paths(&lists.path_deny, &[], ctx));
    warnings.extend(covered_commands(&central_command_allow, &too_broad));
    warnings.extend(covered_commands(&command_deny_rules, &[]));
    warnings.extend(network_warnings(&files));
    // A rule that is already shadowed, duplicated or too broad says enough.
    let named: Vec<(PathBuf, u32, String)> = warnings
        .iter()
        .filter(|w| w.kind != WarningKind::Covered && w.kind != WarningKind::RunsPrograms)
        .map(|w| (w.file.clone(), w.line, w.rule.clone()))
        .collect();
    warnings.retain(|w| {
        w.kind != WarningKind::Covered || !named.contains(&(w.file.clone(), w.line, w.rule.clone()))
    });
    warnings.sort_by(|a, b| (&a.file, a.line, a.kind as u8).cmp(&(&b.file, b.line, b.kind as u8)));
    Ok(warnings)
}

/// An allow rule whose shadowing by some deny rules lint could not decide.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Undecided {
    /// The policy file.
    pub file: PathBuf,
    /// 1-based line of the allow rule.
    pub line: u32,
    /// The allow rule as written.
    pub rule: String,
    /// The deny rules it could not be compared with.
    pub against: Vec<String>,
}

/// The central allow rules that lint could not compare with some deny rule
/// (see [`crate::coverage`] for the forms it compares): a deny rule of them
/// may deny everything the allow rule matches, and lint cannot say.
pub fn undecided(sources: &Sources, ctx: &Context) -> Result<Vec<Undecided>, LoadError> {
    let files = read_policy_files(sources)?;
    let lists = collect(&files);
    let central = |r: &&SourceRule| {
        matches!(
            &r.origin,
            Origin::File {
                tier: Tier::Central,
                ..
            }
        )
    };
    let mut out = Vec::new();
    let mut push = |rule: &SourceRule, against: Vec<String>| {
        if against.is_empty() {
            return;
        }
        let (file, line, _) = location(rule);
        out.push(Undecided {
            file,
            line,
            rule: rule.text.clone(),
            against,
        });
    };
    // An exact allow rule is compared with every deny regex; otherwise both
    // need a `^literal` form, and the deny rule's must say what follows its
    // literal unless that literal is not where the allow rule's starts.
    let decided = |allow: &str, deny: &str| {
        let forms = match (
            coverage::CommandForm::of(allow),
            coverage::CommandForm::of(deny),
        ) {
            (Some(a), Some(d)) => {
                d.tail != coverage::Tail::Other || !a.literal.starts_with(&d.literal)
            }
            _ => false,
        };
        forms || apart(allow, deny)
    };
    for rule in lists.command_allow.iter().filter(central) {
        if coverage::never_matches(&rule.text).is_some() || exact_literal(&rule.text).is_some() {
            continue;
        }
        let against = lists
            .command_deny
            .iter()
            .filter(|d| !decided(&rule.text, &d.text))
            .filter(|d| coverage::never_matches(&d.text).is_none())
            .map(|d| d.text.clone())
            .collect();
        push(rule, against);
    }
    for rule in lists.path_allow.iter().filter(central) {
        let (allow_dir, _) =
            coverage::literal_prefix(&absolute_glob(&rule.text, &ctx.cwd, &ctx.home));
        let against = lists
            .path_deny
            .iter()
            .filter(|d| d.access.is_none() || d.access == rule.access)
            .filter(|d| {
                let glob = absolute_glob(&d.text, &ctx.cwd, &ctx.home);
                // Literal directories apart (`/dev/sd*` and `~/work/**`):
                // no path matches both, so the deny rule cannot shadow it.
                let (deny_dir, _) = coverage::literal_prefix(&glob);
                if !within(&allow_dir, &deny_dir) && !within(&deny_dir, &allow_dir) {
                    return false;
                }
                let (_, exact) = coverage::literal_prefix(&glob);
                let dir_form = glob
                    .strip_suffix("/**")
                    .is_some_and(|dir| dir.is_empty() || coverage::literal_prefix(dir).1);
                !exact && !dir_form
            })
            .map(|d| d.text.clone())
            .collect();
        push(rule, against);
    }
    Ok(out)
}

/// Whether no command matches both regexes, by their starts: both are
/// anchored at the start of the command, each has a finite set of literal
/// starts (`^(ls|cat)( |$)`: `ls`, `cat`), and no start of one is a prefix
/// of a start of the other (`ls` and `rm` are apart; `git` and `git push`
/// are not).
fn apart(a: &str, b: &str) -> bool {
    match (anchored_starts(a), anchored_starts(b)) {
        (Some(xs), Some(ys)) => xs.iter().all(|x| {
            ys.iter()
                .all(|y| !x.starts_with(y.as_slice()) && !y.starts_with(x.as_slice()))
        }),
        _ => false,
    }
}

/// The literal starts of every match of `rule`, when it is anchored at the
/// start of the command and they are a finite, non-empty set.
fn anchored_starts(rule: &str) -> Option<Vec<Vec<u8>>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    use regex_syntax::hir::Look;
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(rule)
        .ok()?;
    if !hir.properties().look_set_prefix().contains(Look::Start) {
        return None;
    }
    let mut extractor = Extractor::new();
    extractor.kind(ExtractKind::Prefix);
    let seq = extractor.extract(&hir);
    let literals = seq.literals()?;
    if literals.is_empty() || literals.iter().any(|l| l.as_bytes().is_empty()) {
        return None;
    }
    Some(literals.iter().map(|l| l.as_bytes().to_vec()).collect())
}

/// Whether the absolute directory `path` is `dir` or lies below it.
fn within(path: &str, dir: &str) -> bool {
    dir == "/"
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Why `sandgate policy allow` should not add the allow rule `rule` (of
/// `kind`, for `access`) to the policy of `sources` without `--force`: it
/// matches every command, the whole disk or the whole home directory, it can
/// never match, or the floor or a deny rule of the loaded files denies
/// everything it matches. `None` when none of these holds.
pub fn allow_refusal(
    sources: &Sources,
    ctx: &Context,
    kind: crate::ask::SubjectKind,
    rule: &str,
    access: Option<Access>,
) -> Result<Option<String>, LoadError> {
    let files = read_policy_files(sources)?;
    let lists = collect(&files);
    let candidate = SourceRule {
        text: rule.to_string(),
        origin: Origin::Builtin,
        column: 0,
        access,
    };
    Ok(match kind {
        // Domain entries have their own check (`policy allow domain`).
        crate::ask::SubjectKind::Host => None,
        crate::ask::SubjectKind::Command => {
            let Ok(re) = Regex::new(rule) else {
                return Ok(None);
            };
            if coverage::matches_every_command(&re) {
                Some("it matches every command".into())
            } else if let Some(why) = coverage::never_matches(rule) {
                Some(format!("it can never match a command: {why}"))
            } else {
                let denies: Vec<(&SourceRule, Regex)> = lists
                    .command_deny
                    .iter()
                    .filter_map(|r| Regex::new(&r.text).ok().map(|re| (r, re)))
                    .collect();
                command_shadow(rule, &denies)
            }
        }
        crate::ask::SubjectKind::Path => {
            let glob = absolute_glob(rule, &ctx.cwd, &ctx.home);
            let bare = rule.trim_end_matches('/');
            if !bare.is_empty() && bare.chars().all(|c| c == '*' || c == '/') {
                Some(format!(
                    "`{rule}` names no directory: it matches every path below the directory each \
                     call is made in, which is the whole disk for a call made in `/`; name the \
                     directory, or write `./{}` for the one you are in",
                    rule.trim_start_matches('/')
                ))
            } else if let Some((what, probe)) = coverage::whole_tree(&glob, &ctx.home) {
                Some(format!(
                    "it matches {what} (`{}` among them)",
                    probe.display()
                ))
            } else {
                let floor = floor::source_rules();
                let denies: Vec<(&SourceRule, String)> = floor
                    .iter()
                    .chain(&lists.path_deny)
                    .map(|r| (r, absolute_glob(&r.text, &ctx.cwd, &ctx.home)))
                    .collect();
                path_shadow(&candidate, &glob, &denies, &ctx.home).map(|by| {
                    format!("it can never allow anything: every path it matches is denied by {by}")
                })
            }
        }
    })
}

struct Lists {
    path_allow: Vec<SourceRule>,
    path_deny: Vec<SourceRule>,
    command_allow: Vec<SourceRule>,
    command_deny: Vec<SourceRule>,
}

fn collect(files: &[LoadedFile]) -> Lists {
    let mut lists = Lists {
        path_allow: Vec::new(),
        path_deny: Vec::new(),
        command_allow: Vec::new(),
        command_deny: Vec::new(),
    };
    for f in files {
        let p = &f.file.permissions;
        for (deny, allow, access) in [
            (&p.paths.deny, &p.paths.allow, None),
            (&p.paths.read.deny, &p.paths.read.allow, Some(Access::Read)),
            (
                &p.paths.write.deny,
                &p.paths.write.allow,
                Some(Access::Write),
            ),
        ] {
            lists.path_allow.extend(source_rules_for(allow, f, access));
            lists.path_deny.extend(source_rules_for(deny, f, access));
        }
        lists
            .command_allow
            .extend(source_rules(&p.commands.allow, f));
        lists.command_deny.extend(source_rules(&p.commands.deny, f));
    }
    lists
}

fn location(rule: &SourceRule) -> (PathBuf, u32, Option<Tier>) {
    match &rule.origin {
        Origin::File { path, line, tier } => (path.to_path_buf(), *line, Some(*tier)),
        Origin::Builtin => (PathBuf::from("<builtin>"), 0, None),
    }
}

fn warning(rule: &SourceRule, kind: WarningKind, message: String) -> Warning {
    let (file, line, _) = location(rule);
    Warning {
        file,
        line,
        rule: rule.text.clone(),
        kind,
        message,
    }
}

fn ignored(rule: &SourceRule) -> Option<Warning> {
    let (_, _, tier) = location(rule);
    match tier {
        Some(t @ (Tier::Local | Tier::Managed)) => Some(warning(
            rule,
            WarningKind::Ignored,
            format!(
                "allow rules of the {} file are ignored (it can only tighten); move it to the central file",
                t.as_str()
            ),
        )),
        _ => None,
    }
}

fn path_allow_warnings(
    rule: &SourceRule,
    denies: &[(&SourceRule, String)],
    ctx: &Context,
) -> Vec<Warning> {
    let mut out = Vec::new();
    let glob = absolute_glob(&rule.text, &ctx.cwd, &ctx.home);
    if let Some((what, probe)) = coverage::whole_tree(&glob, &ctx.home) {
        out.push(warning(
            rule,
            WarningKind::TooBroad,
            format!(
                "it allows {what} (it matches `{}`); allow project directories instead",
                probe.display()
            ),
        ));
    }
    if let Some(by) = path_shadow(rule, &glob, denies, &ctx.home) {
        out.push(warning(
            rule,
            WarningKind::Shadowed,
            format!("it can never allow anything: every path it matches is denied by {by}"),
        ));
    }
    out
}

/// The floor or deny rule that denies every path the allow rule `rule`
/// (compiled to the absolute `glob`) matches, in words, if one does. A
/// deny rule shadows an allow rule only for every access the allow rule
/// grants: a read deny rule leaves a `paths.allow` rule its writes.
fn path_shadow(
    rule: &SourceRule,
    glob: &str,
    denies: &[(&SourceRule, String)],
    home: &Path,
) -> Option<String> {
    let applies = |deny: &SourceRule| deny.access.is_none() || deny.access == rule.access;
    let (deny, _) = denies
        .iter()
        .filter(|(d, _)| applies(d))
        .find(|(_, deny_glob)| coverage::glob_covers(deny_glob, glob))?;
    Some(match &deny.origin {
        Origin::Builtin => {
            let mut by = format!(
                "the built-in floor `{}`, which no rule opens for the file tools, the hooks \
                 and `sandgate check`",
                deny.text
            );
            let (literal, exact) = coverage::literal_prefix(glob);
            let path = Path::new(&literal);
            let readable = exact
                && floor::FLOOR.iter().any(|entry| {
                    path.parent() == Some(entry.path(home).as_path())
                        && path
                            .file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| floor::file_readable(entry.dir, n))
                });
            if readable {
                by.push_str(&format!(
                    " (under `sandgate run`, `{literal}` is readable without any rule)"
                ));
            }
            by
        }
        origin => format!(
            "the {} rule `{}` ({origin})",
            list_words(deny, "deny"),
            deny.text
        ),
    })
}

/// `deny`, `read deny`, `write allow`, … for a path rule.
fn list_words(rule: &SourceRule, list: &str) -> String {
    match rule.access {
        None => list.to_string(),
        Some(a) => format!("{a} {list}"),
    }
}

/// Path rules of one effect that a broader rule of the same list covers: a
/// rule of `paths.*` covers rules of every access, a `paths.read.*` rule only
/// reads, a `paths.write.*` rule only writes.
fn covered_paths(rules: &[SourceRule], too_broad: &[String], ctx: &Context) -> Vec<Warning> {
    let globs: Vec<String> = rules
        .iter()
        .map(|r| absolute_glob(&r.text, &ctx.cwd, &ctx.home))
        .collect();
    let mut out = Vec::new();
    for (i, narrow) in rules.iter().enumerate() {
        let by = rules.iter().enumerate().find(|&(j, broad)| {
            j != i
                && !too_broad.contains(&broad.text)
                && (broad.access.is_none() || broad.access == narrow.access)
                && !(broad.text == narrow.text && broad.access == narrow.access)
                && coverage::glob_covers(&globs[j], &globs[i])
                // Of two rules that cover each other, the later one is reported.
                && !(j > i && coverage::glob_covers(&globs[i], &globs[j]))
        });
        if let Some((_, broad)) = by {
            out.push(warning(
                narrow,
                WarningKind::Covered,
                format!(
                    "the broader rule `{}` ({}) already matches every path this one matches, so this one adds nothing",
                    broad.text, broad.origin
                ),
            ));
        }
    }
    out
}

/// Command rules of one list that a broader `^literal` rule of it covers.
fn covered_commands(rules: &[SourceRule], too_broad: &[String]) -> Vec<Warning> {
    let forms: Vec<Option<coverage::CommandForm>> = rules
        .iter()
        .map(|r| coverage::CommandForm::of(&r.text))
        .collect();
    let covers = |j: usize, i: usize| match (&forms[j], &forms[i]) {
        (Some(b), Some(a)) => b.covers(a),
        _ => false,
    };
    let mut out = Vec::new();
    for (i, narrow) in rules.iter().enumerate() {
        let by = rules.iter().enumerate().find(|&(j, broad)| {
            j != i
                && !too_broad.contains(&broad.text)
                && broad.text != narrow.text
                && covers(j, i)
                && !(j > i && covers(i, j))
        });
        if let Some((_, broad)) = by {
            out.push(warning(
                narrow,
                WarningKind::Covered,
                format!(
                    "the broader rule `{}` ({}) already matches every command this one matches, so this one adds nothing",
                    broad.text, broad.origin
                ),
            ));
        }
    }
    out
}

/// The exact string a `^literal$` regex matches, if it is one.
fn exact_literal(pattern: &str) -> Option<String> {
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    let HirKind::Concat(parts) = hir.kind() else {
        return None;
    };
    let (first, rest) = parts.split_first()?;
    let (last, middle) = rest.split_last()?;
    let is_look = |h: &regex_syntax::hir::Hir, looks: &[Look]| matches!(h.kind(), HirKind::Look(l) if looks.contains(l));
    if !is_look(first, &[Look::Start, Look::StartLF]) || !is_look(last, &[Look::End, Look::EndLF]) {
        return None;
    }
    let mut text = Vec::new();
    for part in middle {
        match part.kind() {
            HirKind::Literal(lit) => text.extend_from_slice(&lit.0),
            _ => return None,
        }
    }
    String::from_utf8(text).ok()
}

/// Programs whose options can run other programs or write files: a sample
/// command an allow rule for the program matches, and the forms that will
/// still ask (docs/shell.md, "Programs that run programs").
const RUNNERS: &[(&str, &str)] = &[
    ("git status", "`git -c` with a program key (`core.pager`, `alias.*`, …), `--exec-path=`, `--config-env`, `git config` of such a key, `submodule foreach`, `rebase --exec`, `bisect run`, `difftool -x` and `filter-branch` filters (their commands are checked), program variables (`GIT_PAGER=`, `GIT_SSH_COMMAND=`, …), and `--output`/`format-patch -o` to a path no path rule allows"),
    ("sed -n 1p f", "the `e` command and `s///e` flag, `w FILE` and `-i` to a path no path rule allows, and `r FILE` of a protected path"),
    ("find . -name x", "`-exec`, `-execdir`, `-ok`, `-okdir` (their commands are checked, and `{}` is not known), `-delete` and `-fprint*` to a path no path rule allows"),
    ("python3 x.py", "`-c` with inline program text"),
    ("node x.js", "`-e`/`--eval` and `-p`/`--print` with inline program text"),
    ("perl x.pl", "`-e`/`-E` with inline program text"),
    ("ruby x.rb", "`-e` with inline program text"),
    ("awk '{print}' f", "program text that holds `system`, a pipe, or `print > FILE`"),
    ("sort f", "`--compress-program` and `-o` to a path no path rule allows"),
    ("tar tf x.tar", "`--to-command`, `-I`/`--use-compress-program`, `--checkpoint-action`, `-F`/`--info-script`"),
    ("rg foo", "`--pre`"),
    ("xargs echo", "every command it runs (the words it adds are not known), and `sh -c` scripts holding the `-I` placeholder"),
    ("cp a b", "a destination no path allow rule matches"),
    ("tee f", "a file no path allow rule matches"),
];

/// A warning when `rule` allows a program of [`RUNNERS`].
fn runs_programs(rule: &SourceRule) -> Option<Warning> {
    let re = Regex::new(&rule.text).ok()?;
    let (sample, forms) = RUNNERS.iter().find(|(sample, _)| re.is_match(sample))?;
    let program = sample.split(' ').next().unwrap_or(sample);
    Some(warning(
        rule,
        WarningKind::RunsPrograms,
        format!("it allows `{program}`, whose options can run other programs or write files; these forms still ask: {forms}"),
    ))
}

fn command_allow_warnings(rule: &SourceRule, denies: &[(&SourceRule, Regex)]) -> Vec<Warning> {
    let mut out = Vec::new();
    let Ok(re) = Regex::new(&rule.text) else {
        return out;
    };
    let text = rule.text.as_str();
    if coverage::matches_every_command(&re) {
        out.push(warning(
            rule,
            WarningKind::TooBroad,
            "it matches every command; allow specific commands such as `^git status( |$)`".into(),
        ));
    } else if let Some(probe) = DANGEROUS_COMMANDS.iter().find(|c| re.is_match(c)) {
        out.push(warning(
            rule,
            WarningKind::TooBroad,
            format!("it allows `{probe}`; allow specific commands such as `^git status( |$)`"),
        ));
    } else if let Some(word) = leading_word(text) {
        let longer = format!("{word}zz");
        if re.is_match(&longer) {
            out.push(warning(
                rule,
                WarningKind::TooBroad,
                format!(
                    "no boundary after `{word}`: it also allows `{longer}`; write `^{word}( |$)`"
                ),
            ));
        }
    }
    if !(text.starts_with('^') || text.starts_with("\\A") || text.starts_with("(?m)^")) {
        out.push(warning(
            rule,
            WarningKind::Unanchored,
            "it matches anywhere in a command, not only at its start; anchor it with `^`".into(),
        ));
    }
    if let Some(message) = command_shadow(text, denies) {
        out.push(warning(rule, WarningKind::Shadowed, message));
    }
    out
}

/// Why every command the allow rule `text` matches is denied, if it is: the
/// one command of an exact rule matches a deny regex, or a deny rule's
/// `^literal` form covers the allow rule's.
fn command_shadow(text: &str, denies: &[(&SourceRule, Regex)]) -> Option<String> {
    if let Some(literal) = exact_literal(text) {
        if let Some((deny, _)) = denies.iter().find(|(_, d)| d.is_match(&literal)) {
            return Some(format!(
                "it can never allow anything: `{literal}` is denied by the deny rule `{}` ({})",
                deny.text, deny.origin
            ));
        }
    }
    let form = coverage::CommandForm::of(text)?;
    let (deny, _) = denies.iter().find(|(d, _)| {
        coverage::CommandForm::of(&d.text).is_some_and(|broad| broad.covers(&form))
    })?;
    Some(format!(
        "it can never allow anything: every command it matches is denied by the deny rule `{}` ({})",
        deny.text, deny.origin
    ))
}

/// `git` for `^git…`: the command word a rule starts with, if it is plain.
fn leading_word(rule: &str) -> Option<&str> {
    let rest = rule.strip_prefix('^')?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// The warnings about `permissions.network` entries: allow entries of a
/// tighten-only file (ignored), the same entry twice in a list (however
/// spelt), an allow entry a deny entry decides entirely (shadowed) and one
/// another allow entry already matches (covered). Entries that do not parse
/// are load errors, not warnings.
fn network_warnings(files: &[crate::load::LoadedFile]) -> Vec<Warning> {
    use crate::network::Entry;
    let mut deny: Vec<(SourceRule, Entry)> = Vec::new();
    let mut allow: Vec<(SourceRule, Entry)> = Vec::new();
    let mut out = Vec::new();
    let parsed = |rules: Vec<SourceRule>| -> Vec<(SourceRule, Entry)> {
        rules
            .into_iter()
            .filter_map(|r| Entry::parse(&r.text).ok().map(|e| (r, e)))
            .collect()
    };
    for file in files {
        let Some(lists) = &file.file.permissions.network else {
            continue;
        };
        deny.extend(parsed(source_rules(&lists.deny, file)));
        for (rule, entry) in parsed(source_rules(&lists.allow, file)) {
            match ignored(&rule) {
                Some(w) => out.push(w),
                None => allow.push((rule, entry)),
            }
        }
    }
    for list in [&deny, &allow] {
        for (i, (rule, entry)) in list.iter().enumerate() {
            if let Some((first, _)) = list[..i].iter().find(|(_, e)| e == entry) {
                out.push(warning(
                    rule,
                    WarningKind::Duplicate,
                    format!("the same entry is already at {}", first.origin),
                ));
            }
        }
    }
    for (i, (rule, entry)) in allow.iter().enumerate() {
        if allow[..i].iter().any(|(_, e)| e == entry) {
            continue;
        }
        if let Some((by, _)) = deny.iter().find(|(_, d)| entry.covered_by(d)) {
            out.push(warning(
                rule,
                WarningKind::Shadowed,
                format!(
                    "the network deny entry `{}` ({}) refuses every host and port this allows; \
                     the entry does nothing",
                    by.text, by.origin
                ),
            ));
        } else if let Some((by, _)) = allow
            .iter()
            .find(|(r, e)| e != entry && entry.covered_by(e) && r.origin != rule.origin)
        {
            out.push(warning(
                rule,
                WarningKind::Covered,
                format!(
                    "the network allow entry `{}` ({}) already allows every host and port this \
                     does",
                    by.text, by.origin
                ),
            ));
        }
    }
    out
}

fn duplicates(list: &[SourceRule]) -> Vec<Warning> {
    // Rules of `paths.read.allow` and `paths.allow` are in different lists.
    let mut first: HashMap<(&str, Option<Access>), &SourceRule> = HashMap::new();
    let mut out = Vec::new();
    for rule in list {
        match first.get(&(rule.text.as_str(), rule.access)) {
            Some(original) => out.push(warning(
                rule,
                WarningKind::Duplicate,
                format!("the same rule is already at {}", original.origin),
            )),
            None => {
                first.insert((&rule.text, rule.access), rule);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixture {
        _tmp: tempfile::TempDir,
        ctx: Context,
        sources: Sources,
    }

    fn fixture(central: &str, local: &str) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let work = home.join("work");
        std::fs::create_dir_all(&work).unwrap();
        let c = tmp.path().join("central.yaml");
        let l = tmp.path().join("local.yaml");
        std::fs::write(&c, central).unwrap();
        std::fs::write(&l, local).unwrap();
        Fixture {
            ctx: Context::new(&work, &home).unwrap(),
            sources: Sources {
                managed: None,
                central: Some(c),
                local: Some(l),
                no_sandbox: false,
            },
            _tmp: tmp,
        }
    }

    fn kinds(central: &str, local: &str) -> Vec<(u32, String, WarningKind)> {
        let f = fixture(central, local);
        lint(&f.sources, &f.ctx)
            .unwrap()
            .into_iter()
            .map(|w| (w.line, w.rule, w.kind))
            .collect()
    }

    #[test]
    fn a_careful_policy_is_clean() {
        let central = "\
permissions:
  paths:
    deny: [\"/etc/**\"]
    allow: [\"~/projects/**\", \"./**\", \"/tmp/a[*]b\"]
  commands:
    deny: [\"^\\\\s*rm\\\\s+-rf\\\\s+/\", \"\\\\|\\\\s*sh\\\\b\"]
    allow: [\"^git( |$)\", \"^ls( |$)\", \"^cat \", \"^sed -n\", \"^echo a\\\\.b$\"]
";
        // Only the programs whose options run programs are named, with the
        // forms that still ask.
        assert_eq!(
            kinds(central, ""),
            vec![
                (7, "^git( |$)".to_string(), WarningKind::RunsPrograms),
                (7, "^sed -n".to_string(), WarningKind::RunsPrograms)
            ]
        );
    }

    #[test]
    fn broad_unanchored_shadowed_and_duplicate_rules_are_named_by_line() {
        let central = "\
# comment
permissions:
  paths:
    deny:
      - /srv/**
    allow:
      - ~/**
      - /**
      - ~/.ssh/config
      - /srv/data/**
      - /srv/x
      - ~/projects/**
      - ~/projects/**
  commands:
    deny: ['^rm ']
    allow:
      - .*
      - ^git
      - git status
      - ^rm -rf /tmp/x$
      - ^sudo
      - '^ls( |$)'
";
        let got = kinds(central, "");
        let want: Vec<(u32, String, WarningKind)> = vec![
            (7, "~/**".into(), WarningKind::TooBroad),
            (8, "/**".into(), WarningKind::TooBroad),
            (9, "~/.ssh/config".into(), WarningKind::Shadowed),
            (10, "/srv/data/**".into(), WarningKind::Shadowed),
            (11, "/srv/x".into(), WarningKind::Shadowed),
            (13, "~/projects/**".into(), WarningKind::Duplicate),
            (17, ".*".into(), WarningKind::TooBroad),
            (17, ".*".into(), WarningKind::Unanchored),
            (18, "^git".into(), WarningKind::TooBroad),
            (19, "git status".into(), WarningKind::Unanchored),
            (19, "git status".into(), WarningKind::RunsPrograms),
            (20, "^rm -rf /tmp/x$".into(), WarningKind::Shadowed),
            (21, "^sudo".into(), WarningKind::TooBroad),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn local_allow_rules_are_ignored_and_local_denies_shadow() {
        let central = "permissions:\n  commands:\n    allow: ['^make$']\n";
        let local = "permissions:\n  commands:\n    deny: ['^make']\n    allow: ['^npm test$']\n";
        let f = fixture(central, local);
        let warnings = lint(&f.sources, &f.ctx).unwrap();
        let text: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
        assert_eq!(warnings.len(), 2, "{text:#?}");
        assert_eq!(warnings[0].kind, WarningKind::Shadowed);
        assert!(
            text[0].contains("central.yaml:3: shadowed: `^make$`"),
            "{}",
            text[0]
        );
        assert!(text[0].contains("local.yaml:3"), "{}", text[0]);
        assert_eq!(warnings[1].kind, WarningKind::Ignored);
        assert!(text[1].contains("local.yaml:4"), "{}", text[1]);
    }

    #[test]
    fn regexes_that_never_match_and_rules_a_broader_one_covers() {
        let central = "\
permissions:
  paths:
    deny: [\"/srv/**\", \"/srv/data/**\"]
    allow:
      - ~/projects/**
      - ~/projects/app/**
      - ~/projects/app/README.md
      - ~/work/*.md
    read:
      allow: [\"~/projects/app/docs/**\", \"~/docs/**\"]
    write:
      allow: [\"~/docs/out/**\"]
  commands:
    deny: ['a^b', '^curl ', '^curl -s ']
    allow:
      - '^ls$x'
      - '^[^\\s\\S]'
      - '$^'
      - '^npm( |$)'
      - '^npm test$'
      - '^make test( |$)'
      - '^curl -x$'
";
        let got = kinds(central, "");
        let want: Vec<(u32, String, WarningKind)> = vec![
            (3, "/srv/data/**".into(), WarningKind::Covered),
            (6, "~/projects/app/**".into(), WarningKind::Covered),
            (7, "~/projects/app/README.md".into(), WarningKind::Covered),
            (10, "~/projects/app/docs/**".into(), WarningKind::Covered),
            (14, "^curl -s ".into(), WarningKind::Covered),
            (14, "a^b".into(), WarningKind::NeverMatches),
            (16, "^ls$x".into(), WarningKind::NeverMatches),
            (17, "^[^\\s\\S]".into(), WarningKind::NeverMatches),
            (18, "$^".into(), WarningKind::NeverMatches),
            (20, "^npm test$".into(), WarningKind::Covered),
            (22, "^curl -x$".into(), WarningKind::Shadowed),
        ];
        assert_eq!(got, want);
        // `~/docs/out/**` (write) is not covered by `~/docs/**` (read): another list.
        let f = fixture(central, "");
        let text: Vec<String> = lint(&f.sources, &f.ctx)
            .unwrap()
            .iter()
            .map(|w| w.to_string())
            .collect();
        let never = text.iter().find(|t| t.contains("`$^`")).unwrap();
        assert!(never.contains("empty command"), "{never}");
        assert!(!text
            .iter()
            .any(|t| t.contains("$^") && t.contains("every command")));
        let covered = text.iter().find(|t| t.contains("`^npm test$`")).unwrap();
        assert!(covered.contains("`^npm( |$)`"), "{covered}");
    }

    #[test]
    fn exact_literals_are_recognised() {
        assert_eq!(
            exact_literal(r"^echo a\.b\*c \(x\)$").as_deref(),
            Some("echo a.b*c (x)")
        );
        assert_eq!(exact_literal("^git$").as_deref(), Some("git"));
        assert_eq!(exact_literal("^git"), None);
        assert_eq!(exact_literal("^g.t$"), None);
        assert_eq!(exact_literal("git"), None);
    }

    #[test]
    fn a_broken_file_is_an_error() {
        let f = fixture("permissions:\n  paths: [\n", "");
        let err = lint(&f.sources, &f.ctx).unwrap_err();
        assert!(err.to_string().contains("central.yaml"), "{err}");
    }
}
