//! The grant: the Claude Code permission rules a loop config needs, and nothing else.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use sandgate_policy::floor::FLOOR;

use crate::config::{AcquisitionSource, Detector, LoopConfig};

/// The Claude Code tools whose rules name paths: a `Read(…)` rule covers every
/// built-in tool that reads files (Glob and Grep included), an `Edit(…)` rule
/// every tool that writes them (Write, MultiEdit and NotebookEdit included).
pub const FILE_TOOLS: [&str; 2] = ["Read", "Edit"];

/// Running the skills marketplace client.
pub const MARKETPLACE_NPX: &str = "Bash(npx skills:*)";

/// Fetching from the skills marketplace.
pub const MARKETPLACE_FETCH: &str = "WebFetch(domain:claudemarketplaces.com)";

/// How a program rule is written in the documentation template.
pub const PROGRAM_SHAPE: &str = "Bash(<program>:*)";

/// How a file rule for the loop's directory is read in the documentation template.
pub const LOOP_READ_SHAPE: &str = "Read(//<loop directory>/**)";

/// How a file rule for the loop's directory is written in the documentation template.
pub const LOOP_EDIT_SHAPE: &str = "Edit(//<loop directory>/**)";

/// Every shape of allow rule [`required`] can emit; a program rule appears as
/// [`PROGRAM_SHAPE`], a file rule as [`LOOP_READ_SHAPE`] or [`LOOP_EDIT_SHAPE`].
pub const RULE_SHAPES: [&str; 5] = [
    LOOP_READ_SHAPE,
    LOOP_EDIT_SHAPE,
    PROGRAM_SHAPE,
    MARKETPLACE_NPX,
    MARKETPLACE_FETCH,
];

/// Characters Claude Code reads as syntax in a rule: gitignore globs and
/// escapes, the braces of other glob dialects, and the rule's own brackets.
const PATTERN_SYNTAX: &[char] = &['*', '?', '[', ']', '\\', '{', '}', '(', ')', '!'];

/// The directory a loop works in (the one holding its `loop.yaml`), checked
/// so that rules naming it say exactly that directory and no more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopDir(String);

/// Why a directory cannot be a loop's: its file rules would reach further than
/// the loop, or could not name it exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeError {
    /// Not an absolute path.
    NotAbsolute(PathBuf),
    /// The path is not UTF-8, which a rule cannot spell.
    NotUtf8(PathBuf),
    /// `/`: the rules would cover the whole file system.
    Root,
    /// The home directory or a directory above it: the rules would cover the floor.
    HoldsHome {
        /// The loop directory.
        dir: PathBuf,
        /// The home directory it holds.
        home: PathBuf,
    },
    /// Inside a floor directory: nothing there may be read or written.
    InFloor {
        /// The loop directory.
        dir: PathBuf,
        /// The floor directory, as `~/.ssh`.
        floor: String,
    },
    /// A character Claude Code reads as pattern syntax.
    PatternSyntax {
        /// The loop directory.
        dir: PathBuf,
        /// The character.
        found: char,
    },
}

impl fmt::Display for ScopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let floor = floor_dirs().join("`, `");
        match self {
            ScopeError::NotAbsolute(dir) => {
                write!(f, "the loop directory `{}` is not absolute", dir.display())
            }
            ScopeError::NotUtf8(dir) => write!(
                f,
                "the loop directory `{}` is not valid UTF-8, so no rule can name it; \
                 move the loop config to a directory whose path is",
                dir.display()
            ),
            ScopeError::Root => write!(
                f,
                "the loop directory `/` is too wide: its file rules would let Claude Code \
                 read and write the whole file system, `{floor}` too; \
                 put the loop config in the project directory"
            ),
            ScopeError::HoldsHome { dir, home } => write!(
                f,
                "the loop directory `{}` is too wide: it holds the home directory `{}`, \
                 so its file rules would let Claude Code read and write `{floor}`; \
                 put the loop config in the project directory",
                dir.display(),
                home.display()
            ),
            ScopeError::InFloor { dir, floor } => write!(
                f,
                "the loop directory `{}` is inside `{floor}`, which sandgate's floor keeps \
                 from every agent; put the loop config in the project directory",
                dir.display()
            ),
            ScopeError::PatternSyntax { dir, found } => write!(
                f,
                "the loop directory `{}` contains `{found}`, which Claude Code reads as \
                 pattern syntax in a rule, so a rule could not name exactly that directory; \
                 move the loop config to a directory whose path has none of `{}`",
                dir.display(),
                PATTERN_SYNTAX.iter().collect::<String>()
            ),
        }
    }
}

impl std::error::Error for ScopeError {}

impl LoopDir {
    /// Check `dir` against `home`; both must already be canonical (absolute,
    /// symlinks resolved), since a rule is matched against the real path.
    pub fn new(dir: &Path, home: &Path) -> Result<LoopDir, ScopeError> {
        if !dir.is_absolute() {
            return Err(ScopeError::NotAbsolute(dir.to_path_buf()));
        }
        let Some(text) = dir.to_str() else {
            return Err(ScopeError::NotUtf8(dir.to_path_buf()));
        };
        if dir == Path::new("/") {
            return Err(ScopeError::Root);
        }
        if home.starts_with(dir) {
            return Err(ScopeError::HoldsHome {
                dir: dir.to_path_buf(),
                home: home.to_path_buf(),
            });
        }
        if let Some(entry) = sandgate_policy::floor::entry_for(dir, home) {
            return Err(ScopeError::InFloor {
                dir: dir.to_path_buf(),
                floor: format!("~/{}", entry.dir),
            });
        }
        if let Some(found) = text
            .chars()
            .find(|c| PATTERN_SYNTAX.contains(c) || c.is_control())
        {
            return Err(ScopeError::PatternSyntax {
                dir: dir.to_path_buf(),
                found,
            });
        }
        Ok(LoopDir(text.trim_end_matches('/').to_string()))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        Path::new(&self.0)
    }

    /// `//<dir>/**`: the directory and everything under it, as an absolute
    /// gitignore-style pattern (`//` starts an absolute path in a Claude Code
    /// rule, so the rule means the same wherever Claude Code is started).
    pub fn pattern(&self) -> String {
        format!("/{}/**", self.0)
    }
}

/// What a grant writes into the harness settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grant {
    /// `permissions.allow`: what the loop needs, sorted and duplicate-free.
    pub allow: BTreeSet<String>,
    /// `permissions.deny`: the floor, for Claude Code's own file tools.
    pub deny: BTreeSet<String>,
}

impl Grant {
    /// How many rules, allow and deny together.
    pub fn len(&self) -> usize {
        self.allow.len() + self.deny.len()
    }

    /// Whether the grant holds no rule at all.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }
}

/// The grant for `config`, whose loop works in `dir`.
///
/// Every consumer (the preflight, `--write`, `--format sandgate`, the review page)
/// calls this one function, so a new rule source reaches all of them at once.
pub fn required(config: &LoopConfig, dir: &LoopDir) -> Grant {
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
    rules.extend(file_rules(dir));
    Grant {
        allow: rules,
        deny: floor_rules(),
    }
}

/// `Read(//<dir>/**)` and `Edit(//<dir>/**)`: the file tools inside the loop's
/// directory and nowhere else.
pub fn file_rules(dir: &LoopDir) -> [String; 2] {
    let pattern = dir.pattern();
    FILE_TOOLS.map(|tool| format!("{tool}({pattern})"))
}

/// `Read(~/<dir>/**)` and `Edit(~/<dir>/**)` for every directory of sandgate's
/// floor: Claude Code's file tools cannot reach them, whatever else allows.
pub fn floor_rules() -> BTreeSet<String> {
    FLOOR
        .iter()
        .flat_map(|entry| FILE_TOOLS.map(|tool| format!("{tool}({})", entry.glob())))
        .collect()
}

/// The floor's directories as `~/.ssh`, …, in order.
pub fn floor_dirs() -> Vec<String> {
    FLOOR
        .iter()
        .map(|entry| format!("~/{}", entry.dir))
        .collect()
}

/// `Bash(<program>:*)`: the program with any arguments.
pub fn bash_rule(program: &str) -> String {
    format!("Bash({program}:*)")
}

/// The command prefix of a `Bash(<prefix>:*)` rule, if `rule` is one.
pub fn bash_prefix(rule: &str) -> Option<&str> {
    rule.strip_prefix("Bash(")?.strip_suffix(":*)")
}

/// The pattern of a `Read(…)` or `Edit(…)` rule, with its tool, if `rule` is one.
pub fn file_rule(rule: &str) -> Option<(&'static str, &str)> {
    FILE_TOOLS.iter().find_map(|tool| {
        let pattern = rule
            .strip_prefix(tool)?
            .strip_prefix('(')?
            .strip_suffix(')')?;
        Some((*tool, pattern))
    })
}

/// The documented shape of `rule`: a loop program's rule becomes
/// [`PROGRAM_SHAPE`], a file rule for an absolute directory
/// [`LOOP_READ_SHAPE`] or [`LOOP_EDIT_SHAPE`].
pub fn shape_of(rule: &str) -> &str {
    match (bash_prefix(rule), file_rule(rule)) {
        (Some(_), _) if rule != MARKETPLACE_NPX => PROGRAM_SHAPE,
        (_, Some(("Read", pattern))) if pattern.starts_with("//") => LOOP_READ_SHAPE,
        (_, Some(("Edit", pattern))) if pattern.starts_with("//") => LOOP_EDIT_SHAPE,
        _ => rule,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::parse_str;

    const HOME: &str = "/home/me";

    fn dir(path: &str) -> LoopDir {
        match LoopDir::new(Path::new(path), Path::new(HOME)) {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        }
    }

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

    fn grant(extra: &str) -> Grant {
        required(&cfg(extra), &dir("/home/me/proj"))
    }

    #[test]
    fn marketplace_rules_appear_only_when_the_order_reaches_the_marketplace() {
        let with = grant("skills:\n  acquisition_order: [installed, marketplace]\n").allow;
        assert!(with.contains(MARKETPLACE_NPX));
        assert!(with.contains(MARKETPLACE_FETCH));

        for order in ["[installed]", "[]"] {
            let without = grant(&format!("skills:\n  acquisition_order: {order}\n")).allow;
            assert!(!without.contains(MARKETPLACE_NPX), "{order}");
            assert!(!without.contains(MARKETPLACE_FETCH), "{order}");
            assert!(!without
                .iter()
                .any(|r| r.contains("npx") || r.contains("WebFetch")));
        }
        assert!(!grant("").allow.contains(MARKETPLACE_FETCH));
    }

    #[test]
    fn provider_and_detector_sharing_a_program_give_one_rule() {
        let rules = grant("").allow;
        assert_eq!(rules.iter().filter(|r| *r == "Bash(cargo:*)").count(), 1);
        let expected: BTreeSet<String> = [
            "Bash(./scripts/lint.sh:*)",
            "Bash(cargo:*)",
            "Bash(claude:*)",
            "Edit(//home/me/proj/**)",
            "Read(//home/me/proj/**)",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(rules, expected);
    }

    #[test]
    fn the_grant_is_sorted_and_has_no_duplicates() {
        let rules: Vec<String> =
            grant("skills:\n  acquisition_order: [marketplace, marketplace, installed]\n")
                .allow
                .into_iter()
                .collect();
        let mut sorted = rules.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(rules, sorted);
        assert_eq!(rules.len(), 7);
    }

    #[test]
    fn the_file_tools_are_granted_in_the_loop_directory_only() {
        let bare = match parse_str("constraints:\n  human_checkpoint: []\n", Path::new("l")) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        let grant = required(&bare, &dir("/srv/loops/nightly"));
        let allow: Vec<&str> = grant.allow.iter().map(String::as_str).collect();
        assert_eq!(
            allow,
            [
                "Edit(//srv/loops/nightly/**)",
                "Read(//srv/loops/nightly/**)"
            ]
        );
        // No rule names a tool alone: in Claude Code that is every path.
        for rule in grant.allow.iter().chain(&grant.deny) {
            assert!(rule.ends_with(')'), "`{rule}` is a bare tool rule");
        }
    }

    #[test]
    fn the_deny_rules_are_the_floor_for_both_file_tools() {
        let deny = grant("").deny;
        assert_eq!(deny.len(), FLOOR.len() * FILE_TOOLS.len());
        for entry in FLOOR {
            for tool in FILE_TOOLS {
                assert!(
                    deny.contains(&format!("{tool}(~/{}/**)", entry.dir)),
                    "{tool} {} in {deny:?}",
                    entry.dir
                );
            }
        }
        for named in ["Read(~/.ssh/**)", "Edit(~/.ssh/**)", "Edit(~/.sandgate/**)"] {
            assert!(deny.contains(named), "{named}");
        }
        assert_eq!(
            grant("skills:\n  acquisition_order: [marketplace]\n").deny,
            deny,
            "the deny rules do not depend on the config"
        );
    }

    /// `(directory, home) -> refused?`: what a loop directory may be.
    #[test]
    fn a_loop_directory_that_would_reach_the_floor_or_cannot_be_named_is_refused() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("/home/me/proj", HOME, None),
            ("/home/me/a/b/c", HOME, None),
            ("/srv/x", HOME, None),
            ("/home/men", HOME, None),
            ("/home/me/.sshx", HOME, None),
            ("/home/me/proj with space", HOME, None),
            ("/", HOME, Some("too wide")),
            ("/home", HOME, Some("holds the home directory `/home/me`")),
            ("/home/me", HOME, Some("holds the home directory")),
            ("/", "/", Some("too wide")),
            ("/home/me/.ssh", HOME, Some("inside `~/.ssh`")),
            ("/home/me/.ssh/keys", HOME, Some("inside `~/.ssh`")),
            ("/home/me/.aws/x", HOME, Some("inside `~/.aws`")),
            (
                "/home/me/.sandgate/loop",
                HOME,
                Some("inside `~/.sandgate`"),
            ),
            ("/home/me/.gnupg", HOME, Some("inside `~/.gnupg`")),
            ("/home/me/p*", HOME, Some("contains `*`")),
            ("/home/me/a?b", HOME, Some("contains `?`")),
            ("/home/me/[x]", HOME, Some("contains `[`")),
            ("/home/me/a\\b", HOME, Some("contains `\\`")),
            ("/home/me/x{a,b}", HOME, Some("contains `{`")),
            ("/home/me/proj)", HOME, Some("contains `)`")),
            ("/home/me/!x", HOME, Some("contains `!`")),
            ("/home/me/a\nb", HOME, Some("contains `\n`")),
            ("proj", HOME, Some("not absolute")),
        ];
        for (path, home, refused) in cases {
            let result = LoopDir::new(Path::new(path), Path::new(home));
            match (refused, result) {
                (None, Ok(d)) => assert_eq!(d.path(), Path::new(path)),
                (Some(why), Err(e)) => {
                    let shown = e.to_string();
                    assert!(shown.contains(why), "{path}: {shown}");
                    if !matches!(e, ScopeError::NotAbsolute(_)) {
                        assert!(shown.contains(&format!("`{path}`")), "{path}: {shown}");
                    }
                }
                (None, Err(e)) => panic!("{path} refused: {e}"),
                (Some(_), Ok(_)) => panic!("{path} accepted under {home}"),
            }
        }
    }

    #[test]
    fn a_too_wide_directory_names_the_floor() {
        let shown = ScopeError::Root.to_string();
        for entry in FLOOR {
            assert!(shown.contains(&format!("~/{}", entry.dir)), "{shown}");
        }
    }

    #[test]
    fn every_emitted_rule_has_a_documented_shape() {
        let rules = grant("skills:\n  acquisition_order: [marketplace]\n").allow;
        for rule in &rules {
            assert!(RULE_SHAPES.contains(&shape_of(rule)), "{rule}");
        }
        assert_eq!(shape_of("Bash(cargo:*)"), PROGRAM_SHAPE);
        assert_eq!(shape_of(MARKETPLACE_NPX), MARKETPLACE_NPX);
        assert_eq!(shape_of("Read(//x/**)"), LOOP_READ_SHAPE);
        assert_eq!(shape_of("Edit(//x/**)"), LOOP_EDIT_SHAPE);
        assert_eq!(shape_of("Read"), "Read");
        assert_eq!(shape_of("Read(~/.ssh/**)"), "Read(~/.ssh/**)");
    }
}
