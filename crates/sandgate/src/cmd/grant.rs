//! `sandgate grant`: derive the narrowest grant from a loop config, show it, merge it.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use sandgate_grant::review::{Review, ReviewOutcome, ReviewServer};
use sandgate_grant::{Grant, LoopConfig, LoopDir, MergeError, MergeOutcome};

use crate::setup::GlobalArgs;
use crate::{EXIT_CANNOT_CHECK, EXIT_FAILED};

/// Where `--review` writes when `--write` is not given.
const DEFAULT_SETTINGS: &str = ".claude/settings.local.json";

/// Derive the permission rules a loop config needs; print, write or review them.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct GrantArgs {
    /// Other grant tools.
    #[command(subcommand)]
    pub command: Option<GrantCommand>,
    /// The loop config (YAML).
    #[arg(value_name = "LOOP.yaml", required = true)]
    pub loop_config: Option<PathBuf>,
    /// Merge the grant into this settings file, e.g. `.claude/settings.local.json`.
    #[arg(long, value_name = "PATH")]
    pub write: Option<PathBuf>,
    /// Replace a settings file that is not JSON or whose top level is not an object,
    /// after keeping a `.bak` copy.
    #[arg(long)]
    pub force: bool,
    /// How to print the grant.
    #[arg(long, value_enum, default_value_t = Format::Text, conflicts_with_all = ["write", "review"])]
    pub format: Format,
    /// Review the grant in a browser page; Approve performs the write
    /// (to `--write`, default `.claude/settings.local.json`).
    #[arg(long)]
    pub review: bool,
    /// With `--review`: print the link but do not start a browser.
    #[arg(long, requires = "review")]
    pub no_open: bool,
    /// With `--review`: seconds to wait for a decision before giving up.
    #[arg(long, requires = "review", value_name = "SECS", default_value_t = 600)]
    pub review_timeout: u64,
}

/// `sandgate grant` subcommands.
#[derive(Debug, Subcommand)]
pub enum GrantCommand {
    /// Print `compat.sh`, the portability shim detector scripts source.
    Shim,
}

/// Output formats of `sandgate grant LOOP.yaml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The preflight a person reads.
    Text,
    /// The same grant as a sandgate policy file.
    Sandgate,
}

/// Run `grant`.
pub fn run(global: &GlobalArgs, args: GrantArgs) -> ExitCode {
    if let Some(GrantCommand::Shim) = args.command {
        print!("{}", sandgate_grant::COMPAT_SH);
        return ExitCode::SUCCESS;
    }
    let Some(loop_path) = args.loop_config.as_deref() else {
        eprintln!("sandgate: grant needs a loop config: `sandgate grant LOOP.yaml`");
        return ExitCode::from(EXIT_CANNOT_CHECK);
    };
    let loop_path = against_cwd(global, loop_path);
    let config = match sandgate_grant::load(&loop_path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sandgate: {e}");
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    };
    let dir = match loop_directory(global, &loop_path) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("sandgate: cannot grant `{}`: {e}", loop_path.display());
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    };
    let grant = sandgate_grant::required(&config, &dir);

    if args.review {
        let target = against_cwd(
            global,
            args.write.as_deref().unwrap_or(Path::new(DEFAULT_SETTINGS)),
        );
        return review(global, &args, &loop_path, &config, grant, target);
    }
    if let Some(target) = args.write.as_deref() {
        let target = against_cwd(global, target);
        return match sandgate_grant::merge_into(&target, &grant, args.force) {
            Ok(outcome) => {
                report_written(global, &outcome);
                ExitCode::SUCCESS
            }
            Err(e) => merge_failed(&e),
        };
    }

    if global.json {
        let value = serde_json::json!({
            "loop": loop_path.display().to_string(),
            "loop_dir": dir.path().display().to_string(),
            "rules": grant.allow,
            "deny": grant.deny,
            "nothing_else": sandgate_grant::NOTHING_ELSE,
            "checkpoints_still_stop": sandgate_grant::CHECKPOINTS_STILL_STOP,
            "checkpoints": config.checkpoints(),
        });
        println!("{value}");
        return ExitCode::SUCCESS;
    }
    match args.format {
        Format::Text => print!("{}", sandgate_grant::render(&grant, config.checkpoints())),
        Format::Sandgate => print!(
            "{}",
            sandgate_grant::render_sandgate(&grant, &loop_path.display().to_string())
        ),
    }
    ExitCode::SUCCESS
}

fn review(
    global: &GlobalArgs,
    args: &GrantArgs,
    loop_path: &Path,
    config: &LoopConfig,
    grant: Grant,
    target: PathBuf,
) -> ExitCode {
    let server = match ReviewServer::start(Review {
        source: loop_path.display().to_string(),
        grant,
        checkpoints: config.checkpoints().to_vec(),
        target,
        force: args.force,
    }) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sandgate: cannot start the review page: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    eprintln!(
        "sandgate: review the grant at {} (one-time link; waiting up to {} s)",
        server.url(),
        args.review_timeout
    );
    if !args.no_open {
        open_browser(server.url());
    }
    match server.wait(Duration::from_secs(args.review_timeout)) {
        ReviewOutcome::Approved(outcome) => {
            report_written(global, &outcome);
            ExitCode::SUCCESS
        }
        ReviewOutcome::Failed(e) => merge_failed(&e),
        ReviewOutcome::Cancelled => {
            eprintln!("sandgate: the review was cancelled; nothing was written");
            ExitCode::from(EXIT_FAILED)
        }
        ReviewOutcome::TimedOut => {
            eprintln!(
                "sandgate: no decision within {} s; nothing was written",
                args.review_timeout
            );
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// When `target` is a project's Claude Code settings file
/// (`DIR/.claude/settings.json` or `settings.local.json`, not the user's own
/// `~/.claude/`) and Claude Code has not trusted DIR, why its rules will not
/// apply and how to fix it.
pub fn untrusted_project_warning(target: &Path) -> Option<String> {
    let shown = target;
    let target = &std::path::absolute(target).ok()?;
    let name = target.file_name()?.to_str()?;
    if name != "settings.json" && name != "settings.local.json" {
        return None;
    }
    let claude_dir = target.parent()?;
    if claude_dir.file_name()? != ".claude" {
        return None;
    }
    let project = claude_dir.parent()?;
    let home = PathBuf::from(std::env::var_os("HOME").filter(|h| !h.is_empty())?);
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if canon(project) == canon(&home) {
        return None;
    }
    let trust =
        crate::hook::trust::folder_trust(crate::hook::Agent::Claude, &canon(project), &home, &home);
    (!trust.is_trusted()).then(|| {
        format!(
            "the rules in `{}` take effect only once Claude Code trusts the folder \
             (headless `claude -p` runs apply them regardless): {}",
            shown.display(),
            trust.detail()
        )
    })
}

/// The directory holding the loop config, canonical, checked to be one the
/// file rules may name: not `/`, not the home directory or above it, not
/// inside the floor.
fn loop_directory(global: &GlobalArgs, loop_path: &Path) -> Result<LoopDir, String> {
    let dir = match loop_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => against_cwd(global, Path::new(".")),
    };
    let dir = std::fs::canonicalize(&dir)
        .map_err(|e| format!("cannot resolve its directory `{}`: {e}", dir.display()))?;
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            "HOME is not set, so whether the loop directory holds the home directory \
             cannot be checked"
                .to_string()
        })?;
    let home = std::fs::canonicalize(&home).unwrap_or(home);
    LoopDir::new(&dir, &home).map_err(|e| e.to_string())
}

/// Why rules already in the settings file still give a file tool every path.
fn broad_rules_warning(outcome: &MergeOutcome) -> Option<String> {
    (!outcome.broad.is_empty()).then(|| {
        format!(
            "`permissions.allow` in `{}` still holds `{}`, which let Claude Code's file tools \
             read or write any path whatever the grant's scoped rules say \
             (earlier versions of `sandgate grant` wrote them); remove them by hand",
            outcome.path.display(),
            outcome.broad.join("`, `")
        )
    })
}

fn report_written(global: &GlobalArgs, outcome: &MergeOutcome) {
    let warnings: Vec<String> = untrusted_project_warning(&outcome.path)
        .into_iter()
        .chain(broad_rules_warning(outcome))
        .collect();
    for w in &warnings {
        eprintln!("sandgate: warning: {w}");
    }
    if let Some(backup) = &outcome.backup {
        eprintln!(
            "sandgate: kept the unusable original as `{}`",
            backup.display()
        );
    }
    if global.json {
        let settings: serde_json::Value =
            serde_json::from_str(&outcome.json).unwrap_or(serde_json::Value::Null);
        let value = serde_json::json!({
            "path": outcome.path.display().to_string(),
            "rules": outcome.required,
            "allow": outcome.allow,
            "deny": outcome.deny,
            "added": outcome.added,
            "broad": outcome.broad,
            "written": outcome.written,
            "backup": outcome.backup.as_ref().map(|b| b.display().to_string()),
            "settings": settings,
            "warnings": warnings,
        });
        println!("{value}");
        return;
    }
    println!("{}", outcome.summary());
    print!("{}", outcome.json);
}

fn merge_failed(error: &MergeError) -> ExitCode {
    eprintln!("sandgate: {error}");
    match error {
        MergeError::Write { .. } => ExitCode::from(EXIT_FAILED),
        _ => ExitCode::from(EXIT_CANNOT_CHECK),
    }
}

/// Relative paths resolve against `--cwd` when it is given.
pub fn against_cwd(global: &GlobalArgs, path: &Path) -> PathBuf {
    match &global.cwd {
        Some(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    }
}

/// Start `$BROWSER`, else the platform's opener, without waiting for it.
fn open_browser(url: &str) {
    let opener = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| {
            if cfg!(target_os = "macos") {
                "open".into()
            } else {
                "xdg-open".into()
            }
        });
    let spawned = Command::new(&opener)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match spawned {
        Ok(mut child) => {
            // Reap the opener when it exits; the review does not depend on it.
            std::thread::spawn(move || child.wait());
        }
        Err(e) => eprintln!("sandgate: cannot start `{opener}` ({e}); open the link yourself"),
    }
}
