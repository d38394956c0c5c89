//! `sandgate acp` between a real editor client and the real Gemini CLI
//! (`gemini --acp`, pinned in `.ci/agents.txt`), offline against the
//! scripted model server of the agent tests. The cases shared with the
//! other ACP agents are in `acp_agents/mod.rs` (which says how they run);
//! the one here is Gemini CLI's own: its edits through the editor's `fs/*`
//! methods. The case of a loaded session (`session/load`) runs with Codex's
//! adapter only: Gemini CLI 0.61 answers the load of a session it made in
//! an earlier connection "No previous sessions found for this project"
//! here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acp_agents;
mod agents_common;

use std::path::{Path, PathBuf};

use acp_agents::{acp_records, path, GEMINI};
use agents_common::Step;
use serde_json::json;

#[test]
fn the_agents_own_questions_are_answered_by_the_policy() {
    acp_agents::the_agents_own_questions_are_answered_by_the_policy(&GEMINI);
}

#[test]
fn confined_writes_outside_are_asked_in_the_editor() {
    acp_agents::confined_writes_outside_are_asked_in_the_editor(&GEMINI);
}

#[test]
fn a_cancelled_turn_leaves_nothing_waiting() {
    acp_agents::a_cancelled_turn_leaves_nothing_waiting(&GEMINI);
}

#[test]
fn without_the_editors_dialog_a_write_outside_is_refused_and_logged() {
    acp_agents::without_the_editors_dialog_a_write_outside_is_refused_and_logged(&GEMINI);
}

#[test]
fn a_session_outside_the_workspace_is_asked_about_once() {
    acp_agents::a_session_outside_the_workspace_is_asked_about_once(&GEMINI);
}

/// With the editor performing the agent's file operations (`fs/*`), a
/// write inside the workspace is judged (the policy allows it) and lands
/// through the editor without a question. Gemini CLI writes outside its
/// workspace itself, after its own question about the edit, which the
/// policy leaves to the person: rejected, nothing is written; allowed once,
/// the file lands.
#[test]
fn edits_inside_pass_and_edits_outside_are_the_persons_to_answer() {
    let Some(t) = GEMINI.tree(false) else { return };
    let write = |p: &PathBuf| {
        Step::call(
            "write_file",
            json!({"file_path": path(p), "content": "hello\n"}),
        )
    };
    let inside = t.work.join("inside.txt");
    let rejected = t.outside.join("rejected.txt");
    let allowed = t.outside.join("allowed.txt");
    // An existing file: Gemini CLI 0.61 fails the write of a new file through
    // the editor ("Error checking existing file: Resource not found") when
    // the editor answers its read with ACP's resource-not-found error.
    std::fs::write(&inside, "old\n").unwrap();
    t.set_script(&agents_common::Script::new(vec![
        write(&inside),
        write(&rejected),
        write(&allowed),
    ]));
    let seen = GEMINI.converse(
        &t,
        &[],
        &["--include-directories", &path(&t.outside)],
        json!({"fs": true, "answers": ["reject_once", "allow_once"]}),
    );
    assert_eq!(
        std::fs::read_to_string(&inside).ok().as_deref(),
        Some("hello\n"),
        "{}",
        seen.describe()
    );
    assert!(!rejected.exists(), "{}", seen.describe());
    assert!(allowed.exists(), "{}", seen.describe());
    let asked: Vec<String> = seen
        .permissions()
        .iter()
        .map(|p| {
            p["toolCall"]["locations"][0]["path"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        asked,
        [path(&rejected), path(&allowed)],
        "{}",
        seen.describe()
    );
    let writes: Vec<&str> = seen.record["fs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["method"] == "fs/write_text_file")
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(writes, [path(&inside)], "{}", seen.describe());
    let records = acp_records(&t);
    let of = |p: &Path, tool: &str| {
        records
            .iter()
            .filter(|r| r["subject"] == path(p) && r["tool"] == tool)
            .map(|r| {
                (
                    r["verdict"].as_str().unwrap().to_string(),
                    r["outcome"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert!(
        of(&inside, "file_write").contains(&("allow".into(), "allow".into())),
        "{records:#?}"
    );
    assert_eq!(
        of(&rejected, "file_write"),
        [("ask".into(), "deny".into())],
        "{records:#?}"
    );
    assert_eq!(
        of(&allowed, "file_write"),
        [("ask".into(), "allow".into())],
        "{records:#?}"
    );
}
