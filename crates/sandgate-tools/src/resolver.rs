//! The seam through which an ASK reaches a human.
//!
//! The gate decides ALLOW, DENY or ASK. An ASK is handed to a [`Resolver`],
//! which lives where the user interface lives: the terminal prompt of the
//! `sandgate` binary, an MCP client's elicitation, or (for agent hooks) the
//! agent's own prompt. A resolver only answers; [`settle`] turns its answer
//! into the final decision and, for the "always" answers, writes the exact
//! rule into the central policy file and reloads the policy.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sandgate_policy::persist::{self, Appended, Effect, PersistError, Section};
use sandgate_policy::{
    Context, Decision, List, LoadError, Origin, Policy, RuleRef, Tier, ToolKind, Verdict,
};

/// What kind of subject is being asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubjectKind {
    /// A canonical path (file tools).
    Path,
    /// A command string (exec tools).
    Command,
}

impl SubjectKind {
    /// The subject kind of a gated tool, or `None` for a tool outside the gate.
    pub fn of_tool(tool: &str) -> Option<SubjectKind> {
        match sandgate_policy::request::tool_kind(tool) {
            ToolKind::File => Some(SubjectKind::Path),
            ToolKind::Exec => Some(SubjectKind::Command),
            ToolKind::OutOfScope => None,
        }
    }

    /// `path` or `command`, for display.
    pub fn as_str(self) -> &'static str {
        match self {
            SubjectKind::Path => "path",
            SubjectKind::Command => "command",
        }
    }
}

/// One question for a human.
#[derive(Debug, Clone)]
pub struct Ask {
    /// The tool that wants to run, e.g. `exec_run`.
    pub tool: String,
    /// Whether the subject is a path or a command.
    pub kind: SubjectKind,
    /// The canonical path or the command, as the gate matched it.
    pub subject: String,
    /// Why the gate is asking ("no allow rule matched …", or what could not be analysed).
    pub reason: String,
    /// How long the human has to answer before it is a DENY.
    pub timeout: Duration,
}

/// A human's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Answer {
    /// Let this one call run.
    AllowOnce,
    /// Let it run, and add an exact allow rule to the central policy.
    AllowAlways,
    /// Refuse this one call.
    DenyOnce,
    /// Refuse it, and add an exact deny rule to the central policy.
    DenyAlways,
}

impl Answer {
    /// All answers, in menu order.
    pub const ALL: [Answer; 4] = [
        Answer::AllowOnce,
        Answer::AllowAlways,
        Answer::DenyOnce,
        Answer::DenyAlways,
    ];

    /// The verdict this answer gives the call.
    pub fn verdict(self) -> Verdict {
        match self {
            Answer::AllowOnce | Answer::AllowAlways => Verdict::Allow,
            Answer::DenyOnce | Answer::DenyAlways => Verdict::Deny,
        }
    }

    /// The list an "always" answer writes to, or `None` for a "once" answer.
    pub fn persists(self) -> Option<Effect> {
        match self {
            Answer::AllowAlways => Some(Effect::Allow),
            Answer::DenyAlways => Some(Effect::Deny),
            Answer::AllowOnce | Answer::DenyOnce => None,
        }
    }

    /// The menu label, e.g. `allow once`.
    pub fn label(self) -> &'static str {
        match self {
            Answer::AllowOnce => "allow once",
            Answer::AllowAlways => "allow always",
            Answer::DenyOnce => "deny once",
            Answer::DenyAlways => "deny always",
        }
    }

    /// The wire name, e.g. `allow_once`.
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::AllowOnce => "allow_once",
            Answer::AllowAlways => "allow_always",
            Answer::DenyOnce => "deny_once",
            Answer::DenyAlways => "deny_always",
        }
    }
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// How a question ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// A human answered.
    Answered(Answer),
    /// Nobody answered in time (or the prompt slot never came free). Always DENY.
    TimedOut {
        /// Why, in words, e.g. `no answer within 25 s`.
        reason: String,
    },
    /// There is nobody to ask: no terminal, `--no-ui`, a daemon. Always DENY, at once.
    Unavailable {
        /// Why, in words, e.g. `no terminal (--no-ui)`.
        reason: String,
    },
    /// The client declined the question without giving one of the answers
    /// (an MCP client's `decline`, which some clients send on their own,
    /// unasked, when they run headless). Always DENY, nothing persisted.
    Declined {
        /// Why, in words, e.g. `the MCP client declined the question`.
        reason: String,
    },
}

impl Resolution {
    /// The verdict: the answer's, or DENY when nobody answered.
    pub fn verdict(&self) -> Verdict {
        match self {
            Resolution::Answered(a) => a.verdict(),
            Resolution::TimedOut { .. }
            | Resolution::Unavailable { .. }
            | Resolution::Declined { .. } => Verdict::Deny,
        }
    }

    /// Who settled the question, for the audit log: `human`, `timeout`,
    /// `headless` (nobody to ask) or `client declined`.
    pub fn answered_by(&self) -> &'static str {
        match self {
            Resolution::Answered(_) => "human",
            Resolution::TimedOut { .. } => "timeout",
            Resolution::Unavailable { .. } => "headless",
            Resolution::Declined { .. } => "client declined",
        }
    }

    /// The answer, if a human gave one.
    pub fn answer(&self) -> Option<Answer> {
        match self {
            Resolution::Answered(a) => Some(*a),
            _ => None,
        }
    }
}

/// Puts an ASK to a human. Implementations live where the UI lives.
///
/// A resolver must return by `ask.timeout` (a [`Resolution::TimedOut`] then)
/// and must never answer on the human's behalf: anything but a real answer is
/// a DENY.
pub trait Resolver: Send + Sync {
    /// Ask, wait for the answer, and say how it ended.
    fn resolve(&self, ask: &Ask) -> Resolution;
}

/// A resolver with nobody behind it: every ASK is an immediate DENY with `reason`.
#[derive(Debug, Clone)]
pub struct NoHuman {
    /// Why there is nobody to ask.
    pub reason: String,
}

impl Resolver for NoHuman {
    fn resolve(&self, _ask: &Ask) -> Resolution {
        Resolution::Unavailable {
            reason: self.reason.clone(),
        }
    }
}

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
    let ask = Ask {
        tool: tool.to_string(),
        kind,
        subject: asked.subject.clone(),
        reason: asked.reason.clone(),
        timeout: policy.settings().prompt_timeout,
    };
    let resolution = resolver.resolve(&ask);
    let subject = asked.subject.clone();
    let (decision, always, reloaded) = match &resolution {
        Resolution::TimedOut { reason } => (
            Decision::new(
                Verdict::Deny,
                subject,
                format!("timed out asking a human ({reason}); {}", asked.reason),
            ),
            None,
            None,
        ),
        Resolution::Unavailable { reason } => (
            Decision::new(
                Verdict::Deny,
                subject,
                format!("no human to ask ({reason}); {}", asked.reason),
            ),
            None,
            None,
        ),
        Resolution::Declined { reason } => (
            Decision::new(
                Verdict::Deny,
                subject,
                format!("not answered: {reason}; {}", asked.reason),
            ),
            None,
            None,
        ),
        Resolution::Answered(answer) => match answer.persists() {
            None => (
                Decision::new(
                    answer.verdict(),
                    subject,
                    format!("{} by a human at the prompt", past_tense(*answer)),
                ),
                None,
                None,
            ),
            Some(effect) => {
                let kept = keep_always(policy, ctx, kind, &asked.subject, effect);
                let (decision, always, reloaded) = match kept {
                    Ok((persisted, reloaded)) => {
                        let mut reason = format!(
                            "{} by a human at the prompt; {} {}",
                            past_tense(*answer),
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
                            past_tense(*answer)
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
        },
    };
    Settled {
        decision,
        resolution,
        always,
        reloaded,
    }
}

fn past_tense(answer: Answer) -> &'static str {
    match answer {
        Answer::AllowOnce => "allowed once",
        Answer::AllowAlways => "allowed always",
        Answer::DenyOnce => "denied once",
        Answer::DenyAlways => "denied always",
    }
}

/// The exact rule for `subject`: an escaped path glob or an anchored, escaped regex.
pub fn exact_rule(kind: SubjectKind, subject: &str) -> Result<String, PersistError> {
    match kind {
        SubjectKind::Path => persist::path_rule(Path::new(subject)),
        SubjectKind::Command => Ok(persist::command_rule(subject)),
    }
}

fn keep_always(
    policy: &Policy,
    ctx: &Context,
    kind: SubjectKind,
    subject: &str,
    effect: Effect,
) -> Result<(Persisted, Policy), AlwaysError> {
    let central: PathBuf = policy
        .sources()
        .central
        .clone()
        .ok_or(AlwaysError::NoCentralFile)?;
    let pattern = exact_rule(kind, subject)?;
    let section = match kind {
        SubjectKind::Path => Section::Paths,
        SubjectKind::Command => Section::Commands,
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
        origin: Origin::File {
            path: central.into(),
            line,
            tier: Tier::Central,
        },
    };
    let reloaded = Policy::load(policy.sources(), ctx).map_err(AlwaysError::Reload)?;
    let next_time = match kind {
        SubjectKind::Command => reloaded.evaluate_command(subject, ctx).verdict,
        SubjectKind::Path => reloaded.decide_canonical_path(Path::new(subject)).verdict,
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
    use sandgate_policy::Sources;
    use std::sync::Mutex;

    /// Answers with a fixed resolution and remembers what it was asked.
    struct Scripted {
        resolution: Resolution,
        asked: Mutex<Vec<Ask>>,
    }

    impl Resolver for Scripted {
        fn resolve(&self, ask: &Ask) -> Resolution {
            self.asked.lock().unwrap().push(ask.clone());
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
        let asked = reloaded.evaluate_path(file.to_str().unwrap(), &s.ctx);
        assert_eq!(asked.verdict, Verdict::Ask);
        let r = scripted(Resolution::Answered(Answer::DenyAlways));
        let settled = settle(&reloaded, &s.ctx, "file_read", &asked, &r);
        assert_eq!(settled.decision.verdict, Verdict::Deny);
        assert_eq!(r.asked.lock().unwrap()[0].kind, SubjectKind::Path);
        let again = settled.reloaded.expect("reloaded");
        let d = again.evaluate_path(file.to_str().unwrap(), &s.ctx);
        assert_eq!(d.verdict, Verdict::Deny);
        assert_eq!(d.rule.map(|r| r.list), Some(List::Deny));
        let other = s.ctx.cwd.join("secret1.txt");
        assert_eq!(
            again.evaluate_path(other.to_str().unwrap(), &s.ctx).verdict,
            Verdict::Ask
        );
        // The local file was never created.
        assert!(!s.ctx.cwd.join(".sandgate").exists());
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
