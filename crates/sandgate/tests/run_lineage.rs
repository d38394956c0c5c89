//! `sandgate run`'s exec tracking relies on no process of the tree passing
//! for a fresh child of the top process, nor writing into another's memory
//! (see `sandgate_sandbox::supervisor::lineage`). Each way is tried for
//! real, first unconfined (where it works), then inside the run (where it
//! must fail): `clone(CLONE_PARENT)`, `clone3`, `PTRACE_SEIZE` of the top
//! process, `process_vm_writev` and a write-open of `/proc/TOP/mem` into
//! it, and `prctl(PR_SET_CHILD_SUBREAPER)`. And a request sent to the run's
//! socket by a program inside the run, as if from Claude Code's hook, is
//! not taken for the hook's: the run asks itself (here: nobody, so it
//! refuses), and no question goes to Claude Code's dialog.

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

#[test]
fn nothing_inside_the_run_passes_for_a_child_of_the_agent_or_writes_into_it() {
    if !supported() || !python_present() {
        return;
    }
    let tree = Tree::new().armed();
    fs::write(tree.ws.join("attack.py"), ATTACK_PY).unwrap();
    let ways = [
        "clone_parent",
        "clone3",
        "ptrace_seize",
        "process_vm_writev",
        "proc_mem",
        "subreaper",
    ];
    // Unconfined, as root (or with the same rights): every way works.
    let free = Command::new("sh")
        .args(["-c", SCRIPT])
        .current_dir(&tree.ws)
        .output_within(DEADLINE)
        .unwrap();
    let free = results(&free);
    let unprivileged_ptrace = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .is_ok_and(|s| s.trim() != "0");
    let root = run_common::text(
        &Command::new("id")
            .arg("-u")
            .output_within(DEADLINE)
            .unwrap()
            .stdout,
    )
    .trim()
        == "0";
    for way in ways {
        let blocked_by_yama = !root
            && unprivileged_ptrace
            && matches!(way, "ptrace_seize" | "process_vm_writev" | "proc_mem");
        if blocked_by_yama {
            continue;
        }
        assert_eq!(
            free[way]["ok"], true,
            "unconfined, {way} should work: {free}"
        );
    }
    assert_eq!(free["process_vm_readv"]["ok"], true, "{free}");
    // Inside the run: each fails, with the error the run gives it.
    let out = Command::new(env!("CARGO_BIN_EXE_sandgate"))
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

#[test]
fn a_request_forged_inside_the_run_is_not_the_hooks_and_asks_nothing_of_the_agent() {
    if !supported() || !python_present() {
        return;
    }
    let tree = Tree::new().armed();
    fs::write(tree.ws.join("forge.py"), FORGE_PY).unwrap();
    let target = tree.out.join("x.txt");
    let command = format!("echo hi > {}", target.display());
    let out = Command::new(env!("CARGO_BIN_EXE_sandgate"))
        .args(["run", "--no-ui", "--", "python3", "forge.py", &command])
        .current_dir(&tree.ws)
        .env("HOME", &tree.home)
        .env("SANDGATE_AUDIT", "off")
        .env("SANDGATE_SANDBOX", "1")
        .env_remove("SANDGATE_CONFIG")
        .env_remove("TMPDIR")
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
