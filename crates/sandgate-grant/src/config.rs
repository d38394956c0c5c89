//! The loop config (`loop.yaml`), as written by the person who scripts an agent loop.
//!
//! Only the parts a grant depends on are modelled, and every struct denies
//! unknown fields: a typo is an error with a line number, never a part that
//! silently asks for nothing.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::Spanned;

/// A whole loop config.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopConfig {
    /// The agent harnesses the loop drives.
    #[serde(default)]
    pub providers: Providers,
    /// The checks that decide whether the loop's work is done.
    #[serde(default)]
    pub validations: Vec<Validation>,
    /// Where the loop gets skills from.
    #[serde(default)]
    pub skills: Skills,
    /// What stops the loop and waits for a person.
    #[serde(default)]
    pub constraints: Constraints,
}

/// The `providers:` block.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Providers {
    /// Each harness the loop may run.
    #[serde(default)]
    pub providers: Vec<Provider>,
}

/// One harness, such as `claude` or `codex`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provider {
    /// A label for people; not used by the grant.
    #[serde(default)]
    pub name: Option<String>,
    /// The program that runs the harness (one program name or path, no arguments).
    pub command: Spanned<String>,
}

/// One check in `validations:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Validation {
    /// A label for people and for `sandgate detect` output.
    #[serde(default)]
    pub name: Option<String>,
    /// How the check is made.
    pub detector: Detector,
}

/// How a check is made. Exactly one key.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Detector {
    /// Run a program with literal arguments, no shell, from the loop directory.
    /// Exit 0 pass, 1 fail, 2 cannot run on this machine, anything else error.
    Script(ScriptDetector),
    /// A person looks; the text says what to look at. Needs no grant.
    Manual(String),
}

/// `detector: {script: {command, args}}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptDetector {
    /// The program (argv\[0\]): a name looked up on `PATH`, or a path relative to the loop directory.
    pub command: Spanned<String>,
    /// Literal arguments; nothing is expanded.
    #[serde(default)]
    pub args: Vec<String>,
}

/// The `skills:` block.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Skills {
    /// Where to look for a skill, in order.
    #[serde(default)]
    pub acquisition_order: Vec<AcquisitionSource>,
}

/// A place skills come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AcquisitionSource {
    /// Skills already on the machine. Needs no grant.
    Installed,
    /// The public skills marketplace: `npx skills` and a web fetch.
    Marketplace,
}

/// The `constraints:` block.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Constraints {
    /// Points where the loop stops and waits for a person, whatever the grant allows.
    #[serde(default)]
    pub human_checkpoint: Vec<String>,
}

impl LoopConfig {
    /// The human checkpoints, in the order written.
    pub fn checkpoints(&self) -> &[String] {
        &self.constraints.human_checkpoint
    }

    /// The script detectors with their labels, in the order written.
    pub fn scripts(&self) -> impl Iterator<Item = (String, &ScriptDetector)> {
        self.validations
            .iter()
            .enumerate()
            .filter_map(|(i, v)| match &v.detector {
                Detector::Script(s) => Some((
                    v.name
                        .clone()
                        .unwrap_or_else(|| format!("validation {}", i + 1)),
                    s,
                )),
                Detector::Manual(_) => None,
            })
    }
}

/// A loop config that could not be read or is not valid.
#[derive(Debug)]
pub struct ConfigError {
    /// The file (or `<input>` for text).
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// 1-based column, when known.
    pub column: Option<u64>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Read and validate the loop config at `path`.
pub fn load(path: &Path) -> Result<LoopConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        line: None,
        column: None,
        message: format!("cannot read loop config: {e}"),
    })?;
    parse_str(&text, path)
}

/// Parse and validate loop-config text; `file` names it in errors.
pub fn parse_str(text: &str, file: &Path) -> Result<LoopConfig, ConfigError> {
    if text.trim().is_empty() {
        return Err(ConfigError {
            file: file.to_path_buf(),
            line: None,
            column: None,
            message: "the loop config is empty".into(),
        });
    }
    let config: LoopConfig = serde_saphyr::from_str(text).map_err(|e| {
        let location = e.location();
        let bare = e.without_snippet().to_string();
        ConfigError {
            file: file.to_path_buf(),
            line: location.map(|l| l.line()).filter(|&l| l > 0),
            column: location.map(|l| l.column()).filter(|&c| c > 0),
            message: strip_location_prefix(&bare),
        }
    })?;
    config.validate(file)?;
    Ok(config)
}

/// The YAML library prefixes its message with `error: line L column C: `; we say where ourselves.
fn strip_location_prefix(message: &str) -> String {
    let rest = message.strip_prefix("error: ").unwrap_or(message);
    if let Some(after) = rest.strip_prefix("line ") {
        if let Some((_, msg)) = after.split_once(": ") {
            return msg.trim().to_string();
        }
    }
    rest.trim().to_string()
}

impl LoopConfig {
    fn validate(&self, file: &Path) -> Result<(), ConfigError> {
        for p in &self.providers.providers {
            check_program(&p.command, "provider", file)?;
        }
        for v in &self.validations {
            if let Detector::Script(s) = &v.detector {
                check_program(&s.command, "script detector", file)?;
            }
        }
        Ok(())
    }
}

/// A program becomes `Bash(<program>:*)`: it must be one word a rule can name exactly.
fn check_program(command: &Spanned<String>, what: &str, file: &Path) -> Result<(), ConfigError> {
    let text = command.value.as_str();
    let problem = if text.trim().is_empty() {
        Some(format!("the {what} command is empty"))
    } else if text.chars().any(char::is_whitespace) {
        Some(format!(
            "the {what} command `{text}` is not a single program; name only the program (script detectors take arguments in `args`)"
        ))
    } else {
        text.chars()
            .find(|c| "()|&;<>$`\\\"'*?[]{}!#~".contains(*c))
            .map(|c| {
                format!(
                    "the {what} command `{text}` contains `{c}`; name a program, not a shell expression"
                )
            })
    };
    match problem {
        None => Ok(()),
        Some(message) => Err(ConfigError {
            file: file.to_path_buf(),
            line: Some(command.referenced.line()).filter(|&l| l > 0),
            column: Some(command.referenced.column()).filter(|&c| c > 0),
            message,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LoopConfig, ConfigError> {
        parse_str(text, Path::new("loop.yaml"))
    }

    #[test]
    fn a_full_config_parses() {
        let c = parse(
            "providers:\n  providers:\n    - name: main\n      command: claude\n\
             validations:\n  - name: tests\n    detector:\n      script: {command: cargo, args: [test]}\n\
             \x20 - detector:\n      manual: the page looks right\n\
             skills:\n  acquisition_order: [installed, marketplace]\n\
             constraints:\n  human_checkpoint: [before publishing]\n",
        )
        .unwrap();
        assert_eq!(c.providers.providers[0].command.value, "claude");
        assert_eq!(c.scripts().count(), 1);
        assert_eq!(c.checkpoints(), ["before publishing"]);
    }

    #[test]
    fn unknown_keys_name_file_and_line() {
        let e =
            parse("providers:\n  providers:\n    - command: claude\n      modle: x\n").unwrap_err();
        let shown = e.to_string();
        assert!(shown.starts_with("loop.yaml:4:"), "{shown}");
        assert!(shown.contains("modle"), "{shown}");

        let e = parse("constraint:\n  human_checkpoint: []\n").unwrap_err();
        assert!(e.to_string().starts_with("loop.yaml:1:"), "{e}");
    }

    #[test]
    fn unknown_acquisition_source_and_detector_kind_are_errors() {
        let e = parse("skills:\n  acquisition_order: [installed, market]\n").unwrap_err();
        assert!(e.to_string().starts_with("loop.yaml:2:"), "{e}");
        assert!(e.to_string().contains("market"), "{e}");
        let e = parse("validations:\n  - detector:\n      shell: make test\n").unwrap_err();
        assert!(e.to_string().starts_with("loop.yaml:3:"), "{e}");
    }

    #[test]
    fn a_command_that_is_not_one_program_is_refused_with_its_line() {
        let e = parse("providers:\n  providers:\n    - command: claude -p\n").unwrap_err();
        assert!(e.to_string().starts_with("loop.yaml:3:"), "{e}");
        assert!(e.to_string().contains("`claude -p`"), "{e}");
        let e = parse("validations:\n  - detector:\n      script: {command: 'a;b'}\n").unwrap_err();
        assert!(e.to_string().contains("`;`"), "{e}");
        assert!(parse("validations:\n  - detector:\n      script: {command: ''}\n").is_err());
    }

    #[test]
    fn empty_and_broken_files_are_errors() {
        assert!(parse("").unwrap_err().to_string().contains("empty"));
        let e = parse("providers: [\n").unwrap_err();
        assert!(e.to_string().starts_with("loop.yaml:1:"), "{e}");
    }
}
