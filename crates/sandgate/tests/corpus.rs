//! The golden corpus: every case under `tests/corpus/` runs the real binary.
//!
//! A case gives the policy files, the home/CWD layout (symlinks included), the
//! request, and the expected verdict and deciding rule. Each case runs in a
//! fresh temporary root: `HOME` is `<root>/home`, the CWD defaults to
//! `<root>/home/projects/app`. In expectations, `{root}`, `{home}` and `{cwd}`
//! stand for those directories and an origin is written `builtin` or
//! `TIER:LINE` (`central:4`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusFile {
    cases: Vec<Case>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    #[serde(default)]
    managed: Option<String>,
    #[serde(default)]
    central: Option<String>,
    #[serde(default)]
    local: Option<String>,
    #[serde(default)]
    layout: Layout,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    request: Option<serde_json::Value>,
    #[serde(default)]
    request_raw: Option<String>,
    expect: Expect,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Layout {
    #[serde(default)]
    dirs: Vec<String>,
    #[serde(default)]
    files: BTreeMap<String, String>,
    /// link (relative to the root) → target (`{home}`-style placeholders allowed, or relative as written).
    #[serde(default)]
    symlinks: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    #[serde(default)]
    verdict: Option<String>,
    /// `none` for "no deciding rule"; otherwise the rule.
    #[serde(default)]
    rule: Option<ExpectRule>,
    #[serde(default)]
    subject: Option<String>,
    #[serde(default)]
    reason_contains: Vec<String>,
    #[serde(default)]
    exit: Option<i32>,
    #[serde(default)]
    stderr_contains: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum ExpectRule {
    Rule {
        pattern: String,
        list: String,
        origin: String,
    },
    None(String),
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

    fn file_of(&self, tier: &str) -> PathBuf {
        match tier {
            "managed" => self.root.join("etc/sandgate/permissions.yaml"),
            "central" => self.home.join(".sandgate/permissions.yaml"),
            "local" => self.cwd.join(".sandgate/permissions.yaml"),
            other => panic!("unknown tier `{other}` in an expected origin"),
        }
    }
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

/// Every case of every corpus file, with the file it came from.
fn load_cases() -> Vec<(String, Case)> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/corpus exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("yaml"))
        .collect();
    entries.sort();
    for path in entries {
        let text = std::fs::read_to_string(&path).unwrap();
        let file: CorpusFile =
            serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for case in file.cases {
            out.push((name.clone(), case));
        }
    }
    out
}

fn build_root(case: &Case) -> Root {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let cwd = root.join(case.cwd.as_deref().unwrap_or("home/projects/app"));
    std::fs::create_dir_all(&home).unwrap();
    let r = Root {
        _tmp: tmp,
        root,
        home,
        cwd,
    };
    for d in &case.layout.dirs {
        std::fs::create_dir_all(r.root.join(d)).unwrap();
    }
    for (f, content) in &case.layout.files {
        let p = r.root.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    for (link, target) in &case.layout.symlinks {
        let p = r.root.join(link);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(r.expand(target), p).unwrap();
    }
    // After the layout, so a CWD may pass through one of its symlinks.
    std::fs::create_dir_all(&r.cwd).unwrap();
    for (tier, content) in [
        ("managed", &case.managed),
        ("central", &case.central),
        ("local", &case.local),
    ] {
        if let Some(content) = content {
            let p = r.file_of(tier);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, r.expand(content)).unwrap();
        }
    }
    r
}

/// Run one case; return a description of each mismatch.
fn run_case(case: &Case) -> Vec<String> {
    let r = build_root(case);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sandgate"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &r.home)
        .env("SANDGATE_MANAGED_CONFIG", r.file_of("managed"))
        .env("SANDGATE_AUDIT", "off")
        .env("NO_COLOR", "1")
        .current_dir(&r.cwd)
        .arg("check")
        .arg("--json")
        .args(case.args.iter().map(|a| r.expand(a)));
    let request = match (&case.request, &case.request_raw) {
        (Some(v), None) => r.expand(&v.to_string()),
        (None, Some(raw)) => r.expand(raw),
        _ => panic!(
            "case `{}` needs exactly one of request and request_raw",
            case.name
        ),
    };
    cmd.arg(request);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let code = out.status.code().unwrap_or(-1);
    let mut errors = Vec::new();
    let e = &case.expect;
    let want_exit = e.exit.unwrap_or(0);
    if code != want_exit {
        errors.push(format!(
            "exit {code}, expected {want_exit}; stderr: {stderr}"
        ));
    }
    for s in &e.stderr_contains {
        let s = r.expand(s);
        if !stderr.contains(&s) {
            errors.push(format!("stderr lacks `{s}`: {stderr}"));
        }
    }
    if want_exit != 0 {
        if !stdout.trim().is_empty() {
            errors.push(format!(
                "no decision may be printed on exit {want_exit}, got {stdout}"
            ));
        }
        return errors;
    }
    let got: serde_json::Value = match serde_json::from_str(stdout.trim()) {
        Ok(v) => v,
        Err(err) => return vec![format!("stdout is not JSON ({err}): {stdout} / {stderr}")],
    };
    if let Some(v) = &e.verdict {
        if got["verdict"] != *v.as_str() {
            errors.push(format!("verdict {}, expected {v}: {got}", got["verdict"]));
        }
    }
    if let Some(s) = &e.subject {
        let s = r.expand(s);
        if got["subject"] != *s.as_str() {
            errors.push(format!("subject {}, expected {s}", got["subject"]));
        }
    }
    for s in &e.reason_contains {
        let s = r.expand(s);
        if !got["reason"].as_str().unwrap_or("").contains(&s) {
            errors.push(format!("reason lacks `{s}`: {}", got["reason"]));
        }
    }
    match &e.rule {
        None => {}
        Some(ExpectRule::None(n)) => {
            assert_eq!(
                n, "none",
                "case `{}`: rule must be `none` or a rule",
                case.name
            );
            if !got["rule"].is_null() {
                errors.push(format!("expected no deciding rule, got {}", got["rule"]));
            }
        }
        Some(ExpectRule::Rule {
            pattern,
            list,
            origin,
        }) => {
            let want_origin = match origin.split_once(':') {
                Some((tier @ ("managed" | "central" | "local"), line)) => {
                    format!("{}:{line}", r.file_of(tier).display())
                }
                _ => r.expand(origin),
            };
            let rule = &got["rule"];
            if rule["pattern"] != *pattern.as_str()
                || rule["list"] != *list.as_str()
                || rule["origin"] != *want_origin.as_str()
            {
                errors.push(format!(
                    "rule {rule}, expected {{pattern: {pattern}, list: {list}, origin: {want_origin}}}"
                ));
            }
        }
    }
    errors
}

#[test]
fn golden_corpus() {
    let cases = load_cases();
    assert!(
        cases.len() >= 60,
        "the corpus has only {} cases",
        cases.len()
    );
    let mut failures = Vec::new();
    for (file, case) in &cases {
        let errors = run_case(case);
        if !errors.is_empty() {
            failures.push(format!(
                "{file} / {}:\n    {}",
                case.name,
                errors.join("\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
