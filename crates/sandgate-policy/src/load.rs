//! Finding, reading and merging the policy files.
//!
//! | tier | default path | may |
//! | --- | --- | --- |
//! | managed | `/etc/sandgate/permissions.yaml` (`SANDGATE_MANAGED_CONFIG`) | tighten only |
//! | central | `~/.sandgate/permissions.yaml` (`SANDGATE_CONFIG`, `--config`) | everything |
//! | local | `./.sandgate/permissions.yaml` (`SANDGATE_LOCAL_CONFIG`, `--local-config`) | tighten only |

use std::path::{Path, PathBuf};

use crate::config::{PolicyFile, RuleText};
use crate::decision::{Origin, Tier};
use crate::error::Problem;
use crate::rules::SourceRule;

/// The largest policy file sandgate reads (a larger one is an error, not a truncation).
pub const MAX_POLICY_BYTES: u64 = 8 * 1024 * 1024;

/// Open `path` for reading only if it is a regular file. The file is opened
/// with `O_NONBLOCK`, so a named pipe with no writer cannot hold the caller,
/// and the kind is checked on the opened descriptor, so a file swapped after a
/// `stat` cannot slip through. Anything else (a FIFO, a socket, a device, a
/// directory) is an [`std::io::ErrorKind::InvalidInput`] error naming what it is.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)?;
    match not_regular(file.metadata()?.file_type()) {
        None => Ok(file),
        Some(error) => Err(error),
    }
}

/// The error for a file of `kind`, or `None` when it is a regular file.
pub fn not_regular(kind: std::fs::FileType) -> Option<std::io::Error> {
    use std::os::unix::fs::FileTypeExt;
    let what = if kind.is_file() {
        return None;
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "not a file"
    };
    Some(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("it is {what}, not a regular file"),
    ))
}

/// Read a regular file of at most `max` bytes (see [`open_regular`]). A
/// larger file is an [`std::io::ErrorKind::FileTooLarge`] error, never a truncation.
pub fn read_regular(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    let too_large = |len: u64| {
        std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("it is {len} bytes, more than the {max} bytes sandgate reads"),
        )
    };
    if len > max {
        return Err(too_large(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Which files make up the policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    /// The organisation's file.
    pub managed: Option<PathBuf>,
    /// The user's file.
    pub central: Option<PathBuf>,
    /// The project's file.
    pub local: Option<PathBuf>,
    /// `--no-sandbox`: switch the gate off whatever the files say.
    pub no_sandbox: bool,
}

impl Sources {
    /// The default locations, with environment and flag overrides applied.
    /// `config` and `local` are the `--config` / `--local-config` flags.
    pub fn discover(
        config: Option<PathBuf>,
        local: Option<PathBuf>,
        no_sandbox: bool,
        cwd: &Path,
        home: &Path,
    ) -> Sources {
        let env_path = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Sources {
            managed: Some(
                env_path("SANDGATE_MANAGED_CONFIG")
                    .unwrap_or_else(|| PathBuf::from("/etc/sandgate/permissions.yaml")),
            ),
            central: Some(
                config
                    .or_else(|| env_path("SANDGATE_CONFIG"))
                    .unwrap_or_else(|| home.join(".sandgate/permissions.yaml")),
            ),
            local: Some(
                local
                    .or_else(|| env_path("SANDGATE_LOCAL_CONFIG"))
                    .unwrap_or_else(|| cwd.join(".sandgate/permissions.yaml")),
            ),
            no_sandbox,
        }
    }

    /// The files in tier order (managed, central, local).
    pub fn tiers(&self) -> impl Iterator<Item = (Tier, &Path)> {
        [
            (Tier::Managed, self.managed.as_deref()),
            (Tier::Central, self.central.as_deref()),
            (Tier::Local, self.local.as_deref()),
        ]
        .into_iter()
        .filter_map(|(t, p)| p.map(|p| (t, p)))
    }
}

/// A policy file that was found and parsed.
#[derive(Debug, Clone)]
pub struct LoadedFile {
    /// Its tier.
    pub tier: Tier,
    /// Its path.
    pub path: PathBuf,
    /// Its content, parsed.
    pub file: PolicyFile,
}

/// Read and parse every policy file of `sources`, in tier order. Missing files
/// are skipped; every unreadable or broken file is reported, not only the first.
pub fn read_policy_files(sources: &Sources) -> Result<Vec<LoadedFile>, crate::LoadError> {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for (tier, path) in sources.tiers() {
        let mut more = Vec::new();
        match read_policy_file_all(path, tier, &mut more) {
            Ok(Some(f)) => files.push(f),
            Ok(None) => {}
            Err(p) => {
                problems.push(p);
                problems.append(&mut more);
            }
        }
    }
    if problems.is_empty() {
        Ok(files)
    } else {
        Err(crate::LoadError { problems })
    }
}

/// Read and parse one policy file. A missing file is `Ok(None)`.
pub fn read_policy_file(path: &Path, tier: Tier) -> Result<Option<LoadedFile>, Problem> {
    read_policy_file_all(path, tier, &mut Vec::new())
}

/// [`read_policy_file`], with the problems after the first put in `more`.
fn read_policy_file_all(
    path: &Path,
    tier: Tier,
    more: &mut Vec<Problem>,
) -> Result<Option<LoadedFile>, Problem> {
    let problem = |message: String| Problem {
        file: path.to_path_buf(),
        position: None,
        rule: None,
        message,
        hint: None,
    };
    let bytes = match read_regular(path, MAX_POLICY_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(problem(format!(
                "cannot read the policy file: {}",
                io_text(&e)
            )))
        }
    };
    let text = String::from_utf8(bytes)
        .map_err(|_| problem("cannot read the policy file: it is not UTF-8 text".into()))?;
    let file = parse_policy_of(&text, path, tier).map_err(|mut all| {
        let first = all.remove(0);
        more.extend(all);
        first
    })?;
    Ok(Some(LoadedFile {
        tier,
        path: path.to_path_buf(),
        file,
    }))
}

/// [`parse_policy_all`] for a file of `tier`, with what that tier may not
/// say (a local file's custom isolation template) as a problem too.
pub fn parse_policy_of(text: &str, path: &Path, tier: Tier) -> Result<PolicyFile, Vec<Problem>> {
    let file = parse_policy_all(text, path)?;
    if tier == Tier::Local {
        if let Some(problem) = custom_isolation_problem(&file, text, path) {
            return Err(vec![problem]);
        }
    }
    Ok(file)
}

/// A local file that chooses the `custom` isolation mode (or a template for
/// it): its template is a program of the file's choosing, run for every
/// allowed command, which is not tightening. It is an error rather than
/// ignored, so that nobody believes commands isolated that are not.
fn custom_isolation_problem(file: &PolicyFile, text: &str, path: &Path) -> Option<Problem> {
    let isolation = file.permissions.exec.isolation.as_ref()?;
    let custom = isolation.mode == Some(crate::config::IsolationMode::Custom);
    if !custom && isolation.template.is_none() {
        return None;
    }
    let key = if custom { "custom" } else { "template:" };
    let position = text.lines().enumerate().find_map(|(i, line)| {
        let code = line.split('#').next().unwrap_or(line);
        let column = code.find(key)?;
        Some((u32::try_from(i + 1).ok()?, u32::try_from(column + 1).ok()?))
    });
    Some(Problem {
        file: path.to_path_buf(),
        position,
        rule: None,
        message: "a local (project) file cannot set `exec.isolation` to `mode: custom` or a \
                  `template`: the template is a program of the file's choosing, run for every \
                  allowed command, and a local file may only tighten"
            .into(),
        hint: Some(
            "choose `mode: landlock` or `mode: bwrap` here, or put the custom template in the \
             central file (~/.sandgate/permissions.yaml)"
                .into(),
        ),
    })
}

/// An IO error in words, without the `(os error N)` suffix.
pub fn io_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Parse policy YAML. `path` is only used in the error, which is the first
/// problem of [`parse_policy_all`].
pub fn parse_policy(text: &str, path: &Path) -> Result<PolicyFile, Problem> {
    parse_policy_all(text, path).map_err(|mut all| all.remove(0))
}

/// Parse policy YAML; on failure, every problem of the file (at least one),
/// in file order, each in words with its line and column.
pub fn parse_policy_all(text: &str, path: &Path) -> Result<PolicyFile, Vec<Problem>> {
    if is_blank_yaml(text) {
        return Ok(PolicyFile::default());
    }
    let parsed = serde_saphyr::from_str::<PolicyFile>(text);
    if let Ok(file) = &parsed {
        let problems = crate::selftest::problems(&file.tests, path);
        if !problems.is_empty() {
            return Err(problems);
        }
    }
    parsed.map_err(|e| {
        let found = crate::validate::problems(text, path);
        let mut all = found.structural;
        if all.is_empty() {
            let position = e
                .location()
                .map(|l| (l.line() as u32, l.column() as u32))
                .filter(|&(l, _)| l > 0);
            let (message, hint) = yaml_problem(&e, text);
            all.push(Problem {
                file: path.to_path_buf(),
                position,
                rule: None,
                message,
                hint: Some(hint),
            });
        }
        // The rules that would be rejected next are named now too, every
        // problem in file order (the error without a position first).
        all.extend(found.rules);
        all.sort_by_key(|p| p.position);
        all
    })
}

/// The words for a YAML error that serde-saphyr reports, and the hint that
/// fits it: the one place its errors are put into words. Its user-oriented
/// messages are the base; a repeated key says where both are and how to
/// merge them.
fn yaml_problem(e: &serde_saphyr::Error, text: &str) -> (String, String) {
    let mut inner = e;
    while let serde_saphyr::Error::WithSnippet { error, .. }
    | serde_saphyr::Error::AliasError { error, .. } = inner
    {
        inner = error;
    }
    if let serde_saphyr::Error::DuplicateMappingKey { key, location } = inner {
        let again = (location.line(), location.column());
        let Some(key) = key else {
            return (
                "a key appears twice in the same mapping".into(),
                "keep the key once and put the entries of both under it".into(),
            );
        };
        let first = first_occurrence(text, key, again);
        return crate::validate::duplicate_key(key, first);
    }
    let message = yaml_message(&e.render_with_formatter(&serde_saphyr::UserMessageFormatter));
    let tab = message
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| w.eq_ignore_ascii_case("tab") || w.eq_ignore_ascii_case("tabs"));
    let hint = if tab
        || text
            .lines()
            .nth(line_index(e))
            .is_some_and(|l| l.starts_with('\t'))
    {
        "YAML indents with spaces only: replace the tab with spaces".into()
    } else {
        SCHEMA_HINT.into()
    };
    (message, hint)
}

/// The 0-based line of `e`, or one past any line.
fn line_index(e: &serde_saphyr::Error) -> usize {
    e.location()
        .and_then(|l| usize::try_from(l.line()).ok())
        .and_then(|l| l.checked_sub(1))
        .unwrap_or(usize::MAX)
}

/// Where `key` first appears in the block mapping that holds it again at
/// `again` (line and column, 1-based): the earliest line above, at the same
/// indentation, before a line that is less indented (the mapping's parent).
fn first_occurrence(text: &str, key: &str, again: (u64, u64)) -> Option<(u64, u64)> {
    let line = usize::try_from(again.0).ok()?.checked_sub(1)?;
    let indent = usize::try_from(again.1).ok()?.checked_sub(1)?;
    let lines: Vec<&str> = text.lines().collect();
    let written = [
        format!("{key}:"),
        format!("\"{key}\":"),
        format!("'{key}':"),
    ];
    let mut first = None;
    for i in (0..line.min(lines.len())).rev() {
        let l = lines[i];
        let code = l.trim_start_matches(' ');
        if code.is_empty() || code.starts_with('#') {
            continue;
        }
        let at = l.len() - code.len();
        // A list item's mapping: `- key:` puts the key after the dash.
        let (at, code, item) = match code.strip_prefix("- ") {
            Some(rest) if at + 2 == indent => (indent, rest.trim_start_matches(' '), true),
            _ => (at, code, false),
        };
        if at < indent {
            break;
        }
        if at == indent && written.iter().any(|w| code.starts_with(w.as_str())) {
            first = Some((i as u64 + 1, indent as u64 + 1));
        }
        if item {
            break;
        }
    }
    first
}

/// Where to look up the keys: a command every user has, not a file they may not.
pub const SCHEMA_HINT: &str =
    "`sandgate policy schema` prints the JSON Schema: every key a policy file may have, with its type";

/// Only comments and whitespace (or an explicit empty document).
fn is_blank_yaml(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || t == "---" || t == "..."
    })
}

/// serde-saphyr renders a source snippet after the message; keep the first line.
fn yaml_message(rendered: &str) -> String {
    let first = rendered.lines().next().unwrap_or(rendered).trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    // The position is reported separately; drop a leading `line N column M: `.
    let first = match first.split_once(": ") {
        Some((head, rest)) if head.starts_with("line ") && head.contains(" column ") => rest,
        _ => first,
    };
    first.trim_end_matches('.').to_string()
}

/// Turn the rules of one list into source rules with their origins.
pub fn source_rules(rules: &[RuleText], file: &LoadedFile) -> Vec<SourceRule> {
    source_rules_for(rules, file, None)
}

/// [`source_rules`] for a path list about one access (`paths.read.allow`, …).
pub fn source_rules_for(
    rules: &[RuleText],
    file: &LoadedFile,
    access: Option<crate::decision::Access>,
) -> Vec<SourceRule> {
    let path: std::sync::Arc<Path> = file.path.as_path().into();
    rules
        .iter()
        .map(|r| SourceRule {
            text: r.value.clone(),
            origin: Origin::File {
                path: path.clone(),
                line: r.referenced.line() as u32,
                tier: file.tier,
            },
            column: r.referenced.column() as u32,
            access,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lists under `read` and `write` are known keys of globs: a file
    /// with them parses (the schema walk in `validate` finds nothing in it
    /// either).
    #[test]
    fn the_read_and_write_lists_parse() {
        let good = "permissions:\n  paths:\n    read:\n      allow: [\"~/x/**\"]\n      deny: []\n    write:\n      deny: [\"./vendor/**\"]\n";
        assert!(parse_policy(good, Path::new("p.yaml")).is_ok());
    }
}
