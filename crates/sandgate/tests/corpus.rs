//! The golden corpus: every case under `tests/corpus/` runs the real binary.
//!
//! A case gives the policy files, the home/CWD layout (symlinks included), the
//! request, and the expected verdict and deciding rule. Each case runs in a
//! fresh temporary root: `HOME` is `<root>/home`, the CWD defaults to
//! `<root>/home/projects/app`. In expectations, `{root}`, `{home}` and `{cwd}`
//! stand for those directories and an origin is written `builtin` or
//! `TIER:LINE` (`central:4`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/corpus.rs"]
mod corpus;

#[path = "../../../tests/support/wait.rs"]
mod wait;

use wait::{Bounded, DEADLINE};

use corpus::{build_root, load_cases, Case, ExpectRule};

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
    let out = cmd.output_within(DEADLINE).unwrap();
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
