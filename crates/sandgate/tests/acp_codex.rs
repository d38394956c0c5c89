//! `sandgate acp` between a real editor client and Codex's ACP adapter
//! (`codex-acp`, pinned in `.ci/agents.txt`: Codex CLI's engine speaking
//! ACP), offline against the scripted model server of the agent tests (the
//! OpenAI Responses API). The cases are shared with the other ACP agents:
//! see `acp_agents/mod.rs`, and `acp_agents::CODEX` for how Codex is
//! started. The adapter performs its edits and commands itself (it asks the
//! editor for no `fs/*` or `terminal/*` method), so sandgate's confinement
//! and its answers to the agent's own questions are what gate it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acp_agents;
mod agents_common;

use acp_agents::CODEX;

#[test]
fn the_agents_own_questions_are_answered_by_the_policy() {
    acp_agents::the_agents_own_questions_are_answered_by_the_policy(&CODEX);
}

#[test]
fn confined_writes_outside_are_asked_in_the_editor() {
    acp_agents::confined_writes_outside_are_asked_in_the_editor(&CODEX);
}

#[test]
fn a_cancelled_turn_leaves_nothing_waiting() {
    acp_agents::a_cancelled_turn_leaves_nothing_waiting(&CODEX);
}

#[test]
fn without_the_editors_dialog_a_write_outside_is_refused_and_logged() {
    acp_agents::without_the_editors_dialog_a_write_outside_is_refused_and_logged(&CODEX);
}

#[test]
fn a_session_outside_the_workspace_is_asked_about_once() {
    acp_agents::a_session_outside_the_workspace_is_asked_about_once(&CODEX);
}

#[test]
fn a_loaded_session_outside_the_workspace_is_asked_about_once() {
    acp_agents::a_loaded_session_outside_the_workspace_is_asked_about_once(&CODEX);
}
