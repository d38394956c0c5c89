//! `file_grep` over a generated tree of 50,000 files, side by side with `rg`
//! (ripgrep) on the same tree when it is installed.
//!
//! `cargo bench -p sandgate-tools --bench grep`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use sandgate_policy::ask::NoHuman;
use sandgate_policy::{Context, Policy, Sources};
use sandgate_tools::Dispatcher;
use serde_json::json;

const DIRS: usize = 500;
const FILES_PER_DIR: usize = 100;

/// 50,000 small text files (about 1 KiB each) in 500 directories; every 500th
/// file holds the needle.
fn generate(root: &Path) {
    let filler: String = (0..16)
        .map(|i| format!("line {i} of ordinary text that does not match the pattern at all\n"))
        .collect();
    for d in 0..DIRS {
        let dir = root.join(format!("d{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES_PER_DIR {
            let mut text = filler.clone();
            if (d * FILES_PER_DIR + f).is_multiple_of(500) {
                text.push_str("here is the zebra_needle_42 we look for\n");
            }
            std::fs::write(dir.join(format!("f{f:03}.txt")), text).unwrap();
        }
    }
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let tree = home.join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    generate(&tree);
    let central = home.join(".sandgate/permissions.yaml");
    std::fs::create_dir_all(central.parent().unwrap()).unwrap();
    std::fs::write(
        &central,
        "permissions:\n  paths:\n    deny: [\"~/tree/d000/**\", \"**/*.pem\"]\n    allow: [\"~/tree/**\"]\n",
    )
    .unwrap();
    let ctx = Context::new(&tree, &home).unwrap();
    let sources = Sources {
        managed: None,
        central: Some(central),
        local: None,
        no_sandbox: false,
    };
    let policy = Policy::load(&sources, &ctx).unwrap();
    let tools = Dispatcher::new(
        policy,
        ctx,
        Arc::new(NoHuman {
            reason: "benchmark".into(),
        }),
        Box::new(|_, _, _| {}),
    );
    let args = json!({"pattern": "zebra_needle_\\d+", "path": tree, "max_results": 10000});
    let out = tools.call("file_grep", &args).unwrap();
    assert_eq!(out.structured["matches"].as_array().map(Vec::len), Some(99));

    let mut group = c.benchmark_group("grep_50k_files");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("file_grep", |b| {
        b.iter(|| tools.call("file_grep", &args).unwrap())
    });
    let rg = Command::new("rg").arg("--version").output();
    if rg.is_ok_and(|o| o.status.success()) {
        group.bench_function("rg", |b| {
            b.iter(|| {
                Command::new("rg")
                    .args(["-n", "zebra_needle_\\d+"])
                    .arg(&tree)
                    .stdout(Stdio::null())
                    .status()
                    .unwrap()
            })
        });
    } else {
        eprintln!("rg is not installed (apt-get install ripgrep); only file_grep is measured");
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
