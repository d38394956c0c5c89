//! The preload fast path against the real kernel: programs started through
//! `confine::spawn` with a listener that counts every notification and lets
//! the kernel continue (so the Landlock floor decides each call).

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

#[path = "../../../tests/support/wait.rs"]
mod wait;

use wait::{Bounded, BoundedChild, DEADLINE};

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

#[path = "../../../tests/support/outside.rs"]
mod outside;

use sandgate_confine::{
    self as confine, preload, Ready, RunPlan, RunPlanExt, RunPlanInputs, SandboxSettings,
};

struct Fixture {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    out: PathBuf,
    plan: RunPlan,
}

/// A workspace with a subdirectory (a Landlock rule of its own), an outside
/// directory and a home, under Cargo's target tmp dir (outside every allowed
/// tree, see `outside.rs`).
fn fixture() -> Option<Fixture> {
    if confine::Mechanism::probe().landlock_abi == 0 {
        eprintln!("skipping: this kernel has no Landlock");
        return None;
    }
    let base = outside::base();
    let tmp = tempfile::tempdir_in(base).unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (ws, out, home) = (root.join("ws"), root.join("out"), root.join("home"));
    for d in [&ws.join("sub"), &out, &home] {
        fs::create_dir_all(d).unwrap();
    }
    let plan = RunPlan::build(&RunPlanInputs {
        workspaces: vec![ws.clone()],
        home,
        tmpdir: None,
        policy_cache: None,
        credentials: Vec::new(),
        settings: SandboxSettings::default(),
    });
    Some(Fixture {
        _tmp: tmp,
        ws,
        out,
        plan,
    })
}

/// The calls the listener received: (system call, sixth argument).
struct Run {
    output: Output,
    notified: Vec<(i64, u64)>,
}

impl Run {
    fn write_opens(&self) -> usize {
        self.notified
            .iter()
            .filter(|(nr, _)| *nr == libc::SYS_openat || *nr == libc::SYS_open)
            .count()
    }
}

impl Fixture {
    /// Runs `program args` confined; every notification is continued.
    fn run(&self, program: &str, args: &[&str]) -> Run {
        self.run_answering(program, args, |_| false)
    }

    /// Like [`Fixture::run`], but each notified open "succeeds" with
    /// descriptor 0 without happening: a supervisor that performs it.
    fn run_performing(&self, program: &str, args: &[&str]) -> Run {
        self.run_answering(program, args, |nr| nr == libc::SYS_openat)
    }

    /// Runs `program args` confined: a notified call whose number `perform`
    /// picks succeeds with descriptor 0 without happening, the rest continue.
    fn run_answering(&self, program: &str, args: &[&str], perform: impl Fn(i64) -> bool) -> Run {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(&self.ws)
            .env("OUT", &self.out)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let confined = confine::spawn(&mut cmd, &self.plan).unwrap();
        let listener = confined.listener;
        let child = confined.child;
        let pid = child.id().to_string();
        let reader = std::thread::spawn(move || child.wait_with_output_within(DEADLINE).unwrap());
        let mut notified = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            if std::time::Instant::now() > deadline {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid])
                    .status_within(DEADLINE);
                panic!("`{program}` still running after 60 s");
            }
            match listener.wait(100).unwrap() {
                Ready::Notification => {
                    let Ok(n) = listener.recv() else { continue };
                    notified.push((n.nr, n.args[5]));
                    if perform(n.nr) {
                        listener.succeed(n.id, 0);
                    } else {
                        listener.allow(n.id);
                    }
                }
                Ready::Gone => break,
                Ready::Idle => {}
            }
        }
        Run {
            output: wait::join_within(reader, DEADLINE, "the confined program").unwrap(),
            notified,
        }
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const LOOP: &str = r#"for i in $(seq 200); do echo x > sub/f$i; done; echo "$LD_PRELOAD""#;

#[test]
fn a_preloaded_shell_loop_inside_the_workspace_is_never_notified() {
    let Some(f) = fixture() else { return };
    let run = f.run("sh", &["-c", LOOP]);
    assert!(run.output.status.success(), "{}", text(&run.output.stderr));
    let library = f
        .plan
        .held()
        .into_iter()
        .find(|p| p.ends_with("home/.sandgate"))
        .unwrap();
    let library = library.join("lib").join(preload::file_name());
    assert_eq!(text(&run.output.stdout).trim(), library.to_str().unwrap());
    assert_eq!(fs::read_dir(f.ws.join("sub")).unwrap().count(), 200);
    assert_eq!(run.write_opens(), 0, "notified: {:?}", run.notified);
}

#[test]
fn without_the_preload_the_same_loop_is_notified_once_per_write() {
    let Some(f) = fixture() else { return };
    let run = f.run("env", &["-u", "LD_PRELOAD", "sh", "-c", LOOP]);
    assert!(run.output.status.success(), "{}", text(&run.output.stderr));
    assert_eq!(text(&run.output.stdout).trim(), "");
    assert_eq!(fs::read_dir(f.ws.join("sub")).unwrap().count(), 200);
    assert_eq!(run.write_opens(), 200, "notified: {:?}", run.notified);
}

#[test]
fn a_write_landlock_refuses_is_retried_unmarked_for_the_supervisor() {
    let Some(f) = fixture() else { return };
    let script = r#"for i in 1 2 3; do echo x > "$OUT/g$i" 2>/dev/null || echo refused; done"#;
    let run = f.run("sh", &["-c", script]);
    assert_eq!(text(&run.output.stdout), "refused\nrefused\nrefused\n");
    assert_eq!(fs::read_dir(&f.out).unwrap().count(), 0);
    assert_eq!(run.write_opens(), 3, "notified: {:?}", run.notified);
    assert!(
        run.notified.iter().all(|(_, a5)| *a5 != preload::MARKER),
        "a marked open reached the supervisor: {:?}",
        run.notified
    );
}

#[test]
fn a_forged_marker_gets_landlock_s_refusal_without_a_question() {
    let Some(f) = fixture() else { return };
    // A raw system call with the marker, from a program without the library.
    let script = format!(
        "import ctypes, os\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         L = ctypes.c_long\n\
         def raw(path, marker):\n    \
             fd = libc.syscall(L(257), L(-100), ctypes.c_char_p(path.encode()), \
                 L(os.O_WRONLY | os.O_CREAT), L(0o644), L(0), ctypes.c_ulong(marker))\n    \
             return 'ok' if fd >= 0 else os.strerror(ctypes.get_errno())\n\
         print(raw(os.environ['OUT'] + '/forged', {marker}))\n\
         print(raw('sub/forged', {marker}))\n",
        marker = preload::MARKER
    );
    let run = f.run("env", &["-u", "LD_PRELOAD", "python3", "-c", &script]);
    assert!(run.output.status.success(), "{}", text(&run.output.stderr));
    assert_eq!(text(&run.output.stdout), "Permission denied\nok\n");
    assert!(!f.out.join("forged").exists());
    assert!(f.ws.join("sub/forged").exists());
    assert!(
        !run.notified.iter().any(|(_, a5)| *a5 == preload::MARKER),
        "{:?}",
        run.notified
    );
}

/// Creates `N` files relative to `REFUSED` (where Landlock refuses them),
/// then `N` relative to `ALLOWED`, changing into each directory first.
const CREATOR: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static int create_in(const char *dir, const char *prefix, int n) {
    if (chdir(dir)) { perror(dir); return 1; }
    char name[64];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s%d", prefix, i);
        int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) { perror(name); return 1; }
        if (fd > 2) close(fd);
    }
    return 0;
}
int main(int argc, char **argv) {
    int n = atoi(argv[3]);
    return create_in(argv[1], "refused", n) || create_in(argv[2], "allowed", n);
}
"#;

#[test]
fn after_one_refusal_creations_there_go_to_the_supervisor_directly_until_chdir() {
    let Some(f) = fixture() else { return };
    let bin = f.out.parent().unwrap().join("bin");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("creator.c"), CREATOR).unwrap();
    let status = Command::new("cc")
        .arg("-o")
        .arg(bin.join("creator"))
        .arg(bin.join("creator.c"))
        .status_within(DEADLINE)
        .expect("a C compiler (`cc`) is installed");
    assert!(status.success());
    let creator = bin.join("creator").to_string_lossy().into_owned();
    let (out, sub) = (
        f.out.to_string_lossy().into_owned(),
        f.ws.join("sub").to_string_lossy().into_owned(),
    );
    let have_strace = Command::new("strace")
        .arg("-V")
        .output_within(DEADLINE)
        .is_ok();
    let run = if have_strace {
        // The trace goes to stderr: a log file strace opened itself would be
        // one more (faked) open.
        let args = [
            "-f",
            "-qq",
            "-e",
            "trace=openat",
            &creator,
            &out,
            &sub,
            "20",
        ];
        f.run_performing("strace", &args)
    } else {
        eprintln!("no `strace`: the refused attempts are not counted");
        f.run_performing(&creator, &[&out, &sub, "20"])
    };
    assert!(run.output.status.success(), "{}", text(&run.output.stderr));
    // The 20 creations in the refused directory reached the supervisor; the
    // 20 in `sub` after the chdir took the fast path again.
    let opens: Vec<_> = run
        .notified
        .iter()
        .filter(|(nr, _)| *nr == libc::SYS_openat)
        .collect();
    assert_eq!(opens.len(), 20, "{:?}", run.notified);
    let allowed = fs::read_dir(f.ws.join("sub"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("allowed")
        })
        .count();
    assert_eq!(allowed, 20);
    if have_strace {
        // Only the first creation there tried the marked open first.
        let log = text(&run.output.stderr);
        let refused = log
            .lines()
            .filter(|l| l.contains("\"refused") && l.contains("EACCES"))
            .count();
        assert_eq!(refused, 1, "{log}");
    }
}
