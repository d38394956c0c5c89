//! `sandgate init [--preset NAME] [--force] [--print]`: write a commented
//! starter policy to the central file, with the JSON Schema beside it.
//!
//! The presets are text (`presets/`): one base, `readonly`, and for each
//! ecosystem the deny rules, allow rules and tests it adds at the marked
//! places. Each preset carries self-tests, so the file it writes checks
//! itself every time it loads. An existing policy is never replaced without
//! `--force`, and then the old file is kept as `NAME.bak` (or `NAME.bak.N`,
//! never replacing an earlier backup).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use sandgate_policy::atomic::{atomic_replace, Mode};
use sandgate_policy::load::{parse_policy, LoadedFile};
use sandgate_policy::{Policy, Sources, Tier};
use serde_json::json;

use crate::setup::GlobalArgs;
use crate::{EXIT_CANNOT_CHECK, EXIT_FAILED};

/// The name of the schema file written beside the policy (the policy's first
/// line points at it).
pub const SCHEMA_FILE: &str = "permissions.schema.json";

const BASE: &str = include_str!("../../presets/base.yaml");
const NODE: &str = include_str!("../../presets/node.yaml");
const RUST: &str = include_str!("../../presets/rust.yaml");
const PYTHON: &str = include_str!("../../presets/python.yaml");

/// A starter policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Preset {
    /// Reading and inspecting allowed, writes ask, destructive commands denied.
    Readonly,
    /// `readonly` plus npm/yarn/pnpm builds, tests and lints.
    Node,
    /// `readonly` plus cargo builds, tests and lints.
    Rust,
    /// `readonly` plus pytest, type checks and lints.
    Python,
}

impl Preset {
    /// Every preset, in the order docs/policy.md lists them.
    #[cfg(test)]
    pub const ALL: [Preset; 4] = [Preset::Readonly, Preset::Node, Preset::Rust, Preset::Python];

    /// The preset's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Readonly => "readonly",
            Preset::Node => "node",
            Preset::Rust => "rust",
            Preset::Python => "python",
        }
    }

    /// The policy file the preset writes.
    pub fn text(self) -> String {
        let addition = match self {
            Preset::Readonly => "",
            Preset::Node => NODE,
            Preset::Rust => RUST,
            Preset::Python => PYTHON,
        };
        let part = |name: &str| section(addition, name);
        let summary = match self {
            Preset::Readonly => {
                "reading and inspecting allowed, writes ask, destructive commands denied"
                    .to_string()
            }
            _ => part("summary").trim().to_string(),
        };
        BASE.replace("@PRESET@", self.name())
            .replace("@SUMMARY@", &summary)
            .replace("@DENY@\n", &part("deny"))
            .replace("@ALLOW@\n", &part("allow"))
            .replace("@NETWORK@\n", &part("network"))
            .replace("@TESTS@\n", &part("tests"))
    }
}

/// The lines of `text` after the marker `#@NAME` up to the next marker.
fn section(text: &str, name: &str) -> String {
    let marker = format!("#@{name}");
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("#@") {
            inside = line.trim_end() == marker;
            continue;
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `init` arguments.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The starter policy.
    #[arg(long, value_enum, default_value = "readonly")]
    pub preset: Preset,
    /// Replace an existing policy file (the old one is kept as `FILE.bak`).
    #[arg(long)]
    pub force: bool,
    /// Print the policy to stdout and write nothing.
    #[arg(long)]
    pub print: bool,
}

/// Run `init`.
pub fn run(global: &GlobalArgs, args: InitArgs) -> ExitCode {
    let text = args.preset.text();
    if args.print {
        print!("{text}");
        return ExitCode::SUCCESS;
    }
    let ctx = match crate::setup::context(global) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let sources = crate::setup::sources(global, &ctx);
    let Some(named) = sources.central.clone() else {
        eprintln!("sandgate: no central policy file is configured");
        return ExitCode::from(EXIT_CANNOT_CHECK);
    };
    let target = match target_file(&named, args.force) {
        Ok(t) => t,
        Err(message) => {
            eprintln!("sandgate: {message}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    // The preset alone must load and pass its own tests here; if it does not,
    // nothing is written.
    let tests = match check_alone(&text, &target, &ctx) {
        Ok(n) => n,
        Err(message) => {
            eprintln!(
                "sandgate: the preset `{}` does not load here, so nothing was written: {message}",
                args.preset.name()
            );
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let written = match write_files(&target, &text) {
        Ok(w) => w,
        Err(message) => {
            eprintln!("sandgate: {message}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    // The whole policy (with the managed and local files) must load too.
    let whole = Policy::load(&sources, &ctx);
    if global.json {
        let out = json!({
            "preset": args.preset.name(),
            "policy": written.policy,
            "schema": written.schema,
            "backup": written.backup,
            "tests": tests,
            "loads": whole.is_ok(),
        });
        println!("{out}");
    } else {
        println!(
            "wrote {} (preset `{}`, {tests} self-tests)",
            written.policy.display(),
            args.preset.name()
        );
        println!(
            "wrote {} (the JSON Schema its first line points at, for editors)",
            written.schema.display()
        );
        if let Some(backup) = &written.backup {
            println!("kept the previous policy as {}", backup.display());
        }
        println!("next: `sandgate policy test` shows each test; `sandgate policy show` the rules");
    }
    match whole {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sandgate: the policy was written, but with the other policy files it does not load: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// The file to write: `named`, or the file a symlink there points to (so a
/// policy kept elsewhere, e.g. in a dotfiles repository, is written in place).
/// An existing file without `--force`, or anything that is not a regular
/// file, is refused.
fn target_file(named: &Path, force: bool) -> Result<PathBuf, String> {
    let meta = match std::fs::symlink_metadata(named) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(named.to_path_buf()),
        Err(e) => {
            return Err(format!(
                "cannot look at `{}`: {}",
                named.display(),
                sandgate_policy::load::io_text(&e)
            ))
        }
    };
    let target = if meta.file_type().is_symlink() {
        std::fs::canonicalize(named).map_err(|e| {
            format!(
                "`{}` is a symlink that cannot be followed ({}); nothing was written",
                named.display(),
                sandgate_policy::load::io_text(&e)
            )
        })?
    } else {
        named.to_path_buf()
    };
    let kind = std::fs::metadata(&target)
        .map_err(|e| format!("cannot look at `{}`: {}", target.display(), e))?
        .file_type();
    if let Some(e) = sandgate_policy::load::not_regular(kind) {
        return Err(format!(
            "`{}` exists and {e}; nothing was written",
            target.display()
        ));
    }
    if !force {
        return Err(format!(
            "`{}` already exists; nothing was written. `sandgate init --force` replaces it \
             and keeps the old file as `{}.bak`",
            named.display(),
            file_name(&target)
        ));
    }
    Ok(target)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Load `text` as the only policy file (at `target`) and run its tests in
/// `ctx`; the number of tests, or why not.
fn check_alone(text: &str, target: &Path, ctx: &sandgate_policy::Context) -> Result<usize, String> {
    let file = parse_policy(text, target).map_err(|p| p.to_string())?;
    let loaded = LoadedFile {
        tier: Tier::Central,
        path: target.to_path_buf(),
        file,
    };
    let sources = Sources {
        central: Some(target.to_path_buf()),
        ..Sources::default()
    };
    let policy = Policy::from_files(sources, &[loaded], ctx).map_err(|e| e.to_string())?;
    Ok(policy.tests().len())
}

/// What `init` wrote.
struct Written {
    policy: PathBuf,
    schema: PathBuf,
    backup: Option<PathBuf>,
}

/// Keep a backup of an existing policy, then write the policy and the schema.
fn write_files(target: &Path, text: &str) -> Result<Written, String> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("cannot create the directory `{}`: {e}", dir.display()))?;
    let backup = if target.exists() {
        Some(backup(target)?)
    } else {
        None
    };
    atomic_replace(target, text.as_bytes(), Mode::Keep { new: 0o644 })
        .map_err(|e| e.to_string())?;
    let schema = dir.join(SCHEMA_FILE);
    let current = std::fs::read(&schema).ok();
    if current.as_deref() != Some(sandgate_policy::validate::SCHEMA.as_bytes()) {
        atomic_replace(
            &schema,
            sandgate_policy::validate::SCHEMA.as_bytes(),
            Mode::Keep { new: 0o644 },
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(Written {
        policy: target.to_path_buf(),
        schema,
        backup,
    })
}

/// Copy `target` to the first free name of `NAME.bak`, `NAME.bak.1`, … (a
/// new file each time: an earlier backup is never replaced).
fn backup(target: &Path) -> Result<PathBuf, String> {
    let bytes =
        sandgate_policy::load::read_regular(target, sandgate_policy::load::MAX_POLICY_BYTES)
            .map_err(|e| {
                format!(
                    "cannot read `{}` to keep a backup ({}); nothing was written",
                    target.display(),
                    sandgate_policy::load::io_text(&e)
                )
            })?;
    let name = file_name(target);
    for n in 0..1000 {
        let candidate = match n {
            0 => target.with_file_name(format!("{name}.bak")),
            n => target.with_file_name(format!("{name}.bak.{n}")),
        };
        let mut file = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(format!(
                    "cannot create the backup `{}`: {e}; nothing was written",
                    candidate.display()
                ))
            }
        };
        file.write_all(&bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| {
                format!(
                    "cannot write the backup `{}`: {e}; nothing was written",
                    candidate.display()
                )
            })?;
        return Ok(candidate);
    }
    Err(format!(
        "`{}` has 1000 backups already; remove some, nothing was written",
        target.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_has_no_marker_left() {
        for preset in Preset::ALL {
            let text = preset.text();
            for marker in [
                "@PRESET@",
                "@SUMMARY@",
                "@DENY@",
                "@ALLOW@",
                "@TESTS@",
                "@NETWORK@",
                "#@",
            ] {
                assert!(!text.contains(marker), "{}: {marker} left", preset.name());
            }
            let file = parse_policy(&text, Path::new("p.yaml"))
                .unwrap_or_else(|p| panic!("{}: {p}", preset.name()));
            // Every program a preset allows, and the options of it that ask,
            // has a self-test (tests/init.rs holds them to the allow rules);
            // the bound keeps a preset a file a person can read through.
            let tests = file.tests.len();
            assert!((20..=100).contains(&tests), "{}: {tests}", preset.name());
            assert!(text.starts_with("# yaml-language-server: $schema=./permissions.schema.json\n"));
        }
        assert!(Preset::Rust.text().contains("'^cargo (build|check|test"));
        assert!(!Preset::Readonly.text().contains("^cargo"));
    }
}
