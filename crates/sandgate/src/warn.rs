//! The warning printed whenever the sandbox is off.

use std::io::Write;

/// Print the red, three-line framed warning to stderr. It is printed headless too;
/// the colour is dropped only when `NO_COLOR` is set.
pub fn warn_sandbox_off(reason: &str) {
    let lines = [
        "WARNING: the sandgate sandbox is OFF".to_string(),
        format!("({reason})"),
        "every tool call is allowed without a check or a prompt".to_string(),
    ];
    let width = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let colour = std::env::var_os("NO_COLOR").is_none();
    let (red, reset) = if colour {
        ("\x1b[1;31m", "\x1b[0m")
    } else {
        ("", "")
    };
    let mut out = String::new();
    out.push_str(&format!("{red}┌{}┐{reset}\n", "─".repeat(width + 2)));
    for l in &lines {
        let pad = width - l.chars().count();
        out.push_str(&format!("{red}│ {l}{} │{reset}\n", " ".repeat(pad)));
    }
    out.push_str(&format!("{red}└{}┘{reset}\n", "─".repeat(width + 2)));
    let _ = std::io::stderr().lock().write_all(out.as_bytes());
}
