//! The confinement plan as data: what the program may write, what is
//! protected, and the Landlock rules that hold the floor. The plan is the
//! one plan type of both scopes ([`sandgate_sandbox::plan::Plan`]) with
//! the run's own part ([`RunScope`]): [`RunPlan`], built and judged through
//! [`RunPlanExt`].
//!
//! Landlock rules only add rights to a whole subtree, so an allowed directory
//! that contains a protected one (the workspace contains `.sandgate/`, `/tmp`
//! may contain the workspace) is *carved*: instead of the directory, each of
//! its children gets a rule, recursively down to the protected path, which
//! gets none. The carved directories themselves get no rule, so creating,
//! removing or renaming their entries always goes through the supervisor,
//! which refuses protected names. That is also how a protected directory that
//! does not exist yet (`.git` before `git init`) stays protected: nothing but
//! the supervisor can create an entry next to it.
//!
//! With the mount layer ([`Protection::Mount`], made by the `mounts` module) each
//! protected path that exists when the plan is made is held read-only by a
//! bind mount in the program's mount namespace instead, so only the missing
//! ones are carved around: a directory whose protected entries all exist
//! (`.git` with its `hooks` and `config`) keeps a rule of its own. The
//! workspace root is carved in practice, since some protected name
//! (`.mcp.json`, `.vscode`, a shell start-up file) is nearly always missing
//! there: a marked `openat` forged by the program, or a path changed between
//! the supervisor's look and the kernel's, then meets Landlock's refusal.
//!
//! The built-in floor ([`sandgate_policy::floor`]) is never written: a write
//! beneath it fails without a question ([`Standing::Floor`]), before the
//! allowed set, the answers and `sandbox.json` are consulted. Its
//! directories other than `~/.sandgate` (which the program reads: its hooks
//! need the policy, the loader the preload library) are not readable either:
//! with the mount layer each existing one is an empty read-only mount, and
//! without it the plan handles Landlock's file-read right and carves its read
//! rules around them ([`RunScope::read_rules`]). In `~/.ssh` the files `ssh`
//! needs to reach a host through an agent stay readable
//! ([`floor_file_readable`]). The floor's other names (hard links made
//! before, bind mounts: [`RunScope::floor_links`]) and the credential stores
//! the policy denies ([`RunScope::credentials`]) are hidden from reads the
//! same way (a credential file under the mount layer is covered by a
//! read-only bind of `/dev/null`).

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use sandgate_policy::canon::normalize_lexically;
use sandgate_policy::floor;
use sandgate_sandbox::floorlinks::FloorAlias;
use sandgate_sandbox::plan::{Asking, DeniedDir, DenySource, Plan, Protected};
use serde::Serialize;

use super::settings::{SandboxSettings, STATE_DIR};
use super::unasked::{is_state_sibling, unasked, Unasked};

/// How protected paths inside allowed directories are kept read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protection {
    /// Existing protected paths are read-only bind mounts in the program's
    /// mount namespace; the allowed directories get Landlock rules of their
    /// own. Missing protected paths are still carved.
    Mount,
    /// Every protected path is carved out of the Landlock rules, and the
    /// supervisor creates, removes and renames the entries of the carved
    /// directories.
    Carve,
}

impl Protection {
    /// The name used in reports: `mount` or `carve`.
    pub fn name(self) -> &'static str {
        match self {
            Protection::Mount => "mount",
            Protection::Carve => "carve",
        }
    }
}

/// A floor directory the mount layer hides, with what stays readable in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FloorMount {
    /// The directory (canonical).
    pub dir: PathBuf,
    /// The regular files directly in it that stay readable.
    pub keep: Vec<String>,
}

/// Temp trees every program may write.
const TEMP_TREES: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];
/// Device files and directories every program may write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];
/// Regenerable tool caches, relative to the home directory.
const CACHES: &[&str] = &[
    ".cache",
    ".npm",
    ".node-gyp",
    ".pnpm-store",
    ".local/share/pnpm",
    ".cargo/registry",
    ".cargo/git",
    ".m2/repository",
    ".gradle/caches",
    "go/pkg/mod",
    ".bun/install/cache",
];
/// Agent state directories (and files), relative to the home directory.
pub const DEFAULT_STATE_DIRS: &[&str] = &[".claude", ".claude.json", ".codex", ".gemini"];
/// The entries of [`DEFAULT_STATE_DIRS`] that are files, whether or not they
/// exist yet: their lock and temporary siblings are allowed with them (see
/// [`super::unasked`]).
const DEFAULT_STATE_FILES: &[&str] = &[".claude.json"];

/// Whether the regular file `name` directly in the floor directory `dir`
/// stays readable under `sandgate run`: the floor's own data
/// ([`sandgate_policy::floor::READABLE_FILES`]: in `~/.ssh`, the client
/// configuration, the known hosts and the public keys).
pub fn floor_file_readable(dir: &str, name: &str) -> bool {
    sandgate_policy::floor::file_readable(dir, name)
}

/// One directory of the built-in floor, as the plan holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FloorDir {
    /// The directory (canonical when it exists).
    pub path: PathBuf,
    /// Whether it existed when the plan was made.
    pub exists: bool,
    /// Whether its files are unreadable to the program (all but
    /// `readable`); `~/.sandgate` stays readable (and read-only).
    pub hidden: bool,
    /// The files directly in it that stay readable.
    pub readable: Vec<String>,
}

/// Why a path is in the allowed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AllowKind {
    /// A workspace root.
    Workspace,
    /// An agent state directory.
    State,
    /// A system temp tree.
    Temp,
    /// A regenerable tool cache.
    Cache,
    /// `/dev/null`, the tty and their kin.
    Device,
    /// Granted in `sandbox.json` (or by an "allow always" answer).
    Granted,
}

/// One root of the allowed set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Allowed {
    /// The path (canonical when it exists); everything beneath it is allowed.
    pub path: PathBuf,
    /// Why it is allowed.
    pub kind: AllowKind,
    /// Whether it existed when the plan was made (only existing paths get a
    /// Landlock rule; the supervisor performs writes to the others).
    pub exists: bool,
}

/// One Landlock rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// The file or directory.
    pub path: PathBuf,
    /// A directory rule allows every write beneath it; a file rule allows
    /// writing and truncating the file.
    pub dir: bool,
}

/// What the plan is built from.
#[derive(Debug, Clone)]
pub struct RunPlanInputs {
    /// The workspace roots (absolute).
    pub workspaces: Vec<PathBuf>,
    /// The home directory.
    pub home: PathBuf,
    /// `$TMPDIR`, if set.
    pub tmpdir: Option<PathBuf>,
    /// The merged settings of the workspaces.
    pub settings: SandboxSettings,
    /// sandgate's compiled-policy cache directory, read-only to the program
    /// like `~/.sandgate` (the hooks trust what they find there).
    pub policy_cache: Option<PathBuf>,
    /// The credential stores the policy denies reading
    /// ([`sandgate_policy::credentials`]), absolute: hidden from reads like
    /// the floor.
    pub credentials: Vec<PathBuf>,
}

/// Where a path stands for a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Beneath the built-in floor: fails, never asks, nothing allows it.
    Floor,
    /// Protected: fails, never asks.
    Protected,
    /// Allowed, and the Landlock floor lets the kernel do it: continue.
    Covered,
    /// Allowed, but the Landlock floor would refuse it: the supervisor performs it.
    Allowed,
    /// In the deny list: fails, never asks.
    Denied,
    /// Outside the allowed set, and never a question (a kernel pressure
    /// file, a desktop-integration path): fails, reported only.
    Unasked(Unasked),
    /// Outside the allowed set: ask.
    Outside,
}

/// The confinement plan of `sandgate run`: the one plan type
/// ([`sandgate_sandbox::plan::Plan`]) with the run's own part
/// ([`RunScope`]). Its shared fields are what the run judges by: the
/// writable trees (the roots of the allowed set, [`Plan::writable`]), the
/// protected paths ([`Plan::protected`]: those held as present, whether or
/// not they exist, and those guarded as missing, which are carved around so
/// that only the supervisor can make an entry there, and it refuses these),
/// the UNIX sockets outside the run the program may connect to
/// (`unixSockets` in `sandbox.json`), and asking about writes outside
/// ([`Asking::Outside`]). Its methods are [`RunPlanExt`]'s.
pub type RunPlan = Plan<RunScope>;

/// What only `sandgate run`'s plan holds: the allowed set with why each
/// root is in it, the floor as the run holds it, the `sandbox.json` deny
/// list, the mount layer, the Landlock rules, the preload fast path's
/// input (the carved directories) and the state files.
#[derive(Debug, Clone, Serialize)]
pub struct RunScope {
    /// The workspace roots (canonical).
    pub workspaces: Vec<PathBuf>,
    /// The allowed set.
    pub allowed: Vec<Allowed>,
    /// The built-in floor's directories beneath the home directory
    /// ([`sandgate_policy::floor`]), canonical, whether or not they exist.
    pub floor: Vec<PathBuf>,
    /// Paths whose writes fail without asking.
    pub deny: Vec<PathBuf>,
    /// Whether `.git` is protected.
    pub strict_git: bool,
    /// How the protected paths are held.
    pub protection: Protection,
    /// The protected paths held read-only by the mount layer (those that
    /// existed when the plan was made, with [`Protection::Mount`]); the
    /// others are carved around.
    pub mounted: Vec<PathBuf>,
    /// The built-in floor's directories as the plan holds them: whether
    /// each exists, is hidden, and what stays readable in it.
    pub floor_dirs: Vec<FloorDir>,
    /// The floor directories the mount layer hides (see [`FloorMount`]),
    /// and the credential-store directories.
    pub floor_mounts: Vec<FloorMount>,
    /// The credential stores hidden from reads (those that exist, canonical):
    /// under the mount layer a directory is an empty read-only mount and a
    /// file a read-only bind of `/dev/null`; when carving, Landlock read
    /// rules are carved around each.
    pub credentials: Vec<PathBuf>,
    /// The credential-store files the mount layer covers with `/dev/null`.
    pub covered_files: Vec<PathBuf>,
    /// Other names of the floor's private files (hard links made before
    /// the run, bind mounts): hidden from reads like the floor.
    pub floor_links: Vec<PathBuf>,
    /// Every other name of a floor file or directory (see
    /// [`sandgate_sandbox::floorlinks`]): never written, like the floor.
    pub floor_aliases: Vec<FloorAlias>,
    /// Why the floor could still be reached under another name (a floor
    /// file whose other names were not all found): the run must not start.
    pub floor_unreachable: Option<String>,
    /// Without the mount layer, the Landlock rules that grant reading files
    /// everywhere but in the hidden floor directories (empty when nothing
    /// is hidden: reads are then not restricted).
    pub read_rules: Vec<Rule>,
    /// The Landlock rules.
    pub rules: Vec<Rule>,
    /// The allowed state files (not directories), whose lock and temporary
    /// siblings are allowed with them.
    pub state_files: Vec<PathBuf>,
    /// The home directory (canonical when it exists).
    #[serde(skip)]
    home: PathBuf,
    /// sandgate's compiled-policy cache directory (canonical when it exists).
    #[serde(skip)]
    policy_cache: Option<PathBuf>,
    #[serde(skip)]
    floor_paths: Vec<PathBuf>,
    /// The floor directories of every home the floor covers, canonical.
    #[serde(skip)]
    pub(crate) floor_roots: Vec<PathBuf>,
    #[serde(skip)]
    dir_rules: HashSet<PathBuf>,
    #[serde(skip)]
    file_rules: HashSet<PathBuf>,
    /// The rules carving around every protected path would give (the same
    /// as `dir_rules` and `file_rules` when carving).
    #[serde(skip)]
    carved_dir_rules: HashSet<PathBuf>,
    #[serde(skip)]
    carved_file_rules: HashSet<PathBuf>,
}

/// `sandgate run`'s plan: building it, and where a path stands in it.
pub trait RunPlanExt {
    /// Builds the plan, reading the file system to carve allowed directories
    /// around protected paths.
    fn build(inputs: &RunPlanInputs) -> RunPlan;
    /// Builds the plan for `protection`: with [`Protection::Mount`], the
    /// protected paths that exist now (and are not symbolic links) are left to
    /// the mount layer and only the others are carved around.
    fn build_with(inputs: &RunPlanInputs, protection: Protection) -> RunPlan;
    /// The protected paths held as present (read-only mounts or carved
    /// trees), whether or not they exist.
    fn held(&self) -> Vec<&Path>;
    /// The protected paths that did not exist at start, guarded by carving.
    fn guarded(&self) -> Vec<&Path>;
    /// Whether `path` is beneath the built-in floor.
    fn is_floor(&self, path: &Path) -> bool;
    /// Whether `path` is a protected path or beneath one.
    fn is_protected(&self, path: &Path) -> bool;
    /// Whether `path` is one of the files sandgate itself writes from inside
    /// a run (through its hooks): the audit log (with its lock and rotated
    /// file) and the compiled-policy cache. They stay read-only to the
    /// program; a refusal there is reported, never shown over its screen.
    fn is_sandgate_own(&self, path: &Path) -> bool;
    /// Whether `path` lies above a protected path (`.git` above
    /// `.git/hooks`, `.claude` above `.claude/commands`). Renaming such a
    /// directory moves the protected path away and frees its name; renaming
    /// a prepared tree onto it, or making it a symbolic link, puts the
    /// program's own files where the protected path is looked for. So both
    /// are refused like a write to the protected path itself.
    fn holds_protected(&self, path: &Path) -> bool;
    /// Whether `path` is in the allowed set of the plan or of `extra`.
    fn is_allowed(&self, path: &Path, extra: &[PathBuf]) -> bool;
    /// Whether `path` is in the deny list of the plan or of `extra`.
    fn is_denied(&self, path: &Path, extra: &[PathBuf]) -> bool;
    /// The existing allowed directories that have no Landlock rule of their
    /// own (carved around a protected path): the supervisor performs the
    /// creation, removal and renaming of their entries.
    fn carved(&self) -> impl Iterator<Item = &Path>;
    /// Whether Landlock lets the program write the contents of `path`.
    fn covers_content(&self, path: &Path) -> bool;
    /// Whether carving around every protected path would give `path` a rule
    /// of its own (a directory rule, or with `content` a file rule).
    fn carving_covers(&self, path: &Path, content: bool) -> bool;
    /// The deepest directory rule at or above `path`.
    fn rule_dir_of<'a>(&self, path: &'a Path) -> Option<&'a Path>;
    /// Whether Landlock lets the program create, remove or rename the entry `path`.
    fn covers_entry(&self, path: &Path) -> bool;
    /// Where the canonical `path` stands; `entry` says whether the operation
    /// changes the entry (create, remove, rename) rather than the contents.
    fn standing(&self, path: &Path, entry: bool, answers: &RunAnswers) -> Standing;
}

impl RunPlanExt for RunPlan {
    fn build(inputs: &RunPlanInputs) -> RunPlan {
        RunPlan::build_with(inputs, Protection::Carve)
    }

    fn build_with(inputs: &RunPlanInputs, protection: Protection) -> RunPlan {
        let home = &inputs.home;
        let base = inputs
            .workspaces
            .first()
            .cloned()
            .unwrap_or_else(|| PathBuf::from("/"));
        let workspaces: Vec<PathBuf> = inputs
            .workspaces
            .iter()
            .map(|w| canonical_or_lexical(w))
            .collect();
        let mut allowed = Vec::new();
        let mut add = |path: PathBuf, kind: AllowKind| {
            let path = canonical_or_lexical(&path);
            if !allowed.iter().any(|a: &Allowed| a.path == path) {
                let exists = fs::symlink_metadata(&path).is_ok();
                allowed.push(Allowed { path, kind, exists });
            }
        };
        for ws in &workspaces {
            add(ws.clone(), AllowKind::Workspace);
        }
        for dir in DEFAULT_STATE_DIRS {
            add(home.join(dir), AllowKind::State);
        }
        for dir in &inputs.settings.state_dirs {
            add(expand(dir, home, &base), AllowKind::State);
        }
        for dir in TEMP_TREES {
            add(PathBuf::from(dir), AllowKind::Temp);
        }
        if let Some(tmp) = &inputs.tmpdir {
            add(tmp.clone(), AllowKind::Temp);
        }
        for dir in CACHES {
            add(home.join(dir), AllowKind::Cache);
        }
        for dev in DEVICES {
            add(PathBuf::from(dev), AllowKind::Device);
        }
        for grant in &inputs.settings.allow {
            add(expand(grant, home, &base), AllowKind::Granted);
        }
        let known_files: Vec<PathBuf> = DEFAULT_STATE_FILES
            .iter()
            .map(|f| canonical_or_lexical(&home.join(f)))
            .collect();
        let state_files: Vec<PathBuf> = allowed
            .iter()
            .filter(|a| a.kind == AllowKind::State)
            .filter(|a| {
                known_files.contains(&a.path)
                    || fs::symlink_metadata(&a.path).is_ok_and(|m| m.is_file())
            })
            .map(|a| a.path.clone())
            .collect();

        let mut protected = Vec::new();
        // Why each protected path is protected.
        let mut whys: Vec<(PathBuf, String)> = Vec::new();
        for ws in &workspaces {
            protected.push(ws.join(STATE_DIR));
            whys.push((ws.join(STATE_DIR), "sandgate's workspace settings".into()));
            if inputs.settings.strict_git {
                protected.push(ws.join(".git"));
                whys.push((ws.join(".git"), "strictGit in sandbox.json".into()));
            }
        }
        let own = canonical_or_lexical(&home.join(floor::SANDGATE_DIR));
        whys.push((own.clone(), "sandgate's own directory".into()));
        protected.push(own);
        let floor: Vec<PathBuf> = floor::dirs(home)
            .iter()
            .map(|dir| canonical_or_lexical(dir))
            .collect();
        if let Some(cache) = &inputs.policy_cache {
            let cache = canonical_or_lexical(cache);
            whys.push((cache.clone(), "sandgate's compiled-policy cache".into()));
            protected.push(cache);
        }
        let mut floor_dirs = Vec::new();
        let mut floor_paths = Vec::new();
        for entry in floor::FLOOR {
            let (dir, lexical) = (entry.dir, entry.path(home));
            let path = canonical_or_lexical(&lexical);
            let meta = fs::symlink_metadata(&path).ok();
            let exists = meta.as_ref().is_some_and(|m| m.is_dir());
            let hidden = exists && dir != floor::SANDGATE_DIR;
            let mut readable: Vec<String> = Vec::new();
            if hidden {
                for entry in fs::read_dir(&path).into_iter().flatten().flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    let regular = entry.file_type().is_ok_and(|t| t.is_file());
                    if regular && floor_file_readable(dir, &name) {
                        readable.push(name);
                    }
                }
                readable.sort();
            }
            for p in [&lexical, &path] {
                if !floor_paths.contains(p) {
                    floor_paths.push(p.clone());
                }
            }
            floor_dirs.push(FloorDir {
                path,
                exists,
                hidden,
                readable,
            });
        }
        // The floor under other names (hard links made before the run, bind
        // mounts), looked for in the allowed set first: never written, and
        // hidden from reads unless what they name stays readable.
        let floor_roots: Vec<PathBuf> = floor::gate_dirs(home)
            .iter()
            .map(|d| canonical_or_lexical(d))
            .collect();
        let inodes = floor::FloorInodes::collect(&floor_roots);
        let writable: Vec<PathBuf> = allowed
            .iter()
            .filter(|a| a.exists && a.kind != AllowKind::Device)
            .map(|a| a.path.clone())
            .collect();
        let (floor_aliases, floor_unreachable) =
            match sandgate_sandbox::floorlinks::aliases(&inodes, &writable) {
                Ok(found) => (found, None),
                Err(e) => (Vec::new(), Some(e.to_string())),
            };
        for alias in &floor_aliases {
            if !floor_paths.contains(&alias.path) {
                floor_paths.push(alias.path.clone());
            }
        }
        // Other names of the credential files the policy denies (hard links
        // made before the run): hidden from reads like the floor's, and
        // never written (a write there lands in the store).
        let credential_files: Vec<PathBuf> = inputs
            .credentials
            .iter()
            .filter_map(|p| fs::canonicalize(p).ok())
            .filter(|p| p.is_file())
            .collect();
        let credential_inodes = floor::FloorInodes::of_files(&credential_files);
        let (credential_links, credential_unreachable): (Vec<PathBuf>, _) =
            match sandgate_sandbox::floorlinks::aliases(&credential_inodes, &writable) {
                Ok(found) => (found.into_iter().map(|a| a.path).collect(), None),
                Err(e) => (Vec::new(), Some(e.to_string())),
            };
        for link in &credential_links {
            if !floor_paths.contains(link) {
                floor_paths.push(link.clone());
            }
        }
        let floor_unreachable = floor_unreachable.or(credential_unreachable);
        let floor_links: Vec<PathBuf> = floor_aliases
            .iter()
            .filter(|alias| !alias_readable(alias, &floor_dirs))
            .map(|alias| alias.path.clone())
            .collect();
        let extra: Vec<(String, String)> = inputs
            .settings
            .protect
            .iter()
            .map(|p| {
                (
                    expand(p, home, &base).display().to_string(),
                    "protect".to_string(),
                )
            })
            .collect();
        let mut guarded = Vec::new();
        let named = workspaces
            .iter()
            .flat_map(|ws| sandgate_sandbox::repository::protected_entries(ws))
            .chain(sandgate_sandbox::plan::own_executable());
        // Whether `path` lies inside the allowed set and not already beneath
        // a protected path.
        let holds = |path: &Path, protected: &[PathBuf]| {
            allowed
                .iter()
                .any(|a: &Allowed| path.starts_with(&a.path) && path != a.path)
                && !protected.iter().any(|p| path.starts_with(p))
        };
        for listed in sandgate_policy::protected::paths(&workspaces, home, &extra)
            .into_iter()
            .chain(named)
        {
            if listed.only_file && !fs::symlink_metadata(&listed.path).is_ok_and(|m| m.is_file()) {
                continue;
            }
            // The last component stays as it is: a protected name that is a
            // symbolic link is held (carved) as the link, never its target.
            let path = match (listed.path.parent(), listed.path.file_name()) {
                (Some(parent), Some(name)) => canonical_or_lexical(parent).join(name),
                _ => continue,
            };
            // Reached through a symbolic link (`.git` linked elsewhere), the
            // name as written is held too: the link may go and a directory
            // of the program's take its place.
            if path != listed.path
                && holds(&listed.path, &protected)
                && !guarded.contains(&listed.path)
            {
                guarded.push(listed.path.clone());
                whys.push((listed.path.clone(), listed.why.clone()));
            }
            if !holds(&path, &protected) {
                continue;
            }
            whys.push((path.clone(), listed.why.clone()));
            if fs::symlink_metadata(&path).is_ok() {
                protected.push(path);
            } else if !guarded.contains(&path) {
                guarded.push(path);
            }
        }
        let deny = inputs
            .settings
            .deny
            .iter()
            .map(|d| canonical_or_lexical(&expand(d, home, &base)))
            .collect();

        let unix_sockets = inputs
            .settings
            .unix_sockets
            .iter()
            .map(|p| expand(p, home, &base))
            .collect();
        let mut mounted: Vec<PathBuf> = Vec::new();
        if protection == Protection::Mount {
            for path in &protected {
                let held = fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_symlink());
                if held && !mounted.contains(path) {
                    mounted.push(path.clone());
                }
            }
        }
        let floor_mounts: Vec<FloorMount> = if protection == Protection::Mount {
            floor_dirs
                .iter()
                .filter(|f| f.hidden)
                .map(|f| FloorMount {
                    dir: f.path.clone(),
                    keep: f.readable.clone(),
                })
                .collect()
        } else {
            Vec::new()
        };
        // The floor is carved around like a protected path that is not
        // mounted, also where an empty read-only mount hides it: no write
        // rule ever reaches into it. So is every missing protected path: no
        // rule may let the kernel create it, whatever the program does to
        // the path between the supervisor's look and the kernel's.
        let carved_around: Vec<PathBuf> = protected
            .iter()
            .filter(|p| !mounted.contains(p))
            .chain(&guarded)
            .chain(floor_paths.iter().filter(|p| !mounted.contains(p)))
            .cloned()
            .collect();
        // The credential stores the policy denies: hidden like the floor.
        let mut credentials: Vec<PathBuf> = Vec::new();
        for path in &inputs.credentials {
            let Ok(real) = fs::canonicalize(path) else {
                continue;
            };
            if !credentials.contains(&real) && !floor_paths.iter().any(|f| real.starts_with(f)) {
                credentials.push(real);
            }
        }
        let mut floor_mounts = floor_mounts;
        let mut covered_files = Vec::new();
        let mut read_rules = Vec::new();
        let mut hidden: Vec<PathBuf> = floor_links.clone();
        hidden.extend(credential_links);
        for path in &credentials {
            let dir = path.is_dir();
            match (protection, dir) {
                (Protection::Mount, true) => floor_mounts.push(FloorMount {
                    dir: path.clone(),
                    keep: Vec::new(),
                }),
                (Protection::Mount, false) => covered_files.push(path.clone()),
                (Protection::Carve, _) => hidden.push(path.clone()),
            }
        }
        if protection == Protection::Carve {
            hidden.extend(
                floor_dirs
                    .iter()
                    .filter(|f| f.hidden)
                    .map(|f| f.path.clone()),
            );
        }
        if !hidden.is_empty() {
            carve(Path::new("/"), &hidden, &mut read_rules);
            if protection == Protection::Carve {
                for f in floor_dirs.iter().filter(|f| f.hidden) {
                    for name in &f.readable {
                        read_rules.push(Rule {
                            path: f.path.join(name),
                            dir: false,
                        });
                    }
                }
            }
        }
        let mut rules = Vec::new();
        // An allowed path beneath the floor (`"allow": ["~/.ssh"]`) gets no rule.
        let beneath_floor = |p: &Path| floor_paths.iter().any(|f| p.starts_with(f));
        for root in allowed
            .iter()
            .filter(|a| a.exists && !beneath_floor(&a.path))
        {
            carve(&root.path, &carved_around, &mut rules);
        }
        rules.sort_by(|a, b| a.path.cmp(&b.path));
        rules.dedup();
        let dir_rules: HashSet<PathBuf> = rules
            .iter()
            .filter(|r| r.dir)
            .map(|r| r.path.clone())
            .collect();
        let file_rules: HashSet<PathBuf> = rules
            .iter()
            .filter(|r| !r.dir)
            .map(|r| r.path.clone())
            .collect();
        let (carved_dir_rules, carved_file_rules) = if mounted.is_empty() {
            (dir_rules.clone(), file_rules.clone())
        } else {
            let mut carved = Vec::new();
            let every: Vec<PathBuf> = protected
                .iter()
                .chain(&guarded)
                .chain(&floor_paths)
                .cloned()
                .collect();
            for root in allowed
                .iter()
                .filter(|a| a.exists && !beneath_floor(&a.path))
            {
                carve(&root.path, &every, &mut carved);
            }
            let (dirs, files): (Vec<Rule>, Vec<Rule>) = carved.into_iter().partition(|r| r.dir);
            (
                dirs.into_iter().map(|r| r.path).collect(),
                files.into_iter().map(|r| r.path).collect(),
            )
        };
        let why = |path: &PathBuf| {
            whys.iter()
                .find(|(p, _)| p == path)
                .map(|(_, why)| why.clone())
                .unwrap_or_default()
        };
        let held: Vec<Protected> = protected
            .iter()
            .map(|path| (path, true))
            .chain(guarded.iter().map(|path| (path, false)))
            .map(|(path, exists)| Protected {
                path: path.clone(),
                why: why(path),
                exists,
                only_file: false,
            })
            .collect();
        // Neither read nor written: the floor directories hidden from reads
        // and the other names of their private files.
        let denied: Vec<DeniedDir> = floor_dirs
            .iter()
            .filter(|f| f.hidden)
            .map(|f| DeniedDir {
                path: f.path.clone(),
                source: DenySource::Floor,
                file: false,
            })
            .chain(
                floor_aliases
                    .iter()
                    .filter(|a| floor_links.contains(&a.path))
                    .map(|a| DeniedDir {
                        path: a.path.clone(),
                        source: DenySource::FloorAlias(a.floor.display().to_string()),
                        file: !a.dir,
                    }),
            )
            .collect();
        let writable: Vec<PathBuf> = allowed.iter().map(|a| a.path.clone()).collect();
        Plan {
            workdir: workspaces
                .first()
                .cloned()
                .unwrap_or_else(|| PathBuf::from("/")),
            readable: vec![PathBuf::from("/")],
            writable,
            writable_files: Vec::new(),
            denied,
            gate_only: Vec::new(),
            exact_files: Vec::new(),
            network: true,
            no_new_privs: true,
            best_effort: false,
            protected: held,
            unix_sockets,
            asking: Asking::Outside,
            scope: RunScope {
                workspaces,
                allowed,
                floor,
                deny,
                strict_git: inputs.settings.strict_git,
                protection,
                mounted,
                floor_dirs,
                floor_mounts,
                credentials,
                covered_files,
                floor_links,
                floor_aliases,
                floor_unreachable,
                read_rules,
                floor_paths,
                floor_roots,
                rules,
                state_files,
                home: canonical_or_lexical(home),
                policy_cache: inputs.policy_cache.as_deref().map(canonical_or_lexical),
                dir_rules,
                file_rules,
                carved_dir_rules,
                carved_file_rules,
            },
        }
    }

    fn held(&self) -> Vec<&Path> {
        self.protected
            .iter()
            .filter(|p| p.exists)
            .map(|p| p.path.as_path())
            .collect()
    }

    fn guarded(&self) -> Vec<&Path> {
        self.protected
            .iter()
            .filter(|p| !p.exists)
            .map(|p| p.path.as_path())
            .collect()
    }

    fn is_floor(&self, path: &Path) -> bool {
        self.floor_paths.iter().any(|p| path.starts_with(p))
    }

    fn is_protected(&self, path: &Path) -> bool {
        self.protected.iter().any(|p| path.starts_with(&p.path))
    }

    fn is_sandgate_own(&self, path: &Path) -> bool {
        let audit = path.parent() == Some(&self.home.join(floor::SANDGATE_DIR))
            && path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("audit.jsonl"));
        audit
            || self
                .policy_cache
                .as_ref()
                .is_some_and(|c| path.starts_with(c))
    }

    fn holds_protected(&self, path: &Path) -> bool {
        self.protected
            .iter()
            .any(|p| p.path != path && p.path.starts_with(path))
    }

    fn is_allowed(&self, path: &Path, extra: &[PathBuf]) -> bool {
        self.writable.iter().any(|w| path.starts_with(w))
            || extra.iter().any(|a| path.starts_with(a))
            || self
                .state_files
                .iter()
                .any(|file| is_state_sibling(path, file))
    }

    fn is_denied(&self, path: &Path, extra: &[PathBuf]) -> bool {
        self.deny.iter().chain(extra).any(|d| path.starts_with(d))
    }

    fn carved(&self) -> impl Iterator<Item = &Path> {
        self.allowed
            .iter()
            .filter(|a| a.exists && !self.dir_rules.contains(&a.path))
            .map(|a| a.path.as_path())
            .filter(|p| p.is_dir())
    }

    fn covers_content(&self, path: &Path) -> bool {
        self.file_rules.contains(path) || path.ancestors().any(|a| self.dir_rules.contains(a))
    }

    fn carving_covers(&self, path: &Path, content: bool) -> bool {
        self.carved_dir_rules.contains(path) || (content && self.carved_file_rules.contains(path))
    }

    fn rule_dir_of<'a>(&self, path: &'a Path) -> Option<&'a Path> {
        path.ancestors().find(|a| self.dir_rules.contains(*a))
    }

    fn covers_entry(&self, path: &Path) -> bool {
        path.parent()
            .is_some_and(|parent| parent.ancestors().any(|a| self.dir_rules.contains(a)))
    }

    fn standing(&self, path: &Path, entry: bool, answers: &RunAnswers) -> Standing {
        if self.is_protected(path) {
            return Standing::Protected;
        }
        if self.is_floor(path) {
            return Standing::Floor;
        }
        if self.is_allowed(path, &answers.allow) {
            let covered = if entry {
                self.covers_entry(path)
            } else {
                self.covers_content(path)
            };
            return if covered {
                Standing::Covered
            } else {
                Standing::Allowed
            };
        }
        if self.is_denied(path, &answers.deny) {
            return Standing::Denied;
        }
        if let Some(kind) = unasked(path, &self.home) {
            return Standing::Unasked(kind);
        }
        Standing::Outside
    }
}

/// Answers given during a run, on top of the plan.
#[derive(Debug, Clone, Default)]
pub struct RunAnswers {
    /// Paths allowed "always" during this run.
    pub allow: Vec<PathBuf>,
    /// Paths rejected "always" during this run.
    pub deny: Vec<PathBuf>,
}

/// Whether the floor file or directory `alias` names stays readable under
/// `sandgate run` (a file of [`floor::READABLE_FILES`], or one in a floor
/// directory that is not hidden): its other name may be read too.
fn alias_readable(alias: &FloorAlias, floor_dirs: &[FloorDir]) -> bool {
    if alias.dir {
        return false;
    }
    floor_dirs
        .iter()
        .find(|f| alias.floor.starts_with(&f.path))
        .is_some_and(|f| {
            !f.hidden
                || alias.floor.parent() == Some(f.path.as_path())
                    && alias
                        .floor
                        .file_name()
                        .is_some_and(|n| f.readable.iter().any(|r| n == r.as_str()))
        })
}

/// Adds the rules that allow writing `dir` except the protected paths beneath it.
fn carve(path: &Path, protected: &[PathBuf], rules: &mut Vec<Rule>) {
    if protected.iter().any(|p| path.starts_with(p)) {
        return;
    }
    let Ok(meta) = fs::symlink_metadata(path) else {
        return;
    };
    if meta.file_type().is_symlink() {
        // A rule on a symlink would land on its target, wherever that is.
        return;
    }
    if !meta.is_dir() {
        rules.push(Rule {
            path: path.to_path_buf(),
            dir: false,
        });
        return;
    }
    if !protected.iter().any(|p| p.starts_with(path)) {
        rules.push(Rule {
            path: path.to_path_buf(),
            dir: true,
        });
        return;
    }
    let Ok(entries) = fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        carve(&path.join(entry.file_name()), protected, rules);
    }
}

/// Expands `~`, makes `raw` absolute against `base`.
fn expand(raw: &str, home: &Path, base: &Path) -> PathBuf {
    if raw == "~" {
        home.to_path_buf()
    } else if let Some(rest) = raw.strip_prefix("~/") {
        home.join(rest)
    } else {
        base.join(raw)
    }
}

/// The canonical form of `path` when it exists, else its lexically
/// normalised form below its longest existing (canonical) ancestor.
pub fn canonical_or_lexical(path: &Path) -> PathBuf {
    if let Ok(canonical) = fs::canonicalize(path) {
        return canonical;
    }
    // Relative to the current directory, as `fs::canonicalize` reads it.
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let normal = normalize_lexically(&absolute);
    let mut rest = Vec::new();
    let mut cursor = normal.as_path();
    while let Some(parent) = cursor.parent() {
        if let Some(name) = cursor.file_name() {
            rest.push(name.to_os_string());
        }
        if let Ok(mut canonical) = fs::canonicalize(parent) {
            for name in rest.iter().rev() {
                canonical.push(name);
            }
            return canonical;
        }
        cursor = parent;
    }
    normal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs_for(ws: &Path, strict_git: bool) -> RunPlanInputs {
        RunPlanInputs {
            workspaces: vec![ws.to_path_buf()],
            home: PathBuf::from("/nonexistent-home"),
            tmpdir: None,
            policy_cache: None,
            credentials: Vec::new(),
            settings: SandboxSettings {
                strict_git,
                allow: vec!["/opt/granted".into()],
                deny: vec!["/srv/never".into()],
                ..SandboxSettings::default()
            },
        }
    }

    fn plan_for(ws: &Path, strict_git: bool) -> RunPlan {
        RunPlan::build(&inputs_for(ws, strict_git))
    }

    /// Each (path, entry, standing) of `table` holds in `plan`.
    fn assert_standings(plan: &RunPlan, table: &[(PathBuf, bool, Standing)]) {
        for (path, entry, want) in table {
            assert_eq!(
                plan.standing(path, *entry, &RunAnswers::default()),
                *want,
                "{path:?}"
            );
        }
    }

    /// A home with `~/.ssh` (a key, config, known_hosts, a public key and a
    /// symlinked "config"-like name), a workspace in it, and `~` allowed.
    fn floor_home() -> (tempfile::TempDir, PathBuf, RunPlanInputs) {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().canonicalize().unwrap();
        let ssh = home.join(".ssh");
        fs::create_dir_all(&ssh).unwrap();
        fs::create_dir_all(home.join("ws")).unwrap();
        for name in [
            "id_ed25519",
            "id_ed25519.pub",
            "config",
            "known_hosts",
            "authorized_keys",
        ] {
            fs::write(ssh.join(name), "x").unwrap();
        }
        std::os::unix::fs::symlink(ssh.join("id_ed25519"), ssh.join("known_hosts2")).unwrap();
        let inputs = RunPlanInputs {
            workspaces: vec![home.join("ws")],
            home: home.clone(),
            tmpdir: None,
            policy_cache: None,
            credentials: Vec::new(),
            settings: SandboxSettings {
                allow: vec!["~".into(), "~/.ssh".into()],
                ..SandboxSettings::default()
            },
        };
        (tmp, home, inputs)
    }

    #[test]
    fn nothing_allows_a_write_beneath_the_floor() {
        let (_tmp, home, inputs) = floor_home();
        for protection in [Protection::Carve, Protection::Mount] {
            let plan = RunPlan::build_with(&inputs, protection);
            let answers = RunAnswers {
                allow: vec![home.join(".ssh"), home.clone()],
                deny: Vec::new(),
            };
            for path in [
                home.join(".ssh/authorized_keys"),
                home.join(".ssh"),
                home.join(".aws"),
                home.join(".gnupg/new/deeper"),
            ] {
                for entry in [true, false] {
                    assert_eq!(
                        plan.standing(&path, entry, &answers),
                        Standing::Floor,
                        "{path:?}"
                    );
                }
            }
            // Next to the floor, the allowed home is written as before.
            assert!(matches!(
                plan.standing(&home.join("notes.txt"), false, &answers),
                Standing::Covered | Standing::Allowed
            ));
            // No Landlock write rule reaches into the floor, existing or not.
            for rule in &plan.rules {
                for dir in [".ssh", ".aws", ".gnupg"] {
                    let floor_dir = home.join(dir);
                    assert!(
                        !floor_dir.starts_with(&rule.path)
                            || !rule.dir
                            || plan.floor_mounts.iter().any(|m| m.dir == floor_dir),
                        "{protection:?}: {rule:?} covers {floor_dir:?}"
                    );
                    assert!(!rule.path.starts_with(&floor_dir), "{rule:?}");
                }
            }
        }
    }

    #[test]
    fn the_floor_is_hidden_from_reads_but_what_ssh_needs() {
        let (_tmp, home, inputs) = floor_home();
        let plan = RunPlan::build_with(&inputs, Protection::Mount);
        let ssh = plan
            .floor_dirs
            .iter()
            .find(|f| f.path == home.join(".ssh"))
            .unwrap();
        assert!(ssh.exists && ssh.hidden);
        // Regular files only: the symlink named known_hosts2 is not kept.
        assert_eq!(ssh.readable, ["config", "id_ed25519.pub", "known_hosts"]);
        let aws = plan
            .floor_dirs
            .iter()
            .find(|f| f.path == home.join(".aws"))
            .unwrap();
        assert!(!aws.exists && !aws.hidden);
        let own = plan
            .floor_dirs
            .iter()
            .find(|f| f.path == home.join(".sandgate"))
            .unwrap();
        assert!(!own.hidden, "sandgate's own directory stays readable");
        assert_eq!(
            plan.floor_mounts,
            [FloorMount {
                dir: ssh.path.clone(),
                keep: ssh.readable.clone()
            }]
        );
        assert!(plan.read_rules.is_empty(), "the mount hides it");

        let plan = RunPlan::build_with(&inputs, Protection::Carve);
        assert!(plan.floor_mounts.is_empty());
        let reads: Vec<&Path> = plan.read_rules.iter().map(|r| r.path.as_path()).collect();
        assert!(reads.contains(&home.join("ws").as_path()), "{reads:?}");
        assert!(
            reads.contains(&home.join(".ssh/known_hosts").as_path()),
            "{reads:?}"
        );
        assert!(!reads.contains(&home.as_path()) && !reads.contains(&Path::new("/")));
        for r in &plan.read_rules {
            assert!(
                !r.path.starts_with(home.join(".ssh"))
                    || !r.dir && ssh.readable.iter().any(|n| r.path.ends_with(n)),
                "{r:?} opens the floor to reads"
            );
        }
    }

    #[test]
    fn credential_stores_are_mounted_over_or_carved_around() {
        let (_tmp, home, mut inputs) = floor_home();
        fs::create_dir_all(home.join(".kube")).unwrap();
        fs::write(home.join(".kube/config"), "TOKEN").unwrap();
        fs::write(home.join(".netrc"), "TOKEN").unwrap();
        inputs.credentials = vec![
            home.join(".netrc"),
            home.join(".kube"),
            home.join(".missing-store"),
        ];
        let plan = RunPlan::build_with(&inputs, Protection::Mount);
        assert_eq!(plan.credentials, [home.join(".netrc"), home.join(".kube")]);
        assert_eq!(plan.covered_files, [home.join(".netrc")]);
        assert!(plan
            .floor_mounts
            .iter()
            .any(|m| m.dir == home.join(".kube") && m.keep.is_empty()));
        assert!(plan.read_rules.is_empty(), "the mounts hide them");
        let plan = RunPlan::build_with(&inputs, Protection::Carve);
        assert!(plan.covered_files.is_empty());
        let reads: Vec<&Path> = plan.read_rules.iter().map(|r| r.path.as_path()).collect();
        for hidden in [home.join(".netrc"), home.join(".kube/config")] {
            assert!(!reads.iter().any(|r| hidden.starts_with(r)), "{reads:?}");
        }
        assert!(reads.contains(&home.join("ws").as_path()), "{reads:?}");
    }

    #[test]
    fn another_name_of_a_private_floor_file_in_a_workspace_is_hidden_too() {
        let (_tmp, home, inputs) = floor_home();
        let plan = RunPlan::build_with(&inputs, Protection::Mount);
        assert!(plan.floor_links.is_empty() && plan.read_rules.is_empty());
        fs::create_dir_all(home.join("ws/deep")).unwrap();
        fs::hard_link(home.join(".ssh/id_ed25519"), home.join("ws/deep/key")).unwrap();
        // A public file's other name is not a secret.
        fs::hard_link(home.join(".ssh/known_hosts"), home.join("ws/hosts")).unwrap();
        for protection in [Protection::Mount, Protection::Carve] {
            let plan = RunPlan::build_with(&inputs, protection);
            assert_eq!(plan.floor_links, [home.join("ws/deep/key")]);
            let reads: Vec<&Path> = plan.read_rules.iter().map(|r| r.path.as_path()).collect();
            assert!(
                !reads
                    .iter()
                    .any(|r| home.join("ws/deep/key").starts_with(r)),
                "{reads:?}"
            );
            assert!(
                reads.contains(&home.join("ws/hosts").as_path()),
                "{reads:?}"
            );
        }
    }

    #[test]
    fn reads_are_not_restricted_when_no_floor_directory_exists() {
        let ws = tempfile::tempdir().unwrap();
        let plan = RunPlan::build_with(&inputs_for(ws.path(), false), Protection::Carve);
        assert!(plan.read_rules.is_empty() && plan.floor_mounts.is_empty());
        assert!(plan.floor_dirs.iter().all(|f| !f.exists && !f.hidden));
    }

    #[test]
    fn the_plan_reads_the_floor_from_the_policy_crate() {
        let ws = tempfile::tempdir().unwrap();
        let plan = plan_for(ws.path(), false);
        let home = Path::new("/nonexistent-home");
        assert_eq!(plan.floor, floor::dirs(home));
        assert!(plan
            .held()
            .contains(&home.join(floor::SANDGATE_DIR).as_path()));
    }

    #[test]
    fn workspace_is_carved_around_protected_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let ws = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(ws.join(".sandgate")).unwrap();
        fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        fs::create_dir_all(ws.join("src")).unwrap();
        fs::write(ws.join("Cargo.toml"), "").unwrap();

        let plan = plan_for(&ws, true);
        let table = [
            (ws.join("src/main.rs"), false, Standing::Covered),
            (ws.join("src/new.rs"), true, Standing::Covered),
            (ws.join("Cargo.toml"), false, Standing::Covered),
            (ws.join("Cargo.toml"), true, Standing::Allowed),
            (ws.join("new.txt"), true, Standing::Allowed),
            (
                ws.join(".sandgate/sandbox.json"),
                false,
                Standing::Protected,
            ),
            (ws.join(".sandgate"), true, Standing::Protected),
            (ws.join(".git/hooks/pre-commit"), true, Standing::Protected),
            (PathBuf::from("/srv/never/x"), true, Standing::Denied),
            (PathBuf::from("/opt/granted/x"), true, Standing::Allowed),
            (PathBuf::from("/etc/passwd"), false, Standing::Outside),
        ];
        assert_standings(&plan, &table);
        assert!(!plan.rules.iter().any(|r| r.path == ws));
        assert!(!plan
            .rules
            .iter()
            .any(|r| r.path.starts_with(ws.join(".git"))));
    }

    fn mount_plan_for(ws: &Path, strict_git: bool) -> RunPlan {
        RunPlan::build_with(&inputs_for(ws, strict_git), Protection::Mount)
    }

    #[test]
    fn mount_layer_gives_a_rule_where_every_protected_entry_exists() {
        let dir = tempfile::tempdir().unwrap();
        let ws = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(ws.join(".sandgate")).unwrap();
        fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        for file in [".git/config", ".git/commondir", ".git/config.worktree"] {
            fs::write(ws.join(file), "").unwrap();
        }
        fs::create_dir_all(ws.join(".claude/commands")).unwrap();
        fs::create_dir_all(ws.join("src")).unwrap();

        let plan = mount_plan_for(&ws, false);
        assert_eq!(plan.protection, Protection::Mount);
        for held in [".sandgate", ".git/hooks", ".git/config", ".claude/commands"] {
            assert!(plan.mounted.contains(&ws.join(held)), "{held}");
        }
        let rule = |p: &Path| {
            plan.rules.contains(&Rule {
                path: p.to_path_buf(),
                dir: true,
            })
        };
        // `.git` holds all its protected entries by binds: it keeps a rule.
        assert!(rule(&ws.join(".git")));
        assert!(rule(&ws.join("src")));
        // The root misses `.mcp.json` and the rest, `.claude` its `agents`:
        // both are carved, whatever the mount layer holds.
        assert!(!rule(&ws));
        assert!(!rule(&ws.join(".claude")));
        assert!(plan.carved().any(|c| c == ws));
        // What carving would have covered, for the supervisor's shortcut.
        assert!(plan.carving_covers(&ws.join("src"), false));
        assert!(!plan.carving_covers(&ws, false));
        assert!(!plan.carving_covers(&ws.join("f1"), true));
        let table = [
            (ws.join("f1"), true, Standing::Allowed),
            (ws.join(".claude/notes.md"), true, Standing::Allowed),
            (ws.join(".claude/settings.json"), true, Standing::Protected),
            (ws.join(".git/index.lock"), true, Standing::Covered),
            (ws.join("src/new.rs"), true, Standing::Covered),
            (ws.join(".mcp.json"), true, Standing::Protected),
            (ws.join(".claude/agents/x.md"), true, Standing::Protected),
            (
                ws.join(".sandgate/sandbox.json"),
                false,
                Standing::Protected,
            ),
            (ws.join(".sandgate"), true, Standing::Protected),
            (ws.join(".git/hooks/pre-commit"), true, Standing::Protected),
        ];
        assert_standings(&plan, &table);

        // With every protected name of the root present, the root has a rule.
        for entry in sandgate_policy::protected::PROTECTED {
            let path = ws.join(entry.path);
            if fs::symlink_metadata(&path).is_err() {
                fs::create_dir_all(&path).unwrap();
            }
        }
        let full = mount_plan_for(&ws, false);
        assert!(full.rules.contains(&Rule {
            path: ws.clone(),
            dir: true
        }));
        assert_eq!(
            full.standing(&ws.join("f1"), true, &RunAnswers::default()),
            Standing::Covered
        );
        assert!(
            !full.guarded().iter().any(|g| g.starts_with(&ws)),
            "{:?}",
            full.guarded()
        );
        // The same workspace carved: a new entry in the root is the supervisor's.
        let carved = plan_for(&ws, false);
        assert_eq!(
            carved.standing(&ws.join("f1"), true, &RunAnswers::default()),
            Standing::Allowed
        );
        assert!(carved.mounted.is_empty());
    }

    #[test]
    fn mount_layer_still_carves_around_missing_protected_paths() {
        let dir = tempfile::tempdir().unwrap();
        let ws = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(ws.join(".sandgate")).unwrap();
        fs::create_dir_all(ws.join("src")).unwrap();

        // strictGit without `.git`: the root stays carved around it.
        let plan = mount_plan_for(&ws, true);
        assert_eq!(plan.mounted, vec![ws.join(".sandgate")]);
        assert!(!plan.rules.iter().any(|r| r.path == ws));
        assert_eq!(
            plan.standing(&ws.join(".git"), true, &RunAnswers::default()),
            Standing::Protected
        );
        assert_eq!(
            plan.standing(&ws.join("f1"), true, &RunAnswers::default()),
            Standing::Allowed
        );
        // `.sandgate` is left to the mount layer: like the root's other
        // children it gets a rule (the read-only bind is what holds it).
        assert!(plan.rules.iter().any(|r| r.path == ws.join("src")));
        assert!(plan.rules.iter().any(|r| r.path == ws.join(".sandgate")));

        // Without strictGit the root is still carved: `.mcp.json` and the
        // others are missing.
        let lax = mount_plan_for(&ws, false);
        assert!(!lax.rules.iter().any(|r| r.path == ws));
        assert!(lax.guarded().contains(&ws.join(".mcp.json").as_path()));
    }

    #[cfg(unix)]
    #[test]
    fn mount_layer_never_holds_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let ws = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(ws.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(ws.join("elsewhere"), ws.join(".sandgate")).unwrap();
        let plan = mount_plan_for(&ws, false);
        assert!(plan.mounted.is_empty());
        assert!(!plan.rules.iter().any(|r| r.path == ws));
    }

    #[test]
    fn missing_git_is_protected_as_a_whole_only_when_strict() {
        let dir = tempfile::tempdir().unwrap();
        let ws = fs::canonicalize(dir.path()).unwrap();
        let strict = plan_for(&ws, true);
        assert_eq!(
            strict.standing(&ws.join(".git"), true, &RunAnswers::default()),
            Standing::Protected
        );
        // Without strictGit only git's hooks and config are protected (also
        // before they exist); objects, refs and the index stay writable.
        let lax = plan_for(&ws, false);
        assert_ne!(
            lax.standing(&ws.join(".git/objects/ab"), true, &RunAnswers::default()),
            Standing::Protected
        );
        assert_ne!(
            lax.standing(&ws.join(".git/index.lock"), true, &RunAnswers::default()),
            Standing::Protected
        );
        for protected in [
            ".git/config",
            ".git/hooks/pre-commit",
            ".mcp.json",
            ".vscode/tasks.json",
        ] {
            assert_eq!(
                lax.standing(&ws.join(protected), true, &RunAnswers::default()),
                Standing::Protected,
                "{protected}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_protected_path_reached_through_a_link_is_held_as_written_too() {
        let dir = tempfile::tempdir().unwrap();
        let ws = fs::canonicalize(dir.path()).unwrap().join("ws");
        let repo = ws.parent().unwrap().join("repo.git");
        fs::create_dir_all(repo.join("hooks")).unwrap();
        fs::create_dir_all(&ws).unwrap();
        std::os::unix::fs::symlink(&repo, ws.join(".git")).unwrap();
        let plan = plan_for(&ws, false);
        // The link may be removed and a `.git` directory made in its place:
        // its config and hooks are still refused.
        for name in [".git/config", ".git/hooks/pre-commit"] {
            assert_eq!(
                plan.standing(&ws.join(name), true, &RunAnswers::default()),
                Standing::Protected,
                "{name}"
            );
        }
    }

    #[test]
    fn the_directories_above_protected_paths_hold_them() {
        let dir = tempfile::tempdir().unwrap();
        let ws = fs::canonicalize(dir.path()).unwrap();
        let plan = plan_for(&ws, false);
        for above in [".git", ".claude"] {
            assert!(plan.holds_protected(&ws.join(above)), "{above}");
        }
        assert!(plan.holds_protected(&ws));
        // The protected path itself is protected, not a holder; its
        // neighbours hold nothing.
        for plain in [
            ".git/hooks",
            ".sandgate",
            ".git/objects",
            ".claude/notes.md",
            "src",
        ] {
            assert!(!plan.holds_protected(&ws.join(plain)), "{plain}");
        }
    }

    #[test]
    fn session_grants_widen_and_narrow() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan_for(dir.path(), false);
        let answers = RunAnswers {
            allow: vec![PathBuf::from("/etc/app")],
            deny: vec![PathBuf::from("/etc/other")],
        };
        let p = Path::new("/etc/app/x.conf");
        assert_eq!(plan.standing(p, true, &answers), Standing::Allowed);
        let q = Path::new("/etc/other/y");
        assert_eq!(plan.standing(q, true, &answers), Standing::Denied);
    }

    #[test]
    fn normalize_collapses_dots() {
        assert_eq!(
            normalize_lexically(Path::new("/a/./b/../c")),
            PathBuf::from("/a/c")
        );
    }

    #[test]
    fn a_state_files_siblings_are_allowed_and_start_up_noise_is_unasked() {
        // A state file that exists is one, wherever it is.
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().canonicalize().unwrap();
        fs::write(real.join(".toolrc.json"), "{}").unwrap();
        fs::create_dir_all(real.join(".tooldir")).unwrap();
        let plan = RunPlan::build(&RunPlanInputs {
            workspaces: vec![real.join("ws")],
            home: real.clone(),
            tmpdir: None,
            policy_cache: None,
            credentials: Vec::new(),
            settings: SandboxSettings {
                state_dirs: vec!["~/.toolrc.json".into(), "~/.tooldir".into()],
                ..SandboxSettings::default()
            },
        });
        assert!(plan.state_files.contains(&real.join(".toolrc.json")));
        assert!(!plan.state_files.contains(&real.join(".tooldir")));
        // Judged in a home outside every temp tree.
        let home = PathBuf::from("/nonexistent-home");
        let ws = home.join("ws");
        let inputs = RunPlanInputs {
            workspaces: vec![ws.clone()],
            home: home.clone(),
            tmpdir: None,
            policy_cache: Some(home.join(".cache/sandgate")),
            credentials: Vec::new(),
            settings: SandboxSettings {
                state_dirs: vec!["~/.tooldir".into()],
                ..SandboxSettings::default()
            },
        };
        let plan = RunPlan::build(&inputs);
        let h = |p: &str| home.join(p);
        assert_standings(
            &plan,
            &[
                (h(".claude.json.lock"), true, Standing::Allowed),
                (
                    h(".claude.json.tmp.812.9d00dde67d98"),
                    true,
                    Standing::Allowed,
                ),
                (h(".claude.json.backup"), true, Standing::Outside),
                (h(".bashrc.lock"), true, Standing::Outside),
                (h(".tooldir.lock"), true, Standing::Outside),
                (
                    PathBuf::from("/proc/pressure/memory"),
                    false,
                    Standing::Unasked(Unasked::Kernel),
                ),
                (
                    h(".local/share/applications"),
                    true,
                    Standing::Unasked(Unasked::Desktop),
                ),
                (
                    PathBuf::from("/proc/4242/mem"),
                    false,
                    Standing::Unasked(Unasked::Memory),
                ),
                (
                    PathBuf::from("/proc/4242/task/4243/mem"),
                    false,
                    Standing::Unasked(Unasked::Memory),
                ),
                (h(".local/share/other"), true, Standing::Outside),
            ],
        );
        assert!(plan.is_sandgate_own(&h(".sandgate/audit.jsonl")));
        assert!(plan.is_sandgate_own(&h(".sandgate/audit.jsonl.lock")));
        assert!(plan.is_sandgate_own(&h(".cache/sandgate/x.cache")));
        assert!(!plan.is_sandgate_own(&h(".sandgate/permissions.yaml")));
    }
}
