//! The home the user database gives the user running the tests, which
//! sandgate floors as well as `$HOME` when the two differ. Its includer
//! provides `wait` (tests/support/wait.rs) beside it.

/// The home directory of the current user in the user database
/// (`getent passwd`), or an empty string when it has none.
pub fn account_home() -> String {
    use super::wait::{Bounded, DEADLINE};
    let out = std::process::Command::new("sh")
        .args(["-c", "getent passwd \"$(id -u)\" | cut -d: -f6"])
        .output_within(DEADLINE)
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
