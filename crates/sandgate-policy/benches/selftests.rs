//! What a policy's self-tests cost a warm load (the hook's path): the
//! `readonly` preset of `sandgate init` without its tests, with its 20 tests
//! and their pass kept by the cache, and with the 20 tests run after the load
//! (what every load would pay if the pass were not kept).
//!
//! Run with `cargo bench -p sandgate-policy --bench selftests`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use sandgate_policy::cache::{self, CacheStatus};
use sandgate_policy::{selftest, Context, Sources};

/// The `readonly` preset, as `sandgate init --preset readonly` writes it.
fn readonly() -> String {
    include_str!("../../sandgate/presets/base.yaml")
        .replace("@PRESET@", "readonly")
        .replace("@SUMMARY@", "reading and inspecting")
        .replace("@DENY@\n", "")
        .replace("@ALLOW@\n", "")
        .replace("@TESTS@\n", "")
}

fn selftests(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let project = home.join("projects/app");
    std::fs::create_dir_all(&project).unwrap();
    let ctx = Context::new(&project, &home).unwrap();
    let with = readonly();
    let without = with[..with.find("\ntests:").unwrap() + 1].to_string();
    let sides = [("without_tests", without), ("with_20_tests", with)];
    let mut fixtures = Vec::new();
    for (name, text) in sides {
        let file = root.join(format!("{name}.yaml"));
        std::fs::write(&file, text).unwrap();
        let sources = Sources {
            central: Some(file),
            ..Sources::default()
        };
        let dir = root.join(format!("cache-{name}"));
        cache::load_with(&sources, &ctx, Some(&dir)).unwrap();
        // The kept path resolution needs its directories a second old.
        std::thread::sleep(std::time::Duration::from_millis(1100));
        cache::load_with(&sources, &ctx, Some(&dir)).unwrap();
        let (policy, status) = cache::load_with(&sources, &ctx, Some(&dir)).unwrap();
        assert_eq!(status, CacheStatus::Hit);
        fixtures.push((name, sources, dir, policy.tests().len()));
    }
    assert_eq!(fixtures[0].3, 0);
    assert_eq!(fixtures[1].3, 20);
    let mut group = c.benchmark_group("warm_load");
    for (name, sources, dir, _) in &fixtures {
        group.bench_function(*name, |b| {
            b.iter(|| cache::load_with(sources, &ctx, Some(dir)).unwrap())
        });
    }
    let (_, sources, dir, _) = &fixtures[1];
    group.bench_function("with_20_tests_run_every_load", |b| {
        b.iter(|| {
            let (policy, _) = cache::load_with(sources, &ctx, Some(dir)).unwrap();
            selftest::check(&policy, &ctx).unwrap();
            policy
        })
    });
    group.finish();
}

criterion_group!(benches, selftests);
criterion_main!(benches);
