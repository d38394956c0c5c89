//! `sandgate import claude`: Claude Code `permissions` → sandgate rules.
//!
//! | Claude Code | sandgate |
//! | --- | --- |
//! | `Bash(cmd)` | `^cmd$` (escaped) |
//! | `Bash(prefix:*)` | allow: `^prefix(\s\|$)`; deny: `^prefix` |
//! | `Bash(a * b)` | `^a .* b$` |
//! | `Bash`, `Bash(*)` | `^` (every command) |
//! | `Read/Edit/Write(//abs)` | `/abs` |
//! | `…(~/x)` | `~/x` |
//! | `…(/x)` | `<directory of the settings file>/x` |
//! | `…(./x)`, `…(x/y)` | `./x`, `./x/y` (against the CWD) |
//! | `…(x)` (no `/`) | `./**/x` (gitignore: at any depth) |
//!
//! `Read(…)` rules go to `paths.read.allow` / `paths.read.deny`, and
//! `Edit`, `Write`, `MultiEdit` and `NotebookEdit` rules to
//! `paths.write.allow` / `paths.write.deny`: each keeps the one access it
//! is about, as in Claude Code. Every `ask` rule (sandgate asks for whatever
//! no allow rule matches) is listed as not converted, with why.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

/// A converted rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Converted {
    /// `paths.read`, `paths.write` or `commands`.
    pub section: &'static str,
    /// `deny` or `allow`.
    pub list: &'static str,
    /// The sandgate rule.
    pub rule: String,
    /// The Claude Code rule it came from.
    pub from: String,
}

/// A rule that was not converted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// `allow`, `ask` or `deny`.
    pub list: String,
    /// The Claude Code rule.
    pub rule: String,
    /// Why it was not converted.
    pub reason: String,
}

/// The result of a conversion.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Import {
    /// The converted rules, in the order found.
    pub rules: Vec<Converted>,
    /// The rules that were not converted.
    pub skipped: Vec<Skipped>,
}

/// Convert the `permissions` block of a Claude Code settings file. `base` is
/// the directory `/x` rules are relative to (the settings file's directory).
pub fn convert(settings: &str, base: &Path) -> Result<Import, String> {
    let value: Value = serde_json::from_str(settings)
        .map_err(|e| format!("the settings file is not valid JSON: {e}"))?;
    let Some(permissions) = value.get("permissions") else {
        return Err("the settings file has no `permissions` block".into());
    };
    let Value::Object(permissions) = permissions else {
        return Err("`permissions` is not an object".into());
    };
    let mut import = Import::default();
    for list in ["deny", "ask", "allow"] {
        let Some(rules) = permissions.get(list) else {
            continue;
        };
        let Value::Array(rules) = rules else {
            return Err(format!("`permissions.{list}` is not an array"));
        };
        for rule in rules {
            let Value::String(rule) = rule else {
                return Err(format!(
                    "`permissions.{list}` has an entry that is not a string"
                ));
            };
            match convert_rule(list, rule, base) {
                Ok(converted) => import.rules.push(converted),
                Err(reason) => import.skipped.push(Skipped {
                    list: list.to_string(),
                    rule: rule.clone(),
                    reason,
                }),
            }
        }
    }
    Ok(import)
}

fn convert_rule(list: &str, rule: &str, base: &Path) -> Result<Converted, String> {
    if list == "ask" {
        return Err(
            "sandgate has no ask list: whatever no allow rule matches is asked, \
                    so leave it out (and check that no allow rule covers it)"
                .into(),
        );
    }
    let list: &'static str = if list == "deny" { "deny" } else { "allow" };
    let (tool, spec) = match rule.find('(') {
        Some(open) if rule.ends_with(')') => (&rule[..open], Some(&rule[open + 1..rule.len() - 1])),
        Some(_) => return Err("the rule is not of the form `Tool` or `Tool(specifier)`".into()),
        None => (rule, None),
    };
    let converted = |section, text: String| Converted {
        section,
        list,
        rule: text,
        from: rule.to_string(),
    };
    match tool {
        "Bash" => Ok(converted("commands", command_rule(list, spec)?)),
        "Read" => Ok(converted("paths.read", path_rule(spec, base)?)),
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => {
            Ok(converted("paths.write", path_rule(spec, base)?))
        }
        "WebFetch" | "WebSearch" => {
            Err("sandgate gates file paths and shell commands, not network access".into())
        }
        t if t.starts_with("mcp__") => {
            Err("sandgate does not gate MCP tools of other servers".into())
        }
        _ => Err(format!("sandgate has no equivalent of `{tool}` rules")),
    }
}

fn command_rule(list: &str, spec: Option<&str>) -> Result<String, String> {
    let spec = spec.map(str::trim).unwrap_or("");
    if spec.is_empty() || spec == "*" {
        return Ok("^".into());
    }
    if let Some(prefix) = spec.strip_suffix(":*") {
        let prefix = regex_escape(prefix.trim_end());
        // A deny may match more than Claude Code would; an allow never does.
        return Ok(if list == "deny" {
            format!("^{prefix}")
        } else {
            format!("^{prefix}(\\s|$)")
        });
    }
    let parts: Vec<String> = spec.split('*').map(regex_escape).collect();
    Ok(format!("^{}$", parts.join(".*")))
}

fn regex_escape(text: &str) -> String {
    // `^` + escaped + `$`: keep the escaped middle.
    let exact = sandgate_policy::persist::command_rule(text);
    exact[1..exact.len() - 1].to_string()
}

fn path_rule(spec: Option<&str>, base: &Path) -> Result<String, String> {
    let spec = spec.unwrap_or("");
    if spec.is_empty() || spec == "**" || spec == "/**" || spec == "//**" {
        return Ok("/**".into());
    }
    // gitignore treats braces as literal text; globs do not.
    let escaped: String = spec
        .chars()
        .map(|c| match c {
            '{' => "[{]".to_string(),
            '}' => "[}]".to_string(),
            c => c.to_string(),
        })
        .collect();
    let mut rule = if let Some(abs) = escaped.strip_prefix("//") {
        format!("/{abs}")
    } else if escaped == "~" || escaped.starts_with("~/") {
        escaped
    } else if let Some(rel) = escaped.strip_prefix('/') {
        let base = base.to_string_lossy();
        format!("{}/{rel}", base.trim_end_matches('/'))
    } else if escaped.starts_with("./") || escaped.trim_end_matches('/').contains('/') {
        if escaped.starts_with("./") {
            escaped
        } else {
            format!("./{escaped}")
        }
    } else if escaped.starts_with("**") {
        format!("./{escaped}")
    } else {
        // No slash: gitignore matches the name at any depth below the base.
        format!("./**/{escaped}")
    };
    if rule.ends_with('/') {
        rule.push_str("**");
    }
    Ok(rule)
}

/// The YAML of a policy file holding the converted rules.
pub fn to_yaml(import: &Import, source: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# sandgate rules converted from the Claude Code permissions in {source}"
    );
    out.push_str("permissions:\n");
    // (section, the line that opens it, the indentation of its lists)
    let sections = [
        ("paths.read", "  paths:\n    read:", "      "),
        ("paths.write", "    write:", "      "),
        ("commands", "  commands:", "    "),
    ];
    for (section, opening, indent) in sections {
        let _ = writeln!(out, "{opening}");
        for list in ["deny", "allow"] {
            let rules: Vec<&Converted> = import
                .rules
                .iter()
                .filter(|r| r.section == section && r.list == list)
                .collect();
            if rules.is_empty() {
                let _ = writeln!(out, "{indent}{list}: []");
                continue;
            }
            let _ = writeln!(out, "{indent}{list}:");
            for r in rules {
                // A JSON string is a valid YAML double-quoted scalar.
                let quoted = serde_json::to_string(&r.rule).unwrap_or_default();
                let from: String = r
                    .from
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect();
                let _ = writeln!(out, "{indent}  - {quoted}  # {from}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(list: &str, rule: &str) -> Result<String, String> {
        convert_rule(list, rule, Path::new("/proj/.claude")).map(|c| c.rule)
    }

    #[test]
    fn converts_bash_rules() {
        assert_eq!(one("allow", "Bash(git status)").unwrap(), "^git status$");
        assert_eq!(
            one("allow", "Bash(npm run test:*)").unwrap(),
            "^npm run test(\\s|$)"
        );
        assert_eq!(one("deny", "Bash(rm -rf:*)").unwrap(), "^rm \\-rf");
        assert_eq!(one("allow", "Bash(git * main)").unwrap(), "^git .* main$");
        assert_eq!(one("deny", "Bash").unwrap(), "^");
        assert_eq!(one("allow", "Bash(echo a.b)").unwrap(), "^echo a\\.b$");
    }

    #[test]
    fn converts_path_forms() {
        assert_eq!(one("deny", "Read(//etc/shadow)").unwrap(), "/etc/shadow");
        assert_eq!(one("deny", "Read(~/.zshrc)").unwrap(), "~/.zshrc");
        assert_eq!(
            one("allow", "Edit(/src/**)").unwrap(),
            "/proj/.claude/src/**"
        );
        assert_eq!(one("allow", "Edit(./docs/**)").unwrap(), "./docs/**");
        assert_eq!(one("allow", "Edit(docs/*.md)").unwrap(), "./docs/*.md");
        assert_eq!(one("deny", "Read(.env)").unwrap(), "./**/.env");
        assert_eq!(one("deny", "Edit(build/)").unwrap(), "./**/build/**");
        assert_eq!(one("deny", "Edit(out/build/)").unwrap(), "./out/build/**");
        assert_eq!(one("deny", "Read(a{b}.txt)").unwrap(), "./**/a[{]b[}].txt");
        assert_eq!(one("allow", "Read(./x)").unwrap(), "./x");
        let section = |list: &str, rule: &str| {
            convert_rule(list, rule, Path::new("/proj/.claude"))
                .map(|c| c.section)
                .unwrap()
        };
        assert_eq!(section("allow", "Read(./x)"), "paths.read");
        assert_eq!(section("deny", "Read(.env)"), "paths.read");
        for tool in ["Edit", "Write", "MultiEdit", "NotebookEdit"] {
            assert_eq!(section("allow", &format!("{tool}(./x)")), "paths.write");
            assert_eq!(section("deny", &format!("{tool}(./x)")), "paths.write");
        }
        assert!(one("ask", "Bash(git push:*)").is_err());
        assert!(one("allow", "WebFetch(domain:example.com)").is_err());
        assert!(one("allow", "mcp__github__create_issue").is_err());
        assert_eq!(one("deny", "Read(../x)").unwrap(), "./../x");
    }
}
