//! The command gate: deny rules, then allow rules, otherwise ask.
//!
//! Two modes. Raw (`commands.shell: false`): one regex match over the whole
//! string. Shell-aware (the default): the command is analysed as bash
//! ([`crate::shell`]) and every part is decided on its own:
//!
//! 1. a deny rule matching the raw string, or any form of any simple command → DENY;
//! 2. a redirection writing a path the floor or a deny rule protects → DENY;
//! 3. a word, an input redirection or the working directory naming a path
//!    the floor or a deny rule protects (see `pathwords`) → DENY;
//! 4. anything that could not be analysed, or a word whose value is only
//!    known when the command runs → ASK;
//! 5. a simple command no allow rule matches, or a redirection to a path no
//!    allow rule matches → ASK;
//! 6. otherwise ALLOW.
//!
//! The reason names every part that decided, the strictest first.
//!
//! The gate reads the policy only through [`crate::gate::Rules`] (a
//! [`Gate`] over it); `Policy::evaluate_command` and
//! `Policy::explain_command` call it.

use crate::decision::{Access, CommandExplanation, Decision, Part, PartKind, RuleRef, Verdict};
use crate::gate::Gate;
use crate::pathwords::Places;
use crate::request::Context;
use crate::shell::{self, Analysis, SimpleCommand};

/// The deciding part's reason first, then those of every other part with the
/// same verdict: `git status; rm -rf ~` names both commands, not the first.
///
/// Each rule is named once: a part decided by a rule the reason already
/// names (the whole line and a simple command in it matching the same deny
/// rule) adds nothing.
fn every_reason(decider: &Part, parts: &[Part], verdict: Verdict) -> String {
    let mut reason = decider.reason.clone();
    let mut named: Vec<&RuleRef> = decider.rule.iter().collect();
    let mut listed = 1;
    let mut unlisted: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for p in parts {
        if p.verdict != verdict || std::ptr::eq(p, decider) {
            continue;
        }
        // Past the bound the rest are only counted: looking each up in an
        // ever longer reason is quadratic (a brace word that makes hundreds
        // of long words would take seconds), and no one reads such a list.
        if listed >= MAX_LISTED_PARTS {
            if p.reason != decider.reason {
                unlisted.insert(&p.reason);
            }
            continue;
        }
        if reason.contains(&p.reason) {
            continue;
        }
        if let Some(rule) = &p.rule {
            // Said already: the rule decided an earlier part and its reason names it.
            if named.contains(&rule) && reason.contains(&format!("`{}`", rule.pattern)) {
                continue;
            }
            named.push(rule);
        }
        reason.push_str("; ");
        reason.push_str(&p.reason);
        listed += 1;
    }
    if !unlisted.is_empty() {
        reason.push_str(&format!(
            "; and {} more part{} of the command with the same verdict",
            unlisted.len(),
            if unlisted.len() == 1 { "" } else { "s" }
        ));
    }
    reason
}

/// The most parts a reason lists by name ([`every_reason`]).
const MAX_LISTED_PARTS: usize = 32;

impl Gate<'_> {
    /// The command gate alone, in the mode `commands.shell` selects.
    pub(crate) fn evaluate_command(&self, command: &str, ctx: &Context) -> Decision {
        if self.rules.shell() {
            self.explain_command(command, ctx).decision
        } else {
            self.evaluate_command_raw(command)
        }
    }

    /// Raw mode (`commands.shell: false`): one regex over the whole string.
    pub(crate) fn evaluate_command_raw(&self, command: &str) -> Decision {
        if let Some(rule) = self.rules.command_deny().first_match(command) {
            let reason = format!(
                "the command matches the deny rule `{}` ({})",
                rule.pattern, rule.origin
            );
            return Decision::by_rule(Verdict::Deny, command, rule.clone(), reason);
        }
        if let Some(rule) = self.rules.command_allow().first_match(command) {
            let reason = format!(
                "the command matches the allow rule `{}` ({})",
                rule.pattern, rule.origin
            );
            return Decision::by_rule(Verdict::Allow, command, rule.clone(), reason);
        }
        Decision::new(Verdict::Ask, command, "no allow rule matched the command")
    }

    /// The command gate with its parts: in shell mode the verdict of every
    /// simple command, redirection and unanalysable construct; in raw mode only
    /// the decision.
    pub(crate) fn explain_command(&self, command: &str, ctx: &Context) -> CommandExplanation {
        if !self.rules.shell() {
            return CommandExplanation {
                shell: false,
                decision: self.evaluate_command_raw(command),
                parts: Vec::new(),
            };
        }
        let analysis = shell::analyse(command);
        let parts = self.judge_parts(command, &analysis, ctx);
        let decision = self.combine(command, &parts);
        CommandExplanation {
            shell: true,
            decision,
            parts,
        }
    }

    /// Decides every part on its own.
    fn judge_parts(&self, command: &str, analysis: &Analysis, ctx: &Context) -> Vec<Part> {
        let mut parts = Vec::with_capacity(analysis.commands.len() + 2);
        if let Some(rule) = self.rules.command_deny().first_match(command) {
            parts.push(Part {
                kind: PartKind::Line,
                source: command.to_string(),
                text: command.to_string(),
                verdict: Verdict::Deny,
                rule: Some(rule.clone()),
                reason: format!(
                    "the command matches the deny rule `{}` ({})",
                    rule.pattern, rule.origin
                ),
            });
        }
        let places = Places::of(analysis, ctx);
        // The command runs in a directory it may not read: every relative
        // name in it is a protected path. (Writes are judged one by one.)
        let here = self.rules.decide_canonical_path(&ctx.cwd, Access::Read);
        if here.verdict == Verdict::Deny {
            parts.push(Part {
                kind: PartKind::Path,
                source: ctx.cwd.to_string_lossy().into_owned(),
                text: ctx.cwd.to_string_lossy().into_owned(),
                verdict: Verdict::Deny,
                rule: here.rule,
                reason: format!("the working directory is denied: {}", here.reason),
            });
        }
        for c in &analysis.commands {
            parts.push(self.judge_simple_command(c));
        }
        parts.extend(self.judge_path_words(analysis, &places));
        for r in &analysis.redirects {
            parts.push(self.judge_redirect(r, &places, ctx));
        }
        for u in &analysis.unanalysable {
            parts.push(Part {
                kind: PartKind::Unanalysable,
                source: u.source.clone(),
                text: u.source.clone(),
                verdict: Verdict::Ask,
                rule: None,
                reason: format!("`{}` cannot be analysed: {}", u.source, u.reason),
            });
        }
        parts
    }

    /// A redirection's target, judged as a path from every directory the
    /// line may be in when it is relative.
    fn judge_redirect(&self, r: &shell::Redirect, places: &Places, ctx: &Context) -> Part {
        let part = |verdict, rule, reason| Part {
            kind: PartKind::Redirect,
            source: r.source.clone(),
            text: r.target.clone(),
            verdict,
            rule,
            reason,
        };
        if shell::is_harmless_target(&r.target) {
            return part(
                Verdict::Allow,
                None,
                format!("`{}` needs no rule", r.target),
            );
        }
        let relative = !r.target.starts_with('/') && !r.target.starts_with('~');
        if relative {
            if let Some(why) = &places.unknown {
                return part(
                    Verdict::Ask,
                    None,
                    format!(
                        "the redirection target `{}` is relative and {why}, so where it lands is not known",
                        r.target
                    ),
                );
            }
        }
        let link = match places.expand(&shell::ShellWord {
            text: r.target.clone(),
            ..shell::ShellWord::default()
        }) {
            crate::pathwords::Expansion::Known(t) => {
                places.through_link(&t).map(|l| l.to_path_buf())
            }
            _ => None,
        };
        if let Some(link) = link {
            return part(
                Verdict::Ask,
                None,
                format!(
                    "the redirection target `{}` goes through `{}`, a symlink the line makes, so where it lands is not known",
                    r.target,
                    link.display()
                ),
            );
        }
        let target = if r.target.starts_with('~') && places.home.is_none() {
            return part(
                Verdict::Ask,
                None,
                format!(
                    "the redirection target `{}` starts with `~` and the line changes `HOME`",
                    r.target
                ),
            );
        } else {
            r.target.as_str()
        };
        let dirs: &[std::path::PathBuf] = if relative {
            &places.dirs
        } else {
            &places.dirs[..1]
        };
        let mut worst: Option<Decision> = None;
        for dir in dirs {
            let here = Context {
                cwd: dir.clone(),
                ..ctx.clone()
            };
            let d = self.rules.evaluate_path(target, Access::Write, &here);
            if worst.as_ref().is_none_or(|w| d.verdict > w.verdict) {
                worst = Some(d);
            }
        }
        match worst {
            Some(d) => {
                let reason = format!("the redirection `{}` writes a path: {}", r.source, d.reason);
                part(d.verdict, d.rule, reason)
            }
            None => part(Verdict::Ask, None, "the redirection has no target".into()),
        }
    }

    /// Deny on any form; allow on any form that may allow.
    fn judge_simple_command(&self, c: &SimpleCommand) -> Part {
        let part = |verdict, rule: Option<&RuleRef>, reason| Part {
            kind: PartKind::Command,
            source: c.source.clone(),
            text: c.normalized.clone(),
            verdict,
            rule: rule.cloned(),
            reason,
        };
        for form in &c.forms {
            if let Some(rule) = self.rules.command_deny().first_match(&form.text) {
                let via = if form.text == c.normalized || form.text == c.source {
                    String::new()
                } else {
                    format!(" (as `{}`)", form.text)
                };
                let reason = format!(
                    "the simple command `{}`{via} matches the deny rule `{}` ({})",
                    c.normalized, rule.pattern, rule.origin
                );
                return part(Verdict::Deny, Some(rule), reason);
            }
        }
        if c.transparent {
            let reason = format!(
                "`{}` hands its script to a shell; the script's commands are checked on their own",
                c.normalized
            );
            return part(Verdict::Allow, None, reason);
        }
        for form in c.allow_forms() {
            if let Some(rule) = self.rules.command_allow().first_match(&form.text) {
                let via = if form.text == c.normalized || form.text == c.source {
                    String::new()
                } else {
                    format!(" (as `{}`)", form.text)
                };
                let reason = format!(
                    "the simple command `{}`{via} matches the allow rule `{}` ({})",
                    c.normalized, rule.pattern, rule.origin
                );
                return part(Verdict::Allow, Some(rule), reason);
            }
        }
        let reason = format!(
            "no allow rule matched the simple command `{}`",
            c.normalized
        );
        part(Verdict::Ask, None, reason)
    }

    /// An allow rule that is exactly this command line, `^` + escaped text + `$`
    /// (what "allow always" writes). A person approved that exact string, so it
    /// is allowed as a whole even when its parts would ask; deny rules and
    /// protected redirection targets still win, because they are checked first.
    fn exact_allow(&self, command: &str) -> Option<&RuleRef> {
        let exact = format!("^{}$", regex::escape(command));
        self.rules
            .command_allow()
            .all_matches(command)
            .into_iter()
            .find(|r| r.pattern == exact)
    }

    /// The strictest part decides; among equals, the first. ALLOW needs at least
    /// one simple command: a line that runs nothing we can see is asked about.
    fn combine(&self, command: &str, parts: &[Part]) -> Decision {
        let worst = parts
            .iter()
            .map(|p| p.verdict)
            .max()
            .unwrap_or(Verdict::Ask);
        let runs_something = parts.iter().any(|p| p.kind == PartKind::Command);
        if worst == Verdict::Allow && runs_something {
            let first = parts
                .iter()
                .find(|p| p.kind == PartKind::Command && p.rule.is_some())
                .or_else(|| parts.first());
            let summary = parts
                .iter()
                .map(|p| match (&p.kind, &p.rule) {
                    (PartKind::Command, Some(r)) => format!("`{}` by `{}`", p.text, r.pattern),
                    (PartKind::Command, None) => format!("`{}` (runs a script)", p.text),
                    (_, Some(r)) => format!("`{}` by `{}`", p.source, r.pattern),
                    (_, None) => format!("`{}`", p.source),
                })
                .collect::<Vec<_>>()
                .join(", ");
            let reason = format!("every part of the command is allowed: {summary}");
            return Decision {
                verdict: Verdict::Allow,
                subject: command.to_string(),
                rule: first.and_then(|p| p.rule.clone()),
                reason,
            };
        }
        if worst != Verdict::Deny {
            if let Some(rule) = self.exact_allow(command) {
                let reason = format!(
                    "the whole command is exactly the allow rule `{}` ({})",
                    rule.pattern, rule.origin
                );
                return Decision::by_rule(Verdict::Allow, command, rule.clone(), reason);
            }
        }
        if worst == Verdict::Allow || parts.is_empty() {
            return Decision::new(
                Verdict::Ask,
                command,
                "the command holds no simple command to match against the allow rules",
            );
        }
        // A simple command or redirection names the culprit better than the whole
        // line; what could not be analysed explains an ASK better than a missing rule.
        let decider =
            parts
                .iter()
                .filter(|p| p.verdict == worst)
                .min_by_key(|p| match (worst, p.kind) {
                    (Verdict::Ask, PartKind::Unanalysable) => 0,
                    (_, PartKind::Line) => 2,
                    _ => 1,
                });
        match decider {
            Some(p) => Decision {
                verdict: worst,
                subject: command.to_string(),
                rule: p.rule.clone(),
                reason: every_reason(p, parts, worst),
            },
            None => Decision::new(Verdict::Ask, command, "no allow rule matched the command"),
        }
    }
}
