//! `sandgate run`'s exec tracking relies on no process of the tree passing
//! for a fresh child of the top process, nor writing into another's memory
//! (see `sandgate_sandbox::supervisor::lineage`). Each way is tried for
//! real, first unconfined (where it works), then inside the run (where it
//! must fail): `clone(CLONE_PARENT)`, `clone3`, `PTRACE_SEIZE` of the top
//! process, `process_vm_writev` and a write-open of `/proc/TOP/mem` into
//! it, and `prctl(PR_SET_CHILD_SUBREAPER)`. And a request sent to the run's
//! socket by a program inside the run, as if from Claude Code's hook, is
//! not taken for the hook's: the run asks itself (here: nobody, so it
//! refuses), and no question goes to Claude Code's dialog. Last, a stand-in
//! for Claude Code (`top.py`, the program the run starts) spawns its hook,
//! a forger and the genuine command, the way Claude Code 2.1.332 spawns
//! them: only the genuine spawn, once, gets the grant.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_common;

use std::fs;
use std::process::Command;

use run_common::wait::{Bounded, DEADLINE};
use run_common::{supported, Tree};
use serde_json::Value;

/// Tries each way against process `argv[1]` (the top process) and prints
/// one JSON object: for each, whether it worked and the error number.
const ATTACK_PY: &str = r#"import ctypes, json, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
top = int(sys.argv[1])
res = {}

def call(*args):
    ctypes.set_errno(0)
    r = libc.syscall(*[ctypes.c_long(a) for a in args])
    return r, ctypes.get_errno()

# clone(CLONE_PARENT | SIGCHLD), fork-like: the child says who its parent is.
rd, wr = os.pipe()
r, e = call(56, 0x8000 | 17, 0, 0, 0, 0)
if r == 0:
    os.write(wr, str(os.getppid()).encode())
    os._exit(0)
os.close(wr)
if r > 0:
    got = os.read(rd, 32)
    res["clone_parent"] = {"ok": int(got or b"0") == os.getppid(), "errno": 0}
else:
    res["clone_parent"] = {"ok": False, "errno": e}

# clone3 with no flags (a fork).
cargs = ctypes.create_string_buffer(struct.pack("8Q", 0, 0, 0, 0, 17, 0, 0, 0), 64)
r, e = call(435, ctypes.addressof(cargs), 64)
if r == 0:
    os._exit(0)
if r > 0:
    os.waitpid(r, 0)
res["clone3"] = {"ok": r > 0, "errno": 0 if r > 0 else e}

# PTRACE_SEIZE of the top process (no stop; detached when this ends).
r, e = call(101, 0x4206, top, 0, 0)
res["ptrace_seize"] = {"ok": r == 0, "errno": 0 if r == 0 else e}

# The first writable mapping of the top process, read, and written back
# unchanged with process_vm_writev and through /proc/TOP/mem.
addr = None
for line in open("/proc/%d/maps" % top):
    parts = line.split()
    if parts[1].startswith("rw"):
        addr = int(parts[0].split("-")[0], 16)
        break

class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

buf = ctypes.create_string_buffer(8)
local = iovec(ctypes.addressof(buf), 8)
remote = iovec(addr, 8)
r, e = call(310, top, ctypes.addressof(local), 1, ctypes.addressof(remote), 1, 0)
res["process_vm_readv"] = {"ok": r == 8, "errno": 0 if r == 8 else e}
r, e = call(311, top, ctypes.addressof(local), 1, ctypes.addressof(remote), 1, 0)
res["process_vm_writev"] = {"ok": r == 8, "errno": 0 if r == 8 else e}
try:
    with open("/proc/%d/mem" % top, "r+b", buffering=0) as mem:
        mem.seek(addr)
        mem.write(buf.raw)
    res["proc_mem"] = {"ok": True, "errno": 0}
except OSError as err:
    res["proc_mem"] = {"ok": False, "errno": err.errno}

# prctl(PR_SET_CHILD_SUBREAPER, 1).
r, e = call(157, 36, 1, 0, 0, 0)
res["subreaper"] = {"ok": r == 0, "errno": 0 if r == 0 else e}

print(json.dumps(res))
"#;

/// The top process is `sh`; the attack runs as its child, against it.
const SCRIPT: &str = "python3 attack.py $$; true";

fn results(out: &std::process::Output) -> Value {
    let stdout = run_common::text(&out.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no result: {stdout}\n{}", run_common::text(&out.stderr)));
    serde_json::from_str(line).unwrap()
}

fn python_present() -> bool {
    let found = Command::new("python3")
        .arg("--version")
        .output_within(DEADLINE)
        .is_ok_and(|o| o.status.success());
    if !found {
        run_common::skip("python3 is missing: install python3");
    }
    found
}

/// The user the attempts run as: root (`None`) or `sandgate-test`, with
/// the tree given to it.
fn as_user(program: &str, who: Option<(u32, u32)>) -> Command {
    let mut cmd = run_common::ci::as_user(program, who);
    cmd.env("PATH", "/usr/bin:/bin");
    cmd
}

/// Every way, unconfined (where it works) and inside the run (where it fails).
fn each_way_fails_inside_the_run(who: Option<(u32, u32)>) {
    let tree = Tree::new().armed();
    fs::write(tree.ws.join("attack.py"), ATTACK_PY).unwrap();
    if let Some((uid, gid)) = who {
        let status = Command::new("chown")
            .arg("-R")
            .arg(format!("{uid}:{gid}"))
            .arg(&tree.root)
            .status_within(DEADLINE)
            .unwrap();
        assert!(status.success());
    }
    let ways = [
        "clone_parent",
        "clone3",
        "ptrace_seize",
        "process_vm_writev",
        "proc_mem",
        "subreaper",
    ];
    let yama = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .is_ok_and(|s| s.trim() != "0");
    // Unconfined: every way works (but where Yama keeps an unprivileged
    // user from attaching to its parent).
    let free = as_user("sh", who)
        .args(["-c", SCRIPT])
        .current_dir(&tree.ws)
        .output_within(DEADLINE)
        .unwrap();
    let free = results(&free);
    for way in ways {
        let by_yama = who.is_some()
            && yama
            && matches!(way, "ptrace_seize" | "process_vm_writev" | "proc_mem");
        if !by_yama {
            assert_eq!(
                free[way]["ok"], true,
                "unconfined, {way} should work: {free}"
            );
        }
    }
    assert_eq!(free["process_vm_readv"]["ok"], true, "{free}");
    // Inside the run: each fails, with the error the run gives it.
    let out = as_user(env!("CARGO_BIN_EXE_sandgate"), who)
        .args(["run", "--no-ui", "--", "sh", "-c", SCRIPT])
        .current_dir(&tree.ws)
        .env("HOME", &tree.home)
        .env("SANDGATE_AUDIT", "off")
        .env_remove("SANDGATE_SANDBOX")
        .env_remove("SANDGATE_CONFIG")
        .env_remove("TMPDIR")
        .output_within(DEADLINE)
        .unwrap();
    let confined = results(&out);
    let want = [
        ("clone_parent", libc::EPERM),
        ("clone3", libc::ENOSYS),
        ("ptrace_seize", libc::EPERM),
        ("process_vm_writev", libc::EPERM),
        ("proc_mem", libc::EACCES),
        ("subreaper", libc::EPERM),
    ];
    for (way, errno) in want {
        assert_eq!(
            confined[way],
            serde_json::json!({"ok": false, "errno": errno}),
            "inside the run, {way}: {confined}\n{}",
            run_common::text(&out.stderr)
        );
    }
    // Reading stays (a debugger's, a profiler's).
    assert_eq!(confined["process_vm_readv"]["ok"], true, "{confined}");
    // `--dry-run` says what is refused.
    let dry = Command::new(env!("CARGO_BIN_EXE_sandgate"))
        .args(["run", "--dry-run", "--json"])
        .current_dir(&tree.ws)
        .env("HOME", &tree.home)
        .env("SANDGATE_AUDIT", "off")
        .output_within(DEADLINE)
        .unwrap();
    let dry: Value = serde_json::from_slice(&dry.stdout).unwrap();
    let refused = dry["lineageRefused"].to_string();
    for name in [
        "CLONE_PARENT",
        "clone3",
        "PTRACE_SEIZE",
        "process_vm_writev",
        "SUBREAPER",
    ] {
        assert!(refused.contains(name), "{refused}");
    }
}

#[test]
fn nothing_inside_the_run_passes_for_a_child_of_the_agent_or_writes_into_it() {
    if !supported() || !python_present() {
        return;
    }
    each_way_fails_inside_the_run(None);
}

/// The same as `sandgate-test` (the ways that need no privilege: an
/// unprivileged user may trace and write into its own processes).
#[test]
fn nothing_inside_the_run_passes_for_a_child_of_the_agent_as_an_unprivileged_user() {
    if !supported() || !python_present() {
        return;
    }
    let Some(who) = test_user() else {
        return;
    };
    each_way_fails_inside_the_run(Some(who));
}

/// `sandgate-test`'s ids, when this runs as root and the user exists
/// (under `CI=true` a missing one fails).
fn test_user() -> Option<(u32, u32)> {
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id")
            .args([flag, "sandgate-test"])
            .output_within(DEADLINE)
            .ok()?;
        run_common::text(&out.stdout).trim().parse().ok()
    };
    let me = Command::new("id")
        .arg("-u")
        .output_within(DEADLINE)
        .ok()
        .map(|o| run_common::text(&o.stdout).trim().to_string());
    if me.as_deref() != Some("0") {
        eprintln!("skipping: not root, so no other user to test as");
        return None;
    }
    match (id("-u"), id("-g")) {
        (Some(uid), Some(gid)) => Some((uid, gid)),
        _ => {
            run_common::skip(
                "the user sandgate-test is missing: add it (useradd -r sandgate-test)",
            );
            None
        }
    }
}

/// Sends a `before` request as Claude Code's hook would, from a program
/// inside the run, and prints the run's reply.
const FORGE_PY: &str = r#"import json, os, socket, sys
request = {"op": "before", "agent": "claude", "tool": "Bash",
           "input": {"command": sys.argv[1]}, "cwd": os.getcwd(), "session": "s"}
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(60)
s.connect(os.environ["SANDGATE_RUN_SOCKET"])
s.sendall((json.dumps(request) + "\n").encode())
reply = b""
while not reply.endswith(b"\n"):
    chunk = s.recv(65536)
    if not chunk:
        break
    reply += chunk
print(reply.decode().strip())
"#;

/// `sandgate run --no-ui -- ARGS…` in `tree`'s workspace, armed, with its
/// home and no audit log.
fn run_in(tree: &Tree, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
    cmd.args(["run", "--no-ui", "--"])
        .args(args)
        .current_dir(&tree.ws)
        .env("HOME", &tree.home)
        .env("SANDGATE_AUDIT", "off")
        .env("SANDGATE_SANDBOX", "1")
        .env_remove("SANDGATE_CONFIG")
        .env_remove("TMPDIR");
    cmd
}

#[test]
fn a_request_forged_inside_the_run_is_not_the_hooks_and_asks_nothing_of_the_agent() {
    if !supported() || !python_present() {
        return;
    }
    let tree = Tree::new().armed();
    fs::write(tree.ws.join("forge.py"), FORGE_PY).unwrap();
    let target = tree.out.join("x.txt");
    let command = format!("echo hi > {}", target.display());
    let out = run_in(&tree, &["python3", "forge.py", &command])
        .output_within(DEADLINE)
        .unwrap();
    let stdout = run_common::text(&out.stdout);
    let reply: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "no reply ({e}): {stdout}\n{}",
            run_common::text(&out.stderr)
        )
    });
    // Not Claude Code's hook: the run asks itself (nobody here), and no
    // grant waits for a spawn.
    assert_eq!(reply["ask_in_agent"], false, "{reply}");
    assert_eq!(reply["asked"], true, "{reply}");
    assert_eq!(reply["allowed"], false, "{reply}");
    assert!(
        reply["reason"]
            .as_str()
            .is_some_and(|r| r.contains(&*target.to_string_lossy())),
        "{reply}"
    );
    assert!(!target.exists());
}

/// A stand-in for Claude Code (the run's top process): it spawns `sandgate
/// hook claude` as Claude Code does (`/bin/sh -c 'SANDGATE hook claude'`,
/// the payload on stdin), then, while the grant waits, a forger (a child
/// that has run `/bin/sh` first and then `exec`s itself into Claude Code's
/// `Bash` wrapper of the command), then the genuine spawn of the wrapper,
/// then the same spawn again. Prints what each got.
const TOP_PY: &str = r#"import json, os, subprocess, sys
sandgate, target = sys.argv[1], sys.argv[2]
command = "echo hello > " + target + "; echo rc=$?"
fixed = ("\\builtin shopt -u extglob 2>/dev/null || true && "
         "{ \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && "
         "{ \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true")
snapshot = os.environ["HOME"] + "/.claude/shell-snapshots/snapshot-bash-1796455340918-fnnegb.sh"
wrapper = ("source " + snapshot + " 2>/dev/null || true && " + fixed + " && eval '"
           + command.replace("'", "'\"'\"'") + "' < /dev/null && pwd -P >| " + os.getcwd() + "/claude-8bca-cwd")
def run(argv, stdin=""):
    p = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120)
    return p.stdout + p.stderr
res = {}
payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash",
           "tool_input": {"command": command}, "cwd": os.getcwd(),
           "session_id": "s", "permission_mode": "default",
           "transcript_path": "/dev/null"}
res["hook"] = run(["/bin/sh", "-c", "'" + sandgate + "' hook claude"], json.dumps(payload))
res["forged"] = run(["/bin/sh", "-c", 'exec /bin/bash -c "$0"', wrapper])
res["forged_wrote"] = os.path.exists(target)
res["genuine"] = run(["/bin/bash", "-c", wrapper])
res["genuine_wrote"] = open(target).read() if os.path.exists(target) else None
res["again"] = run(["/bin/bash", "-c", wrapper])
print(json.dumps(res))
"#;

/// The policy: the gate lets the command run (the path outside is the
/// run's business).
const TOP_POLICY: &str = "permissions:\n  paths:\n    allow: [\"{ws}/**\", \"{out}/**\"]\n  commands:\n    allow: [\"^echo \"]\n";

#[test]
fn only_the_agents_own_spawn_of_the_command_gets_the_grant_once() {
    if !supported() || !python_present() {
        return;
    }
    let tree = Tree::new().armed();
    fs::write(tree.ws.join("top.py"), TOP_PY).unwrap();
    let policy = tree.home.join(".sandgate/permissions.yaml");
    fs::create_dir_all(policy.parent().unwrap()).unwrap();
    fs::write(
        &policy,
        TOP_POLICY
            .replace("{ws}", &tree.ws.to_string_lossy())
            .replace("{out}", &tree.out.to_string_lossy()),
    )
    .unwrap();
    let target = tree.out.join("x.txt");
    let out = Command::new(env!("CARGO_BIN_EXE_sandgate"))
        .args(["run", "--no-ui", "--", "python3", "top.py"])
        .arg(env!("CARGO_BIN_EXE_sandgate"))
        .arg(&target)
        .current_dir(&tree.ws)
        .env("HOME", &tree.home)
        .env("SANDGATE_AUDIT", "off")
        .env("SANDGATE_SANDBOX", "1")
        .env("SANDGATE_MANAGED_CONFIG", tree.root.join("no-managed.yaml"))
        .env_remove("SANDGATE_CONFIG")
        .env_remove("TMPDIR")
        .output_within(DEADLINE)
        .unwrap();
    let res = results(&out);
    let why = || format!("{res:#}\n{}", run_common::text(&out.stderr));
    // The hook, Claude Code's own spawn: the question goes to Claude Code's
    // dialog, with the path.
    let hook: Value = serde_json::from_str(res["hook"].as_str().unwrap().trim())
        .unwrap_or_else(|e| panic!("the hook's answer ({e}): {}", why()));
    let output = &hook["hookSpecificOutput"];
    assert_eq!(output["permissionDecision"], "ask", "{}", why());
    assert!(
        output["permissionDecisionReason"]
            .as_str()
            .is_some_and(|r| r.contains(&*target.to_string_lossy())),
        "{}",
        why()
    );
    // The forger, a child of the top process with the wrapper's exact
    // arguments but not at its first `exec`: refused (the run has nobody
    // to ask about a pending grant's path written by another process).
    assert_eq!(res["forged_wrote"], false, "{}", why());
    assert!(
        res["forged"].as_str().unwrap().contains("rc=1"),
        "{}",
        why()
    );
    // The genuine spawn writes, without a question.
    assert_eq!(res["genuine_wrote"], "hello\n", "{}", why());
    assert!(
        res["genuine"].as_str().unwrap().contains("rc=0"),
        "{}",
        why()
    );
    // The grant was used once.
    assert!(res["again"].as_str().unwrap().contains("rc=1"), "{}", why());
}

/// `sandgate run` finds a program named without a path on `PATH` itself (so
/// that the confined child makes one `exec`, not one per directory) and
/// starts what `execvp` would: the first regular file with an execute bit,
/// past a directory and a file without one of the same name, under the name
/// it was given (`$0`).
#[test]
fn a_program_is_found_on_path_as_exec_would_and_keeps_its_name() {
    use std::os::unix::fs::PermissionsExt;
    if !supported() {
        return;
    }
    let tree = Tree::new().armed();
    let dirs: Vec<_> = ["a", "b", "c", "d"]
        .iter()
        .map(|d| tree.out.join(d))
        .collect();
    for dir in &dirs {
        fs::create_dir_all(dir).unwrap();
    }
    // a/prog: a directory; b/prog: not executable; c/prog: the one; d/prog: later.
    fs::create_dir(dirs[0].join("prog")).unwrap();
    fs::write(dirs[1].join("prog"), "#!/bin/sh\necho wrong-b\n").unwrap();
    fs::write(dirs[2].join("prog"), "#!/bin/sh\necho \"found $0\"\n").unwrap();
    fs::set_permissions(dirs[2].join("prog"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(dirs[3].join("prog"), "#!/bin/sh\necho wrong-d\n").unwrap();
    fs::set_permissions(dirs[3].join("prog"), fs::Permissions::from_mode(0o755)).unwrap();
    let system = std::env::var("PATH").unwrap_or_default();
    let listed =
        std::env::join_paths(dirs.iter().cloned().chain(std::env::split_paths(&system))).unwrap();
    let run = |program: &str, args: &[&str]| {
        let out = run_in(&tree, &[&[program], args].concat())
            .env("PATH", &listed)
            .output_within(DEADLINE)
            .unwrap();
        assert!(out.status.success(), "{}", run_common::text(&out.stderr));
        run_common::text(&out.stdout).trim().to_string()
    };
    assert_eq!(
        run("prog", &[]),
        format!("found {}", dirs[2].join("prog").display())
    );
    // `$0` of `bash -c` is the name the program was started under.
    assert_eq!(run("bash", &["-c", "echo \"$0\""]), "bash");
}
