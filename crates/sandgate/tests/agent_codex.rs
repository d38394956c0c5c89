//! The real Codex CLI (`codex exec`), with `sandgate hook codex` installed by
//! `sandgate hook install codex`, against a scripted model on 127.0.0.1.
//! How to run one case: see `agents_common/mod.rs`.
//!
//! Codex runs a user hook only once it is trusted. The cases about what the
//! hook decides pass `--dangerously-bypass-hook-trust`; the install cases run
//! without it.

mod agents_common;

use agents_common::{Agent, Mode, RunOpts, Script, Step, Tree};
use serde_json::json;

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

/// `sandgate mcp` in `config.toml` as the README says: `exec_run` runs the
/// allowed command and not the denied one; `file_read` denies `~/.ssh/id_rsa`.
#[test]
fn mcp_exec_run_and_floor_read() {
    let Some(t) = tree() else { return };
    t.register_mcp();
    let run = t.run(
        &Script::new(vec![
            t.mcp_call("file_read", json!({"path": t.home.join(".ssh/id_rsa")})),
            t.mcp_call("exec_run", json!({"command": "touch allowed.txt"})),
            t.mcp_call("exec_run", json!({"command": "touch denied.txt"})),
        ]),
        &RunOpts::mode(Mode::Default),
    );
    assert!(run.status.success(), "{}", run.describe());
    let results = run.tool_results();
    assert_eq!(results.len(), 3, "{}", run.describe());
    t.assert_secret_kept(&run);
    assert!(results[0].contains("built-in floor"), "{}", results[0]);
    assert!(t.work.join("allowed.txt").exists(), "{}", run.describe());
    assert!(!t.work.join("denied.txt").exists(), "{}", run.describe());
    assert!(results[2].contains("^touch denied"), "{}", results[2]);
    let mcp: Vec<_> = t
        .audit()
        .into_iter()
        .filter(|r| r["surface"] == "mcp")
        .collect();
    let verdicts: Vec<_> = mcp
        .iter()
        .map(|r| r["verdict"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(verdicts, ["deny", "allow", "deny"], "{mcp:#?}");
}

/// A patch, as Codex's `apply_patch` takes it.
fn patch(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

/// Control: with no hook, the same patch into `~/.ssh` lands (so the test
/// above can fail).
#[test]
fn apply_patch_without_hook_lands() {
    let Some(t) = tree() else { return };
    let keys = t.home.join(".ssh/authorized_keys");
    let run = t.run(
        &Script::new(vec![Step::custom(
            "apply_patch",
            &patch(&format!(
                "*** Add File: {}\n+ssh-ed25519 AAAA k\n",
                keys.display()
            )),
        )]),
        &RunOpts::mode(Mode::Bypass).model("gpt-5.5"),
    );
    assert!(keys.exists(), "{}", run.describe());
}
