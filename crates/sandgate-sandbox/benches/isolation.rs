//! What isolation costs: building the plan, preparing each mode, and running
//! `true` under each mode next to a plain `sh -c true`.
//!
//! `cargo bench -p sandgate-sandbox --bench isolation`

use std::hint::black_box;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use criterion::{criterion_group, criterion_main, Criterion};
use sandgate_policy::config::{IsolationConfig, IsolationMode};
use sandgate_sandbox::{bwrap, landlock_abi, plan, Environment, Isolation};

fn environment() -> Environment {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"));
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    Environment::new(cwd, home)
}

fn config(mode: IsolationMode) -> IsolationConfig {
    IsolationConfig {
        mode: Some(mode),
        ..IsolationConfig::default()
    }
}

fn modes() -> Vec<IsolationMode> {
    let mut modes = vec![IsolationMode::None];
    if landlock_abi() >= 5 {
        modes.push(IsolationMode::Landlock);
    }
    if bwrap::find().found.is_some() {
        modes.push(IsolationMode::Bwrap);
    }
    modes
}

fn bench_plan(c: &mut Criterion) {
    let env = environment();
    let deny = vec!["/etc/**".to_string(), "**/*.pem".to_string()];
    let cfg = config(IsolationMode::Landlock);
    c.bench_function("plan/build", |b| {
        b.iter(|| {
            plan::build(black_box(&plan::PlanInput {
                config: &cfg,
                deny_patterns: &deny,
                cwd: &env.cwd,
                home: &env.home,
                temp_dir: &env.temp_dir,
            }))
        })
    });
    for mode in modes() {
        let cfg = config(mode);
        c.bench_function(&format!("prepare/{mode:?}"), |b| {
            b.iter(|| {
                let iso = Isolation::new(Some(&cfg), true, &deny, &env).ok();
                iso.and_then(|i| i.command("true").ok())
            })
        });
    }
}

fn bench_spawn(c: &mut Criterion) {
    let env = environment();
    let mut group = c.benchmark_group("spawn_true");
    group.sample_size(50);
    group.bench_function("plain sh -c true", |b| {
        b.iter(|| {
            Command::new("/bin/sh")
                .args(["-c", "true"])
                .stdin(Stdio::null())
                .status()
        })
    });
    for mode in modes() {
        let cfg = config(mode);
        group.bench_function(format!("{mode:?}"), |b| {
            b.iter(|| {
                let iso = Isolation::new(Some(&cfg), true, &[], &env).ok()?;
                iso.command("true")
                    .ok()?
                    .command
                    .stdin(Stdio::null())
                    .status()
                    .ok()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_plan, bench_spawn);
criterion_main!(benches);
