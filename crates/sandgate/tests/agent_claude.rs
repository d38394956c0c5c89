//! The real Claude Code, headless, with `sandgate hook claude` installed by
//! `sandgate hook install claude`, against a scripted model on 127.0.0.1.
//! How to run one case: see `agents_common/mod.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agents_common;

use agents_common::{Agent, Mode, RunOpts, Script, Step, Tree};
use serde_json::json;

fn tree() -> Option<Tree> {
    Tree::new(Agent::Claude)
}

/// The command sandgate allows runs; the denied and the unmatched ones do not,
/// and the model is told why: in the default mode and with bypassPermissions.
#[test]
fn commands_allowed_denied_unmatched() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    for mode in [Mode::Default, Mode::Bypass] {
        let _ = std::fs::remove_file(t.work.join("allowed.txt"));
        let run = t.run(
            &Script::new(vec![
                Step::shell(Agent::Claude, "touch allowed.txt"),
                Step::shell(Agent::Claude, "touch denied.txt"),
                Step::shell(Agent::Claude, "touch unmatched.txt"),
            ]),
            &RunOpts::mode(mode),
        );
        t.assert_touches(&run, 3, &format!("{mode:?}"));
    }
    let verdicts = |s: &str| -> Vec<String> {
        t.audit_for(s)
            .iter()
            .map(|r| r["verdict"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(verdicts("touch allowed.txt"), ["allow", "allow"]);
    assert_eq!(verdicts("touch denied.txt"), ["deny", "deny"]);
    assert_eq!(verdicts("touch unmatched.txt"), ["ask", "ask"]);
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

/// Writes through `Write`, `Edit` (creating a file) and the shell: inside the
/// project they land; outside it (no rule) and into `~/.ssh` (the floor) they
/// do not, in either mode.
#[test]
fn writes_inside_and_outside() {
    let Some(t) = tree() else { return };
    t.install_hook(&[]);
    let keys = t.home.join(".ssh/authorized_keys");
    for (i, mode) in [Mode::Default, Mode::Bypass].into_iter().enumerate() {
        let inside = t.work.join(format!("inside{i}.txt"));
        let outside = t.outside.join(format!("outside{i}.txt"));
        let edited = t.outside.join(format!("edited{i}.txt"));
        let run = t.run(
            &Script::new(vec![
                Step::call("Write", json!({"file_path": inside, "content": "in\n"})),
                Step::call("Write", json!({"file_path": outside, "content": "out\n"})),
                Step::call(
                    "Write",
                    json!({"file_path": keys, "content": "ssh-ed25519 AAAA k\n"}),
                ),
                Step::call(
                    "Edit",
                    json!({"file_path": edited, "old_string": "", "new_string": "x\n"}),
                ),
            ]),
            &RunOpts::mode(mode),
        );
        assert!(run.status.success(), "{}", run.describe());
        assert_eq!(run.tool_results().len(), 4, "{}", run.describe());
        assert!(inside.exists(), "{mode:?}: {}", run.describe());
        assert!(!outside.exists(), "{mode:?}: {}", run.describe());
        assert!(!keys.exists(), "{mode:?}: {}", run.describe());
        assert!(!edited.exists(), "{mode:?}: {}", run.describe());
    }
    let keys = keys.to_string_lossy();
    let floor = t.audit_for(&keys);
    assert_eq!(floor.len(), 2, "{:#?}", t.audit());
    assert!(floor.iter().all(|r| r["verdict"] == "deny"), "{floor:#?}");
    for r in t.audit_for(&t.outside.to_string_lossy()) {
        assert_ne!(r["verdict"], "allow", "{r}");
    }
}

/// `sandgate mcp` registered with `--mcp-config`: `file_read` denies
/// `~/.ssh/id_rsa`; `exec_run` runs the allowed command and not the denied one.
#[test]
fn mcp_exec_run_and_floor_read() {
    let Some(t) = tree() else { return };
    let config = t.register_mcp();
    let run = t.run(&t.mcp_floor_and_exec(vec![]), &mcp_opts(&config));
    t.assert_mcp_floor_and_exec(&run, &["deny", "allow", "deny"]);
}

fn mcp_opts(config: &std::path::Path) -> RunOpts {
    RunOpts::mode(Mode::Default)
        .arg("--mcp-config")
        .arg(config.to_str().unwrap())
        .arg("--allowedTools")
        .arg("mcp__sandgate")
}

/// `file_read` through Claude Code gives the model the file's lines (Claude
/// Code forwards `structuredContent` and drops the text blocks).
#[test]
fn mcp_file_read_gives_the_model_the_lines() {
    let Some(t) = tree() else { return };
    let config = t.register_mcp();
    std::fs::write(t.work.join("notes.txt"), "first line\nNOTES-MARKER-LINE\n").unwrap();
    let run = t.run(
        &Script::new(vec![
            t.mcp_call("file_read", json!({"path": t.work.join("notes.txt")})),
            t.mcp_call("file_head_tail", json!({"path": t.work.join("notes.txt")})),
        ]),
        &mcp_opts(&config),
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

/// The settings file of the test below, as a user wrote it.
const USER_SETTINGS: &str = "{\n  \"env\": {\"FOO\": \"bar\"},\n  \"permissions\": {\n    \"allow\": [\"Bash(ls:*)\"]\n  },\n  \"hooks\": {\n    \"PostToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]\n  }\n}\n";

/// `sandgate hook install claude` into a settings file of the user's, then
/// `uninstall`: in between the hook gates the calls, after it the settings are
/// as they were (same keys, order and values) and nothing is gated.
#[test]
fn install_then_uninstall_restores_the_settings() {
    let Some(t) = tree() else { return };
    let file = t.settings_file();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, USER_SETTINGS).unwrap();
    t.install_hook(&[]);
    let installed = std::fs::read_to_string(&file).unwrap();
    assert!(installed.contains("hook claude"), "{installed}");
    let script = Script::new(vec![Step::shell(Agent::Claude, "touch denied.txt")]);
    let run = t.run(&script, &RunOpts::mode(Mode::Bypass));
    assert!(!t.work.join("denied.txt").exists(), "{}", run.describe());
    let out = t.sandgate(&["hook", "uninstall", "claude"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parsed = |s: &str| {
        serde_json::from_str::<serde_json::Value>(s)
            .unwrap()
            .to_string()
    };
    assert_eq!(
        parsed(&std::fs::read_to_string(&file).unwrap()),
        parsed(USER_SETTINGS)
    );
    let run = t.run(&script, &RunOpts::mode(Mode::Bypass));
    assert!(t.work.join("denied.txt").exists(), "{}", run.describe());
    assert_eq!(t.audit_for("touch denied.txt").len(), 1, "{:#?}", t.audit());
}

/// Install and uninstall leave the rest of the file byte for byte as it was,
/// and install writes a backup beside it.
#[test]
fn install_keeps_the_formatting_and_writes_a_backup() {
    let Some(t) = tree() else { return };
    let file = t.settings_file();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, USER_SETTINGS).unwrap();
    t.install_hook(&[]);
    let installed = std::fs::read_to_string(&file).unwrap();
    assert!(
        installed.contains("\"env\": {\"FOO\": \"bar\"}"),
        "{installed}"
    );
    let backups: Vec<_> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("settings.json.")
                && std::fs::read_to_string(e.path()).ok().as_deref() == Some(USER_SETTINGS)
        })
        .collect();
    assert!(!backups.is_empty(), "no backup of the settings beside them");
    let out = t.sandgate(&["hook", "uninstall", "claude"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), USER_SETTINGS);
}

/// An allow the user gave Claude Code itself for an edit stands: with no
/// sandgate rule for the file, the hook leaves the edit to Claude Code in its
/// default mode, and it is made. A command is always asked about (Claude
/// Code runs the ones it deems read-only unasked), so a command allowed only
/// in Claude Code's settings is blocked headless until sandgate's policy
/// allows it too (`sandgate import claude` converts the rule).
#[test]
fn an_edit_allowed_in_claude_settings_stands_and_a_command_needs_sandgates_rule() {
    let Some(t) = tree() else { return };
    let policy = "permissions:\n  paths:\n    allow: [\"{work}/src/**\"]\n  commands:\n    allow: [\"^echo \"]\n";
    t.write_policy(policy);
    let file = t.settings_file();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "{\"permissions\": {\"allow\": [\"Edit\", \"Write\", \"Bash(touch unmatched.txt)\"]}}\n",
    )
    .unwrap();
    t.install_hook(&[]);
    let made = t.work.join("made.txt");
    let run = t.run(
        &Script::new(vec![
            Step::call("Write", json!({"file_path": made, "content": "x\n"})),
            Step::shell(Agent::Claude, "touch unmatched.txt"),
        ]),
        &RunOpts::mode(Mode::Default),
    );
    assert!(made.exists(), "{}", run.describe());
    assert!(!t.work.join("unmatched.txt").exists(), "{}", run.describe());
    t.write_policy(&policy.replace("[\"^echo \"]", "[\"^echo \", '^touch unmatched\\.txt$']"));
    let run = t.run(
        &Script::new(vec![Step::shell(Agent::Claude, "touch unmatched.txt")]),
        &RunOpts::mode(Mode::Default),
    );
    assert!(t.work.join("unmatched.txt").exists(), "{}", run.describe());
}

/// A loop config whose only program is `touch`: the grant is `Bash(touch:*)`
/// (and the file tools).
const LOOP: &str = "providers:\n  providers:\n    - command: touch\n";

/// Mark the project as trusted in `~/.claude.json`, as Claude Code's trust
/// dialog does.
fn trust_project(t: &Tree) {
    let projects =
        json!({"projects": {t.work.to_str().unwrap(): {"hasTrustDialogAccepted": true}}});
    std::fs::write(t.home.join(".claude.json"), projects.to_string()).unwrap();
}

/// `sandgate grant --write .claude/settings.local.json`, verified in the real
/// Claude Code: without the grant the command needs approval; with it, the
/// granted command runs headless without a prompt and a command outside the
/// grant does not. Claude Code 2.1.332 applies project settings in a headless
/// run whether or not the folder is trusted (2.1.197 ignored them until it
/// was).
#[test]
fn grant_rules_take_effect_in_a_trusted_folder() {
    let Some(t) = tree() else { return };
    let script = Script::new(vec![
        Step::shell(Agent::Claude, "touch granted.txt"),
        Step::shell(Agent::Claude, "mkdir not-granted"),
    ]);
    let run = t.run(&script, &RunOpts::mode(Mode::Default));
    assert!(
        !t.work.join("granted.txt").exists(),
        "without the grant: {}",
        run.describe()
    );
    std::fs::write(t.work.join("loop.yaml"), LOOP).unwrap();
    let out = t.sandgate(&[
        "grant",
        "loop.yaml",
        "--write",
        ".claude/settings.local.json",
    ]);
    assert!(out.status.success(), "{out:?}");
    let written = std::fs::read_to_string(t.work.join(".claude/settings.local.json")).unwrap();
    assert!(written.contains("Bash(touch:*)"), "{written}");
    let run = t.run(&script, &RunOpts::mode(Mode::Default));
    assert!(run.status.success(), "{}", run.describe());
    assert!(
        t.work.join("granted.txt").exists(),
        "untrusted, headless: {}",
        run.describe()
    );
    assert!(!t.work.join("not-granted").exists(), "{}", run.describe());
    std::fs::remove_file(t.work.join("granted.txt")).unwrap();
    trust_project(&t);
    let run = t.run(&script, &RunOpts::mode(Mode::Default));
    assert!(run.status.success(), "{}", run.describe());
    assert!(t.work.join("granted.txt").exists(), "{}", run.describe());
    assert!(!t.work.join("not-granted").exists(), "{}", run.describe());
}

/// The file tools a grant gives Claude Code reach the loop's directory and
/// nothing else. First the control: the bare `Read`/`Write`/`Edit` rules that
/// `sandgate grant` used to write let Claude Code, headless and unprompted,
/// read `~/.ssh/id_rsa` and a file outside the project, write
/// `~/.ssh/authorized_keys` and a file outside the project, and read
/// `~/.aws/credentials` through a symlink in the project. Then the same calls after the real
/// `sandgate grant --write`: only the write inside the loop's directory runs.
/// Last, the grant's deny rules keep the floor closed even when the user's
/// own settings allow the whole home directory (shown first without them).
#[test]
fn grant_file_rules_reach_the_loop_directory_only() {
    let Some(t) = tree() else { return };
    std::fs::write(t.work.join("loop.yaml"), LOOP).unwrap();
    trust_project(&t);
    let settings = t.work.join(".claude/settings.local.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    // Markers that do not contain the key's, so each read is told apart.
    let outside_secret = t.secret.replace("SECRET", "OUTSIDE");
    let notes = t.outside.join("notes.txt");
    std::fs::write(&notes, format!("{outside_secret}\n")).unwrap();
    // A link in the project to a floor file the other reads do not touch.
    let aws_secret = t.secret.replace("SECRET", "AWSCRED");
    std::fs::create_dir_all(t.home.join(".aws")).unwrap();
    std::fs::write(t.home.join(".aws/credentials"), format!("{aws_secret}\n")).unwrap();
    let link = t.work.join("creds-link");
    std::os::unix::fs::symlink(t.home.join(".aws/credentials"), &link).unwrap();
    let keys = t.home.join(".ssh/authorized_keys");
    let escaped = t.outside.join("escaped.txt");
    let inside = t.work.join("notes/inside.txt");
    std::fs::create_dir_all(inside.parent().unwrap()).unwrap();
    let write = |path: &std::path::Path| {
        Step::call(
            "Write",
            json!({"file_path": path, "content": "ssh-ed25519 AAAA written\n"}),
        )
    };
    let read = |path: &std::path::Path| Step::call("Read", json!({"file_path": path}));
    let script = Script::new(vec![
        read(&t.home.join(".ssh/id_rsa")),
        read(&notes),
        read(&link),
        write(&keys),
        write(&escaped),
        write(&inside),
    ]);
    let attempts = |run: &agents_common::Run| {
        [
            ("~/.ssh/id_rsa read", run.model_saw(&t.secret)),
            (
                "~/.aws/credentials read through a link",
                run.model_saw(&aws_secret),
            ),
            ("a file outside read", run.model_saw(&outside_secret)),
            ("~/.ssh/authorized_keys written", keys.exists()),
            ("a file outside written", escaped.exists()),
        ]
    };

    // The control: bare file-tool rules open every path.
    std::fs::write(
        &settings,
        json!({"permissions": {"allow": ["Read", "Write", "Edit"]}}).to_string(),
    )
    .unwrap();
    let run = t.run(&script, &RunOpts::mode(Mode::Default));
    for (what, happened) in attempts(&run) {
        assert!(
            happened,
            "control: {what} should go through\n{}",
            run.describe()
        );
    }
    assert!(inside.exists(), "control: {}", run.describe());
    for f in [&keys, &escaped, &inside] {
        std::fs::remove_file(f).unwrap();
    }

    std::fs::remove_file(&settings).unwrap();
    let out = t.sandgate(&[
        "grant",
        "loop.yaml",
        "--write",
        ".claude/settings.local.json",
    ]);
    assert!(out.status.success(), "{out:?}");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let pattern = format!("//{}/**", t.work.to_str().unwrap().trim_start_matches('/'));
    assert_eq!(
        written["permissions"]["allow"],
        json!([
            "Bash(touch:*)",
            format!("Edit({pattern})"),
            format!("Read({pattern})")
        ]),
        "{written}"
    );
    let deny = written["permissions"]["deny"].as_array().unwrap();
    assert!(deny.contains(&json!("Read(~/.ssh/**)")), "{written}");
    assert!(deny.contains(&json!("Edit(~/.ssh/**)")), "{written}");

    let run = t.run(&script, &RunOpts::mode(Mode::Default));
    for (what, happened) in attempts(&run) {
        assert!(!happened, "granted: {what}\n{}", run.describe());
    }
    assert!(
        inside.exists(),
        "the loop's own directory: {}",
        run.describe()
    );

    // The deny rules hold against a broader allow elsewhere: the user's own
    // settings allowing the whole home directory. First without them.
    let user = t.home.join(".claude/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(
        &user,
        json!({"permissions": {"allow": ["Read(~/**)", "Edit(~/**)"]}}).to_string(),
    )
    .unwrap();
    let floor_attempts = |run: &agents_common::Run| {
        [
            ("~/.ssh/id_rsa read", run.model_saw(&t.secret)),
            (
                "~/.aws/credentials read through a link",
                run.model_saw(&aws_secret),
            ),
            ("~/.ssh/authorized_keys written", keys.exists()),
        ]
    };
    let mut without_deny = written.clone();
    without_deny["permissions"]
        .as_object_mut()
        .unwrap()
        .remove("deny");
    std::fs::write(&settings, without_deny.to_string()).unwrap();
    let run = t.run(&script, &RunOpts::mode(Mode::Default));
    for (what, happened) in floor_attempts(&run) {
        assert!(
            happened,
            "control: {what} should go through\n{}",
            run.describe()
        );
    }
    std::fs::remove_file(&keys).unwrap();
    std::fs::write(&settings, written.to_string()).unwrap();
    let run = t.run(&script, &RunOpts::mode(Mode::Default));
    for (what, happened) in floor_attempts(&run) {
        assert!(
            !happened,
            "granted, with ~/** allowed: {what}\n{}",
            run.describe()
        );
    }
}

/// `grant --write` into the project's Claude settings of a folder Claude Code
/// has not trusted says so, and how to fix it; in a trusted folder it does not.
#[test]
fn grant_says_when_claude_has_not_trusted_the_folder() {
    let Some(t) = tree() else { return };
    std::fs::write(t.work.join("loop.yaml"), LOOP).unwrap();
    let out = t.sandgate(&[
        "grant",
        "loop.yaml",
        "--write",
        ".claude/settings.local.json",
    ]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("trust"), "{said}");
    trust_project(&t);
    let out = t.sandgate(&[
        "grant",
        "loop.yaml",
        "--write",
        ".claude/settings.local.json",
    ]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!said.contains("has not trusted"), "{said}");
}

/// The audit log says how each ASK was settled: in the default mode the call
/// is left to Claude Code's own permissions, with bypassPermissions it is not
/// run, and an MCP question Claude Code dismissed headless is a decline no
/// human gave.
#[test]
fn audit_says_how_an_ask_was_settled() {
    let Some(t) = tree() else { return };
    let config = t.register_mcp();
    let outside = t.outside.join("notes.txt");
    std::fs::write(&outside, "outside\n").unwrap();
    let run = t.run(
        &Script::new(vec![t.mcp_call("file_read", json!({"path": outside}))]),
        &mcp_opts(&config),
    );
    assert_eq!(run.tool_results().len(), 1, "{}", run.describe());
    assert!(!run.model_saw("outside\\n"), "{}", run.describe());
    t.install_hook(&[]);
    let run = t.run(
        &Script::new(vec![Step::shell(Agent::Claude, "touch unmatched.txt")]),
        &RunOpts::mode(Mode::Default),
    );
    assert_eq!(run.tool_results().len(), 1, "{}", run.describe());
    let run = t.run(
        &Script::new(vec![Step::shell(
            Agent::Claude,
            "touch unmatched-bypass.txt",
        )]),
        &RunOpts::mode(Mode::Bypass),
    );
    assert_eq!(run.tool_results().len(), 1, "{}", run.describe());
    assert!(!t.work.join("unmatched.txt").exists());
    assert!(!t.work.join("unmatched-bypass.txt").exists());
    let audit = t.audit();
    let asks = agents_common::assert_asks_settled(&audit);
    assert_eq!(asks.len(), 3, "{audit:#?}");
    assert_eq!(asks[0]["surface"], "mcp", "{audit:#?}");
    assert!(
        asks[0]["became"].as_str().unwrap().starts_with("denied"),
        "{audit:#?}"
    );
    for r in &asks[1..] {
        assert_eq!(r["surface"], "hook claude", "{r}");
        assert_eq!(r["answered_by"], "agent", "{r}");
    }
    // A command is never deferred: Claude Code runs the ones it deems
    // read-only unasked, in every mode.
    for r in &asks[1..] {
        assert_eq!(r["became"], "asked in the agent", "{audit:#?}");
    }
}

/// Claude Code confined by `sandgate run` works as without it, and cannot
/// rewrite its own settings (see [`Tree::assert_settings_held_when_confined`]).
#[test]
fn confined_by_sandgate_run_it_cannot_rewrite_its_settings() {
    let Some(t) = tree() else { return };
    t.assert_settings_held_when_confined(RunOpts::mode(Mode::Bypass));
}
