//! `paths.read.*` and `paths.write.*`: a rule about reading decides only
//! reads, a rule about writing only writes, on every surface the engine
//! judges (file tools, a command's path words, redirections, write
//! operands), with deny → allow → ask and the floor first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use sandgate_policy::load::{parse_policy, LoadedFile};
use sandgate_policy::{Access, Context, List, Policy, Sources, Tier, ToolCall, Verdict};
use serde_json::json;

struct Fixture {
    _tmp: tempfile::TempDir,
    ctx: Context,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let work = home.join("work");
    std::fs::create_dir_all(work.join("docs")).unwrap();
    std::fs::create_dir_all(work.join("out")).unwrap();
    std::fs::create_dir_all(work.join("vendor")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(work.join("docs/a.md"), "a").unwrap();
    let ctx = Context::new(&work, &home).unwrap();
    Fixture { _tmp: tmp, ctx }
}

fn file(text: &str, tier: Tier) -> LoadedFile {
    let path = format!("/{}.yaml", tier.as_str());
    LoadedFile {
        tier,
        file: parse_policy(text, Path::new(&path)).unwrap(),
        path: path.into(),
    }
}

const CENTRAL: &str = "\
permissions:
  paths:
    allow: [\"./src/**\"]
    read:
      allow: [\"./docs/**\", \"./vendor/**\", \"~/.ssh/**\"]
    write:
      allow: [\"./out/**\"]
      deny: [\"./vendor/**\"]
  commands:
    allow: [\"^cat \", \"^echo \", \"^cp \", \"^ls( |$)\"]
";

fn policy(f: &Fixture, files: &[LoadedFile]) -> Policy {
    Policy::from_files(Sources::default(), files, &f.ctx).unwrap()
}

fn verdict(p: &Policy, f: &Fixture, tool: &str, key: &str, value: &str) -> (Verdict, String) {
    let call = ToolCall::new(tool, json!({ key: value }));
    let d = p.evaluate(&call, &f.ctx);
    (d.verdict, d.reason)
}

#[test]
fn every_file_tool_is_judged_as_the_access_it_makes() {
    let f = fixture();
    let p = policy(&f, &[file(CENTRAL, Tier::Central)]);
    // (tool, path, verdict)
    let table: &[(&str, &str, Verdict)] = &[
        ("file_read", "docs/a.md", Verdict::Allow),
        ("file_head_tail", "docs/a.md", Verdict::Allow),
        ("file_grep", "docs", Verdict::Allow),
        ("file_list", "docs", Verdict::Allow),
        ("file_find", "docs", Verdict::Allow),
        ("file_count", "docs", Verdict::Allow),
        ("file_write", "docs/a.md", Verdict::Ask),
        ("file_edit", "docs/a.md", Verdict::Ask),
        ("file_write", "out/r.txt", Verdict::Allow),
        ("file_edit", "out/r.txt", Verdict::Allow),
        ("file_read", "out/r.txt", Verdict::Ask),
        ("file_list", "out", Verdict::Ask),
        // paths.allow: both.
        ("file_read", "src/main.rs", Verdict::Allow),
        ("file_write", "src/main.rs", Verdict::Allow),
        // A write deny rule denies writes; reads stay allowed.
        ("file_read", "vendor/lib.rs", Verdict::Allow),
        ("file_write", "vendor/lib.rs", Verdict::Deny),
        ("file_edit", "vendor/lib.rs", Verdict::Deny),
        // No rule opens the floor, not even a read allow rule.
        ("file_read", "~/.ssh/config", Verdict::Deny),
        ("client_file_read", "~/.ssh/id_rsa", Verdict::Deny),
    ];
    for &(tool, path, want) in table {
        let (got, reason) = verdict(&p, &f, tool, "path", path);
        assert_eq!(got, want, "{tool} {path}: {reason}");
    }
}

#[test]
fn the_deciding_rule_names_its_list() {
    let f = fixture();
    let p = policy(&f, &[file(CENTRAL, Tier::Central)]);
    let call = ToolCall::new("file_read", json!({"path": "docs/a.md"}));
    let d = p.evaluate(&call, &f.ctx);
    let rule = d.rule.clone().unwrap();
    assert_eq!((rule.list, rule.access), (List::Allow, Some(Access::Read)));
    assert_eq!(rule.path_key(), "paths.read.allow");
    assert!(
        d.reason.contains("the read allow rule `./docs/**`"),
        "{}",
        d.reason
    );
    let json = serde_json::to_value(&d).unwrap();
    assert_eq!(json["rule"]["list"], "allow");
    assert_eq!(json["rule"]["access"], "read");

    let call = ToolCall::new("file_write", json!({"path": "vendor/x"}));
    let d = p.evaluate(&call, &f.ctx);
    assert!(
        d.reason.contains("the write deny rule `./vendor/**`"),
        "{}",
        d.reason
    );
    assert_eq!(d.rule.unwrap().path_key(), "paths.write.deny");

    let call = ToolCall::new("file_write", json!({"path": "docs/a.md"}));
    let d = p.evaluate(&call, &f.ctx);
    assert!(
        d.reason.contains("no allow rule matched `") && d.reason.ends_with("for writing"),
        "{}",
        d.reason
    );
    // A rule of both lists carries no access.
    let call = ToolCall::new("file_write", json!({"path": "src/x"}));
    let d = p.evaluate(&call, &f.ctx);
    assert_eq!(d.rule.unwrap().access, None);
}

#[test]
fn commands_read_their_path_words_and_write_their_targets() {
    let f = fixture();
    let central = "\
permissions:
  paths:
    allow: [\"./out/**\"]
    read:
      deny: [\"./secret/**\"]
    write:
      deny: [\"./docs/**\"]
  commands:
    allow: [\"^cat \", \"^echo \", \"^cp \"]
";
    let p = policy(&f, &[file(central, Tier::Central)]);
    let table: &[(&str, Verdict)] = &[
        // Path words are reads: a read deny rule denies them, a write deny rule does not.
        ("cat secret/key", Verdict::Deny),
        ("cat docs/a.md", Verdict::Allow),
        ("cat < secret/key", Verdict::Deny),
        // Redirection targets are writes.
        ("echo hi > docs/a.md", Verdict::Deny),
        ("echo hi >> docs/a.md", Verdict::Deny),
        ("echo hi > out/r.txt", Verdict::Allow),
        ("echo hi > secret/x", Verdict::Ask),
        // Write operands are writes; the source operand is a read.
        ("cp out/r.txt docs/b.md", Verdict::Deny),
        ("cp docs/a.md out/b.md", Verdict::Allow),
        ("cp secret/key out/b.md", Verdict::Deny),
    ];
    for &(command, want) in table {
        let (got, reason) = verdict(&p, &f, "exec_run", "command", command);
        assert_eq!(got, want, "{command}: {reason}");
    }
    let (_, reason) = verdict(&p, &f, "exec_run", "command", "echo hi > docs/a.md");
    assert!(reason.contains("write deny rule `./docs/**`"), "{reason}");
}

#[test]
fn a_read_allow_rule_never_allows_a_write_through_a_command() {
    let f = fixture();
    let central = "\
permissions:
  paths:
    read:
      allow: [\"./docs/**\"]
  commands:
    allow: [\"^echo \", \"^cp \"]
";
    let p = policy(&f, &[file(central, Tier::Central)]);
    for command in ["echo hi > docs/a.md", "cp /dev/null docs/a.md"] {
        let (got, reason) = verdict(&p, &f, "exec_run", "command", command);
        assert_eq!(got, Verdict::Ask, "{command}: {reason}");
    }
}

#[test]
fn tighten_only_files_keep_every_list_and_open_none() {
    let f = fixture();
    let local = "\
permissions:
  paths:
    allow: [\"./docs/**\"]
    read:
      allow: [\"./out/**\"]
      deny: [\"./src/**\"]
    write:
      allow: [\"./docs/**\"]
      deny: [\"./out/**\"]
";
    let alone = policy(&f, &[file(CENTRAL, Tier::Central)]);
    for tier in [Tier::Local, Tier::Managed] {
        let p = policy(&f, &[file(CENTRAL, Tier::Central), file(local, tier)]);
        let table: &[(&str, &str, Verdict)] = &[
            // Their allow lists, of every access, are ignored.
            ("file_write", "docs/a.md", Verdict::Ask),
            ("file_read", "out/r.txt", Verdict::Ask),
            // Their deny lists deny the access they name, and only that.
            ("file_read", "src/main.rs", Verdict::Deny),
            ("file_write", "src/main.rs", Verdict::Allow),
            ("file_write", "out/r.txt", Verdict::Deny),
            ("file_read", "docs/a.md", Verdict::Allow),
        ];
        for &(tool, path, want) in table {
            let (got, reason) = verdict(&p, &f, tool, "path", path);
            assert_eq!(got, want, "{tier:?} {tool} {path}: {reason}");
            let (before, _) = verdict(&alone, &f, tool, "path", path);
            assert!(got >= before, "{tier:?} loosened {tool} {path}");
        }
        let ignored: Vec<String> = p
            .ignored_rules()
            .iter()
            .map(|i| i.rule.path_key())
            .collect();
        assert_eq!(
            ignored,
            ["paths.allow", "paths.read.allow", "paths.write.allow"],
            "{tier:?}"
        );
    }
}

#[test]
fn the_path_gate_takes_the_access() {
    let f = fixture();
    let p = policy(&f, &[file(CENTRAL, Tier::Central)]);
    assert_eq!(
        p.evaluate_path("docs/a.md", Access::Read, &f.ctx).verdict,
        Verdict::Allow
    );
    assert_eq!(
        p.evaluate_path("docs/a.md", Access::Write, &f.ctx).verdict,
        Verdict::Ask
    );
    let docs = f.ctx.cwd.join("out");
    assert_eq!(
        p.decide_canonical_path(&docs, Access::Write).verdict,
        Verdict::Allow
    );
    assert_eq!(
        p.decide_canonical_path(&docs, Access::Read).verdict,
        Verdict::Ask
    );
}
