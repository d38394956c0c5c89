//! Decision and load costs of the policy engine at 10, 1,000 and 10,000 rules.
//!
//! Run with `cargo bench -p sandgate-policy --bench engine`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sandgate_policy::{Context, Policy, Sources, ToolCall, Verdict};

/// A policy of `n` rules: a quarter each of path deny, path allow, command deny, command allow.
fn policy_text(n: usize) -> String {
    let q = (n / 4).max(1);
    let mut s = String::from("permissions:\n  paths:\n    deny:\n");
    for i in 0..q {
        s.push_str(&format!("      - \"/srv/denied{i}/**\"\n"));
    }
    s.push_str("    allow:\n");
    for i in 0..q {
        s.push_str(&format!("      - \"~/w{i}/src/**/*.rs\"\n"));
    }
    s.push_str("      - \"~/projects/**\"\n");
    s.push_str("  commands:\n    deny:\n");
    for i in 0..q {
        s.push_str(&format!("      - \"^tool{i}\\\\s+--force\"\n"));
    }
    s.push_str("    allow:\n");
    for i in 0..q {
        s.push_str(&format!("      - \"^cmd{i}( |$)\"\n"));
    }
    s.push_str("      - \"^git( |$)\"\n");
    s
}

struct Fixture {
    _tmp: tempfile::TempDir,
    ctx: Context,
    sources: Sources,
}

fn fixture(n: usize) -> Fixture {
    fixture_with(n, "")
}

/// `extra` is appended inside the `commands:` block (e.g. `    shell: false\n`).
fn fixture_with(n: usize, extra: &str) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    // An existing file six levels below the home directory.
    let deep = home.join("projects/app/src/module/sub/leaf");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("file.rs"), "fn main() {}\n").unwrap();
    let policy = root.join("permissions.yaml");
    std::fs::write(&policy, policy_text(n) + extra).unwrap();
    let ctx = Context::new(&home.join("projects/app"), &home).unwrap();
    let sources = Sources {
        central: Some(policy),
        ..Sources::default()
    };
    Fixture {
        _tmp: tmp,
        ctx,
        sources,
    }
}

fn decisions(c: &mut Criterion) {
    let mut group = c.benchmark_group("evaluate");
    for n in [10usize, 1_000, 10_000] {
        let f = fixture(n);
        let policy = Policy::load(&f.sources, &f.ctx).unwrap();
        let path_call = ToolCall::new(
            "file_read",
            serde_json::json!({"path": "~/projects/app/src/module/sub/leaf/file.rs"}),
        );
        assert_eq!(policy.evaluate(&path_call, &f.ctx).verdict, Verdict::Allow);
        group.bench_with_input(BenchmarkId::new("path_6_deep", n), &n, |b, _| {
            b.iter(|| policy.evaluate(&path_call, &f.ctx))
        });
        if n == 10 {
            group.bench_function("canonicalize_only_6_deep", |b| {
                b.iter(|| {
                    sandgate_policy::canon::canonicalize(
                        "~/projects/app/src/module/sub/leaf/file.rs",
                        &f.ctx.cwd,
                        &f.ctx.home,
                    )
                })
            });
        }
        let command_call = ToolCall::new(
            "exec_run",
            serde_json::json!({"command": "git status --short"}),
        );
        assert_eq!(
            policy.evaluate(&command_call, &f.ctx).verdict,
            Verdict::Allow
        );
        group.bench_with_input(BenchmarkId::new("command", n), &n, |b, _| {
            b.iter(|| policy.evaluate(&command_call, &f.ctx))
        });
    }
    // Raw mode (`commands.shell: false`): one regex search over the whole string.
    let f = fixture_with(1_000, "    shell: false\n");
    let policy = Policy::load(&f.sources, &f.ctx).unwrap();
    assert!(!policy.settings().shell);
    let command_call = ToolCall::new(
        "exec_run",
        serde_json::json!({"command": "git status --short"}),
    );
    assert_eq!(
        policy.evaluate(&command_call, &f.ctx).verdict,
        Verdict::Allow
    );
    group.bench_function("command_raw_mode/1000", |b| {
        b.iter(|| policy.evaluate(&command_call, &f.ctx))
    });
    group.finish();
}

fn loading(c: &mut Criterion) {
    let mut group = c.benchmark_group("load_and_compile");
    group.sample_size(20);
    for n in [10usize, 1_000, 10_000] {
        let f = fixture(n);
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| Policy::load(&f.sources, &f.ctx).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, decisions, loading);
criterion_main!(benches);
