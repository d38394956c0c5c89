//! The grant: the Claude Code permission rules a loop config needs, and nothing else.

use std::collections::BTreeSet;

use crate::config::{AcquisitionSource, Detector, LoopConfig};

/// The file tools the loop uses inside its own directory; always granted.
pub const CORE_TOOLS: [&str; 5] = ["Read", "Write", "Edit", "Glob", "Grep"];

/// Running the skills marketplace client.
pub const MARKETPLACE_NPX: &str = "Bash(npx skills:*)";

/// Fetching from the skills marketplace.
pub const MARKETPLACE_FETCH: &str = "WebFetch(domain:claudemarketplaces.com)";

/// How a program rule is written in the documentation template.
pub const PROGRAM_SHAPE: &str = "Bash(<program>:*)";

/// Every shape of rule [`required`] can emit; a program rule appears as [`PROGRAM_SHAPE`].
pub const RULE_SHAPES: [&str; 8] = [
    "Read",
    "Write",
    "Edit",
    "Glob",
    "Grep",
    PROGRAM_SHAPE,
    MARKETPLACE_NPX,
    MARKETPLACE_FETCH,
];

/// The grant for `config`: sorted and duplicate-free because it is a set.
///
/// Every consumer (the preflight, `--write`, `--format sandgate`, the review page)
/// calls this one function, so a new rule source reaches all of them at once.
pub fn required(config: &LoopConfig) -> BTreeSet<String> {
    let mut rules = BTreeSet::new();
    for provider in &config.providers.providers {
        rules.insert(bash_rule(&provider.command.value));
    }
    for validation in &config.validations {
        match &validation.detector {
            Detector::Script(script) => {
                rules.insert(bash_rule(&script.command.value));
            }
            Detector::Manual(_) => {}
        }
    }
    if config
        .skills
        .acquisition_order
        .contains(&AcquisitionSource::Marketplace)
    {
        rules.insert(MARKETPLACE_NPX.to_string());
        rules.insert(MARKETPLACE_FETCH.to_string());
    }
    rules.extend(CORE_TOOLS.iter().map(|t| t.to_string()));
    rules
}

/// `Bash(<program>:*)`: the program with any arguments.
pub fn bash_rule(program: &str) -> String {
    format!("Bash({program}:*)")
}

/// The command prefix of a `Bash(<prefix>:*)` rule, if `rule` is one.
pub fn bash_prefix(rule: &str) -> Option<&str> {
    rule.strip_prefix("Bash(")?.strip_suffix(":*)")
}

/// The documented shape of `rule`: a loop program's rule becomes [`PROGRAM_SHAPE`].
pub fn shape_of(rule: &str) -> &str {
    match bash_prefix(rule) {
        Some(_) if rule != MARKETPLACE_NPX => PROGRAM_SHAPE,
        _ => rule,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::parse_str;

    fn cfg(extra: &str) -> LoopConfig {
        let text = format!(
            "providers:\n  providers:\n    - command: claude\n    - command: cargo\n\
             validations:\n  - detector:\n      script: {{command: cargo, args: [test]}}\n\
             \x20 - detector:\n      script: {{command: ./scripts/lint.sh}}\n\
             \x20 - detector:\n      manual: look at the page\n{extra}"
        );
        match parse_str(&text, Path::new("loop.yaml")) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn marketplace_rules_appear_only_when_the_order_reaches_the_marketplace() {
        let with = required(&cfg(
            "skills:\n  acquisition_order: [installed, marketplace]\n",
        ));
        assert!(with.contains(MARKETPLACE_NPX));
        assert!(with.contains(MARKETPLACE_FETCH));

        for order in ["[installed]", "[]"] {
            let without = required(&cfg(&format!("skills:\n  acquisition_order: {order}\n")));
            assert!(!without.contains(MARKETPLACE_NPX), "{order}");
            assert!(!without.contains(MARKETPLACE_FETCH), "{order}");
            assert!(!without
                .iter()
                .any(|r| r.contains("npx") || r.contains("WebFetch")));
        }
        assert!(!required(&cfg("")).contains(MARKETPLACE_FETCH));
    }

    #[test]
    fn provider_and_detector_sharing_a_program_give_one_rule() {
        let rules = required(&cfg(""));
        assert_eq!(rules.iter().filter(|r| *r == "Bash(cargo:*)").count(), 1);
        let expected: BTreeSet<String> = [
            "Bash(./scripts/lint.sh:*)",
            "Bash(cargo:*)",
            "Bash(claude:*)",
            "Edit",
            "Glob",
            "Grep",
            "Read",
            "Write",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(rules, expected);
    }

    #[test]
    fn the_grant_is_sorted_and_has_no_duplicates() {
        let rules: Vec<String> = required(&cfg(
            "skills:\n  acquisition_order: [marketplace, marketplace, installed]\n",
        ))
        .into_iter()
        .collect();
        let mut sorted = rules.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(rules, sorted);
        assert_eq!(rules.len(), 10);
    }

    #[test]
    fn core_tools_are_always_granted() {
        let bare = match parse_str("constraints:\n  human_checkpoint: []\n", Path::new("l")) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        let rules = required(&bare);
        assert_eq!(rules.len(), 5);
        for tool in CORE_TOOLS {
            assert!(rules.contains(tool));
        }
    }

    #[test]
    fn every_emitted_rule_has_a_documented_shape() {
        let rules = required(&cfg("skills:\n  acquisition_order: [marketplace]\n"));
        for rule in &rules {
            assert!(RULE_SHAPES.contains(&shape_of(rule)), "{rule}");
        }
        assert_eq!(shape_of("Bash(cargo:*)"), PROGRAM_SHAPE);
        assert_eq!(shape_of(MARKETPLACE_NPX), MARKETPLACE_NPX);
    }
}
