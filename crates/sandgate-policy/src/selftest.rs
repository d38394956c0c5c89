//! Self-tests in a policy file: a `tests:` list of calls and the verdict each
//! must get, checked against the merged policy when it loads.
//!
//! ```yaml
//! tests:
//!   - {command: "git push -f origin main", expect: deny}
//!   - {path: "~/projects/x/README.md", tool: file_read, expect: allow}
//! ```
//!
//! A test is judged like the call it describes, by the rules (also when the
//! sandbox is off), in the context the policy is loaded for (its working
//! directory and home). A test that gets another
//! verdict makes the policy fail to load, naming the test's `file:line`, so a
//! rule edited by mistake never quietly changes what the policy means.

use std::path::Path;
use std::sync::Arc;

use crate::config::TestSpec;
use crate::decision::{Decision, Origin, Tier, Verdict};
use crate::error::{LoadError, Problem};
use crate::request::{Context, ToolCall, ToolKind, GATED_TOOLS};

/// What a test asks about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestSubject {
    /// A command (`exec_run`).
    Command(String),
    /// A path (a file tool).
    Path(String),
}

/// One self-test, checked and ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyTest {
    /// The gated tool making the call.
    pub tool: String,
    /// The command or path.
    pub subject: TestSubject,
    /// The verdict the call must get.
    pub expect: Verdict,
    /// Where the test is written.
    pub origin: Origin,
    /// 1-based column of the test.
    pub column: u32,
}

impl PolicyTest {
    /// The tool call the test describes.
    pub fn call(&self) -> ToolCall {
        let params = match &self.subject {
            TestSubject::Command(c) => serde_json::json!({ "command": c }),
            TestSubject::Path(p) => serde_json::json!({ "path": p }),
        };
        ToolCall::new(self.tool.clone(), params)
    }

    /// The call in words: "the command `git status`", "`file_write` of the path `./x`".
    pub fn describe(&self) -> String {
        match &self.subject {
            TestSubject::Command(c) if self.tool == "exec_run" => format!("the command `{c}`"),
            TestSubject::Command(c) => format!("`{}` of the command `{c}`", self.tool),
            TestSubject::Path(p) => format!("`{}` of the path `{p}`", self.tool),
        }
    }

    /// The file and line the test is written at.
    pub fn position(&self) -> Option<(&Path, u32)> {
        match &self.origin {
            Origin::File { path, line, .. } => Some((path, *line)),
            Origin::Builtin => None,
        }
    }
}

/// A test and the decision the policy gave its call.
#[derive(Debug, Clone)]
pub struct TestOutcome<'a> {
    /// The test.
    pub test: &'a PolicyTest,
    /// What the policy decided.
    pub decision: Decision,
}

impl TestOutcome<'_> {
    /// Whether the decision is the verdict the test expects.
    pub fn passed(&self) -> bool {
        self.decision.verdict == self.test.expect
    }

    /// The failure as a problem of the test's file, at its line.
    pub fn problem(&self) -> Problem {
        let (file, position) = match &self.test.origin {
            Origin::File { path, line, .. } => {
                (path.to_path_buf(), Some((*line, self.test.column)))
            }
            Origin::Builtin => (Default::default(), None),
        };
        Problem {
            file,
            position,
            rule: None,
            message: format!(
                "test failed: {} should be {} but is {}: {}",
                self.test.describe(),
                self.test.expect,
                self.decision.verdict,
                self.decision.reason
            ),
            hint: Some(
                "`sandgate policy test` runs every test and shows each result; fix the rules, \
                 or the test's `expect` if the rules are right"
                    .into(),
            ),
        }
    }
}

/// What the tests run against: the compiled policy (`Policy` implements it),
/// which holds the tests of its files and judges a call by its rules.
pub trait Tested {
    /// The self-tests of every file, in tier order.
    fn tests(&self) -> &[PolicyTest];
    /// What the rules decide for `call` in `ctx`, as if the sandbox were on.
    fn evaluate_rules(&self, call: &ToolCall, ctx: &Context) -> Decision;
}

/// Run every test of `policy` in `ctx`, in file order. A test is judged by
/// the rules ([`Tested::evaluate_rules`]), also when the sandbox is off.
pub fn run<'a, P: Tested + ?Sized>(policy: &'a P, ctx: &Context) -> Vec<TestOutcome<'a>> {
    policy
        .tests()
        .iter()
        .map(|test| TestOutcome {
            test,
            decision: policy.evaluate_rules(&test.call(), ctx),
        })
        .collect()
}

/// Every failed test as one load error, or `Ok` when all pass.
pub fn check<P: Tested + ?Sized>(policy: &P, ctx: &Context) -> Result<(), LoadError> {
    let problems: Vec<Problem> = run(policy, ctx)
        .iter()
        .filter(|o| !o.passed())
        .map(TestOutcome::problem)
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(LoadError { problems })
    }
}

/// The tests of one parsed file with their origins. Each was checked by
/// [`problems`] when the file was parsed; an entry that is not a usable test
/// is skipped here (the parse reported it).
pub fn from_specs(
    specs: &[serde_saphyr::Spanned<TestSpec>],
    path: &Arc<Path>,
    tier: Tier,
) -> Vec<PolicyTest> {
    specs
        .iter()
        .filter_map(|s| {
            let (tool, subject, expect) = usable(&s.value).ok()?;
            Some(PolicyTest {
                tool,
                subject,
                expect,
                origin: Origin::File {
                    path: path.clone(),
                    line: s.referenced.line() as u32,
                    tier,
                },
                column: s.referenced.column() as u32,
            })
        })
        .collect()
}

/// What is wrong with each entry of `tests:` (an entry with both `command` and
/// `path`, neither, no `expect`, or a tool that does not fit its subject).
pub fn problems(specs: &[serde_saphyr::Spanned<TestSpec>], path: &Path) -> Vec<Problem> {
    specs
        .iter()
        .filter_map(|s| {
            let message = usable(&s.value).err()?;
            Some(Problem {
                file: path.to_path_buf(),
                position: Some((s.referenced.line() as u32, s.referenced.column() as u32)),
                rule: None,
                message,
                hint: Some(
                    "a test is `{command: \"git status\", expect: allow}` or \
                     `{path: \"~/projects/x/README.md\", tool: file_read, expect: allow}`; \
                     `expect` is `allow`, `ask` or `deny`"
                        .into(),
                ),
            })
        })
        .collect()
}

/// The tool, subject and verdict of a test, or what is wrong with it.
fn usable(spec: &TestSpec) -> Result<(String, TestSubject, Verdict), String> {
    let (subject, kind, default_tool) = match (&spec.command, &spec.path) {
        (Some(c), None) => (TestSubject::Command(c.clone()), ToolKind::Exec, "exec_run"),
        (None, Some(p)) => (TestSubject::Path(p.clone()), ToolKind::File, "file_read"),
        (Some(_), Some(_)) => {
            return Err("a test has either `command` or `path`, not both".into());
        }
        (None, None) => return Err("a test needs `command` or `path`".into()),
    };
    let Some(expect) = spec.expect else {
        return Err("a test needs `expect`: `allow`, `ask` or `deny`".into());
    };
    let tool = spec.tool.as_deref().unwrap_or(default_tool);
    // The plain names only, as the schema lists them.
    match GATED_TOOLS.iter().find(|t| t.name == tool) {
        Some(t) if t.kind == kind => Ok((tool.to_string(), subject, expect)),
        found => {
            let fitting: Vec<&str> = GATED_TOOLS
                .iter()
                .filter(|t| t.kind == kind)
                .map(|t| t.name)
                .collect();
            let what = match kind {
                ToolKind::Exec => "a `command` test",
                _ => "a `path` test",
            };
            let near = crate::validate::closest(tool, &fitting)
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            let why = if found.is_some() {
                "does not take that subject"
            } else {
                "is not a tool sandgate gates"
            };
            Err(format!(
                "`tool: {tool}` {why}: the tools of {what} are {}{near}",
                fitting
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
    }
}
