//! What every ACP permission question sandgate asks an editor offers.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

/// The kinds of the options a `session/request_permission` question
/// offers, in their order.
pub const OPTION_KINDS: [&str; 4] = ["allow_once", "allow_always", "reject_once", "reject_always"];

/// Asserts that the question with these `params` offers exactly the four
/// [`OPTION_KINDS`], in that order.
pub fn assert_options(params: &serde_json::Value) {
    let kinds: Vec<&str> = params["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, OPTION_KINDS);
}
