//! The options of a program, read from its `--help` on this machine (or,
//! for git, from `--git-completion-helper`), plus the ones a help text does
//! not list.

use crate::wait::{Bounded, DEADLINE};
use std::process::{Command, Stdio};

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// A flag.
    None,
    /// A value, attached (`--o=V`, `-oV`) or as the next word.
    Required,
    /// A value only when attached (`--color[=WHEN]`).
    Optional,
}

/// One option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    /// `--name`, `-x`, or find's `-name`.
    pub name: String,
    /// What it takes.
    pub value: Value,
}

/// The output of `argv` (stdout and stderr), or None when it cannot run.
pub fn help_text(argv: &[&str]) -> Option<String> {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .env("LANG", "C")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "200")
        .stdin(Stdio::null())
        .output_within(DEADLINE)
        .ok()?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push('\n');
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Some(text)
}

fn looks_like_value(token: &str) -> bool {
    let t = token.trim_end_matches([',', ';', '.']);
    (t.starts_with('<') && t.ends_with('>'))
        || (t.len() > 1
            && t.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' || c == '-')
            && t.chars().next().is_some_and(|c| c.is_ascii_uppercase()))
        || t == "N"
}

/// The options of a GNU, clap or similar help text: the option column of
/// each line that starts with blanks and a dash.
pub fn parse_help(text: &str) -> Vec<Opt> {
    let mut out: Vec<Opt> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if !trimmed.starts_with('-') {
            continue;
        }
        // The option column ends at the first run of two blanks.
        let column = match trimmed.find("  ") {
            Some(i) => &trimmed[..i],
            None => trimmed,
        };
        let tokens: Vec<&str> = column.split_whitespace().collect();
        let mut line_opts: Vec<Opt> = Vec::new();
        for (i, raw) in tokens.iter().enumerate() {
            let tok = raw.trim_end_matches([',', ';']);
            let next_is_value = tokens
                .get(i + 1)
                .is_some_and(|n| looks_like_value(n) || n.starts_with("[<"));
            let next_is_optional = tokens.get(i + 1).is_some_and(|n| n.starts_with("[<"));
            if let Some(rest) = tok.strip_prefix("--") {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                    .unwrap_or(rest.len());
                let name = &rest[..end];
                if name.is_empty() || !name.chars().next().unwrap().is_ascii_alphanumeric() {
                    continue;
                }
                let after = &rest[end..];
                let value = if after.starts_with("[=") || next_is_optional {
                    Value::Optional
                } else if after.starts_with('=') || next_is_value {
                    Value::Required
                } else {
                    Value::None
                };
                // `--[no-]name`: both spellings.
                line_opts.push(Opt {
                    name: format!("--{name}"),
                    value,
                });
            } else if let Some(rest) = tok.strip_prefix('-') {
                let mut chars = rest.chars();
                let (Some(c), None) = (chars.next(), chars.next()) else {
                    continue;
                };
                if !c.is_ascii_alphanumeric() {
                    continue;
                }
                line_opts.push(Opt {
                    name: format!("-{c}"),
                    value: if next_is_value {
                        Value::Required
                    } else {
                        Value::None
                    },
                });
            }
        }
        // A short option shares its long option's value.
        let long_value = line_opts
            .iter()
            .find(|o| o.name.starts_with("--"))
            .map(|o| o.value);
        for mut o in line_opts {
            if !o.name.starts_with("--") && o.value == Value::None {
                if let Some(v) = long_value {
                    o.value = if v == Value::Optional { Value::None } else { v };
                }
            }
            if !out.iter().any(|x| x.name == o.name) {
                out.push(o);
            }
        }
    }
    out
}

/// find's tests and actions: every `-word` of its help, with a value when
/// the next word is written in capitals.
pub fn parse_find_help(text: &str) -> Vec<Opt> {
    let mut out: Vec<Opt> = Vec::new();
    let tokens: Vec<&str> = text.split_whitespace().collect();
    for (i, tok) in tokens.iter().enumerate() {
        let Some(rest) = tok.strip_prefix('-') else {
            continue;
        };
        if rest.len() < 2
            || !rest
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        {
            continue;
        }
        let value = if tokens.get(i + 1).is_some_and(|n| looks_like_value(n)) {
            Value::Required
        } else {
            Value::None
        };
        if !out.iter().any(|o| o.name == *tok) {
            out.push(Opt {
                name: tok.to_string(),
                value,
            });
        }
    }
    out
}

/// git's options of `sub`, from `git SUB --git-completion-helper-all`.
pub fn git_options(sub: &str) -> Vec<Opt> {
    let text = help_text(&["git", sub, "--git-completion-helper-all"]).unwrap_or_default();
    let mut out = Vec::new();
    for tok in text.split_whitespace() {
        if !tok.starts_with("--") || tok == "--" || tok.starts_with("--no-") {
            continue;
        }
        let (name, value) = match tok.strip_suffix('=') {
            Some(n) => (n, Value::Required),
            None => (tok, Value::None),
        };
        out.push(Opt {
            name: name.to_string(),
            value,
        });
    }
    out
}

/// Options given by name: `--x=` takes a value, `--x[=]` an optional one.
pub fn listed(names: &[&str]) -> Vec<Opt> {
    names
        .iter()
        .map(|n| {
            if let Some(n) = n.strip_suffix("[=]") {
                Opt {
                    name: n.to_string(),
                    value: Value::Optional,
                }
            } else if let Some(n) = n.strip_suffix('=') {
                Opt {
                    name: n.to_string(),
                    value: Value::Required,
                }
            } else {
                Opt {
                    name: n.to_string(),
                    value: Value::None,
                }
            }
        })
        .collect()
}

/// The shortest prefix of the long option `name` that no other long option
/// of `all` starts with, when it is shorter than `name`.
pub fn shortest_prefix(name: &str, all: &[Opt]) -> Option<String> {
    let body = name.strip_prefix("--")?;
    for len in 1..body.len() {
        let prefix = format!("--{}", &body[..len]);
        let others = all
            .iter()
            .filter(|o| o.name != name && o.name.starts_with(&prefix))
            .count();
        if others == 0 {
            return Some(prefix);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_gnu_and_clap_help() {
        let gnu = "  -o, --output=FILE         write\n      --color[=WHEN]  colour\n  -r, --recursive  walk\n";
        let got = parse_help(gnu);
        assert!(got.contains(&Opt {
            name: "-o".into(),
            value: Value::Required
        }));
        assert!(got.contains(&Opt {
            name: "--color".into(),
            value: Value::Optional
        }));
        let clap = "      --target-dir <DIRECTORY>  Directory\n  -p, --package [<SPEC>]  Package\n";
        let got = parse_help(clap);
        assert!(got.contains(&Opt {
            name: "--target-dir".into(),
            value: Value::Required
        }));
        assert!(got.contains(&Opt {
            name: "--package".into(),
            value: Value::Optional
        }));
        let all = listed(&["--output=", "--outfile="]);
        assert_eq!(shortest_prefix("--output", &all).as_deref(), Some("--outp"));
        let all = listed(&["--output=", "--files0-from="]);
        assert_eq!(shortest_prefix("--output", &all).as_deref(), Some("--o"));
    }
}
