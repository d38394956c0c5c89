//! The documentation template and the loop schema stay in step with `required`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sandgate_grant::merge::is_broad_file_rule;
use sandgate_grant::rules::{floor_rules, shape_of, RULE_SHAPES};
use sandgate_grant::{parse_str, required, LoopDir};
use serde_json::Value;

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

fn read_json(rel: &str) -> Value {
    let text = std::fs::read_to_string(repo_file(rel)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every rule string the template documents, in its sections and its allow list.
fn documented_rules(template: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for section in template["$sections"].as_object().unwrap().values() {
        for rule in section["rules"].as_array().unwrap() {
            out.insert(rule.as_str().unwrap().to_string());
        }
    }
    for rule in template["permissions"]["allow"].as_array().unwrap() {
        out.insert(rule.as_str().unwrap().to_string());
    }
    out
}

const EVERY_SOURCE: &str = "providers:\n  providers:\n    - command: claude\n\
    validations:\n  - detector:\n      script: {command: ./scripts/check.sh, args: [x]}\n\
    \x20 - detector:\n      manual: a person looks\n\
    skills:\n  acquisition_order: [installed, marketplace]\n\
    constraints:\n  human_checkpoint: [before publishing]\n";

#[test]
fn the_template_documents_every_kind_of_rule_required_can_emit() {
    let template = read_json("templates/permissions.template.json");
    let documented = documented_rules(&template);
    for shape in RULE_SHAPES {
        assert!(documented.contains(shape), "template lacks `{shape}`");
    }
    let config = parse_str(EVERY_SOURCE, Path::new("loop.yaml")).unwrap();
    let grant = required(&config, &loop_dir()).allow;
    assert_eq!(grant.len(), 6, "{grant:?}");
    for rule in &grant {
        assert!(
            documented.contains(shape_of(rule)),
            "`{rule}` (shape `{}`) is not documented in the template",
            shape_of(rule)
        );
    }
}

fn loop_dir() -> LoopDir {
    LoopDir::new(Path::new("/home/me/loop"), Path::new("/home/me")).unwrap()
}

fn strings(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// The deny list and the floor section are the floor's rules exactly, and
/// nothing the template allows gives a file tool every path.
#[test]
fn the_template_denies_the_floor_and_allows_no_file_tool_everywhere() {
    let template = read_json("templates/permissions.template.json");
    assert_eq!(strings(&template["permissions"]["deny"]), floor_rules());
    assert_eq!(
        strings(&template["$sections"]["floor"]["rules"]),
        floor_rules()
    );
    let config = parse_str(EVERY_SOURCE, Path::new("loop.yaml")).unwrap();
    assert_eq!(required(&config, &loop_dir()).deny, floor_rules());
    for rule in strings(&template["permissions"]["allow"]) {
        assert!(!is_broad_file_rule(&rule), "`{rule}` reaches every path");
    }
}

#[test]
fn the_template_says_it_is_the_shape_and_lists_what_still_stops() {
    let template = read_json("templates/permissions.template.json");
    let comment = template["$comment"].as_str().unwrap();
    assert!(comment.contains("the shape, not the answer"), "{comment}");
    let stops: Vec<&str> = template["$still_stops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let all = stops.join("\n").to_lowercase();
    for needle in [
        "human_checkpoint",
        "publishing",
        "sending",
        "deleting",
        "paying",
        "generated skill",
        "proposals/",
    ] {
        assert!(all.contains(needle), "$still_stops lacks {needle}: {all}");
    }
}

#[test]
fn the_schema_names_exactly_the_keys_the_parser_accepts() {
    let schema = read_json("schema/loop.schema.json");
    assert_eq!(schema["additionalProperties"], Value::Bool(false));
    let top: BTreeSet<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        top,
        BTreeSet::from(["constraints", "providers", "skills", "validations"])
    );
    // Every top-level key of the schema is accepted by the parser ...
    let config = parse_str(EVERY_SOURCE, Path::new("loop.yaml"));
    assert!(config.is_ok());
    // ... and a key the schema does not name is refused.
    assert!(parse_str("tools: []\n", Path::new("loop.yaml")).is_err());
    let order = &schema["properties"]["skills"]["properties"]["acquisition_order"]["items"]["enum"];
    assert_eq!(order, &serde_json::json!(["installed", "marketplace"]));
}

#[test]
fn the_documented_example_is_a_valid_loop_config() {
    let readme = std::fs::read_to_string(repo_file("docs/grant.md")).unwrap();
    let start = readme
        .find("```yaml\n# loop.yaml")
        .expect("docs/grant.md shows a loop config")
        + "```yaml\n".len();
    let end = start + readme[start..].find("```").unwrap();
    let config = parse_str(&readme[start..end], Path::new("docs/grant.md")).unwrap();
    let grant = required(&config, &loop_dir()).allow;
    assert!(grant.contains("Bash(claude:*)"), "{grant:?}");
    assert!(grant.contains("Bash(./scripts/lint.sh:*)"), "{grant:?}");
    assert!(
        grant.contains("WebFetch(domain:claudemarketplaces.com)"),
        "{grant:?}"
    );
    assert_eq!(config.checkpoints().len(), 2);
}
