//! The shipped JSON Schema and the policy model agree on the example files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use sandgate_policy::load::parse_policy;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(repo().join("schema/permissions.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

fn yaml_to_json(text: &str) -> serde_json::Value {
    serde_saphyr::from_str(text).unwrap()
}

#[test]
fn every_example_validates_against_the_schema_and_parses() {
    let validator = validator();
    let mut seen = 0;
    for entry in std::fs::read_dir(repo().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.contains("permissions") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let value = yaml_to_json(&text);
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{name} does not validate: {errors:?}");
        parse_policy(&text, &path).unwrap_or_else(|p| panic!("{name} does not parse: {p}"));
        seen += 1;
    }
    assert!(seen >= 3, "expected the example policy files, found {seen}");
}

#[test]
fn schema_and_model_both_reject_unknown_keys_and_wrong_types() {
    let validator = validator();
    for bad in [
        "permissions:\n  paths:\n    deni: []\n",
        "permissions:\n  sandbox: 3\n",
        "permissions:\n  commands:\n    allow: git\n",
        "permission:\n  sandbox: true\n",
        "permissions:\n  exec:\n    isolation:\n      mode: docker\n",
    ] {
        let value = yaml_to_json(bad);
        assert!(!validator.is_valid(&value), "schema accepted {bad:?}");
        assert!(
            parse_policy(bad, Path::new("p.yaml")).is_err(),
            "model accepted {bad:?}"
        );
    }
}
