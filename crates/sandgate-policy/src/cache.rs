//! The compiled-policy cache: the merged rules and each command rule's required
//! literals, stored outside the policy directories so that a process that
//! decides one call (a hook) need not parse YAML or check every regex again.
//!
//! The cache is keyed by a SHA-256 over the sandgate version and the path and
//! content of every policy file (a missing file counts too). A cache file is
//! used only when its magic line, format, version, key and body checksum all
//! match (the header is text, the body binary: `postcard`); anything else
//! (stale, corrupt, written by another version) is ignored and rebuilt.
//!
//! Path rules depend on the working directory and the filesystem as well
//! (symlinks in their literal prefix are resolved). Their absolute globs are
//! kept in a second file per working directory, with the directories whose
//! entries the resolution read and, for each, its device, inode, and change
//! and modification times. The globs are used only if every one of those
//! directories is unchanged; else the rules are resolved again. Adding,
//! removing or renaming an entry (a symlink where a directory was) changes
//! its directory's times. A resolution that met a symlink or an error, or
//! read a directory changed less than a second before it started (a change
//! in the same clock tick could leave the times as they were), is not kept.
//!
//! The self-tests of the policy ([`crate::selftest`]) run when an entry is
//! written, and again for each new working directory or home (a test is
//! judged there). That they all passed is kept in a third small file, keyed
//! by the content key, the working directory and the home; a warm load with
//! that file does not run them again. A failed test is never kept: the load
//! fails, every time, until the policy changes.
//!
//! Location: `$SANDGATE_CACHE_DIR`, else `$XDG_CACHE_HOME/sandgate`, else
//! `~/.cache/sandgate`. `SANDGATE_CACHE=off` turns it off.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::{AskFallback, ClaudeAsk, IsolationConfig, IsolationMode};
use crate::decision::{Access, Origin, RuleRef, Tier};
use crate::error::LoadError;
use crate::load::{parse_policy_of, LoadedFile, Sources, MAX_POLICY_BYTES};
use crate::policy::{IgnoredRule, Merged, Policy, Settings};
use crate::request::Context;
use crate::rules::{PrefixCanonicalizer, SourceRule};
use crate::selftest::{PolicyTest, TestSubject};
use crate::Verdict;

const MAGIC: &str = "sandgate-policy-cache";
/// Raised whenever what a file may say, or how files merge, changes: an entry
/// keyed by the same text would otherwise skip the new checks.
const FORMAT: &str = "11";
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The one reason the merge gives for an ignored rule (see `Policy::merge`).
const IGNORED_WHY: &str = "allow rules of a tighten-only file are ignored";

/// What happened to the cache during a load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheStatus {
    /// A valid cache entry was used.
    Hit,
    /// There was no valid entry; the policy was compiled and the entry written.
    Rebuilt,
    /// There was no valid entry and none could be written (the policy loaded anyway).
    NotWritten,
    /// The cache is off, or these files cannot be cached (they fail to load).
    Bypassed,
}

/// The cache directory: `$SANDGATE_CACHE_DIR`, `$XDG_CACHE_HOME/sandgate` or
/// `~/.cache/sandgate`; `None` when `SANDGATE_CACHE=off`.
pub fn cache_dir(home: &Path) -> Option<PathBuf> {
    if std::env::var("SANDGATE_CACHE").is_ok_and(|v| v.eq_ignore_ascii_case("off")) {
        return None;
    }
    let env_dir = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(dir) = env_dir("SANDGATE_CACHE_DIR") {
        return Some(dir);
    }
    if let Some(dir) = env_dir("XDG_CACHE_HOME") {
        return Some(dir.join("sandgate"));
    }
    Some(home.join(".cache/sandgate"))
}

/// Load the policy as [`Policy::load`] does, through the cache in [`cache_dir`].
pub fn load(sources: &Sources, ctx: &Context) -> Result<Policy, LoadError> {
    load_with(sources, ctx, cache_dir(&ctx.home).as_deref()).map(|(p, _)| p)
}

/// Load the policy through the cache in `dir` (`None`: no cache). Decisions of
/// the returned policy are those of [`Policy::load`]; so are its errors.
pub fn load_with(
    sources: &Sources,
    ctx: &Context,
    dir: Option<&Path>,
) -> Result<(Policy, CacheStatus), LoadError> {
    let Some(dir) = dir else {
        return Policy::load(sources, ctx).map(|p| (p, CacheStatus::Bypassed));
    };
    // Read every file once: the key is computed over exactly the bytes parsed.
    let Some(inputs) = read_inputs(sources) else {
        return Policy::load(sources, ctx).map(|p| (p, CacheStatus::Bypassed));
    };
    let key = content_key(sources, &inputs);
    let file = dir.join(entry_name(sources));
    if let Some(entry) = read_entry::<Entry>(&file, &key) {
        if let Some((merged, literals)) = entry.into_parts() {
            let globs = resolved_globs(dir, &key, &merged, ctx);
            if let Ok(policy) =
                Policy::from_checked(sources.clone(), merged, Some(literals), Some(globs), ctx)
            {
                checked_tests(dir, &key, &policy, ctx)?;
                return Ok((policy, CacheStatus::Hit));
            }
        }
    }
    let mut files = Vec::new();
    for (tier, path, text) in &inputs {
        let Some(text) = text else { continue };
        match parse_policy_of(text, path, *tier) {
            Ok(file) => files.push(LoadedFile {
                tier: *tier,
                path: path.clone(),
                file,
            }),
            // Let the uncached load report every problem, in its words.
            Err(_) => return Policy::load(sources, ctx).map(|p| (p, CacheStatus::Bypassed)),
        }
    }
    let merged = Policy::merge(sources, &files);
    let policy = Policy::from_merged(sources.clone(), merged.clone(), None, ctx)?;
    let entry = Entry::new(
        &merged,
        policy.command_deny.literals(),
        policy.command_allow.literals(),
    );
    let status = match write_entry(dir, &file, &key, &entry) {
        Ok(()) => CacheStatus::Rebuilt,
        Err(_) => CacheStatus::NotWritten,
    };
    checked_tests(dir, &key, &policy, ctx)?;
    Ok((policy, status))
}

/// That every self-test passed for one content key, working directory and home.
#[derive(Serialize, Deserialize)]
struct TestsPassed {
    count: u64,
}

/// Run the self-tests of `policy` in `ctx`, unless the file kept for this
/// content key, working directory and home says they all passed. A pass is
/// kept; a failure is the load error (and is not kept).
fn checked_tests(dir: &Path, key: &str, policy: &Policy, ctx: &Context) -> Result<(), LoadError> {
    let count = policy.tests().len() as u64;
    if count == 0 {
        return Ok(());
    }
    let tests_key = context_key(key, ctx);
    let file = dir.join(format!("tests-{}.cache", &tests_key[..32]));
    if read_entry::<TestsPassed>(&file, &tests_key).is_some_and(|t| t.count == count) {
        return Ok(());
    }
    crate::selftest::check(policy, ctx)?;
    // A failure to write only costs the next load a run of the tests.
    let _ = write_entry(dir, &file, &tests_key, &TestsPassed { count });
    Ok(())
}

/// A key over the content key, the working directory, the home, `CDPATH`
/// and widened patterns (a test's `cd` or pattern may land elsewhere).
fn context_key(key: &str, ctx: &Context) -> String {
    let mut h = Sha256::new();
    for part in [
        key.as_bytes(),
        ctx.cwd.as_os_str().as_encoded_bytes(),
        ctx.home.as_os_str().as_encoded_bytes(),
        ctx.cdpath.as_deref().unwrap_or("\0").as_bytes(),
        ctx.wide_globs.as_deref().unwrap_or("\0").as_bytes(),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    hex(&h.finalize())
}

type Inputs = Vec<(Tier, PathBuf, Option<String>)>;

/// Every tier's file content (`None`: missing), or `None` when a file cannot
/// be read as a policy (the uncached load then reports why).
fn read_inputs(sources: &Sources) -> Option<Inputs> {
    let mut inputs = Vec::new();
    for (tier, path) in sources.tiers() {
        let text = match crate::load::read_regular(path, MAX_POLICY_BYTES) {
            Ok(bytes) => Some(String::from_utf8(bytes).ok()?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(_) => return None,
        };
        inputs.push((tier, path.to_path_buf(), text));
    }
    Some(inputs)
}

/// Lowercase hex, two digits a byte (without a `format!` per byte: every
/// load hashes its keys and checksums through this).
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// SHA-256 over the version, `--no-sandbox`, and each tier's path and content.
fn content_key(sources: &Sources, inputs: &Inputs) -> String {
    let mut h = Sha256::new();
    h.update(MAGIC.as_bytes());
    h.update([0]);
    h.update(FORMAT.as_bytes());
    h.update([0]);
    h.update(VERSION.as_bytes());
    h.update([0, u8::from(sources.no_sandbox)]);
    for (tier, path, text) in inputs {
        h.update(tier.as_str().as_bytes());
        h.update([0]);
        h.update(path.as_os_str().as_encoded_bytes());
        h.update([0]);
        match text {
            None => h.update([0]),
            Some(t) => {
                h.update([1]);
                h.update((t.len() as u64).to_le_bytes());
                h.update(t.as_bytes());
            }
        }
    }
    hex(&h.finalize())
}

/// One entry per set of policy file paths; a new content replaces the old entry.
fn entry_name(sources: &Sources) -> String {
    let mut h = Sha256::new();
    for (tier, path) in sources.tiers() {
        h.update(tier.as_str().as_bytes());
        h.update([0]);
        h.update(path.as_os_str().as_encoded_bytes());
        h.update([0]);
    }
    h.update([u8::from(sources.no_sandbox)]);
    format!("policy-{}.cache", &hex(&h.finalize())[..32])
}

/// The largest cache entry read back (a compiled policy is far smaller).
const MAX_ENTRY_BYTES: u64 = 64 * 1024 * 1024;

/// The text lines before the body: magic, format, version, key and checksum.
const HEADER_LINES: usize = 5;

/// Read and validate an entry: magic, format, version, key and body checksum.
fn read_entry<T: serde::de::DeserializeOwned>(file: &Path, key: &str) -> Option<T> {
    let bytes = crate::load::read_regular(file, MAX_ENTRY_BYTES).ok()?;
    let mut rest = bytes.as_slice();
    let mut header = [""; HEADER_LINES];
    for line in &mut header {
        let end = rest.iter().position(|&b| b == b'\n')?;
        *line = std::str::from_utf8(&rest[..end]).ok()?;
        rest = &rest[end + 1..];
    }
    let [magic, format, version, entry_key, checksum] = header;
    if magic != MAGIC || format != FORMAT || version != VERSION || entry_key != key {
        return None;
    }
    if hex(&Sha256::digest(rest)) != checksum {
        return None;
    }
    postcard::from_bytes(rest).ok()
}

/// Write an entry atomically (temporary file, then rename).
fn write_entry<T: Serialize>(dir: &Path, file: &Path, key: &str, entry: &T) -> std::io::Result<()> {
    let body = postcard::to_allocvec(entry).map_err(std::io::Error::other)?;
    let checksum = hex(&Sha256::digest(&body));
    std::fs::create_dir_all(dir)?;
    let mut bytes = format!("{MAGIC}\n{FORMAT}\n{VERSION}\n{key}\n{checksum}\n").into_bytes();
    bytes.extend_from_slice(&body);
    crate::atomic::atomic_replace(file, &bytes, crate::atomic::Mode::Set(0o600))
        .map_err(|e| e.source)
}

/// The cached form of [`Merged`] plus the command rules' required literals.
#[derive(Serialize, Deserialize)]
struct Entry {
    /// The policy files the rules come from, named once (rules refer to them by index).
    files: Vec<PathBuf>,
    settings: CachedSettings,
    path_deny: Vec<CachedRule>,
    path_allow: Vec<CachedRule>,
    command_deny: Vec<CachedRule>,
    command_allow: Vec<CachedRule>,
    ignored: Vec<CachedIgnored>,
    tests: Vec<CachedTest>,
    no_policy_files: bool,
    /// `permissions.network` (deny, allow), when any tier has it.
    network: Option<(Vec<CachedRule>, Vec<CachedRule>)>,
    deny_literals: Vec<Option<Vec<Vec<u8>>>>,
    allow_literals: Vec<Option<Vec<Vec<u8>>>>,
}

/// Where a cached rule was written: index into [`Entry::files`], line and
/// tier; `None` for a built-in rule.
type CachedOrigin = Option<(u32, u32, u8)>;

#[derive(Serialize, Deserialize)]
struct CachedRule {
    text: String,
    file: CachedOrigin,
    column: u32,
    /// The path list's access (see [`access_code`]).
    access: u8,
}

#[derive(Serialize, Deserialize)]
struct CachedTest {
    tool: String,
    command: Option<String>,
    path: Option<String>,
    expect: Verdict,
    file: CachedOrigin,
    column: u32,
}

#[derive(Serialize, Deserialize)]
struct CachedIgnored {
    why: String,
    pattern: String,
    list: u8,
    access: u8,
    file: CachedOrigin,
}

#[derive(Serialize, Deserialize)]
struct CachedSettings {
    sandbox: bool,
    sandbox_reason: String,
    shell: bool,
    prompt_timeout: (u64, u32),
    isolation: Option<(CachedIsolation, u8)>,
    gemini_ask: AskFallback,
    claude_ask: ClaudeAsk,
    audit_max_bytes: Option<u64>,
}

#[derive(Serialize, Deserialize)]
struct CachedIsolation {
    mode: Option<IsolationMode>,
    template: Option<String>,
    workdir: Option<String>,
    allow_tmp: Option<bool>,
    network: Option<bool>,
    best_effort: Option<bool>,
    protect: Option<Vec<String>>,
    unix_sockets: Option<Vec<String>>,
}

fn tier_code(tier: Tier) -> u8 {
    match tier {
        Tier::Managed => 0,
        Tier::Central => 1,
        Tier::Local => 2,
    }
}

fn tier_from(code: u8) -> Option<Tier> {
    Some(match code {
        0 => Tier::Managed,
        1 => Tier::Central,
        2 => Tier::Local,
        _ => return None,
    })
}

fn list_code(list: crate::List) -> u8 {
    match list {
        crate::List::Deny => 0,
        crate::List::Allow => 1,
        crate::List::Floor => 2,
    }
}

fn list_from(code: u8) -> Option<crate::List> {
    Some(match code {
        0 => crate::List::Deny,
        1 => crate::List::Allow,
        2 => crate::List::Floor,
        _ => return None,
    })
}

/// `paths.*` (both), `paths.read.*`, `paths.write.*`.
fn access_code(access: Option<Access>) -> u8 {
    match access {
        None => 0,
        Some(Access::Read) => 1,
        Some(Access::Write) => 2,
    }
}

/// The access back; `Err` for an unknown code.
fn access_from(code: u8) -> Result<Option<Access>, ()> {
    match code {
        0 => Ok(None),
        1 => Ok(Some(Access::Read)),
        2 => Ok(Some(Access::Write)),
        _ => Err(()),
    }
}

/// Name `origin`'s file in `files` (once) and refer to it by index.
fn origin_out(origin: &Origin, files: &mut Vec<PathBuf>) -> CachedOrigin {
    match origin {
        Origin::Builtin => None,
        Origin::File { path, line, tier } => {
            let index = match files.iter().position(|f| f.as_path() == &**path) {
                Some(i) => i,
                None => {
                    files.push(path.to_path_buf());
                    files.len() - 1
                }
            };
            Some((index as u32, *line, tier_code(*tier)))
        }
    }
}

/// The origin back, sharing each file's path; `None` for a bad index or tier.
fn origin_in(file: CachedOrigin, files: &[Arc<Path>]) -> Option<Origin> {
    Some(match file {
        None => Origin::Builtin,
        Some((index, line, tier)) => Origin::File {
            path: files.get(index as usize)?.clone(),
            line,
            tier: tier_from(tier)?,
        },
    })
}

impl Entry {
    fn new(
        merged: &Merged,
        deny_literals: &[Option<Vec<Vec<u8>>>],
        allow_literals: &[Option<Vec<Vec<u8>>>],
    ) -> Entry {
        let mut files = Vec::new();
        let mut rules = |list: &[SourceRule]| {
            list.iter()
                .map(|r| CachedRule {
                    text: r.text.clone(),
                    file: origin_out(&r.origin, &mut files),
                    column: r.column,
                    access: access_code(r.access),
                })
                .collect()
        };
        let path_deny = rules(&merged.path_deny);
        let path_allow = rules(&merged.path_allow);
        let command_deny = rules(&merged.command_deny);
        let command_allow = rules(&merged.command_allow);
        let network = merged
            .network
            .as_ref()
            .map(|n| (rules(&n.deny), rules(&n.allow)));
        // Exhaustive destructuring: a new setting fails to compile here until it is cached.
        let Settings {
            sandbox,
            sandbox_reason,
            shell,
            prompt_timeout,
            isolation,
            gemini_ask,
            claude_ask,
            audit_max_bytes,
        } = &merged.settings;
        let isolation = isolation.as_ref().map(|(iso, tier)| {
            let IsolationConfig {
                mode,
                template,
                workdir,
                allow_tmp,
                network,
                best_effort,
                protect,
                unix_sockets,
            } = iso.clone();
            (
                CachedIsolation {
                    mode,
                    template,
                    workdir,
                    allow_tmp,
                    network,
                    best_effort,
                    protect,
                    unix_sockets,
                },
                tier_code(*tier),
            )
        });
        let ignored = merged
            .ignored
            .iter()
            .map(|i| CachedIgnored {
                why: i.why.to_string(),
                pattern: i.rule.pattern.clone(),
                list: list_code(i.rule.list),
                access: access_code(i.rule.access),
                file: origin_out(&i.rule.origin, &mut files),
            })
            .collect();
        let tests = merged
            .tests
            .iter()
            .map(|t| {
                let (command, path) = match &t.subject {
                    TestSubject::Command(c) => (Some(c.clone()), None),
                    TestSubject::Path(p) => (None, Some(p.clone())),
                };
                CachedTest {
                    tool: t.tool.clone(),
                    command,
                    path,
                    expect: t.expect,
                    file: origin_out(&t.origin, &mut files),
                    column: t.column,
                }
            })
            .collect();
        Entry {
            tests,
            no_policy_files: merged.no_policy_files,
            network,
            settings: CachedSettings {
                sandbox: *sandbox,
                sandbox_reason: sandbox_reason.clone(),
                shell: *shell,
                prompt_timeout: (prompt_timeout.as_secs(), prompt_timeout.subsec_nanos()),
                isolation,
                gemini_ask: *gemini_ask,
                claude_ask: *claude_ask,
                audit_max_bytes: *audit_max_bytes,
            },
            path_deny,
            path_allow,
            command_deny,
            command_allow,
            ignored,
            files,
            deny_literals: deny_literals.to_vec(),
            allow_literals: allow_literals.to_vec(),
        }
    }

    /// Back to a [`Merged`] and the literals, or `None` if anything is inconsistent.
    fn into_parts(self) -> Option<(Merged, crate::policy::CommandLiterals)> {
        if self.deny_literals.len() != self.command_deny.len()
            || self.allow_literals.len() != self.command_allow.len()
        {
            return None;
        }
        let files: Vec<Arc<Path>> = self.files.iter().map(|f| f.as_path().into()).collect();
        let rules = |list: Vec<CachedRule>| -> Option<Vec<SourceRule>> {
            list.into_iter()
                .map(|r| {
                    Some(SourceRule {
                        text: r.text,
                        origin: origin_in(r.file, &files)?,
                        column: r.column,
                        access: access_from(r.access).ok()?,
                    })
                })
                .collect()
        };
        let CachedSettings {
            sandbox,
            sandbox_reason,
            shell,
            prompt_timeout,
            isolation,
            gemini_ask,
            claude_ask,
            audit_max_bytes,
        } = self.settings;
        let isolation = match isolation {
            None => None,
            Some((iso, tier)) => {
                let CachedIsolation {
                    mode,
                    template,
                    workdir,
                    allow_tmp,
                    network,
                    best_effort,
                    protect,
                    unix_sockets,
                } = iso;
                Some((
                    IsolationConfig {
                        mode,
                        template,
                        workdir,
                        allow_tmp,
                        network,
                        best_effort,
                        protect,
                        unix_sockets,
                    },
                    tier_from(tier)?,
                ))
            }
        };
        if prompt_timeout.1 >= 1_000_000_000 {
            return None;
        }
        let ignored = self
            .ignored
            .into_iter()
            .map(|i| {
                // Reasons are static strings: only a known one can be restored.
                if i.why != IGNORED_WHY {
                    return None;
                }
                Some(IgnoredRule {
                    rule: RuleRef {
                        pattern: i.pattern,
                        list: list_from(i.list)?,
                        access: access_from(i.access).ok()?,
                        origin: origin_in(i.file, &files)?,
                    },
                    why: IGNORED_WHY,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let tests = self
            .tests
            .into_iter()
            .map(|t| {
                let subject = match (t.command, t.path) {
                    (Some(c), None) => TestSubject::Command(c),
                    (None, Some(p)) => TestSubject::Path(p),
                    _ => return None,
                };
                Some(PolicyTest {
                    tool: t.tool,
                    subject,
                    expect: t.expect,
                    origin: origin_in(t.file, &files)?,
                    column: t.column,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let network = match self.network {
            None => None,
            Some((deny, allow)) => Some(crate::network::MergedNetwork {
                deny: rules(deny)?,
                allow: rules(allow)?,
            }),
        };
        let merged = Merged {
            tests,
            no_policy_files: self.no_policy_files,
            network,
            settings: Settings {
                sandbox,
                sandbox_reason,
                shell,
                prompt_timeout: Duration::new(prompt_timeout.0, prompt_timeout.1),
                isolation,
                gemini_ask,
                claude_ask,
                audit_max_bytes,
            },
            path_deny: rules(self.path_deny)?,
            path_allow: rules(self.path_allow)?,
            command_deny: rules(self.command_deny)?,
            command_allow: rules(self.command_allow)?,
            ignored,
        };
        Some((merged, (self.deny_literals, self.allow_literals)))
    }
}

/// A directory's entries were read during resolution less than this after its
/// last change: the resolution is not kept (see the module documentation).
const RACY: Duration = Duration::from_secs(1);

/// The path rules' absolute globs for one working directory, with what they
/// depend on.
#[derive(Serialize, Deserialize)]
struct Resolution {
    /// Each directory read, with its stamp when it was read.
    dirs: Vec<(PathBuf, Stamp)>,
    deny: Vec<String>,
    allow: Vec<String>,
}

/// What tells that a directory's entries are as they were.
#[derive(Serialize, Deserialize, PartialEq, Eq, Debug)]
struct Stamp {
    dev: u64,
    ino: u64,
    ctime: (i64, i64),
    mtime: (i64, i64),
}

/// The stamp of the directory `dir` itself (not a symlink to one).
fn stamp(dir: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(dir).ok()?;
    meta.is_dir().then(|| Stamp {
        dev: meta.dev(),
        ino: meta.ino(),
        ctime: (meta.ctime(), meta.ctime_nsec()),
        mtime: (meta.mtime(), meta.mtime_nsec()),
    })
}

/// Whether a stamp's times are both earlier than `before`.
fn settled(stamp: &Stamp, before: SystemTime) -> bool {
    let Ok(before) = before.duration_since(SystemTime::UNIX_EPOCH) else {
        return false;
    };
    let earlier = |(secs, nanos): (i64, i64)| {
        u64::try_from(secs)
            .ok()
            .zip(u32::try_from(nanos).ok())
            .is_some_and(|(s, n)| Duration::new(s, n) < before)
    };
    earlier(stamp.ctime) && earlier(stamp.mtime)
}

/// The absolute globs of `merged`'s path rules (deny, allow) for `ctx`: from
/// the resolution file in `dir` when every directory it depends on is
/// unchanged, else resolved now (and kept when that is safe).
fn resolved_globs(
    dir: &Path,
    key: &str,
    merged: &Merged,
    ctx: &Context,
) -> (Vec<String>, Vec<String>) {
    let resolution_key = context_key(key, ctx);
    let file = dir.join(format!("paths-{}.cache", &resolution_key[..32]));
    if let Some(kept) = read_entry::<Resolution>(&file, &resolution_key) {
        let unchanged = kept
            .dirs
            .iter()
            .all(|(path, was)| stamp(path).as_ref() == Some(was));
        if unchanged
            && kept.deny.len() == merged.path_deny.len()
            && kept.allow.len() == merged.path_allow.len()
        {
            return (kept.deny, kept.allow);
        }
    }
    let started = SystemTime::now();
    let mut canonicalizer = PrefixCanonicalizer::default();
    let deny = canonicalizer.globs(&merged.path_deny, &ctx.cwd, &ctx.home);
    let allow = canonicalizer.globs(&merged.path_allow, &ctx.cwd, &ctx.home);
    let settled_before = started.checked_sub(RACY);
    let dirs: Option<Vec<(PathBuf, Stamp)>> = canonicalizer.dependencies().and_then(|dirs| {
        dirs.into_iter()
            .map(|path| {
                let stamp = stamp(&path)?;
                settled(&stamp, settled_before?).then_some((path, stamp))
            })
            .collect()
    });
    if let Some(dirs) = dirs {
        let kept = Resolution {
            dirs,
            deny: deny.clone(),
            allow: allow.clone(),
        };
        // A failure to write only costs the next load a resolution.
        let _ = write_entry(dir, &file, &resolution_key, &kept);
    }
    (deny, allow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_two_lowercase_digits_a_byte() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        let every: Vec<u8> = (0..=255).collect();
        let expected: String = every.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex(&every), expected);
    }
}
