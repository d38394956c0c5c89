//! Showing a grant to a person (the preflight) and as a sandgate policy.

use std::fmt::Write as _;

use crate::rules::{bash_prefix, file_rule, floor_dirs, Grant};

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

/// What the deny rules are, said before they are listed.
pub fn deny_heading(deny: usize) -> String {
    format!(
        "It also denies {deny} rule(s), so Claude Code's file tools never reach sandgate's floor ({}):",
        floor_dirs().join(", ")
    )
}

/// The preflight a person reads before granting: the rules, then the two sentences
/// and the loop's checkpoints.
pub fn render(grant: &Grant, checkpoints: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "This loop needs {} permission rule(s):",
        grant.allow.len()
    );
    out.push('\n');
    for rule in &grant.allow {
        let _ = writeln!(out, "  {rule}");
    }
    if !grant.deny.is_empty() {
        out.push('\n');
        let _ = writeln!(out, "{}", deny_heading(grant.deny.len()));
        out.push('\n');
        for rule in &grant.deny {
            let _ = writeln!(out, "  {rule}");
        }
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
/// A file rule for an absolute directory (`Read(//d/**)`, `Edit(//d/**)`)
/// becomes the path rule `/d/**`: in `paths.allow` when both tools have it,
/// else in `paths.read.allow` or `paths.write.allow`. Each `Bash(<prefix>:*)`
/// becomes an anchored command regex that matches the prefix alone or
/// followed by arguments. The deny rules are sandgate's floor, which is built
/// in, so the file says so instead of repeating them. Rules for tools
/// sandgate does not gate (web fetches) are kept as comments so the file
/// still shows the whole grant.
pub fn render_sandgate(grant: &Grant, source: &str) -> String {
    let mut reads = Vec::new();
    let mut writes = Vec::new();
    let mut commands = Vec::new();
    let mut outside = Vec::new();
    for rule in &grant.allow {
        match (file_rule(rule), bash_prefix(rule)) {
            (Some((tool, pattern)), _) if pattern.starts_with("//") => {
                let path = pattern[1..].to_string();
                if tool == "Read" {
                    reads.push((path, rule.clone()));
                } else {
                    writes.push((path, rule.clone()));
                }
            }
            (_, Some(prefix)) => commands.push((command_regex(prefix), rule.clone())),
            _ => outside.push(rule.clone()),
        }
    }
    let mut both = Vec::new();
    reads.retain(
        |(path, read)| match writes.iter().position(|(p, _)| p == path) {
            Some(i) => {
                let (_, edit) = writes.remove(i);
                both.push((path.clone(), format!("{read}, {edit}")));
                false
            }
            None => true,
        },
    );

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
    if !grant.deny.is_empty() {
        let _ = writeln!(
            out,
            "# The grant's {} deny rule(s) keep Claude Code's file tools out of {}:",
            grant.deny.len(),
            floor_dirs().join(", ")
        );
        let _ = writeln!(
            out,
            "# sandgate's floor, built in and denied before any rule, so none is written here."
        );
    }
    out.push_str("permissions:\n");
    out.push_str("  paths:\n");
    write_list(&mut out, "    ", "allow", &both);
    for (key, items) in [("read", &reads), ("write", &writes)] {
        if !items.is_empty() {
            let _ = writeln!(out, "    {key}:");
            write_list(&mut out, "      ", "allow", items);
        }
    }
    out.push_str("  commands:\n");
    write_list(&mut out, "    ", "allow", &commands);
    if !outside.is_empty() {
        out.push_str("# Not gated by sandgate (its gate covers file and shell tools only):\n");
        for rule in outside {
            let _ = writeln!(out, "#   {rule}");
        }
    }
    out
}

fn write_list(out: &mut String, indent: &str, key: &str, items: &[(String, String)]) {
    if items.is_empty() {
        let _ = writeln!(out, "{indent}{key}: []");
        return;
    }
    let _ = writeln!(out, "{indent}{key}:");
    for (value, from) in items {
        let _ = writeln!(out, "{indent}  - {}  # {}", yaml_single_quoted(value), from);
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
    use std::collections::BTreeSet;

    use super::*;
    use crate::rules::floor_rules;

    fn set(rules: &[&str]) -> BTreeSet<String> {
        rules.iter().map(|s| s.to_string()).collect()
    }

    fn grant(allow: &[&str]) -> Grant {
        Grant {
            allow: set(allow),
            deny: floor_rules(),
        }
    }

    #[test]
    fn render_mentions_that_nothing_else_is_requested_and_checkpoints_still_stop() {
        let text = render(
            &grant(&["Bash(cargo:*)", "Read(//p/**)"]),
            &["before publishing".to_string()],
        );
        assert!(text.contains("  Bash(cargo:*)\n  Read(//p/**)\n"), "{text}");
        assert!(text.contains(NOTHING_ELSE));
        assert!(text.contains(CHECKPOINTS_STILL_STOP));
        assert!(text.contains("  - before publishing\n"));
        let rules_at = text.find("Bash(cargo").unwrap_or(usize::MAX);
        assert!(rules_at < text.find(NOTHING_ELSE).unwrap_or(0));
    }

    #[test]
    fn render_lists_the_deny_rules_after_the_allow_rules() {
        let text = render(&grant(&["Read(//p/**)"]), &[]);
        let heading = text.find(&deny_heading(8)).unwrap_or(usize::MAX);
        assert!(
            text.find("Read(//p/**)").unwrap_or(usize::MAX) < heading,
            "{text}"
        );
        assert!(
            text.contains("(~/.ssh, ~/.aws, ~/.gnupg, ~/.sandgate)"),
            "{text}"
        );
        for rule in floor_rules() {
            let at = text.find(&format!("  {rule}\n")).unwrap_or(0);
            assert!(heading < at, "{rule}: {text}");
            assert!(at < text.find(NOTHING_ELSE).unwrap_or(0), "{rule}: {text}");
        }
        let none = render(
            &Grant {
                allow: set(&["Bash(x:*)"]),
                deny: BTreeSet::new(),
            },
            &[],
        );
        assert!(!none.contains("denies"), "{none}");
    }

    #[test]
    fn render_says_when_no_checkpoint_is_declared() {
        let text = render(&grant(&["Read(//p/**)"]), &[]);
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
            &grant(&[
                "Bash(cargo:*)",
                "Edit(//srv/loop/**)",
                "Read(//srv/loop/**)",
                "WebFetch(domain:claudemarketplaces.com)",
            ]),
            "loop.yaml",
        );
        assert!(text.contains("'^cargo( |$)'"), "{text}");
        assert!(
            text.contains(
                "    allow:\n      - '/srv/loop/**'  # Read(//srv/loop/**), Edit(//srv/loop/**)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("#   WebFetch(domain:claudemarketplaces.com)"),
            "{text}"
        );
        assert!(text.contains("built in"), "{text}");
        assert!(
            !text.contains("~/.ssh/**"),
            "the floor is not repeated: {text}"
        );
    }

    #[test]
    fn sandgate_format_keeps_a_file_rule_to_its_own_access() {
        let text = render_sandgate(&grant(&["Read(//r/**)", "Edit(//w/**)"]), "l");
        assert!(text.contains("  paths:\n    allow: []\n"), "{text}");
        assert!(
            text.contains("    read:\n      allow:\n        - '/r/**'  # Read(//r/**)\n"),
            "{text}"
        );
        assert!(
            text.contains("    write:\n      allow:\n        - '/w/**'  # Edit(//w/**)\n"),
            "{text}"
        );
    }
}
