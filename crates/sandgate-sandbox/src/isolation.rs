//! The one entry point callers use: settings in, a ready-to-spawn command out.

use std::fmt;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use sandgate_policy::config::{IsolationConfig, IsolationMode};
use serde::Serialize;

use crate::custom::Template;
use crate::enforcement::{Enforcement, EnforcementLevel};
use crate::landlock::{Grants, RealTree};
use crate::plan::{self, Plan, PlanError, PlanInput};
use crate::supervise::{self, Supervision};
use crate::supervisor::connect::Sockets;
use crate::{bwrap, harden, landlock, seatbelt, seccomp, sys};

/// The shell every mode runs the command with.
pub const SHELL: &str = "/bin/sh";

/// The environment a plan is built against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// The working directory: relative paths resolve against it and the command starts in it.
    pub cwd: PathBuf,
    /// The home directory `~` expands to.
    pub home: PathBuf,
    /// The temp dir (`allow_tmp`).
    pub temp_dir: PathBuf,
    /// Other homes whose floor is denied too: the account's own home in the
    /// user database, when `home` is another directory
    /// ([`sandgate_policy::floor::homes`]).
    pub other_homes: Vec<PathBuf>,
}

impl Environment {
    /// An environment with the process temp dir (`$TMPDIR`, else `/tmp`)
    /// and the account's own home when `home` is another directory.
    pub fn new(cwd: PathBuf, home: PathBuf) -> Environment {
        let other_homes = sandgate_policy::floor::homes(&home).split_off(1);
        Environment {
            cwd,
            home,
            temp_dir: std::env::temp_dir(),
            other_homes,
        }
    }
}

/// Something the caller should log: an error that turned isolation off, or a
/// warning about what `best_effort` lets through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Notice {
    /// `error` or `warning`.
    pub level: NoticeLevel,
    /// The message, lowercase, without a final period.
    pub message: String,
}

/// How serious a [`Notice`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NoticeLevel {
    /// Something is misconfigured; isolation is off because of it.
    Error,
    /// The command runs with less isolation than configured.
    Warning,
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            NoticeLevel::Error => "error",
            NoticeLevel::Warning => "warning",
        };
        write!(f, "{level}: {}", self.message)
    }
}

/// Why an isolated command cannot be prepared or started.
#[derive(Debug, thiserror::Error)]
pub enum IsolationError {
    /// The plan contradicts itself.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The `custom` template cannot be used: nothing runs, since running the
    /// command unconfined is not what the policy asked for.
    #[error("{0}; the command does not run (fix the template, or choose another isolation mode)")]
    Template(String),
    /// The workdir is not an existing directory.
    #[error("isolation workdir `{0}` is not an existing directory")]
    Workdir(String),
    /// The kernel cannot enforce the whole plan and `best_effort` is off.
    #[error(
        "isolation mode `landlock` cannot be fully enforced on this machine: {}; set `best_effort: true` to run anyway",
        .missing.join("; ")
    )]
    NotFullyEnforced {
        /// What is missing.
        missing: Vec<String>,
    },
    /// `bwrap` is not installed.
    #[error(
        "isolation mode `bwrap` needs `bwrap` on PATH where only root can change it; install the `{}` package",
        bwrap::PACKAGE
    )]
    BwrapMissing,
    /// `sandbox-exec` is not available.
    #[error(
        "isolation mode `seatbelt` needs `{}`, which exists only on macOS",
        seatbelt::SANDBOX_EXEC
    )]
    SeatbeltUnavailable,
    /// The Landlock ruleset could not be built.
    #[error(transparent)]
    Landlock(#[from] landlock::LandlockError),
    /// The seccomp filter could not be built.
    #[error(transparent)]
    Seccomp(#[from] seccomp::SeccompError),
    /// The seccomp filter could not be handed to `bwrap`.
    #[error("cannot pass the seccomp filter to `bwrap`: {0}")]
    Filter(std::io::Error),
    /// The supervisor of `unix_sockets` could not be prepared.
    #[error("cannot prepare the supervisor of `unix_sockets`: {0}")]
    Supervise(std::io::Error),
    /// The network namespace of a filtered network could not be prepared.
    #[error("cannot prepare the network namespace for `permissions.network`: {0}")]
    Network(std::io::Error),
}

/// A command ready to spawn, and the supervisor that must start beside it.
#[derive(Debug)]
pub struct Prepared {
    /// The command; the caller sets stdio and environment, then spawns it.
    pub command: Command,
    /// With `unix_sockets` listed (`landlock` and `bwrap`): attach it right
    /// after a successful spawn, or every `connect()` of the command fails.
    pub supervision: Option<Supervision>,
    /// With the network filtered by host ([`Isolation::filter_network`]):
    /// where the proxy and resolver sockets of the command's network
    /// namespace arrive; take them right after a successful spawn and serve
    /// them, or the command reaches no host at all. (Its own TCP connects
    /// go to [`Prepared::supervision`], for a route given to
    /// [`Supervision::route_network`].)
    pub network: Option<crate::netns::Outside>,
}

#[derive(Debug, Clone)]
enum Mechanism {
    None,
    Custom(Template),
    /// `mounts`: whether the read-only mount namespace is made (user
    /// namespaces are available).
    Landlock {
        abi: u32,
        grants: Grants,
        mounts: bool,
    },
    Bwrap(Option<PathBuf>),
    Seatbelt(seatbelt::Profile),
}

/// Isolation, ready to wrap commands: the effective mode, the plan, and how
/// strongly this machine enforces it.
#[derive(Debug, Clone)]
pub struct Isolation {
    configured: IsolationMode,
    mechanism: Mechanism,
    plan: Option<Plan>,
    enforcement: Enforcement,
    notices: Vec<Notice>,
    cwd: PathBuf,
    /// The command's network is filtered by host ([`crate::netns`]).
    network_filtered: bool,
}

/// What would run, for `--dry-run`.
#[derive(Debug, Clone, Serialize)]
pub struct IsolationReport<'a> {
    /// The mode in effect.
    pub mode: IsolationMode,
    /// The mode the settings ask for.
    pub configured_mode: IsolationMode,
    /// The plan, for every mode but `none`.
    pub plan: Option<&'a Plan>,
    /// The argv that would run.
    pub argv: Vec<String>,
    /// How strongly the plan is enforced here.
    pub enforcement: &'a Enforcement,
    /// Errors and warnings about the isolation.
    pub notices: &'a [Notice],
}

impl Isolation {
    /// Reads the merged settings and prepares the effective isolation.
    ///
    /// `config` is the merged `permissions.exec.isolation` (or `None`),
    /// `sandbox_on` whether the sandbox is on (off disables isolation), and
    /// `deny_patterns` the merged `permissions.paths.deny` globs. An invalid
    /// custom template is an error: nothing may run unconfined by accident.
    pub fn new(
        config: Option<&IsolationConfig>,
        sandbox_on: bool,
        deny_patterns: &[String],
        env: &Environment,
    ) -> Result<Isolation, IsolationError> {
        Isolation::with_landlock_abi(config, sandbox_on, deny_patterns, env, sys::landlock_abi())
    }

    /// [`Isolation::new`] for a kernel with Landlock ABI `abi`.
    fn with_landlock_abi(
        config: Option<&IsolationConfig>,
        sandbox_on: bool,
        deny_patterns: &[String],
        env: &Environment,
        abi: u32,
    ) -> Result<Isolation, IsolationError> {
        let default_config = IsolationConfig::default();
        let config = config.unwrap_or(&default_config);
        let configured = config.mode.unwrap_or_default();
        let mut isolation = Isolation {
            configured,
            mechanism: Mechanism::None,
            plan: None,
            enforcement: Enforcement::new(EnforcementLevel::NotEnforced),
            notices: Vec::new(),
            cwd: env.cwd.clone(),
            network_filtered: false,
        };
        if !sandbox_on || configured == IsolationMode::None {
            return Ok(isolation);
        }

        let template = match configured {
            IsolationMode::Custom => {
                match Template::parse(config.template.as_deref().unwrap_or("")) {
                    Ok(t) => Some(t),
                    Err(e) => return Err(IsolationError::Template(e.to_string())),
                }
            }
            _ => None,
        };

        let plan = plan::build(&PlanInput {
            config,
            deny_patterns,
            cwd: &env.cwd,
            home: &env.home,
            temp_dir: &env.temp_dir,
            other_homes: &env.other_homes,
        })?;
        if !plan.workdir.is_dir() {
            return Err(IsolationError::Workdir(plan.workdir.display().to_string()));
        }
        let plan = plan::resolve_links(&plan)?;

        let (mechanism, enforcement) = match (configured, template) {
            (IsolationMode::Custom, Some(template)) => (
                Mechanism::Custom(template),
                Enforcement::new(EnforcementLevel::Delegated),
            ),
            (IsolationMode::Landlock, _) => {
                let grants = landlock::grants(&plan, &RealTree);
                let mut enforcement = landlock::assess(&plan, abi);
                enforcement.notes.push(
                    "every capability is dropped before the command starts (ambient, permitted, effective; the bounding set too when the caller may)"
                        .to_string(),
                );
                enforcement.notes.extend(harden_notes(&plan.unix_sockets));
                let mounts = sys::user_namespaces_available();
                if mounts {
                    enforcement.notes.push(
                        "everything but the writable trees is mounted read-only in a private mount namespace: changes of mode, owner, timestamps and extended attributes fail outside them"
                            .to_string(),
                    );
                    if !plan.protected.is_empty() {
                        enforcement.notes.push(PROTECTED_NOTE.to_string());
                    }
                } else {
                    enforcement.missing.push(
                        "changes of mode, owner, timestamps and extended attributes outside the workdir, and writes to the protected paths, are not confined: this system does not let sandgate create a user namespace"
                            .to_string(),
                    );
                    if enforcement.level == EnforcementLevel::FullyEnforced {
                        enforcement.level = EnforcementLevel::PartiallyEnforced;
                    }
                }
                if !grants.unlistable.is_empty() {
                    let dirs: Vec<String> = grants
                        .unlistable
                        .iter()
                        .map(|d| format!("`{}`", d.display()))
                        .collect();
                    enforcement.notes.push(format!(
                        "{} cannot be listed or written to directly: each contains a denied directory",
                        dirs.join(", ")
                    ));
                }
                (
                    Mechanism::Landlock {
                        abi,
                        grants,
                        mounts,
                    },
                    enforcement,
                )
            }
            (IsolationMode::Bwrap, _) => {
                let bwrap::Search { found, skipped } = bwrap::find();
                let mut enforcement = Enforcement::new(if found.is_some() {
                    EnforcementLevel::FullyEnforced
                } else {
                    EnforcementLevel::NotEnforced
                });
                let skipped_note = |p: &PathBuf| {
                    format!(
                        "`{}` is not used: it or a directory above it is not root's or can be changed by others, and sandgate runs `bwrap` outside the sandbox",
                        p.display()
                    )
                };
                if found.is_none() {
                    enforcement.missing.push(format!(
                        "`bwrap` is not installed where only root can change it (package `{}`)",
                        bwrap::PACKAGE
                    ));
                    enforcement.missing.extend(skipped.iter().map(skipped_note));
                } else {
                    enforcement.notes.extend(skipped.iter().map(skipped_note));
                }
                enforcement.notes.extend(bwrap_notes(&plan.unix_sockets));
                if !plan.protected.is_empty() {
                    enforcement.notes.push(PROTECTED_NOTE.to_string());
                }
                (Mechanism::Bwrap(found), enforcement)
            }
            (IsolationMode::Seatbelt, _) => {
                let mut enforcement = Enforcement::new(if seatbelt_available() {
                    EnforcementLevel::FullyEnforced
                } else {
                    EnforcementLevel::NotEnforced
                });
                if !seatbelt_available() {
                    enforcement
                        .missing
                        .push(format!("`{}` exists only on macOS", seatbelt::SANDBOX_EXEC));
                }
                (Mechanism::Seatbelt(seatbelt::profile(&plan)), enforcement)
            }
            // `none` returned above; `custom` always has a template here.
            (IsolationMode::None | IsolationMode::Custom, _) => (
                Mechanism::None,
                Enforcement::new(EnforcementLevel::NotEnforced),
            ),
        };

        let mut enforcement = enforcement;
        if !plan.gate_only.is_empty() {
            enforcement.notes.push(format!(
                "deny patterns {} name no directory: the gate checks them, isolation cannot",
                plan.gate_only
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if configured == IsolationMode::Landlock
            && enforcement.level != EnforcementLevel::FullyEnforced
            && plan.best_effort
        {
            isolation.notices.push(Notice {
                level: NoticeLevel::Warning,
                message: format!(
                    "isolation is {} (best_effort): {}",
                    enforcement.level,
                    enforcement.missing.join("; ")
                ),
            });
        }
        isolation.mechanism = mechanism;
        isolation.enforcement = enforcement;
        isolation.plan = Some(plan);
        Ok(isolation)
    }

    /// The mode in effect (`none` when the sandbox is off or the template is invalid).
    pub fn mode(&self) -> IsolationMode {
        match self.mechanism {
            Mechanism::None => IsolationMode::None,
            Mechanism::Custom(_) => IsolationMode::Custom,
            Mechanism::Landlock { .. } => IsolationMode::Landlock,
            Mechanism::Bwrap(_) => IsolationMode::Bwrap,
            Mechanism::Seatbelt(_) => IsolationMode::Seatbelt,
        }
    }

    /// The plan (with symlinks resolved), for every effective mode but `none`.
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_ref()
    }

    /// How strongly this machine enforces the plan.
    pub fn enforcement(&self) -> &Enforcement {
        &self.enforcement
    }

    /// Errors and warnings the caller should log before running anything.
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    /// The argv that runs `command` (for `bwrap`, with [`bwrap::FILTER_FD_PLACEHOLDER`]
    /// where the descriptors of the filters go).
    pub fn argv(&self, command: &str) -> Vec<String> {
        let placeholders = [bwrap::FILTER_FD_PLACEHOLDER; 2].map(String::from);
        self.argv_with(command, &placeholders)
    }

    fn argv_with(&self, command: &str, filter_fds: &[String]) -> Vec<String> {
        let shell = || vec![SHELL.to_string(), "-c".to_string(), command.to_string()];
        match &self.mechanism {
            Mechanism::None | Mechanism::Landlock { .. } => shell(),
            Mechanism::Custom(template) => {
                let workdir = self
                    .plan
                    .as_ref()
                    .map(|p| p.workdir.display().to_string())
                    .unwrap_or_default();
                template.argv(&workdir, command)
            }
            Mechanism::Bwrap(found) => {
                let program = found
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "bwrap".to_string());
                let mut argv = vec![program];
                if let Some(plan) = &self.plan {
                    argv.extend(bwrap::options(
                        plan,
                        &self.cwd,
                        &|p: &Path| p.exists(),
                        filter_fds,
                    ));
                }
                argv.extend(shell());
                argv
            }
            Mechanism::Seatbelt(profile) => seatbelt::argv(profile, command),
        }
    }

    /// Whether `connect()` goes to the supervisor: UNIX sockets are listed
    /// and the mode runs sandgate's own filters.
    fn supervises_sockets(&self) -> bool {
        matches!(
            self.mechanism,
            Mechanism::Landlock { .. } | Mechanism::Bwrap(_)
        ) && self
            .plan
            .as_ref()
            .is_some_and(|p| !p.unix_sockets.is_empty())
    }

    /// Whether the calls that make or move names go to the supervisor:
    /// paths are protected and the mode runs sandgate's own filters.
    fn supervises_names(&self) -> bool {
        matches!(
            self.mechanism,
            Mechanism::Landlock { .. } | Mechanism::Bwrap(_)
        ) && self.plan.as_ref().is_some_and(|p| !p.protected.is_empty())
    }

    fn harden_spec(&self) -> harden::HardenSpec {
        harden::HardenSpec {
            unix_sockets: self.supervises_sockets(),
        }
    }

    /// Filter the command's network by host: under `landlock` and `bwrap`
    /// with the network on, the command starts in a network namespace with
    /// only loopback, whose ways out are the proxy and resolver sockets
    /// handed to the caller ([`Prepared::network`]) and its TCP connects,
    /// which the supervisor hands to a route ([`Prepared::supervision`]).
    /// Returns whether it will (other modes, and the network off, are left
    /// as they are).
    pub fn filter_network(&mut self) -> bool {
        self.network_filtered = matches!(
            self.mechanism,
            Mechanism::Landlock { .. } | Mechanism::Bwrap(_)
        ) && self.plan.as_ref().is_some_and(|p| p.network);
        self.network_filtered
    }

    /// Whether the command's network is filtered by host.
    pub fn network_filtered(&self) -> bool {
        self.network_filtered
    }

    /// Everything `--dry-run` shows about running `command`.
    pub fn report(&self, command: &str) -> IsolationReport<'_> {
        IsolationReport {
            mode: self.mode(),
            configured_mode: self.configured,
            plan: self.plan.as_ref(),
            argv: self.argv(command),
            enforcement: &self.enforcement,
            notices: &self.notices,
        }
    }

    /// Fails when the command must not start: the plan cannot be fully
    /// enforced without `best_effort`, or the mechanism is missing.
    pub fn ensure_startable(&self) -> Result<(), IsolationError> {
        match &self.mechanism {
            Mechanism::None | Mechanism::Custom(_) => Ok(()),
            Mechanism::Landlock { .. } => {
                let best_effort = self.plan.as_ref().is_some_and(|p| p.best_effort);
                if self.enforcement.level == EnforcementLevel::FullyEnforced || best_effort {
                    Ok(())
                } else {
                    Err(IsolationError::NotFullyEnforced {
                        missing: self.enforcement.missing.clone(),
                    })
                }
            }
            Mechanism::Bwrap(None) => Err(IsolationError::BwrapMissing),
            Mechanism::Bwrap(Some(_)) => Ok(()),
            Mechanism::Seatbelt(_) if seatbelt_available() => Ok(()),
            Mechanism::Seatbelt(_) => Err(IsolationError::SeatbeltUnavailable),
        }
    }

    /// A command that runs `command` isolated, in the working directory,
    /// and its supervisor if it needs one.
    pub fn command(&self, command: &str) -> Result<Prepared, IsolationError> {
        self.ensure_startable()?;
        if let Some(plan) = &self.plan {
            // A descriptor open on the floor would pass every rule by path.
            let floor: Vec<PathBuf> = plan
                .denied
                .iter()
                .filter(|d| d.source == crate::plan::DenySource::Floor)
                .map(|d| d.path.clone())
                .collect();
            crate::floorlinks::inherited(&sandgate_policy::floor::FloorInodes::collect(&floor))
                .map_err(|e| IsolationError::Plan(e.into()))?;
        }
        let (mut child_half, supervision) = match &self.plan {
            Some(plan)
                if self.supervises_sockets()
                    || self.supervises_names()
                    || self.network_filtered =>
            {
                let sockets = self
                    .supervises_sockets()
                    .then(|| Sockets::open(&plan.unix_sockets));
                let names = self.supervises_names().then(|| supervise::Names {
                    plan: plan.clone(),
                    setup: match &self.mechanism {
                        Mechanism::Bwrap(Some(program)) => {
                            std::fs::metadata(program).ok().map(|m| (m.dev(), m.ino()))
                        }
                        _ => None,
                    },
                });
                let (child, parent) = supervise::prepare(sockets, names, self.network_filtered)
                    .map_err(IsolationError::Supervise)?;
                (Some(child), Some(parent))
            }
            _ => (None, None),
        };
        let mut fds = Vec::new();
        if let Mechanism::Bwrap(_) = self.mechanism {
            for program in harden::programs(self.harden_spec())? {
                let fd = sys::memfd_with(c"sandgate-seccomp", &harden::to_bytes(&program))
                    .map_err(IsolationError::Filter)?;
                fds.push(fd);
            }
        }
        let fd_args: Vec<String> = fds.iter().map(|fd| fd.as_raw_fd().to_string()).collect();
        let mut argv = self.argv_with(command, &fd_args).into_iter();
        // Every mechanism yields at least the shell or the wrapper program.
        let program = argv.next().unwrap_or_else(|| SHELL.to_string());
        let mut cmd = Command::new(program);
        cmd.args(argv).current_dir(&self.cwd);
        // First of the child's hooks: it needs the capabilities the others drop.
        let network = if self.network_filtered {
            Some(crate::netns::enter(&mut cmd).map_err(IsolationError::Network)?)
        } else {
            None
        };
        if !fds.is_empty() {
            sys::inherit_fds(&mut cmd, fds);
        }
        if let Mechanism::Bwrap(_) = self.mechanism {
            if let Some(half) = child_half.take() {
                sys::supervise_child(&mut cmd, half);
            }
        }
        if let (
            Mechanism::Landlock {
                abi,
                grants,
                mounts,
            },
            Some(plan),
        ) = (&self.mechanism, &self.plan)
        {
            let ruleset = landlock::ruleset(plan, grants, *abi)?;
            let read_only_mounts = if *mounts {
                let writable: Vec<&Path> = plan
                    .writable
                    .iter()
                    .filter(|p| p.is_dir())
                    .map(PathBuf::as_path)
                    .collect();
                let protected: Vec<&Path> = plan
                    .protected
                    .iter()
                    .filter(|p| p.exists && writable.iter().any(|w| p.path.starts_with(w)))
                    .map(|p| p.path.as_path())
                    .collect();
                let layer = sys::ReadOnlyMounts::new(&writable, &protected, &self.cwd)
                    .ok_or_else(|| IsolationError::Workdir(self.cwd.display().to_string()))?;
                // The network's hook runs first and makes a mount namespace.
                Some(if network.is_some() {
                    layer.in_made_namespaces()
                } else {
                    layer
                })
            } else {
                None
            };
            let mut filters = vec![seccomp::program(seccomp::FilterSpec {
                deny_network: !plan.network,
            })?];
            filters.extend(harden::programs(self.harden_spec())?);
            sys::confine_child(
                &mut cmd,
                sys::ChildConfinement {
                    no_new_privs: plan.no_new_privs,
                    landlock: ruleset,
                    drop_capabilities: true,
                    seccomp: filters,
                    read_only_mounts,
                    supervised: child_half.take(),
                },
            );
        }
        Ok(Prepared {
            command: cmd,
            supervision,
            network,
        })
    }
}

impl fmt::Display for IsolationReport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "isolation: {}", mode_name(self.mode))?;
        if self.mode != self.configured_mode {
            writeln!(f, "  configured: {}", mode_name(self.configured_mode))?;
        }
        writeln!(f, "enforcement: {}", self.enforcement.level)?;
        for m in &self.enforcement.missing {
            writeln!(f, "  missing: {m}")?;
        }
        for n in &self.enforcement.notes {
            writeln!(f, "  note: {n}")?;
        }
        if let Some(plan) = self.plan {
            writeln!(f, "plan:")?;
            writeln!(f, "  workdir: {}", plan.workdir.display())?;
            let list = |paths: &[PathBuf]| {
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            writeln!(f, "  readable: {} (except denied)", list(&plan.readable))?;
            let mut writable = plan.writable.clone();
            writable.extend(plan.writable_files.iter().cloned());
            writeln!(f, "  writable: {}", list(&writable))?;
            let denied: Vec<PathBuf> = plan.denied.iter().map(|d| d.path.clone()).collect();
            writeln!(f, "  denied: {}", list(&denied))?;
            if !plan.protected.is_empty() {
                writeln!(f, "  protected (read-only inside the writable trees):")?;
                for p in &plan.protected {
                    let state = if p.exists { "" } else { " (missing)" };
                    writeln!(f, "    {}{state}: {}", p.path.display(), p.why)?;
                }
            }
            if !plan.unix_sockets.is_empty() {
                writeln!(f, "  unix sockets (connect() by path):")?;
                for s in supervise::states(&plan.unix_sockets) {
                    writeln!(f, "    {} ({})", s.path.display(), s.state)?;
                }
            }
            writeln!(f, "  network: {}", if plan.network { "on" } else { "off" })?;
            writeln!(f, "  no_new_privs: {}", plan.no_new_privs)?;
        }
        writeln!(f, "argv:")?;
        for a in &self.argv {
            writeln!(f, "  {}", quote(a))?;
        }
        for n in self.notices {
            writeln!(f, "{n}")?;
        }
        Ok(())
    }
}

/// How the protected paths are held, for `--dry-run`.
const PROTECTED_NOTE: &str = "the protected paths that exist are read-only binds, and sandgate's supervisor makes every name the command makes or moves (open with O_CREAT, mkdir, mknod, symlink, link, rename), refusing a protected path, also one missing at start, and a rename or link of a directory above one; openat2 fails with ENOSYS";

/// What the bwrap preset holds beyond the plan, for `--dry-run`.
fn bwrap_notes(unix_sockets: &[PathBuf]) -> Vec<String> {
    let mut notes = vec![
        "own user namespace (only the caller's uid and gid mapped, no nested ones), own PID namespace with a fresh /proc, no capabilities, a new session".to_string(),
    ];
    notes.extend(harden_notes(unix_sockets));
    notes
}

/// What the hardening filters hold, for `--dry-run`.
fn harden_notes(unix_sockets: &[PathBuf]) -> Vec<String> {
    let sockets = if unix_sockets.is_empty() {
        "unix sockets cannot be created, so nothing connects to a listener by path (stream and seqpacket socket pairs work; datagram pairs are refused: they send to any listener by path)".to_string()
    } else {
        "every connect() goes to sandgate's supervisor, which connects only to the listed unix sockets (each resolved once at start) and refuses abstract addresses; datagram unix sockets are refused: they send to any listener by path".to_string()
    };
    vec![
        format!(
            "seccomp refuses {}, clone and unshare of new namespaces, and the TIOCSTI and TIOCLINUX ioctls",
            harden::REFUSED.join(", ")
        ),
        sockets,
    ]
}

fn mode_name(mode: IsolationMode) -> &'static str {
    match mode {
        IsolationMode::None => "none",
        IsolationMode::Custom => "custom",
        IsolationMode::Landlock => "landlock",
        IsolationMode::Bwrap => "bwrap",
        IsolationMode::Seatbelt => "seatbelt",
    }
}

/// Shows one argv element unambiguously: as is when plain, else single-quoted.
fn quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

fn seatbelt_available() -> bool {
    cfg!(target_os = "macos") && Path::new(seatbelt::SANDBOX_EXEC).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn landlock(best_effort: bool, abi: u32) -> Isolation {
        let dir = std::env::temp_dir();
        let config = IsolationConfig {
            mode: Some(IsolationMode::Landlock),
            best_effort: Some(best_effort),
            ..IsolationConfig::default()
        };
        let env = Environment {
            cwd: dir.clone(),
            home: dir.join("no-such-home"),
            temp_dir: dir,
            other_homes: Vec::new(),
        };
        Isolation::with_landlock_abi(Some(&config), true, &[], &env, abi).unwrap()
    }

    #[test]
    fn an_old_kernel_refuses_to_start_and_says_what_is_missing() {
        let isolation = landlock(false, 2);
        assert_eq!(
            isolation.enforcement().level,
            EnforcementLevel::PartiallyEnforced
        );
        let err = isolation.command("true").unwrap_err();
        assert_eq!(
            err.to_string(),
            "isolation mode `landlock` cannot be fully enforced on this machine: \
             truncating files outside the workdir is not confined (needs Landlock ABI 3, the kernel has ABI 2); \
             ioctl on device files is not confined (needs Landlock ABI 5, the kernel has ABI 2); \
             set `best_effort: true` to run anyway"
        );
        assert!(isolation.notices().is_empty());
    }

    #[test]
    fn best_effort_starts_with_a_warning() {
        let isolation = landlock(true, 0);
        assert!(isolation.ensure_startable().is_ok());
        assert_eq!(isolation.notices().len(), 1);
        let notice = &isolation.notices()[0];
        assert_eq!(notice.level, NoticeLevel::Warning);
        assert!(
            notice.to_string().starts_with(
                "warning: isolation is partially enforced (best_effort): Landlock is not available"
            ),
            "{notice}"
        );
    }

    #[test]
    fn a_current_kernel_starts_without_notices() {
        let isolation = landlock(false, 7);
        assert_eq!(
            isolation.enforcement().level,
            EnforcementLevel::FullyEnforced
        );
        assert!(isolation.ensure_startable().is_ok());
        assert!(isolation.notices().is_empty());
    }

    #[test]
    fn quote_shows_argv_elements_unambiguously() {
        assert_eq!(quote("/bin/sh"), "/bin/sh");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
    }
}
