//! The real Codex CLI (`codex exec`), with `sandgate hook codex` installed by
//! `sandgate hook install codex`, against a scripted model on 127.0.0.1.
//! How to run one case: see `agents_common/mod.rs`.
//!
//! Codex runs a user hook only once it is trusted. The cases about what the
//! hook decides pass `--dangerously-bypass-hook-trust`; the install cases run
//! without it.

mod agents_common;

use agents_common::{Agent, Mode, RunOpts, Script, Step, Tree};

fn tree() -> Option<Tree> {
    Tree::new(Agent::Codex)
}

/// Run the installed hook without Codex's trust review.
fn hooked(mode: Mode) -> RunOpts {
    RunOpts::mode(mode).arg("--dangerously-bypass-hook-trust")
}

/// The allowed command runs, the denied one does not and the model is told
/// which rule denied it, in the default sandbox and with the bypass flag.
#[test]
fn commands_allowed_and_denied() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    for mode in [Mode::Default, Mode::Bypass] {
        let _ = std::fs::remove_file(t.work.join("allowed.txt"));
        let run = t.run(
            &Script::new(vec![
                Step::shell(Agent::Codex, "touch allowed.txt"),
                Step::shell(Agent::Codex, "touch denied.txt"),
            ]),
            &hooked(mode),
        );
        assert!(run.status.success(), "{}", run.describe());
        assert!(
            t.work.join("allowed.txt").exists(),
            "{mode:?}: {}",
            run.describe()
        );
        assert!(
            !t.work.join("denied.txt").exists(),
            "{mode:?}: {}",
            run.describe()
        );
        let results = run.tool_results();
        assert_eq!(results.len(), 2, "{}", run.describe());
        assert!(
            results[1].contains("sandgate") && results[1].contains("^touch denied"),
            "the model is told which rule denied it: {}",
            results[1]
        );
    }
    let allowed = t.audit_for("touch allowed.txt");
    let denied = t.audit_for("touch denied.txt");
    assert_eq!(allowed.len(), 2, "{:#?}", t.audit());
    assert_eq!(denied.len(), 2, "{:#?}", t.audit());
    assert!(allowed
        .iter()
        .all(|r| r["verdict"] == "allow" && r["surface"] == "hook codex"));
    assert!(denied
        .iter()
        .all(|r| r["verdict"] == "deny" && r["surface"] == "hook codex"));
}

/// Control: without the hook, the bypass flag runs the denied command (so the
/// test above can fail).
#[test]
fn without_hook_the_denied_command_runs() {
    let Some(t) = tree() else { return };
    let run = t.run(
        &Script::new(vec![Step::shell(Agent::Codex, "touch denied.txt")]),
        &RunOpts::mode(Mode::Bypass),
    );
    assert!(t.work.join("denied.txt").exists(), "{}", run.describe());
}
