//! `merge_into` against real files: every case the settings file can be in.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use sandgate_grant::{merge_into, Grant, MergeError};
use serde_json::{json, Value};

fn rules(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A grant of allow rules only: the merge treats rule text as opaque.
fn grant() -> Grant {
    Grant {
        allow: rules(&["Bash(cargo:*)", "Read", "Write"]),
        deny: BTreeSet::new(),
    }
}

/// A grant with deny rules too.
fn with_deny() -> Grant {
    Grant {
        allow: rules(&["Bash(cargo:*)", "Read(//p/**)"]),
        deny: rules(&["Edit(~/.ssh/**)", "Read(~/.ssh/**)"]),
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_missing_file_is_created_with_its_parent_dirs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".claude/nested/settings.local.json");
    let outcome = merge_into(&path, &grant(), false).unwrap();
    assert_eq!(outcome.required, 3);
    assert_eq!(outcome.added, 3);
    assert!(outcome.written);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.ends_with("}\n"), "trailing newline: {text:?}");
    assert!(
        text.contains("\n  \"permissions\": {\n"),
        "pretty-printed: {text}"
    );
    assert_eq!(text, outcome.json);
    assert_eq!(
        read_json(&path),
        json!({"permissions": {"allow": ["Bash(cargo:*)", "Read", "Write"]}})
    );
}

#[test]
fn merging_preserves_existing_rules_and_unrelated_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.local.json");
    fs::write(
        &path,
        r#"{"theme": "light", "permissions": {"allow": ["Skill(claude-api)", "Read"], "deny": ["Bash(rm:*)"]}}"#,
    )
    .unwrap();
    let outcome = merge_into(&path, &grant(), false).unwrap();
    assert_eq!(outcome.required, 3);
    assert_eq!(outcome.added, 2);
    let merged = read_json(&path);
    assert_eq!(merged["theme"], "light");
    assert_eq!(merged["permissions"]["deny"], json!(["Bash(rm:*)"]));
    assert_eq!(
        merged["permissions"]["allow"],
        json!(["Skill(claude-api)", "Read", "Bash(cargo:*)", "Write"])
    );
}

#[test]
fn permissions_and_allow_are_created_when_absent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    fs::write(&path, r#"{"theme": "dark"}"#).unwrap();
    merge_into(&path, &grant(), false).unwrap();
    assert_eq!(
        read_json(&path)["permissions"]["allow"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    fs::write(&path, r#"{"permissions": {"defaultMode": "plan"}}"#).unwrap();
    merge_into(&path, &grant(), false).unwrap();
    let merged = read_json(&path);
    assert_eq!(merged["permissions"]["defaultMode"], "plan");
    assert_eq!(merged["permissions"]["allow"].as_array().unwrap().len(), 3);
}

#[test]
fn a_second_identical_run_reports_the_same_count_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let first = merge_into(&path, &grant(), false).unwrap();
    let before = fs::read(&path).unwrap();
    let modified = fs::metadata(&path).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let second = merge_into(&path, &grant(), false).unwrap();
    assert_eq!(first.required, second.required);
    assert_eq!(second.added, 0);
    assert!(!second.written);
    assert_eq!(fs::read(&path).unwrap(), before);
    assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), modified);
    assert_eq!(second.json, first.json);
}

#[test]
fn permissions_that_is_not_an_object_is_an_error_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    for (original, found) in [
        (r#"{"permissions": ["Read"]}"#, "an array"),
        (r#"{"permissions": "all"}"#, "a string"),
        (r#"{"permissions": null}"#, "null"),
    ] {
        fs::write(&path, original).unwrap();
        for force in [false, true] {
            let err = merge_into(&path, &grant(), force).unwrap_err();
            assert!(
                matches!(err, MergeError::PermissionsNotObject { .. }),
                "{err}"
            );
            let shown = err.to_string();
            assert!(
                shown.contains("`permissions`") && shown.contains(found),
                "{shown}"
            );
            assert_eq!(fs::read_to_string(&path).unwrap(), original);
        }
    }
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no backup, no temp file"
    );
}

#[test]
fn allow_that_is_not_an_array_is_an_error_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let original = r#"{"permissions": {"allow": "Read"}}"#;
    fs::write(&path, original).unwrap();
    let err = merge_into(&path, &grant(), true).unwrap_err();
    assert!(
        matches!(err, MergeError::ListNotArray { list: "allow", .. }),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), original);
}

#[test]
fn deny_rules_are_merged_like_allow_rules() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let outcome = merge_into(&path, &with_deny(), false).unwrap();
    assert_eq!((outcome.required, outcome.allow, outcome.deny), (4, 2, 2));
    assert_eq!(outcome.added, 4);
    assert_eq!(
        read_json(&path),
        json!({"permissions": {
            "allow": ["Bash(cargo:*)", "Read(//p/**)"],
            "deny": ["Edit(~/.ssh/**)", "Read(~/.ssh/**)"],
        }})
    );

    // Existing deny rules stay first; one the grant shares is not repeated;
    // allow, ask and other keys are untouched.
    fs::write(
        &path,
        r#"{"permissions": {"deny": ["Bash(rm:*)", "Read(~/.ssh/**)", 7], "ask": ["Bash(git push:*)"]}, "model": "opus"}"#,
    )
    .unwrap();
    let outcome = merge_into(&path, &with_deny(), false).unwrap();
    assert_eq!(outcome.added, 3);
    let merged = read_json(&path);
    assert_eq!(
        merged["permissions"]["deny"],
        json!(["Bash(rm:*)", "Read(~/.ssh/**)", 7, "Edit(~/.ssh/**)"])
    );
    assert_eq!(merged["permissions"]["ask"], json!(["Bash(git push:*)"]));
    assert_eq!(merged["model"], "opus");

    // Idempotent.
    let bytes = fs::read(&path).unwrap();
    let again = merge_into(&path, &with_deny(), false).unwrap();
    assert_eq!((again.added, again.written), (0, false));
    assert_eq!(fs::read(&path).unwrap(), bytes);
}

#[test]
fn deny_that_is_not_an_array_is_an_error_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    for (original, found) in [
        (
            r#"{"permissions": {"deny": "Read(~/.ssh/**)"}}"#,
            "a string",
        ),
        (
            r#"{"permissions": {"allow": [], "deny": {"x": 1}}}"#,
            "an object",
        ),
        (
            r#"{"permissions": {"deny": null, "allow": "x"}}"#,
            "a string",
        ),
    ] {
        fs::write(&path, original).unwrap();
        for force in [false, true] {
            let err = merge_into(&path, &with_deny(), force).unwrap_err();
            assert!(matches!(err, MergeError::ListNotArray { .. }), "{err}");
            let shown = err.to_string();
            assert!(
                shown.contains(found) && shown.contains("nothing was written"),
                "{shown}"
            );
            assert_eq!(fs::read_to_string(&path).unwrap(), original);
        }
    }
    fs::write(&path, r#"{"permissions": {"deny": 3}}"#).unwrap();
    let shown = merge_into(&path, &with_deny(), false)
        .unwrap_err()
        .to_string();
    assert!(
        shown.contains("`permissions.deny`") && shown.contains("a number"),
        "{shown}"
    );
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no backup, no temp file"
    );
}

#[test]
fn rules_that_give_a_file_tool_every_path_are_reported_not_removed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    fs::write(
        &path,
        r#"{"permissions": {"allow": ["Read", "Edit(//**)", "Bash(ls)", "Read(./x/**)"]}}"#,
    )
    .unwrap();
    let outcome = merge_into(&path, &with_deny(), false).unwrap();
    assert_eq!(outcome.broad, ["Read", "Edit(//**)"]);
    let allow = read_json(&path)["permissions"]["allow"].clone();
    assert_eq!(allow[0], "Read");
    assert_eq!(allow[1], "Edit(//**)");
    let clean = merge_into(&dir.path().join("t.json"), &with_deny(), false).unwrap();
    assert!(clean.broad.is_empty());
}

#[test]
fn unparseable_json_is_refused_with_the_parse_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let original = "{\n  \"theme\": \"light\",\n  oops\n}\n";
    fs::write(&path, original).unwrap();
    let err = merge_into(&path, &grant(), false).unwrap_err();
    let shown = err.to_string();
    assert!(matches!(err, MergeError::Parse { .. }), "{shown}");
    assert!(
        shown.contains("line 3"),
        "the parser's location is shown: {shown}"
    );
    assert!(shown.contains("--force"), "{shown}");
    assert_eq!(fs::read_to_string(&path).unwrap(), original);
    assert!(!dir.path().join("s.json.bak").exists());
}

#[test]
fn force_keeps_a_backup_of_unparseable_json_then_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let original = "{ not json";
    fs::write(&path, original).unwrap();
    let outcome = merge_into(&path, &grant(), true).unwrap();
    let backup = dir.path().join("s.json.bak");
    assert_eq!(outcome.backup.as_deref(), Some(backup.as_path()));
    assert_eq!(fs::read_to_string(&backup).unwrap(), original);
    assert_eq!(
        read_json(&path)["permissions"]["allow"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    // A second forced recovery does not overwrite the first backup.
    fs::write(&path, "[also not an object]").unwrap();
    let outcome = merge_into(&path, &grant(), true).unwrap();
    let second = dir.path().join("s.json.bak.1");
    assert_eq!(outcome.backup.as_deref(), Some(second.as_path()));
    assert_eq!(fs::read_to_string(&backup).unwrap(), original);
}

#[test]
fn a_root_that_is_not_an_object_is_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    for (original, found) in [
        ("[1, 2]", "an array"),
        ("\"x\"", "a string"),
        ("42", "a number"),
    ] {
        fs::write(&path, original).unwrap();
        let err = merge_into(&path, &grant(), false).unwrap_err();
        assert!(matches!(err, MergeError::RootNotObject { .. }), "{err}");
        assert!(err.to_string().contains(found), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), original);
    }
    let outcome = merge_into(&path, &grant(), true).unwrap();
    assert_eq!(fs::read_to_string(outcome.backup.unwrap()).unwrap(), "42");
    assert_eq!(
        read_json(&path)["permissions"]["allow"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn an_empty_file_is_treated_as_no_settings() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    fs::write(&path, "  \n").unwrap();
    let outcome = merge_into(&path, &grant(), false).unwrap();
    assert_eq!(outcome.added, 3);
    assert!(outcome.backup.is_none());
}

#[test]
fn non_string_entries_in_allow_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    fs::write(&path, r#"{"permissions": {"allow": [{"odd": 1}, "Read"]}}"#).unwrap();
    merge_into(&path, &grant(), false).unwrap();
    assert_eq!(
        read_json(&path)["permissions"]["allow"],
        json!([{"odd": 1}, "Read", "Bash(cargo:*)", "Write"])
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_settings_file_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    let link = dir.path().join("link.json");
    fs::write(&real, "{}").unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    merge_into(&link, &grant(), false).unwrap();
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        read_json(&real)["permissions"]["allow"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn the_file_keeps_its_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    fs::write(
        &path,
        r#"{"theme": "light", "env": {"ZED": "1", "ALPHA": "2"}, "permissions": {"deny": [], "allow": ["Skill(claude-api)"], "ask": []}, "model": "opus"}"#,
    )
    .unwrap();
    merge_into(&path, &grant(), false).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    let order = [
        "\"theme\"",
        "\"env\"",
        "\"ZED\"",
        "\"ALPHA\"",
        "\"permissions\"",
        "\"deny\"",
        "\"allow\"",
        "\"ask\"",
        "\"model\"",
    ];
    let positions: Vec<usize> = order.iter().map(|k| text.find(k).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
}
