//! The foundation corpus (`tests/corpus/*.yaml`) in raw mode: every command
//! case decides exactly as the corpus expects when `commands.shell: false`
//! (and, the corpus holding no compound commands, in shell mode too).
//!
//! The binary runs the whole corpus in `crates/sandgate/tests/corpus.rs`; this
//! test evaluates its command cases through the engine with the mode forced.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use sandgate_policy::load::{read_policy_file, LoadedFile};
use sandgate_policy::request::tool_kind;
use sandgate_policy::{Context, Policy, Sources, Tier, ToolCall, ToolKind};

#[path = "../../../tests/support/corpus.rs"]
mod corpus;

use corpus::{build_root, load_cases, Case, ExpectRule};

/// The command cases: exec requests without layout or other special setup.
fn command_cases() -> Vec<Case> {
    load_cases()
        .into_iter()
        .map(|(_, case)| case)
        .filter(|case| {
            let tool = case
                .request
                .as_ref()
                .and_then(|r| r["tool"].as_str())
                .unwrap_or("");
            let layout = &case.layout;
            let plain = layout.dirs.is_empty()
                && layout.files.is_empty()
                && layout.symlinks.is_empty()
                && case.args.iter().all(|a| a == "--no-sandbox");
            tool_kind(tool) == ToolKind::Exec && plain
        })
        .collect()
}

/// Runs one case with `commands.shell` forced to `shell`; returns the mismatches.
fn run(case: &Case, shell: bool) -> Vec<String> {
    let r = build_root(case);
    let ctx = Context::new(&r.cwd, &r.home).unwrap();
    let no_sandbox = case.args.iter().any(|a| a == "--no-sandbox");
    let sources = Sources {
        managed: Some(r.file_of("managed")),
        central: Some(r.file_of("central")),
        local: Some(r.file_of("local")),
        no_sandbox,
    };
    let mut files: Vec<LoadedFile> = Vec::new();
    let mut load_failed = false;
    for (tier, path) in sources.tiers() {
        match read_policy_file(path, tier) {
            Ok(Some(mut f)) => {
                f.file.permissions.commands.shell = (tier == Tier::Central).then_some(shell);
                files.push(f);
            }
            Ok(None) => {}
            Err(_) => load_failed = true,
        }
    }
    if !files.iter().any(|f| f.tier == Tier::Central) {
        let path = r.file_of("central");
        let mut file = sandgate_policy::config::PolicyFile::default();
        file.permissions.commands.shell = Some(shell);
        files.push(LoadedFile {
            tier: Tier::Central,
            path,
            file,
        });
    }
    let policy = if load_failed {
        None
    } else {
        Policy::from_files(sources.clone(), &files, &ctx).ok()
    };
    let expect = &case.expect;
    let mut problems = Vec::new();
    let Some(policy) = policy else {
        if expect.exit != Some(2) {
            problems.push("the policy did not load".to_string());
        }
        return problems;
    };
    if expect.exit == Some(2) {
        problems.push("the policy loaded, the corpus expects a load error".into());
        return problems;
    }
    let Some(request) = &case.request else {
        return vec!["the case has no request".into()];
    };
    let request = r.expand(&request.to_string());
    let call = ToolCall::from_json(&request).unwrap();
    let d = policy.evaluate(&call, &ctx);
    if let Some(v) = &expect.verdict {
        if d.verdict.as_str() != v {
            problems.push(format!("verdict {} ({}), want {v}", d.verdict, d.reason));
        }
    }
    match &expect.rule {
        Some(ExpectRule::None(s)) if s == "none" && d.rule.is_some() => {
            problems.push(format!("rule {:?}, want none", d.rule));
        }
        Some(rule @ ExpectRule::Rule { pattern, list, .. }) => match &d.rule {
            Some(got) => {
                if got.pattern != *pattern || got.list.as_str() != list {
                    problems.push(format!("rule {got}, want {rule:?}"));
                }
            }
            None => problems.push(format!("no rule, want {rule:?}")),
        },
        _ => {}
    }
    if let Some(s) = &expect.subject {
        if d.subject != r.expand(s) {
            problems.push(format!("subject `{}`, want `{}`", d.subject, r.expand(s)));
        }
    }
    for part in &expect.reason_contains {
        let part = r.expand(part);
        if !d.reason.contains(&part) {
            problems.push(format!("reason `{}` lacks `{part}`", d.reason));
        }
    }
    problems
}

fn check(shell: bool) {
    let cases = command_cases();
    assert!(
        cases.len() >= 10,
        "only {} command cases found",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        for p in run(case, shell) {
            failures.push(format!("{}: {p}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn raw_mode_passes_the_command_corpus() {
    check(false);
}

#[test]
fn shell_mode_passes_the_command_corpus() {
    check(true);
}
