//! Properties of the grant and the merge over generated configs and settings.

use std::collections::BTreeSet;
use std::path::Path;

use proptest::prelude::*;
use sandgate_grant::rules::{file_rules, floor_rules, MARKETPLACE_FETCH, MARKETPLACE_NPX};
use sandgate_grant::{merge_into, parse_str, required, Grant, LoopDir};

fn program() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("cargo".to_string()),
        Just("claude".to_string()),
        Just("./scripts/check.sh".to_string()),
        "[a-z][a-z0-9_.-]{0,8}",
        "\\./[a-z]{1,5}/[a-z]{1,5}\\.sh",
    ]
}

fn loop_yaml(providers: &[String], detectors: &[String], order: &[bool]) -> String {
    let mut text = String::from("providers:\n  providers:\n");
    if providers.is_empty() {
        text = String::from("providers:\n  providers: []\n");
    }
    for p in providers {
        text.push_str(&format!("    - command: '{p}'\n"));
    }
    text.push_str("validations:\n");
    if detectors.is_empty() {
        text = text.replace("validations:\n", "validations: []\n");
    }
    for d in detectors {
        text.push_str(&format!(
            "  - detector:\n      script: {{command: '{d}', args: [x]}}\n"
        ));
    }
    let order: Vec<&str> = order
        .iter()
        .map(|m| if *m { "marketplace" } else { "installed" })
        .collect();
    text.push_str(&format!(
        "skills:\n  acquisition_order: [{}]\n",
        order.join(", ")
    ));
    text
}

proptest! {
    #[test]
    fn the_grant_is_exactly_what_the_config_needs(
        providers in proptest::collection::vec(program(), 0..5),
        detectors in proptest::collection::vec(program(), 0..5),
        order in proptest::collection::vec(any::<bool>(), 0..4),
    ) {
        let text = loop_yaml(&providers, &detectors, &order);
        let config = parse_str(&text, Path::new("loop.yaml")).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let dir = LoopDir::new(Path::new("/home/me/loop"), Path::new("/home/me")).unwrap();
        let grant = required(&config, &dir);
        prop_assert_eq!(&grant.deny, &floor_rules());
        let grant = grant.allow;
        let listed: Vec<&String> = grant.iter().collect();
        let mut sorted = listed.clone();
        sorted.sort();
        sorted.dedup();
        prop_assert_eq!(&listed, &sorted);

        let mut expected: BTreeSet<String> = file_rules(&dir).into_iter().collect();
        for p in providers.iter().chain(&detectors) {
            expected.insert(format!("Bash({p}:*)"));
        }
        if order.contains(&true) {
            expected.insert(MARKETPLACE_NPX.to_string());
            expected.insert(MARKETPLACE_FETCH.to_string());
        }
        prop_assert_eq!(grant, expected);
    }

    #[test]
    fn parsing_arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = parse_str(&text, Path::new("loop.yaml"));
    }

    #[test]
    fn merging_keeps_everything_and_a_second_merge_changes_nothing(
        existing in proptest::collection::vec("[A-Za-z(): *]{1,12}", 0..6),
        rules in proptest::collection::btree_set("[A-Za-z(): *]{1,12}", 0..6),
        existing_deny in proptest::collection::vec("[A-Za-z(): *~/.]{1,12}", 0..6),
        deny in proptest::collection::btree_set("[A-Za-z(): *~/.]{1,12}", 0..6),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let original = serde_json::json!({"theme": "light", "permissions": {"allow": existing, "deny": existing_deny}});
        std::fs::write(&path, original.to_string()).unwrap();
        let grant = Grant { allow: rules.clone(), deny: deny.clone() };
        let first = merge_into(&path, &grant, false).unwrap();
        let after: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let allow: Vec<String> = after["permissions"]["allow"]
            .as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
        prop_assert_eq!(&allow[..existing.len()], &existing[..]);
        for rule in &rules {
            prop_assert!(allow.contains(rule));
        }
        let unique: BTreeSet<&String> = existing.iter().collect();
        prop_assert_eq!(allow.len(), existing.len() + rules.iter().filter(|r| !unique.contains(r)).count());
        prop_assert_eq!(&after["theme"], "light");
        let denied: Vec<String> = after["permissions"]["deny"]
            .as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
        prop_assert_eq!(&denied[..existing_deny.len()], &existing_deny[..]);
        let unique: BTreeSet<&String> = existing_deny.iter().collect();
        prop_assert_eq!(denied.len(), existing_deny.len() + deny.iter().filter(|r| !unique.contains(r)).count());
        for rule in &deny {
            prop_assert!(denied.contains(rule));
        }

        let bytes = std::fs::read(&path).unwrap();
        let second = merge_into(&path, &grant, false).unwrap();
        prop_assert_eq!(second.added, 0);
        prop_assert_eq!(second.required, first.required);
        prop_assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }
}
