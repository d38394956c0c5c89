//! Writing rules into a policy file: the "always" answers of the prompt and
//! `sandgate policy allow|deny`.
//!
//! The write keeps the user's comments and formatting (the file is edited as a
//! lossless syntax tree), creates missing keys, a missing file (mode 0600) and
//! its directory (mode 0700), holds an exclusive lock on a sidecar lock file
//! for the whole read-modify-write, and replaces the file atomically (temp
//! file in the same directory, fsync, rename, fsync of the directory). It is
//! idempotent: a rule already in the list is not written again.
//!
//! Before anything is written, the edited text is parsed again and compared
//! with the original: it must hold the same data plus exactly the new rule.
//! An edit that would change anything else is refused, never written.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use fs4::FileExt;
use serde_json::Value;

use crate::atomic;
use crate::load::{parse_policy, MAX_POLICY_BYTES};

/// Which rule section of `permissions:` a rule belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    /// `permissions.paths` (globs, for reading and writing).
    Paths,
    /// `permissions.paths.read` (globs, for reading only).
    PathsRead,
    /// `permissions.paths.write` (globs, for writing only).
    PathsWrite,
    /// `permissions.commands` (regexes).
    Commands,
    /// `permissions.network` (host entries, see [`crate::network`]).
    Network,
}

impl Section {
    /// The dotted key below `permissions` (`paths`, `paths.read`, `commands`).
    pub fn key(self) -> &'static str {
        match self {
            Section::Paths => "paths",
            Section::PathsRead => "paths.read",
            Section::PathsWrite => "paths.write",
            Section::Commands => "commands",
            Section::Network => "network",
        }
    }

    /// The YAML keys below `permissions`, outermost first.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            Section::Paths => &["paths"],
            Section::PathsRead => &["paths", "read"],
            Section::PathsWrite => &["paths", "write"],
            Section::Commands => &["commands"],
            Section::Network => &["network"],
        }
    }

    /// The path section for `access` (`None`: both).
    pub fn paths_for(access: Option<crate::decision::Access>) -> Section {
        match access {
            None => Section::Paths,
            Some(crate::decision::Access::Read) => Section::PathsRead,
            Some(crate::decision::Access::Write) => Section::PathsWrite,
        }
    }

    /// The list of `file` this section and `effect` name.
    pub fn list(
        self,
        effect: Effect,
        file: &crate::config::PolicyFile,
    ) -> &[crate::config::RuleText] {
        let p = &file.permissions;
        match (self, effect) {
            (Section::Paths, Effect::Allow) => &p.paths.allow,
            (Section::Paths, Effect::Deny) => &p.paths.deny,
            (Section::PathsRead, Effect::Allow) => &p.paths.read.allow,
            (Section::PathsRead, Effect::Deny) => &p.paths.read.deny,
            (Section::PathsWrite, Effect::Allow) => &p.paths.write.allow,
            (Section::PathsWrite, Effect::Deny) => &p.paths.write.deny,
            (Section::Commands, Effect::Allow) => &p.commands.allow,
            (Section::Commands, Effect::Deny) => &p.commands.deny,
            (Section::Network, Effect::Allow) => p.network.as_ref().map_or(&[], |n| &n.allow),
            (Section::Network, Effect::Deny) => p.network.as_ref().map_or(&[], |n| &n.deny),
        }
    }
}

/// Which list of a section a rule goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effect {
    /// The `allow` list.
    Allow,
    /// The `deny` list.
    Deny,
}

impl Effect {
    /// The YAML key (`allow`, `deny`).
    pub fn key(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Deny => "deny",
        }
    }
}

/// What [`append_rule`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended {
    /// The rule was written; it stands on `line` (1-based) of the file.
    Added {
        /// 1-based line of the new rule.
        line: u32,
    },
    /// The list already held exactly this rule; the file was not touched.
    AlreadyPresent {
        /// 1-based line of the existing rule.
        line: u32,
    },
}

/// Why a rule could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// A file system operation failed.
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        /// What was being done (`read`, `lock`, `replace`, …).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The existing file is not a valid policy file; it is left as it is.
    #[error("`{path}` is not a valid policy file, so no rule was added to it: {message}")]
    Invalid {
        /// The policy file.
        path: PathBuf,
        /// The parse problem, with line and column.
        message: String,
    },
    /// A key on the way to the list holds something other than a mapping or a list.
    #[error("cannot add a rule to `{path}`: `{key}` is not a {expected}")]
    Shape {
        /// The policy file.
        path: PathBuf,
        /// The dotted key, e.g. `permissions.paths`.
        key: String,
        /// `mapping` or `list`.
        expected: &'static str,
    },
    /// The edited text would not hold exactly the old data plus the new rule.
    #[error(
        "cannot add `{rule}` to `{path}` without changing other content; \
         add it by hand under `permissions.{section}.{list}`"
    )]
    Unsafe {
        /// The policy file.
        path: PathBuf,
        /// The rule.
        rule: String,
        /// The section key.
        section: &'static str,
        /// The list key.
        list: &'static str,
    },
    /// The rule is empty.
    #[error("an empty rule cannot be added")]
    EmptyRule,
    /// The path cannot be written as a glob.
    #[error("the path `{0}` is not valid UTF-8 and cannot be written as a rule")]
    NonUtf8Path(PathBuf),
    /// The path is not absolute (rules written by sandgate name canonical paths).
    #[error("the path `{0}` is not absolute")]
    RelativePath(PathBuf),
    /// The rule to remove is not in the list.
    #[error(
        "`{rule}` is not in `permissions.{section}.{list}` of `{path}`, so nothing was removed"
    )]
    Absent {
        /// The policy file.
        path: PathBuf,
        /// The rule.
        rule: String,
        /// The section key.
        section: &'static str,
        /// The list key.
        list: &'static str,
    },
    /// The edited text would not hold exactly the old data minus the rule.
    #[error(
        "cannot remove `{rule}` from `{path}` without changing other content; \
         remove it by hand from `permissions.{section}.{list}`"
    )]
    UnsafeRemoval {
        /// The policy file.
        path: PathBuf,
        /// The rule.
        rule: String,
        /// The section key.
        section: &'static str,
        /// The list key.
        list: &'static str,
    },
}

/// The exact glob for one canonical path: the path with every glob
/// metacharacter (`* ? [ ] { } \`) escaped, so it matches that path and no other.
pub fn path_rule(path: &Path) -> Result<String, PersistError> {
    let text = path
        .to_str()
        .ok_or_else(|| PersistError::NonUtf8Path(path.to_path_buf()))?;
    if !path.is_absolute() {
        return Err(PersistError::RelativePath(path.to_path_buf()));
    }
    Ok(crate::rules::escape_glob_literal(text))
}

/// The exact regex for one command: `^` + the command with every regex
/// metacharacter escaped + `$`, so it matches that string and no other.
pub fn command_rule(command: &str) -> String {
    format!("^{}$", regex::escape(command))
}

/// The sidecar lock file that serialises writers of `file`.
pub fn lock_path(file: &Path) -> PathBuf {
    let mut name = file
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "permissions.yaml".into());
    name.push(".lock");
    file.with_file_name(name)
}

/// Append `rule` to `permissions.<section>.<effect>` of the policy file `file`.
///
/// See the module documentation for the guarantees. A symlinked policy file
/// is followed, so the link stays a link and its target is replaced.
pub fn append_rule(
    file: &Path,
    section: Section,
    effect: Effect,
    rule: &str,
) -> Result<Appended, PersistError> {
    if rule.is_empty() {
        return Err(PersistError::EmptyRule);
    }
    with_locked_file(
        file,
        |_, dir| create_private_dir(dir),
        |file, dir| append_locked(file, dir, section, effect, rule),
    )
}

/// Run `edit` on the policy file `file` (a symlink followed to its target)
/// and its directory while holding the file's lock, after `prepare` has
/// checked or made the directory. The lock is released when this returns,
/// also on every error path.
pub(crate) fn with_locked_file<T>(
    file: &Path,
    prepare: impl FnOnce(&Path, &Path) -> Result<(), PersistError>,
    edit: impl FnOnce(&Path, &Path) -> Result<T, PersistError>,
) -> Result<T, PersistError> {
    let file = canonical_target(file)?;
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    prepare(&file, &dir)?;
    let lock = open_lock(&lock_path(&file))?;
    FileExt::lock(&lock).map_err(|source| PersistError::Io {
        action: "lock",
        path: lock_path(&file),
        source,
    })?;
    let result = edit(&file, &dir);
    drop(lock);
    result
}

fn append_locked(
    file: &Path,
    dir: &Path,
    section: Section,
    effect: Effect,
    rule: &str,
) -> Result<Appended, PersistError> {
    let existing = read_existing(file)?;
    let original = existing
        .as_ref()
        .map(|(text, _)| text.as_str())
        .unwrap_or("");
    let edit = add_rule_to_text(original, file, section, effect, rule)?;
    let (text, line) = match edit {
        TextEdit::Present { line } => return Ok(Appended::AlreadyPresent { line }),
        TextEdit::Changed { text, line } => (text, line),
    };
    let mode = existing.map(|(_, mode)| mode).unwrap_or(0o600);
    remove_stale_temp_files(file, dir);
    replace_atomically(file, dir, &text, mode)?;
    Ok(Appended::Added { line })
}

/// The result of editing policy text in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextEdit {
    /// The rule is already in the list, on this line.
    Present {
        /// 1-based line.
        line: u32,
    },
    /// The new text, with the rule on this line.
    Changed {
        /// The whole new file text.
        text: String,
        /// 1-based line of the new rule.
        line: u32,
    },
}

/// Add `rule` to policy text in memory, keeping comments and formatting.
///
/// Pure: no IO. The result is verified to parse to the original data plus the
/// rule; anything else is an error.
pub fn add_rule_to_text(
    text: &str,
    path: &Path,
    section: Section,
    effect: Effect,
    rule: &str,
) -> Result<TextEdit, PersistError> {
    if rule.is_empty() {
        return Err(PersistError::EmptyRule);
    }
    let before = parse_checked(text, path)?;
    if let Some(line) = rule_line(text, path, section, effect, rule)? {
        return Ok(TextEdit::Present { line });
    }
    let expected = expected_after(&before, path, section, effect, rule)?;

    let edited = edit_tree(text, path, section, effect, rule)?;
    let unsafe_edit = || PersistError::Unsafe {
        path: path.to_path_buf(),
        rule: rule.to_string(),
        section: section.key(),
        list: effect.key(),
    };
    let after = parse_checked(&edited, path).map_err(|_| unsafe_edit())?;
    if after != expected {
        return Err(unsafe_edit());
    }
    let line = rule_line(&edited, path, section, effect, rule)?.ok_or_else(unsafe_edit)?;
    Ok(TextEdit::Changed { text: edited, line })
}

/// Parse as a policy file (so the file stays loadable) and as plain data (for the comparison).
pub(crate) fn parse_checked(text: &str, path: &Path) -> Result<Value, PersistError> {
    parse_policy(text, path).map_err(|p| invalid(path, problem_text(&p)))?;
    if is_blank(text) {
        return Ok(Value::Null);
    }
    serde_saphyr::from_str::<Value>(text).map_err(|e| invalid(path, first_line(&e.to_string())))
}

pub(crate) fn problem_text(p: &crate::error::Problem) -> String {
    match p.position {
        Some((l, c)) => format!("line {l} column {c}: {}", p.message),
        None => p.message.clone(),
    }
}

pub(crate) fn invalid(path: &Path, message: String) -> PersistError {
    PersistError::Invalid {
        path: path.to_path_buf(),
        message,
    }
}

pub(crate) fn shape(path: &Path, key: &str, expected: &'static str) -> PersistError {
    PersistError::Shape {
        path: path.to_path_buf(),
        key: key.to_string(),
        expected,
    }
}

fn is_blank(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || t == "---" || t == "..."
    })
}

pub(crate) fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or(message).trim().to_string()
}

/// The line of `rule` in the given list, if the list holds it.
fn rule_line(
    text: &str,
    path: &Path,
    section: Section,
    effect: Effect,
    rule: &str,
) -> Result<Option<u32>, PersistError> {
    let file = parse_policy(text, path).map_err(|p| invalid(path, problem_text(&p)))?;
    Ok(section
        .list(effect, &file)
        .iter()
        .find(|r| r.value == rule)
        .map(|r| r.referenced.line() as u32))
}

/// The data the file must hold after the edit.
fn expected_after(
    before: &Value,
    path: &Path,
    section: Section,
    effect: Effect,
    rule: &str,
) -> Result<Value, PersistError> {
    let mut value = before.clone();
    let keys = std::iter::once("permissions").chain(section.keys().iter().copied());
    let mut node = &mut value;
    let mut dotted = String::new();
    for key in keys {
        if !dotted.is_empty() {
            dotted.push('.');
        }
        dotted.push_str(key);
        if node.is_null() {
            *node = Value::Object(Default::default());
        }
        let Value::Object(map) = node else {
            return Err(shape(path, &dotted, "mapping"));
        };
        node = map.entry(key.to_string()).or_insert(Value::Null);
    }
    dotted.push('.');
    dotted.push_str(effect.key());
    if node.is_null() {
        *node = Value::Object(Default::default());
    }
    let Value::Object(map) = node else {
        return Err(shape(
            path,
            &format!("permissions.{}", section.key()),
            "mapping",
        ));
    };
    let list = map.entry(effect.key().to_string()).or_insert(Value::Null);
    if list.is_null() {
        *list = Value::Array(Vec::new());
    }
    let Value::Array(items) = list else {
        return Err(shape(path, &dotted, "list"));
    };
    items.push(Value::String(rule.to_string()));
    Ok(value)
}

/// The lossless edit itself.
fn edit_tree(
    text: &str,
    path: &Path,
    section: Section,
    effect: Effect,
    rule: &str,
) -> Result<String, PersistError> {
    use yaml_edit::{Mapping, Sequence, YamlFile};

    let file = if text.trim().is_empty() {
        YamlFile::new()
    } else {
        YamlFile::from_str(text).map_err(|e| invalid(path, first_line(&e.to_string())))?
    };
    if file.documents().count() > 1 {
        return Err(invalid(
            path,
            "a policy file holds one YAML document".into(),
        ));
    }
    let doc = file.ensure_document();
    let root = doc
        .as_mapping()
        .ok_or_else(|| shape(path, "(top level)", "mapping"))?;

    let child_mapping = |parent: &Mapping, key: &str, dotted: &str| {
        match parent.get(key) {
            Some(node) if !is_null_node(&node) => {}
            _ => parent.set(key, Mapping::new()),
        }
        parent
            .get_mapping(key)
            .ok_or_else(|| shape(path, dotted, "mapping"))
    };
    let mut section_map = child_mapping(&root, "permissions", "permissions")?;
    let mut dotted = String::from("permissions");
    for key in section.keys() {
        dotted = format!("{dotted}.{key}");
        section_map = child_mapping(&section_map, key, &dotted)?;
    }
    let dotted = format!("{dotted}.{}", effect.key());
    match section_map.get(effect.key()) {
        Some(node) if !is_null_node(&node) => {}
        _ => section_map.set(effect.key(), Sequence::new()),
    }
    let list = section_map
        .get_sequence(effect.key())
        .ok_or_else(|| shape(path, &dotted, "list"))?;
    list.push(rule);
    let mut out = file.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

pub(crate) fn is_null_node(node: &yaml_edit::YamlNode) -> bool {
    match node.as_scalar() {
        Some(s) => {
            let t = s.as_string();
            t.is_empty() || t == "~" || t == "null" || t == "Null" || t == "NULL"
        }
        None => false,
    }
}

/// Follow a symlinked policy file to its target; keep a missing path as it is.
pub(crate) fn canonical_target(file: &Path) -> Result<PathBuf, PersistError> {
    match fs::symlink_metadata(file) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(file).map_err(|source| PersistError::Io {
                action: "follow the symlink",
                path: file.to_path_buf(),
                source,
            })
        }
        _ => Ok(file.to_path_buf()),
    }
}

pub(crate) fn create_private_dir(dir: &Path) -> Result<(), PersistError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|source| PersistError::Io {
        action: "create the directory",
        path: dir.to_path_buf(),
        source,
    })
}

pub(crate) fn open_lock(path: &Path) -> Result<File, PersistError> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path).map_err(|source| PersistError::Io {
        action: "open the lock file",
        path: path.to_path_buf(),
        source,
    })
}

/// The current text and permission bits of `file`, or `None` when it does not exist.
pub(crate) fn read_existing(file: &Path) -> Result<Option<(String, u32)>, PersistError> {
    let io_err = |action, source| PersistError::Io {
        action,
        path: file.to_path_buf(),
        source,
    };
    let opened = match crate::load::open_regular(file) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("read", e)),
    };
    let meta = opened.metadata().map_err(|e| io_err("read", e))?;
    if meta.len() > MAX_POLICY_BYTES {
        return Err(PersistError::Invalid {
            path: file.to_path_buf(),
            message: format!("it is larger than {MAX_POLICY_BYTES} bytes"),
        });
    }
    let mut text = String::new();
    io::Read::read_to_string(&mut io::Read::take(opened, MAX_POLICY_BYTES), &mut text)
        .map_err(|e| io_err("read", e))?;
    #[cfg(unix)]
    let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o7777;
    #[cfg(not(unix))]
    let mode = 0o600;
    Ok(Some((text, mode)))
}

/// Remove temp files of writers that died before their rename. Only called
/// under the lock, so no live writer has a temp file at this moment.
pub(crate) fn remove_stale_temp_files(file: &Path, dir: &Path) {
    let prefix = atomic::temp_prefix(file);
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(&prefix) && name.ends_with(atomic::TEMP_SUFFIX) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Write `text` over `file` with [`atomic::atomic_replace`].
pub(crate) fn replace_atomically(
    file: &Path,
    _dir: &Path,
    text: &str,
    mode: u32,
) -> Result<(), PersistError> {
    atomic::atomic_replace(file, text.as_bytes(), atomic::Mode::Set(mode)).map_err(|e| {
        PersistError::Io {
            action: e.action,
            path: e.path,
            source: e.source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("/p.yaml")
    }

    const COMMENTED: &str = "\
# my policy — keep this comment
permissions:
  sandbox: true   # stays on
  paths:
    deny:  [\"/etc/**\"]
    allow: [\"~/projects/**\", \"./**\"]
  commands:
    # git is fine
    allow:
      - '^git( |$)'   # trailing
    deny: []
";

    fn changed(edit: TextEdit) -> (String, u32) {
        match edit {
            TextEdit::Changed { text, line } => (text, line),
            other => panic!("expected a change, got {other:?}"),
        }
    }

    fn list(text: &str, section: Section, effect: Effect) -> Vec<String> {
        let file = parse_policy(text, Path::new("t")).expect("parses");
        section
            .list(effect, &file)
            .iter()
            .map(|r| r.value.clone())
            .collect()
    }

    #[test]
    fn command_rule_matches_exactly_that_command() {
        let commands = [
            "echo a.b*c (x) [y] $z ^w",
            "git status",
            r"printf '%s\n' \\ | tr -d '\t' && echo {a,b} ? + |",
            "ünï cödé # not a comment",
            "",
        ];
        for cmd in commands {
            let re = regex::Regex::new(&command_rule(cmd)).expect("compiles");
            assert!(re.is_match(cmd), "{cmd:?}");
            for other in [format!("{cmd}x"), format!("x{cmd}"), format!("{cmd}\n")] {
                assert!(!re.is_match(&other), "{cmd:?} must not match {other:?}");
            }
            if let Some(c) = cmd.chars().next() {
                let mut changed = cmd.to_string();
                changed.replace_range(0..c.len_utf8(), if c == 'z' { "y" } else { "z" });
                assert!(!re.is_match(&changed), "{cmd:?} vs {changed:?}");
            }
        }
    }

    #[test]
    fn path_rule_matches_exactly_that_path() {
        let paths = [
            "/home/u/a b/c.txt",
            "/tmp/x*y/[z]/{a,b}/q?.rs",
            r"/tmp/back\slash/!bang/]x[",
            "/tmp/ünï/cödé",
        ];
        for p in paths {
            let glob = path_rule(Path::new(p)).expect("escapes");
            let m = globset::GlobBuilder::new(&glob)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .expect("compiles")
                .compile_matcher();
            assert!(m.is_match(p), "{glob:?} must match {p:?}");
            for other in [format!("{p}x"), format!("{p}/x"), p.replacen('/', "/x", 2)] {
                assert!(!m.is_match(&other), "{glob:?} must not match {other:?}");
            }
            // The engine turns a rule into its absolute glob; the escaped form must survive that.
            let abs = crate::rules::absolute_glob(&glob, Path::new("/"), Path::new("/nonexistent"));
            let m = globset::GlobBuilder::new(&abs)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .expect("compiles")
                .compile_matcher();
            assert!(m.is_match(p), "engine glob {abs:?} must match {p:?}");
            assert!(!m.is_match(format!("{p}x")), "engine glob {abs:?}");
        }
        assert!(matches!(
            path_rule(Path::new("rel/x")),
            Err(PersistError::RelativePath(_))
        ));
    }

    #[test]
    fn appends_keeping_comments_and_flow_style() {
        let (text, line) = changed(
            add_rule_to_text(COMMENTED, p(), Section::Paths, Effect::Allow, "/tmp/a[*]b").unwrap(),
        );
        assert!(text.contains("# my policy — keep this comment"));
        assert!(text.contains("# stays on"));
        assert!(text.contains("# git is fine"));
        assert!(text.contains("# trailing"));
        assert_eq!(
            list(&text, Section::Paths, Effect::Allow),
            ["~/projects/**", "./**", "/tmp/a[*]b"]
        );
        assert_eq!(
            text.lines()
                .nth(line as usize - 1)
                .map(|l| l.contains("/tmp/a[*]b")),
            Some(true)
        );
        // Everything except the one line is unchanged.
        let before: Vec<&str> = COMMENTED.lines().collect();
        let after: Vec<&str> = text.lines().collect();
        assert_eq!(before.len(), after.len());
        let differing = before.iter().zip(&after).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 1, "{text}");
    }

    #[test]
    fn appends_to_block_lists_and_regex_metacharacters_survive() {
        let rule = command_rule("echo a.b*c (x) [y] $z ^w 'q' \"d\" # h: k");
        let (text, _) = changed(
            add_rule_to_text(COMMENTED, p(), Section::Commands, Effect::Allow, &rule).unwrap(),
        );
        assert_eq!(
            list(&text, Section::Commands, Effect::Allow),
            ["^git( |$)".to_string(), rule.clone()]
        );
        assert!(text.contains("# trailing"), "{text}");
        assert!(text.contains("# git is fine"));
    }

    #[test]
    fn creates_missing_keys() {
        for start in [
            "",
            "# only a comment\n",
            "permissions:\n  sandbox: true\n",
            "permissions: {}\n",
            "hooks:\n  gemini:\n    ask: deny\n",
        ] {
            for (section, effect) in [
                (Section::Paths, Effect::Allow),
                (Section::Paths, Effect::Deny),
                (Section::Commands, Effect::Allow),
                (Section::Commands, Effect::Deny),
            ] {
                let (text, _) =
                    changed(add_rule_to_text(start, p(), section, effect, "^x$").unwrap());
                assert_eq!(list(&text, section, effect), ["^x$"], "{start:?} → {text}");
                if start.starts_with('#') {
                    assert!(text.contains("# only a comment"));
                }
                if start.starts_with("hooks") {
                    let file = parse_policy(&text, Path::new("t")).unwrap();
                    assert_eq!(
                        file.hooks.gemini.ask,
                        Some(crate::config::AskFallback::Deny)
                    );
                }
            }
        }
    }

    #[test]
    fn is_idempotent() {
        let (once, _) = changed(
            add_rule_to_text(COMMENTED, p(), Section::Commands, Effect::Deny, "^rm$").unwrap(),
        );
        assert_eq!(
            add_rule_to_text(&once, p(), Section::Commands, Effect::Deny, "^rm$").unwrap(),
            TextEdit::Present { line: 11 }
        );
        // The same text in another list is a different rule.
        let (twice, _) = changed(
            add_rule_to_text(&once, p(), Section::Commands, Effect::Allow, "^rm$").unwrap(),
        );
        assert_eq!(
            list(&twice, Section::Commands, Effect::Allow),
            ["^git( |$)", "^rm$"]
        );
    }

    #[test]
    fn refuses_broken_or_misshapen_files() {
        let bad = [
            ("permissions:\n  paths: [1, 2\n", "not a valid policy file"),
            ("permissions:\n  colour: red\n", "not a valid policy file"),
            ("- a\n- b\n", "not a valid policy file"),
        ];
        for (text, want) in bad {
            let err = add_rule_to_text(
                text,
                Path::new("/p.yaml"),
                Section::Paths,
                Effect::Allow,
                "/x",
            )
            .expect_err(text)
            .to_string();
            assert!(err.contains(want), "{text:?}: {err}");
            assert!(err.contains("`/p.yaml`"), "{err}");
        }
        assert!(matches!(
            add_rule_to_text("", p(), Section::Paths, Effect::Allow, ""),
            Err(PersistError::EmptyRule)
        ));
    }

    #[test]
    fn writes_a_new_private_file_and_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("a/b/permissions.yaml");
        let got = append_rule(&file, Section::Commands, Effect::Allow, "^ls$").unwrap();
        assert_eq!(got, Appended::Added { line: 4 });
        assert_eq!(
            append_rule(&file, Section::Commands, Effect::Allow, "^ls$").unwrap(),
            Appended::AlreadyPresent { line: 4 }
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&file), 0o600);
            assert_eq!(mode(&tmp.path().join("a/b")), 0o700);
            assert_eq!(mode(&tmp.path().join("a")), 0o700);
        }
        // No temp files are left behind.
        let names: Vec<String> = fs::read_dir(tmp.path().join("a/b"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let mut names = names;
        names.sort();
        assert_eq!(names, ["permissions.yaml", "permissions.yaml.lock"]);
    }

    #[test]
    fn keeps_the_mode_of_an_existing_file_and_follows_symlinks() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real.yaml");
        fs::write(&real, COMMENTED).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
            let link = tmp.path().join("permissions.yaml");
            std::os::unix::fs::symlink(&real, &link).unwrap();
            append_rule(&link, Section::Paths, Effect::Deny, "/srv/**").unwrap();
            assert!(fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink());
            assert_eq!(
                fs::metadata(&real).unwrap().permissions().mode() & 0o777,
                0o640
            );
            let text = fs::read_to_string(&real).unwrap();
            assert_eq!(
                list(&text, Section::Paths, Effect::Deny),
                ["/etc/**", "/srv/**"]
            );
            assert!(text.starts_with("# my policy"));
        }
    }

    #[test]
    fn temp_files_of_dead_writers_are_removed_under_the_lock() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("permissions.yaml");
        let stale = tmp.path().join(".permissions.yaml.a1b2c3.tmp");
        let unrelated = tmp.path().join(".other.yaml.a1b2c3.tmp");
        fs::write(&stale, "permissions:\n  paths: [").unwrap();
        fs::write(&unrelated, "x").unwrap();
        append_rule(&file, Section::Paths, Effect::Allow, "/x").unwrap();
        assert!(!stale.exists());
        assert!(unrelated.exists());
    }

    #[test]
    fn a_broken_file_is_left_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("permissions.yaml");
        let broken = "permissions:\n  paths:\n    allow: [\"/a\"\n# note\n";
        fs::write(&file, broken).unwrap();
        let err = append_rule(&file, Section::Paths, Effect::Allow, "/b").unwrap_err();
        assert!(matches!(err, PersistError::Invalid { .. }), "{err}");
        assert_eq!(fs::read_to_string(&file).unwrap(), broken);
    }

    #[test]
    fn the_engine_decides_exactly_the_written_subjects() {
        use crate::{Context, Policy, Sources, Verdict};
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let work = tmp.path().join("work [1]");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&work).unwrap();
        let ctx = Context::new(&work, &home).unwrap();
        let central = tmp.path().join("central.yaml");
        fs::write(
            &central,
            "# mine\npermissions:\n  commands:\n    shell: false\n",
        )
        .unwrap();
        let sources = Sources {
            central: Some(central.clone()),
            ..Sources::default()
        };
        let file = ctx.cwd.join("a*b?.txt");
        let command = "echo a.b*c (x) [y] $z ^w";
        append_rule(
            &central,
            Section::Paths,
            Effect::Allow,
            &path_rule(&file).unwrap(),
        )
        .unwrap();
        append_rule(
            &central,
            Section::Commands,
            Effect::Allow,
            &command_rule(command),
        )
        .unwrap();
        let policy = Policy::load(&sources, &ctx).unwrap();

        let verdict = |p: &Path| {
            policy
                .evaluate_path(p.to_str().unwrap(), crate::Access::Write, &ctx)
                .verdict
        };
        assert_eq!(verdict(&file), Verdict::Allow);
        assert_eq!(verdict(&ctx.cwd.join("a*b?.txtx")), Verdict::Ask);
        assert_eq!(verdict(&ctx.cwd.join("aXbY.txt")), Verdict::Ask);
        let verdict = |c: &str| policy.evaluate_command(c, &ctx).verdict;
        assert_eq!(verdict(command), Verdict::Allow);
        assert_eq!(verdict("echo a.b*c (x) [y] $z ^W"), Verdict::Ask);
        assert_eq!(verdict("echo aXb*c (x) [y] $z ^w"), Verdict::Ask);
        assert_eq!(verdict(&format!("{command};rm -rf ~")), Verdict::Ask);
        assert!(fs::read_to_string(&central)
            .unwrap()
            .starts_with("# mine\n"));
    }

    #[test]
    fn the_escaper_and_the_persisted_rule_agree_on_a_backslash() {
        use crate::rules::escape_glob_literal;
        // The case where the compiled rules (`\\\\`) and the persisted rule
        // (`[\\]`) used to spell a backslash differently.
        let path = r"/tmp/back\slash/a*b/[c]/{d}/e?";
        let escaped = escape_glob_literal(path);
        assert_eq!(escaped, r"/tmp/back[\]slash/a[*]b/[[]c[]]/[{]d[}]/e[?]");
        assert_eq!(path_rule(Path::new(path)).unwrap(), escaped);
        for backslash_escape in [true, false] {
            let m = globset::GlobBuilder::new(&escaped)
                .literal_separator(true)
                .backslash_escape(backslash_escape)
                .build()
                .unwrap()
                .compile_matcher();
            assert!(m.is_match(path), "{backslash_escape}");
            assert!(!m.is_match(r"/tmp/back\\slash/a*b/[c]/{d}/e?"));
            assert!(!m.is_match("/tmp/backslash/a*b/[c]/{d}/e?"));
            assert!(!m.is_match(r"/tmp/back\slash/aXb/[c]/{d}/e?"));
        }
        assert_eq!(escape_glob_literal("/plain/path"), "/plain/path");
    }
}
