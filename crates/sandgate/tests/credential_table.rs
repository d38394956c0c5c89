//! One table of credential-store cases (`~/.netrc`, `~/.config/gh/hosts.yml`,
//! `~/.kube/config`, …), run against every surface of the gate:
//! `sandgate check`, `sandgate hook claude|codex|gemini`, `sandgate mcp` over
//! stdio (with the Python MCP SDK as the client) and `sandgate exec`. Under a
//! policy that denies the stores as the presets do, every case is denied and
//! no surface shows a token; under the same policy with the stores' rules
//! removed, every case is allowed and the commands really read the token.
//!
//! Exec isolation and `sandgate run` hiding the stores from a program the
//! gate cannot see into are tested in `escapes.rs` (as root and as
//! `sandgate-test`, each attempt first shown to work unconfined).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod mcp_client;
mod run_common;
mod surfaces;

use run_common::wait::{self, Bounded, DEADLINE};
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use sandgate_policy::credentials::CREDENTIAL_STORES;
use serde_json::{json, Value};
use surfaces::{run_with_stdin, text};

const TOKEN: &str = "TOKEN-CRED-71c4";

/// What a case asks for: a path for the file tools, or a shell command.
#[derive(Clone, Copy, Debug)]
enum Subject {
    /// A path (`{home}`, `{work}` are filled in).
    Path(&'static str),
    /// A command line, run in the project (`{home}` is filled in).
    Command(&'static str),
}

use Subject::{Command as Cmd, Path as File};

/// The table.
const CASES: &[Subject] = &[
    File("~/.netrc"),
    File("{home}/.netrc"),
    File("{home}//.netrc"),
    File("{work}/../.netrc"),
    File("~/.git-credentials"),
    File("~/.config/gh/hosts.yml"),
    File("~/.docker/config.json"),
    File("~/.kube/config"),
    File("~/.npmrc"),
    File("~/.pypirc"),
    File("~/.cargo/credentials.toml"),
    File("~/.config/gcloud/credentials.db"),
    File("~/.azure/msal_token_cache.json"),
    File("~/.password-store/site.gpg"),
    File("~/.vault-token"),
    File("~/.mozilla/firefox/p.default/logins.json"),
    File("~/.config/google-chrome/Default/Cookies"),
    File("netrclink"),
    File("netrchard"),
    Cmd("cat ~/.netrc"),
    Cmd("cat {home}/.netrc"),
    Cmd("cat $HOME/.netrc"),
    Cmd("cat \"$HOME\"/.netrc"),
    Cmd("cat ${HOME}/.git-credentials"),
    Cmd("cat < ~/.netrc"),
    Cmd("cat netrclink"),
    Cmd("cat netrchard"),
    Cmd("cat ~/.kube/c*"),
    Cmd("cat ~/.config/gh/h*.yml"),
    Cmd("sed -n 1p ~/.config/gh/hosts.yml"),
    Cmd("grep -r TOKEN ~/.kube"),
    // A tree read of a directory that holds a store.
    Cmd("grep -r TOKEN ~/.config"),
    Cmd("cd ~/.docker && grep -r TOKEN ."),
    Cmd("grep -r TOKEN ~/.mozilla"),
    Cmd("cat ~/.kube/config"),
    Cmd("cd ~ && cat .vault-token"),
    // Brace expressions are bash's: the attempts run in bash.
    // Read as bash reads it (the agents' shells are bash); `sh` (dash), which
    // `sandgate exec` runs, has no braces, so the run-it controls skip it.
    Cmd(BASH_ONLY),
    Cmd("bash -c 'cat {~/.netrc,}'"),
    Cmd("bash -c 'cat ~/.{netrc,nothing}'"),
    Cmd("bash -c 'cat {x,$HOME/.pypirc}'"),
];

/// A case only bash reads the store with.
const BASH_ONLY: &str = "cat {~/.netrc,}";

/// The files the fixture fills with the token (beneath the home).
const PLANTED: &[&str] = &[
    ".netrc",
    ".git-credentials",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".kube/config",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".config/gcloud/credentials.db",
    ".azure/msal_token_cache.json",
    ".password-store/site.gpg",
    ".vault-token",
    ".mozilla/firefox/p.default/logins.json",
    ".config/google-chrome/Default/Cookies",
];

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    work: PathBuf,
}

/// A home with every store filled, and a permissive policy (every path,
/// `cat`, `sed -n`, `grep`, `bash -c`, `cd`) that denies the stores as
/// the presets do when `deny` holds, and not at all otherwise.
fn fixture(deny: bool) -> Fixture {
    let tmp = tempfile::Builder::new()
        .prefix("credential-table")
        .tempdir()
        .unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let work = home.join("work");
    let real_home = std::env::var("HOME").unwrap_or_default();
    assert!(home.starts_with(&root) && home != Path::new(&real_home));
    for dir in [".sandgate", "work"] {
        fs::create_dir_all(home.join(dir)).unwrap();
    }
    for file in PLANTED {
        let path = home.join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, format!("{TOKEN}\n")).unwrap();
    }
    symlink(home.join(".netrc"), work.join("netrclink")).unwrap();
    // Another name of the store, made before: judged as the store.
    fs::hard_link(home.join(".netrc"), work.join("netrchard")).unwrap();
    let rules = if deny {
        CREDENTIAL_STORES
            .iter()
            .map(|s| format!("\"{}\"", s.rule))
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        String::new()
    };
    fs::write(
        home.join(".sandgate/permissions.yaml"),
        format!(
            "permissions:\n  paths:\n    deny: [{rules}]\n    allow: [\"/**\"]\n  commands:\n    allow: [\"^cat( |$)\", \"^sed -n\", \"^grep \", \"^bash -c\", \"^cd \"]\n  exec:\n    isolation:\n      mode: landlock\n      workdir: ./\n"
        ),
    )
    .unwrap();
    Fixture {
        _tmp: tmp,
        root,
        home,
        work,
    }
}

impl Fixture {
    fn fill(&self, s: &str) -> String {
        s.replace("{home}", &self.home.to_string_lossy())
            .replace("{work}", &self.work.to_string_lossy())
    }

    fn sandgate(&self) -> Command {
        surfaces::sandgate(&self.root, &self.home, &self.work)
    }

    /// The gate's request for a case.
    fn request(&self, case: &Subject) -> Value {
        match case {
            File(p) => json!({"tool": "file_read", "params": {"path": self.fill(p)}}),
            Cmd(c) => {
                json!({"tool": "exec_run", "params": {"command": self.fill(c), "cwd": self.work}})
            }
        }
    }
}

fn no_token(surface: &str, case: &Subject, out: &str) {
    assert!(
        !out.contains(TOKEN),
        "{surface}: {case:?} showed the token:\n{out}"
    );
}

/// `sandgate check`'s verdict and reason.
fn check(f: &Fixture, case: &Subject) -> (String, String) {
    let mut cmd = f.sandgate();
    cmd.args(["check", "--json", "--cwd"])
        .arg(&f.work)
        .arg(f.request(case).to_string());
    let out = cmd.output_within(DEADLINE).unwrap();
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    no_token("check", case, &all);
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("check: {case:?}: not JSON ({e}): {all}"));
    (
        v["verdict"].as_str().unwrap_or("").to_string(),
        v["reason"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn check_denies_every_case_and_names_the_store() {
    let f = fixture(true);
    for case in CASES {
        let (verdict, reason) = check(&f, case);
        assert_eq!(verdict, "deny", "check: {case:?}: {reason}");
        assert!(
            reason.contains("a credential store: "),
            "check: {case:?}: {reason}"
        );
    }
    // `policy explain` says why, too.
    let mut cmd = f.sandgate();
    cmd.args(["policy", "explain"])
        .arg(f.request(&File("~/.config/gh/hosts.yml")).to_string());
    let out = cmd.output_within(DEADLINE).unwrap();
    let shown = text(&out.stdout);
    assert!(
        shown.contains("a credential store: the GitHub CLI's token"),
        "{shown}{}",
        text(&out.stderr)
    );
}

#[test]
fn check_allows_every_case_once_the_rules_are_removed() {
    let f = fixture(false);
    for case in CASES {
        let (verdict, reason) = check(&f, case);
        assert_eq!(verdict, "allow", "check: {case:?}: {reason}");
    }
}

fn hook(f: &Fixture, agent: &str, tool: &str, input: Value) -> Value {
    let payload = surfaces::hook_payload(agent, &f.root, &f.work, tool, input);
    let mut cmd = f.sandgate();
    cmd.args(["hook", agent]);
    let out = run_with_stdin(cmd, &payload.to_string());
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!all.contains(TOKEN), "{agent}: showed the token: {all}");
    assert!(out.status.success(), "{agent}: {all}");
    // An empty answer lets the call through (Codex says nothing to allow).
    if out.stdout.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{agent}: not JSON ({e}): {all}"))
}

/// Every agent's hook answers every case: `deny` when the policy denies
/// the stores, never `deny` once their rules are removed.
fn hooks_answer(deny: bool) {
    let f = fixture(deny);
    for case in CASES {
        let (claude, gemini) = match case {
            File(p) => (
                ("Read", json!({"file_path": f.fill(p)})),
                ("read_file", json!({"file_path": f.fill(p)})),
            ),
            Cmd(c) => (
                ("Bash", json!({"command": f.fill(c)})),
                (
                    "run_shell_command",
                    json!({"command": f.fill(c), "dir_path": f.work}),
                ),
            ),
        };
        let mut answers = vec![(
            "claude",
            hook(&f, "claude", claude.0, claude.1.clone())["hookSpecificOutput"]
                ["permissionDecision"]
                .clone(),
        )];
        // Codex sends its shell commands as `Bash`; it has no file-read tool.
        if let Cmd(_) = case {
            let v = hook(&f, "codex", "Bash", claude.1);
            answers.push((
                "codex",
                v["hookSpecificOutput"]["permissionDecision"].clone(),
            ));
        }
        let v = hook(&f, "gemini", gemini.0, gemini.1);
        answers.push(("gemini", v["decision"].clone()));
        for (agent, answer) in answers {
            if deny {
                assert_eq!(answer, "deny", "{agent}: {case:?}");
            } else {
                assert_ne!(answer, "deny", "{agent}: {case:?}");
            }
        }
    }
}

#[test]
fn every_hook_denies_every_case() {
    hooks_answer(true);
}

#[test]
fn no_hook_denies_a_case_once_the_rules_are_removed() {
    hooks_answer(false);
}

/// An agent's own search (Claude Code's `Grep`, Gemini CLI's
/// `grep_search`) reads every file below its root, unlike sandgate's
/// `file_grep`: rooted above a store it is denied while the store's rule is
/// in the policy, and allowed once it is removed.
#[test]
fn an_agents_own_search_above_a_store_is_denied_by_its_rule() {
    for deny in [true, false] {
        let f = fixture(deny);
        for root in [f.home.join(".config"), f.home.join(".docker")] {
            let claude = hook(
                &f,
                "claude",
                "Grep",
                json!({"pattern": "TOKEN", "path": root}),
            );
            let gemini = hook(
                &f,
                "gemini",
                "grep_search",
                json!({"pattern": "TOKEN", "dir_path": root}),
            );
            let answers = [
                claude["hookSpecificOutput"]["permissionDecision"].clone(),
                gemini["decision"].clone(),
            ];
            for answer in answers {
                if deny {
                    assert_eq!(answer, "deny", "{}: {claude} {gemini}", root.display());
                } else {
                    assert_ne!(answer, "deny", "{}: {claude} {gemini}", root.display());
                }
            }
            if deny {
                let why = claude["hookSpecificOutput"]["permissionDecisionReason"].to_string();
                assert!(why.contains("a credential store: "), "{why}");
            }
        }
    }
}

/// The MCP server over stdio: every case is refused (and shows no token)
/// under the denying policy; without the rules, every case shows the token.
fn mcp_answers(deny: bool) {
    if Command::new("python3")
        .args(["-c", "import mcp"])
        .output_within(DEADLINE)
        .map_or(true, |o| !o.status.success())
    {
        let reason = "the Python package `mcp` is not installed (pip install mcp==2.3.0)";
        run_common::skip(reason);
        return;
    }
    let f = fixture(deny);
    let calls: Vec<Value> = CASES
        .iter()
        .map(|case| match case {
            File(p) => json!({"tool": "file_read", "args": {"path": f.fill(p)}}),
            Cmd(c) => json!({"tool": "exec_run", "args": {"command": f.fill(c), "cwd": f.work}}),
        })
        .collect();
    let plan = json!({
        "command": [env!("CARGO_BIN_EXE_sandgate"), "mcp"],
        "env": {
            "HOME": f.home,
            "PATH": std::env::var("PATH").unwrap_or_default(),
            "SANDGATE_MANAGED_CONFIG": f.root.join("no-managed.yaml"),
            "SANDGATE_AUDIT_LOG": f.root.join("audit.jsonl"),
            "SANDGATE_CACHE_DIR": f.root.join("cache"),
            "SANDGATE_NO_UI": "1",
        },
        "cwd": f.work,
        "mode": "legacy",
        "elicit": null,
        "list_tools": false,
        "calls": calls,
    });
    let v = mcp_client::run("client.py", &plan);
    for (case, result) in CASES.iter().zip(v["results"].as_array().unwrap()) {
        let shown = result.to_string();
        if deny {
            no_token("mcp", case, &shown);
            assert_eq!(result["is_error"], true, "mcp: {case:?}: {shown}");
            assert!(
                result["text"].as_str().unwrap_or("").starts_with("denied"),
                "mcp: {case:?}: {shown}"
            );
        } else if !matches!(case, Cmd(BASH_ONLY)) {
            assert!(shown.contains(TOKEN), "mcp: {case:?}: {shown}");
        }
    }
}

#[test]
fn mcp_refuses_every_case() {
    mcp_answers(true);
}

#[test]
fn mcp_reads_every_case_once_the_rules_are_removed() {
    mcp_answers(false);
}

/// `sandgate exec` (Landlock isolation) of every command case and of `cat`
/// of every path: refused without showing the token under the denying
/// policy; run, showing it, without the rules (so the attempt works).
#[test]
fn exec_refuses_every_case_and_runs_it_once_the_rules_are_removed() {
    if sandgate_sandbox::landlock_abi() < 5 {
        run_common::skip("this kernel has no Landlock ABI 5");
        return;
    }
    let (denying, open) = (fixture(true), fixture(false));
    for case in CASES {
        let command = |f: &Fixture| match case {
            File(p) if p.starts_with('~') => format!("cat {p}"),
            File(p) => format!("cat '{}'", f.fill(p)),
            Cmd(c) => f.fill(c),
        };
        let mut cmd = open.sandgate();
        cmd.args(["exec", "--", &command(&open)]);
        let out = cmd.output_within(DEADLINE).unwrap();
        assert!(
            matches!(case, Cmd(BASH_ONLY)) || text(&out.stdout).contains(TOKEN),
            "exec without the rules: {case:?}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        let mut cmd = denying.sandgate();
        cmd.args(["exec", "--", &command(&denying)]);
        let out = cmd.output_within(DEADLINE).unwrap();
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        no_token("exec", case, &all);
        assert!(!out.status.success(), "exec: {case:?} succeeded: {all}");
    }
}
