//! The shell-aware command gate: a 3-segment compound command at 1,000 rules.
//!
//! Run with `cargo bench -p sandgate-policy --bench shell`.

use criterion::{criterion_group, criterion_main, Criterion};
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

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = Context::new(tmp.path(), tmp.path()).unwrap();
    let shell = policy(&ctx, true);
    let raw = policy(&ctx, false);
    let allowed = "git status && ls -la | grep foo";
    let asked = "git status && ls -la | curl x";
    let denied = "git status && ls -la | tool7 --force";
    // Quotes send the line through tree-sitter-bash instead of the plain-word shortcut.
    let quoted = "git status && ls -la 'my dir' | grep -n \"foo bar\"";
    assert_eq!(shell.evaluate_command(quoted, &ctx).verdict, Verdict::Allow);
    assert_eq!(
        shell.evaluate_command(allowed, &ctx).verdict,
        Verdict::Allow
    );
    assert_eq!(shell.evaluate_command(asked, &ctx).verdict, Verdict::Ask);
    assert_eq!(shell.evaluate_command(denied, &ctx).verdict, Verdict::Deny);

    let mut g = c.benchmark_group("shell_gate_1000_rules");
    g.bench_function("analyse_3_segments", |b| b.iter(|| analyse(allowed)));
    g.bench_function("allow_3_segments", |b| {
        b.iter(|| shell.evaluate_command(allowed, &ctx))
    });
    g.bench_function("analyse_3_segments_quoted", |b| b.iter(|| analyse(quoted)));
    g.bench_function("allow_3_segments_quoted", |b| {
        b.iter(|| shell.evaluate_command(quoted, &ctx))
    });
    g.bench_function("ask_3_segments", |b| {
        b.iter(|| shell.evaluate_command(asked, &ctx))
    });
    g.bench_function("deny_3_segments", |b| {
        b.iter(|| shell.evaluate_command(denied, &ctx))
    });
    g.bench_function("raw_mode_same_command", |b| {
        b.iter(|| raw.evaluate_command(allowed, &ctx))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
