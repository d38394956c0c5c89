//! An "allow always" rule (`^` + escaped command + `$`) allows exactly that
//! command line, even when the shell analysis alone would ask about it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use sandgate_policy::load::{parse_policy, LoadedFile};
use sandgate_policy::{Context, Policy, Sources, Tier, Verdict};

fn policy(allow: &[&str], deny: &[&str]) -> (tempfile::TempDir, Policy, Context) {
    let tmp = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(tmp.path()).unwrap();
    let ctx = Context::new(&home, &home).unwrap();
    let quote = |v: &[&str]| {
        v.iter()
            .map(|r| format!("'{}'", r.replace('\'', "''")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let text = format!(
        "permissions:\n  commands:\n    allow: [{}]\n    deny: [{}]\n",
        quote(allow),
        quote(deny)
    );
    let path = PathBuf::from("/central.yaml");
    let file = parse_policy(&text, &path).unwrap();
    let p = Policy::from_files(
        Sources::default(),
        &[LoadedFile {
            tier: Tier::Central,
            path,
            file,
        }],
        &ctx,
    )
    .unwrap();
    (tmp, p, ctx)
}

fn exact(command: &str) -> String {
    format!("^{}$", regex::escape(command))
}

#[test]
fn an_exact_rule_allows_a_pipeline_and_nothing_else() {
    let rule = exact("ls | wc");
    let (_t, p, ctx) = policy(&[&rule], &[]);
    let d = p.evaluate_command("ls | wc", &ctx);
    assert_eq!(d.verdict, Verdict::Allow, "{}", d.reason);
    assert_eq!(d.rule.unwrap().pattern, rule);
    for other in [
        "ls | wc -l",
        "ls | wc; rm -rf x",
        "ls  | wc",
        "ls | wc\nrm x",
    ] {
        assert_eq!(
            p.evaluate_command(other, &ctx).verdict,
            Verdict::Ask,
            "{other}"
        );
    }
    // A recursive delete of the home directory deletes the floor.
    assert_eq!(
        p.evaluate_command("ls | wc; rm -rf ~", &ctx).verdict,
        Verdict::Deny
    );
}

#[test]
fn an_exact_rule_allows_what_cannot_be_analysed() {
    let cmd = "echo a.b*c (x) [y] $z ^w";
    let rule = exact(cmd);
    let (_t, p, ctx) = policy(&[&rule], &[]);
    assert_eq!(p.evaluate_command(cmd, &ctx).verdict, Verdict::Allow);
    assert_eq!(
        p.evaluate_command("echo a.b*c (x) [y] $z ^W", &ctx).verdict,
        Verdict::Ask
    );
}

#[test]
fn deny_rules_and_the_floor_still_win_over_an_exact_rule() {
    let with_rm = "git status; rm -rf /";
    let into_floor = "cat notes > ~/.ssh/authorized_keys";
    let (_t, p, ctx) = policy(&[&exact(with_rm), &exact(into_floor)], &["rm\\s+-rf"]);
    assert_eq!(p.evaluate_command(with_rm, &ctx).verdict, Verdict::Deny);
    assert_eq!(p.evaluate_command(into_floor, &ctx).verdict, Verdict::Deny);
}

#[test]
fn a_loose_rule_does_not_count_as_exact() {
    let (_t, p, ctx) = policy(&["^ls .*$"], &[]);
    assert_eq!(p.evaluate_command("ls x | sh", &ctx).verdict, Verdict::Ask);
}
