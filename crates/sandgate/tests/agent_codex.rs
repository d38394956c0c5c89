//! The real Codex CLI (`codex exec`), with `sandgate hook codex` installed by
//! `sandgate hook install codex`, against a scripted model on 127.0.0.1.
//! How to run one case: see `agents_common/mod.rs`.
//!
//! Codex runs a user hook only once it is trusted. The cases about what the
//! hook decides pass `--dangerously-bypass-hook-trust`; the install cases run
//! without it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

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
        t.assert_touches(&run, 2, &format!("{mode:?}"));
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
    let run = t.run(&t.mcp_floor_and_exec(vec![]), &RunOpts::mode(Mode::Default));
    t.assert_mcp_floor_and_exec(&run, &["deny", "allow", "deny"]);
}

/// `file_read` and `file_head_tail` through Codex give the model the lines.
#[test]
fn mcp_file_read_gives_the_model_the_lines() {
    let Some(t) = tree() else { return };
    t.register_mcp();
    std::fs::write(t.work.join("notes.txt"), "first line\nNOTES-MARKER-LINE\n").unwrap();
    let run = t.run(
        &Script::new(vec![
            t.mcp_call("file_read", json!({"path": t.work.join("notes.txt")})),
            t.mcp_call("file_head_tail", json!({"path": t.work.join("notes.txt")})),
        ]),
        &RunOpts::mode(Mode::Default),
    );
    let results = run.tool_results();
    assert_eq!(results.len(), 2, "{}", run.describe());
    for r in &results {
        assert!(
            r.contains("NOTES-MARKER-LINE"),
            "the model gets the lines: {r}"
        );
    }
}

/// A command no rule decides does not run, in either mode, and the model is
/// told which rule would allow it.
#[test]
fn unmatched_command_does_not_run() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    for mode in [Mode::Default, Mode::Bypass] {
        let run = t.run(
            &Script::new(vec![Step::shell(Agent::Codex, "touch unmatched.txt")]),
            &hooked(mode),
        );
        assert!(
            !t.work.join("unmatched.txt").exists(),
            "{mode:?}: {}",
            run.describe()
        );
        let results = run.tool_results();
        assert_eq!(results.len(), 1, "{}", run.describe());
        assert!(results[0].contains("sandgate"), "{}", results[0]);
    }
    assert_eq!(
        t.audit_for("touch unmatched.txt").len(),
        2,
        "{:#?}",
        t.audit()
    );
}

/// `~/.ssh/id_rsa` through the shell never reaches the model, in either mode.
#[test]
fn floor_read_through_the_shell() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    for mode in [Mode::Default, Mode::Bypass] {
        let run = t.run(
            &Script::new(vec![
                Step::shell(Agent::Codex, "cat ~/.ssh/id_rsa"),
                Step::shell(
                    Agent::Codex,
                    &format!("cd {} && cat id_rsa", t.home.join(".ssh").display()),
                ),
            ]),
            &hooked(mode),
        );
        assert_eq!(run.tool_results().len(), 2, "{}", run.describe());
        t.assert_secret_kept(&run);
    }
    for r in t.audit_for("id_rsa") {
        assert_ne!(r["verdict"], "allow", "{r}");
    }
}

/// With `cat` allowed, `cat ~/.ssh/id_rsa` still never hands the model the
/// key, in either mode: the floor is not a rule an allow can override.
#[test]
fn floor_read_through_an_allowed_command() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    t.write_policy(&agents_common::POLICY.replace("^touch allowed", "^cat |^touch allowed"));
    for mode in [Mode::Default, Mode::Bypass] {
        let run = t.run(
            &Script::new(vec![
                Step::shell(Agent::Codex, "cat ~/.ssh/id_rsa"),
                Step::shell(Agent::Codex, "cat notes.txt ../home/.ssh/id_rsa"),
            ]),
            &hooked(mode),
        );
        assert_eq!(run.tool_results().len(), 2, "{}", run.describe());
        t.assert_secret_kept(&run);
    }
    let reads = t.audit_for("id_rsa");
    assert_eq!(reads.len(), 4, "{:#?}", t.audit());
    assert!(reads.iter().all(|r| r["verdict"] == "deny"), "{reads:#?}");
}

/// A patch, as Codex's `apply_patch` takes it.
fn patch(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

/// `apply_patch` (offered to models Codex knows): each file a patch adds,
/// updates, deletes or moves to is judged. Inside the project it lands;
/// outside it, and into `~/.ssh`, nothing changes.
#[test]
fn apply_patch_is_gated() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    let existing = t.outside.join("existing.txt");
    std::fs::write(&existing, "old\n").unwrap();
    std::fs::write(t.work.join("moved.txt"), "move me\n").unwrap();
    let keys = t.home.join(".ssh/authorized_keys");
    let run = t.run(
        &Script::new(vec![
            Step::custom("apply_patch", &patch("*** Add File: inside.txt\n+in\n")),
            Step::custom(
                "apply_patch",
                &patch(&format!(
                    "*** Add File: {}\n+ssh-ed25519 AAAA k\n",
                    keys.display()
                )),
            ),
            Step::custom(
                "apply_patch",
                &patch(&format!(
                    "*** Add File: {}\n+out\n",
                    t.outside.join("added.txt").display()
                )),
            ),
            Step::custom(
                "apply_patch",
                &patch(&format!(
                    "*** Update File: {}\n@@\n-old\n+new\n",
                    existing.display()
                )),
            ),
            Step::custom(
                "apply_patch",
                &patch(&format!("*** Delete File: {}\n", existing.display())),
            ),
            Step::custom(
                "apply_patch",
                &patch(&format!(
                    "*** Update File: moved.txt\n*** Move to: {}\n@@\n-move me\n+moved\n",
                    t.outside.join("moved.txt").display()
                )),
            ),
        ]),
        &hooked(Mode::Bypass).model("gpt-5.5"),
    );
    assert_eq!(run.tool_results().len(), 6, "{}", run.describe());
    assert!(t.work.join("inside.txt").exists(), "{}", run.describe());
    assert!(!keys.exists(), "{}", run.describe());
    assert!(!t.outside.join("added.txt").exists(), "{}", run.describe());
    assert_eq!(
        std::fs::read_to_string(&existing).unwrap(),
        "old\n",
        "{}",
        run.describe()
    );
    assert!(!t.outside.join("moved.txt").exists(), "{}", run.describe());
    assert!(t.work.join("moved.txt").exists(), "{}", run.describe());
    let keys = keys.to_string_lossy();
    let floor = t.audit_for(&keys);
    assert!(
        !floor.is_empty() && floor.iter().all(|r| r["verdict"] == "deny"),
        "{:#?}",
        t.audit()
    );
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

/// `sandgate hook install codex --trust`: Codex runs the hook with no review
/// and no bypass flag; `hook status` says so; `uninstall` takes the hook and
/// its trust entry away, leaving `config.toml` as it was.
#[test]
fn install_with_trust_then_uninstall() {
    let Some(t) = tree() else { return };
    let config = t.codex_home().join("config.toml");
    let original = std::fs::read_to_string(&config).unwrap();
    t.install_hook(&["--trust"]);
    let status = t.sandgate(&["hook", "status", "codex"]);
    let status_text = String::from_utf8_lossy(&status.stdout).to_lowercase();
    assert!(
        status.status.success() && status_text.contains("trusted"),
        "{status:?}"
    );
    let script = Script::new(vec![Step::shell(Agent::Codex, "touch denied.txt")]);
    let run = t.run(&script, &RunOpts::mode(Mode::Bypass));
    assert!(!t.work.join("denied.txt").exists(), "{}", run.describe());
    assert_eq!(t.audit_for("touch denied.txt").len(), 1, "{:#?}", t.audit());
    let out = t.sandgate(&["hook", "uninstall", "codex"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
    let hooks = std::fs::read_to_string(t.settings_file()).unwrap_or_default();
    assert!(!hooks.contains("sandgate"), "{hooks}");
    let run = t.run(&script, &RunOpts::mode(Mode::Bypass));
    assert!(t.work.join("denied.txt").exists(), "{}", run.describe());
    // A second install adds no second entry; uninstall then removes them all.
    t.install_hook(&["--trust"]);
    let once = std::fs::read_to_string(&config)
        .unwrap()
        .matches("trusted_hash")
        .count();
    assert!(once >= 1);
    t.install_hook(&["--trust"]);
    let text = std::fs::read_to_string(&config).unwrap();
    assert_eq!(text.matches("trusted_hash").count(), once, "{text}");
    let hooks = std::fs::read_to_string(t.settings_file()).unwrap();
    assert_eq!(hooks.matches("hook codex").count(), once, "{hooks}");
    let out = t.sandgate(&["hook", "uninstall", "codex"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
}

/// Without `--trust`, install says that Codex will not run the hook until it
/// is reviewed, and how; `hook status` says it would not run.
#[test]
fn install_without_trust_says_the_hook_will_not_run() {
    let Some(t) = tree() else { return };
    let said = t.install_hook(&[]).to_lowercase();
    assert!(
        said.contains("--trust") && said.contains("review"),
        "{said}"
    );
    let status = t.sandgate(&["hook", "status", "codex"]);
    let text = String::from_utf8_lossy(&status.stdout).to_lowercase();
    assert!(
        text.contains("not trusted") || text.contains("untrusted"),
        "{status:?}"
    );
}

/// The audit log says how each ASK was settled: Codex CLI hooks cannot ask,
/// so the call was denied, and nobody answered.
#[test]
fn audit_says_how_an_ask_was_settled() {
    let Some(t) = tree() else { return };
    t.register_mcp();
    let outside = t.outside.join("notes.txt");
    std::fs::write(&outside, "outside\n").unwrap();
    let run = t.run(
        &Script::new(vec![t.mcp_call("file_read", json!({"path": outside}))]),
        &RunOpts::mode(Mode::Default),
    );
    assert_eq!(run.tool_results().len(), 1, "{}", run.describe());
    t.install_hook(&[]);
    let run = t.run(
        &Script::new(vec![Step::shell(Agent::Codex, "touch unmatched.txt")]),
        &hooked(Mode::Default),
    );
    assert_eq!(run.tool_results().len(), 1, "{}", run.describe());
    assert!(!t.work.join("unmatched.txt").exists());
    let audit = t.audit();
    let asks = agents_common::assert_asks_settled(&audit);
    assert_eq!(asks.len(), 2, "{audit:#?}");
    assert_eq!(asks[0]["surface"], "mcp", "{audit:#?}");
    assert_eq!(asks[1]["surface"], "hook codex", "{audit:#?}");
    assert!(
        asks[1]["became"]
            .as_str()
            .unwrap_or_default()
            .starts_with("denied"),
        "{audit:#?}"
    );
}

/// Codex CLI confined by `sandgate run` (without its own sandbox, which
/// cannot start inside sandgate's) works as without it, and cannot rewrite
/// its own hooks (see `Tree::assert_settings_held_when_confined`).
#[test]
fn confined_by_sandgate_run_it_cannot_rewrite_its_hooks() {
    let Some(t) = tree() else { return };
    t.assert_settings_held_when_confined(hooked(Mode::Bypass));
}
