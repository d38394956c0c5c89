//! `sandgate audit tail|summary|suggest`: the audit log read back.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde::Serialize;
use serde_json::json;

use crate::audit::read::{printable, End, Entry, Log};
use crate::audit::suggest::{suggest, Engine};
use crate::setup::GlobalArgs;
use crate::{EXIT_CANNOT_CHECK, EXIT_OK};

/// `sandgate audit …`.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// The last records, oldest first (`--follow` keeps printing new ones).
    Tail(TailArgs),
    /// What was asked most, and which asks a human allowed most.
    Summary(SummaryArgs),
    /// For repeated asks, the narrowest allow rule that would have settled them.
    Suggest(SuggestArgs),
}

/// `audit tail` arguments.
#[derive(Debug, Args)]
pub struct TailArgs {
    /// How many records.
    #[arg(short = 'n', long = "lines", default_value_t = 10, value_name = "N")]
    pub lines: usize,
    /// Keep printing records as they are written (also across a rotation), until interrupted.
    #[arg(short, long)]
    pub follow: bool,
}

/// `audit summary` arguments.
#[derive(Debug, Args)]
pub struct SummaryArgs {
    /// How many subjects each list shows.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
}

/// `audit suggest` arguments.
#[derive(Debug, Args)]
pub struct SuggestArgs {
    /// How many asks make a suggestion.
    #[arg(long, default_value_t = 2, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub min: u64,
}

/// Run an `audit` subcommand.
pub fn run(global: &GlobalArgs, command: AuditCommand) -> ExitCode {
    let Some(path) = crate::auditlog::configured_path() else {
        eprintln!(
            "sandgate: cannot find the audit log: neither `SANDGATE_AUDIT_LOG` nor `HOME` is set"
        );
        return ExitCode::from(EXIT_CANNOT_CHECK);
    };
    let log = match crate::audit::read::read(&path) {
        Ok(log) => log,
        Err(e) => {
            eprintln!("sandgate: {e}");
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    };
    if let Some(note) = log.skipped_note() {
        eprintln!("sandgate: note: {note}");
    }
    if log.files.is_empty() && !global.json {
        eprintln!(
            "sandgate: note: there is no audit log at `{}` yet",
            path.display()
        );
    }
    match command {
        AuditCommand::Tail(args) => tail(global, &path, &log, &args),
        AuditCommand::Summary(args) => summary(global, &log, &args),
        AuditCommand::Suggest(args) => suggest_rules(global, &log, &args),
    }
}

fn print_json(value: &impl Serialize) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("sandgate: cannot print JSON: {e}"),
    }
}

/// One record as a line of text.
fn tail_line(e: &Entry) -> String {
    let outcome = e.outcome();
    let verdict = if outcome == e.verdict.as_str() {
        e.verdict.as_str().to_string()
    } else {
        format!("{}→{outcome}", e.verdict.as_str())
    };
    let mut line = format!(
        "{}  {verdict:<10} {:<12} {:<10} {}",
        e.time.as_deref().unwrap_or("-"),
        e.surface.as_deref().unwrap_or("-"),
        e.tool,
        printable(&e.subject)
    );
    if let Some(became) = &e.became {
        line.push_str(&format!("  ({})", printable(became)));
    }
    line
}

fn tail_json(e: &Entry) -> String {
    let mut value = serde_json::to_value(e).unwrap_or_default();
    if let Some(obj) = value.as_object_mut() {
        obj.insert("outcome".into(), json!(e.outcome()));
        obj.retain(|_, v| !v.is_null());
    }
    value.to_string()
}

fn tail(global: &GlobalArgs, path: &Path, log: &Log, args: &TailArgs) -> ExitCode {
    let start = log.entries.len().saturating_sub(args.lines);
    let mut out = std::io::stdout().lock();
    for e in &log.entries[start..] {
        let line = if global.json {
            tail_json(e)
        } else {
            tail_line(e)
        };
        if writeln!(out, "{line}").is_err() {
            return ExitCode::from(crate::EXIT_FAILED);
        }
    }
    let _ = out.flush();
    drop(out);
    if args.follow {
        return follow(global, path, log.end);
    }
    ExitCode::from(EXIT_OK)
}

/// Print the records appended to `path` after `end` (where the first
/// reading stopped; a file that is no longer the one read, or none then, is
/// new and read from its start). A rotation (the file renamed, a new one
/// begun) is noticed by its inode: what is left of the old file is read to
/// its end, then the new one from its start.
fn follow(global: &GlobalArgs, path: &Path, end: Option<End>) -> ExitCode {
    let mut current = open_from_start(path).and_then(|(mut file, inode)| {
        if let Some(end) = end.filter(|e| e.inode == inode) {
            file.seek(SeekFrom::Start(end.offset)).ok()?;
        }
        Some((file, inode))
    });
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let Some((file, inode)) = &mut current else {
            current = open_from_start(path);
            if current.is_none() {
                pause();
            }
            continue;
        };
        // Looked at before reading: whatever was written to the old file
        // before it was renamed is then read below.
        let rotated = std::fs::metadata(path).map_or(true, |m| m.ino() != *inode);
        let mut chunk = Vec::new();
        if file.read_to_end(&mut chunk).is_ok() {
            pending.extend_from_slice(&chunk);
        }
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let Ok(entry) = serde_json::from_slice::<Entry>(&line) else {
                continue;
            };
            let text = if global.json {
                tail_json(&entry)
            } else {
                tail_line(&entry)
            };
            let mut out = std::io::stdout().lock();
            if writeln!(out, "{text}").and_then(|_| out.flush()).is_err() {
                return ExitCode::from(crate::EXIT_FAILED);
            }
        }
        if rotated {
            pending.clear();
            current = open_from_start(path);
            continue;
        }
        pause();
    }
}

fn pause() {
    std::thread::sleep(Duration::from_millis(200));
}

fn open_from_start(path: &Path) -> Option<(std::fs::File, u64)> {
    let file = sandgate_policy::load::open_regular(path).ok()?;
    let inode = file.metadata().ok()?.ino();
    Some((file, inode))
}

/// A subject and how often it came up.
#[derive(Debug, Serialize)]
struct Counted {
    tool: String,
    subject: String,
    count: usize,
}

fn top<'a>(entries: impl Iterator<Item = &'a Entry>, n: usize) -> Vec<Counted> {
    let mut counts: HashMap<(&str, &str), usize> = HashMap::new();
    for e in entries {
        *counts.entry((&e.tool, &e.subject)).or_insert(0) += 1;
    }
    let mut all: Vec<((&str, &str), usize)> = counts.into_iter().collect();
    all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    all.into_iter()
        .take(n)
        .map(|((tool, subject), count)| Counted {
            tool: tool.to_string(),
            subject: subject.to_string(),
            count,
        })
        .collect()
}

fn summary(global: &GlobalArgs, log: &Log, args: &SummaryArgs) -> ExitCode {
    let mut verdicts: [usize; 3] = [0; 3];
    let mut outcomes: HashMap<&str, usize> = HashMap::new();
    for e in &log.entries {
        verdicts[match e.verdict.as_str() {
            "allow" => 0,
            "ask" => 1,
            _ => 2,
        }] += 1;
        *outcomes.entry(e.outcome()).or_insert(0) += 1;
    }
    let asked = top(
        log.entries
            .iter()
            .filter(|e| e.verdict == crate::audit::read::VerdictWord::Ask),
        args.top,
    );
    let allowed = top(
        log.entries.iter().filter(|e| e.allowed_by_a_human()),
        args.top,
    );
    let from = log.entries.iter().find_map(|e| e.time.clone());
    let to = log.entries.iter().rev().find_map(|e| e.time.clone());
    if global.json {
        print_json(&json!({
            "files": log.files,
            "records": log.entries.len(),
            "skipped": log.skipped,
            "broken": log.broken,
            "from": from,
            "to": to,
            "verdicts": {"allow": verdicts[0], "ask": verdicts[1], "deny": verdicts[2]},
            "outcomes": {
                "allow": outcomes.get("allow").copied().unwrap_or(0),
                "ask": outcomes.get("ask").copied().unwrap_or(0),
                "deny": outcomes.get("deny").copied().unwrap_or(0),
            },
            "asked_most": asked,
            "allowed_by_a_human_most": allowed,
        }));
        return ExitCode::from(EXIT_OK);
    }
    let mut out = String::new();
    let files: Vec<String> = log.files.iter().map(|f| f.display().to_string()).collect();
    out.push_str(&format!(
        "audit log: {}\n",
        if files.is_empty() {
            "(none yet)".to_string()
        } else {
            files.join(", ")
        }
    ));
    out.push_str(&format!(
        "records: {} ({} allow, {} ask, {} deny)",
        log.entries.len(),
        verdicts[0],
        verdicts[1],
        verdicts[2]
    ));
    if let (Some(from), Some(to)) = (&from, &to) {
        out.push_str(&format!(", {from} to {to}"));
    }
    out.push('\n');
    list_text(&mut out, "asked most:", &asked);
    list_text(&mut out, "asks a human allowed most:", &allowed);
    print!("{out}");
    ExitCode::from(EXIT_OK)
}

fn list_text(out: &mut String, title: &str, items: &[Counted]) {
    out.push_str(title);
    if items.is_empty() {
        out.push_str(" none\n");
        return;
    }
    out.push('\n');
    for c in items {
        out.push_str(&format!(
            "  {:>6}  {:<10} {}\n",
            c.count,
            c.tool,
            printable(&c.subject)
        ));
    }
}

fn suggest_rules(global: &GlobalArgs, log: &Log, args: &SuggestArgs) -> ExitCode {
    let ctx = match crate::setup::context(global) {
        Ok(c) => c,
        Err(code) => return code,
    };
    // The rules are what is suggested about: `--no-sandbox`, which would
    // allow everything, does not apply here.
    let sources = crate::setup::sources_with_the_gate_on(global, &ctx);
    let engine = match Engine::load(&sources, &ctx) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("sandgate: {e}");
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    };
    let min = usize::try_from(args.min).unwrap_or(usize::MAX);
    let report = suggest(log, &engine, min);
    if global.json {
        print_json(&json!({
            "files": log.files,
            "skipped": log.skipped,
            "asked": report.asked,
            "decided_now": report.decided_now,
            "suggestions": report.suggestions,
            "withheld": report.withheld,
            "no_safe_rule": report.no_safe_rule,
        }));
        return ExitCode::from(EXIT_OK);
    }
    let mut out = String::new();
    if report.suggestions.is_empty() {
        out.push_str(&format!(
            "no suggestions: no question was asked {} times or more that one rule could settle safely\n",
            args.min
        ));
    }
    for s in &report.suggestions {
        out.push_str(&format!(
            "{:>6}  {}\n        e.g. {}\n        {}\n",
            s.count,
            printable(&s.rule),
            s.examples
                .iter()
                .map(|e| format!("`{}`", printable(e)))
                .collect::<Vec<_>>()
                .join(", "),
            printable(&s.command)
        ));
    }
    for w in &report.withheld {
        out.push_str(&format!(
            "not suggested: `{}` ({} asks): {}\n",
            printable(&w.rule),
            w.count,
            printable(&w.why)
        ));
    }
    for n in &report.no_safe_rule {
        out.push_str(&format!(
            "asked often; no safe rule: `{}` ({} asks): {}\n",
            printable(&n.command),
            n.count,
            printable(&n.why)
        ));
    }
    if report.decided_now > 0 {
        out.push_str(&format!(
            "{} of {} asks are decided by the current policy without asking\n",
            report.decided_now, report.asked
        ));
    }
    print!("{out}");
    ExitCode::from(EXIT_OK)
}
