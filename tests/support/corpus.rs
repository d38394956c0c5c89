//! The golden corpus format (`tests/corpus/*.yaml`), shared by the tests that
//! run it: each includes this file with `#[path = …] mod corpus;`.
//!
//! A case gives the policy files, the home/CWD layout (symlinks included), the
//! request, and the expected verdict and deciding rule. Each case runs in a
//! fresh temporary root: `HOME` is `<root>/home`, the CWD defaults to
//! `<root>/home/projects/app`. In expectations, `{root}`, `{home}` and `{cwd}`
//! stand for those directories and an origin is written `builtin` or
//! `TIER:LINE` (`central:4`).

// Each including test uses a different part of the format.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorpusFile {
    pub cases: Vec<Case>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    #[serde(default)]
    pub managed: Option<String>,
    #[serde(default)]
    pub central: Option<String>,
    #[serde(default)]
    pub local: Option<String>,
    #[serde(default)]
    pub layout: Layout,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub request: Option<serde_json::Value>,
    #[serde(default)]
    pub request_raw: Option<String>,
    pub expect: Expect,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layout {
    #[serde(default)]
    pub dirs: Vec<String>,
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// link (relative to the root) → target (`{home}`-style placeholders allowed, or relative as written).
    #[serde(default)]
    pub symlinks: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    #[serde(default)]
    pub verdict: Option<String>,
    /// `none` for "no deciding rule"; otherwise the rule.
    #[serde(default)]
    pub rule: Option<ExpectRule>,
    #[serde(default)]
    pub subject: Option<String>,
    #[serde(default)]
    pub reason_contains: Vec<String>,
    #[serde(default)]
    pub exit: Option<i32>,
    #[serde(default)]
    pub stderr_contains: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ExpectRule {
    Rule {
        pattern: String,
        list: String,
        origin: String,
    },
    None(String),
}

pub struct Root {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub cwd: PathBuf,
}

impl Root {
    pub fn expand(&self, s: &str) -> String {
        s.replace("{root}", &self.root.to_string_lossy())
            .replace("{home}", &self.home.to_string_lossy())
            .replace("{cwd}", &self.cwd.to_string_lossy())
    }

    pub fn file_of(&self, tier: &str) -> PathBuf {
        match tier {
            "managed" => self.root.join("etc/sandgate/permissions.yaml"),
            "central" => self.home.join(".sandgate/permissions.yaml"),
            "local" => self.cwd.join(".sandgate/permissions.yaml"),
            other => panic!("unknown tier `{other}` in an expected origin"),
        }
    }
}

pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

/// Every case of every corpus file, with the file it came from.
pub fn load_cases() -> Vec<(String, Case)> {
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

pub fn build_root(case: &Case) -> Root {
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
