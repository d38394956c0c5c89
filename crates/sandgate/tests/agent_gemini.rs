//! The real Gemini CLI, headless, with `sandgate hook gemini` installed by
//! `sandgate hook install gemini`, against a scripted model on 127.0.0.1.
//! How to run one case: see `agents_common/mod.rs`.
//!
//! Headless, Gemini offers its shell tool only with `--yolo` ([`Mode::Bypass`]).

mod agents_common;

use agents_common::{Agent, Mode, RunOpts, Script, Step, Tree};
use serde_json::json;

fn tree() -> Option<Tree> {
    Tree::new(Agent::Gemini)
}

/// The allowed command runs; the denied and the unmatched ones do not
/// (`hooks.gemini.ask` is `deny` by default), and the model is told why.
#[test]
fn commands_allowed_denied_unmatched() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    let run = t.run(
        &Script::new(vec![
            Step::shell(Agent::Gemini, "touch allowed.txt"),
            Step::shell(Agent::Gemini, "touch denied.txt"),
            Step::shell(Agent::Gemini, "touch unmatched.txt"),
        ]),
        &RunOpts::mode(Mode::Bypass),
    );
    assert!(run.status.success(), "{}", run.describe());
    assert!(t.work.join("allowed.txt").exists(), "{}", run.describe());
    assert!(!t.work.join("denied.txt").exists(), "{}", run.describe());
    assert!(!t.work.join("unmatched.txt").exists(), "{}", run.describe());
    let results = run.tool_results();
    assert_eq!(results.len(), 3, "{}", run.describe());
    assert!(
        results[1].contains("sandgate") && results[1].contains("^touch denied"),
        "the model is told which rule denied it: {}",
        results[1]
    );
    assert!(
        results[2].contains("sandgate"),
        "the model is told sandgate blocked the unmatched command: {}",
        results[2]
    );
    assert_eq!(t.audit_for("touch allowed.txt")[0]["verdict"], "allow");
    assert_eq!(t.audit_for("touch denied.txt")[0]["verdict"], "deny");
    assert_eq!(
        t.audit_for("touch unmatched.txt").len(),
        1,
        "{:#?}",
        t.audit()
    );
    for r in t.audit() {
        assert_eq!(r["surface"], "hook gemini", "{r}");
    }
}

/// `~/.ssh/id_rsa` through `read_file` (default mode and yolo) and through the
/// shell: the model never receives its content.
#[test]
fn floor_read_through_read_file_and_shell() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    let key = t.home.join(".ssh/id_rsa");
    let key = key.to_str().unwrap();
    let read = || Step::call("read_file", json!({"file_path": key}));
    let run = t.run(
        &Script::new(vec![read()]),
        &RunOpts::mode(Mode::Default)
            .arg("--include-directories")
            .arg(t.home.to_str().unwrap()),
    );
    assert!(run.status.success(), "{}", run.describe());
    assert_eq!(run.tool_results().len(), 1, "{}", run.describe());
    t.assert_secret_kept(&run);
    let run = t.run(
        &Script::new(vec![
            read(),
            Step::shell(Agent::Gemini, "cat ~/.ssh/id_rsa"),
        ]),
        &RunOpts::mode(Mode::Bypass)
            .arg("--include-directories")
            .arg(t.home.to_str().unwrap()),
    );
    assert!(run.status.success(), "{}", run.describe());
    assert_eq!(run.tool_results().len(), 2, "{}", run.describe());
    t.assert_secret_kept(&run);
    let reads = t.audit_for(key);
    assert_eq!(reads.len(), 2, "{:#?}", t.audit());
    assert!(reads.iter().all(|r| r["verdict"] == "deny"), "{reads:#?}");
}

/// Control: with no hook, yolo reads `~/.ssh/id_rsa` and the model receives it.
#[test]
fn floor_read_without_hook_reaches_the_model() {
    let Some(t) = tree() else { return };
    let run = t.run(
        &Script::new(vec![Step::shell(Agent::Gemini, "cat ~/.ssh/id_rsa")]),
        &RunOpts::mode(Mode::Bypass),
    );
    assert!(run.model_saw(&t.secret), "{}", run.describe());
}
