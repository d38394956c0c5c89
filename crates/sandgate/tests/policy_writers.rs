//! `sandgate policy allow` refuses what lint would call a mistake (unless
//! `--force`), `sandgate policy remove` takes one exact rule out keeping the
//! rest of the file, and `sandgate policy lint` finds regexes that never
//! match and rules another one covers, all through the real binary on real
//! policy files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hook_common;

use hook_common::wait::{Bounded, DEADLINE};
use hook_common::Env;
use serde_json::{json, Value};

const POLICY: &str = r#"# my policy: keep this comment
permissions:
  paths:
    deny: ["{root}/secret/**"]   # never
    allow: ["{root}/work/**"]
    read:
      deny: ["{root}/work/private/**"]
  commands:
    deny: ["^rm ", "^curl "]
    allow:
      - '^git status$'   # status is fine
      - '^ls( |$)'
"#;

fn central(env: &Env) -> String {
    std::fs::read_to_string(env.home.join(".sandgate/permissions.yaml")).unwrap()
}

fn run(env: &Env, args: &[&str]) -> (i32, String, String) {
    let out = env
        .command(args)
        .current_dir(&env.work)
        .output_within(DEADLINE)
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn verdict(env: &Env, request: Value) -> String {
    let (code, stdout, stderr) = run(env, &["check", "--json", &request.to_string()]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    v["verdict"].as_str().unwrap().to_string()
}

#[test]
fn allow_refuses_rules_that_match_everything_or_nothing_and_force_overrides() {
    let env = Env::with_policy(POLICY);
    let before = central(&env);
    let cases: &[(&[&str], &str)] = &[
        (&["command", ".*"], "matches every command"),
        (&["command", "^"], "matches every command"),
        (&["command", "$"], "matches every command"),
        (&["command", "$^"], "only an empty command"),
        (&["command", "a^b"], "before the start"),
        (&["command", "^ls$x"], "after the end"),
        (&["command", "^[^\\s\\S]"], "matches no character"),
        (&["path", "~/**"], "the whole home directory"),
        (&["path", "/**"], "the whole disk"),
        (&["path", "**"], "names no directory"),
        (&["path", "--read", "/**"], "the whole disk"),
    ];
    for (args, why) in cases {
        let mut full = vec!["policy", "allow"];
        full.extend_from_slice(args);
        let (code, _, stderr) = run(&env, &full);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("refusing to add the allow rule"),
            "{stderr}"
        );
        assert!(stderr.contains(why), "{args:?}: {stderr}");
        assert!(stderr.contains("`--force` adds it anyway"), "{stderr}");
        assert_eq!(central(&env), before, "{args:?} changed the file");
    }
    // A rule a careful user writes is not refused.
    for args in [
        &["command", "^npm test$"][..],
        &["command", "^make( |$)"],
        &["path", "./build/**"],
        &["path", "--read", "~/docs/**"],
    ] {
        let mut full = vec!["policy", "allow"];
        full.extend_from_slice(args);
        let (code, _, stderr) = run(&env, &full);
        assert_eq!(code, 0, "{args:?}: {stderr}");
    }
    let (code, stdout, stderr) = run(&env, &["policy", "allow", "--force", "command", ".*"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("added `.*`"), "{stdout}");
    assert_eq!(
        verdict(
            &env,
            json!({"tool": "exec_run", "params": {"command": "make"}})
        ),
        "allow"
    );
}

#[test]
fn allow_refuses_rules_the_floor_or_a_deny_rule_shadows() {
    let env = Env::with_policy(POLICY);
    let before = central(&env);
    let root = env.root.to_string_lossy().into_owned();
    let secret = format!("{root}/secret/key");
    let private = format!("{root}/work/private/**");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["path", "~/.ssh/config"], "built-in floor `~/.ssh/**`"),
        (vec!["path", "~/.aws/**"], "built-in floor `~/.aws/**`"),
        (vec!["path", &secret], "the deny rule `"),
        (vec!["path", "--read", &private], "the read deny rule"),
        (vec!["command", "^rm -rf /tmp/x$"], "the deny rule `^rm `"),
        (vec!["command", "^curl -s( |$)"], "the deny rule `^curl `"),
    ];
    for (args, why) in &cases {
        let mut full = vec!["policy", "allow"];
        full.extend_from_slice(args);
        let (code, _, stderr) = run(&env, &full);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(stderr.contains("can never allow anything"), "{stderr}");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
        assert_eq!(central(&env), before);
    }
    // `sandgate run` lets `~/.ssh/config` be read without a rule; the refusal says so.
    let (_, _, stderr) = run(&env, &["policy", "allow", "path", "~/.ssh/config"]);
    assert!(stderr.contains("under `sandgate run`"), "{stderr}");
    let (_, _, stderr) = run(&env, &["policy", "allow", "path", "~/.ssh/id_rsa"]);
    assert!(!stderr.contains("under `sandgate run`"), "{stderr}");
    // A read deny rule does not shadow a write rule, nor a rule for both.
    let (code, _, stderr) = run(&env, &["policy", "allow", "path", "--write", &private]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(&env, &["policy", "allow", "path", &private]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn remove_takes_out_one_exact_rule_and_keeps_the_rest() {
    let env = Env::with_policy(POLICY);
    let exec = |c: &str| json!({"tool": "exec_run", "params": {"command": c}});
    assert_eq!(verdict(&env, exec("git status")), "allow");
    let (code, stdout, stderr) = run(&env, &["policy", "remove", "command", "^git status$"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("removed `^git status$` from permissions.commands.allow"),
        "{stdout}"
    );
    let text = central(&env);
    assert!(
        text.starts_with("# my policy: keep this comment\n"),
        "{text}"
    );
    assert!(text.contains("# never"), "{text}");
    assert!(!text.contains("git status"), "{text}");
    assert!(text.contains("'^ls( |$)'"), "{text}");
    assert_eq!(verdict(&env, exec("git status")), "ask");
    assert_eq!(verdict(&env, exec("ls -la")), "allow");

    // Absent: nothing changes, and the message names where it looked.
    let (code, _, stderr) = run(&env, &["policy", "remove", "command", "^git status$"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("is not in permissions.commands.allow"),
        "{stderr}"
    );
    assert_eq!(central(&env), text);
    // A near miss is not the rule.
    let (code, _, _) = run(&env, &["policy", "remove", "command", "^ls( |$) "]);
    assert_eq!(code, 1);

    // A deny rule: the command is no longer denied.
    assert_eq!(verdict(&env, exec("curl x")), "deny");
    let (code, _, stderr) = run(&env, &["--json", "policy", "remove", "command", "^curl "]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(verdict(&env, exec("curl x")), "ask");

    // A path rule in two lists asks which; `--read` / `--list` choose.
    let rule = format!("{}/work/shared/**", env.root.display());
    run(&env, &["policy", "allow", "path", &rule]);
    run(&env, &["policy", "deny", "path", "--read", &rule]);
    let (code, _, stderr) = run(&env, &["policy", "remove", "path", &rule]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("permissions.paths.allow and permissions.paths.read.deny"),
        "{stderr}"
    );
    let (code, stdout, stderr) = run(&env, &["policy", "remove", "path", "--read", &rule]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("permissions.paths.read.deny"), "{stdout}");
    let (code, _, stderr) = run(
        &env,
        &["policy", "remove", "path", "--list", "allow", &rule],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!central(&env).contains("shared"));

    // The project file with `--local`.
    let local = env.work.join(".sandgate/permissions.yaml");
    run(&env, &["policy", "deny", "path", "--local", "./vendor/**"]);
    assert!(std::fs::read_to_string(&local)
        .unwrap()
        .contains("./vendor/**"));
    let (code, _, stderr) = run(
        &env,
        &["policy", "remove", "path", "--local", "./vendor/**"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!std::fs::read_to_string(&local)
        .unwrap()
        .contains("./vendor/**"));
}

#[test]
fn lint_finds_regexes_that_never_match_and_covered_rules() {
    let env = Env::with_policy(
        r#"permissions:
  paths:
    allow: ["{root}/work/**", "{root}/work/src/**"]
  commands:
    deny: ["^curl ", "^curl -s "]
    allow:
      - 'a^b'
      - '^ls$x'
      - '^[^\s\S]'
      - '$^'
      - '^npm( |$)'
      - '^npm test$'
"#,
    );
    let (code, stdout, stderr) = run(&env, &["policy", "lint"]);
    assert_eq!(code, 1, "{stderr}");
    for rule in ["a^b", "^ls$x", "^[^\\s\\S]", "$^"] {
        assert!(
            stdout.contains(&format!("warning: never matches: `{rule}`")),
            "{rule}: {stdout}"
        );
    }
    assert!(!stdout.contains("too broad"), "{stdout}");
    for rule in ["^npm test$", "^curl -s ", "/work/src/**"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.contains("warning: covered:") && l.contains(rule)),
            "{rule}: {stdout}"
        );
    }
    // Rules of forms lint does not compare are named as not decided, not warned about.
    let env2 = Env::with_policy(
        r#"permissions:
  paths:
    deny: ["{root}/work/**/*.pem"]
    allow: ["{root}/work/**"]
  commands:
    deny: ['^sudo( |$)', '^rm\s']
    allow: ['^ls( |$)', '^(cat|head|rmdir) ']
"#,
    );
    let (code, stdout2, _) = run(&env2, &["policy", "lint"]);
    assert_eq!(code, 0, "{stdout2}");
    assert!(stdout2.contains("no warnings"), "{stdout2}");
    for rule in [
        "/work/**`",
        // Apart from `^sudo( |$)` by their starts; `rmdir` starts like `rm`.
        "`^(cat|head|rmdir) ` is shadowed by the deny rule `^rm\\s`:",
    ] {
        assert!(
            stdout2
                .lines()
                .any(|l| l.contains("note: not decided whether") && l.contains(rule)),
            "{rule}: {stdout2}"
        );
    }
    let (_, json2, _) = run(&env2, &["--json", "policy", "lint"]);
    let v2: Value = serde_json::from_str(&json2).unwrap();
    // `^ls( |$)` cannot be shadowed by rules that start `sudo` or `rm`.
    assert!(!stdout2.contains("`^ls( |$)`"), "{stdout2}");
    assert_eq!(v2["undecided"].as_array().unwrap().len(), 2, "{v2}");

    let (_, stdout, _) = run(&env, &["--json", "policy", "lint"]);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let kinds: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "never_matches").count(),
        4,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "covered").count(),
        3,
        "{kinds:?}"
    );
}
