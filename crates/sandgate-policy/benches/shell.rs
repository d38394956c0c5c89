//! The shell-aware command gate: a 3-segment compound command at 1,000 rules.
//!
//! Run with `cargo bench -p sandgate-policy --bench shell`; see `main` for a
//! repeatable instruction count under callgrind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, Criterion};
use sandgate_policy::load::{parse_policy, LoadedFile};
use sandgate_policy::shell::analyse;
use sandgate_policy::{Context, Policy, Sources, Tier, Verdict};

/// 1,000 command rules: 500 deny, 500 allow (among them the ones the command needs).
fn policy_text(shell: bool) -> String {
    let mut s = format!("permissions:\n  commands:\n    shell: {shell}\n    deny:\n");
    for i in 0..500 {
        s.push_str(&format!("      - '^tool{i}\\s+--force'\n"));
    }
    s.push_str("    allow:\n");
    for i in 0..497 {
        s.push_str(&format!("      - '^cmd{i}( |$)'\n"));
    }
    s.push_str("      - '^git( |$)'\n      - '^ls( |$)'\n      - '^grep '\n");
    s
}

fn policy(ctx: &Context, shell: bool) -> Policy {
    let path = ctx.home.join("permissions.yaml");
    let file = parse_policy(&policy_text(shell), &path).unwrap();
    let loaded = LoadedFile {
        tier: Tier::Central,
        path,
        file,
    };
    Policy::from_files(Sources::default(), &[loaded], ctx).unwrap()
}

/// The lines measured: (name, line, verdict, whether tree-sitter-bash is needed).
const CASES: &[(&str, &str, Verdict, bool)] = &[
    (
        "3_segments",
        "git status && ls -la | grep foo",
        Verdict::Allow,
        false,
    ),
    // Simple quoting: the shortcut still takes it.
    (
        "3_segments_quoted",
        "git status && ls -la 'my dir' | grep -n \"foo bar\"",
        Verdict::Allow,
        false,
    ),
    // A command substitution needs tree-sitter-bash; trailing redirections do
    // not. Its value is only known when the command runs, so it could name a
    // protected path: ask, never allowed by a prefix rule.
    (
        "3_segments_substitution",
        "git status && ls -la \"$(git rev-parse --show-toplevel)\" | grep foo",
        Verdict::Ask,
        true,
    ),
    (
        "3_segments_redirection",
        "git status 2>/dev/null && ls -la | grep -n \"foo bar\" > /dev/null",
        Verdict::Allow,
        false,
    ),
    (
        "ask_3_segments",
        "git status && ls -la | curl x",
        Verdict::Ask,
        false,
    ),
    (
        "deny_3_segments",
        "git status && ls -la | tool7 --force",
        Verdict::Deny,
        false,
    ),
];

/// The measured call, out of line so callgrind can count it alone (see `main`).
#[inline(never)]
fn decide(policy: &Policy, line: &str, ctx: &Context) -> Verdict {
    policy.evaluate_command(line, ctx).verdict
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = Context::new(tmp.path(), tmp.path()).unwrap();
    let shell = policy(&ctx, true);
    let raw = policy(&ctx, false);
    for (name, line, verdict, parser) in CASES {
        assert_eq!(
            sandgate_policy::shell::skips_the_parser(line),
            !parser,
            "{name}"
        );
        assert_eq!(
            shell.evaluate_command(line, &ctx).verdict,
            *verdict,
            "{name}"
        );
    }

    let mut g = c.benchmark_group("shell_gate_1000_rules");
    for (name, line, verdict, _) in CASES {
        // `allow_3_segments`, …; the ask and deny cases carry their verdict in their name.
        let decision = match (name.starts_with("3_"), verdict) {
            (true, Verdict::Allow) => format!("allow_{name}"),
            (true, Verdict::Ask) => format!("ask_{name}"),
            (true, Verdict::Deny) => format!("deny_{name}"),
            (false, _) => name.to_string(),
        };
        if name.starts_with("3_") {
            g.bench_function(format!("analyse_{name}"), |b| b.iter(|| analyse(line)));
        }
        g.bench_function(decision, |b| b.iter(|| decide(&shell, line, &ctx)));
    }
    g.bench_function("raw_mode_same_command", |b| {
        b.iter(|| raw.evaluate_command(CASES[0].1, &ctx))
    });
    g.finish();
}

/// `SHELL_BENCH_CASE=NAME SHELL_BENCH_COUNT=N` runs one case N times after one
/// warm-up call (which compiles the regexes it needs) instead of criterion, for
/// an instruction count that does not depend on the machine's load:
/// `valgrind --tool=callgrind --toggle-collect='shell::decide' BENCH` then
/// divide the total by N.
fn count_instructions(case: &str, count: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = Context::new(tmp.path(), tmp.path()).unwrap();
    let shell = policy(&ctx, true);
    let Some((_, line, verdict, _)) = CASES.iter().find(|(name, ..)| *name == case) else {
        panic!("no case `{case}`");
    };
    let _ = shell.evaluate_command(line, &ctx);
    for _ in 0..count {
        assert_eq!(decide(&shell, std::hint::black_box(line), &ctx), *verdict);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
fn main() {
    if let (Ok(case), Ok(count)) = (
        std::env::var("SHELL_BENCH_CASE"),
        std::env::var("SHELL_BENCH_COUNT"),
    ) {
        count_instructions(&case, count.parse().unwrap());
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
