//! `sandgate hook claude|codex|gemini` and `sandgate hook install|uninstall|status AGENT`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;

use crate::hook::install::{self, Outcome, Position, Scope, Target, TrustEdit};
use crate::hook::trust::{self, FolderTrust};
use crate::hook::Agent;
use crate::setup::GlobalArgs;
use crate::{EXIT_CANNOT_CHECK, EXIT_FAILED};

/// The `hook` subcommands.
#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Claude Code's PreToolUse / PermissionRequest hook: payload on stdin, answer on stdout.
    Claude,
    /// Codex CLI's PreToolUse / PermissionRequest hook (Claude Code's wire format).
    Codex,
    /// Gemini CLI's BeforeTool hook.
    Gemini,
    /// Add sandgate's hook to an agent's settings file (additive, idempotent).
    Install(InstallArgs),
    /// Remove sandgate's hook (and only it) from an agent's settings file.
    Uninstall(ScopeArgs),
    /// Whether sandgate's hook is installed, trusted and would run.
    Status(ScopeArgs),
}

/// Which agent, and which of its settings files.
#[derive(Debug, Args)]
pub struct ScopeArgs {
    /// The agent.
    #[arg(value_enum)]
    pub agent: Agent,
    /// The project's settings file (under the working directory).
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// The user's settings file (under the home directory); the default.
    #[arg(long)]
    pub user: bool,
}

/// `hook install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    #[command(flatten)]
    scope: ScopeArgs,
    /// Codex CLI: record in `config.toml` that you trust sandgate's hook
    /// entries (exactly those), so Codex runs them without a review.
    #[arg(long)]
    pub trust: bool,
}

/// Run a `hook` subcommand.
pub fn run(global: &GlobalArgs, command: HookCommand) -> ExitCode {
    match command {
        HookCommand::Claude => crate::hook::run(Agent::Claude, global),
        HookCommand::Codex => crate::hook::run(Agent::Codex, global),
        HookCommand::Gemini => crate::hook::run(Agent::Gemini, global),
        HookCommand::Install(args) => {
            with_place(global, &args.scope, |p| install(global, p, args.trust))
        }
        HookCommand::Uninstall(args) => with_place(global, &args, |p| uninstall(global, p)),
        HookCommand::Status(args) => with_place(global, &args, |p| status(global, p)),
    }
}

/// Everything a subcommand needs to know about where it works.
struct Place {
    agent: Agent,
    scope: Scope,
    cwd: PathBuf,
    home: PathBuf,
    /// Codex CLI's user directory (its `config.toml` holds the trust entries).
    codex_dir: PathBuf,
    target: Target,
}

fn with_place(
    global: &GlobalArgs,
    args: &ScopeArgs,
    f: impl FnOnce(&Place) -> ExitCode,
) -> ExitCode {
    let ctx = match crate::setup::context(global) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let scope = if args.project {
        Scope::Project
    } else {
        Scope::User
    };
    let codex_home = std::env::var_os("CODEX_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let target = install::target(
        args.agent,
        scope,
        &ctx.cwd,
        &ctx.home,
        codex_home.as_deref(),
    );
    let place = Place {
        agent: args.agent,
        scope,
        codex_dir: install::codex_user_dir(&ctx.home, codex_home.as_deref()),
        cwd: ctx.cwd,
        home: ctx.home,
        target,
    };
    f(&place)
}

fn report(e: &install::InstallError) -> ExitCode {
    eprintln!("sandgate: {e}");
    match e {
        install::InstallError::Malformed { .. } => ExitCode::from(EXIT_CANNOT_CHECK),
        install::InstallError::Io { .. } => ExitCode::from(EXIT_FAILED),
    }
}

fn print(global: &GlobalArgs, value: serde_json::Value, lines: &[String]) {
    if global.json {
        println!("{value}");
    } else {
        for line in lines {
            println!("{line}");
        }
    }
}

/// The Codex trust keys of sandgate's handlers, and their hashes.
fn codex_trust(place: &Place, positions: &[Position]) -> Vec<(String, String)> {
    positions
        .iter()
        .map(|p| {
            (
                install::codex_key(&place.target.file, p),
                install::codex_hash(p),
            )
        })
        .collect()
}

fn install(global: &GlobalArgs, place: &Place, trust: bool) -> ExitCode {
    let agent = place.agent;
    let command = match place.scope {
        // A teammate's sandgate is wherever their PATH finds it.
        Scope::Project => install::portable_command(agent),
        Scope::User => match std::env::current_exe() {
            Ok(exe) => install::hook_command(&exe, agent),
            Err(e) => {
                eprintln!("sandgate: cannot find the sandgate executable to install: {e}");
                return ExitCode::from(EXIT_FAILED);
            }
        },
    };
    // The trust entries that name sandgate's old positions go with them.
    let before = match install::all_handlers(&place.target) {
        Ok(b) => b,
        Err(e) => return report(&e),
    };
    let outcome = match install::install(&place.target, agent, &command) {
        Ok(o) => o,
        Err(e) => return report(&e),
    };
    let file = place.target.file.display().to_string();
    let name = agent.display_name();
    let mut lines = vec![match outcome {
        Outcome::Changed => format!("installed the sandgate hook for {name} in {file}"),
        Outcome::Unchanged => {
            format!("the sandgate hook for {name} is already installed in {file}")
        }
    }];
    if outcome == Outcome::Changed && place.target.file.exists() {
        let backup = install::backup_path(&place.target.file);
        if backup.exists() {
            lines.push(format!("the previous version is in {}", backup.display()));
        }
    }
    let mut warnings = Vec::new();
    if place.scope == Scope::Project && !on_path("sandgate") {
        warnings.push(format!(
            "the hook runs `{command}`, and `sandgate` is not on this machine's PATH: until it is, \
             {name} cannot run the hook (put sandgate on PATH, e.g. `cargo install --path crates/sandgate`)"
        ));
    }
    let mut trusted = json!(null);
    if agent == Agent::Codex {
        let config = place.codex_dir.join("config.toml");
        let after = match install::all_handlers(&place.target) {
            Ok(a) => a,
            Err(e) => return report(&e),
        };
        let ours: Vec<Position> = after
            .iter()
            .filter(|p| install::is_sandgate_command(&p.command, agent))
            .cloned()
            .collect();
        let states = match install::codex_trust_states(&config) {
            Ok(s) => s,
            Err(e) => return report(&e),
        };
        // Keys of sandgate's old positions that no longer hold sandgate's handler.
        let stale: Vec<String> = before
            .iter()
            .filter(|p| install::is_sandgate_command(&p.command, agent))
            .map(|p| install::codex_key(&place.target.file, p))
            .filter(|k| {
                !ours
                    .iter()
                    .any(|o| install::codex_key(&place.target.file, o) == *k)
            })
            .filter(|k| states.iter().any(|s| s.key == *k))
            .collect();
        let mut edit = TrustEdit {
            remove: stale,
            ..TrustEdit::default()
        };
        let wanted = codex_trust(place, &ours);
        if trust {
            lines.push(format!(
                "trusting in {} exactly these Codex CLI hook entries:",
                config.display()
            ));
            for ((key, hash), pos) in wanted.iter().zip(&ours) {
                lines.push(format!(
                    "  {key} = {hash} ({} matcher `{}`: `{}`)",
                    pos.event,
                    pos.matcher.as_deref().unwrap_or(""),
                    pos.command
                ));
            }
            edit.trust = wanted.clone();
        }
        if let Err(e) = install::edit_codex_trust(&config, &edit) {
            return report(&e);
        }
        let states = install::codex_trust_states(&config).unwrap_or_default();
        let all_trusted = wanted.iter().all(|(k, h)| {
            states.iter().any(|s| {
                s.key == *k
                    && s.trusted_hash.as_deref() == Some(h.as_str())
                    && s.enabled != Some(false)
            })
        });
        trusted = json!(all_trusted);
        if !all_trusted {
            warnings.push(format!(
                "Codex CLI runs a hook only once it is trusted, and it does not trust sandgate's \
                 yet: until then no call is gated. Review it in Codex (`/hooks` in the TUI), or run \
                 `sandgate hook install codex{} --trust` to trust exactly sandgate's entries",
                if place.scope == Scope::Project { " --project" } else { "" }
            ));
        }
    }
    if place.scope == Scope::Project {
        let t = trust::folder_trust(agent, &place.cwd, &place.home, &place.codex_dir);
        if !t.is_trusted() {
            warnings.push(t.detail().to_string());
        }
    }
    for w in &warnings {
        eprintln!("sandgate: warning: {w}");
    }
    print(
        global,
        json!({
            "file": place.target.file,
            "changed": outcome == Outcome::Changed,
            "command": command,
            "trusted": trusted,
            "warnings": warnings,
            "message": lines.join("\n"),
        }),
        &lines,
    );
    ExitCode::SUCCESS
}

fn uninstall(global: &GlobalArgs, place: &Place) -> ExitCode {
    let agent = place.agent;
    let name = agent.display_name();
    // Sandgate's entries may be in hooks.json and in config.toml alike.
    let mut files = vec![place.target.clone()];
    if agent == Agent::Codex {
        let dir = place.target.file.parent().unwrap_or(Path::new("."));
        for (file, format) in [
            (dir.join("hooks.json"), install::Format::Json),
            (dir.join("config.toml"), install::Format::Toml),
        ] {
            if file != place.target.file {
                files.push(Target {
                    file,
                    format,
                    ..place.target.clone()
                });
            }
        }
    }
    let mut lines = Vec::new();
    let mut changed = false;
    for target in &files {
        let before = match install::all_handlers(target) {
            Ok(b) => b,
            Err(e) => return report(&e),
        };
        let outcome = match install::uninstall(target, agent) {
            Ok(o) => o,
            Err(e) => return report(&e),
        };
        if outcome == Outcome::Changed {
            changed = true;
            lines.push(format!(
                "removed the sandgate hook for {name} from {}",
                target.file.display()
            ));
        }
        if agent == Agent::Codex {
            let config = place.codex_dir.join("config.toml");
            let removed: Vec<Position> = before
                .iter()
                .filter(|p| install::is_sandgate_command(&p.command, agent))
                .cloned()
                .collect();
            let states = match install::codex_trust_states(&config) {
                Ok(s) => s,
                Err(e) => return report(&e),
            };
            let edit = install::renumber_after_removal(&target.file, &before, &removed, &states);
            match install::edit_codex_trust(&config, &edit) {
                Ok(Outcome::Changed) => {
                    changed = true;
                    if !edit.remove.is_empty() {
                        lines.push(format!(
                            "removed Codex CLI's trust of sandgate's entries from {}",
                            config.display()
                        ));
                    }
                    if !edit.rename.is_empty() {
                        lines.push(format!(
                            "moved the trust of {} other hook entr{} of {} to their new positions",
                            edit.rename.len(),
                            if edit.rename.len() == 1 { "y" } else { "ies" },
                            target.file.display()
                        ));
                    }
                }
                Ok(Outcome::Unchanged) => {}
                Err(e) => return report(&e),
            }
        }
    }
    if !changed {
        lines.push(format!(
            "no sandgate hook for {name} in {}; nothing to remove",
            files
                .iter()
                .map(|t| t.file.display().to_string())
                .collect::<Vec<_>>()
                .join(" or ")
        ));
    }
    print(
        global,
        json!({"file": place.target.file, "changed": changed, "message": lines.join("\n")}),
        &lines,
    );
    ExitCode::SUCCESS
}

/// Whether `program` is found on `PATH`.
fn on_path(program: &str) -> bool {
    crate::program::find(std::ffi::OsStr::new(program)).is_some()
}

/// Whether the program of a hook command can be started.
fn runnable(command: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    match install::command_program(command) {
        Some(p) if p.contains('/') => {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        }
        Some(p) => on_path(p),
        None => false,
    }
}

fn status(global: &GlobalArgs, place: &Place) -> ExitCode {
    let agent = place.agent;
    let name = agent.display_name();
    let ours = match install::positions(&place.target, agent) {
        Ok(p) => p,
        Err(e) => return report(&e),
    };
    let file = place.target.file.display().to_string();
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    let installed = !ours.is_empty();
    if installed {
        for p in &ours {
            lines.push(format!(
                "installed: {file}, {} matcher `{}`: `{}`",
                p.event,
                p.matcher.as_deref().unwrap_or(""),
                p.command
            ));
        }
        let missing: Vec<&str> = place
            .target
            .events
            .iter()
            .copied()
            .filter(|e| !ours.iter().any(|p| p.event == *e))
            .collect();
        if !missing.is_empty() {
            problems.push(format!(
                "no sandgate entry under {} (run `sandgate hook install {}` again)",
                missing.join(", "),
                agent.as_str()
            ));
        }
        if ours
            .iter()
            .any(|p| p.matcher.as_deref() != Some(install::MATCH_ALL))
        {
            problems.push(format!(
                "a sandgate entry does not match every tool (matcher `{}`), so {name} does not \
                 show sandgate every call; run `sandgate hook install {}` again",
                install::MATCH_ALL,
                agent.as_str()
            ));
        }
        for p in &ours {
            if !runnable(&p.command) {
                problems.push(format!(
                    "`{}` cannot be started here (not found or not executable)",
                    install::command_program(&p.command).unwrap_or(&p.command)
                ));
            }
        }
    } else {
        problems.push(format!("no sandgate hook for {name} in {file}"));
    }
    let mut trusted = json!(null);
    if agent == Agent::Codex && installed {
        let config = place.codex_dir.join("config.toml");
        let states = match install::codex_trust_states(&config) {
            Ok(s) => s,
            Err(e) => return report(&e),
        };
        let mut all = true;
        for (key, hash) in codex_trust(place, &ours) {
            let state = states.iter().find(|s| s.key == key);
            let line = match state {
                Some(s) if s.enabled == Some(false) => {
                    all = false;
                    format!("disabled in {}: {key}", config.display())
                }
                Some(s) if s.trusted_hash.as_deref() == Some(hash.as_str()) => {
                    format!("trusted: {key}")
                }
                Some(s) if s.trusted_hash.is_some() => {
                    all = false;
                    format!("modified since it was trusted: {key}")
                }
                _ => {
                    all = false;
                    format!("not trusted: {key}")
                }
            };
            lines.push(line);
        }
        trusted = json!(all);
        if !all {
            problems.push(format!(
                "Codex CLI does not run an untrusted hook; review it in Codex (`/hooks`), or run \
                 `sandgate hook install codex{} --trust`",
                if place.scope == Scope::Project {
                    " --project"
                } else {
                    ""
                }
            ));
        }
    }
    let mut folder = json!(null);
    if place.scope == Scope::Project {
        let t: FolderTrust = trust::folder_trust(agent, &place.cwd, &place.home, &place.codex_dir);
        folder = json!(t.is_trusted());
        if t.is_trusted() {
            lines.push(format!("folder trusted: {}", t.detail()));
        } else {
            problems.push(t.detail().to_string());
        }
    }
    let would_run = problems.is_empty();
    lines.push(if would_run {
        format!("would run: yes, {name} asks sandgate before every tool call")
    } else {
        "would run: no".to_string()
    });
    for p in &problems {
        lines.push(format!("  - {p}"));
    }
    print(
        global,
        json!({
            "agent": agent.as_str(),
            "scope": place.scope.as_str(),
            "file": place.target.file,
            "installed": installed,
            "entries": ours.iter().map(|p| json!({
                "event": p.event, "matcher": p.matcher, "command": p.command,
            })).collect::<Vec<_>>(),
            "trusted": trusted,
            "folder_trusted": folder,
            "would_run": would_run,
            "problems": problems,
        }),
        &lines,
    );
    if would_run {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    }
}
