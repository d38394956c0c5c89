//! `sandgate hook install|uninstall AGENT`: merge sandgate's hook entry into an
//! agent's settings file, or take it out again.
//!
//! The merge is additive and idempotent: every unrelated key and hook stays as
//! it was (key order included), an existing sandgate entry is updated in place
//! of being duplicated, and a file that cannot be parsed is refused with
//! nothing written. Writes go to a temporary file that replaces the original.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::map::{CLAUDE_TOOLS, GEMINI_TOOLS};
use super::Agent;

/// Which settings file: the project's or the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The project's settings, under the working directory.
    Project,
    /// The user's settings, under the home directory.
    User,
}

/// The file format of a settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `settings.json` / `hooks.json`.
    Json,
    /// Codex CLI's `config.toml`, `[hooks]` table.
    Toml,
}

/// Where an agent's hook entry goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The settings file.
    pub file: PathBuf,
    /// Its format.
    pub format: Format,
    /// The hook event the entry is listed under.
    pub event: &'static str,
    /// The tool-name matcher of the entry.
    pub matcher: String,
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
            event: "PreToolUse",
            matcher: CLAUDE_TOOLS.join("|"),
        },
        Agent::Codex => {
            let dir = match (scope, codex_home) {
                (Scope::User, Some(h)) => h.to_path_buf(),
                _ => base(".codex"),
            };
            // Codex CLI reads hooks from `hooks.json`, or from `[hooks]` in
            // `config.toml`; a config that already has hooks keeps them there.
            let toml = dir.join("config.toml");
            let (file, format) = if toml_has_hooks(&toml) {
                (toml, Format::Toml)
            } else {
                (dir.join("hooks.json"), Format::Json)
            };
            Target {
                file,
                format,
                event: "PreToolUse",
                matcher: CLAUDE_TOOLS.join("|"),
            }
        }
        Agent::Gemini => Target {
            file: base(".gemini").join("settings.json"),
            format: Format::Json,
            event: "BeforeTool",
            matcher: GEMINI_TOOLS.join("|"),
        },
    }
}

fn toml_has_hooks(file: &Path) -> bool {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok())
        .is_some_and(|d| d.get("hooks").is_some())
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

/// Whether a hook command is sandgate's hook for `agent` (whatever path it was installed from).
pub fn is_sandgate_command(command: &str, agent: Agent) -> bool {
    let command = command.trim();
    let (program, rest) = if let Some(quoted) = command.strip_prefix('\'') {
        match quoted.find('\'') {
            Some(end) => (&quoted[..end], &quoted[end + 1..]),
            None => return false,
        }
    } else if let Some(quoted) = command.strip_prefix('"') {
        match quoted.find('"') {
            Some(end) => (&quoted[..end], &quoted[end + 1..]),
            None => return false,
        }
    } else {
        match command.split_once(char::is_whitespace) {
            Some((p, r)) => (p, r),
            None => return false,
        }
    };
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let words: Vec<&str> = rest.split_whitespace().collect();
    name == "sandgate" && words.first() == Some(&"hook") && words.get(1) == Some(&agent.as_str())
}

/// Add (or update) sandgate's entry.
pub fn install(target: &Target, agent: Agent, command: &str) -> Result<Outcome, InstallError> {
    match target.format {
        Format::Json => edit_json(target, |root| json_install(root, target, agent, command)),
        Format::Toml => edit_toml(target, |doc| toml_install(doc, target, agent, command)),
    }
}

/// Remove sandgate's entry (and only it).
pub fn uninstall(target: &Target, agent: Agent) -> Result<Outcome, InstallError> {
    if !target.file.exists() {
        return Ok(Outcome::Unchanged);
    }
    match target.format {
        Format::Json => edit_json(target, |root| json_uninstall(root, target, agent)),
        Format::Toml => edit_toml(target, |doc| toml_uninstall(doc, target, agent)),
    }
}

fn malformed(target: &Target, message: impl Into<String>) -> InstallError {
    InstallError::Malformed {
        file: target.file.clone(),
        message: message.into(),
    }
}

fn read_text(target: &Target) -> Result<Option<String>, InstallError> {
    match std::fs::read_to_string(&target.file) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(InstallError::Io {
            file: target.file.clone(),
            error,
        }),
    }
}

/// Read, edit (the closure says whether it changed anything), write back.
fn edit_json(
    target: &Target,
    edit: impl FnOnce(&mut Map<String, Value>) -> Result<bool, InstallError>,
) -> Result<Outcome, InstallError> {
    let text = read_text(target)?;
    let mut root = match text.as_deref() {
        None => Map::new(),
        Some(t) if t.trim().is_empty() => Map::new(),
        Some(t) => match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(malformed(target, "the top level is not a JSON object")),
            Err(e) => return Err(malformed(target, format!("it is not valid JSON ({e})"))),
        },
    };
    if !edit(&mut root)? {
        return Ok(Outcome::Unchanged);
    }
    let mut out = serde_json::to_string_pretty(&Value::Object(root))
        .map_err(|e| malformed(target, e.to_string()))?;
    out.push('\n');
    write_atomic(&target.file, out.as_bytes())?;
    Ok(Outcome::Changed)
}

fn edit_toml(
    target: &Target,
    edit: impl FnOnce(&mut toml_edit::DocumentMut) -> Result<bool, InstallError>,
) -> Result<Outcome, InstallError> {
    let text = read_text(target)?.unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| malformed(target, format!("it is not valid TOML ({e})")))?;
    if !edit(&mut doc)? {
        return Ok(Outcome::Unchanged);
    }
    write_atomic(&target.file, doc.to_string().as_bytes())?;
    Ok(Outcome::Changed)
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
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    let perms = match std::fs::metadata(file) {
        Ok(m) => m.permissions(),
        Err(_) => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::Permissions::from_mode(0o644)
        }
    };
    std::fs::set_permissions(tmp.path(), perms).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(file).map_err(|e| io(e.error))?;
    Ok(())
}

/// The array of matcher groups under `hooks.EVENT`, created if missing.
fn json_groups<'a>(
    root: &'a mut Map<String, Value>,
    target: &Target,
    create: bool,
) -> Result<Option<&'a mut Vec<Value>>, InstallError> {
    if !root.contains_key("hooks") {
        if !create {
            return Ok(None);
        }
        root.insert("hooks".into(), json!({}));
    }
    let Some(Value::Object(hooks)) = root.get_mut("hooks") else {
        return Err(malformed(target, "`hooks` is not an object"));
    };
    if !hooks.contains_key(target.event) {
        if !create {
            return Ok(None);
        }
        hooks.insert(target.event.into(), json!([]));
    }
    match hooks.get_mut(target.event) {
        Some(Value::Array(groups)) => Ok(Some(groups)),
        _ => Err(malformed(
            target,
            format!("`hooks.{}` is not an array", target.event),
        )),
    }
}

fn json_is_ours(hook: &Value, agent: Agent) -> bool {
    hook.get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| is_sandgate_command(c, agent))
}

fn json_install(
    root: &mut Map<String, Value>,
    target: &Target,
    agent: Agent,
    command: &str,
) -> Result<bool, InstallError> {
    let Some(groups) = json_groups(root, target, true)? else {
        return Ok(false);
    };
    let mut entry = json!({ "type": "command", "command": command });
    if agent == Agent::Gemini {
        entry["name"] = json!("sandgate");
    }
    let wanted = json!({ "matcher": target.matcher, "hooks": [entry] });
    // Already exactly there, and only once: nothing to do.
    let ours: Vec<usize> = groups
        .iter()
        .enumerate()
        .filter(|(_, g)| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|hs| hs.iter().any(|h| json_is_ours(h, agent)))
        })
        .map(|(i, _)| i)
        .collect();
    if ours.len() == 1 && groups[ours[0]] == wanted {
        return Ok(false);
    }
    json_remove_ours(groups, agent);
    groups.push(wanted);
    Ok(true)
}

/// Remove sandgate's hooks from every group; drop a group only if sandgate's hooks were all it had.
fn json_remove_ours(groups: &mut Vec<Value>, agent: Agent) -> bool {
    let mut changed = false;
    groups.retain_mut(|group| {
        let Some(hooks) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = hooks.len();
        hooks.retain(|h| !json_is_ours(h, agent));
        if hooks.len() == before {
            return true;
        }
        changed = true;
        !hooks.is_empty()
    });
    changed
}

fn json_uninstall(
    root: &mut Map<String, Value>,
    target: &Target,
    agent: Agent,
) -> Result<bool, InstallError> {
    let Some(groups) = json_groups(root, target, false)? else {
        return Ok(false);
    };
    if !json_remove_ours(groups, agent) {
        return Ok(false);
    }
    // Tidy only what sandgate's removal emptied.
    if groups.is_empty() {
        if let Some(Value::Object(hooks)) = root.get_mut("hooks") {
            hooks.remove(target.event);
            if hooks.is_empty() {
                root.remove("hooks");
            }
        }
    }
    Ok(true)
}

/// The matcher groups of `[hooks]` in Codex CLI's `config.toml`, as plain
/// data, so they can be compared and edited whatever TOML spelling they use.
fn toml_groups(doc: &toml_edit::DocumentMut, target: &Target) -> Result<Vec<Value>, InstallError> {
    let Some(hooks) = doc.get("hooks") else {
        return Ok(Vec::new());
    };
    let Some(hooks) = hooks.as_table_like() else {
        return Err(malformed(target, "`hooks` is not a table"));
    };
    let Some(event) = hooks.get(target.event) else {
        return Ok(Vec::new());
    };
    let text = match event {
        toml_edit::Item::ArrayOfTables(a) => {
            let mut d = toml_edit::DocumentMut::new();
            d.insert("g", toml_edit::Item::ArrayOfTables(a.clone()));
            d.to_string()
        }
        toml_edit::Item::Value(v @ toml_edit::Value::Array(_)) => format!("g = {v}"),
        _ => {
            return Err(malformed(
                target,
                format!("`hooks.{}` is not an array of tables", target.event),
            ))
        }
    };
    let parsed: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| malformed(target, format!("`hooks.{}`: {e}", target.event)))?;
    let value = toml_to_json(parsed.as_item());
    Ok(value
        .get("g")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
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

/// The `hooks.EVENT` array of tables, or `None` if it is written another way.
fn toml_event_tables<'a>(
    doc: &'a mut toml_edit::DocumentMut,
    target: &Target,
) -> Option<&'a mut toml_edit::ArrayOfTables> {
    doc.get_mut("hooks")?
        .as_table_like_mut()?
        .get_mut(target.event)?
        .as_array_of_tables_mut()
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
    agent: Agent,
) -> Result<bool, InstallError> {
    let has_ours = toml_groups(doc, target)?.iter().any(|g| {
        g.get("hooks")
            .and_then(Value::as_array)
            .is_some_and(|hs| hs.iter().any(|h| json_is_ours(h, agent)))
    });
    if !has_ours {
        return Ok(false);
    }
    let Some(groups) = toml_event_tables(doc, target) else {
        return Err(malformed(
            target,
            format!(
                "sandgate's entry in `hooks.{}` is written as an inline array; edit it by hand",
                target.event
            ),
        ));
    };
    let mut changed = false;
    groups.retain(|group| {
        let Some(hooks) = group.get("hooks").and_then(|h| h.as_array_of_tables()) else {
            return true;
        };
        let keep = hooks.iter().filter(|h| !toml_is_ours(h, agent)).count();
        if keep == hooks.len() {
            return true;
        }
        changed = true;
        keep > 0
    });
    for group in groups.iter_mut() {
        if let Some(hooks) = group
            .get_mut("hooks")
            .and_then(|h| h.as_array_of_tables_mut())
        {
            hooks.retain(|h| !toml_is_ours(h, agent));
        }
    }
    Ok(changed)
}

fn toml_install(
    doc: &mut toml_edit::DocumentMut,
    target: &Target,
    agent: Agent,
    command: &str,
) -> Result<bool, InstallError> {
    let wanted = json!({
        "matcher": target.matcher,
        "hooks": [{ "type": "command", "command": command }],
    });
    let groups = toml_groups(doc, target)?;
    let ours: Vec<&Value> = groups
        .iter()
        .filter(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|hs| hs.iter().any(|h| json_is_ours(h, agent)))
        })
        .collect();
    if ours.len() == 1 && *ours[0] == wanted {
        return Ok(false);
    }
    toml_remove_ours(doc, target, agent)?;
    let mut hook = toml_edit::Table::new();
    hook.insert("type", toml_edit::value("command"));
    hook.insert("command", toml_edit::value(command));
    let mut hooks = toml_edit::ArrayOfTables::new();
    hooks.push(hook);
    let mut group = toml_edit::Table::new();
    group.insert("matcher", toml_edit::value(target.matcher.as_str()));
    group.insert("hooks", toml_edit::Item::ArrayOfTables(hooks));
    let root = doc
        .entry("hooks")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_like_mut()
        .ok_or_else(|| malformed(target, "`hooks` is not a table"))?;
    match root.get_mut(target.event) {
        None => {
            let mut groups = toml_edit::ArrayOfTables::new();
            groups.push(group);
            root.insert(target.event, toml_edit::Item::ArrayOfTables(groups));
        }
        Some(toml_edit::Item::ArrayOfTables(groups)) => groups.push(group),
        Some(toml_edit::Item::Value(toml_edit::Value::Array(groups))) => {
            let mut inline = toml_edit::InlineTable::new();
            inline.insert("matcher", target.matcher.as_str().into());
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
                format!("`hooks.{}` is not an array of tables", target.event),
            ))
        }
    }
    Ok(true)
}

fn toml_uninstall(
    doc: &mut toml_edit::DocumentMut,
    target: &Target,
    agent: Agent,
) -> Result<bool, InstallError> {
    if !toml_remove_ours(doc, target, agent)? {
        return Ok(false);
    }
    let empty = toml_event_tables(doc, target).is_some_and(|g| g.is_empty());
    if empty {
        if let Some(hooks) = doc.get_mut("hooks").and_then(|h| h.as_table_like_mut()) {
            hooks.remove(target.event);
            if hooks.is_empty() {
                doc.remove("hooks");
            }
        }
    }
    Ok(true)
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
    }
}
