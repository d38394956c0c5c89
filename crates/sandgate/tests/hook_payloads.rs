//! Payloads captured from the real agents (Claude Code 2.1.197, Codex CLI
//! 0.171.0, Gemini CLI 0.61.0; `tests/conformance/payloads/`, with the
//! capture's root written `{root}`) go through `sandgate hook AGENT`, and each
//! is judged as the call it is: the audit log names the sandgate tool and the
//! subject for every one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hook_common;

use hook_common::Env;
use serde_json::Value;

fn captured(name: &str) -> Vec<Value> {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/conformance/payloads")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap()
}

/// (agent, capture file, the sandgate tool and subject of each payload).
type Case = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

#[test]
fn captured_payloads_are_judged_as_the_calls_they_are() {
    let cases: &[Case] = &[
        (
            "claude",
            "claude-code-2.1.197.json",
            &[
                ("exec_run", "echo hi"),
                ("file_read", "{root}/work/a.txt"),
                ("file_write", "{root}/work/c.txt"),
                ("file_edit", "{root}/work/c.txt"),
            ],
        ),
        (
            "codex",
            "codex-0.171.0.json",
            &[
                ("exec_run", "echo hi > {root}/work/out1"),
                ("file_write", "{root}/work/added.txt"),
            ],
        ),
        (
            "gemini",
            "gemini-cli-0.61.0.json",
            &[
                ("file_grep", "{root}/work"),
                ("exec_run", "echo k > k.txt"),
                ("file_read", "{root}/work/a.txt"),
                ("file_write", "{root}/work/b.txt"),
                ("file_list", "{root}/work"),
                ("file_find", "{root}/work"),
            ],
        ),
    ];
    for (agent, file, want) in cases {
        let env = Env::new();
        let root = env.root.to_string_lossy().into_owned();
        let payloads = captured(file);
        assert_eq!(payloads.len(), want.len(), "{file}");
        for (payload, (tool, subject)) in payloads.iter().zip(want.iter()) {
            let _ = std::fs::remove_file(env.audit_log());
            let text = payload.to_string().replace("{root}", &root);
            let out = env.hook(agent, &text);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{agent} {}: {}",
                payload["tool_name"],
                String::from_utf8_lossy(&out.stderr)
            );
            let log = std::fs::read_to_string(env.audit_log()).unwrap();
            let lines: Vec<Value> = log
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let subject = subject.replace("{root}", &root);
            assert!(
                lines
                    .iter()
                    .any(|l| l["tool"] == *tool && l["subject"] == subject.as_str()),
                "{agent} {}: want {tool} on {subject}, got {lines:?}",
                payload["tool_name"]
            );
        }
    }
}
