//! Settling an ASK of the gate.
//!
//! The gate decides ALLOW, DENY or ASK. An ASK becomes a [`Question`] (the
//! vocabulary is [`sandgate_policy::ask`], re-exported here) handed to a
//! [`Resolver`], which lives where the user interface lives: the terminal
//! prompt of the `sandgate` binary, an MCP client's elicitation, or (for
//! agent hooks) the agent's own prompt. A resolver only answers; [`settle`]
//! turns its answer into the final decision and, for the "always" answers,
//! writes the exact rule into the central policy file and reloads the policy.

use std::path::{Path, PathBuf};

use sandgate_policy::ask::{Question, Resolution, Resolver, SubjectKind};
use sandgate_policy::persist::{self, Appended, Effect, PersistError, Section};
use sandgate_policy::{
    Access, Context, Decision, List, LoadError, Origin, Policy, RuleRef, Tier, Verdict,
};

/// The rule an "always" answer wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Persisted {
    /// The rule as written.
    pub rule: RuleRef,
    /// `false` when the file already had it (nothing was written).
    pub added: bool,
    /// What the reloaded policy decides for the same subject. It is the
    /// answer's verdict unless something else in the policy overrides the
    /// rule (e.g. a deny rule wins over a new allow rule).
    pub next_time: Verdict,
}

/// Why an "always" rule could not be kept. The call itself still gets the answer's verdict.
#[derive(Debug, thiserror::Error)]
pub enum AlwaysError {
    /// No central policy file is configured.
    #[error("no central policy file is configured, so the rule was not kept")]
    NoCentralFile,
    /// The rule could not be written.
    #[error(transparent)]
    Persist(#[from] PersistError),
    /// The rule was written but the policy no longer loads; the previous policy stays in force.
    #[error("the rule was written but the policy no longer loads: {0}")]
    Reload(LoadError),
}

/// The outcome of an ASK put to a human.
#[derive(Debug)]
pub struct Settled {
    /// The final decision for this call: ALLOW or DENY, never ASK.
    pub decision: Decision,
    /// How the question ended.
    pub resolution: Resolution,
    /// For an "always" answer: the rule that was kept, or why it was not.
    pub always: Option<Result<Persisted, AlwaysError>>,
    /// The reloaded policy after an "always" rule was written; use it from now on.
    pub reloaded: Option<Policy>,
}

/// Put the ASK `asked` (made by `policy` for `tool`) to `resolver`, then apply the answer.
///
/// "Always" answers append the exact rule for the subject to the central
/// policy file (never the local one) and reload the policy from the same
/// sources, so the next identical call is decided without asking. A failure
/// to keep the rule does not change the verdict of this call; it is reported
/// in [`Settled::always`] and in the decision's reason.
pub fn settle(
    policy: &Policy,
    ctx: &Context,
    tool: &str,
    asked: &Decision,
    resolver: &dyn Resolver,
) -> Settled {
    let kind = SubjectKind::of_tool(tool).unwrap_or(SubjectKind::Command);
    let question = Question {
        tool: tool.to_string(),
        kind,
        subject: asked.subject.clone(),
        reason: asked.reason.clone(),
        timeout: policy.settings().prompt_timeout,
    };
    let resolution = resolver.resolve(&question);
    let subject = asked.subject.clone();
    let persists = resolution
        .answer()
        .and_then(|a| a.persists().map(|e| (a, e)));
    let (decision, always, reloaded) = match persists {
        None => (resolution.decision(subject, &asked.reason), None, None),
        Some((answer, effect)) => {
            let access = sandgate_policy::request::gated_tool(tool).and_then(|t| t.access);
            let kept = keep_always(policy, ctx, kind, access, &asked.subject, effect);
            let (decision, always, reloaded) = match kept {
                Ok((persisted, reloaded)) => {
                    let mut reason = format!(
                        "{} by a human at the prompt; {} {}",
                        answer.past_tense(),
                        if persisted.added {
                            "added"
                        } else {
                            "the policy already had"
                        },
                        persisted.rule
                    );
                    if persisted.next_time != answer.verdict() {
                        reason.push_str(&format!(
                            "; the policy still decides {} for this {} next time",
                            persisted.next_time,
                            kind.as_str()
                        ));
                    }
                    let decision = Decision::by_rule(
                        answer.verdict(),
                        subject,
                        persisted.rule.clone(),
                        reason,
                    );
                    (decision, Ok(persisted), Some(reloaded))
                }
                Err(e) => {
                    let reason = format!(
                        "{} by a human at the prompt, but the rule was not kept: {e}",
                        answer.past_tense()
                    );
                    (
                        Decision::new(answer.verdict(), subject, reason),
                        Err(e),
                        None,
                    )
                }
            };
            (decision, Some(always), reloaded)
        }
    };
    Settled {
        decision,
        resolution,
        always,
        reloaded,
    }
}

/// The exact rule for `subject`: an escaped path glob, an anchored, escaped
/// regex, or a network entry in its one spelling.
pub fn exact_rule(kind: SubjectKind, subject: &str) -> Result<String, PersistError> {
    match kind {
        SubjectKind::Path => persist::path_rule(Path::new(subject)),
        SubjectKind::Command => Ok(persist::command_rule(subject)),
        SubjectKind::Host => Ok(sandgate_policy::network::Entry::parse(subject)
            .map(|e| e.to_string())
            .unwrap_or_else(|_| subject.to_string())),
    }
}

/// "Allow always" on a path allows only the access that was asked about
/// (`paths.read.allow` for a read, `paths.write.allow` for a write); "deny
/// always" denies the path for both (`paths.deny`), the stricter reading of
/// what the person meant.
fn keep_always(
    policy: &Policy,
    ctx: &Context,
    kind: SubjectKind,
    access: Option<Access>,
    subject: &str,
    effect: Effect,
) -> Result<(Persisted, Policy), AlwaysError> {
    let central: PathBuf = policy
        .sources()
        .central
        .clone()
        .ok_or(AlwaysError::NoCentralFile)?;
    let pattern = exact_rule(kind, subject)?;
    let rule_access = match (kind, effect) {
        (SubjectKind::Path, Effect::Allow) => access,
        _ => None,
    };
    let section = match kind {
        SubjectKind::Path => Section::paths_for(rule_access),
        SubjectKind::Command => Section::Commands,
        SubjectKind::Host => Section::Network,
    };
    let appended = persist::append_rule(&central, section, effect, &pattern)?;
    let (line, added) = match appended {
        Appended::Added { line } => (line, true),
        Appended::AlreadyPresent { line } => (line, false),
    };
    let rule = RuleRef {
        pattern,
        list: match effect {
            Effect::Allow => List::Allow,
            Effect::Deny => List::Deny,
        },
        access: rule_access,
        origin: Origin::File {
            path: central.into(),
            line,
            tier: Tier::Central,
        },
    };
    let reloaded = Policy::load(policy.sources(), ctx).map_err(AlwaysError::Reload)?;
    let next_time = match kind {
        SubjectKind::Command => reloaded.evaluate_command(subject, ctx).verdict,
        SubjectKind::Path => {
            reloaded
                .decide_canonical_path(Path::new(subject), access.unwrap_or(Access::Write))
                .verdict
        }
        // The entry's host on its port (no port: 443, as for 80).
        SubjectKind::Host => match sandgate_policy::network::parse_host_port(subject) {
            Ok((target, port)) => reloaded.network().map_or(Verdict::Allow, |n| {
                n.decide(&target, port.unwrap_or(443)).verdict
            }),
            Err(_) => Verdict::Ask,
        },
    };
    Ok((
        Persisted {
            rule,
            added,
            next_time,
        },
        reloaded,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandgate_policy::ask::{Answer, NoHuman};
    use sandgate_policy::Sources;
    use std::sync::Mutex;
    use std::time::Duration;

    /// Answers with a fixed resolution and remembers what it was asked.
    struct Scripted {
        resolution: Resolution,
        asked: Mutex<Vec<Question>>,
    }

    impl Resolver for Scripted {
        fn resolve(&self, question: &Question) -> Resolution {
            self.asked.lock().unwrap().push(question.clone());
            self.resolution.clone()
        }
    }

    fn scripted(resolution: Resolution) -> Scripted {
        Scripted {
            resolution,
            asked: Mutex::new(Vec::new()),
        }
    }

    struct Setup {
        _tmp: tempfile::TempDir,
        central: PathBuf,
        ctx: Context,
        policy: Policy,
    }

    fn setup(central_text: &str) -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let work = tmp.path().join("work");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        let central = home.join(".sandgate/permissions.yaml");
        std::fs::create_dir_all(central.parent().unwrap()).unwrap();
        std::fs::write(&central, central_text).unwrap();
        let local = work.join(".sandgate/permissions.yaml");
        let ctx = Context::new(&work, &home).unwrap();
        let sources = Sources {
            managed: None,
            central: Some(central.clone()),
            local: Some(local),
            no_sandbox: false,
        };
        let policy = Policy::load(&sources, &ctx).unwrap();
        Setup {
            _tmp: tmp,
            central,
            ctx,
            policy,
        }
    }

    const TEXT: &str = "# keep me\npermissions:\n  prompt:\n    timeout: 7\n";

    #[test]
    fn once_answers_give_their_verdict_and_write_nothing() {
        let s = setup(TEXT);
        let asked = s.policy.evaluate_command("make", &s.ctx);
        assert_eq!(asked.verdict, Verdict::Ask);
        for (answer, verdict) in [
            (Answer::AllowOnce, Verdict::Allow),
            (Answer::DenyOnce, Verdict::Deny),
        ] {
            let r = scripted(Resolution::Answered(answer));
            let settled = settle(&s.policy, &s.ctx, "exec_run", &asked, &r);
            assert_eq!(settled.decision.verdict, verdict);
            assert!(settled.always.is_none() && settled.reloaded.is_none());
            let asks = r.asked.lock().unwrap();
            assert_eq!(asks[0].subject, "make");
            assert_eq!(asks[0].kind, SubjectKind::Command);
            assert_eq!(asks[0].timeout, Duration::from_secs(7));
            assert_eq!(asks[0].reason, asked.reason);
        }
        assert_eq!(std::fs::read_to_string(&s.central).unwrap(), TEXT);
    }

    #[test]
    fn nobody_answering_is_deny_with_the_reason() {
        let s = setup(TEXT);
        let asked = s.policy.evaluate_command("make", &s.ctx);
        let r = scripted(Resolution::TimedOut {
            reason: "no answer within 7 s".into(),
        });
        let settled = settle(&s.policy, &s.ctx, "exec_run", &asked, &r);
        assert_eq!(settled.decision.verdict, Verdict::Deny);
        assert!(settled.decision.reason.contains("timed out"));
        assert!(settled.decision.reason.contains("no answer within 7 s"));
        let settled = settle(
            &s.policy,
            &s.ctx,
            "exec_run",
            &asked,
            &NoHuman {
                reason: "--no-ui".into(),
            },
        );
        assert_eq!(settled.decision.verdict, Verdict::Deny);
        assert!(settled.decision.reason.contains("--no-ui"));
    }

    #[test]
    fn always_answers_write_the_exact_rule_and_reload() {
        let s = setup(TEXT);
        let command = "echo 'a.b*c (x) [y] $z ^w'";
        let asked = s.policy.evaluate_command(command, &s.ctx);
        let r = scripted(Resolution::Answered(Answer::AllowAlways));
        let settled = settle(&s.policy, &s.ctx, "exec_run", &asked, &r);
        assert_eq!(settled.decision.verdict, Verdict::Allow);
        let rule = settled.decision.rule.clone().expect("the written rule");
        match &settled.always {
            Some(Ok(p)) => assert_eq!((p.added, p.next_time), (true, Verdict::Allow)),
            other => panic!("{other:?}"),
        }
        assert_eq!(rule.pattern, persist::command_rule(command));
        assert_eq!(rule.list, List::Allow);
        let reloaded = settled.reloaded.expect("reloaded");
        assert_eq!(
            reloaded.evaluate_command(command, &s.ctx).verdict,
            Verdict::Allow
        );
        let text = std::fs::read_to_string(&s.central).unwrap();
        assert!(text.starts_with("# keep me\n"), "{text}");

        let file = s.ctx.cwd.join("secret[1].txt");
        let asked = reloaded.evaluate_path(file.to_str().unwrap(), Access::Read, &s.ctx);
        assert_eq!(asked.verdict, Verdict::Ask);
        let r = scripted(Resolution::Answered(Answer::DenyAlways));
        let settled = settle(&reloaded, &s.ctx, "file_read", &asked, &r);
        assert_eq!(settled.decision.verdict, Verdict::Deny);
        assert_eq!(r.asked.lock().unwrap()[0].kind, SubjectKind::Path);
        let again = settled.reloaded.expect("reloaded");
        // "Deny always" denies the path for reading and writing.
        for access in [Access::Read, Access::Write] {
            let d = again.evaluate_path(file.to_str().unwrap(), access, &s.ctx);
            assert_eq!(d.verdict, Verdict::Deny);
            assert_eq!(d.rule.map(|r| (r.list, r.access)), Some((List::Deny, None)));
        }
        let other = s.ctx.cwd.join("secret1.txt");
        assert_eq!(
            again
                .evaluate_path(other.to_str().unwrap(), Access::Read, &s.ctx)
                .verdict,
            Verdict::Ask
        );
        // The local file was never created.
        assert!(!s.ctx.cwd.join(".sandgate").exists());
    }

    #[test]
    fn allow_always_on_a_path_allows_only_the_access_asked_about() {
        let s = setup(TEXT);
        for (tool, access, other, key) in [
            ("file_read", Access::Read, Access::Write, "read"),
            ("file_edit", Access::Write, Access::Read, "write"),
        ] {
            let file = s.ctx.cwd.join(format!("{tool}.txt"));
            let asked = s
                .policy
                .evaluate_path(file.to_str().unwrap(), access, &s.ctx);
            assert_eq!(asked.verdict, Verdict::Ask);
            let r = scripted(Resolution::Answered(Answer::AllowAlways));
            let settled = settle(&s.policy, &s.ctx, tool, &asked, &r);
            assert_eq!(settled.decision.verdict, Verdict::Allow);
            match &settled.always {
                Some(Ok(p)) => {
                    assert_eq!((p.added, p.next_time), (true, Verdict::Allow));
                    assert_eq!(p.rule.path_key(), format!("paths.{key}.allow"));
                }
                other => panic!("{other:?}"),
            }
            let again = settled.reloaded.expect("reloaded");
            let path = file.to_str().unwrap();
            assert_eq!(
                again.evaluate_path(path, access, &s.ctx).verdict,
                Verdict::Allow
            );
            assert_eq!(
                again.evaluate_path(path, other, &s.ctx).verdict,
                Verdict::Ask
            );
        }
        let text = std::fs::read_to_string(&s.central).unwrap();
        assert!(text.contains("read:") && text.contains("write:"), "{text}");
    }

    #[test]
    fn a_rule_that_cannot_be_kept_still_answers_the_call() {
        let s = setup(TEXT);
        let asked = s.policy.evaluate_command("make", &s.ctx);
        // The central file turns into a directory: the write fails.
        std::fs::remove_file(&s.central).unwrap();
        std::fs::create_dir(&s.central).unwrap();
        let r = scripted(Resolution::Answered(Answer::AllowAlways));
        let settled = settle(&s.policy, &s.ctx, "exec_run", &asked, &r);
        assert_eq!(settled.decision.verdict, Verdict::Allow);
        assert!(matches!(settled.always, Some(Err(AlwaysError::Persist(_)))));
        assert!(settled.decision.reason.contains("not kept"));
        assert!(settled.reloaded.is_none());
    }

    #[test]
    fn an_always_rule_that_does_not_take_effect_is_reported() {
        // A deny rule covers the command, so an allow rule for it can never decide.
        let s = setup("permissions:\n  commands:\n    deny: ['^make']\n");
        let asked = Decision::new(Verdict::Ask, "make", "asked anyway");
        let r = scripted(Resolution::Answered(Answer::AllowAlways));
        let settled = settle(&s.policy, &s.ctx, "exec_run", &asked, &r);
        match &settled.always {
            Some(Ok(p)) => assert_eq!(p.next_time, Verdict::Deny),
            other => panic!("{other:?}"),
        }
        assert!(
            settled.decision.reason.contains("still decides deny"),
            "{}",
            settled.decision.reason
        );
    }
}
