//! `sandgate detect`: run a loop's script detectors and report each verdict.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use sandgate_grant::detect::{run_detectors, worst, DetectorRun, Outcome};

use crate::setup::GlobalArgs;
use crate::EXIT_CANNOT_CHECK;

/// How many trailing output lines a non-passing detector shows.
const TAIL_LINES: usize = 20;

/// Run each script detector of a loop config (argv only, no shell, from the loop
/// directory). Exit code: the worst verdict — 0 pass, 1 fail, 2 cannot run here, 3 error.
#[derive(Debug, Args)]
pub struct DetectArgs {
    /// The loop config (YAML).
    #[arg(value_name = "LOOP.yaml")]
    pub loop_config: PathBuf,
    /// Kill a detector still running after this many seconds and report it as an error.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
}

/// Run `detect`.
pub fn run(global: &GlobalArgs, args: DetectArgs) -> ExitCode {
    let loop_path = super::grant::against_cwd(global, &args.loop_config);
    let config = match sandgate_grant::load(&loop_path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sandgate: {e}");
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    };
    let timeout = match args.timeout {
        None => None,
        Some(secs) => match Duration::try_from_secs_f64(secs) {
            Ok(t) if secs > 0.0 => Some(t),
            _ => {
                eprintln!("sandgate: `--timeout {secs}` is not a positive number of seconds");
                return ExitCode::from(EXIT_CANNOT_CHECK);
            }
        },
    };
    let loop_dir = loop_directory(&loop_path);
    let runs = run_detectors(&config, &loop_dir, timeout);
    let verdict = worst(&runs);

    if global.json {
        let items: Vec<serde_json::Value> = runs
            .iter()
            .map(|r| {
                serde_json::json!({
                    "name": r.name,
                    "command": r.command,
                    "args": r.args,
                    "outcome": r.outcome.as_str(),
                    "exit_code": r.exit_code,
                    "problem": r.problem,
                    "stdout": r.stdout,
                    "stderr": r.stderr,
                })
            })
            .collect();
        let value = serde_json::json!({
            "loop": loop_path.display().to_string(),
            "outcome": verdict.as_str(),
            "detectors": items,
        });
        println!("{value}");
        return ExitCode::from(verdict.exit_code());
    }

    if runs.is_empty() {
        println!("no script detectors in {}", loop_path.display());
        return ExitCode::SUCCESS;
    }
    for run in &runs {
        print_run(run);
    }
    let count = |o: Outcome| runs.iter().filter(|r| r.outcome == o).count();
    println!(
        "{} detector(s): {} pass, {} fail, {} cannot run here, {} error",
        runs.len(),
        count(Outcome::Pass),
        count(Outcome::Fail),
        count(Outcome::CannotRun),
        count(Outcome::Error)
    );
    ExitCode::from(verdict.exit_code())
}

fn print_run(run: &DetectorRun) {
    let mut argv = run.command.clone();
    for arg in &run.args {
        argv.push(' ');
        argv.push_str(arg);
    }
    let how = match (run.exit_code, &run.problem) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(problem)) => problem.clone(),
        (None, None) => "no exit code".into(),
    };
    println!(
        "{:<16} {}  ({argv}; {how})",
        run.outcome.to_string(),
        run.name
    );
    if run.outcome != Outcome::Pass {
        for stream in [&run.stdout, &run.stderr] {
            let lines: Vec<&str> = stream.lines().collect();
            let start = lines.len().saturating_sub(TAIL_LINES);
            for line in &lines[start..] {
                println!("    | {line}");
            }
        }
    }
}

/// The directory holding the loop config; detectors run from there.
fn loop_directory(loop_path: &Path) -> PathBuf {
    let dir = match loop_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::canonicalize(&dir).unwrap_or(dir)
}
