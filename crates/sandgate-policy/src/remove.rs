//! Taking a rule out of a policy file: `sandgate policy remove`.
//!
//! The reverse of [`crate::persist::append_rule`], with the same guarantees:
//! the file is edited as a lossless syntax tree (comments, the other rules and
//! their formatting stay as they were), an exclusive lock on the sidecar lock
//! file is held for the whole read-modify-write, and the file is replaced
//! atomically. Before anything is written the edited text is parsed again: it
//! must hold exactly the old data minus that one rule, or nothing is written.
//! A rule that is not in the list is an error, never a silent success.

use std::path::Path;
use std::str::FromStr;

use serde_json::Value;

use crate::persist::{
    first_line, invalid, parse_checked, read_existing, remove_stale_temp_files, replace_atomically,
    with_locked_file, Effect, PersistError, Section,
};

/// Remove the first `rule` of `permissions.<section>.<effect>` from the
/// policy file `file`; returns the line it stood on. A symlinked policy file
/// is followed, so the link stays a link and its target is replaced.
pub fn remove_rule(
    file: &Path,
    section: Section,
    effect: Effect,
    rule: &str,
) -> Result<u32, PersistError> {
    if rule.is_empty() {
        return Err(PersistError::EmptyRule);
    }
    let absent = |file: &Path| PersistError::Absent {
        path: file.to_path_buf(),
        rule: rule.to_string(),
        section: section.key(),
        list: effect.key(),
    };
    with_locked_file(
        file,
        |file, dir| {
            if dir.is_dir() {
                Ok(())
            } else {
                Err(absent(file))
            }
        },
        |file, dir| {
            let Some((text, mode)) = read_existing(file)? else {
                return Err(absent(file));
            };
            let (edited, line) = remove_rule_from_text(&text, file, section, effect, rule)?;
            remove_stale_temp_files(file, dir);
            replace_atomically(file, dir, &edited, mode)?;
            Ok(line)
        },
    )
}

/// Remove the first `rule` of the list from policy text in memory, keeping
/// comments and formatting; returns the new text and the line the rule stood
/// on. Pure: no IO. The result is verified to parse to the original data
/// minus that rule.
pub fn remove_rule_from_text(
    text: &str,
    path: &Path,
    section: Section,
    effect: Effect,
    rule: &str,
) -> Result<(String, u32), PersistError> {
    let absent = || PersistError::Absent {
        path: path.to_path_buf(),
        rule: rule.to_string(),
        section: section.key(),
        list: effect.key(),
    };
    let unsafe_edit = || PersistError::UnsafeRemoval {
        path: path.to_path_buf(),
        rule: rule.to_string(),
        section: section.key(),
        list: effect.key(),
    };
    let before = parse_checked(text, path)?;
    let file = crate::load::parse_policy(text, path).map_err(|p| invalid(path, p.message))?;
    let Some((index, line)) = section
        .list(effect, &file)
        .iter()
        .enumerate()
        .find(|(_, r)| r.value == rule)
        .map(|(i, r)| (i, r.referenced.line() as u32))
    else {
        return Err(absent());
    };
    let expected = expected_without(&before, section, effect, index).ok_or_else(unsafe_edit)?;
    let edited = edit_tree(text, path, section, effect, index, rule)?.ok_or_else(unsafe_edit)?;
    let after = parse_checked(&edited, path).map_err(|_| unsafe_edit())?;
    if after != expected {
        return Err(unsafe_edit());
    }
    Ok((edited, line))
}

/// The data the file must hold after the removal of item `index`.
fn expected_without(
    before: &Value,
    section: Section,
    effect: Effect,
    index: usize,
) -> Option<Value> {
    let mut value = before.clone();
    let mut node = value.get_mut("permissions")?;
    for key in section.keys() {
        node = node.get_mut(key)?;
    }
    let Value::Array(items) = node.get_mut(effect.key())? else {
        return None;
    };
    (index < items.len()).then(|| items.remove(index))?;
    Some(value)
}

/// The lossless edit; `None` when the tree does not hold the rule where the
/// data does.
fn edit_tree(
    text: &str,
    path: &Path,
    section: Section,
    effect: Effect,
    index: usize,
    rule: &str,
) -> Result<Option<String>, PersistError> {
    use yaml_edit::YamlFile;

    let file = YamlFile::from_str(text).map_err(|e| invalid(path, first_line(&e.to_string())))?;
    let Some(doc) = file.documents().next() else {
        return Ok(None);
    };
    let Some(mut map) = doc.as_mapping().and_then(|m| m.get_mapping("permissions")) else {
        return Ok(None);
    };
    for key in section.keys() {
        match map.get_mapping(key) {
            Some(m) => map = m,
            None => return Ok(None),
        }
    }
    let Some(list) = map.get_sequence(effect.key()) else {
        return Ok(None);
    };
    let holds_rule = list
        .get(index)
        .and_then(|n| n.as_scalar().map(|s| s.as_string()))
        .is_some_and(|s| s == rule);
    if !holds_rule {
        return Ok(None);
    }
    list.remove(index);
    let mut out = file.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("/p.yaml")
    }

    const TEXT: &str = "\
# my policy — keep this comment
permissions:
  paths:
    deny:  [\"/etc/**\", \"/srv/**\"]   # flow list
    allow:
      - ~/projects/**   # mine
      - ./**
    read:
      allow:
        - ~/docs/**
  commands:
    # git is fine
    allow:
      - '^git( |$)'   # trailing
      - '^ls( |$)'
";

    #[test]
    fn removes_one_rule_and_keeps_everything_else() {
        let (text, line) =
            remove_rule_from_text(TEXT, p(), Section::Commands, Effect::Allow, "^git( |$)")
                .unwrap();
        assert_eq!(line, 14);
        assert!(
            text.starts_with("# my policy — keep this comment\n"),
            "{text}"
        );
        assert!(text.contains("# git is fine"), "{text}");
        assert!(!text.contains("^git"), "{text}");
        assert!(text.contains("'^ls( |$)'"), "{text}");
        assert!(text.contains("- ~/projects/**   # mine"), "{text}");

        let (text, _) =
            remove_rule_from_text(TEXT, p(), Section::Paths, Effect::Deny, "/srv/**").unwrap();
        assert!(text.contains("deny:  [\"/etc/**\"]"), "{text}");
        let (text, line) =
            remove_rule_from_text(TEXT, p(), Section::PathsRead, Effect::Allow, "~/docs/**")
                .unwrap();
        assert_eq!(line, 10);
        let file = crate::load::parse_policy(&text, p()).unwrap();
        assert!(file.permissions.paths.read.allow.is_empty());
        assert_eq!(file.permissions.paths.allow.len(), 2);
    }

    #[test]
    fn a_rule_that_is_not_there_is_an_error_naming_the_list() {
        for (section, effect, rule) in [
            (Section::Commands, Effect::Deny, "^git( |$)"),
            (Section::Paths, Effect::Allow, "~/docs/**"),
            (Section::PathsWrite, Effect::Allow, "./**"),
            (Section::Commands, Effect::Allow, "^git"),
        ] {
            let e = remove_rule_from_text(TEXT, p(), section, effect, rule).unwrap_err();
            assert!(matches!(e, PersistError::Absent { .. }), "{e}");
            let text = e.to_string();
            assert!(
                text.contains(&format!("permissions.{}.{}", section.key(), effect.key())),
                "{text}"
            );
        }
    }

    #[test]
    fn removes_from_the_file_under_the_lock() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("permissions.yaml");
        std::fs::write(&file, TEXT).unwrap();
        let line = remove_rule(&file, Section::Paths, Effect::Allow, "./**").unwrap();
        assert_eq!(line, 7);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains("- ./**"), "{text}");
        let again = remove_rule(&file, Section::Paths, Effect::Allow, "./**").unwrap_err();
        assert!(matches!(again, PersistError::Absent { .. }), "{again}");
        let missing = tmp.path().join("none/permissions.yaml");
        let e = remove_rule(&missing, Section::Paths, Effect::Allow, "./**").unwrap_err();
        assert!(matches!(e, PersistError::Absent { .. }), "{e}");
        assert!(!missing.exists());
    }
}
