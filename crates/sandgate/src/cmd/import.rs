//! `sandgate import claude [FILE]`: convert Claude Code permissions into sandgate rules.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use crate::import;
use crate::setup::GlobalArgs;
use crate::EXIT_CANNOT_CHECK;

/// Where the rules come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImportSource {
    /// A Claude Code settings file with a `permissions` block.
    Claude,
}

/// Convert another tool's permission rules into sandgate rules (printed as YAML).
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The tool whose rules to convert.
    #[arg(value_enum)]
    pub source: ImportSource,
    /// The settings file (default: ./.claude/settings.json).
    pub file: Option<PathBuf>,
}

/// The largest settings file `import` reads.
const MAX_SETTINGS_BYTES: u64 = 8 * 1024 * 1024;

/// Run `import`.
pub fn run(global: &GlobalArgs, args: ImportArgs) -> ExitCode {
    let ctx = match crate::setup::context(global) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let file = args
        .file
        .map(|f| if f.is_absolute() { f } else { ctx.cwd.join(f) })
        .unwrap_or_else(|| ctx.cwd.join(".claude/settings.json"));
    let text = match sandgate_policy::load::read_regular(&file, MAX_SETTINGS_BYTES)
        .and_then(|b| String::from_utf8(b).map_err(std::io::Error::other))
    {
        Ok(t) => t,
        Err(e) => {
            eprintln!(
                "sandgate: cannot read `{}`: {}",
                file.display(),
                sandgate_policy::load::io_text(&e)
            );
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    };
    let base = file.parent().unwrap_or(Path::new("/"));
    let result = match import::convert(&text, base) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sandgate: `{}`: {e}", file.display());
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    };
    let yaml = import::to_yaml(&result, &file.display().to_string());
    if global.json {
        println!(
            "{}",
            serde_json::json!({"yaml": yaml, "rules": result.rules, "skipped": result.skipped})
        );
        return ExitCode::SUCCESS;
    }
    print!("{yaml}");
    if !result.skipped.is_empty() {
        eprintln!("sandgate: {} rule(s) not converted:", result.skipped.len());
        for s in &result.skipped {
            eprintln!("  {} `{}`: {}", s.list, s.rule, s.reason);
        }
    }
    ExitCode::SUCCESS
}
