//! `sandgate hook claude` reads a command's options as the program does:
//! an abbreviated GNU long option, or a bare option whose value may only be
//! attached, gets the answer its full spelling gets.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hook_common;

use hook_common::{stdout_json, Env};
use serde_json::json;

const POLICY: &str = r#"permissions:
  paths:
    allow: ["{root}/work/**"]
  commands:
    allow: ['^cp ', '^rm ', '^tee ', '^sort( |$)', '^grep ', '^du( |$)']
"#;

#[test]
fn abbreviations_and_optional_values_answer_as_their_full_spelling() {
    let env = Env::with_policy(POLICY);
    std::fs::create_dir_all(env.home.join(".ssh")).unwrap();
    std::fs::write(env.home.join(".ssh/id_rsa"), "SECRET\n").unwrap();
    std::fs::write(env.home.join(".bashrc"), "# rc\n").unwrap();
    std::fs::write(env.work.join("a"), "a\n").unwrap();
    let answer = |command: &str| {
        let payload = env.claude_payload("PreToolUse", "Bash", json!({ "command": command }));
        let out = env.hook("claude", &payload.to_string());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    for (command, full, want) in [
        ("cp --preserve a ~/.bashrc", "cp a ~/.bashrc", "ask"),
        ("cp --backup a ~/.bashrc", "cp a ~/.bashrc", "ask"),
        ("tee --output-error ~/.bashrc", "tee ~/.bashrc", "ask"),
        ("rm --interactive ~/.bashrc", "rm ~/.bashrc", "ask"),
        ("sort --o=../x.txt a", "sort -o ../x.txt a", "ask"),
        ("sort --files0=-", "sort --files0-from=-", "ask"),
        ("grep --recur KEY ~", "grep -r KEY ~", "deny"),
        ("du --al ~", "du -a ~", "ask"),
        ("cp --backup a b", "cp a b", "allow"),
    ] {
        assert_eq!(answer(command), want, "{command}");
        assert_eq!(answer(full), want, "{full}");
    }
}
