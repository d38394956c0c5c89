//! Matchers: [`PathRules`] (globs) and [`CommandRules`] (regexes), one per list.
//!
//! Rules are checked when the policy loads, but a matcher is built only for the
//! rules that can match a given subject, the first time they are needed: a
//! path glob only when the path starts with the glob's literal prefix, a
//! command regex only when the command contains one of its required literals
//! (see `prefilter`). A policy of a thousand rules thus loads without
//! compiling a thousand automata, and the answers are the same as matching
//! every rule.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use globset::{Glob, GlobBuilder, GlobMatcher};
use regex_automata::meta::Regex;

use crate::canon;
use crate::decision::{Access, Origin, RuleRef};
use crate::error::{regex_hint, Problem};
use crate::prefilter::{literals_of, LiteralIndex};

/// A rule as written, before compiling.
#[derive(Debug, Clone)]
pub struct SourceRule {
    /// The text as written.
    pub text: String,
    /// Where it was written.
    pub origin: Origin,
    /// Column of the rule in its file (for error messages).
    pub column: u32,
    /// A path rule of `paths.read.*` / `paths.write.*`: the access it is
    /// about; `None` for both (and for every command rule).
    pub access: Option<Access>,
}

impl SourceRule {
    fn problem(&self, message: String, hint: Option<String>) -> Problem {
        let (file, position) = match &self.origin {
            Origin::File { path, line, .. } => (path.to_path_buf(), Some((*line, self.column))),
            Origin::Builtin => (PathBuf::from("<builtin>"), None),
        };
        Problem {
            file,
            position,
            rule: Some(self.text.clone()),
            message,
            hint,
        }
    }
}

/// Path globs of one list.
#[derive(Debug, Clone)]
pub struct PathRules {
    /// Every glob (a rule may have two: `dir/**` and `dir`), as text: a glob
    /// is parsed only when a path reaches it.
    globs: Vec<String>,
    /// The length of each glob's literal prefix: every path it matches starts
    /// with that text.
    prefix_len: Vec<usize>,
    /// Globs by the directory their literal prefix lies in (the prefix up to
    /// and including its last `/`), so a path only meets the globs filed under
    /// one of its own ancestors.
    by_dir: FastMap<Box<[u8]>, Vec<usize>>,
    /// Globs whose literal prefix holds no `/`: checked against every path.
    unfiled: Vec<usize>,
    /// Each glob's matcher, built on first use; `None` if it cannot be built.
    /// Boxed: most are never built, and an empty slot stays small.
    matchers: Vec<OnceLock<Option<Box<GlobMatcher>>>>,
    /// For each glob, the index of its rule.
    glob_to_rule: Vec<usize>,
    rules: Vec<RuleRef>,
    /// The absolute glob each rule compiled to.
    compiled: Vec<String>,
    list: crate::List,
}

/// A hash map with a fast, non-cryptographic hasher: its keys come from the
/// policy files, not from the agent.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Characters that make a path component a pattern rather than a literal.
const GLOB_META: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];

/// Escape a literal path for a glob: the one escaper of the crate (the
/// compiled rules and `persist::path_rule` use it). Each glob
/// metacharacter, backslash included, becomes a one-character class (`[*]`,
/// `[\\]`), which is literal whether or not the glob is compiled with
/// `backslash_escape`; `globset::escape` leaves `\\` as it is.
pub fn escape_glob_literal(literal: &str) -> String {
    if !literal.contains(GLOB_META) {
        return literal.to_string();
    }
    let mut out = String::with_capacity(literal.len() + 8);
    for c in literal.chars() {
        if GLOB_META.contains(&c) {
            out.push('[');
            out.push(c);
            out.push(']');
        } else {
            out.push(c);
        }
    }
    out
}

/// Turn a path rule into the absolute glob it means: `~` expanded, relative
/// rules resolved against `cwd`, `..` collapsed, and symlinks in the literal
/// prefix resolved, so the glob compares with canonical subjects.
pub fn absolute_glob(text: &str, cwd: &Path, home: &Path) -> String {
    absolute_glob_in(text, cwd, home, &mut PrefixCanonicalizer::default())
}

/// Resolves the literal prefixes of many rules, sharing the work for the
/// directories they have in common: one `lstat` per distinct directory instead
/// of one per component of every rule. It gives what
/// [`canon::canonicalize`] gives, and defers to it as soon as a symlink (or an
/// error) is met, so only symlink-free, error-free prefixes are shortcut.
///
/// A directory asked about many children (the parent of a rule per project,
/// per data set) is listed once instead, and answers the rest from the
/// listing: what `lstat` would have said of each name, without a system call
/// per rule.
#[derive(Debug, Default)]
pub(crate) struct PrefixCanonicalizer {
    /// Lexical prefix → (resolved path, exists), or `None`: use `canonicalize`.
    memo: FastMap<Box<[u8]>, Option<(PathBuf, bool)>>,
    /// Existing directory (its lexical prefix; `/` is empty) → what is known
    /// of its entries.
    dirs: FastMap<Box<[u8]>, Listing>,
    /// Whether some prefix needed `canonicalize` (a symlink, an error).
    fell_back: bool,
}

/// Children of one directory looked up with `lstat` before it is listed.
const LIST_AFTER: u32 = 8;
/// A directory with more entries than this is not kept as a listing.
const LIST_MAX: usize = 4096;

/// What the canonicalizer knows of one existing directory's entries.
#[derive(Debug)]
enum Listing {
    /// How many children `lstat` found or did not find (which also shows
    /// that the directory can be searched, as `lstat` needs).
    Looked(u32),
    /// Entry name → whether it is a symlink.
    Listed(FastMap<Box<[u8]>, bool>),
    /// Too large, or could not be read: `lstat` each child.
    Unlisted,
}

/// What `lstat` says of a path, as far as the canonicalizer cares.
enum Entry {
    Symlink,
    Present,
    Missing,
    /// Some other error: leave it to `canonicalize`.
    Unknown,
}

fn lstat(path: &Path) -> Entry {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Entry::Symlink,
        Ok(_) => Entry::Present,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Entry::Missing
        }
        Err(_) => Entry::Unknown,
    }
}

/// The entries of `dir` with whether each is a symlink, or `None` when it
/// cannot be read whole or is larger than [`LIST_MAX`].
fn list(dir: &Path) -> Option<FastMap<Box<[u8]>, bool>> {
    let mut names = FastMap::default();
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        // From the directory entry's type where the file system gives it,
        // else from `lstat`.
        let symlink = entry.file_type().ok()?.is_symlink();
        names.insert(entry.file_name().as_bytes().into(), symlink);
        if names.len() > LIST_MAX {
            return None;
        }
    }
    Some(names)
}

/// What `lstat` says of `parent_path/name`, where `parent_key` is the existing
/// directory `parent_path`'s lexical prefix and `dirs` what is known of it.
fn entry(
    dirs: &mut FastMap<Box<[u8]>, Listing>,
    parent_key: &[u8],
    parent_path: &Path,
    name: &[u8],
) -> Entry {
    let candidate = || parent_path.join(OsStr::from_bytes(name));
    let listing = match dirs.get_mut(parent_key) {
        Some(listing) => listing,
        None => dirs.entry(parent_key.into()).or_insert(Listing::Looked(0)),
    };
    if let Listing::Looked(n) = listing {
        if *n < LIST_AFTER {
            let entry = lstat(&candidate());
            if matches!(entry, Entry::Present | Entry::Missing | Entry::Symlink) {
                *n += 1;
            }
            return entry;
        }
        *listing = list(parent_path).map_or(Listing::Unlisted, Listing::Listed);
    }
    match listing {
        Listing::Listed(names) => match names.get(name) {
            Some(true) => Entry::Symlink,
            Some(false) => Entry::Present,
            None => Entry::Missing,
        },
        _ => lstat(&candidate()),
    }
}

impl PrefixCanonicalizer {
    /// The canonical form of an absolute, lexically normal `literal` (no `.`/`..`).
    fn canonical(&mut self, literal: &Path, cwd: &Path, home: &Path) -> Option<PathBuf> {
        // Once a symlink or an error is met, the walk defers to `canonicalize`.
        self.walk(literal).or_else(|| {
            self.fell_back = true;
            canon::canonicalize(&literal.to_string_lossy(), cwd, home).ok()
        })
    }

    /// The absolute glob of each rule (empty for an empty rule), resolved as
    /// [`absolute_glob`] resolves it.
    pub(crate) fn globs(&mut self, rules: &[SourceRule], cwd: &Path, home: &Path) -> Vec<String> {
        rules
            .iter()
            .map(|rule| {
                if rule.text.trim().is_empty() {
                    String::new()
                } else {
                    absolute_glob_in(&rule.text, cwd, home, self)
                }
            })
            .collect()
    }

    /// The directories whose entries the answers so far depend on, or `None`
    /// when some answer also depends on a symlink's target (or an error).
    /// Each directory is canonical (no symlink was met on the way to it).
    pub(crate) fn dependencies(&self) -> Option<Vec<PathBuf>> {
        if self.fell_back {
            return None;
        }
        let mut dirs: Vec<PathBuf> = self
            .dirs
            .keys()
            .map(|key| match key.len() {
                0 => PathBuf::from("/"),
                _ => PathBuf::from(OsStr::from_bytes(key)),
            })
            .collect();
        dirs.sort();
        Some(dirs)
    }

    /// The walk of [`PrefixCanonicalizer::canonical`]: `None` where `canonicalize` must answer.
    fn walk(&mut self, literal: &Path) -> Option<PathBuf> {
        let bytes = literal.as_os_str().as_bytes();
        // Where each component ends: `bytes[..ends[i]]` is the prefix of
        // components 0..=i.
        let mut ends: Vec<usize> = bytes
            .iter()
            .enumerate()
            .skip(1)
            .filter(|&(_, &b)| b == b'/')
            .map(|(i, _)| i)
            .collect();
        if bytes.len() > 1 {
            ends.push(bytes.len());
        }
        // Prefixes are remembered top-down and never below one that needs
        // `canonicalize`, so the deepest remembered prefix (for rules that
        // share a directory, usually the parent) has only good ancestors:
        // walk down from there.
        let mut known = ends.len();
        while known > 0 && !self.memo.contains_key(&bytes[..ends[known - 1]]) {
            known -= 1;
        }
        for i in known..ends.len() {
            let parent = i.checked_sub(1).map(|p| &bytes[..ends[p]]);
            let (parent_path, parent_exists) = match parent {
                None => (Path::new("/"), true),
                Some(parent) => match self.memo.get(parent) {
                    Some(Some((path, exists))) => (path.as_path(), *exists),
                    _ => return None,
                },
            };
            let name = &bytes[parent.map_or(0, <[u8]>::len) + 1..ends[i]];
            // `parent_path.join(name)`: the parent is absolute and has no
            // trailing `/` except the root.
            let parent_bytes = parent_path.as_os_str().as_bytes();
            let mut joined = Vec::with_capacity(parent_bytes.len() + 1 + name.len());
            joined.extend_from_slice(parent_bytes);
            if parent_bytes != b"/" {
                joined.push(b'/');
            }
            joined.extend_from_slice(name);
            let candidate = PathBuf::from(std::ffi::OsString::from_vec(joined));
            let state = if !parent_exists {
                Some((candidate, false))
            } else {
                match entry(
                    &mut self.dirs,
                    parent.unwrap_or_default(),
                    parent_path,
                    name,
                ) {
                    Entry::Present => Some((candidate, true)),
                    Entry::Missing => Some((candidate, false)),
                    Entry::Symlink | Entry::Unknown => None,
                }
            };
            self.memo.insert(bytes[..ends[i]].into(), state);
        }
        match ends.last() {
            None => Some(PathBuf::from("/")),
            Some(&end) => match self.memo.get(&bytes[..end]) {
                Some(Some((path, _))) => Some(path.clone()),
                _ => None,
            },
        }
    }
}

/// The components of the rule `text` made absolute and lexically normal, as
/// [`canon::normalize_lexically`] of `cwd.join(canon::expand_tilde(text, home))`
/// gives them, but without building the intermediate paths.
fn normal_components<'a>(text: &'a str, cwd: &'a Path, home: &'a Path) -> Vec<&'a [u8]> {
    let tilde_rest = if text == "~" {
        Some("")
    } else {
        text.strip_prefix("~/")
    };
    // What `expand_tilde` gives, as pieces joined in order (`join` of an
    // absolute piece starts over, as `Path::join` does).
    let mut pieces: Vec<&[u8]> = Vec::with_capacity(3);
    match tilde_rest {
        // `~//x` is the home directory followed by `/x`, never `/x`.
        Some(rest) => {
            pieces.push(home.as_os_str().as_bytes());
            pieces.push(rest.trim_start_matches('/').as_bytes());
        }
        None => pieces.push(text.as_bytes()),
    }
    if !pieces[0].starts_with(b"/") {
        pieces.insert(0, cwd.as_os_str().as_bytes());
    }
    let mut parts: Vec<&[u8]> = Vec::with_capacity(16);
    for piece in pieces {
        canon::push_normal(&mut parts, piece);
    }
    parts
}

/// [`absolute_glob`], resolving through a shared [`PrefixCanonicalizer`].
pub(crate) fn absolute_glob_in(
    text: &str,
    cwd: &Path,
    home: &Path,
    canonicalizer: &mut PrefixCanonicalizer,
) -> String {
    let parts = normal_components(text, cwd, home);
    // The literal prefix ends where the first pattern component starts.
    let literal_count = parts
        .iter()
        .position(|part| part.iter().any(|b| GLOB_META.contains(&char::from(*b))))
        .unwrap_or(parts.len());
    let mut literal_bytes = Vec::with_capacity(text.len() + 64);
    for part in &parts[..literal_count] {
        literal_bytes.push(b'/');
        literal_bytes.extend_from_slice(part);
    }
    if literal_bytes.is_empty() {
        literal_bytes.push(b'/');
    }
    let literal = Path::new(OsStr::from_bytes(&literal_bytes));
    let canonical = match canonicalizer.canonical(literal, cwd, home) {
        Some(p) => match p.into_os_string().into_string() {
            Ok(s) => s,
            Err(_) => literal.to_string_lossy().into_owned(),
        },
        None => literal.to_string_lossy().into_owned(),
    };
    let mut glob = escape_glob_literal(&canonical);
    for part in &parts[literal_count..] {
        if !glob.ends_with('/') {
            glob.push('/');
        }
        glob.push_str(&String::from_utf8_lossy(part));
    }
    // Keep a trailing `/` of the rule (`dir/`), which means the directory itself.
    if text.ends_with('/') && !glob.ends_with('/') {
        glob.push('/');
    }
    glob
}

/// Parse one glob as every path rule is parsed.
fn build_glob(glob: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

impl PathRules {
    /// Compile `rules`, returning every bad glob as a problem.
    pub fn compile(
        rules: &[SourceRule],
        list: crate::List,
        cwd: &Path,
        home: &Path,
    ) -> Result<Self, Vec<Problem>> {
        Self::canonicalized(rules, list, cwd, home, true)
    }

    /// Rules that [`PathRules::compile`] accepted before (the same text): they
    /// are resolved against `cwd`, `home` and the filesystem as `compile`
    /// resolves them, but no glob is parsed until a path needs it. `None` if a
    /// rule is empty, which `compile` never accepts.
    pub fn from_checked(
        rules: &[SourceRule],
        list: crate::List,
        cwd: &Path,
        home: &Path,
    ) -> Option<Self> {
        Self::canonicalized(rules, list, cwd, home, false).ok()
    }

    /// Rules that [`PathRules::compile`] accepted before, with the absolute
    /// glob of each as [`PrefixCanonicalizer::globs`] resolved it (still valid: the
    /// caller checked what it depends on). `None` if the counts differ or a
    /// rule is empty.
    pub(crate) fn from_globs(
        rules: &[SourceRule],
        list: crate::List,
        compiled: Vec<String>,
    ) -> Option<Self> {
        if compiled.len() != rules.len() {
            return None;
        }
        Self::build(rules, list, compiled, false).ok()
    }

    fn canonicalized(
        rules: &[SourceRule],
        list: crate::List,
        cwd: &Path,
        home: &Path,
        check: bool,
    ) -> Result<Self, Vec<Problem>> {
        let compiled = PrefixCanonicalizer::default().globs(rules, cwd, home);
        Self::build(rules, list, compiled, check)
    }

    fn build(
        rules: &[SourceRule],
        list: crate::List,
        compiled: Vec<String>,
        check: bool,
    ) -> Result<Self, Vec<Problem>> {
        let mut globs = Vec::with_capacity(rules.len());
        let mut glob_to_rule = Vec::with_capacity(rules.len());
        let mut problems = Vec::new();
        for (index, (rule, glob)) in rules.iter().zip(&compiled).enumerate() {
            if rule.text.trim().is_empty() {
                problems.push(rule.problem("empty path rule".into(), None));
                continue;
            }
            // `dir/**` also matches `dir` itself.
            let bare = glob.strip_suffix("/**").map(|dir| {
                if dir.is_empty() {
                    "/".to_string()
                } else {
                    dir.to_string()
                }
            });
            let variants = std::iter::once(glob.clone()).chain(bare);
            for variant in variants {
                if check {
                    if let Err(e) = build_glob(&variant) {
                        problems.push(rule.problem(
                            format!("invalid glob: {}", e.kind()),
                            Some(glob_hint(&rule.text)),
                        ));
                        break;
                    }
                }
                globs.push(variant);
                glob_to_rule.push(index);
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let prefix_len: Vec<usize> = globs.iter().map(|g| literal_prefix_len(g)).collect();
        let mut by_dir: FastMap<Box<[u8]>, Vec<usize>> = FastMap::default();
        let mut unfiled = Vec::new();
        for (g, &len) in prefix_len.iter().enumerate() {
            let prefix = &globs[g].as_bytes()[..len];
            match prefix.iter().rposition(|&b| b == b'/') {
                Some(end) => by_dir.entry(prefix[..=end].into()).or_default().push(g),
                None => unfiled.push(g),
            }
        }
        let matchers = globs.iter().map(|_| OnceLock::new()).collect();
        Ok(PathRules {
            globs,
            prefix_len,
            by_dir,
            unfiled,
            matchers,
            glob_to_rule,
            rules: rules.iter().map(|r| rule_ref(r, list)).collect(),
            compiled,
            list,
        })
    }

    /// Whether glob `g` matches `path`, parsing it on first use. A glob that
    /// cannot be parsed (which `compile` rules out) fails closed: a deny or
    /// floor rule matches, an allow rule does not.
    fn glob_matches(&self, g: usize, path: &Path) -> bool {
        let matcher = self.matchers[g].get_or_init(|| {
            build_glob(&self.globs[g])
                .ok()
                .map(|g| Box::new(g.compile_matcher()))
        });
        match matcher {
            Some(m) => m.is_match(path),
            None => self.list != crate::List::Allow,
        }
    }

    /// The indices of the globs matching `path`.
    fn matching_globs(&self, path: &Path) -> Vec<usize> {
        let bytes = path.as_os_str().as_encoded_bytes();
        let filed = bytes
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'/')
            .filter_map(|(end, _)| self.by_dir.get(&bytes[..=end]))
            .flatten();
        self.unfiled
            .iter()
            .chain(filed)
            .copied()
            .filter(|&g| bytes.starts_with(&self.globs[g].as_bytes()[..self.prefix_len[g]]))
            .filter(|&g| self.glob_matches(g, path))
            .collect()
    }

    /// The first rule (in file order) matching the canonical `path`.
    pub fn first_match(&self, path: &Path) -> Option<&RuleRef> {
        self.matching_globs(path)
            .into_iter()
            .map(|g| self.glob_to_rule[g])
            .min()
            .map(|r| &self.rules[r])
    }

    /// The first rule (in file order) matching the canonical `path` that
    /// decides an access of kind `access` (its own, or no access named).
    pub fn first_match_for(&self, path: &Path, access: Access) -> Option<&RuleRef> {
        self.matching_globs(path)
            .into_iter()
            .map(|g| self.glob_to_rule[g])
            .filter(|&r| self.rules[r].applies_to(access))
            .min()
            .map(|r| &self.rules[r])
    }

    /// Every rule matching `path`, in file order, without duplicates.
    pub fn all_matches(&self, path: &Path) -> Vec<&RuleRef> {
        let mut idx: Vec<usize> = self
            .matching_globs(path)
            .into_iter()
            .map(|g| self.glob_to_rule[g])
            .collect();
        idx.sort_unstable();
        idx.dedup();
        idx.into_iter().map(|r| &self.rules[r]).collect()
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[RuleRef] {
        &self.rules
    }

    /// The absolute glob each rule compiled to, in rule order.
    pub fn compiled_globs(&self) -> &[String] {
        &self.compiled
    }
}

/// The length of the text before the first glob metacharacter: every path the
/// glob matches starts with it (globs match whole paths).
fn literal_prefix_len(glob: &str) -> usize {
    glob.find(['*', '?', '[', ']', '{', '}', '\\'])
        .unwrap_or(glob.len())
}

fn glob_hint(text: &str) -> String {
    if text.contains('{') || text.contains('}') {
        "close every `{` with `}`, or match a literal brace with `[{]` / `[}]`".into()
    } else if text.contains('[') || text.contains(']') {
        "close every `[` with `]`, or match a literal bracket with `[[]` / `[]]`".into()
    } else {
        "globs use `*` (within one directory), `**` (any depth), `?`, `[abc]` and `{a,b}`".into()
    }
}

/// Command regexes of one list.
#[derive(Debug, Clone)]
pub struct CommandRules {
    rules: Vec<RuleRef>,
    /// Each rule's required literals (`None`: it is checked against every command).
    literals: Vec<Option<Vec<Vec<u8>>>>,
    /// The prefilter over `literals`, built when the first command is checked.
    index: OnceLock<LiteralIndex>,
    /// Each rule's matcher, built on first use; `None` if its regex cannot be compiled.
    regexes: Vec<OnceLock<Option<CommandMatcher>>>,
    list: crate::List,
}

impl CommandRules {
    /// Compile `rules`, returning every bad regex as a problem.
    pub fn compile(rules: &[SourceRule], list: crate::List) -> Result<Self, Vec<Problem>> {
        let empty: Vec<Problem> = rules
            .iter()
            .filter(|r| r.text.is_empty())
            .map(|r| {
                r.problem(
                    "empty command rule (it would match every command)".into(),
                    Some("anchor the command you mean, e.g. `^git status$`".into()),
                )
            })
            .collect();
        if !empty.is_empty() {
            return Err(empty);
        }
        let mut problems = Vec::new();
        let mut literals = Vec::with_capacity(rules.len());
        let mut regexes = Vec::with_capacity(rules.len());
        for r in rules {
            // The regex crate's own parser and settings find every error
            // `Regex::new` would report but one: a compiled form over the size
            // limit, which fails closed when first needed (see `rule_matches`).
            match regex_syntax::ParserBuilder::new().build().parse(&r.text) {
                Ok(hir) => {
                    literals.push(literals_of(&hir));
                    regexes.push(OnceLock::new());
                }
                Err(e) => problems.push(r.problem(
                    format!("invalid regex: {}", first_error_line(&e.to_string())),
                    regex_hint(&r.text),
                )),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(CommandRules {
            rules: rules.iter().map(|r| rule_ref(r, list)).collect(),
            index: OnceLock::new(),
            literals,
            regexes,
            list,
        })
    }

    /// Rules that [`CommandRules::compile`] accepted before, with the literals it
    /// found (see [`CommandRules::literals`]): nothing is compiled until a
    /// command needs it. `literals` must have one entry per rule.
    pub fn from_checked(
        rules: &[SourceRule],
        list: crate::List,
        literals: Vec<Option<Vec<Vec<u8>>>>,
    ) -> Option<Self> {
        if literals.len() != rules.len() {
            return None;
        }
        Some(CommandRules {
            rules: rules.iter().map(|r| rule_ref(r, list)).collect(),
            index: OnceLock::new(),
            regexes: rules.iter().map(|_| OnceLock::new()).collect(),
            literals,
            list,
        })
    }

    /// Each rule's required literals: every match contains one of them.
    pub fn literals(&self) -> &[Option<Vec<Vec<u8>>>] {
        &self.literals
    }

    /// Whether rule `i` matches `command`, compiling its regex on first use. A
    /// regex that cannot be compiled (too large) fails closed: a deny rule
    /// matches, an allow rule does not.
    fn rule_matches(&self, i: usize, command: &str) -> bool {
        let matcher = self.regexes[i].get_or_init(|| CommandMatcher::new(&self.rules[i].pattern));
        match matcher {
            Some(CommandMatcher::Whole(literal)) => command == literal,
            Some(CommandMatcher::Regex(re)) => re.is_match(command),
            None => self.list != crate::List::Allow,
        }
    }

    /// The rules that can match `command`, in rule order.
    fn candidates(&self, command: &str) -> Vec<usize> {
        self.index
            .get_or_init(|| LiteralIndex::new(&self.literals))
            .candidates(command.as_bytes())
    }

    /// The first rule (in file order) whose regex finds a match in `command`.
    pub fn first_match(&self, command: &str) -> Option<&RuleRef> {
        self.candidates(command)
            .into_iter()
            .find(|&i| self.rule_matches(i, command))
            .map(|i| &self.rules[i])
    }

    /// Every rule matching `command`, in file order.
    pub fn all_matches(&self, command: &str) -> Vec<&RuleRef> {
        self.candidates(command)
            .into_iter()
            .filter(|&i| self.rule_matches(i, command))
            .map(|i| &self.rules[i])
            .collect()
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[RuleRef] {
        &self.rules
    }
}

/// How one command rule is matched: the cheapest way that gives the regex's answer.
#[derive(Debug, Clone)]
enum CommandMatcher {
    /// `^literal$`: the whole command is the literal (`^` and `$` match only
    /// at the start and end of the command without the `m` flag).
    Whole(String),
    /// Anything else.
    Regex(Regex),
}

/// The longest `^literal$` compared as a string. Far below any literal whose
/// compiled form could exceed the regex size limit, so the patterns that
/// fail to compile (and fail closed) are the same.
const MAX_WHOLE_LITERAL: usize = 4096;

impl CommandMatcher {
    /// The matcher for `pattern`; `None` when its regex does not compile.
    fn new(pattern: &str) -> Option<CommandMatcher> {
        match whole_literal(pattern) {
            Some(literal) => Some(CommandMatcher::Whole(literal.to_string())),
            None => command_regex(pattern).map(CommandMatcher::Regex),
        }
    }
}

/// The literal of a pattern `^literal$` whose literal has no character the
/// regex syntax gives a meaning (flags such as `(?i)` or `(?x)` need
/// parentheses, so none can be in effect).
fn whole_literal(pattern: &str) -> Option<&str> {
    let literal = pattern.strip_prefix('^')?.strip_suffix('$')?;
    let plain = literal.len() <= MAX_WHOLE_LITERAL
        && !literal.contains([
            '\\', '.', '+', '*', '?', '(', ')', '|', '[', ']', '{', '}', '^', '$',
        ]);
    plain.then_some(literal)
}

/// `pattern` compiled as `regex::Regex::new` compiles it (same syntax, match
/// kind and size limits, so the same patterns fail and every match is the
/// same), but without the fully built DFA the regex crate picks for a small
/// pattern: building it costs more than the whole rest of a decision, and a
/// command is matched once. `None` when the pattern does not compile.
fn command_regex(pattern: &str) -> Option<Regex> {
    use regex_automata::util::syntax;
    use regex_automata::MatchKind;
    let config = Regex::config()
        .nfa_size_limit(Some(10 * (1 << 20)))
        .hybrid_cache_capacity(2 * (1 << 20))
        .match_kind(MatchKind::LeftmostFirst)
        .utf8_empty(true)
        .dfa(false);
    Regex::builder()
        .configure(config)
        .syntax(syntax::Config::new().utf8(true))
        .build(pattern)
        .ok()
}

/// Why a command rule's regex is rejected by [`CommandRules::compile`], and
/// the hint; `None` when it compiles.
pub(crate) fn regex_problem(pattern: &str) -> Option<(String, Option<String>)> {
    let e = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .err()?;
    Some((
        format!("invalid regex: {}", first_error_line(&e.to_string())),
        regex_hint(pattern),
    ))
}

/// The regex crate's errors span several lines (pattern, caret, message); keep the message.
fn first_error_line(message: &str) -> String {
    message
        .lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .map(|l| l.trim_start_matches("error:").trim().to_string())
        .unwrap_or_else(|| message.trim().to_string())
}

fn rule_ref(rule: &SourceRule, list: crate::List) -> RuleRef {
    RuleRef {
        pattern: rule.text.clone(),
        list,
        access: rule.access,
        origin: rule.origin.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::List;

    fn rule(text: &str) -> SourceRule {
        SourceRule {
            text: text.into(),
            origin: Origin::Builtin,
            column: 1,
            access: None,
        }
    }

    #[test]
    fn glob_semantics() {
        let cwd = Path::new("/nonexistent-sg/work");
        let home = Path::new("/nonexistent-sg/home");
        let rules = PathRules::compile(
            &[rule("~/projects/**"), rule("src/*.rs"), rule("/etc/**")],
            List::Allow,
            cwd,
            home,
        )
        .unwrap();
        let m = |p: &str| rules.first_match(Path::new(p)).map(|r| r.pattern.clone());
        assert_eq!(
            m("/nonexistent-sg/home/projects"),
            Some("~/projects/**".into())
        );
        assert_eq!(
            m("/nonexistent-sg/home/projects/a/b"),
            Some("~/projects/**".into())
        );
        assert_eq!(m("/nonexistent-sg/home/projectsX"), None);
        assert_eq!(
            m("/nonexistent-sg/work/src/main.rs"),
            Some("src/*.rs".into())
        );
        assert_eq!(
            m("/nonexistent-sg/work/src/a/main.rs"),
            None,
            "* never crosses /"
        );
        assert_eq!(m("/etc"), Some("/etc/**".into()));
    }

    #[test]
    fn literal_prefixes_with_metacharacters_match_only_themselves() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        // A symlink resolves to a directory whose name holds glob metacharacters.
        let odd = root.join("we*ird\\dir[1]");
        std::fs::create_dir_all(&odd).unwrap();
        std::os::unix::fs::symlink(&odd, root.join("plain")).unwrap();
        let rule = format!("{}/plain/**", root.display());
        let rules = PathRules::compile(&[self::rule(&rule)], List::Deny, &root, &root).unwrap();
        assert!(rules.first_match(&odd.join("x")).is_some());
        assert!(rules.first_match(&root.join("weXird\\dir1/x")).is_none());
        assert!(rules.first_match(&root.join("weird\\dir[1]/x")).is_none());
    }

    #[test]
    fn reports_every_bad_regex_with_hints() {
        let err = CommandRules::compile(
            &[
                rule("^ok$"),
                rule("^git(?!\\s+push)"),
                rule("\\Qa.b\\E"),
                rule("("),
            ],
            List::Allow,
        )
        .unwrap_err();
        assert_eq!(err.len(), 3);
        assert!(err[0].hint.as_deref().unwrap().contains("lookaround"));
        assert!(err[1].hint.as_deref().unwrap().contains("\\Q"));
        assert_eq!(err[2].rule.as_deref(), Some("("));
    }

    #[test]
    fn shared_prefix_resolution_equals_canonicalize() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let cwd = home.join("work");
        std::fs::create_dir_all(cwd.join("src/a")).unwrap();
        std::fs::create_dir_all(root.join("data/real")).unwrap();
        std::os::unix::fs::symlink(root.join("data"), home.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere/x"), cwd.join("dangling")).unwrap();
        std::os::unix::fs::symlink("../../data/real", cwd.join("src/rel")).unwrap();
        std::fs::write(cwd.join("file"), "x").unwrap();
        let rules = [
            "~/link/real/**",
            "~/link/**",
            "./src/**/*.rs",
            "./src/a/b/c",
            "src/rel/*.txt",
            "dangling/**",
            "./file/below",
            "/nonexistent/a/b/**",
            "~/link/../work/**",
            "/**",
            "~/work/src/a/**",
            "~/link/missing/**",
        ];
        let mut shared = PrefixCanonicalizer::default();
        for rule in rules {
            // A fresh canonicalizer per rule is the plain canonicalize path; a shared one reuses work.
            let alone = absolute_glob(rule, &cwd, &home);
            let with_shared = absolute_glob_in(rule, &cwd, &home, &mut shared);
            assert_eq!(alone, with_shared, "{rule}");
            let literal = &alone[..alone.find(['*', '?', '[', '{']).unwrap_or(alone.len())];
            let literal = literal.trim_end_matches('/');
            if !literal.is_empty() {
                let canonical = canon::canonicalize(literal, &cwd, &home).unwrap();
                assert_eq!(
                    canonical.to_string_lossy(),
                    literal,
                    "{rule}: the literal part is canonical"
                );
            }
        }
        assert!(absolute_glob("~/link/real/**", &cwd, &home)
            .starts_with(&*root.join("data/real").to_string_lossy()));
    }

    #[test]
    fn a_listed_directory_resolves_its_children_as_lstat_does() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let many = root.join("many");
        std::fs::create_dir_all(root.join("target/inner")).unwrap();
        std::fs::create_dir_all(&many).unwrap();
        // Directories, files, symlinks to a directory and dangling ones, and
        // names that do not exist, far more than `LIST_AFTER`.
        let mut rules = Vec::new();
        for i in 0..40 {
            let name = format!("p{i}");
            match i % 5 {
                0 => std::fs::create_dir(many.join(&name)).unwrap(),
                1 => std::fs::write(many.join(&name), "x").unwrap(),
                2 => std::os::unix::fs::symlink(root.join("target"), many.join(&name)).unwrap(),
                3 => std::os::unix::fs::symlink(root.join("gone"), many.join(&name)).unwrap(),
                _ => {}
            }
            rules.push(format!("{}/{name}/inner/**", many.display()));
            rules.push(format!("{}/{name}/*.txt", many.display()));
        }
        let mut shared = PrefixCanonicalizer::default();
        for rule in &rules {
            let alone = absolute_glob(rule, &root, &root);
            assert_eq!(
                alone,
                absolute_glob_in(rule, &root, &root, &mut shared),
                "{rule}"
            );
        }
        let key = many.as_os_str().as_bytes();
        assert!(
            matches!(shared.dirs.get(key), Some(Listing::Listed(names)) if names.len() == 32),
            "the directory was listed once: {:?}",
            shared.dirs.get(key)
        );
        // The symlinked children resolved through their target.
        assert!(absolute_glob(&rules[4], &root, &root)
            .starts_with(&*root.join("target/inner").to_string_lossy()));
    }

    #[test]
    fn normal_components_equal_the_path_functions() {
        let cwd = Path::new("/work/a b/cwd");
        let home = Path::new("/home/me");
        for text in [
            "",
            "~",
            "~/",
            "~//etc/passwd",
            "~/x/../../..",
            "~user/x",
            "./src/**/*.rs",
            "src/./a//b/",
            "../..",
            "../../../../../../x",
            "/",
            "//a///b/",
            "/a/./b/../c/*.key",
            "a/[x]/../b",
            ".",
            "..",
            "~/.ssh/**",
        ] {
            let expected = canon::normalize_lexically(&cwd.join(canon::expand_tilde(text, home)));
            let mut got = String::new();
            for part in normal_components(text, cwd, home) {
                got.push('/');
                got.push_str(std::str::from_utf8(part).unwrap());
            }
            if got.is_empty() {
                got.push('/');
            }
            assert_eq!(Path::new(&got), expected, "{text:?}");
        }
    }

    #[test]
    fn regex_find_semantics() {
        let rules =
            CommandRules::compile(&[rule("rm\\s+-rf"), rule("^git( |$)")], List::Deny).unwrap();
        assert_eq!(
            rules.first_match("sudo rm -rf /").unwrap().pattern,
            "rm\\s+-rf"
        );
        assert_eq!(rules.first_match("git").unwrap().pattern, "^git( |$)");
        assert!(rules.first_match("legit status").is_none());
    }

    #[test]
    fn command_regexes_match_as_the_regex_crate_does() {
        let patterns = [
            "^true$",
            "^git( |$)",
            "rm\\s+-rf",
            "^(ls|cat) [^;&|]*$",
            "\\bcurl\\b.*\\|\\s*sh",
            "^echo \\w+$",
            "(?i)^SUDO ",
            "^$",
            "é+",
            "^a{2,3}b?$",
            "(?-u:\\xff)",
            "\\w{1000}{1000}",
        ];
        let commands = [
            "",
            "true",
            "true ",
            "git",
            "git status",
            "legit",
            "sudo rm -rf /",
            "ls -la",
            "cat a; rm b",
            "curl x | sh",
            "echo héllo",
            "echo a b",
            "sudo ls",
            "éé",
            "aab",
            "aaaa",
            "\u{ff}",
        ];
        for pattern in patterns {
            let ours = command_regex(pattern);
            let theirs = regex::Regex::new(pattern).ok();
            assert_eq!(ours.is_some(), theirs.is_some(), "{pattern:?}");
            let (Some(ours), Some(theirs)) = (ours, theirs) else {
                continue;
            };
            for command in commands {
                assert_eq!(
                    ours.is_match(command),
                    theirs.is_match(command),
                    "{pattern:?} on {command:?}"
                );
            }
        }
    }

    #[test]
    fn whole_literals_match_as_their_regex_does() {
        let patterns = [
            ("^true$", true),
            ("^git status$", true),
            ("^$", true),
            ("^ls -la /tmp$", true),
            ("^écho é$", true),
            ("^a#b c$", true),
            ("^true", false),
            ("true$", false),
            ("^tru.$", false),
            ("^echo \\$$", false),
            ("^(?i)true$", false),
            ("^a|b$", false),
            ("^a\\nb$", false),
            ("^x{2}$", false),
        ];
        let commands = [
            "",
            "true",
            "True",
            "true ",
            " true",
            "true\n",
            "tru",
            "git status",
            "git  status",
            "ls -la /tmp",
            "écho é",
            "a#b c",
            "a",
            "b",
            "xx",
            "echo $",
        ];
        for (pattern, whole) in patterns {
            assert_eq!(whole_literal(pattern).is_some(), whole, "{pattern:?}");
            let ours = CommandMatcher::new(pattern).unwrap();
            let theirs = regex::Regex::new(pattern).unwrap();
            for command in commands {
                let got = match &ours {
                    CommandMatcher::Whole(literal) => command == literal,
                    CommandMatcher::Regex(re) => re.is_match(command),
                };
                assert_eq!(got, theirs.is_match(command), "{pattern:?} on {command:?}");
            }
        }
        let long = format!("^{}$", "a".repeat(MAX_WHOLE_LITERAL + 1));
        assert!(whole_literal(&long).is_none());
    }
}
