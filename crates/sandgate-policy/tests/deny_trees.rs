//! A recursive read of a tree that holds a path a deny rule names (one path,
//! or a directory) is a read of that path: `grep -r KEY ~/.config` reads
//! `~/.config/gh/hosts.yml`. Denied by the rule while it is in the policy;
//! allowed once it is removed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod shell_common;

use sandgate_policy::{ToolCall, Verdict};
use shell_common::Home;

use Verdict::{Allow, Ask, Deny};

const ALLOWS: &str = r#"
    allow: ["/**"]
  commands:
    allow: ["^grep( |$)", "^rg( |$)", "^tar ", "^cp ", "^find ", "^cd ", "^cat( |$)"]
"#;

fn policy(home: &Home, deny: &str) -> sandgate_policy::Policy {
    home.policy(
        &format!("permissions:\n  paths:\n    deny: [{deny}]{ALLOWS}"),
        None,
    )
}

#[test]
fn a_tree_holding_a_denied_path_is_denied_by_its_rule() {
    let home = Home::new();
    let h = home.ctx.home.clone();
    for dir in [".config/gh", ".kube", ".config/app/.hidden", "keys"] {
        std::fs::create_dir_all(h.join(dir)).unwrap();
    }
    std::fs::write(h.join(".config/gh/hosts.yml"), "TOKEN\n").unwrap();
    std::fs::write(h.join(".kube/config"), "TOKEN\n").unwrap();
    std::fs::write(h.join(".config/app/.hidden/token"), "TOKEN\n").unwrap();
    std::fs::write(h.join("keys/a.pem"), "KEY\n").unwrap();
    let rules = r#""~/.config/gh/hosts.yml", "~/.kube/**", "~/.config/app/.hidden/token", "**/*.pem", "~/.missing/token""#;
    let with = policy(&home, rules);
    let without = policy(&home, r#""/nonexistent-rule""#);
    let cases: &[(&str, Verdict, &str)] = &[
        ("grep -r TOKEN ~/.config", Deny, "`~/.config/gh/hosts.yml`"),
        (
            "grep -r TOKEN ~/.config/gh",
            Deny,
            "`~/.config/gh/hosts.yml`",
        ),
        ("cd ~/.config && grep -r TOKEN .", Deny, "hosts.yml"),
        ("tar cf - ~/.config", Deny, "hosts.yml"),
        ("cp -r ~/.config /tmp/copy", Deny, "hosts.yml"),
        // rg skips dot-files: with none on the way it reads the store.
        ("rg TOKEN ~/.config/gh", Deny, "hosts.yml"),
        // A dot-file on the way: rg may skip it, so it asks.
        ("rg TOKEN ~/.config/app", Ask, ".hidden/token"),
        ("grep -r TOKEN ~/.config/app", Deny, ".hidden/token"),
        // Listing names only asks.
        ("find ~/.config -name x", Ask, "hosts.yml"),
        // A directory rule, and the directory itself as the word.
        ("grep -r TOKEN ~/.kube", Deny, "`~/.kube/**`"),
        // A rule with another pattern is not looked for below a tree.
        ("grep -r KEY ~/keys", Allow, ""),
    ];
    for (command, verdict, why) in cases {
        let call = ToolCall::new("exec_run", serde_json::json!({"command": command}));
        let d = with.evaluate(&call, &home.ctx);
        assert_eq!(d.verdict, *verdict, "{command}: {}", d.reason);
        assert!(d.reason.contains(why), "{command}: {}", d.reason);
        // Without the rules, nothing is denied or asked.
        let d = without.evaluate(&call, &home.ctx);
        assert_eq!(
            d.verdict, Allow,
            "without the rules, {command}: {}",
            d.reason
        );
    }
    // Another name of a file a rule names (a hard link made before) is
    // that file, for the file tools and the command words alike.
    std::fs::write(h.join(".netrc"), "TOKEN\n").unwrap();
    std::fs::hard_link(h.join(".netrc"), home.ctx.cwd.join("copy")).unwrap();
    let netrc = policy(&home, r#""~/.netrc""#);
    for call in [
        ToolCall::new("exec_run", serde_json::json!({"command": "cat copy"})),
        ToolCall::new("file_read", serde_json::json!({"path": "copy"})),
    ] {
        let d = netrc.evaluate(&call, &home.ctx);
        assert_eq!(d.verdict, Deny, "{}", d.reason);
        assert!(d.reason.contains("is a hard link to"), "{}", d.reason);
        assert_eq!(without.evaluate(&call, &home.ctx).verdict, Allow);
    }
    // A rule whose path does not exist denies no tree.
    std::fs::create_dir_all(h.join(".missing")).unwrap();
    let call = ToolCall::new(
        "exec_run",
        serde_json::json!({"command": "grep -r TOKEN ~/.missing"}),
    );
    assert_eq!(with.evaluate(&call, &home.ctx).verdict, Allow);
}
