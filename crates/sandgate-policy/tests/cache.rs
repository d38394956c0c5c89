//! The compiled-policy cache never changes a decision.
//!
//! Every policy of the golden corpus (`tests/corpus/`) is loaded without the
//! cache, through a freshly written cache entry, and through a cache hit; each
//! is asked every request of the whole corpus, and the decisions (verdict,
//! subject, rule, reason) must be identical. A large generated policy is
//! compared the same way over a generated table of commands and paths, and a
//! property test compares the literal prefilter with plain regex matching.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use sandgate_policy::cache::{self, CacheStatus};
use sandgate_policy::rules::{CommandRules, SourceRule};
use sandgate_policy::{Context, Decision, List, Origin, Policy, Sources, ToolCall, Verdict};

#[path = "../../../tests/support/corpus.rs"]
mod corpus;

use corpus::build_root;

/// Every case of the golden corpus.
fn corpus_cases() -> Vec<corpus::Case> {
    corpus::load_cases()
        .into_iter()
        .map(|(_, case)| case)
        .collect()
}

/// The three ways to load, and their decisions on `calls`; panics on any difference.
fn assert_same_decisions(
    sources: &Sources,
    ctx: &Context,
    cache_dir: &Path,
    calls: &[ToolCall],
    what: &str,
) {
    let uncached = Policy::load(sources, ctx);
    let first = cache::load_with(sources, ctx, Some(cache_dir));
    let second = cache::load_with(sources, ctx, Some(cache_dir));
    match (&uncached, &first, &second) {
        (Err(a), Err(b), Err(c)) => {
            assert_eq!(a.to_string(), b.to_string(), "{what}: load errors differ");
            assert_eq!(a.to_string(), c.to_string(), "{what}: load errors differ");
        }
        (Ok(plain), Ok((rebuilt, s1)), Ok((hit, s2))) => {
            assert!(
                matches!(s1, CacheStatus::Rebuilt | CacheStatus::Hit),
                "{what}: first load {s1:?}"
            );
            assert_eq!(*s2, CacheStatus::Hit, "{what}: second load");
            assert_eq!(plain.settings().sandbox, hit.settings().sandbox);
            assert_eq!(
                plain.settings().sandbox_reason,
                hit.settings().sandbox_reason
            );
            assert_eq!(plain.settings().shell, hit.settings().shell);
            assert_eq!(plain.settings().gemini_ask, hit.settings().gemini_ask);
            assert_eq!(
                plain.settings().prompt_timeout,
                hit.settings().prompt_timeout
            );
            assert_eq!(plain.command_rules(), hit.command_rules());
            assert_eq!(plain.path_rules(), hit.path_rules());
            assert_eq!(plain.ignored_rules().len(), hit.ignored_rules().len());
            assert_eq!(
                plain.network().map(|n| n.rules()),
                hit.network().map(|n| n.rules()),
                "{what}: network entries differ"
            );
            for call in calls {
                let want: Decision = plain.evaluate(call, ctx);
                assert_eq!(want, rebuilt.evaluate(call, ctx), "{what}: {call:?}");
                assert_eq!(want, hit.evaluate(call, ctx), "{what}: {call:?}");
            }
        }
        _ => panic!(
            "{what}: loads disagree: uncached {:?}, rebuilt {:?}, hit {:?}",
            uncached.as_ref().err(),
            first.as_ref().err(),
            second.as_ref().err()
        ),
    }
}

#[test]
fn cached_and_uncached_decisions_agree_over_the_whole_corpus() {
    let cases = corpus_cases();
    assert!(cases.len() > 10, "the corpus has cases");
    let requests: Vec<String> = cases
        .iter()
        .filter_map(|c| c.request.as_ref().map(|r| r.to_string()))
        .collect();
    let mut checked = 0;
    for case in &cases {
        let r = build_root(case);
        let mut cwd = r.cwd.clone();
        let mut no_sandbox = false;
        let mut args = case.args.iter();
        let mut supported = true;
        while let Some(a) = args.next() {
            match a.as_str() {
                "--no-sandbox" => no_sandbox = true,
                "--cwd" => cwd = PathBuf::from(r.expand(args.next().unwrap())),
                _ => supported = false,
            }
        }
        if !supported {
            continue;
        }
        let Ok(ctx) = Context::new(&cwd, &r.home) else {
            continue;
        };
        let sources = Sources {
            managed: Some(r.root.join("etc/sandgate/permissions.yaml")),
            central: Some(r.home.join(".sandgate/permissions.yaml")),
            local: Some(ctx.cwd.join(".sandgate/permissions.yaml")),
            no_sandbox,
        };
        // Every request of the corpus, asked of this case's policy.
        let calls: Vec<ToolCall> = requests
            .iter()
            .filter_map(|text| ToolCall::from_json(&r.expand(text)).ok())
            .collect();
        let cache_dir = r.root.join("cache");
        assert_same_decisions(&sources, &ctx, &cache_dir, &calls, &case.name);
        checked += 1;
    }
    assert!(
        checked * 2 > cases.len(),
        "most cases were checked ({checked})"
    );
}

/// A policy of `n` path and `n` command rules in each list, in many shapes.
fn big_policy(n: usize) -> String {
    let words = [
        "git", "cargo", "npm", "make", "docker", "kubectl", "ls", "cat", "sed", "rm",
    ];
    let subs = [
        "status", "build", "test", "run", "push", "log", "diff", "exec",
    ];
    let mut out = String::from("permissions:\n  paths:\n    deny:\n");
    for i in 0..n {
        out += &match i % 4 {
            0 => format!("      - '/srv/data{i}/secrets/**'\n"),
            1 => format!("      - '~/private/p{i}/*.key'\n"),
            2 => format!("      - '/var/lib/app{i}/**/*.db'\n"),
            _ => format!("      - './vendor/pkg{i}/**'\n"),
        };
    }
    out += "    allow:\n";
    for i in 0..n {
        out += &match i % 4 {
            0 => format!("      - '~/projects/proj{i}/**'\n"),
            1 => format!("      - '/tmp/work{i}/*.txt'\n"),
            2 => format!("      - './src/mod{i}/**/*.rs'\n"),
            _ => format!("      - '/opt/tools{i}/{{bin,lib}}/*'\n"),
        };
    }
    out += "  commands:\n    deny:\n";
    for i in 0..n {
        let (w, s) = (words[i % words.len()], subs[i % subs.len()]);
        out += &match i % 6 {
            0 => format!("      - '^\\s*{w}\\s+{s}\\s+--danger{i}'\n"),
            1 => format!("      - '\\|\\s*{w}{i}\\b'\n"),
            2 => format!("      - '^{w} {s} (-f|--force) target{i}'\n"),
            3 => format!("      - '(?i)^{w}\\s+{s}{i}$'\n"),
            4 => format!("      - '{w}[0-9]+\\.{s}{i}'\n"),
            _ => format!("      - '[;&|]\\s*{w}$'\n"),
        };
    }
    out += "    allow:\n";
    for i in 0..n {
        let (w, s) = (words[i % words.len()], subs[i % subs.len()]);
        out += &match i % 5 {
            0 => format!("      - '^{w} {s}( |$)'\n"),
            1 => format!("      - '^{w} {s} --project p{i}( |$)'\n"),
            2 => format!("      - '^{w}\\s+(-v\\s+)?{s}{i}\\b'\n"),
            3 => format!("      - '^(sudo\\s+)?{w} {s}-{i} [a-z0-9_./-]+$'\n"),
            _ => format!("      - '^(?i:{w})\\s.*\\b{s}$'\n"),
        };
    }
    out += "  network:\n    deny: ['*.ngrok.io', 'bad.example.org']\n    allow:\n";
    for i in 0..n {
        out += &match i % 4 {
            0 => format!("      - 'host{i}.example.org'\n"),
            1 => format!("      - '*.sub{i}.example.net:22'\n"),
            2 => format!("      - '10.0.{}.{}:8080'\n", i / 250, i % 250),
            _ => format!("      - '[fd00::{i:x}]'\n"),
        };
    }
    out
}

/// `text` as the central policy in `home`, and the sources of a load from `cwd`.
fn central_policy(home: &Path, cwd: &Path, text: &str) -> (PathBuf, Sources) {
    let central = home.join(".sandgate/permissions.yaml");
    std::fs::create_dir_all(central.parent().unwrap()).unwrap();
    std::fs::write(&central, text).unwrap();
    let sources = Sources {
        managed: None,
        central: Some(central.clone()),
        local: Some(cwd.join(".sandgate/permissions.yaml")),
        no_sandbox: false,
    };
    (central, sources)
}

#[test]
fn cached_and_uncached_decisions_agree_on_a_large_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let cwd = home.join("work");
    std::fs::create_dir_all(cwd.join("src/mod2")).unwrap();
    let (central, sources) = central_policy(&home, &cwd, &big_policy(120));
    let ctx = Context::new(&cwd, &home).unwrap();
    let words = [
        "git", "GIT", "cargo", "npm", "make", "docker", "kubectl", "ls", "cat", "sed", "rm",
        "sudo git",
    ];
    let subs = [
        "status", "STATUS", "build", "test", "run", "push", "log", "diff", "exec",
    ];
    let mut calls = Vec::new();
    for (i, w) in words.iter().enumerate() {
        for (j, s) in subs.iter().enumerate() {
            let n = i * 10 + j;
            for command in [
                format!("{w} {s}"),
                format!("{w} {s} --danger{n}"),
                format!("  {w}   {s}   --danger{n}"),
                format!("echo x | {w}{n}"),
                format!("{w} {s} -f target{n}"),
                format!("{w} {s}{n}"),
                format!("{w}42.{s}{n}"),
                format!("{w} {s} --project p{n} --verbose"),
                format!("{w} -v {s}{n}"),
                format!("{w} {s}-{n} ./a/b"),
                format!("true; {w}"),
                format!("{w} foo {s}"),
            ] {
                calls.push(ToolCall::new(
                    "exec_run",
                    serde_json::json!({ "command": command }),
                ));
            }
        }
    }
    for i in 0..130 {
        for path in [
            format!("/srv/data{i}/secrets/x"),
            format!("~/private/p{i}/id.key"),
            format!("/var/lib/app{i}/a/b/c.db"),
            format!("vendor/pkg{i}/lib.rs"),
            format!("~/projects/proj{i}"),
            format!("/tmp/work{i}/notes.txt"),
            format!("src/mod{i}/a/b.rs"),
            format!("/opt/tools{i}/bin/tool"),
            format!("/opt/tools{i}/share/x"),
            "~/.ssh/id_rsa".to_string(),
        ] {
            calls.push(ToolCall::new(
                "file_read",
                serde_json::json!({ "path": path }),
            ));
        }
    }
    let cache_dir = root.join("cache");
    assert_same_decisions(&sources, &ctx, &cache_dir, &calls, "large policy");

    // Stale: a changed file is a different key, so the entry is rebuilt.
    let mut text = std::fs::read_to_string(&central).unwrap();
    text = text.replace(
        "    allow:\n      - '^git status( |$)'",
        "    allow:\n      - '^git statusx'",
    );
    std::fs::write(&central, &text).unwrap();
    let (_, status) = cache::load_with(&sources, &ctx, Some(&cache_dir)).unwrap();
    assert_eq!(
        status,
        CacheStatus::Rebuilt,
        "a changed policy rebuilds the entry"
    );
    assert_same_decisions(&sources, &ctx, &cache_dir, &calls, "large policy, edited");

    // Corrupt or foreign entries are ignored and rewritten.
    let entry = cache_files(&cache_dir, "policy-").remove(0);
    let original = std::fs::read(&entry).unwrap();
    let mut corrupt = original.clone();
    let last = corrupt.len() - 10;
    corrupt[last] ^= 0x01;
    for (what, bytes) in [
        ("corrupt body", corrupt),
        ("truncated", original[..original.len() / 2].to_vec()),
        ("another version", other_version(&original)),
        ("garbage", b"not a cache".to_vec()),
    ] {
        std::fs::write(&entry, bytes).unwrap();
        let (policy, status) = cache::load_with(&sources, &ctx, Some(&cache_dir)).unwrap();
        assert_eq!(status, CacheStatus::Rebuilt, "{what}: ignored and rebuilt");
        let plain = Policy::load(&sources, &ctx).unwrap();
        for call in &calls {
            assert_eq!(
                plain.evaluate(call, &ctx),
                policy.evaluate(call, &ctx),
                "{what}"
            );
        }
        let (_, status) = cache::load_with(&sources, &ctx, Some(&cache_dir)).unwrap();
        assert_eq!(
            status,
            CacheStatus::Hit,
            "{what}: the rebuilt entry is used"
        );
    }
}

/// The files in `cache_dir` whose name starts with `prefix`: `policy-` for the
/// rules, `paths-` for the kept path resolutions.
fn cache_files(cache_dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(cache_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    files.sort();
    files
}

fn resolution_files(cache_dir: &Path) -> Vec<PathBuf> {
    cache_files(cache_dir, "paths-")
}

#[test]
fn kept_path_resolutions_follow_the_filesystem() {
    // A resolution depends on every directory it reads, from `/` down, and is
    // kept only when none changed in the last second: `/tmp` changes all the
    // time while tests run, `/var/tmp` hardly ever.
    let tmp = tempfile::tempdir_in("/var/tmp")
        .or_else(|_| tempfile::tempdir())
        .unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let cwd = home.join("work");
    let secret = root.join("secret");
    std::fs::create_dir_all(cwd.join("src")).unwrap();
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("key"), "x").unwrap();
    // `link` does not exist yet: the deny rule resolves to itself.
    let (_, sources) = central_policy(
        &home,
        &cwd,
        "permissions:\n  paths:\n    deny: ['~/work/link/**']\n    allow: ['~/**', './src/**', '/srv/**']\n",
    );
    let ctx = Context::new(&cwd, &home).unwrap();
    let cache_dir = root.join("cache");
    let read = |path: &Path| ToolCall::new("file_read", serde_json::json!({ "path": path }));
    // The secret, named by its own path: only a deny rule resolved through
    // `link` once it exists covers it.
    let probe = read(&secret.join("key"));
    let decide = |call: &ToolCall| {
        let (policy, status) = cache::load_with(&sources, &ctx, Some(&cache_dir)).unwrap();
        (policy.evaluate(call, &ctx).verdict, status)
    };
    let before = Policy::load(&sources, &ctx)
        .unwrap()
        .evaluate(&probe, &ctx)
        .verdict;
    assert_eq!(before, Verdict::Ask);

    // Directories changed less than a second ago: nothing is kept.
    assert_eq!(decide(&probe), (Verdict::Ask, CacheStatus::Rebuilt));
    assert_eq!(decide(&probe), (Verdict::Ask, CacheStatus::Hit));
    assert!(resolution_files(&cache_dir).is_empty());

    // Once they have settled, the resolution is kept, and then used as is.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(decide(&probe), (Verdict::Ask, CacheStatus::Hit));
    let kept = resolution_files(&cache_dir);
    assert_eq!(kept.len(), 1, "one resolution for this working directory");
    let written = std::fs::read(&kept[0]).unwrap();
    assert_eq!(decide(&probe), (Verdict::Ask, CacheStatus::Hit));
    assert_eq!(
        std::fs::read(&kept[0]).unwrap(),
        written,
        "used, not rewritten"
    );

    // A symlink appears where the deny rule's prefix was missing: the kept
    // resolution is stale and must not be used.
    std::os::unix::fs::symlink(&secret, cwd.join("link")).unwrap();
    let uncached = Policy::load(&sources, &ctx).unwrap().evaluate(&probe, &ctx);
    assert_eq!(
        uncached.verdict,
        Verdict::Deny,
        "the symlink changes the answer"
    );
    assert_eq!(decide(&probe).0, Verdict::Deny);

    // A resolution that meets a symlink is never kept.
    std::fs::remove_file(&kept[0]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(decide(&probe).0, Verdict::Deny);
    assert!(resolution_files(&cache_dir).is_empty());

    // The symlink goes away: back to the first answer, kept again once settled.
    std::fs::remove_file(cwd.join("link")).unwrap();
    assert_eq!(decide(&probe).0, Verdict::Ask);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(decide(&probe).0, Verdict::Ask);
    let kept = resolution_files(&cache_dir);
    assert_eq!(kept.len(), 1);

    // A corrupt resolution file is ignored (and replaced).
    let mut bytes = std::fs::read(&kept[0]).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 0x20;
    std::fs::write(&kept[0], &bytes).unwrap();
    assert_eq!(decide(&probe).0, Verdict::Ask);
    assert_ne!(std::fs::read(&kept[0]).unwrap(), bytes);
}

/// The entry as another sandgate version would have written it: the same bytes
/// but the version line of the (text) header.
fn other_version(entry: &[u8]) -> Vec<u8> {
    let version = env!("CARGO_PKG_VERSION").as_bytes();
    let at = entry
        .windows(version.len() + 2)
        .position(|w| {
            w[0] == b'\n' && &w[1..=version.len()] == version && w[version.len() + 1] == b'\n'
        })
        .expect("the header names the version on a line of its own")
        + 1;
    let mut out = entry[..at].to_vec();
    out.extend_from_slice(b"0.0.0-other");
    out.extend_from_slice(&entry[at + version.len()..]);
    out
}

#[test]
fn a_broken_policy_is_never_cached() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let central = root.join("permissions.yaml");
    std::fs::write(
        &central,
        "permissions:\n  commands:\n    deny: ['^rm (-rf']\n",
    )
    .unwrap();
    let ctx = Context::new(&root, &root).unwrap();
    let sources = Sources {
        central: Some(central),
        ..Sources::default()
    };
    let cache_dir = root.join("cache");
    for _ in 0..2 {
        let err = cache::load_with(&sources, &ctx, Some(&cache_dir)).unwrap_err();
        assert_eq!(
            err.to_string(),
            Policy::load(&sources, &ctx).unwrap_err().to_string()
        );
    }
    assert!(!cache_dir.exists() || std::fs::read_dir(&cache_dir).unwrap().next().is_none());
}

fn rule(text: &str) -> SourceRule {
    SourceRule {
        text: text.into(),
        origin: Origin::Builtin,
        column: 1,
        access: None,
    }
}

/// Small regexes built from pieces that exercise the literal extraction.
fn regex_strategy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("git".to_string()),
        Just("rm".to_string()),
        Just(" ".to_string()),
        Just("-rf".to_string()),
        Just("\\s+".to_string()),
        Just("\\s*".to_string()),
        Just("(-f|--force)".to_string()),
        Just("(a|)".to_string()),
        Just("[0-9]+".to_string()),
        Just("[Gg]".to_string()),
        Just("(?i:push)".to_string()),
        Just("\\b".to_string()),
        Just(".*".to_string()),
        Just("x?".to_string()),
        Just("(rm){2}".to_string()),
        Just("é".to_string()),
        Just("(?i)s".to_string()),
    ];
    (
        any::<bool>(),
        prop::collection::vec(piece, 1..5),
        any::<bool>(),
    )
        .prop_map(|(start, parts, end)| {
            format!(
                "{}{}{}",
                if start { "^" } else { "" },
                parts.concat(),
                if end { "$" } else { "" }
            )
        })
}

fn haystack_strategy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("git"),
        Just("GIT"),
        Just("Git"),
        Just("rm"),
        Just("RM"),
        Just(" "),
        Just("  "),
        Just("-rf"),
        Just("-f"),
        Just("--force"),
        Just("push"),
        Just("PUSH"),
        Just("42"),
        Just("a"),
        Just("é"),
        Just("É"),
        Just("ſ"),
        Just("x"),
        Just("S"),
    ];
    prop::collection::vec(piece, 0..8).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The prefiltered matcher, eager or lazy, answers as plain `Regex::is_match` does.
    #[test]
    fn prefilter_never_changes_a_match(
        patterns in prop::collection::vec(regex_strategy(), 1..6),
        haystacks in prop::collection::vec(haystack_strategy(), 1..8),
    ) {
        let rules: Vec<SourceRule> = patterns.iter().map(|p| rule(p)).collect();
        let eager = CommandRules::compile(&rules, List::Deny).unwrap();
        let lazy = CommandRules::from_checked(&rules, List::Deny, eager.literals().to_vec()).unwrap();
        let regexes: Vec<regex::Regex> = patterns.iter().map(|p| regex::Regex::new(p).unwrap()).collect();
        for h in &haystacks {
            let want: Vec<&str> = patterns
                .iter()
                .zip(&regexes)
                .filter(|(_, re)| re.is_match(h))
                .map(|(p, _)| p.as_str())
                .collect();
            for rules in [&eager, &lazy] {
                let got: Vec<&str> = rules.all_matches(h).iter().map(|r| r.pattern.as_str()).collect();
                prop_assert_eq!(&got, &want, "haystack {:?}", h);
                prop_assert_eq!(rules.first_match(h).map(|r| r.pattern.as_str()), want.first().copied());
            }
        }
    }
}
