//! `sandgate hook install|uninstall|status AGENT`: merge sandgate's hook entry
//! into an agent's settings file, take it out again, and say whether it runs.
//!
//! The merge is additive and idempotent: every unrelated key, hook, comment and
//! blank line stays as it was (key order included), an existing sandgate entry
//! is updated in place of being duplicated, and a file that cannot be parsed is
//! refused with nothing written. JSON files are edited as JSON with comments
//! (Gemini CLI's `settings.json` may have `//` comments) through a concrete
//! syntax tree, TOML files through `toml_edit`. Before a file is changed, its
//! old content is copied beside it (`FILE.sandgate.bak`); the new content goes
//! to a temporary file that replaces the original.
//!
//! Codex CLI runs a user hook only once it is trusted: `[hooks.state."KEY"]
//! trusted_hash = "sha256:…"` in the user's `config.toml`, where KEY is
//! `<hooks file>:<event>:<group index>:<handler index>` and the hash is a
//! SHA-256 over the entry's normalized identity (see [`codex_hash`]).
//! `--trust` writes that entry for exactly sandgate's handlers; uninstall
//! removes it, and renumbers the trust of the user's other handlers in the same
//! file when taking sandgate's out shifts their positions.

use sandgate_policy::atomic::{atomic_replace, Mode};
use std::fmt;
use std::path::{Path, PathBuf};

use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstRootNode};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::Agent;

/// The matcher of sandgate's entry: every tool. sandgate decides itself which
/// tools are outside its scope.
pub const MATCH_ALL: &str = "*";

/// The timeout Codex CLI gives a hook without one, part of its trust hash.
const CODEX_DEFAULT_TIMEOUT_SECS: u64 = 600;

/// Which settings file: the project's or the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The project's settings, under the working directory.
    Project,
    /// The user's settings, under the home directory.
    User,
}

impl Scope {
    /// `project` or `user`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

/// The file format of a settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `settings.json` / `hooks.json` (comments allowed).
    Json,
    /// Codex CLI's `config.toml`, `[hooks]` table.
    Toml,
}

/// Where an agent's hook entries go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The settings file.
    pub file: PathBuf,
    /// Its format.
    pub format: Format,
    /// The hook events an entry is listed under.
    pub events: &'static [&'static str],
    /// The tool-name matcher of the entries.
    pub matcher: &'static str,
}

/// Why a settings file was not changed.
#[derive(Debug)]
pub enum InstallError {
    /// The file exists but is not valid JSON/TOML, or has an unexpected shape.
    Malformed {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing failed.
    Io {
        /// The file.
        file: PathBuf,
        /// The error.
        error: std::io::Error,
    },
}

impl fmt::Display for InstallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstallError::Malformed { file, message } => write!(
                f,
                "`{}` cannot be merged: {message}; nothing was written",
                file.display()
            ),
            InstallError::Io { file, error } => write!(f, "`{}`: {error}", file.display()),
        }
    }
}

/// What an install or uninstall did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The file was written.
    Changed,
    /// The file already said what it should; nothing was written.
    Unchanged,
}

/// Where sandgate's handler sits in a settings file: event, group index, handler index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// The hook event (`PreToolUse`).
    pub event: String,
    /// The index of the matcher group under the event.
    pub group: usize,
    /// The index of the handler in the group.
    pub handler: usize,
    /// The group's matcher, if any.
    pub matcher: Option<String>,
    /// The handler's command.
    pub command: String,
    /// The handler's `timeout`, if set.
    pub timeout: Option<u64>,
}

/// The settings file of `agent` for `scope`. `codex_home` is `$CODEX_HOME`, if set.
pub fn target(
    agent: Agent,
    scope: Scope,
    cwd: &Path,
    home: &Path,
    codex_home: Option<&Path>,
) -> Target {
    let base = |dir: &str| match scope {
        Scope::Project => cwd.join(dir),
        Scope::User => home.join(dir),
    };
    match agent {
        Agent::Claude => Target {
            file: base(".claude").join("settings.json"),
            format: Format::Json,
            events: &["PreToolUse", "PostToolUse", "PostToolUseFailure"],
            matcher: MATCH_ALL,
        },
        Agent::Codex => {
            let dir = match scope {
                Scope::User => codex_user_dir(home, codex_home),
                Scope::Project => base(".codex"),
            };
            // Codex CLI reads hooks from `hooks.json`, or from `[hooks]` in
            // `config.toml`; a config that already has hooks keeps them there.
            let toml = dir.join("config.toml");
            let (file, format) = if toml_has_hook_events(&toml) {
                (toml, Format::Toml)
            } else {
                (dir.join("hooks.json"), Format::Json)
            };
            Target {
                file,
                format,
                events: &["PreToolUse", "PermissionRequest", "PostToolUse"],
                matcher: MATCH_ALL,
            }
        }
        Agent::Gemini => Target {
            file: base(".gemini").join("settings.json"),
            format: Format::Json,
            events: &["BeforeTool", "AfterTool"],
            matcher: MATCH_ALL,
        },
    }
}

/// Codex CLI's user directory: `$CODEX_HOME`, else `~/.codex`, resolved as
/// Codex resolves it (its trust keys carry the resolved path).
pub fn codex_user_dir(home: &Path, codex_home: Option<&Path>) -> PathBuf {
    let dir = codex_home.map_or_else(|| home.join(".codex"), Path::to_path_buf);
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

fn toml_has_hook_events(file: &Path) -> bool {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok())
        .and_then(|d| {
            d.get("hooks")
                .and_then(|h| h.as_table_like())
                .map(|h| h.iter().any(|(k, _)| k != "state"))
        })
        .unwrap_or(false)
}

/// The command the agent runs: this executable, quoted for a POSIX shell if needed.
pub fn hook_command(exe: &Path, agent: Agent) -> String {
    let exe = exe.to_string_lossy();
    let quoted = if exe
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c))
    {
        exe.into_owned()
    } else {
        format!("'{}'", exe.replace('\'', r"'\''"))
    };
    format!("{quoted} hook {}", agent.as_str())
}

/// The command a project install writes: `sandgate` from `PATH`, so it works
/// on every teammate's machine.
pub fn portable_command(agent: Agent) -> String {
    format!("sandgate hook {}", agent.as_str())
}

/// The program of a hook command (unquoted), and the rest.
fn split_command(command: &str) -> Option<(&str, &str)> {
    let command = command.trim();
    if let Some(quoted) = command.strip_prefix('\'') {
        quoted
            .find('\'')
            .map(|end| (&quoted[..end], &quoted[end + 1..]))
    } else if let Some(quoted) = command.strip_prefix('"') {
        quoted
            .find('"')
            .map(|end| (&quoted[..end], &quoted[end + 1..]))
    } else {
        command.split_once(char::is_whitespace)
    }
}

/// The program a hook command runs, unquoted.
pub fn command_program(command: &str) -> Option<&str> {
    split_command(command).map(|(p, _)| p)
}

/// Whether a hook command is sandgate's hook for `agent` (whatever path it was installed from).
pub fn is_sandgate_command(command: &str, agent: Agent) -> bool {
    let Some((program, rest)) = split_command(command) else {
        return false;
    };
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let words: Vec<&str> = rest.split_whitespace().collect();
    name == "sandgate" && words.first() == Some(&"hook") && words.get(1) == Some(&agent.as_str())
}

/// Add (or update) sandgate's entries.
pub fn install(target: &Target, agent: Agent, command: &str) -> Result<Outcome, InstallError> {
    match target.format {
        Format::Json => edit_json(target, |root| json_install(root, target, agent, command)),
        Format::Toml => edit_toml(target, |doc| toml_install(doc, target, agent, command)),
    }
}

/// Remove sandgate's entries (and only them).
pub fn uninstall(target: &Target, agent: Agent) -> Result<Outcome, InstallError> {
    if !target.file.exists() {
        return Ok(Outcome::Unchanged);
    }
    match target.format {
        Format::Json => edit_json(target, |root| json_uninstall(root, target, agent)),
        Format::Toml => edit_toml(target, |doc| toml_uninstall(doc, target, agent)),
    }
}

/// Where sandgate's handlers are in `target`'s file, under any event.
pub fn positions(target: &Target, agent: Agent) -> Result<Vec<Position>, InstallError> {
    let Some(groups) = read_groups(target)? else {
        return Ok(Vec::new());
    };
    Ok(all_positions(&groups)
        .into_iter()
        .filter(|p| is_sandgate_command(&p.command, agent))
        .collect())
}

/// Every handler's position in `target`'s file (all events).
pub fn all_handlers(target: &Target) -> Result<Vec<Position>, InstallError> {
    Ok(read_groups(target)?
        .map(|g| all_positions(&g))
        .unwrap_or_default())
}

/// `hooks` of the file as plain data (`event -> [group]`), or `None` when the file is missing.
fn read_groups(target: &Target) -> Result<Option<Map<String, Value>>, InstallError> {
    let Some(text) = read_text(target)? else {
        return Ok(None);
    };
    let hooks = match target.format {
        Format::Json => {
            let root = parse_jsonc(target, &text)?;
            root.value()
                .and_then(|v| v.to_serde_value())
                .and_then(|v| v.get("hooks").cloned())
        }
        Format::Toml => {
            let doc: toml_edit::DocumentMut = text
                .parse()
                .map_err(|e| malformed(target, format!("it is not valid TOML ({e})")))?;
            doc.get("hooks").map(toml_to_json)
        }
    };
    Ok(match hooks {
        Some(Value::Object(mut m)) => {
            m.remove("state");
            Some(m)
        }
        _ => Some(Map::new()),
    })
}

fn all_positions(groups: &Map<String, Value>) -> Vec<Position> {
    let mut out = Vec::new();
    for (event, list) in groups {
        let Some(list) = list.as_array() else {
            continue;
        };
        for (g, group) in list.iter().enumerate() {
            let matcher = group
                .get("matcher")
                .and_then(Value::as_str)
                .map(str::to_string);
            let Some(hooks) = group.get("hooks").and_then(Value::as_array) else {
                continue;
            };
            for (h, hook) in hooks.iter().enumerate() {
                let Some(command) = hook.get("command").and_then(Value::as_str) else {
                    continue;
                };
                out.push(Position {
                    event: event.clone(),
                    group: g,
                    handler: h,
                    matcher: matcher.clone(),
                    command: command.to_string(),
                    timeout: hook.get("timeout").and_then(Value::as_u64),
                });
            }
        }
    }
    out
}

/// The table `key` of `parent`, created (implicit, so an empty one is not
/// written) when missing; `what` names it in the error when it is not a table.
fn table_entry<'a>(
    parent: &'a mut dyn toml_edit::TableLike,
    key: &str,
    target: &Target,
    what: &str,
) -> Result<&'a mut dyn toml_edit::TableLike, InstallError> {
    parent
        .entry(key)
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_like_mut()
        .ok_or_else(|| malformed(target, format!("{what} is not a table")))
}

fn malformed(target: &Target, message: impl Into<String>) -> InstallError {
    InstallError::Malformed {
        file: target.file.clone(),
        message: message.into(),
    }
}

fn read_text(target: &Target) -> Result<Option<String>, InstallError> {
    read_file(&target.file)
}

fn read_file(file: &Path) -> Result<Option<String>, InstallError> {
    match std::fs::read_to_string(file) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(InstallError::Io {
            file: file.to_path_buf(),
            error,
        }),
    }
}

/// A JSON-with-comments document as plain data, or `None` when it does not parse.
pub fn jsonc_value(text: &str) -> Option<Value> {
    CstRootNode::parse(text, &jsonc_parser::ParseOptions::default())
        .ok()?
        .value()?
        .to_serde_value()
}

fn parse_jsonc(target: &Target, text: &str) -> Result<CstRootNode, InstallError> {
    let root = CstRootNode::parse(text, &jsonc_parser::ParseOptions::default())
        .map_err(|e| malformed(target, format!("it is not valid JSON ({e})")))?;
    match root.value() {
        None => {}
        Some(v) if v.as_object().is_some() => {}
        Some(_) => return Err(malformed(target, "the top level is not a JSON object")),
    }
    Ok(root)
}

/// Read, edit (the closure says whether it changed anything), write back.
fn edit_json(
    target: &Target,
    edit: impl FnOnce(&CstObject) -> Result<bool, InstallError>,
) -> Result<Outcome, InstallError> {
    let text = read_text(target)?;
    let root = parse_jsonc(target, text.as_deref().unwrap_or(""))?;
    let obj = root.object_value_or_set();
    if !edit(&obj)? {
        return Ok(Outcome::Unchanged);
    }
    let mut out = root.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    write_with_backup(&target.file, text.as_deref(), out.as_bytes())?;
    Ok(Outcome::Changed)
}

fn edit_toml(
    target: &Target,
    edit: impl FnOnce(&mut toml_edit::DocumentMut) -> Result<bool, InstallError>,
) -> Result<Outcome, InstallError> {
    let text = read_text(target)?;
    let mut doc: toml_edit::DocumentMut = text
        .as_deref()
        .unwrap_or("")
        .parse()
        .map_err(|e| malformed(target, format!("it is not valid TOML ({e})")))?;
    if !edit(&mut doc)? {
        return Ok(Outcome::Unchanged);
    }
    write_with_backup(&target.file, text.as_deref(), doc.to_string().as_bytes())?;
    Ok(Outcome::Changed)
}

/// The backup written beside `file` before it is changed.
pub fn backup_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".sandgate.bak");
    file.with_file_name(name)
}

/// Keep the old content beside the file, then replace the file.
fn write_with_backup(file: &Path, old: Option<&str>, bytes: &[u8]) -> Result<(), InstallError> {
    if let Some(old) = old {
        write_atomic(&backup_path(file), old.as_bytes())?;
    }
    write_atomic(file, bytes)
}

/// Replace `file` by a fully written temporary file in the same directory,
/// keeping the original's permissions.
fn write_atomic(file: &Path, bytes: &[u8]) -> Result<(), InstallError> {
    let io = |error| InstallError::Io {
        file: file.to_path_buf(),
        error,
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    atomic_replace(file, bytes, Mode::Keep { new: 0o644 }).map_err(|e| io(e.source))
}

fn to_cst(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(to_cst).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), to_cst(v))).collect())
        }
    }
}

/// The entry sandgate writes under each event.
fn wanted_group(target: &Target, agent: Agent, command: &str) -> Value {
    let mut entry = json!({ "type": "command", "command": command });
    if agent == Agent::Gemini {
        entry["name"] = json!("sandgate");
    }
    json!({ "matcher": target.matcher, "hooks": [entry] })
}

fn group_has_ours(group: &Value, agent: Agent) -> bool {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|hs| hs.iter().any(|h| json_is_ours(h, agent)))
}

fn json_is_ours(hook: &Value, agent: Agent) -> bool {
    hook.get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| is_sandgate_command(c, agent))
}

/// `hooks.EVENT` of the root object: `None` when missing and not created.
fn json_event_array(
    root: &CstObject,
    target: &Target,
    event: &str,
    create: bool,
) -> Result<Option<CstArray>, InstallError> {
    let hooks = match root.get("hooks") {
        None if !create => return Ok(None),
        None => root.object_value_or_create("hooks"),
        Some(_) => root.object_value("hooks"),
    }
    .ok_or_else(|| malformed(target, "`hooks` is not an object"))?;
    let array = match hooks.get(event) {
        None if !create => return Ok(None),
        None => hooks.array_value_or_create(event),
        Some(_) => hooks.array_value(event),
    };
    array
        .map(Some)
        .ok_or_else(|| malformed(target, format!("`hooks.{event}` is not an array")))
}

/// Take sandgate's handlers out of every group of `groups`; drop a group only
/// if sandgate's handlers were all it had.
fn json_remove_ours(groups: &CstArray, agent: Agent) -> bool {
    let mut changed = false;
    for element in groups.elements() {
        let Some(value) = element.to_serde_value() else {
            continue;
        };
        if !group_has_ours(&value, agent) {
            continue;
        }
        changed = true;
        let hooks = value
            .get("hooks")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if hooks.iter().all(|h| json_is_ours(h, agent)) {
            element.remove();
            continue;
        }
        let Some(hook_nodes) = element
            .as_object()
            .and_then(|o| o.array_value("hooks"))
            .map(|a| a.elements())
        else {
            continue;
        };
        for node in hook_nodes {
            if node
                .to_serde_value()
                .is_some_and(|h| json_is_ours(&h, agent))
            {
                node.remove();
            }
        }
    }
    if changed {
        rejoin_closing_bracket(groups);
    }
    changed
}

/// Appending to an array written on one line breaks the line before its
/// `]`; once sandgate's entry is gone again, the `]` goes back up, so an
/// uninstall gives the user's line back as it was. An array with any other
/// line break is left as it is.
fn rejoin_closing_bracket(array: &CstArray) {
    let children = array.children();
    if children.iter().filter(|c| c.is_newline()).count() != 1 {
        return;
    }
    let Some(close) = children.iter().rposition(|c| c.token_char() == Some(']')) else {
        return;
    };
    let mut start = close;
    while start > 0 && children[start - 1].is_whitespace() {
        start -= 1;
    }
    if start == 0 || !children[start - 1].is_newline() {
        return;
    }
    start -= 1;
    while start > 0 && children[start - 1].is_whitespace() {
        start -= 1;
    }
    // As the array opens: `[ {…} ]` keeps its space, `[{…}]` has none.
    let spaced = children
        .iter()
        .position(|c| c.token_char() == Some('['))
        .and_then(|open| children.get(open + 1))
        .is_some_and(CstNode::is_whitespace);
    let mut kept = false;
    for node in children[start..close].iter().cloned() {
        match node.as_whitespace() {
            Some(space) if spaced && !kept => {
                space.set_value(" ".into());
                kept = true;
            }
            _ => node.remove(),
        }
    }
}

fn json_install(
    root: &CstObject,
    target: &Target,
    agent: Agent,
    command: &str,
) -> Result<bool, InstallError> {
    let wanted = wanted_group(target, agent, command);
    let mut changed = false;
    for event in target.events {
        let Some(groups) = json_event_array(root, target, event, true)? else {
            continue;
        };
        let values: Vec<Value> = groups
            .elements()
            .iter()
            .filter_map(CstNode::to_serde_value)
            .collect();
        let ours: Vec<&Value> = values.iter().filter(|g| group_has_ours(g, agent)).collect();
        // Already exactly there, and only once, and last: nothing to do.
        if ours.len() == 1 && *ours[0] == wanted && values.last() == Some(&wanted) {
            continue;
        }
        json_remove_ours(&groups, agent);
        groups.append(to_cst(&wanted));
        changed = true;
    }
    Ok(changed)
}

fn json_uninstall(root: &CstObject, target: &Target, agent: Agent) -> Result<bool, InstallError> {
    let mut changed = false;
    let Some(hooks) = root.get("hooks") else {
        return Ok(false);
    };
    let Some(hooks) = hooks.object_value() else {
        return Err(malformed(target, "`hooks` is not an object"));
    };
    for prop in hooks.properties() {
        let Some(event) = prop.decoded_name() else {
            continue;
        };
        let Some(groups) = prop.array_value() else {
            continue;
        };
        if !json_remove_ours(&groups, agent) {
            continue;
        }
        changed = true;
        // Tidy only what sandgate's removal emptied.
        if groups.elements().is_empty() {
            if let Some(p) = hooks.get(&event) {
                p.remove();
            }
        }
    }
    if changed && hooks.properties().is_empty() {
        if let Some(p) = root.get("hooks") {
            p.remove();
        }
    }
    Ok(changed)
}

/// The matcher groups of `[hooks]` in Codex CLI's `config.toml`, as plain
/// data, so they can be compared and edited whatever TOML spelling they use.
fn toml_groups(
    doc: &toml_edit::DocumentMut,
    target: &Target,
    event: &str,
) -> Result<Vec<Value>, InstallError> {
    let Some(hooks) = doc.get("hooks") else {
        return Ok(Vec::new());
    };
    let Some(hooks) = hooks.as_table_like() else {
        return Err(malformed(target, "`hooks` is not a table"));
    };
    let Some(item) = hooks.get(event) else {
        return Ok(Vec::new());
    };
    match toml_to_json(item) {
        Value::Array(groups) => Ok(groups),
        _ => Err(malformed(
            target,
            format!("`hooks.{event}` is not an array of tables"),
        )),
    }
}

fn toml_to_json(item: &toml_edit::Item) -> Value {
    match item {
        toml_edit::Item::None => Value::Null,
        toml_edit::Item::Value(v) => toml_value_to_json(v),
        toml_edit::Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_to_json(v)))
                .collect(),
        ),
        toml_edit::Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| toml_to_json(&toml_edit::Item::Table(t.clone())))
                .collect(),
        ),
    }
}

fn toml_value_to_json(v: &toml_edit::Value) -> Value {
    match v {
        toml_edit::Value::String(s) => json!(s.value()),
        toml_edit::Value::Integer(i) => json!(i.value()),
        toml_edit::Value::Float(f) => json!(f.value()),
        toml_edit::Value::Boolean(b) => json!(b.value()),
        toml_edit::Value::Datetime(d) => json!(d.value().to_string()),
        toml_edit::Value::Array(a) => Value::Array(a.iter().map(toml_value_to_json).collect()),
        toml_edit::Value::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_value_to_json(v)))
                .collect(),
        ),
    }
}

fn toml_is_ours(table: &toml_edit::Table, agent: Agent) -> bool {
    table
        .get("command")
        .and_then(|c| c.as_str())
        .is_some_and(|c| is_sandgate_command(c, agent))
}

/// Remove sandgate's hooks from `[[hooks.EVENT]]` groups written as tables.
fn toml_remove_ours(
    doc: &mut toml_edit::DocumentMut,
    target: &Target,
    event: &str,
    agent: Agent,
) -> Result<bool, InstallError> {
    let has_ours = toml_groups(doc, target, event)?
        .iter()
        .any(|g| group_has_ours(g, agent));
    if !has_ours {
        return Ok(false);
    }
    let Some(groups) = doc
        .get_mut("hooks")
        .and_then(|h| h.as_table_like_mut())
        .and_then(|h| h.get_mut(event))
        .and_then(|e| e.as_array_of_tables_mut())
    else {
        return Err(malformed(
            target,
            format!(
                "sandgate's entry in `hooks.{event}` is written as an inline array; edit it by hand"
            ),
        ));
    };
    groups.retain(|group| {
        let Some(hooks) = group.get("hooks").and_then(|h| h.as_array_of_tables()) else {
            return true;
        };
        hooks.iter().any(|h| !toml_is_ours(h, agent))
    });
    for group in groups.iter_mut() {
        if let Some(hooks) = group
            .get_mut("hooks")
            .and_then(|h| h.as_array_of_tables_mut())
        {
            hooks.retain(|h| !toml_is_ours(h, agent));
        }
    }
    Ok(true)
}

fn toml_install(
    doc: &mut toml_edit::DocumentMut,
    target: &Target,
    agent: Agent,
    command: &str,
) -> Result<bool, InstallError> {
    let wanted = wanted_group(target, agent, command);
    let mut changed = false;
    for event in target.events {
        let groups = toml_groups(doc, target, event)?;
        let ours: Vec<&Value> = groups.iter().filter(|g| group_has_ours(g, agent)).collect();
        if ours.len() == 1 && *ours[0] == wanted && groups.last() == Some(&wanted) {
            continue;
        }
        toml_remove_ours(doc, target, event, agent)?;
        let mut hook = toml_edit::Table::new();
        hook.insert("type", toml_edit::value("command"));
        hook.insert("command", toml_edit::value(command));
        let mut hooks = toml_edit::ArrayOfTables::new();
        hooks.push(hook);
        let mut group = toml_edit::Table::new();
        group.insert("matcher", toml_edit::value(target.matcher));
        group.insert("hooks", toml_edit::Item::ArrayOfTables(hooks));
        let root = table_entry(doc.as_table_mut(), "hooks", target, "`hooks`")?;
        match root.get_mut(event) {
            None => {
                let mut groups = toml_edit::ArrayOfTables::new();
                groups.push(group);
                root.insert(event, toml_edit::Item::ArrayOfTables(groups));
            }
            Some(toml_edit::Item::ArrayOfTables(groups)) => groups.push(group),
            Some(toml_edit::Item::Value(toml_edit::Value::Array(groups))) => {
                let mut inline = toml_edit::InlineTable::new();
                inline.insert("matcher", target.matcher.into());
                let mut hook = toml_edit::InlineTable::new();
                hook.insert("type", "command".into());
                hook.insert("command", command.into());
                let mut hooks = toml_edit::Array::new();
                hooks.push(hook);
                inline.insert("hooks", toml_edit::Value::Array(hooks));
                groups.push(inline);
            }
            Some(_) => {
                return Err(malformed(
                    target,
                    format!("`hooks.{event}` is not an array of tables"),
                ))
            }
        }
        changed = true;
    }
    Ok(changed)
}

fn toml_uninstall(
    doc: &mut toml_edit::DocumentMut,
    target: &Target,
    agent: Agent,
) -> Result<bool, InstallError> {
    let events: Vec<String> = match doc.get("hooks").and_then(|h| h.as_table_like()) {
        Some(h) => h
            .iter()
            .map(|(k, _)| k.to_string())
            .filter(|k| k != "state")
            .collect(),
        None => return Ok(false),
    };
    let mut changed = false;
    for event in events {
        if !toml_remove_ours(doc, target, &event, agent)? {
            continue;
        }
        changed = true;
        let empty = doc
            .get("hooks")
            .and_then(|h| h.as_table_like())
            .and_then(|h| h.get(&event))
            .and_then(|e| e.as_array_of_tables())
            .is_some_and(|g| g.is_empty());
        if empty {
            if let Some(hooks) = doc.get_mut("hooks").and_then(|h| h.as_table_like_mut()) {
                hooks.remove(&event);
            }
        }
    }
    if changed
        && doc
            .get("hooks")
            .and_then(|h| h.as_table_like())
            .is_some_and(|h| h.is_empty())
    {
        doc.remove("hooks");
    }
    Ok(changed)
}

/// Codex CLI's name for an event in trust keys: `PreToolUse` → `pre_tool_use`.
pub fn codex_event_label(event: &str) -> String {
    let mut out = String::with_capacity(event.len() + 4);
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The trust key of the handler at `pos` in `source` (the hooks file).
pub fn codex_key(source: &Path, pos: &Position) -> String {
    format!(
        "{}:{}:{}:{}",
        source.display(),
        codex_event_label(&pos.event),
        pos.group,
        pos.handler
    )
}

/// The hash Codex CLI 0.171 records when a command hook is trusted: SHA-256
/// of the compact JSON, keys sorted, of `{event_name, matcher, hooks: [{type,
/// command, timeout, async}]}` with the timeout defaulted to 600 seconds
/// (checked against the real `codex app-server`'s `hooks/list`).
pub fn codex_hash(pos: &Position) -> String {
    let mut identity = Map::new();
    identity.insert("event_name".into(), json!(codex_event_label(&pos.event)));
    if let Some(m) = &pos.matcher {
        identity.insert("matcher".into(), json!(m));
    }
    identity.insert(
        "hooks".into(),
        json!([{
            "async": false,
            "command": pos.command,
            "timeout": pos.timeout.unwrap_or(CODEX_DEFAULT_TIMEOUT_SECS).max(1),
            "type": "command",
        }]),
    );
    let canonical = sorted(&Value::Object(identity));
    let bytes = serde_json::to_vec(&canonical).unwrap_or_default();
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// One `[hooks.state."KEY"]` entry of Codex CLI's user `config.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustState {
    /// The key.
    pub key: String,
    /// `trusted_hash`, if set.
    pub trusted_hash: Option<String>,
    /// `enabled`, if set.
    pub enabled: Option<bool>,
}

/// The `[hooks.state]` entries of `config` (Codex CLI's user `config.toml`).
pub fn codex_trust_states(config: &Path) -> Result<Vec<TrustState>, InstallError> {
    let target = toml_target(config);
    let Some(text) = read_file(config)? else {
        return Ok(Vec::new());
    };
    let doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| malformed(&target, format!("it is not valid TOML ({e})")))?;
    let Some(state) = doc
        .get("hooks")
        .and_then(|h| h.as_table_like())
        .and_then(|h| h.get("state"))
        .and_then(|s| s.as_table_like())
    else {
        return Ok(Vec::new());
    };
    Ok(state
        .iter()
        .map(|(key, item)| TrustState {
            key: key.to_string(),
            trusted_hash: item
                .get("trusted_hash")
                .and_then(|h| h.as_str())
                .map(str::to_string),
            enabled: item.get("enabled").and_then(|e| e.as_bool()),
        })
        .collect())
}

fn toml_target(file: &Path) -> Target {
    Target {
        file: file.to_path_buf(),
        format: Format::Toml,
        events: &[],
        matcher: MATCH_ALL,
    }
}

/// A change to the trust entries of Codex CLI's user `config.toml`.
#[derive(Debug, Clone, Default)]
pub struct TrustEdit {
    /// Keys to remove.
    pub remove: Vec<String>,
    /// Keys to rename (old, new), keeping their values.
    pub rename: Vec<(String, String)>,
    /// Keys to set trusted with this hash.
    pub trust: Vec<(String, String)>,
}

impl TrustEdit {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.remove.is_empty() && self.rename.is_empty() && self.trust.is_empty()
    }
}

/// Apply `edit` to `config`, keeping everything else as it was.
pub fn edit_codex_trust(config: &Path, edit: &TrustEdit) -> Result<Outcome, InstallError> {
    if edit.is_empty() {
        return Ok(Outcome::Unchanged);
    }
    let target = toml_target(config);
    edit_toml(&target, |doc| {
        let mut changed = false;
        let hooks = table_entry(doc.as_table_mut(), "hooks", &target, "`hooks`")?;
        let state = table_entry(hooks, "state", &target, "`hooks.state`")?;
        for key in &edit.remove {
            changed |= state.remove(key).is_some();
        }
        let mut moved = Vec::new();
        for (old, new) in &edit.rename {
            if let Some(item) = state.remove(old) {
                moved.push((new.clone(), item));
            }
        }
        for (new, item) in moved {
            state.insert(&new, item);
            changed = true;
        }
        for (key, hash) in &edit.trust {
            let same = state
                .get(key)
                .and_then(|i| i.get("trusted_hash"))
                .and_then(|h| h.as_str())
                == Some(hash.as_str());
            let enabled_false = state
                .get(key)
                .and_then(|i| i.get("enabled"))
                .and_then(|e| e.as_bool())
                == Some(false);
            if same && !enabled_false {
                continue;
            }
            let mut table = toml_edit::Table::new();
            table.insert("trusted_hash", toml_edit::value(hash.as_str()));
            state.insert(key, toml_edit::Item::Table(table));
            changed = true;
        }
        if state.is_empty() {
            hooks.remove("state");
        }
        if hooks.is_empty() {
            doc.remove("hooks");
        }
        Ok(changed)
    })
}

/// The trust edit that follows taking sandgate's handlers out of a hooks
/// file: its keys go, and the keys of handlers after it in the same group or
/// event move down so that the user's other trusted hooks stay trusted.
pub fn renumber_after_removal(
    source: &Path,
    before: &[Position],
    removed: &[Position],
    states: &[TrustState],
) -> TrustEdit {
    let mut edit = TrustEdit::default();
    let known: std::collections::HashSet<&str> = states.iter().map(|s| s.key.as_str()).collect();
    for pos in removed {
        let key = codex_key(source, pos);
        if known.contains(key.as_str()) {
            edit.remove.push(key);
        }
    }
    // The new position of each remaining handler.
    let mut renames = Vec::new();
    for pos in before {
        if removed.contains(pos) {
            continue;
        }
        let same_event: Vec<&Position> = removed.iter().filter(|r| r.event == pos.event).collect();
        // A whole group went when every handler of it was removed.
        let groups_gone = {
            let mut gone = std::collections::BTreeSet::new();
            for r in &same_event {
                let all_ours = before
                    .iter()
                    .filter(|b| b.event == r.event && b.group == r.group)
                    .all(|b| removed.contains(b));
                if all_ours {
                    gone.insert(r.group);
                }
            }
            gone
        };
        let group = pos.group - groups_gone.iter().filter(|g| **g < pos.group).count();
        let handler = pos.handler
            - same_event
                .iter()
                .filter(|r| r.group == pos.group && r.handler < pos.handler)
                .count();
        if group != pos.group || handler != pos.handler {
            let moved = Position {
                group,
                handler,
                ..pos.clone()
            };
            renames.push((codex_key(source, pos), codex_key(source, &moved)));
        }
    }
    // Rename in order so that no key lands on one not yet moved.
    renames.sort();
    for (old, new) in renames {
        if known.contains(old.as_str()) {
            edit.rename.push((old, new));
        }
    }
    edit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_sandgate_commands() {
        assert!(is_sandgate_command(
            "/usr/bin/sandgate hook claude",
            Agent::Claude
        ));
        assert!(is_sandgate_command("sandgate hook claude", Agent::Claude));
        assert!(is_sandgate_command(
            "'/opt/my tools/sandgate' hook codex",
            Agent::Codex
        ));
        assert!(!is_sandgate_command("sandgate hook gemini", Agent::Claude));
        assert!(!is_sandgate_command(
            "/usr/bin/notsandgate hook claude",
            Agent::Claude
        ));
        assert!(!is_sandgate_command(
            "echo sandgate hook claude",
            Agent::Claude
        ));
        let cmd = hook_command(Path::new("/opt/my tools/sandgate"), Agent::Codex);
        assert_eq!(cmd, "'/opt/my tools/sandgate' hook codex");
        assert!(is_sandgate_command(&cmd, Agent::Codex));
        assert_eq!(command_program(&cmd), Some("/opt/my tools/sandgate"));
    }

    #[test]
    fn the_codex_hash_is_the_one_codex_reports() {
        // `codex app-server` 0.171.0, `hooks/list`, for this entry in hooks.json.
        let pos = Position {
            event: "PreToolUse".into(),
            group: 0,
            handler: 0,
            matcher: Some("*".into()),
            command: "sandgate hook codex".into(),
            timeout: None,
        };
        assert_eq!(
            codex_hash(&pos),
            "sha256:75110e2b0a1d7305f58855b470c8808e92f9162c8640c5bd9a96e964f05b25b3"
        );
        assert_eq!(
            codex_key(Path::new("/h/.codex/hooks.json"), &pos),
            "/h/.codex/hooks.json:pre_tool_use:0:0"
        );
        assert_eq!(codex_event_label("PermissionRequest"), "permission_request");
    }

    #[test]
    fn removal_renumbers_the_trust_of_later_handlers() {
        let p = |group, handler, command: &str| Position {
            event: "PreToolUse".into(),
            group,
            handler,
            matcher: None,
            command: command.into(),
            timeout: None,
        };
        let before = [p(0, 0, "a"), p(1, 0, "sandgate hook codex"), p(2, 0, "b")];
        let src = Path::new("/h/hooks.json");
        let states: Vec<TrustState> = before
            .iter()
            .map(|pos| TrustState {
                key: codex_key(src, pos),
                trusted_hash: Some("sha256:x".into()),
                enabled: None,
            })
            .collect();
        let edit = renumber_after_removal(src, &before, &before[1..2], &states);
        assert_eq!(edit.remove, ["/h/hooks.json:pre_tool_use:1:0"]);
        assert_eq!(
            edit.rename,
            [(
                "/h/hooks.json:pre_tool_use:2:0".to_string(),
                "/h/hooks.json:pre_tool_use:1:0".to_string()
            )]
        );
    }
}
