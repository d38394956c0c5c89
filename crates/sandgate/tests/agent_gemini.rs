//! The real Gemini CLI, headless, with `sandgate hook gemini` installed by
//! `sandgate hook install gemini`, against a scripted model on 127.0.0.1.
//! How to run one case: see `agents_common/mod.rs`.
//!
//! Headless, Gemini offers its shell tool only with `--yolo` ([`Mode::Bypass`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

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
    t.assert_touches(&run, 3, "bypass");
    let results = run.tool_results();
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

/// Let Gemini's own workspace check pass the whole tree, so that sandgate is
/// what decides about paths outside the project.
fn wide(t: &Tree, mode: Mode) -> RunOpts {
    RunOpts::mode(mode)
        .arg("--include-directories")
        .arg(t.root.to_str().unwrap())
}

/// Writes through `write_file` and `replace`: inside the project they land;
/// outside it (no rule: `hooks.gemini.ask` denies) and into `~/.ssh` (the
/// floor) nothing changes, with `auto_edit` and with `--yolo`.
#[test]
fn writes_inside_and_outside() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    let keys = t.home.join(".ssh/authorized_keys");
    let existing = t.outside.join("existing.txt");
    std::fs::write(&existing, "old text\n").unwrap();
    for (i, mode) in [Mode::Default, Mode::Bypass].into_iter().enumerate() {
        let inside = t.work.join(format!("inside{i}.txt"));
        let outside = t.outside.join(format!("outside{i}.txt"));
        let run = t.run(
            &Script::new(vec![
                Step::call("write_file", json!({"file_path": inside, "content": "in\n"})),
                Step::call("write_file", json!({"file_path": outside, "content": "out\n"})),
                Step::call("write_file", json!({"file_path": keys, "content": "ssh-ed25519 AAAA k\n"})),
                Step::call(
                    "replace",
                    json!({"file_path": existing, "old_string": "old text", "new_string": "new text", "instruction": "change it"}),
                ),
            ]),
            &wide(&t, mode),
        );
        assert!(run.status.success(), "{}", run.describe());
        assert_eq!(run.tool_results().len(), 4, "{}", run.describe());
        assert!(inside.exists(), "{mode:?}: {}", run.describe());
        assert!(!outside.exists(), "{mode:?}: {}", run.describe());
        assert!(!keys.exists(), "{mode:?}: {}", run.describe());
        assert_eq!(
            std::fs::read_to_string(&existing).unwrap(),
            "old text\n",
            "{}",
            run.describe()
        );
    }
    let floor = t.audit_for(&keys.to_string_lossy());
    assert_eq!(floor.len(), 2, "{:#?}", t.audit());
    assert!(floor.iter().all(|r| r["verdict"] == "deny"), "{floor:#?}");
}

/// `grep_search` in `~/.ssh`, and `~` itself: the model never receives a line
/// of `~/.ssh/id_rsa`.
#[test]
fn floor_read_through_grep_search() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    let run = t.run(
        &Script::new(vec![
            Step::call(
                "grep_search",
                json!({"pattern": "SECRET", "dir_path": t.home.join(".ssh")}),
            ),
            Step::call(
                "grep_search",
                json!({"pattern": "SECRET", "dir_path": t.home}),
            ),
        ]),
        &wide(&t, Mode::Bypass),
    );
    assert!(run.status.success(), "{}", run.describe());
    assert_eq!(run.tool_results().len(), 2, "{}", run.describe());
    t.assert_secret_kept(&run);
}

/// Control: with no hook, `grep_search` hands the model the key's line.
#[test]
fn grep_search_without_hook_reaches_the_model() {
    let Some(t) = tree() else { return };
    let run = t.run(
        &Script::new(vec![Step::call(
            "grep_search",
            json!({"pattern": "SECRET", "dir_path": t.home.join(".ssh")}),
        )]),
        &wide(&t, Mode::Bypass),
    );
    assert!(run.model_saw(&t.secret), "{}", run.describe());
}

/// `run_shell_command` with `dir_path: ~/.ssh` is judged in that directory: a
/// relative write of `authorized_keys` is the floor's, even when the policy
/// allows the command; a relative read of `id_rsa` no rule allows is blocked.
#[test]
fn shell_dir_path_is_the_working_directory() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    t.write_policy(&agents_common::POLICY.replace(
        "^touch allowed",
        "^echo k > authorized_keys$|^touch allowed",
    ));
    let ssh = t.home.join(".ssh");
    let run = t.run(
        &Script::new(vec![
            Step::call(
                "run_shell_command",
                json!({"command": "echo k > authorized_keys", "dir_path": ssh}),
            ),
            Step::call(
                "run_shell_command",
                json!({"command": "cat id_rsa", "dir_path": ssh}),
            ),
        ]),
        &wide(&t, Mode::Bypass),
    );
    assert!(run.status.success(), "{}", run.describe());
    let results = run.tool_results();
    assert_eq!(results.len(), 2, "{}", run.describe());
    assert!(!ssh.join("authorized_keys").exists(), "{}", run.describe());
    assert!(results[0].contains("built-in floor"), "{}", results[0]);
    t.assert_secret_kept(&run);
}

/// With `cat` allowed, `cat ~/.ssh/id_rsa`, and `cat id_rsa` in `dir_path:
/// ~/.ssh`, still never hand the model the key: the floor is not a rule an
/// allow can override.
#[test]
fn floor_read_through_an_allowed_command() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    t.write_policy(&agents_common::POLICY.replace("^touch allowed", "^cat |^touch allowed"));
    let ssh = t.home.join(".ssh");
    let run = t.run(
        &Script::new(vec![
            Step::shell(Agent::Gemini, "cat ~/.ssh/id_rsa"),
            Step::call(
                "run_shell_command",
                json!({"command": "cat id_rsa", "dir_path": ssh}),
            ),
        ]),
        &wide(&t, Mode::Bypass),
    );
    assert!(run.status.success(), "{}", run.describe());
    assert_eq!(run.tool_results().len(), 2, "{}", run.describe());
    t.assert_secret_kept(&run);
}

/// `sandgate mcp` in `~/.gemini/settings.json` as the README says: `exec_run`
/// runs the allowed command and not the denied one; `file_read` denies
/// `~/.ssh/id_rsa` and gives the model the lines of a project file.
#[test]
fn mcp_file_read_and_exec_run() {
    let Some(t) = tree() else { return };
    t.register_mcp();
    std::fs::write(t.work.join("notes.txt"), "first line\nNOTES-MARKER-LINE\n").unwrap();
    let run = t.run(
        &t.mcp_floor_and_exec(vec![
            t.mcp_call("file_read", json!({"path": t.work.join("notes.txt")}))
        ]),
        &RunOpts::mode(Mode::Bypass),
    );
    t.assert_mcp_floor_and_exec(&run, &["deny", "allow", "deny", "allow"]);
    let results = run.tool_results();
    assert!(results[3].contains("NOTES-MARKER-LINE"), "{}", results[3]);
}

/// `sandgate hook install gemini` then `uninstall`: in between the calls are
/// gated, after it the settings are as they were and nothing is gated.
#[test]
fn install_then_uninstall_restores_the_settings() {
    let Some(t) = tree() else { return };
    let file = t.settings_file();
    let original = std::fs::read_to_string(&file).unwrap();
    t.install_hook(&[]);
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("hook gemini"));
    let script = Script::new(vec![Step::shell(Agent::Gemini, "touch denied.txt")]);
    let run = t.run(&script, &RunOpts::mode(Mode::Bypass));
    assert!(!t.work.join("denied.txt").exists(), "{}", run.describe());
    let out = t.sandgate(&["hook", "uninstall", "gemini"]);
    assert!(out.status.success(), "{out:?}");
    let parsed = |s: &str| {
        serde_json::from_str::<serde_json::Value>(s)
            .unwrap()
            .to_string()
    };
    assert_eq!(
        parsed(&std::fs::read_to_string(&file).unwrap()),
        parsed(&original)
    );
    let run = t.run(&script, &RunOpts::mode(Mode::Bypass));
    assert!(t.work.join("denied.txt").exists(), "{}", run.describe());
}

/// A settings file with `//` comments (which Gemini CLI reads): install keeps
/// them and gates the calls, uninstall gives the file back byte for byte.
#[test]
fn install_into_settings_with_comments() {
    let Some(t) = tree() else { return };
    let file = t.settings_file();
    let original = "{\n  // how Gemini CLI signs in\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n  /* the look */\n  \"ui\": {\"theme\": \"Default\"}\n}\n";
    std::fs::write(&file, original).unwrap();
    t.install_hook(&[]);
    let installed = std::fs::read_to_string(&file).unwrap();
    assert!(
        installed.contains("// how Gemini CLI signs in") && installed.contains("/* the look */"),
        "{installed}"
    );
    let run = t.run(
        &Script::new(vec![Step::shell(Agent::Gemini, "touch denied.txt")]),
        &RunOpts::mode(Mode::Bypass),
    );
    assert!(run.status.success(), "{}", run.describe());
    assert!(!t.work.join("denied.txt").exists(), "{}", run.describe());
    let out = t.sandgate(&["hook", "uninstall", "gemini"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

/// The audit log says how each ASK was settled: `hooks.gemini.ask` denied it.
#[test]
fn audit_says_how_an_ask_was_settled() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    let run = t.run(
        &Script::new(vec![Step::shell(Agent::Gemini, "touch unmatched.txt")]),
        &RunOpts::mode(Mode::Bypass),
    );
    assert_eq!(run.tool_results().len(), 1, "{}", run.describe());
    assert!(!t.work.join("unmatched.txt").exists());
    let audit = t.audit();
    let asks = agents_common::assert_asks_settled(&audit);
    assert_eq!(asks.len(), 1, "{audit:#?}");
    assert_eq!(asks[0]["answered_by"], "setting", "{audit:#?}");
    assert!(
        asks[0]["became"]
            .as_str()
            .unwrap_or_default()
            .contains("hooks.gemini.ask"),
        "{audit:#?}"
    );
}

/// Gemini CLI confined by `sandgate run` works as without it, and cannot
/// rewrite its own settings (see `Tree::assert_settings_held_when_confined`).
#[test]
fn confined_by_sandgate_run_it_cannot_rewrite_its_settings() {
    let Some(t) = tree() else { return };
    t.assert_settings_held_when_confined(RunOpts::mode(Mode::Bypass));
}
