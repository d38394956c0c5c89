//! The one way to ask a human: the question, the four answers, how a
//! question ends, and the [`Resolver`] trait that puts it.
//!
//! The gate decides ALLOW, DENY or ASK. An ASK becomes a [`Question`], handed
//! to a [`Resolver`] that lives where the user interface lives: the terminal
//! prompt of the `sandgate` binary, an MCP client's elicitation, the questions
//! `sandgate run` asks about writes outside its allowed set. Every one of
//! them answers with the same four [`Answer`]s (allow or deny, once or
//! always), or ends with nobody answering, which is a DENY. This module is
//! vocabulary only: no IO, no UI.

use std::fmt;
use std::time::Duration;

use crate::decision::{Decision, Verdict};
use crate::persist::Effect;
use crate::request::ToolKind;

/// What kind of subject is being asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubjectKind {
    /// A canonical path (file tools).
    Path,
    /// A command string (exec tools).
    Command,
    /// A network host as an entry of `permissions.network` would name it
    /// (`example.org`, `example.org:22`): a contained program connects to
    /// it (the tool [`NETWORK_TOOL`]).
    Host,
}

/// The tool a network question is asked for: a contained program connects
/// to a host no entry decides.
pub const NETWORK_TOOL: &str = "network";

impl SubjectKind {
    /// The subject kind of a gated tool, or `None` for a tool outside the gate.
    pub fn of_tool(tool: &str) -> Option<SubjectKind> {
        if tool == NETWORK_TOOL {
            return Some(SubjectKind::Host);
        }
        match crate::request::tool_kind(tool) {
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
            SubjectKind::Host => "host",
        }
    }
}

/// One question for a human.
#[derive(Debug, Clone)]
pub struct Question {
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

    /// The answer in the past tense, for reasons: `allowed once`.
    pub fn past_tense(self) -> &'static str {
        match self {
            Answer::AllowOnce => "allowed once",
            Answer::AllowAlways => "allowed always",
            Answer::DenyOnce => "denied once",
            Answer::DenyAlways => "denied always",
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

    /// The decision this resolution gives `subject`, which was asked about
    /// because of `asked` (the gate's reason). Nobody answering is a DENY
    /// that says why; an answer gives its verdict. An "always" answer's rule
    /// is the caller's to keep and report.
    pub fn decision(&self, subject: impl Into<String>, asked: &str) -> Decision {
        match self {
            Resolution::TimedOut { reason } => Decision::new(
                Verdict::Deny,
                subject,
                format!("timed out asking a human ({reason}); {asked}"),
            ),
            Resolution::Unavailable { reason } => Decision::new(
                Verdict::Deny,
                subject,
                format!("no human to ask ({reason}); {asked}"),
            ),
            Resolution::Declined { reason } => Decision::new(
                Verdict::Deny,
                subject,
                format!("not answered: {reason}; {asked}"),
            ),
            Resolution::Answered(answer) => Decision::new(
                answer.verdict(),
                subject,
                format!("{} by a human at the prompt", answer.past_tense()),
            ),
        }
    }
}

/// Puts a question to a human. Implementations live where the UI lives.
///
/// A resolver must return by `question.timeout` (a [`Resolution::TimedOut`] then)
/// and must never answer on the human's behalf: anything but a real answer is
/// a DENY.
pub trait Resolver: Send + Sync {
    /// Ask, wait for the answer, and say how it ended.
    fn resolve(&self, question: &Question) -> Resolution;
}

/// A resolver with nobody behind it: every ASK is an immediate DENY with `reason`.
#[derive(Debug, Clone)]
pub struct NoHuman {
    /// Why there is nobody to ask.
    pub reason: String,
}

impl Resolver for NoHuman {
    fn resolve(&self, _question: &Question) -> Resolution {
        Resolution::Unavailable {
            reason: self.reason.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_answers_two_verdicts_two_that_persist() {
        let verdicts: Vec<Verdict> = Answer::ALL.iter().map(|a| a.verdict()).collect();
        assert_eq!(
            verdicts,
            [Verdict::Allow, Verdict::Allow, Verdict::Deny, Verdict::Deny]
        );
        let persists: Vec<Option<Effect>> = Answer::ALL.iter().map(|a| a.persists()).collect();
        assert_eq!(
            persists,
            [None, Some(Effect::Allow), None, Some(Effect::Deny)]
        );
        let names: Vec<&str> = Answer::ALL.iter().map(|a| a.as_str()).collect();
        assert_eq!(
            names,
            ["allow_once", "allow_always", "deny_once", "deny_always"]
        );
        assert_eq!(Answer::DenyAlways.to_string(), "deny always");
        assert_eq!(Answer::AllowOnce.past_tense(), "allowed once");
    }

    #[test]
    fn nobody_answering_is_a_deny_that_says_why() {
        let asked = "no allow rule matched";
        for (resolution, words) in [
            (
                Resolution::TimedOut {
                    reason: "no answer within 7 s".into(),
                },
                "timed out asking a human (no answer within 7 s); no allow rule matched",
            ),
            (
                Resolution::Unavailable {
                    reason: "--no-ui".into(),
                },
                "no human to ask (--no-ui); no allow rule matched",
            ),
        ] {
            assert_eq!(resolution.verdict(), Verdict::Deny);
            assert_eq!(resolution.answer(), None);
            let d = resolution.decision("make", asked);
            assert_eq!((d.verdict, d.subject.as_str()), (Verdict::Deny, "make"));
            assert_eq!(d.reason, words);
        }
        let d = NoHuman {
            reason: "headless".into(),
        }
        .resolve(&Question {
            tool: "exec_run".into(),
            kind: SubjectKind::Command,
            subject: "make".into(),
            reason: asked.into(),
            timeout: Duration::from_secs(1),
        });
        assert_eq!(d.verdict(), Verdict::Deny);
    }

    #[test]
    fn an_answer_gives_its_verdict() {
        let d = Resolution::Answered(Answer::DenyOnce).decision("/x", "asked");
        assert_eq!(d.verdict, Verdict::Deny);
        assert_eq!(d.reason, "denied once by a human at the prompt");
        assert_eq!(SubjectKind::of_tool("file_read"), Some(SubjectKind::Path));
        assert_eq!(SubjectKind::of_tool("exec_run"), Some(SubjectKind::Command));
        assert_eq!(SubjectKind::of_tool("web_fetch"), None);
    }
}
