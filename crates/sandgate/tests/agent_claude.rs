//! The real Claude Code, headless, with `sandgate hook claude` installed by
//! `sandgate hook install claude`, against a scripted model on 127.0.0.1.
//! How to run one case: see `agents_common/mod.rs`.

mod agents_common;

use agents_common::{Agent, Mode, RunOpts, Script, Step, Tree};
use serde_json::json;

fn tree() -> Option<Tree> {
    Tree::new(Agent::Claude)
}

/// The command sandgate allows runs; the denied and the unmatched ones do not,
/// and the model is told why.
#[test]
fn commands_allowed_denied_unmatched() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    let run = t.run(
        &Script::new(vec![
            Step::shell(Agent::Claude, "touch allowed.txt"),
            Step::shell(Agent::Claude, "touch denied.txt"),
            Step::shell(Agent::Claude, "touch unmatched.txt"),
        ]),
        &RunOpts::mode(Mode::Default),
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
    assert_eq!(t.audit_for("touch allowed.txt")[0]["verdict"], "allow");
    assert_eq!(t.audit_for("touch denied.txt")[0]["verdict"], "deny");
    assert_eq!(t.audit_for("touch unmatched.txt")[0]["verdict"], "ask");
    for r in t.audit() {
        assert_eq!(r["surface"], "hook claude", "{r}");
    }
}

/// Without the hook, Claude Code headless does not run `touch allowed.txt` by
/// itself: the allow above is sandgate's.
#[test]
fn without_hook_the_command_is_not_run() {
    let Some(t) = tree() else { return };
    let run = t.run(
        &Script::new(vec![Step::shell(Agent::Claude, "touch allowed.txt")]),
        &RunOpts::mode(Mode::Default),
    );
    assert!(!t.work.join("allowed.txt").exists(), "{}", run.describe());
    assert!(t.audit().is_empty());
}

/// `~/.ssh/id_rsa` through `Read` and through the shell: the model never
/// receives its content, in the default mode and with bypassPermissions.
#[test]
fn floor_read_is_denied_in_every_mode() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    let key = t.home.join(".ssh/id_rsa");
    let key = key.to_str().unwrap();
    for mode in [Mode::Default, Mode::Bypass] {
        let run = t.run(
            &Script::new(vec![
                Step::call("Read", json!({"file_path": key})),
                Step::shell(Agent::Claude, "cat ~/.ssh/id_rsa"),
                Step::shell(
                    Agent::Claude,
                    &format!("cd {} && cat id_rsa", t.home.join(".ssh").display()),
                ),
            ]),
            &RunOpts::mode(mode),
        );
        assert!(run.status.success(), "{}", run.describe());
        assert_eq!(run.tool_results().len(), 3, "{mode:?}: {}", run.describe());
        t.assert_secret_kept(&run);
    }
    let reads = t.audit_for(key);
    assert_eq!(reads.len(), 2, "{:#?}", t.audit());
    for r in reads {
        assert_eq!(r["verdict"], "deny", "{r}");
    }
    for r in t.audit_for("id_rsa") {
        assert_ne!(r["verdict"], "allow", "{r}");
    }
}

/// Control: with the hook not installed and bypassPermissions, the same read
/// does reach the model (so the test above can fail).
#[test]
fn floor_read_without_hook_reaches_the_model() {
    let Some(t) = tree() else { return };
    let run = t.run(
        &Script::new(vec![Step::shell(Agent::Claude, "cat ~/.ssh/id_rsa")]),
        &RunOpts::mode(Mode::Bypass),
    );
    assert!(run.model_saw(&t.secret), "{}", run.describe());
}
