//! What isolation costs: building the plan, preparing each mode, looking
//! for the repositories a workdir holds, and running `true` under each mode
//! next to a plain `sh -c true`.
//!
//! `cargo bench -p sandgate-sandbox --bench isolation`

#![allow(clippy::unwrap_used, clippy::expect_used)]

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
                other_homes: &env.other_homes,
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

/// `repository::protected_entries` for three workdirs: a project with its
/// own `.git` only, a folder of 50 projects (10 of them repositories), and
/// a repository with 40 directories and 3 submodules checked out.
fn bench_repository(c: &mut Criterion) {
    use sandgate_sandbox::repository::protected_entries;
    let git = |dir: &std::path::Path| {
        std::fs::create_dir_all(dir.join("objects")).unwrap();
        std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    };
    let project = tempfile::tempdir().unwrap();
    git(&project.path().join(".git"));
    let folder = tempfile::tempdir().unwrap();
    for i in 0..50 {
        let dir = folder.path().join(format!("p{i}"));
        std::fs::create_dir(&dir).unwrap();
        if i % 5 == 0 {
            git(&dir.join(".git"));
        }
    }
    let modules = tempfile::tempdir().unwrap();
    git(&modules.path().join(".git"));
    let mut listed = String::new();
    for i in 0..40 {
        std::fs::create_dir(modules.path().join(format!("d{i}"))).unwrap();
    }
    for i in 0..3 {
        git(&modules.path().join(format!(".git/modules/m{i}")));
        let checkout = modules.path().join(format!("d{i}/m{i}"));
        std::fs::create_dir_all(&checkout).unwrap();
        std::fs::write(
            checkout.join(".git"),
            format!("gitdir: ../../.git/modules/m{i}\n"),
        )
        .unwrap();
        listed.push_str(&format!("[submodule \"m{i}\"]\n\tpath = d{i}/m{i}\n"));
    }
    std::fs::write(modules.path().join(".gitmodules"), listed).unwrap();
    let mut group = c.benchmark_group("repository");
    for (name, dir) in [
        ("one project", &project),
        ("a folder of 50 projects", &folder),
        ("40 directories, 3 submodules", &modules),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| protected_entries(black_box(dir.path())))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_plan, bench_repository, bench_spawn);
criterion_main!(benches);
