//! One table of floor cases, run against every surface: `sandgate check`,
//! `sandgate hook claude|codex|gemini`, `sandgate mcp` over stdio (with the
//! Python MCP SDK as the client), `sandgate exec` with Landlock isolation, and
//! `sandgate run`. Every case must be refused (a DENY from the gate, or the
//! kernel's refusal under isolation and `run`), and no surface may ever show
//! the secret's content or let a write land in the floor.
//!
//! The policy is deliberately permissive (every path, `cat`, `sed -n`,
//! `echo`): whatever stops a case, the floor stopped it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_common;

mod surfaces;

mod mcp_client;

use run_common::wait::{self, Bounded, DEADLINE};
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use surfaces::{run_with_stdin, text};

const SECRET: &str = "SECRET-FLOOR-3a9e";

/// What a case asks for: a path for the file tools, or a shell command.
#[derive(Clone, Copy, Debug)]
enum Subject {
    /// A path (`{home}`, `{work}` are filled in).
    Path(&'static str),
    /// A command line, run in the case's directory.
    Command(&'static str),
}

#[derive(Clone, Copy, Debug)]
struct Case {
    what: &'static str,
    subject: Subject,
    /// Where the call runs: `work` (the project) or `home`.
    cwd: &'static str,
}

const fn path(what: &'static str, p: &'static str) -> Case {
    Case {
        what,
        subject: Subject::Path(p),
        cwd: "work",
    }
}

const fn cmd(what: &'static str, c: &'static str, cwd: &'static str) -> Case {
    Case {
        what,
        subject: Subject::Command(c),
        cwd,
    }
}

/// The table.
const CASES: &[Case] = &[
    path("tilde", "~/.ssh/id_rsa"),
    path("absolute", "{home}/.ssh/id_rsa"),
    path("repeated slashes", "{home}//.ssh//id_rsa"),
    path("dot segment", "{home}/./.ssh/id_rsa"),
    path("tilde, dot segment", "~/./.ssh/id_rsa"),
    path("tilde, double slash", "~//.ssh/id_rsa"),
    path("hard link in the project", "hardlink"),
    path("dot-dot", "{work}/../.ssh/id_rsa"),
    path("relative dot-dot", "../.ssh/id_rsa"),
    path("another floor dir", "~/.aws/credentials"),
    path("symlink in the project", "sshlink/id_rsa"),
    path("symlink to the key", "keylink"),
    path("dangling symlink into the floor", "dangling"),
    Case {
        what: "the floor directory itself",
        subject: Subject::Path("~/.ssh"),
        cwd: "work",
    },
    cmd(
        "redirection",
        "echo planted > ~/.ssh/authorized_keys",
        "work",
    ),
    cmd(
        "redirection, absolute",
        "echo planted >> {home}/.ssh/authorized_keys",
        "work",
    ),
    cmd(
        "redirection through a symlink",
        "echo planted > sshlink/authorized_keys",
        "work",
    ),
    cmd(
        "redirection through a dangling symlink",
        "echo planted > dangling",
        "work",
    ),
    cmd("operand", "cat ~/.ssh/id_rsa", "work"),
    cmd("operand of sed", "sed -n 1p ~/.ssh/id_rsa", "work"),
    cmd("operand, $HOME", "cat $HOME/.ssh/id_rsa", "work"),
    cmd("operand, ${HOME}", "cat ${HOME}/.ssh/id_rsa", "work"),
    cmd("operand, quoted $HOME", "cat \"$HOME\"/.ssh/id_rsa", "work"),
    cmd("operand, ~//", "cat ~//.ssh/id_rsa", "work"),
    cmd("operand, a glob", "cat ~/.ss*/id_*", "work"),
    cmd("operand through a symlink", "cat sshlink/id_rsa", "work"),
    cmd("operand, a hard link", "cat hardlink", "work"),
    cmd("operand after cd", "cd ~/.ssh && cat id_rsa", "work"),
    cmd("input redirection", "cat < ~/.ssh/id_rsa", "work"),
    // Brace expressions are bash's: the attempts run in bash.
    cmd("a brace list", "bash -c 'cat {~/.ssh/id_rsa,}'", "work"),
    cmd(
        "a brace sequence",
        "bash -c 'cat ~/.ss{h..h}/id_rsa'",
        "work",
    ),
    cmd(
        "$HOME in a brace list",
        "bash -c 'cat {x,$HOME/.ssh/id_rsa}'",
        "work",
    ),
    cmd(
        "redirection, ~//",
        "echo planted > ~//.ssh/authorized_keys",
        "work",
    ),
    cmd(
        "redirection relative to the call's directory",
        "echo planted > .ssh/authorized_keys",
        "home",
    ),
    cmd(
        "operand relative to the call's directory",
        "cat .ssh/id_rsa",
        "home",
    ),
    cmd(
        "cd through CDPATH",
        "CDPATH=~ cd .ssh && cat id_rsa",
        "work",
    ),
    cmd(
        "a glob after dotglob",
        "bash -O dotglob -c 'cat ~/*/id_rsa'",
        "work",
    ),
    cmd(
        "a recursive grep of the home",
        "grep -r FLOOR-3a9e ~",
        "work",
    ),
    cmd(
        "a recursive grep after cd",
        "cd ~ && grep -r FLOOR-3a9e .",
        "work",
    ),
    cmd("env -C into the home", "env -C ~ cat .ssh/id_rsa", "work"),
];

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    work: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::Builder::new()
        .prefix("floor-table")
        .tempdir_in(run_common::outside::base())
        .unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let work = home.join("work");
    let real_home = std::env::var("HOME").unwrap_or_default();
    assert!(home.starts_with(&root) && home != Path::new(&real_home));
    for dir in [".ssh", ".aws", ".sandgate", "work"] {
        fs::create_dir_all(home.join(dir)).unwrap();
    }
    fs::write(home.join(".ssh/id_rsa"), format!("{SECRET}\n")).unwrap();
    fs::write(home.join(".aws/credentials"), format!("{SECRET}\n")).unwrap();
    symlink(home.join(".ssh"), work.join("sshlink")).unwrap();
    symlink(home.join(".ssh/id_rsa"), work.join("keylink")).unwrap();
    symlink(home.join(".ssh/new_key"), work.join("dangling")).unwrap();
    fs::hard_link(home.join(".ssh/id_rsa"), work.join("hardlink")).unwrap();
    fs::write(
        home.join(".sandgate/permissions.yaml"),
        "permissions:\n  paths:\n    allow: [\"/**\"]\n  commands:\n    allow: [\"^cat \", \"^sed -n\", \"^echo \"]\n  exec:\n    isolation:\n      mode: landlock\n      workdir: ./\n",
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

    fn dir(&self, case: &Case) -> PathBuf {
        match case.cwd {
            "home" => self.home.clone(),
            _ => self.work.clone(),
        }
    }

    fn sandgate(&self, case: &Case) -> Command {
        surfaces::sandgate(&self.root, &self.home, &self.dir(case))
    }

    /// The floor is as it was: the key unchanged, nothing planted.
    fn floor_intact(&self, surface: &str, case: &Case) {
        let ssh: Vec<String> = fs::read_dir(self.home.join(".ssh"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(ssh, ["id_rsa"], "{surface}: {case:?} wrote into ~/.ssh");
        assert_eq!(
            fs::read_to_string(self.home.join(".ssh/id_rsa")).unwrap(),
            format!("{SECRET}\n")
        );
    }
}

fn no_secret(surface: &str, case: &Case, out: &str) {
    assert!(
        !out.contains(SECRET),
        "{surface}: {} ({case:?}) showed the secret:\n{out}",
        case.what
    );
}

/// The gate's request for a case.
fn request(f: &Fixture, case: &Case) -> Value {
    match case.subject {
        Subject::Path(p) => json!({"tool": "file_read", "params": {"path": f.fill(p)}}),
        Subject::Command(c) => {
            json!({"tool": "exec_run", "params": {"command": f.fill(c), "cwd": f.dir(case)}})
        }
    }
}

#[test]
fn check() {
    let f = fixture();
    for case in CASES {
        let mut cmd = f.sandgate(case);
        cmd.args(["check", "--json", "--cwd"])
            .arg(f.dir(case))
            .arg(request(&f, case).to_string());
        let out = cmd.output_within(DEADLINE).unwrap();
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        no_secret("check", case, &all);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        assert_eq!(v["verdict"], "deny", "check: {case:?}: {all}");
        f.floor_intact("check", case);
    }
}

fn hook(f: &Fixture, agent: &str, case: &Case, tool: &str, input: Value) -> Value {
    let payload = surfaces::hook_payload(agent, &f.root, &f.dir(case), tool, input);
    let mut cmd = f.sandgate(case);
    cmd.args(["hook", agent]);
    let out = run_with_stdin(cmd, &payload.to_string());
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    no_secret(agent, case, &all);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{agent}: {case:?}: not JSON ({e}): {all}"))
}

#[test]
fn hooks() {
    let f = fixture();
    for case in CASES {
        let (claude, gemini) = match case.subject {
            Subject::Path(p) => (
                ("Read", json!({"file_path": f.fill(p)})),
                ("read_file", json!({"file_path": f.fill(p)})),
            ),
            Subject::Command(c) => (
                ("Bash", json!({"command": f.fill(c)})),
                (
                    "run_shell_command",
                    json!({"command": f.fill(c), "dir_path": f.dir(case)}),
                ),
            ),
        };
        let v = hook(&f, "claude", case, claude.0, claude.1.clone());
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecision"], "deny",
            "claude: {case:?}: {v}"
        );
        // Codex sends its shell commands as `Bash`; it has no file-read tool.
        if let Subject::Command(_) = case.subject {
            let v = hook(&f, "codex", case, "Bash", claude.1);
            assert_eq!(
                v["hookSpecificOutput"]["permissionDecision"], "deny",
                "codex: {case:?}: {v}"
            );
        }
        let v = hook(&f, "gemini", case, gemini.0, gemini.1);
        assert_eq!(v["decision"], "deny", "gemini: {case:?}: {v}");
        f.floor_intact("hooks", case);
    }
}

#[test]
fn mcp_over_stdio() {
    if Command::new("python3")
        .args(["-c", "import mcp"])
        .output_within(DEADLINE)
        .map_or(true, |o| !o.status.success())
    {
        let reason = "the Python package `mcp` is not installed (pip install mcp==2.3.0)";
        run_common::skip(reason);
        return;
    }
    let f = fixture();
    let calls: Vec<Value> = CASES
        .iter()
        .map(|case| match case.subject {
            Subject::Path(p) => json!({"tool": "file_read", "args": {"path": f.fill(p)}}),
            Subject::Command(c) => {
                json!({"tool": "exec_run", "args": {"command": f.fill(c), "cwd": f.dir(case)}})
            }
        })
        .collect();
    let plan = json!({
        "command": [env!("CARGO_BIN_EXE_sandgate"), "mcp"],
        "env": {
            "HOME": f.home,
            "PATH": std::env::var("PATH").unwrap_or_default(),
            "SANDGATE_MANAGED_CONFIG": f.root.join("no-managed.yaml"),
            "SANDGATE_AUDIT_LOG": f.root.join("audit.jsonl"),
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
        no_secret("mcp", case, &shown);
        assert_eq!(result["is_error"], true, "mcp: {case:?}: {shown}");
        assert!(
            result["text"].as_str().unwrap_or("").starts_with("denied"),
            "mcp: {case:?}: {shown}"
        );
    }
    f.floor_intact("mcp", &CASES[0]);
}

/// The case as a command for the surfaces that run commands: a path is read
/// with `cat`. `None` for a directory and a dangling link, which `cat`
/// cannot show anyway (the dangling link has its own row as a write).
fn as_command(f: &Fixture, case: &Case) -> Option<String> {
    match case.subject {
        Subject::Path("~/.ssh" | "dangling") => None,
        Subject::Path(p) if p.starts_with('~') => Some(format!("cat {p}")),
        Subject::Path(p) => Some(format!("cat '{}'", f.fill(p))),
        Subject::Command(c) => Some(f.fill(c)),
    }
}

/// The command's attempt works unconfined: it shows the secret or writes
/// into `~/.ssh` (which is then put back as it was).
fn works_unconfined(f: &Fixture, case: &Case, command: &str) {
    let out = Command::new("sh")
        .args(["-c", command])
        .current_dir(f.dir(case))
        .env("HOME", &f.home)
        .output_within(DEADLINE)
        .unwrap();
    let mut planted = false;
    for entry in fs::read_dir(f.home.join(".ssh")).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "id_rsa" {
            fs::remove_file(entry.path()).unwrap();
            planted = true;
        }
    }
    assert!(
        planted || text(&out.stdout).contains(SECRET),
        "{case:?}: the attempt does not work even unconfined: {}",
        text(&out.stderr)
    );
}

#[test]
fn exec_with_isolation() {
    if sandgate_sandbox::landlock_abi() < 5 {
        run_common::skip("this kernel has no Landlock ABI 5");
        return;
    }
    let f = fixture();
    for case in CASES {
        let Some(command) = as_command(&f, case) else {
            continue;
        };
        works_unconfined(&f, case, &command);
        let mut cmd = f.sandgate(case);
        cmd.args(["exec", "--", &command]);
        let out = cmd.output_within(DEADLINE).unwrap();
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        no_secret("exec", case, &all);
        assert!(!out.status.success(), "exec: {case:?} succeeded: {all}");
        f.floor_intact("exec", case);
    }
}

#[test]
fn run() {
    if !run_common::supported() {
        return;
    }
    let f = fixture();
    // Both ways of holding the floor: the mount layer and Landlock carving.
    for protection in ["mount", "carve"] {
        for case in CASES {
            let Some(command) = as_command(&f, case) else {
                continue;
            };
            works_unconfined(&f, case, &command);
            let mut cmd = f.sandgate(case);
            cmd.env("SANDGATE_SANDBOX", "1")
                .env("SANDGATE_RUN_PROTECTION", protection)
                .args(["run", "--no-ui", "--workspace"]);
            cmd.arg(&f.work).args(["--", "sh", "-c", &command]);
            let out = cmd.output_within(DEADLINE).unwrap();
            let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
            let surface = format!("run ({protection})");
            no_secret(&surface, case, &all);
            assert!(
                !out.status.success(),
                "{surface}: {case:?} succeeded: {all}"
            );
            f.floor_intact(&surface, case);
        }
    }
}
