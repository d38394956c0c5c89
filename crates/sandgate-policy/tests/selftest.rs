//! Self-tests in policy files: checked against the merged policy when it
//! loads, with and without the compiled-policy cache.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use sandgate_policy::cache::{self, CacheStatus};
use sandgate_policy::selftest::{self, TestSubject};
use sandgate_policy::{Context, Policy, Sources, Verdict};

struct Tree {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    cache: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    let project = home.join("projects/app");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(home.join(".sandgate")).unwrap();
    Tree {
        cache: root.join("cache"),
        _dir: dir,
        home,
        project,
    }
}

impl Tree {
    fn ctx(&self) -> Context {
        Context::new(&self.project, &self.home).unwrap()
    }

    fn central(&self, text: &str) -> PathBuf {
        let path = self.home.join(".sandgate/permissions.yaml");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn sources(&self, local: Option<&str>) -> Sources {
        let local_path = self.project.join(".sandgate/permissions.yaml");
        if let Some(text) = local {
            std::fs::create_dir_all(local_path.parent().unwrap()).unwrap();
            std::fs::write(&local_path, text).unwrap();
        }
        Sources {
            managed: Some(self.home.join("no-managed.yaml")),
            central: Some(self.home.join(".sandgate/permissions.yaml")),
            local: Some(local_path),
            no_sandbox: false,
        }
    }
}

const POLICY: &str = "\
permissions:
  paths:
    allow: [\"~/projects/**\"]
  commands:
    deny: ['^git push( .*)? -f( |$)']
    allow: ['^git( |$)']
tests:
  - {command: \"git status\", expect: allow}
  - {command: \"git push -f origin main\", expect: deny}
  - {command: \"curl x\", expect: ask}
  - {path: \"~/projects/x/README.md\", tool: file_read, expect: allow}
  - {path: \"~/.ssh/id_rsa\", expect: deny}
";

#[test]
fn passing_tests_load_and_each_is_reported() {
    let t = tree();
    t.central(POLICY);
    let sources = t.sources(None);
    let policy = Policy::load(&sources, &t.ctx()).unwrap();
    assert_eq!(policy.tests().len(), 5);
    assert_eq!(
        policy.tests()[1].subject,
        TestSubject::Command("git push -f origin main".into())
    );
    let outcomes = selftest::run(&policy, &t.ctx());
    assert!(outcomes.iter().all(|o| o.passed()), "{outcomes:?}");
    assert_eq!(outcomes[4].decision.verdict, Verdict::Deny);
}

#[test]
fn a_failing_test_is_a_load_error_at_its_line() {
    let t = tree();
    let text = POLICY.replace(
        "{command: \"curl x\", expect: ask}",
        "{command: \"curl x\", expect: allow}",
    );
    let path = t.central(&text);
    let sources = t.sources(None);
    let err = Policy::load(&sources, &t.ctx()).unwrap_err();
    assert_eq!(err.problems.len(), 1, "{err}");
    let p = &err.problems[0];
    assert_eq!(p.file, path);
    assert_eq!(p.position.map(|(line, _)| line), Some(10), "{err}");
    assert!(
        p.message
            .contains("the command `curl x` should be allow but is ask"),
        "{err}"
    );
    // Without the tests, the same files load.
    Policy::load_untested(&sources, &t.ctx()).unwrap();
    // Through the cache, cold and warm, the same error.
    for _ in 0..2 {
        let cached = cache::load_with(&sources, &t.ctx(), Some(&t.cache)).unwrap_err();
        assert_eq!(cached.to_string(), err.to_string());
    }
}

#[test]
fn tests_are_judged_against_the_merged_policy() {
    let t = tree();
    t.central(POLICY);
    // The project's file denies what the central file's test expects to be allowed.
    let sources = t.sources(Some(
        "permissions:\n  commands:\n    deny: ['^git status']\ntests:\n  - {command: \"git status --short\", expect: deny}\n",
    ));
    let err = Policy::load(&sources, &t.ctx()).unwrap_err();
    let text = err.to_string();
    assert_eq!(err.problems.len(), 1, "{text}");
    assert!(text.contains("should be allow but is deny"), "{text}");
    assert!(
        text.contains("home/.sandgate/permissions.yaml:8:5: test failed: the command `git status`"),
        "{text}"
    );
    // A local test passes against the merged rules (the central file has none of them).
    let policy = Policy::load_untested(&sources, &t.ctx()).unwrap();
    let outcomes = selftest::run(&policy, &t.ctx());
    assert_eq!(outcomes.len(), 6);
    assert!(outcomes[5].passed(), "{outcomes:?}");
}

#[test]
fn malformed_tests_are_problems_with_positions() {
    let t = tree();
    t.central(
        "tests:\n  - {command: ls, path: x, expect: allow}\n  - {command: ls}\n  - {path: x, tool: exec_run, expect: deny}\n  - {expect: deny}\n  - {command: ls, tool: client_exec_run, expect: allow}\n",
    );
    let err = Policy::load(&t.sources(None), &t.ctx()).unwrap_err();
    let text = err.to_string();
    assert_eq!(err.problems.len(), 5, "{text}");
    assert!(
        text.contains(":2:5: a test has either `command` or `path`, not both"),
        "{text}"
    );
    assert!(text.contains(":3:5: a test needs `expect`"), "{text}");
    assert!(
        text.contains(":4:5: `tool: exec_run` does not take that subject: the tools of a `path` test are `file_read`"),
        "{text}"
    );
    assert!(
        text.contains(":5:5: a test needs `command` or `path`"),
        "{text}"
    );
    assert!(
        text.contains(":6:5: `tool: client_exec_run` is not a tool sandgate gates"),
        "{text}"
    );
    // A typo'd key is found with did-you-mean.
    t.central("tests:\n  - {comand: ls, expect: allow}\n");
    let text = Policy::load(&t.sources(None), &t.ctx())
        .unwrap_err()
        .to_string();
    assert!(text.contains("did you mean `command`?"), "{text}");
}

fn cache_files(dir: &Path, prefix: &str) -> usize {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with(prefix))
            })
            .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_warm_load_keeps_the_pass_and_a_change_runs_the_tests_again() {
    let t = tree();
    t.central(POLICY);
    let sources = t.sources(None);
    let (_, first) = cache::load_with(&sources, &t.ctx(), Some(&t.cache)).unwrap();
    assert_eq!(first, CacheStatus::Rebuilt);
    assert_eq!(cache_files(&t.cache, "tests-"), 1);
    let (hit, second) = cache::load_with(&sources, &t.ctx(), Some(&t.cache)).unwrap();
    assert_eq!(second, CacheStatus::Hit);
    assert_eq!(hit.tests().len(), 5);
    assert_eq!(
        hit.tests(),
        Policy::load(&sources, &t.ctx()).unwrap().tests(),
        "the cached tests are the tests of the files"
    );
    // Another working directory runs them again there and keeps its own pass.
    let other = Context::new(&t.home, &t.home).unwrap();
    cache::load_with(&sources, &other, Some(&t.cache)).unwrap();
    assert_eq!(cache_files(&t.cache, "tests-"), 2);
    // A change to a rule that breaks a test fails the load, cold and warm.
    t.central(&POLICY.replace("deny: ['^git push( .*)? -f( |$)']", "deny: []"));
    for _ in 0..2 {
        let err = cache::load_with(&sources, &t.ctx(), Some(&t.cache)).unwrap_err();
        assert!(
            err.to_string()
                .contains("the command `git push -f origin main` should be deny but is allow"),
            "{err}"
        );
    }
    // A file without tests reads no test cache file and writes none.
    t.central("permissions:\n  commands:\n    allow: ['^ls( |$)']\n");
    cache::load_with(&sources, &t.ctx(), Some(&t.cache)).unwrap();
    assert_eq!(cache_files(&t.cache, "tests-"), 2);
}

#[test]
fn tests_judge_the_rules_also_when_the_sandbox_is_off() {
    let t = tree();
    t.central(&POLICY.replace("permissions:\n", "permissions:\n  sandbox: false\n"));
    let sources = t.sources(None);
    let policy = Policy::load(&sources, &t.ctx()).unwrap();
    assert!(!policy.settings().sandbox);
    let mut off = sources.clone();
    off.no_sandbox = true;
    t.central(POLICY);
    let policy = cache::load_with(&off, &t.ctx(), Some(&t.cache)).unwrap().0;
    let call = sandgate_policy::ToolCall::new(
        "exec_run",
        serde_json::json!({"command": "git push -f origin main"}),
    );
    assert_eq!(policy.evaluate(&call, &t.ctx()).verdict, Verdict::Allow);
    assert_eq!(
        policy.evaluate_rules(&call, &t.ctx()).verdict,
        Verdict::Deny
    );
}
