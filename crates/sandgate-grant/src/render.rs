//! Showing a grant to a person (the preflight) and as a sandgate policy.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::rules::{bash_prefix, CORE_TOOLS};

/// The first load-bearing sentence: the list is the whole request.
pub const NOTHING_ELSE: &str = "Nothing outside this list is requested.";

/// The second load-bearing sentence: the grant does not remove the human checkpoints.
pub const CHECKPOINTS_STILL_STOP: &str =
    "Human checkpoints still stop and wait, whatever this grant allows:";

/// Shown when the loop declares no checkpoint.
pub const NO_CHECKPOINTS: &str = "(none declared in constraints.human_checkpoint)";

/// What the grant is for, and what it is not.
pub const NOT_THE_SAFETY_MECHANISM: &str =
    "This grant removes prompts; it is not the safety mechanism.";

/// The preflight a person reads before granting: the rules, then the two sentences
/// and the loop's checkpoints.
pub fn render(rules: &BTreeSet<String>, checkpoints: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "This loop needs {} permission rule(s):", rules.len());
    out.push('\n');
    for rule in rules {
        let _ = writeln!(out, "  {rule}");
    }
    out.push('\n');
    let _ = writeln!(out, "{NOTHING_ELSE}");
    let _ = writeln!(out, "{CHECKPOINTS_STILL_STOP}");
    if checkpoints.is_empty() {
        let _ = writeln!(out, "  {NO_CHECKPOINTS}");
    }
    for checkpoint in checkpoints {
        let _ = writeln!(out, "  - {checkpoint}");
    }
    out.push('\n');
    let _ = writeln!(out, "{NOT_THE_SAFETY_MECHANISM}");
    out
}

/// The same grant as a sandgate policy file (`permissions.yaml`).
///
/// The file tools become one path rule for the loop's own directory (`./**`,
/// relative to the working directory the policy is evaluated in); each
/// `Bash(<prefix>:*)` becomes an anchored command regex that matches the prefix
/// alone or followed by arguments. Rules for tools sandgate does not gate (web
/// fetches) are kept as comments so the file still shows the whole grant.
pub fn render_sandgate(rules: &BTreeSet<String>, source: &str) -> String {
    let mut paths = Vec::new();
    let mut commands = Vec::new();
    let mut outside = Vec::new();
    let core: Vec<&String> = rules
        .iter()
        .filter(|r| CORE_TOOLS.contains(&r.as_str()))
        .collect();
    if !core.is_empty() {
        let names: Vec<&str> = core.iter().map(|s| s.as_str()).collect();
        paths.push(("./**".to_string(), names.join(", ")));
    }
    for rule in rules {
        if CORE_TOOLS.contains(&rule.as_str()) {
            continue;
        }
        match bash_prefix(rule) {
            Some(prefix) => commands.push((command_regex(prefix), rule.clone())),
            None => outside.push(rule.clone()),
        }
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "# sandgate policy for the loop `{}`, from `sandgate grant --format sandgate`.",
        one_line(source)
    );
    let _ = writeln!(out, "# {NOTHING_ELSE}");
    let _ = writeln!(
        out,
        "# Human checkpoints still stop and wait, whatever this grant allows."
    );
    let _ = writeln!(
        out,
        "# Use it as the central policy (--config): a local or managed file may only tighten,"
    );
    let _ = writeln!(out, "# so allow rules there are ignored.");
    out.push_str("permissions:\n");
    out.push_str("  paths:\n");
    write_list(&mut out, "allow", &paths);
    out.push_str("  commands:\n");
    write_list(&mut out, "allow", &commands);
    if !outside.is_empty() {
        out.push_str("# Not gated by sandgate (its gate covers file and shell tools only):\n");
        for rule in outside {
            let _ = writeln!(out, "#   {rule}");
        }
    }
    out
}

fn write_list(out: &mut String, key: &str, items: &[(String, String)]) {
    if items.is_empty() {
        let _ = writeln!(out, "    {key}: []");
        return;
    }
    let _ = writeln!(out, "    {key}:");
    for (value, from) in items {
        let _ = writeln!(out, "      - {}  # {}", yaml_single_quoted(value), from);
    }
}

/// `^<escaped prefix>( |$)`: the prefix as a whole word, with or without arguments.
pub fn command_regex(prefix: &str) -> String {
    format!("^{}( |$)", regex::escape(prefix))
}

fn yaml_single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(rules: &[&str]) -> BTreeSet<String> {
        rules.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn render_mentions_that_nothing_else_is_requested_and_checkpoints_still_stop() {
        let text = render(
            &set(&["Bash(cargo:*)", "Read"]),
            &["before publishing".to_string()],
        );
        assert!(text.contains("  Bash(cargo:*)\n  Read\n"), "{text}");
        assert!(text.contains(NOTHING_ELSE));
        assert!(text.contains(CHECKPOINTS_STILL_STOP));
        assert!(text.contains("  - before publishing\n"));
        let rules_at = text.find("Bash(cargo").unwrap_or(usize::MAX);
        assert!(rules_at < text.find(NOTHING_ELSE).unwrap_or(0));
    }

    #[test]
    fn render_says_when_no_checkpoint_is_declared() {
        let text = render(&set(&["Read"]), &[]);
        assert!(text.contains(CHECKPOINTS_STILL_STOP));
        assert!(text.contains(NO_CHECKPOINTS));
    }

    #[test]
    fn command_regexes_anchor_and_escape_the_prefix() {
        let re = regex::Regex::new(&command_regex("./scripts/lint.sh")).unwrap();
        assert!(re.is_match("./scripts/lint.sh"));
        assert!(re.is_match("./scripts/lint.sh --fix"));
        assert!(!re.is_match("./scripts/lintXsh"));
        assert!(!re.is_match("x ./scripts/lint.sh"));
        let re = regex::Regex::new(&command_regex("npx skills")).unwrap();
        assert!(re.is_match("npx skills add x"));
        assert!(!re.is_match("npx skillsy"));
        assert!(!re.is_match("npx other"));
    }

    #[test]
    fn sandgate_format_keeps_unhandled_rules_as_comments() {
        let text = render_sandgate(
            &set(&[
                "Bash(cargo:*)",
                "Read",
                "WebFetch(domain:claudemarketplaces.com)",
            ]),
            "loop.yaml",
        );
        assert!(text.contains("'^cargo( |$)'"), "{text}");
        assert!(text.contains("'./**'"), "{text}");
        assert!(
            text.contains("#   WebFetch(domain:claudemarketplaces.com)"),
            "{text}"
        );
    }
}
