//! `sandgate run` with the mount layer: protected paths are read-only bind
//! mounts in the program's own mount namespace, the workspace root has a
//! Landlock rule of its own, and nothing the program does lifts the binds.
//! Real binary, real kernel.
//!
//! Some attempts issue `openat` with the preload library's marker (public on
//! purpose), so that the kernel alone (Landlock and the mounts) decides them,
//! without the supervisor's second look.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use run_common::wait::{Bounded, DEADLINE};
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use run_common::{text, Tree as Env};
use sandgate_confine::preload::MARKER;

mod run_common;

fn env() -> Env {
    env_in(run_common::outside::base())
}

fn env_in(base: &Path) -> Env {
    let e = Env::new_in(base);
    fs::create_dir_all(e.ws.join(".sandgate")).unwrap();
    fs::create_dir_all(e.home.join(".sandgate")).unwrap();
    fs::write(e.ws.join(".sandgate/sandbox.json"), "{}\n").unwrap();
    fs::write(e.home.join(".sandgate/keep"), "keep\n").unwrap();
    e
}

impl Env {
    fn sandgate_as(&self, bin: &Path) -> Command {
        let mut cmd = Command::new(bin);
        cmd.current_dir(&self.ws)
            .env("HOME", &self.home)
            .env("SANDGATE_AUDIT", "off")
            .env("SANDGATE_SANDBOX", "1")
            .env_remove("SANDGATE_RUN_PROTECTION")
            .env_remove("TMPDIR")
            .env_remove("SANDGATE_CONFIG")
            .env_remove("SANDGATE_LOCAL_CONFIG");
        cmd
    }

    fn sandgate(&self) -> Command {
        self.sandgate_as(Path::new(env!("CARGO_BIN_EXE_sandgate")))
    }

    fn dry_run(&self, protection: Option<&str>) -> (Output, serde_json::Value) {
        let mut cmd = self.sandgate();
        if let Some(p) = protection {
            cmd.env("SANDGATE_RUN_PROTECTION", p);
        }
        let out = cmd
            .args(["run", "--dry-run", "--json"])
            .output_within(DEADLINE)
            .unwrap();
        let v = serde_json::from_slice(&out.stdout).unwrap_or_default();
        (out, v)
    }

    /// `sandgate run --no-ui -- sh -c SCRIPT` with `protection` (default: auto).
    fn run(&self, protection: Option<&str>, script: &str) -> Output {
        let mut cmd = self.sandgate();
        if let Some(p) = protection {
            cmd.env("SANDGATE_RUN_PROTECTION", p);
        }
        cmd.env("MARKER", MARKER.to_string())
            .args(["run", "--no-ui", "--", "sh", "-c", script])
            .output_within(DEADLINE)
            .unwrap()
    }

    fn settings(&self) -> String {
        fs::read_to_string(self.ws.join(".sandgate/sandbox.json")).unwrap()
    }
}

/// Whether this machine gives `sandgate run` its mount layer; prints why not.
fn mount_layer(e: &Env) -> bool {
    let (out, v) = e.dry_run(None);
    if v["mechanism"]["landlockAbi"].as_u64().unwrap_or(0) == 0 {
        run_common::skip(&format!(
            "this kernel has no Landlock ({})",
            text(&out.stderr)
        ));
        return false;
    }
    if v["protection"] != "mount" {
        run_common::skip(&format!("no mount namespace for the program here (protection {}); the carving tests in run_confine.rs cover this machine", v["protection"]));
        return false;
    }
    true
}

fn python() -> bool {
    let ok = Command::new("python3")
        .arg("--version")
        .output_within(DEADLINE)
        .is_ok_and(|o| o.status.success());
    if !ok {
        run_common::skip("python3 is needed for raw system calls");
    }
    ok
}

/// A python script that issues `openat(AT_FDCWD, argv[i], O_WRONLY|O_CREAT|O_APPEND)`
/// marked with `$MARKER` for each argument and prints `PATH ok` or `PATH ERRNO-NAME`.
const MARKED_OPEN: &str = r#"python3 -c '
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
L = ctypes.c_long
for p in sys.argv[1:]:
    fd = libc.syscall(L(257), L(-100), p.encode(), L(os.O_WRONLY | os.O_CREAT | os.O_APPEND), L(0o644), L(0), ctypes.c_ulong(int(os.environ["MARKER"])))
    if fd >= 0:
        os.write(fd, b"forged\n"); os.close(fd)
    print(p, "ok" if fd >= 0 else errno.errorcode[ctypes.get_errno()])
'"#;

#[test]
fn the_report_names_the_protection_in_force() {
    let e = env();
    let (out, v) = e.dry_run(None);
    if v["mechanism"]["landlockAbi"].as_u64().unwrap_or(0) == 0 {
        run_common::skip(&format!(
            "this kernel has no Landlock ({})",
            text(&out.stderr)
        ));
        return;
    }
    assert_eq!(v["protection"], v["mechanism"]["protection"]);
    if v["protection"] == "mount" {
        let mounted: Vec<&str> = v["mounted"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        let ws_state = e.ws.join(".sandgate");
        let home_state = e.home.join(".sandgate");
        assert!(mounted.contains(&ws_state.to_str().unwrap()), "{v:#}");
        assert!(mounted.contains(&home_state.to_str().unwrap()), "{v:#}");
    } else {
        assert_eq!(v["protection"], "carve", "{v:#}");
    }

    let (_, carve) = e.dry_run(Some("carve"));
    assert_eq!(carve["protection"], "carve");
    assert_eq!(carve["mechanism"]["protection"], "carve");
    assert_eq!(carve["mounted"], serde_json::json!([]));
    assert_eq!(carve["protected"], v["protected"]);

    let (out, _) = e.dry_run(Some("bind"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "SANDGATE_RUN_PROTECTION=`bind` is not a protection; use `auto`, `mount` or `carve`"
        ),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn protected_paths_are_read_only_binds_and_landlock_holds_the_rest() {
    let e = env();
    if !mount_layer(&e) || !python() {
        return;
    }
    fs::create_dir(e.ws.join("sub")).unwrap();
    let script = format!(
        "grep ' ro[,. ]' /proc/self/mountinfo | cut -d' ' -f5; {MARKED_OPEN} sub/f1 .sandgate/sandbox.json \"$HOME/.sandgate/keep\" .mcp.json f0; echo x > f2"
    );
    let out = e.run(None, &script);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let mounts: Vec<&str> = stdout.lines().collect();
    assert!(
        mounts.contains(&e.ws.join(".sandgate").to_str().unwrap()),
        "{stdout}"
    );
    assert!(
        mounts.contains(&e.home.join(".sandgate").to_str().unwrap()),
        "{stdout}"
    );
    // Landlock alone lets the program create `sub/f1`: `sub` has a rule of
    // its own, no supervisor involved.
    assert!(stdout.contains("sub/f1 ok"), "{stdout}");
    assert!(stdout.contains(".sandgate/sandbox.json EROFS"), "{stdout}");
    assert!(stdout.contains("keep EROFS"), "{stdout}");
    assert_eq!(fs::read_to_string(e.ws.join("sub/f1")).unwrap(), "forged\n");
    // The root misses protected names (`.mcp.json`), so it is carved even
    // with the mount layer: Landlock refuses a new entry there to a forged
    // marked open, and the supervisor makes the plain one (`f2`).
    assert!(stdout.contains(".mcp.json EACCES"), "{stdout}");
    assert!(stdout.contains("f0 EACCES"), "{stdout}");
    assert!(!e.ws.join(".mcp.json").exists());
    assert!(!e.ws.join("f0").exists());
    assert_eq!(fs::read_to_string(e.ws.join("f2")).unwrap(), "x\n");
    assert_eq!(e.settings(), "{}\n");
    assert_eq!(
        fs::read_to_string(e.home.join(".sandgate/keep")).unwrap(),
        "keep\n"
    );
    // The binds were the program's alone.
    let ours = fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!ours.contains(e.ws.to_str().unwrap()), "{ours}");

    // Carved, the same marked open of a new root entry is refused by Landlock
    // (the supervisor then performs an unmarked one).
    let script = format!(
        "{MARKED_OPEN} f3; grep -F '{}/.sandgate' /proc/self/mountinfo || echo no-bind",
        e.ws.display()
    );
    let out = e.run(Some("carve"), &script);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("f3 EACCES"), "{stdout}");
    assert!(stdout.contains("no-bind"), "{stdout}");
}

#[test]
fn the_program_cannot_lift_the_binds() {
    let e = env();
    if !mount_layer(&e) || !python() {
        return;
    }
    // Every way to unmount, remount or clone around the binds, then a
    // marked write (the kernel alone decides it) and a plain one.
    let script = format!(
        r#"umount .sandgate; umount -l .sandgate; mount -o remount,rw,bind .sandgate
mount --bind /tmp .sandgate
python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
class Attr(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("set", "clr", "prop", "userns")]
rw = Attr(0, 1, 0, 0)
for name, rc in [
    ("umount2", libc.umount2(b".sandgate", 2)),
    ("remount", libc.mount(None, b".sandgate", None, 32 | 4096 | 32768, None)),
    ("mount_setattr", libc.syscall(442, -100, b".sandgate", 0x8000, ctypes.byref(rw), ctypes.sizeof(rw))),
    ("open_tree", libc.syscall(428, -100, b".", 1)),
    ("fsopen", libc.syscall(430, b"tmpfs", 0)),
]:
    print(name, "ok" if rc >= 0 else "refused")
'
unshare -Urm sh -c 'umount -l .sandgate && echo nested-umount-ok'
{MARKED_OPEN} .sandgate/sandbox.json "/proc/$PPID/root{ws}/.sandgate/sandbox.json"
echo plain >> .sandgate/sandbox.json
cd .sandgate && echo cd >> sandbox.json
true"#,
        ws = e.ws.display()
    );
    let out = e.run(None, &script);
    let stdout = text(&out.stdout);
    for call in ["umount2", "remount", "mount_setattr", "open_tree", "fsopen"] {
        assert!(stdout.contains(&format!("{call} refused")), "{stdout}");
    }
    assert!(!stdout.contains("nested-umount-ok"), "{stdout}");
    assert!(stdout.contains(".sandgate/sandbox.json EROFS"), "{stdout}");
    assert!(
        stdout.contains("/.sandgate/sandbox.json EACCES"),
        "{stdout}"
    );
    assert_eq!(e.settings(), "{}\n", "stderr: {}", text(&out.stderr));
}

#[test]
fn a_working_directory_inside_a_protected_path_goes_through_its_bind() {
    let e = env();
    if !mount_layer(&e) || !python() {
        return;
    }
    let out = e
        .sandgate()
        .current_dir(e.ws.join(".sandgate"))
        .env("MARKER", MARKER.to_string())
        .args(["run", "--no-ui", "--workspace"])
        .arg(&e.ws)
        .args(["--", "sh", "-c", &format!("{MARKED_OPEN} sandbox.json")])
        .output_within(DEADLINE)
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(stdout.contains("sandbox.json EROFS"), "{stdout}");
    assert_eq!(e.settings(), "{}\n");
}

#[test]
fn carving_on_request_still_protects() {
    let e = env();
    let (_, v) = e.dry_run(Some("carve"));
    if v["mechanism"]["landlockAbi"].as_u64().unwrap_or(0) == 0 {
        run_common::skip("this kernel has no Landlock");
        return;
    }
    let out = e.run(
        Some("carve"),
        "echo x > f1; echo y >> .sandgate/sandbox.json; rm -rf .sandgate; mv .sandgate moved; grep -c ' ro[,. ]' /proc/self/mountinfo || true",
    );
    assert_eq!(fs::read_to_string(e.ws.join("f1")).unwrap(), "x\n");
    assert_eq!(e.settings(), "{}\n", "stderr: {}", text(&out.stderr));
    assert!(!e.ws.join("moved").exists());
    assert!(text(&out.stderr).contains("read-only to the confined program"));
}

/// Runs `sandgate run` as the unprivileged user 65534 (only when the tests
/// run as root and `setpriv` exists): the user-namespace path.
#[test]
fn an_unprivileged_user_gets_the_binds_in_its_own_user_namespace() {
    let uid = Command::new("id")
        .arg("-u")
        .output_within(DEADLINE)
        .unwrap();
    if text(&uid.stdout).trim() != "0" {
        run_common::skip("runs the unprivileged path as user 65534, which needs root to set up");
        return;
    }
    let has_setpriv = Command::new("setpriv")
        .arg("--version")
        .output_within(DEADLINE)
        .is_ok_and(|o| o.status.success());
    if !has_setpriv {
        run_common::skip("setpriv (util-linux) is not installed");
        return;
    }
    // Under /tmp, which user 65534 can reach; the binary is copied there too.
    let e = env_in(Path::new("/tmp"));
    let root = e.ws.parent().unwrap().to_path_buf();
    let bin = root.join("sandgate");
    run_common::exe::copy_executable(Path::new(env!("CARGO_BIN_EXE_sandgate")), &bin);
    let chown = Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(&root)
        .status_within(DEADLINE)
        .unwrap();
    assert!(chown.success());
    let as_nobody = |args: &[&str]| {
        let mut cmd = e.sandgate_as(Path::new("setpriv"));
        cmd.args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
            .arg(&bin)
            .args(args);
        cmd.output_within(DEADLINE).unwrap()
    };
    let dry = as_nobody(&["run", "--dry-run", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap_or_default();
    if v["protection"] != "mount" {
        run_common::skip(&format!(
            "unprivileged user namespaces are not available here ({})",
            text(&dry.stderr)
        ));
        return;
    }
    let out = as_nobody(&[
        "run",
        "--no-ui",
        "--",
        "sh",
        "-c",
        "id -u; grep ' ro[,. ]' /proc/self/mountinfo | cut -d' ' -f5; echo x > f1; echo y >> .sandgate/sandbox.json; umount -l .sandgate; unshare -Urm sh -c 'umount -l .sandgate && echo y >> .sandgate/sandbox.json'; /usr/bin/python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind(\"root.sock\"); s.listen(1); c = socket.socket(socket.AF_UNIX); c.connect(\"root.sock\"); print(\"socket-ok\")'; true",
    ]);
    let stdout = text(&out.stdout);
    // The root is carved: sandgate bound the program's socket for it, from
    // outside the program's user namespace.
    assert!(
        stdout.contains("socket-ok"),
        "{stdout} {}",
        text(&out.stderr)
    );
    let sock = fs::symlink_metadata(e.ws.join("root.sock")).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_socket(&sock.file_type()));
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&sock), 65534);
    assert!(stdout.starts_with("65534\n"), "{stdout}");
    assert!(
        stdout.contains(e.ws.join(".sandgate").to_str().unwrap()),
        "{stdout}"
    );
    assert_eq!(fs::read_to_string(e.ws.join("f1")).unwrap(), "x\n");
    assert_eq!(e.settings(), "{}\n", "stderr: {}", text(&out.stderr));
}

/// A `sandgate run` inside another one cannot make its mount namespace (the
/// outer Landlock domain refuses `mount`): a real case of the fallback.
#[test]
fn without_a_mount_namespace_the_start_falls_back_to_carving() {
    let e = env();
    if !mount_layer(&e) {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_sandgate");
    // The inner workspace has its own settings (the outer one's are read-only).
    let ws = e.ws.join("inner");
    fs::create_dir_all(ws.join(".sandgate")).unwrap();
    fs::write(ws.join(".sandgate/sandbox.json"), "{}\n").unwrap();
    let inner = |protection: &str, args: &str| {
        let script = format!("cd inner && SANDGATE_RUN_PROTECTION={protection} {bin} run {args}");
        e.run(None, &script)
    };
    let out = inner("auto", "--dry-run --json");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(v["protection"], "carve", "{}", text(&out.stderr));
    assert_eq!(v["mounted"], serde_json::json!([]));

    let out = inner("mount", "--dry-run --json");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cannot hold the protected paths read-only with bind mounts"),
        "{}",
        text(&out.stderr)
    );

    // A real start: the mount attempt fails and the carving attempt is the
    // one whose outcome is reported (nested, it stops at its seccomp
    // listener, `EBUSY`: the kernel gives one per process tree).
    let out = inner("auto", "--no-ui -- sh -c 'echo started > started.txt'");
    let stderr = text(&out.stderr);
    assert!(
        !stderr.contains("bind mounts"),
        "the mount failure leaked: {stderr}"
    );
    let started = ws.join("started.txt").exists();
    assert!(
        started || stderr.contains("cannot start `sh`"),
        "neither started nor refused: {stderr}"
    );
    let out = inner(
        "mount",
        "--no-ui -- sh -c 'echo started > started-mount.txt'",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!ws.join("started-mount.txt").exists());
}
