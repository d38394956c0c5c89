//! The hook behaviours the real agents depend on, run in the real Claude Code,
//! Codex CLI and Gemini CLI (see `agents_common` for how they are driven):
//! Codex's `apply_patch` and an unmatched command under approval policy
//! `never`, with the hook trusted by `sandgate hook install codex --trust`
//! (no trust bypass); Gemini's `grep_search` and `run_shell_command`'s
//! `dir_path`; Claude Code's `hooks.claude.ask: defer` leaving only edits in
//! its asking modes to it (a read-only command, or an edit under
//! `acceptEdits`, which it would run unasked, is asked), and an ASK under
//! `bypassPermissions` that still does not run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agents_common;

use agents_common::{Agent, Mode, RunOpts, Script, Step, Tree};
use serde_json::json;

#[test]
fn codex_trusted_hook_gates_apply_patch_and_denies_an_ask() {
    let Some(t) = Tree::new(Agent::Codex) else {
        return;
    };
    let out = t.install_hook(&["--trust"]);
    assert!(out.contains("trusting in"), "{out}");
    let status = t.sandgate(&["hook", "status", "codex"]);
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stdout)
    );
    let keys = t.home.join(".ssh/authorized_keys");
    let inside = t.work.join("patched.txt");
    let unasked = t.outside.join("pwned");
    let run = t.run(
        &Script::new(vec![
            Step::custom(
                "apply_patch",
                &format!(
                    "*** Begin Patch\n*** Add File: {}\n+fine\n*** Add File: {}\n+ssh-ed25519 AAAA k\n*** End Patch\n",
                    inside.display(),
                    keys.display()
                ),
            ),
            Step::shell(
                Agent::Codex,
                &format!("python3 -c \"open('{}','w').write('x')\"", unasked.display()),
            ),
        ]),
        &RunOpts::mode(Mode::Bypass).model("gpt-5.5"),
    );
    assert!(!keys.exists(), "the patch landed\n{}", run.describe());
    assert!(
        !inside.exists(),
        "a patch with one denied file is denied whole\n{}",
        run.describe()
    );
    assert!(!unasked.exists(), "an ASK ran unasked\n{}", run.describe());
    let audit = t.audit();
    assert!(
        audit.iter().any(|l| l["tool"] == "file_write"
            && l["subject"] == keys.to_string_lossy().as_ref()
            && l["verdict"] == "deny"),
        "{audit:?}"
    );
    let asked = t.audit_for("pwned");
    assert!(
        asked
            .iter()
            .any(|l| l["verdict"] == "ask" && l["became"] == "denied: Codex CLI hooks cannot ask"),
        "{asked:?}"
    );
    assert!(
        run.model_saw("commands.allow"),
        "the model is told the rule that would allow it\n{}",
        run.describe()
    );

    // Uninstall: the hook and its trust go; nothing is gated any more.
    let out = t.sandgate(&["hook", "uninstall", "codex"]);
    assert!(out.status.success());
    let status = t.sandgate(&["hook", "status", "codex"]);
    assert_eq!(status.status.code(), Some(1));
}

#[test]
fn gemini_grep_search_and_dir_path_are_gated() {
    let Some(t) = Tree::new(Agent::Gemini) else {
        return;
    };
    t.install_hook(&[]);
    let keys = t.home.join(".ssh/authorized_keys");
    let run = t.run(
        &Script::new(vec![
            Step::call(
                "grep_search",
                json!({"pattern": "SANDGATE-E2E-SECRET", "dir_path": t.home.join(".ssh")}),
            ),
            Step::call(
                "run_shell_command",
                json!({"command": "echo k > authorized_keys", "dir_path": t.home.join(".ssh")}),
            ),
        ]),
        &RunOpts::mode(Mode::Bypass)
            .arg("--include-directories")
            .arg(t.home.to_str().unwrap()),
    );
    t.assert_secret_kept(&run);
    assert!(!keys.exists(), "the write landed\n{}", run.describe());
    let audit = t.audit();
    assert!(
        audit
            .iter()
            .any(|l| l["tool"] == "file_grep" && l["verdict"] == "deny"),
        "{audit:?}"
    );
    assert!(
        audit
            .iter()
            .any(|l| l["tool"] == "exec_run" && l["verdict"] != "allow"),
        "{audit:?}"
    );
}

/// `hooks.claude.ask: defer` leaves an ASK to Claude Code only where Claude
/// Code surely asks itself: an edit in its `default` mode. A command is
/// never left to it (it runs the ones it deems read-only unasked, in every
/// mode), nor is an edit under `acceptEdits` (accepted unasked). Each
/// attempt is first shown to go through without the hook.
#[test]
fn claude_defer_leaves_only_edits_in_asking_modes_to_claude() {
    let Some(t) = Tree::new(Agent::Claude) else {
        return;
    };
    // In the project, where Claude Code acts without asking, but outside
    // what the policy allows: an ASK.
    t.write_policy(
        "permissions:\n  paths:\n    allow: [\"{work}/src/**\"]\n  commands:\n    allow: [\"^echo \"]\n",
    );
    let notes = t.work.join("notes.txt");
    std::fs::write(&notes, "NOTES-CONTENT\n").unwrap();
    let made = t.work.join("made.txt");
    let read = Script::new(vec![Step::shell(Agent::Claude, "cat notes.txt")]);
    let write = Script::new(vec![Step::call(
        "Write",
        json!({"file_path": made, "content": "written\n"}),
    )]);

    // Without the hook, Claude Code runs both unasked.
    let run = t.run(&read, &RunOpts::mode(Mode::Default));
    assert!(run.model_saw("NOTES-CONTENT"), "{}", run.describe());
    let run = t.run(&write, &RunOpts::mode(Mode::AcceptEdits));
    assert!(made.exists(), "{}", run.describe());
    std::fs::remove_file(&made).unwrap();

    t.install_hook(&[]);
    for mode in [Mode::Default, Mode::AcceptEdits] {
        let run = t.run(&read, &RunOpts::mode(mode));
        assert!(
            !run.model_saw("NOTES-CONTENT"),
            "{mode:?}: {}",
            run.describe()
        );
    }
    let run = t.run(&write, &RunOpts::mode(Mode::AcceptEdits));
    assert!(!made.exists(), "{}", run.describe());
    let audit = t.audit_for("notes.txt");
    assert!(
        !audit.is_empty() && audit.iter().all(|l| l["became"] == "asked in the agent"),
        "{audit:?}"
    );

    // An edit in the default mode is Claude Code's to ask about, and
    // headless it refuses it.
    let run = t.run(&write, &RunOpts::mode(Mode::Default));
    assert!(!made.exists(), "{}", run.describe());
    assert!(
        t.audit_for("made.txt")
            .iter()
            .any(|l| l["became"] == "deferred to the agent's own permissions"),
        "{:?}",
        t.audit()
    );

    // Under bypassPermissions an ASK is still an ASK, which headless blocks.
    let run = t.run(&write, &RunOpts::mode(Mode::Bypass));
    assert!(!made.exists(), "{}", run.describe());
}

/// `sandgate grant --write .claude/settings.local.json` works in the real
/// Claude Code: a granted command runs headless without a prompt, one outside
/// the grant does not; before the trust, grant says the rules apply only to
/// headless runs, and indeed they do.
#[test]
fn claude_grant_rules_apply_once_the_folder_is_trusted() {
    let Some(t) = Tree::new(Agent::Claude) else {
        return;
    };
    std::fs::write(
        t.work.join("loop.yaml"),
        "providers:\n  providers:\n    - command: python3\n",
    )
    .unwrap();
    let out = t.sandgate(&[
        "grant",
        "loop.yaml",
        "--write",
        ".claude/settings.local.json",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("trusts the folder"), "{err}");
    let granted = t.work.join("granted.txt");
    let other = t.work.join("other.txt");
    let script = Script::new(vec![
        Step::shell(
            Agent::Claude,
            &format!(
                "python3 -c \"open('{}','w').write('x')\"",
                granted.display()
            ),
        ),
        Step::shell(
            Agent::Claude,
            &format!(
                "node -e \"require('fs').writeFileSync('{}','x')\"",
                other.display()
            ),
        ),
    ]);
    let run = t.run(&script, &RunOpts::mode(Mode::Default));
    // Claude Code 2.1.332 applies project settings headless in a folder it
    // has not trusted too, as grant says.
    assert!(granted.exists(), "untrusted folder: {}", run.describe());
    assert!(!other.exists(), "untrusted folder: {}", run.describe());
    std::fs::remove_file(&granted).unwrap();

    // Trust the folder as Claude Code's dialog does.
    let config = t.home.join(".claude.json");
    let mut value: serde_json::Value = std::fs::read_to_string(&config)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_else(|| json!({}));
    value["projects"][t.work.to_string_lossy().as_ref()]["hasTrustDialogAccepted"] = json!(true);
    std::fs::write(&config, value.to_string()).unwrap();
    let out = t.sandgate(&[
        "grant",
        "loop.yaml",
        "--write",
        ".claude/settings.local.json",
    ]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("trusts the folder"));
    let run = t.run(&script, &RunOpts::mode(Mode::Default));
    assert!(granted.exists(), "granted: {}", run.describe());
    assert!(!other.exists(), "outside the grant: {}", run.describe());
}
