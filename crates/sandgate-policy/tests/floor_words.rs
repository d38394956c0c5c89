//! The floor and the path deny rules inside commands: every spelling of a
//! floor path, as an operand, an option value, a redirection target, a
//! pattern or the directory a `cd` moved to, against a policy that allows
//! the programs; and the ordinary commands that must keep their verdict.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod shell_common;

use std::os::unix::fs::symlink;

use sandgate_policy::{Context, ToolCall, Verdict};
use shell_common::Home;

use Verdict::{Allow, Ask, Deny};

/// The README's example rules, and a user who denied `/etc/**`.
const POLICY: &str = r#"
permissions:
  paths:
    deny: ["/etc/**", "**/.env"]
    allow: ["~/**", "/**"]
  commands:
    allow:
      - "^cat( |$)"
      - "^date$"
      - "^sed -n"
      - "^grep( |$)"
      - "^jq "
      - "^git( |$)"
      - "^touch "
      - "^ls( |$)"
      - "^cd "
      - "^head "
      - "^cp "
      - "^echo( |$)"
      - "^wc( |$)"
      - "^find "
      - "^tar "
      - "^sort "
"#;

/// A home with floor files, a project with a symlink, a dangling symlink and
/// a hard link into the floor.
fn setup() -> Home {
    let home = Home::new();
    let h = &home.ctx.home;
    for dir in [".ssh", ".aws", ".gnupg"] {
        std::fs::create_dir_all(h.join(dir)).unwrap();
    }
    std::fs::write(h.join(".ssh/id_rsa"), "SECRET KEY\n").unwrap();
    std::fs::write(h.join(".aws/credentials"), "SECRET\n").unwrap();
    let p = &home.ctx.cwd;
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::write(p.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(p.join("notes.txt"), "notes\n").unwrap();
    symlink(h.join(".ssh"), p.join("sshlink")).unwrap();
    symlink(h.join(".ssh/not_yet"), p.join("dangling")).unwrap();
    std::fs::hard_link(h.join(".ssh/id_rsa"), p.join("innocent.txt")).unwrap();
    // A file with two links of its own, none in the floor.
    std::fs::write(p.join("a.txt"), "a\n").unwrap();
    std::fs::hard_link(p.join("a.txt"), p.join("b.txt")).unwrap();
    home
}

const CASES: &[(&str, Verdict, &str)] = &[
    // The issue's cases.
    ("cat ~/.ssh/id_rsa", Deny, "floor `~/.ssh/**`"),
    ("sed -n 1p ~/.ssh/id_rsa", Deny, "floor `~/.ssh/**`"),
    ("grep -r . ~/.ssh", Deny, "floor `~/.ssh/**`"),
    ("jq -n input ~/.ssh/id_rsa", Deny, "floor"),
    ("git diff --no-index /dev/null ~/.ssh/id_rsa", Deny, "floor"),
    (
        "cat sshlink/id_rsa",
        Deny,
        "the word `sshlink/id_rsa` names a path",
    ),
    ("touch ~/.ssh/authorized_keys", Deny, "floor"),
    ("cat ~/.aws/credentials", Deny, "floor `~/.aws/**`"),
    (
        "cat ~/.sandgate/permissions.yaml",
        Deny,
        "floor `~/.sandgate/**`",
    ),
    // Tilde and slash spellings.
    ("cat ~//.ssh/id_rsa", Deny, "floor"),
    ("cat ~/./.ssh/id_rsa", Deny, "floor"),
    ("cat ~/.ssh//id_rsa", Deny, "floor"),
    ("cat ~/src/../.ssh/id_rsa", Deny, "floor"),
    ("cat $HOME/.ssh/id_rsa", Deny, "floor"),
    ("cat ${HOME}/.ssh/id_rsa", Deny, "floor"),
    ("cat \"$HOME\"/.ssh/id_rsa", Deny, "floor"),
    ("cat \"$HOME/.ssh\"/id_rsa", Deny, "floor"),
    ("cat ~/'.ssh'/\"id_rsa\"", Deny, "floor"),
    ("cat ~/.s''sh/id_rsa", Deny, "floor"),
    ("cat ~/.s\\sh/id_rsa", Deny, "floor"),
    ("cat $'\\x7e'/x; cat ~/.ss$'h'/id_rsa", Deny, "floor"),
    ("cat ~+/../.ssh/id_rsa", Deny, "floor"),
    ("cat ../.ssh/id_rsa", Deny, "floor"),
    ("cat ../../home/.ssh/id_rsa", Deny, "floor"),
    ("cat dangling", Deny, "floor"),
    // Option values and NAME=VALUE operands.
    ("grep --file=~/.ssh/id_rsa x", Deny, "floor"),
    ("sort -o~/.ssh/authorized_keys notes.txt", Deny, "floor"),
    ("sort -o ~/.ssh/authorized_keys notes.txt", Deny, "floor"),
    ("git log --output=/etc/x", Deny, "the deny rule `/etc/**`"),
    ("cat if=~/.ssh/id_rsa", Deny, "floor"),
    // Redirections, still.
    ("echo k > ~//.ssh/authorized_keys", Deny, "floor"),
    ("echo k >> sshlink/authorized_keys", Deny, "floor"),
    ("cat < ~/.ssh/id_rsa", Deny, "floor"),
    ("cat < sshlink/id_rsa", Deny, "floor"),
    ("cat 0< ~/.aws/credentials", Deny, "floor"),
    ("wc -l < notes.txt", Allow, ""),
    ("cat < $X", Ask, "holds an expansion"),
    // Paths deny rules.
    ("cat /etc/shadow", Deny, "the deny rule `/etc/**`"),
    ("cat .env", Deny, "the deny rule `**/.env`"),
    ("head -n 3 src/../.env", Deny, "`**/.env`"),
    // cd and pushd move where relative words land.
    ("cd ~/.ssh && cat id_rsa", Deny, "floor"),
    ("cd && cat .ssh/id_rsa", Deny, "floor"),
    ("cd .. && cat .ssh/id_rsa", Deny, "floor"),
    ("cd src; cd ..; cd ..; cat .ssh/id_rsa", Deny, "floor"),
    ("cd ~ && echo k > .ssh/authorized_keys", Deny, "floor"),
    ("cd \"$HOME\" && cat .aws/credentials", Deny, "floor"),
    ("cd - && cat id_rsa", Ask, "changes the directory"),
    ("cd \"$X\" && cat id_rsa", Ask, "$X"),
    ("cd src && cat main.rs", Allow, ""),
    // Patterns the shell expands into the floor.
    ("cat ~/.ss*/id_*", Deny, "could match the floor directory"),
    ("cat ~/.{ssh,aws}/*", Deny, "floor"),
    ("cat ~/.{aws,x}/credentials", Deny, "floor"),
    ("cat ~/.*/id_rsa", Deny, "could match the floor directory"),
    ("cat ~/.s?h/id_rsa", Deny, "floor"),
    ("cat ~/.[s]sh/id_rsa", Deny, "floor"),
    (
        "cat ssh*/id_rsa",
        Deny,
        "the word `ssh*/id_rsa` names a path",
    ),
    ("cat sshl?nk/*", Deny, "floor"),
    ("ls ~/*", Allow, ""),
    ("ls src/*.rs", Allow, ""),
    ("wc -l *.txt", Deny, "hard link"),
    ("cat /et[c]/passwd", Deny, "the deny rule `/etc/**`"),
    // Hard links.
    ("cat innocent.txt", Deny, "hard link to the floor file"),
    ("cat a.txt b.txt", Allow, ""),
    // Unknown expansions keep their verdict but are never allowed by a prefix rule.
    (
        "cat $X/id_rsa",
        Ask,
        "holds an expansion whose value is only known when the command runs",
    ),
    ("cat \"$(echo ~/.ssh)/id_rsa\"", Ask, "holds an expansion"),
    ("cat ~/.ssh/$X", Ask, "holds an expansion"),
    ("cat \"$F\"", Ask, "holds an expansion"),
    ("X=~/.ssh/id_rsa; cat $X", Deny, "floor"),
    ("HOME=/tmp cat ~/x", Ask, ""),
    ("HOME=/home; cat ~/me/.ssh/id_rsa", Ask, ""),
    ("cat ~-/id_rsa", Ask, "holds an expansion"),
    ("echo \"$X\"", Allow, ""),
    ("echo ~/.ssh/id_rsa", Allow, ""),
    ("git commit -m \"$(date)\"", Allow, ""),
    ("git commit -F \"$X\"", Ask, "holds an expansion"),
    ("git status && echo $? $$ $((1+2))", Allow, ""),
    ("cat notes$((1)).txt", Allow, ""),
    // Ordinary commands keep their verdict.
    ("git log -- src/", Allow, ""),
    ("ls -la", Allow, ""),
    ("grep -rn foo .", Allow, ""),
    ("grep -rn foo src", Allow, ""),
    ("cat notes.txt", Allow, ""),
    ("cat /usr/share/doc/missing", Allow, ""),
    ("git status --short", Allow, ""),
    ("find . -name '*.rs'", Allow, ""),
    ("tar tf x.tar", Allow, ""),
    ("sort notes.txt", Allow, ""),
    ("cp a.txt c.txt", Allow, ""),
    ("ls ~", Allow, ""),
    ("ls /", Allow, ""),
    ("cat /dev/null", Allow, ""),
    ("grep -E '^a/b$' notes.txt", Allow, ""),
    ("git log --format=%H -n 1", Allow, ""),
    ("sed -n 1,5p notes.txt", Allow, ""),
    (
        "git commit -m \"$(cat <<'EOF'\nfix the thing\nEOF\n)\"",
        Allow,
        "",
    ),
    ("git commit --message=\"$(date)\"", Allow, ""),
];

#[test]
fn floor_words_table() {
    assert!(CASES.len() >= 80, "{} cases", CASES.len());
    let home = setup();
    let policy = home.policy(POLICY, None);
    let mut failures = Vec::new();
    for (command, verdict, decider) in CASES {
        let call = ToolCall::new("exec_run", serde_json::json!({ "command": command }));
        let d = policy.evaluate(&call, &home.ctx);
        if d.verdict != *verdict || !d.reason.contains(decider) {
            failures.push(format!(
                "{command:?}: got {} ({}), want {verdict} naming {decider:?}",
                d.verdict, d.reason
            ));
        }
        assert!(!d.reason.contains("SECRET"), "{command:?}: {}", d.reason);
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// Every spelling of the floor through the file gate, under `/**` allowed.
#[test]
fn file_paths_every_spelling() {
    let home = setup();
    let policy = home.policy(POLICY, None);
    let h = home.ctx.home.to_string_lossy().into_owned();
    for path in [
        "~//.ssh/id_rsa".to_string(),
        "~/./.ssh/id_rsa".to_string(),
        "~/.ssh".to_string(),
        "~".to_string() + "/.ssh/",
        format!("{h}//.ssh/id_rsa"),
        "~+/../.ssh/id_rsa".to_string(),
        "sshlink/id_rsa".to_string(),
        "dangling".to_string(),
        "innocent.txt".to_string(),
    ] {
        let call = ToolCall::new("file_read", serde_json::json!({ "path": path }));
        let d = policy.evaluate(&call, &home.ctx);
        assert_eq!(d.verdict, Deny, "{path}: {}", d.reason);
    }
    for path in ["~-/x", "~no_such_user_here/x"] {
        let call = ToolCall::new("file_read", serde_json::json!({ "path": path }));
        let d = policy.evaluate(&call, &home.ctx);
        assert_eq!(d.verdict, Deny, "{path}: {}", d.reason);
        assert!(d.reason.contains("cannot be checked"), "{}", d.reason);
    }
    for path in ["notes.txt", "a.txt", "~/x"] {
        let call = ToolCall::new("file_read", serde_json::json!({ "path": path }));
        assert_eq!(policy.evaluate(&call, &home.ctx).verdict, Allow, "{path}");
    }
}

/// `~root` is root's home from the user database.
#[test]
fn another_users_home() {
    let home = setup();
    let policy = home.policy(POLICY, None);
    let root = sandgate_policy::canon::user_home("root").expect("root is in the user database");
    let got = policy
        .canonical_path("~root/x", &home.ctx)
        .expect("resolves");
    assert_eq!(got, std::fs::canonicalize(&root).unwrap().join("x"));
}

/// An exec call runs in `params.cwd`: relative words and redirections are
/// judged there, and a directory in the floor is itself denied.
#[test]
fn the_call_runs_in_its_cwd() {
    let home = setup();
    let policy = home.policy(POLICY, None);
    let run = |command: &str, cwd: &str| {
        let call = ToolCall::new(
            "exec_run",
            serde_json::json!({ "command": command, "cwd": cwd }),
        );
        policy.evaluate(&call, &home.ctx)
    };
    let d = run("echo k > .ssh/authorized_keys", "~");
    assert_eq!(d.verdict, Deny, "{}", d.reason);
    assert!(d.reason.contains("floor"), "{}", d.reason);
    assert_eq!(run("cat .aws/credentials", "..").verdict, Deny);
    let d = run("ls", "~/.ssh");
    assert_eq!(d.verdict, Deny, "{}", d.reason);
    assert!(
        d.reason.contains("the working directory is denied"),
        "{}",
        d.reason
    );
    assert_eq!(run("cat main.rs", "src").verdict, Allow);
    let d = run("ls", "no/such/dir");
    assert_eq!(d.verdict, Deny);
    assert!(d.reason.contains("`no/such/dir`"), "{}", d.reason);
    // The context API the hooks use for a call's directory.
    let ctx: Context = home.ctx.with_cwd("~").unwrap();
    assert_eq!(ctx.cwd, home.ctx.home);
    assert_eq!(
        policy.evaluate_command("cat .ssh/id_rsa", &ctx).verdict,
        Deny
    );
    assert!(home.ctx.with_cwd("notes.txt").is_err());
}

/// Raw mode reads no words: one regex over the raw string, as documented.
#[test]
fn raw_mode_reads_no_words() {
    let home = setup();
    let policy = home.policy(POLICY, Some(false));
    let d = policy.evaluate_command("cat ~/.ssh/id_rsa", &home.ctx);
    assert_eq!(d.verdict, Allow, "{}", d.reason);
}

/// A line that changes the directory more ways than the bound is not judged
/// in every one: past the bound it is unknown, and each further `cd` costs
/// nothing (they doubled the directories before, found by the fuzz target).
#[test]
fn many_directory_changes_are_bounded() {
    let home = setup();
    let policy = home.policy(POLICY, None);
    let hops: Vec<String> = (0..40).map(|i| format!("cd d{i} || cd e{i}")).collect();
    let command = format!("{}; cat x", hops.join("; "));
    // On a thread, so that a regression fails the test instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    let ctx = home.ctx.clone();
    std::thread::spawn(move || {
        let _ = tx.send(policy.evaluate_command(&command, &ctx));
    });
    let d = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the line is judged within 20 s");
    assert_ne!(d.verdict, Allow, "{}", d.reason);
}

/// A reason names at most 32 parts and counts the rest: looking each part
/// up in an ever longer reason was quadratic (a line of hundreds of long
/// parts took 1.4 s in a release build; found by the fuzz target, whose
/// input is the `hook_gemini` seed `many-long-parts`).
#[test]
fn a_reason_lists_a_bounded_number_of_parts() {
    let home = setup();
    let policy = home.policy(POLICY, None);
    let command: Vec<String> = (0..100).map(|i| format!("unknown{i}")).collect();
    let d = policy.evaluate_command(&command.join("; "), &home.ctx);
    assert_eq!(d.verdict, Ask, "{}", d.reason);
    assert!(d.reason.contains("`unknown0`"), "{}", d.reason);
    assert!(d.reason.contains("`unknown31`"), "{}", d.reason);
    assert!(!d.reason.contains("`unknown32`"), "{}", d.reason);
    assert!(
        d.reason
            .ends_with("; and 68 more parts of the command with the same verdict"),
        "{}",
        d.reason
    );
}
