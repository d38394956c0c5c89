//! The one plan type: what a confined tree may read, write and reach,
//! whichever scope builds it.
//!
//! [`Plan`] describes it for both scopes: one command under exec isolation
//! or MCP `exec_run` (built here, by [`build`]) and a whole agent under
//! `sandgate run` (built by `sandgate-confine`'s `RunPlanExt::build`). Its
//! fields are what both judge by and enforce: the readable and writable
//! trees and files, the directories neither readable nor writable (the
//! floor and the deny rules that name a directory), the protected paths
//! inside the writable trees, the UNIX sockets that may be reached by path,
//! the network, and whether a write outside the writable trees is asked
//! about ([`Asking`]). What only one scope has is the plan's `scope`
//! ([`Plan::scope`], reached through `Deref`): nothing for exec isolation;
//! for `sandgate run` its mount layer, Landlock rules, preload fast path,
//! `sandbox.json` grants and floor details (`sandgate_confine::RunScope`).
//!
//! For exec isolation, [`build`] is a pure function of the merged isolation
//! settings, the path deny rules and the environment (working directory,
//! home, temp dir). It does not touch the file system; [`resolve_links`] is the separate step that
//! does, right before a mechanism applies the plan: it resolves symlinks of
//! the paths that exist, denies each `paths.deny` entry that names one
//! existing file like a directory, and adds the floor's other names (hard
//! links, bind mounts, see [`crate::floorlinks`]).

use std::path::{Path, PathBuf};

use sandgate_policy::canon::normalize_lexically;
use sandgate_policy::config::IsolationConfig;
use sandgate_policy::floor;
use serde::Serialize;

/// Where the plan's inputs come from, besides the isolation settings.
#[derive(Debug, Clone)]
pub struct PlanInput<'a> {
    /// The merged `permissions.exec.isolation` block.
    pub config: &'a IsolationConfig,
    /// The merged `permissions.paths.deny` patterns, as written.
    pub deny_patterns: &'a [String],
    /// The working directory that relative paths resolve against.
    pub cwd: &'a Path,
    /// The home directory that `~` expands to.
    pub home: &'a Path,
    /// The temp dir, made writable by `allow_tmp: true`.
    pub temp_dir: &'a Path,
    /// Other homes whose floor directories are denied too (the account's
    /// own home when `home` is another directory).
    pub other_homes: &'a [PathBuf],
}

/// Why a directory is denied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "pattern")]
pub enum DenySource {
    /// The built-in floor ([`sandgate_policy::floor`]).
    Floor,
    /// A directory-like `paths.deny` pattern.
    PathsDeny(String),
    /// Another name of the floor file or directory named (a hard link made
    /// before the command, a bind mount): see [`crate::floorlinks`].
    FloorAlias(String),
}

/// A directory the command may neither read nor write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeniedDir {
    /// The absolute, lexically normalized directory.
    pub path: PathBuf,
    /// The rule it comes from.
    pub source: DenySource,
    /// It is a file, not a directory (another name of a floor file).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub file: bool,
}

/// Whether a write the plan does not allow is put to a human.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Asking {
    /// Never: it fails (exec isolation, MCP `exec_run`).
    Never,
    /// A write outside the writable trees that nothing else refuses is
    /// asked about, through [`sandgate_policy::ask`] (`sandgate run`).
    Outside,
}

/// What a confined tree may touch, for either scope; `X` is what only one
/// scope's plan holds (`()` for exec isolation). Pure data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan<X = ()> {
    /// The writable working directory (absolute, lexically normalized;
    /// under `sandgate run`, the first workspace root, canonical).
    pub workdir: PathBuf,
    /// Trees readable by the command, except the denied directories.
    pub readable: Vec<PathBuf>,
    /// Trees writable by the command (the workdir, and the temp dir with
    /// `allow_tmp`; under `sandgate run`, the roots of the allowed set).
    pub writable: Vec<PathBuf>,
    /// Single files writable by the command (`/dev/null`, `/dev/tty`).
    pub writable_files: Vec<PathBuf>,
    /// Directories neither readable nor writable; none lies inside another.
    pub denied: Vec<DeniedDir>,
    /// `paths.deny` patterns that name no directory: the gate checks them;
    /// isolation hides those that name one existing file (see
    /// [`resolve_links`]).
    pub gate_only: Vec<String>,
    /// The `gate_only` patterns with no pattern character, expanded: each
    /// that is a regular file when the plan is resolved is denied like a
    /// directory (a credential store such as `~/.netrc`).
    #[serde(skip)]
    pub exact_files: Vec<(PathBuf, String)>,
    /// Whether the command may open sockets other than `AF_UNIX` (always
    /// under `sandgate run`; where `permissions.network` lists hosts, its
    /// network namespace and filtering proxy hold on top, in either scope).
    pub network: bool,
    /// Whether `no_new_privs` is set before the command starts.
    pub no_new_privs: bool,
    /// Whether the command starts even when the plan cannot be fully enforced.
    pub best_effort: bool,
    /// Paths inside the writable trees that stay read-only
    /// ([`sandgate_policy::protected`]), with whether each exists.
    pub protected: Vec<Protected>,
    /// The UNIX sockets the command may `connect()` to by path
    /// (`unix_sockets`; absolute, lexically normalized). Empty: the command
    /// cannot create a UNIX socket at all (socket pairs still work; under
    /// `sandgate run`, the program's own listeners stay reachable).
    pub unix_sockets: Vec<PathBuf>,
    /// Whether a write the plan does not allow is asked about.
    #[serde(skip)]
    pub asking: Asking,
    /// What only the scope that built the plan holds.
    #[serde(flatten)]
    pub scope: X,
}

impl<X> std::ops::Deref for Plan<X> {
    type Target = X;

    /// The scope's own part: its fields and methods read as the plan's.
    fn deref(&self) -> &X {
        &self.scope
    }
}

/// A protected path of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Protected {
    /// The absolute path (symlinks resolved once it exists).
    pub path: PathBuf,
    /// Why it is protected.
    pub why: String,
    /// Whether it existed when the plan was made (set by [`resolve_links`];
    /// under `sandgate run`, whether it is held as present rather than
    /// guarded as missing, carved around).
    pub exists: bool,
    /// Protected only where it is a regular file (a worktree's `.git`):
    /// [`resolve_links`] leaves it out otherwise.
    #[serde(skip)]
    pub only_file: bool,
}

/// A plan that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The floor could be reached under another name.
    #[error(transparent)]
    FloorReach(#[from] crate::floorlinks::FloorReach),
    /// The workdir lies inside a denied directory.
    #[error(
        "isolation workdir `{workdir}` lies inside the denied directory `{denied}`; choose a workdir outside it"
    )]
    WorkdirDenied {
        /// The resolved workdir.
        workdir: String,
        /// The denied directory that contains it.
        denied: String,
    },
}

impl Plan {
    /// Whether `path` (absolute, normalized) lies in or equals a denied directory.
    pub fn is_denied(&self, path: &Path) -> bool {
        self.denied.iter().any(|d| path.starts_with(&d.path))
    }
}

/// Builds the plan. Pure: reads nothing from the file system or the environment.
pub fn build(input: &PlanInput<'_>) -> Result<Plan, PlanError> {
    let config = input.config;
    let workdir = expand_path(config.workdir.as_deref().unwrap_or("./"), input);

    let mut denied: Vec<DeniedDir> = std::iter::once(input.home)
        .chain(input.other_homes.iter().map(PathBuf::as_path))
        .flat_map(floor::dirs)
        .collect::<Vec<_>>()
        .iter()
        .map(|d| DeniedDir {
            path: normalize_lexically(d),
            source: DenySource::Floor,
            file: false,
        })
        .collect();
    let mut gate_only = Vec::new();
    let mut exact_files = Vec::new();
    for pattern in input.deny_patterns {
        match directory_of(pattern) {
            Some(dir) => denied.push(DeniedDir {
                path: expand_path(dir, input),
                source: DenySource::PathsDeny(pattern.clone()),
                file: false,
            }),
            None => {
                if let Some(exact) = exact_path_of(pattern) {
                    exact_files.push((expand_path(exact, input), pattern.clone()));
                }
                gate_only.push(pattern.clone());
            }
        }
    }
    let denied = outermost(denied);

    if let Some(d) = denied.iter().find(|d| workdir.starts_with(&d.path)) {
        return Err(PlanError::WorkdirDenied {
            workdir: workdir.display().to_string(),
            denied: d.path.display().to_string(),
        });
    }

    let mut writable = vec![workdir.clone()];
    let temp_dir = normalize_lexically(input.temp_dir);
    if config.allow_tmp.unwrap_or(false)
        && !writable.iter().any(|w| temp_dir.starts_with(w))
        && !denied.iter().any(|d| temp_dir.starts_with(&d.path))
    {
        writable.push(temp_dir);
    }

    let extra: Vec<(String, String)> = config
        .protect
        .iter()
        .flatten()
        .map(|p| (p.clone(), "permissions.exec.isolation.protect".to_string()))
        .collect();
    let protected = sandgate_policy::protected::paths(
        std::slice::from_ref(&workdir),
        &normalize_lexically(input.home),
        &extra,
    )
    .into_iter()
    .filter(|p| {
        writable
            .iter()
            .any(|w| p.path.starts_with(w) && p.path != *w)
    })
    .filter(|p| !denied.iter().any(|d| p.path.starts_with(&d.path)))
    .map(|p| Protected {
        path: p.path,
        why: p.why,
        exists: false,
        only_file: p.only_file,
    })
    .collect();

    let mut unix_sockets: Vec<PathBuf> = config
        .unix_sockets
        .iter()
        .flatten()
        .map(|p| expand_path(p, input))
        .collect();
    unix_sockets.sort();
    unix_sockets.dedup();

    Ok(Plan {
        workdir,
        protected,
        unix_sockets,
        readable: vec![PathBuf::from("/")],
        writable,
        writable_files: vec![PathBuf::from("/dev/null"), PathBuf::from("/dev/tty")],
        denied,
        gate_only,
        exact_files,
        network: config.network.unwrap_or(false),
        no_new_privs: true,
        best_effort: config.best_effort.unwrap_or(false),
        asking: Asking::Never,
        scope: (),
    })
}

/// Why sandgate's own executable is protected.
pub const SELF_WHY: &str =
    "sandgate itself: the agents' hooks and `sandgate run` start it, outside any sandbox";

/// Whether this process is sandgate itself (see [`protect_own_executable`]).
static OWN_EXECUTABLE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Called by the `sandgate` binary when it starts: from then on its own
/// executable is one of the protected paths ([`own_executable`]). A program
/// that only links this crate (a test) is not sandgate, and its executable
/// is nobody's hook.
pub fn protect_own_executable() {
    OWN_EXECUTABLE.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// sandgate's own executable, as a protected path, once the binary said it
/// is sandgate: where it lies in a writable tree (a build in the project,
/// `target/release/sandgate`), a program it confines could replace it, and
/// the next hook would run that unconfined.
pub fn own_executable() -> Option<sandgate_policy::protected::ProtectedPath> {
    if !OWN_EXECUTABLE.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let path = std::env::current_exe().ok()?;
    Some(sandgate_policy::protected::ProtectedPath {
        path,
        why: SELF_WHY.to_string(),
        only_file: false,
    })
}

/// Resolves the symlinks of every plan path that exists, so that mechanisms
/// working on paths (not inodes) see where an access really lands. A denied
/// directory reached through a symlink is denied under both names.
///
/// Fails when the workdir turns out to lie in a denied directory.
pub fn resolve_links(plan: &Plan) -> Result<Plan, PlanError> {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut denied = Vec::new();
    for d in &plan.denied {
        let target = real(&d.path);
        if target != d.path {
            denied.push(DeniedDir {
                path: target,
                source: d.source.clone(),
                file: d.file,
            });
        }
        denied.push(d.clone());
    }
    // A deny rule naming one existing file (`~/.netrc`): hidden like a
    // denied directory, under its real name and as written.
    for (path, pattern) in &plan.exact_files {
        if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        for name in [real(path), path.clone()] {
            denied.push(DeniedDir {
                path: name,
                source: DenySource::PathsDeny(pattern.clone()),
                file: true,
            });
        }
    }
    // The floor under other names, found where the command could reach
    // them: each is denied like the floor.
    let floor_dirs: Vec<PathBuf> = plan
        .denied
        .iter()
        .filter(|d| d.source == DenySource::Floor)
        .map(|d| real(&d.path))
        .collect();
    let inodes = floor::FloorInodes::collect(&floor_dirs);
    let writable: Vec<PathBuf> = plan.writable.iter().map(|p| real(p)).collect();
    for alias in crate::floorlinks::aliases(&inodes, &writable)? {
        denied.push(DeniedDir {
            path: alias.path,
            source: DenySource::FloorAlias(alias.floor.display().to_string()),
            file: !alias.dir,
        });
    }
    // Other names of the files a deny rule names (a hard link to `~/.netrc`
    // made before): each is denied like the file.
    let files: Vec<(PathBuf, &String)> = plan
        .exact_files
        .iter()
        .filter(|(p, _)| std::fs::metadata(p).is_ok_and(|m| m.is_file()))
        .map(|(p, pattern)| (real(p), pattern))
        .collect();
    let paths: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
    let inodes = floor::FloorInodes::of_files(&paths);
    for alias in crate::floorlinks::aliases(&inodes, &writable)? {
        if let Some((_, pattern)) = files.iter().find(|(p, _)| *p == alias.floor) {
            denied.push(DeniedDir {
                path: alias.path,
                source: DenySource::PathsDeny((*pattern).clone()),
                file: true,
            });
        }
    }
    let named = crate::repository::protected_entries(&plan.workdir)
        .into_iter()
        .chain(own_executable())
        .filter(|named| {
            !plan
                .protected
                .iter()
                .any(|p| !p.only_file && named.path.starts_with(&p.path))
        })
        .map(|named| Protected {
            path: named.path,
            why: named.why,
            exists: false,
            only_file: named.only_file,
        })
        .collect::<Vec<_>>();
    let protected = plan
        .protected
        .iter()
        .chain(&named)
        .flat_map(|p| match std::fs::symlink_metadata(&p.path) {
            Ok(meta) if p.only_file && !meta.is_file() => vec![],
            Ok(_) => {
                let held = Protected {
                    path: real(&p.path),
                    exists: true,
                    ..p.clone()
                };
                if held.path == p.path {
                    vec![held]
                } else {
                    // Reached through a symbolic link (`.git` linked
                    // elsewhere): the name as written is held too, as a
                    // missing one, since the link may go and a directory of
                    // the command's take its place.
                    vec![held, p.clone()]
                }
            }
            Err(_) if p.only_file => vec![],
            Err(_) => vec![p.clone()],
        })
        .collect();
    let resolved = Plan {
        workdir: real(&plan.workdir),
        protected,
        writable: plan.writable.iter().map(|p| real(p)).collect(),
        denied: outermost(denied),
        ..plan.clone()
    };
    if let Some(d) = resolved
        .denied
        .iter()
        .find(|d| resolved.workdir.starts_with(&d.path))
    {
        return Err(PlanError::WorkdirDenied {
            workdir: plan.workdir.display().to_string(),
            denied: d.path.display().to_string(),
        });
    }
    Ok(resolved)
}

/// The directory a deny pattern covers as a whole, if it is directory-like:
/// `DIR/**`, `DIR/**/*` or `DIR/`, with no glob metacharacter in `DIR`.
pub fn directory_of(pattern: &str) -> Option<&str> {
    let pattern = pattern.trim();
    let dir = pattern
        .strip_suffix("/**/*")
        .or_else(|| pattern.strip_suffix("/**"))
        .or_else(|| pattern.strip_suffix('/'))?;
    let dir = if dir.is_empty() { "/" } else { dir };
    if dir.contains(['*', '?', '[', ']', '{', '}']) || dir.contains('\\') {
        return None;
    }
    Some(dir)
}

/// The path a deny pattern names when it has no pattern character and
/// does not end in `/`: one file or directory.
pub fn exact_path_of(pattern: &str) -> Option<&str> {
    let pattern = pattern.trim();
    let plain = !pattern.is_empty()
        && !pattern.ends_with('/')
        && !pattern.contains(['*', '?', '[', ']', '{', '}', '\\']);
    plain.then_some(pattern)
}

/// `~` expanded, made absolute against the CWD, `.` and `..` collapsed.
fn expand_path(path: &str, input: &PlanInput<'_>) -> PathBuf {
    let path = path.trim();
    let expanded = if path == "~" {
        input.home.to_path_buf()
    } else if let Some(rest) = path.strip_prefix("~/") {
        input.home.join(rest)
    } else {
        input.cwd.join(path)
    };
    normalize_lexically(&expanded)
}

/// Sorted, deduplicated, and with every directory inside another one dropped.
fn outermost(mut dirs: Vec<DeniedDir>) -> Vec<DeniedDir> {
    dirs.sort_by(|a, b| a.path.cmp(&b.path));
    let mut kept: Vec<DeniedDir> = Vec::new();
    for d in dirs {
        if !kept.iter().any(|k| d.path.starts_with(&k.path)) {
            kept.push(d);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(workdir: Option<&str>) -> IsolationConfig {
        IsolationConfig {
            workdir: workdir.map(str::to_string),
            ..IsolationConfig::default()
        }
    }

    fn plan_with(config: &IsolationConfig, deny: &[&str]) -> Result<Plan, PlanError> {
        let deny: Vec<String> = deny.iter().map(|s| s.to_string()).collect();
        build(&PlanInput {
            config,
            deny_patterns: &deny,
            cwd: Path::new("/home/ann/proj"),
            home: Path::new("/home/ann"),
            temp_dir: Path::new("/tmp"),
            other_homes: &[],
        })
    }

    fn denied_paths(plan: &Plan) -> Vec<&str> {
        plan.denied
            .iter()
            .map(|d| d.path.to_str().unwrap_or("?"))
            .collect()
    }

    #[test]
    fn defaults_write_only_the_cwd_and_deny_the_floor() {
        let plan = plan_with(&config(None), &[]).unwrap();
        assert_eq!(plan.workdir, Path::new("/home/ann/proj"));
        assert_eq!(plan.writable, vec![PathBuf::from("/home/ann/proj")]);
        assert_eq!(
            plan.writable_files,
            vec![PathBuf::from("/dev/null"), PathBuf::from("/dev/tty")]
        );
        assert_eq!(plan.readable, vec![PathBuf::from("/")]);
        assert_eq!(
            denied_paths(&plan),
            [
                "/home/ann/.aws",
                "/home/ann/.gnupg",
                "/home/ann/.sandgate",
                "/home/ann/.ssh"
            ]
        );
        assert!(plan.denied.iter().all(|d| d.source == DenySource::Floor));
        assert!(!plan.network);
        assert!(plan.no_new_privs);
        assert!(!plan.best_effort);
    }

    #[test]
    fn workdir_resolves_tilde_relative_and_dots() {
        let cases = [
            ("./", "/home/ann/proj"),
            ("", "/home/ann/proj"),
            ("build/../out/.", "/home/ann/proj/out"),
            ("~/scratch", "/home/ann/scratch"),
            ("~", "/home/ann"),
            ("/srv/data/", "/srv/data"),
            ("../../../..", "/"),
        ];
        for (workdir, expected) in cases {
            let plan = plan_with(&config(Some(workdir)), &[]).unwrap();
            assert_eq!(plan.workdir, Path::new(expected), "workdir `{workdir}`");
        }
    }

    #[test]
    fn directory_like_deny_patterns_become_denied_dirs() {
        let plan = plan_with(
            &config(None),
            &[
                "/etc/**",
                "~/secrets/**/*",
                "./private/",
                "**/*.pem",
                "/var/*/log/**",
                "/etc/shadow",
            ],
        )
        .unwrap();
        let paths = denied_paths(&plan);
        for expected in ["/etc", "/home/ann/secrets", "/home/ann/proj/private"] {
            assert!(paths.contains(&expected), "{expected} in {paths:?}");
        }
        assert_eq!(plan.gate_only, ["**/*.pem", "/var/*/log/**", "/etc/shadow"]);
        let etc = plan.denied.iter().find(|d| d.path == Path::new("/etc"));
        assert_eq!(
            etc.map(|d| &d.source),
            Some(&DenySource::PathsDeny("/etc/**".into()))
        );
    }

    #[test]
    fn nested_denied_dirs_keep_only_the_outermost() {
        let plan = plan_with(&config(None), &["~/.ssh/keys/**", "/opt/**", "/opt/a/**"]).unwrap();
        let paths = denied_paths(&plan);
        assert!(!paths.contains(&"/home/ann/.ssh/keys"));
        assert!(!paths.contains(&"/opt/a"));
        assert!(paths.contains(&"/opt"));
    }

    #[test]
    fn a_workdir_inside_a_denied_dir_is_an_error() {
        let err = plan_with(&config(Some("~/.ssh")), &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "isolation workdir `/home/ann/.ssh` lies inside the denied directory `/home/ann/.ssh`; choose a workdir outside it"
        );
        assert!(plan_with(&config(Some("/srv/x/y")), &["/srv/**"]).is_err());
        // A sibling with a common name prefix is not inside.
        assert!(plan_with(&config(Some("/srv2")), &["/srv/**"]).is_ok());
    }

    #[test]
    fn allow_tmp_network_and_best_effort_follow_the_config() {
        let cfg = IsolationConfig {
            allow_tmp: Some(true),
            network: Some(true),
            best_effort: Some(true),
            ..IsolationConfig::default()
        };
        let plan = plan_with(&cfg, &[]).unwrap();
        assert_eq!(
            plan.writable,
            vec![PathBuf::from("/home/ann/proj"), PathBuf::from("/tmp")]
        );
        assert!(plan.network);
        assert!(plan.best_effort);
        // A temp dir that is denied is not made writable.
        let plan = plan_with(&cfg, &["/tmp/**"]).unwrap();
        assert_eq!(plan.writable, vec![PathBuf::from("/home/ann/proj")]);
    }

    #[test]
    fn is_denied_respects_component_boundaries() {
        let plan = plan_with(&config(None), &[]).unwrap();
        assert!(plan.is_denied(Path::new("/home/ann/.ssh")));
        assert!(plan.is_denied(Path::new("/home/ann/.ssh/id_ed25519")));
        assert!(!plan.is_denied(Path::new("/home/ann/.sshrc")));
    }

    #[test]
    fn directory_of_table() {
        let cases = [
            ("/etc/**", Some("/etc")),
            ("/etc/**/*", Some("/etc")),
            ("/etc/", Some("/etc")),
            ("/**", Some("/")),
            ("  ~/x/** ", Some("~/x")),
            ("/etc", None),
            ("/e?c/**", None),
            ("/a/{b,c}/**", None),
            ("/a/[bc]/**", None),
            ("**", None),
        ];
        for (pattern, expected) in cases {
            assert_eq!(directory_of(pattern), expected, "pattern `{pattern}`");
        }
    }
}
