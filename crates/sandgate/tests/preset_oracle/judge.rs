//! What counts as breaking the presets' promise, and the class of
//! issue 29 a breach belongs to.

use std::path::{Path, PathBuf};

use sandgate_policy::{Context, Policy, ToolCall, Verdict};

use super::fixture::{Tree, CREDENTIAL_STORES, FLOOR_DIRS};
use super::generate::Case;
use super::trace::{Access, Run};

/// One command that broke the promise.
#[derive(Debug, Clone)]
pub struct Breach {
    /// The preset.
    pub preset: String,
    /// The command.
    pub command: String,
    /// What happened, in short.
    pub what: String,
    /// Everything that happened, one line each.
    pub details: Vec<String>,
    /// The class of issue 29 (or another) it belongs to.
    pub class: &'static str,
}

impl Breach {
    /// `preset<TAB>command<TAB>what happened`.
    pub fn line(&self) -> String {
        format!("{}\t{}\t{}", self.preset, self.command, self.what)
    }
}

/// What the build tools of a preset may write, beneath the project (`./`)
/// or the home directory (`~/`), and the programs they run themselves.
pub struct Own {
    /// Directories written by the preset's own tools.
    pub writes: &'static [&'static str],
    /// Programs (file names) its tools start.
    pub runs: &'static [&'static str],
}

/// The preset's own outputs: its build, cache and log directories, and the
/// programs its build tools start (compilers, linkers, the interpreter). An
/// entry ending in `*` is a prefix of names. Every preset has readonly's:
/// `git status` refreshes git's index under its lock.
pub fn own(preset: &str) -> Own {
    match preset {
        "rust" => Own {
            writes: &["./.git/index.lock", "./.git/index", "./target*", "~/.cargo"],
            runs: &[
                "cargo",
                "rustc",
                "rustdoc",
                "rustup",
                "clippy-driver",
                "cargo-clippy",
                "cargo-fmt",
                "rustfmt",
                "cc",
                "gcc",
                "collect2",
                "ld",
                "ld.bfd",
                "ld.gold",
                "ld.lld",
                "rust-lld",
                "as",
                "cc1",
                "lto-wrapper",
            ],
        },
        "node" => Own {
            writes: &[
                "./.git/index.lock",
                "./.git/index",
                "~/.npm",
                "./node_modules/.cache",
                "~/.cache",
                "~/.yarn",
                "~/.yarnrc",
                "~/.local/share/pnpm",
                "~/.local/state/pnpm",
                "~/.config/yarn",
            ],
            // The project's scripts run through sh, and yarn and pnpm wrap
            // them in their own sh lines.
            runs: &[
                "node", "npm", "npx", "yarn", "pnpm", "sh", "dash", "bash", "corepack",
            ],
        },
        "python" => Own {
            writes: &[
                "./.git/index.lock",
                "./.git/index",
                "__pycache__",
                "./.pytest_cache",
                "./pytest-cache-files-*",
                "./.mypy_cache",
                "./.ruff_cache",
                "./.tox",
                "./.nox",
                "./.venv",
                "~/.cache",
            ],
            // pip asks lsb_release and uname about the system, and ctypes
            // asks `ldconfig -p` where a library is; pyright is a node
            // program.
            runs: &[
                "python3",
                "python",
                "python3.11",
                "python3.12",
                "python3.13",
                "pytest",
                "mypy",
                "ruff",
                "black",
                "flake8",
                "pylint",
                "tox",
                "nox",
                "uv",
                "pyright",
                "node",
                "env",
                "lsb_release",
                "uname",
                "ldconfig",
                "getopt",
            ],
        },
        _ => Own {
            writes: &["./.git/index.lock", "./.git/index"],
            runs: &[],
        },
    }
}

/// The judge of one preset.
pub struct Judge {
    preset: String,
    text: String,
    account_home: PathBuf,
}

/// One worker's judge: the preset compiled for the worker's tree, to ask
/// it about the programs a command started.
pub struct Worker<'a> {
    judge: &'a Judge,
    gate: Option<(Policy, Context)>,
}

impl Judge {
    /// A judge for `preset` with policy `text`; `account_home` is the home
    /// of the account in the user database (its floor counts too).
    pub fn new(preset: &str, text: &str, account_home: &str) -> Judge {
        Judge {
            preset: preset.to_string(),
            text: text.to_string(),
            account_home: PathBuf::from(account_home),
        }
    }

    /// A worker, with its own compiled gate.
    pub fn worker(&self) -> Worker<'_> {
        Worker {
            judge: self,
            gate: None,
        }
    }
}

fn beneath(path: &Path, dir: &Path) -> bool {
    path.starts_with(dir)
}

impl Worker<'_> {
    /// The breaches of one run.
    pub fn judge(&mut self, case: &Case, run: &Run, tree: &Tree) -> Vec<Breach> {
        let j = self.judge;
        let home = tree.home();
        let project = tree.project();
        let mut what: Vec<(String, &'static str)> = Vec::new();
        let own = own(&j.preset);
        let own_dirs: Vec<String> = own
            .writes
            .iter()
            .map(|w| match (w.strip_prefix("./"), w.strip_prefix("~/")) {
                (Some(rel), _) => project.join(rel).to_string_lossy().into_owned(),
                (_, Some(rel)) => home.join(rel).to_string_lossy().into_owned(),
                _ => w.to_string(),
            })
            .collect();
        let is_own = |p: &Path| {
            let s = p.to_string_lossy();
            own_dirs.iter().any(|d| match d.strip_suffix('*') {
                Some(prefix) => s.starts_with(prefix),
                None if !d.starts_with('/') => p.components().any(|c| c.as_os_str() == d.as_str()),
                None => s == d.as_str() || s.starts_with(&format!("{d}/")),
            })
        };
        let mut floor_dirs: Vec<PathBuf> = Vec::new();
        for h in [&home, &j.account_home] {
            if h.as_os_str().is_empty() {
                continue;
            }
            floor_dirs.extend(FLOOR_DIRS.iter().map(|d| h.join(d)));
        }
        let cred_dirs: Vec<PathBuf> = CREDENTIAL_STORES
            .iter()
            .filter_map(|c| c.strip_suffix('/'))
            .map(|c| home.join(c))
            .collect();
        let cred_files: Vec<PathBuf> = CREDENTIAL_STORES
            .iter()
            .filter(|c| !c.ends_with('/'))
            .map(|c| home.join(c))
            .collect();
        let shown = |p: &Path| match p.strip_prefix(&home) {
            Ok(rel) => format!("~/{}", rel.display()),
            Err(_) => p.display().to_string(),
        };
        for t in &run.touches {
            let p = &t.path;
            if let Some(dir) = floor_dirs.iter().find(|d| beneath(p, d)) {
                let inside = p != dir;
                if inside || matches!(t.access, Access::Open | Access::List | Access::Write) {
                    what.push((
                        format!("{} {} (the floor)", t.call, shown(p)),
                        if t.access == Access::List || p == dir {
                            "floorlist"
                        } else {
                            "floor"
                        },
                    ));
                }
                continue;
            }
            if let Some(dir) = cred_dirs.iter().find(|d| beneath(p, d)) {
                if p != dir || matches!(t.access, Access::Open | Access::List | Access::Write) {
                    what.push((
                        format!("{} {} (a credential store)", t.call, shown(p)),
                        "cred",
                    ));
                }
                continue;
            }
            if cred_files.iter().any(|f| p == f)
                && matches!(t.access, Access::Open | Access::Write)
                && !(p.ends_with(".npmrc") && j.preset == "node")
            {
                what.push((
                    format!("{} {} (a credential store)", t.call, shown(p)),
                    "cred",
                ));
                continue;
            }
            if t.access != Access::Write {
                continue;
            }
            let s = p.to_string_lossy();
            let exempt = s == "/dev/null"
                || s.starts_with("/dev/tty")
                || s.starts_with("/dev/pts/")
                || s == "/dev/ptmx"
                || s.starts_with("/proc/")
                || beneath(p, &tree.tmp())
                || s.starts_with("/dev/shm/")
                || s.starts_with("/dev/fd/")
                || is_own(p);
            if !exempt {
                what.push((format!("{} {} (a write)", t.call, shown(p)), "write"));
            }
        }
        for e in &run.execs {
            let file = Path::new(&e.path)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            // git runs itself (`git describe --broken` refreshes the index
            // through `git update-index`).
            if own.runs.contains(&file.as_str())
                || file == "git"
                || (j.preset == "rust" && beneath(Path::new(&e.path), &project.join("target")))
            {
                continue;
            }
            let command = shell_join(&e.argv);
            let shown_command = command.replace('\n', "\\n");
            if self.allows(&command, &e.cwd, tree) {
                continue;
            }
            what.push((
                format!("ran `{shown_command}`, which the preset does not allow on its own"),
                "exec",
            ));
        }
        if run.output.contains("SECRET-") {
            what.push(("printed a floor or credential-store file".into(), "printed"));
        }
        if what.is_empty() {
            return Vec::new();
        }
        // One line per command: what happened, in short.
        let mut kinds: Vec<&str> = what.iter().map(|w| w.1).collect();
        kinds.sort();
        kinds.dedup();
        let mut text: Vec<String> = what.iter().map(|w| w.0.clone()).collect();
        text.dedup();
        let shown = text.len().min(3);
        let mut summary = text[..shown].join("; ");
        if text.len() > shown {
            summary.push_str(&format!("; and {} more", text.len() - shown));
        }
        vec![Breach {
            preset: j.preset.clone(),
            command: case.command.clone(),
            what: summary,
            details: text,
            class: class(&j.preset, case, &kinds),
        }]
    }

    fn allows(&mut self, command: &str, cwd: &Path, tree: &Tree) -> bool {
        if self.gate.is_none() {
            self.gate = Some(super::compile(
                &self.judge.text,
                &tree.home(),
                &tree.project(),
            ));
        }
        let (policy, ctx) = self.gate.as_ref().unwrap();
        let ctx = ctx
            .with_cwd(&cwd.to_string_lossy())
            .unwrap_or_else(|_| ctx.clone());
        let call = ToolCall::new("exec_run", serde_json::json!({ "command": command }));
        policy.evaluate(&call, &ctx).verdict == Verdict::Allow
    }
}

/// argv as a shell command: each word quoted when it needs it.
fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+%@".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The class of issue 29 a breach belongs to, from how the command was
/// spelled, the program, and what happened.
fn class(preset: &str, case: &Case, kinds: &[&str]) -> &'static str {
    let c = &case.command;
    let has = |k: &str| kinds.contains(&k);
    let floor = has("floor") || has("floorlist");
    let login = [
        "bash -l",
        "bash --login",
        "bash --rcfile",
        "bash --init-file",
    ];
    if login.iter().any(|l| c.starts_with(l)) && has("exec") {
        return "7: allowed readers start other programs";
    }
    if has("cred") && !floor && !has("write") && !has("exec") {
        return "credential stores (issue 32, item 2)";
    }
    if has("floorlist") && (case.program == "du" || case.program == "find") {
        return "8: listings of the floor directories";
    }
    if case.tags.contains(&"brace")
        || (c.contains('{') && c.contains(',') && !c.contains("search:"))
    {
        return "1: brace expressions";
    }
    if case.tags.contains(&"abbrev") {
        return "2: abbreviated long options";
    }
    if case.tags.contains(&"optval") {
        return "10: optional-value long options";
    }
    if preset != "readonly" {
        return "9: what the other presets add";
    }
    if case.program.starts_with("git") {
        if c.contains("ignature") || c.contains("%G") {
            return "3: git signatures run gpg or ssh-keygen";
        }
        if [
            "work-tree",
            "git-dir",
            "GIT_DIR",
            "GIT_WORK_TREE",
            "namespace",
            "super-prefix",
            "GIT_OBJECT",
            "-C ",
        ]
        .iter()
        .any(|k| c.contains(k))
        {
            return "4: git with another work tree or repository";
        }
    }
    if case.program == "jq" && (c.contains("import") || c.contains("include") || c.contains(" -L"))
    {
        return "5: jq module search paths";
    }
    if has("exec") {
        return "7: allowed readers start other programs";
    }
    if has("write") {
        return "6: writes through options and environment";
    }
    if floor {
        return "8: listings of the floor directories";
    }
    if has("cred") {
        return "credential stores (issue 32, item 2)";
    }
    "none: in no class of issue 29"
}

/// Every breach, grouped by class.
pub fn report(breaches: &[Breach]) -> String {
    let mut classes: Vec<&str> = breaches.iter().map(|b| b.class).collect();
    classes.sort();
    classes.dedup();
    let mut out = String::new();
    for class in classes {
        let lines: Vec<&Breach> = breaches.iter().filter(|b| b.class == class).collect();
        out.push_str(&format!("# class {class} ({} commands)\n", lines.len()));
        for b in lines {
            out.push_str(&b.line());
            out.push('\n');
        }
        out.push('\n');
    }
    out
}
