//! The foundation corpus (`tests/corpus/*.yaml`) in raw mode: every command
//! case decides exactly as the corpus expects when `commands.shell: false`
//! (and, the corpus holding no compound commands, in shell mode too).
//!
//! The binary runs the whole corpus in `crates/sandgate/tests/corpus.rs`; this
//! test evaluates its command cases through the engine with the mode forced.

use std::path::{Path, PathBuf};

use sandgate_policy::load::{read_policy_file, LoadedFile};
use sandgate_policy::request::tool_kind;
use sandgate_policy::{Context, Policy, Sources, Tier, ToolCall, ToolKind};
use serde_json::Value;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

struct Root {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    cwd: PathBuf,
}

impl Root {
    fn expand(&self, s: &str) -> String {
        s.replace("{root}", &self.root.to_string_lossy())
            .replace("{home}", &self.home.to_string_lossy())
            .replace("{cwd}", &self.cwd.to_string_lossy())
    }

    fn file_of(&self, tier: Tier) -> PathBuf {
        match tier {
            Tier::Managed => self.root.join("etc/sandgate/permissions.yaml"),
            Tier::Central => self.home.join(".sandgate/permissions.yaml"),
            Tier::Local => self.cwd.join(".sandgate/permissions.yaml"),
        }
    }
}

fn build_root(case: &Value) -> Root {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let cwd = root.join(case["cwd"].as_str().unwrap_or("home/projects/app"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    let r = Root {
        _tmp: tmp,
        root,
        home,
        cwd,
    };
    for (tier, key) in [
        (Tier::Managed, "managed"),
        (Tier::Central, "central"),
        (Tier::Local, "local"),
    ] {
        if let Some(content) = case[key].as_str() {
            let p = r.file_of(tier);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, r.expand(content)).unwrap();
        }
    }
    r
}

/// The command cases: exec requests without layout or other special setup.
fn command_cases() -> Vec<Value> {
    let mut cases = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/corpus exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("yaml"))
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let file: Value = serde_saphyr::from_str(&text).unwrap();
        for case in file["cases"].as_array().cloned().unwrap_or_default() {
            let tool = case["request"]["tool"].as_str().unwrap_or("");
            let plain = case.get("layout").is_none()
                && case["args"]
                    .as_array()
                    .is_none_or(|a| a.iter().all(|x| x == "--no-sandbox"));
            if tool_kind(tool) == ToolKind::Exec && plain {
                cases.push(case);
            }
        }
    }
    cases
}

/// Runs one case with `commands.shell` forced to `shell`; returns the mismatches.
fn run(case: &Value, shell: bool) -> Vec<String> {
    let r = build_root(case);
    let ctx = Context::new(&r.cwd, &r.home).unwrap();
    let no_sandbox = case["args"]
        .as_array()
        .is_some_and(|a| a.iter().any(|x| x == "--no-sandbox"));
    let sources = Sources {
        managed: Some(r.file_of(Tier::Managed)),
        central: Some(r.file_of(Tier::Central)),
        local: Some(r.file_of(Tier::Local)),
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
        let path = r.file_of(Tier::Central);
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
    let expect = &case["expect"];
    let mut problems = Vec::new();
    let Some(policy) = policy else {
        if expect["exit"] != 2 {
            problems.push("the policy did not load".to_string());
        }
        return problems;
    };
    if expect["exit"] == 2 {
        problems.push("the policy loaded, the corpus expects a load error".into());
        return problems;
    }
    let request = r.expand(&case["request"].to_string());
    let call = ToolCall::from_json(&request).unwrap();
    let d = policy.evaluate(&call, &ctx);
    if let Some(v) = expect["verdict"].as_str() {
        if d.verdict.as_str() != v {
            problems.push(format!("verdict {} ({}), want {v}", d.verdict, d.reason));
        }
    }
    match &expect["rule"] {
        Value::String(s) if s == "none" && d.rule.is_some() => {
            problems.push(format!("rule {:?}, want none", d.rule));
        }
        Value::Object(rule) => match &d.rule {
            Some(got) => {
                if Some(got.pattern.as_str()) != rule["pattern"].as_str()
                    || Some(got.list.as_str()) != rule["list"].as_str()
                {
                    problems.push(format!("rule {got}, want {rule:?}"));
                }
            }
            None => problems.push(format!("no rule, want {rule:?}")),
        },
        _ => {}
    }
    if let Some(s) = expect["subject"].as_str() {
        if d.subject != r.expand(s) {
            problems.push(format!("subject `{}`, want `{}`", d.subject, r.expand(s)));
        }
    }
    for part in expect["reason_contains"].as_array().into_iter().flatten() {
        let part = r.expand(part.as_str().unwrap_or(""));
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
            failures.push(format!("{}: {p}", case["name"].as_str().unwrap_or("?")));
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
