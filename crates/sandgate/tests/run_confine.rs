//! `sandgate run`: real writes from confined programs against the real kernel
//! (Landlock + seccomp user notification) and the real binary.
//!
//! Workspaces and "outside" directories live under Cargo's target tmp dir,
//! which is outside every allowed tree; HOME is a fresh directory per test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use run_common::wait::{Bounded, DEADLINE};
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod run_common;

use run_common::{supported, text, wait, Tree as Env};

fn env() -> Env {
    env_in(run_common::outside::base())
}

fn env_in(base: &Path) -> Env {
    let e = Env::new_in(base);
    fs::create_dir_all(e.ws.join("src")).unwrap();
    fs::write(e.ws.join("src/main.txt"), "main\n").unwrap();
    e
}

impl Env {
    fn sandgate(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
        cmd.current_dir(&self.ws)
            .env("HOME", &self.home)
            .env("SANDGATE_AUDIT", "off")
            .env("SANDGATE_SANDBOX", "1")
            .env_remove("TMPDIR")
            .env_remove("SANDGATE_CONFIG")
            .env_remove("SANDGATE_LOCAL_CONFIG");
        cmd
    }

    /// `sandgate run --no-ui -- sh -c SCRIPT` in the workspace; `$OUT` is the outside dir.
    fn run(&self, script: &str) -> Output {
        self.sandgate()
            .env("OUT", &self.out)
            .args(["run", "--no-ui", "--", "sh", "-c", script])
            .output_within(DEADLINE)
            .unwrap()
    }

    fn settings(&self) -> PathBuf {
        self.ws.join(".sandgate/sandbox.json")
    }

    fn write_settings(&self, json: &str) {
        fs::create_dir_all(self.ws.join(".sandgate")).unwrap();
        fs::write(self.settings(), json).unwrap();
    }

    /// Names in the outside dir.
    fn outside_entries(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// A workspace of `/`, or one above the home directory, would leave the
/// whole file system or every home writable: `sandgate run` refuses it
/// before it writes or starts anything. The home directory itself is fine.
#[test]
fn a_workspace_above_home_or_at_the_root_is_refused() {
    if !supported() {
        return;
    }
    let e = env();
    let home = e.root.join("users/me");
    fs::create_dir_all(&home).unwrap();
    let above = e.root.join("users");
    let escaped = above.join("escaped.txt");
    let run = |cwd: &Path, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_sandgate"))
            .current_dir(cwd)
            .env("HOME", &home)
            .env("SANDGATE_AUDIT", "off")
            .env("SANDGATE_SANDBOX", "1")
            .env_remove("TMPDIR")
            .args(args)
            .output_within(DEADLINE)
            .unwrap()
    };
    let write = format!("echo x > '{}'", escaped.display());
    // The control: from the home directory the write outside it is refused
    // by the confinement, and sandgate runs.
    let out = run(&home, &["run", "--no-ui", "--", "sh", "-c", &write]);
    assert!(!escaped.exists(), "{}", text(&out.stderr));
    assert!(home.join(".sandgate/sandbox.json").exists());
    for (cwd, args) in [
        (
            &above,
            vec!["run", "--no-ui", "--", "sh", "-c", write.as_str()],
        ),
        (
            &home,
            vec!["run", "--workspace", "..", "--", "sh", "-c", write.as_str()],
        ),
        (&above, vec!["run", "--dry-run"]),
    ] {
        let out = run(cwd, &args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!escaped.exists(), "{args:?}: the program ran");
        assert!(
            err.contains(&format!("workspace `{}` is too wide", above.display())),
            "{args:?}: {err}"
        );
        assert!(
            !above.join(".sandgate").exists(),
            "{args:?}: state was written"
        );
    }
    // `/` itself, by `--dry-run` (which starts nothing); sandgate's state
    // directory there is removed again should a regression make it.
    let root_state = Path::new("/.sandgate");
    let existed = root_state.exists();
    let out = run(&home, &["run", "--dry-run", "--workspace", "/"]);
    if !existed && root_state.exists() {
        let _ = fs::remove_dir_all(root_state);
    }
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("workspace `/` is too wide: the whole file system"),
        "{}",
        text(&out.stderr)
    );
}

/// A named pipe opened for writing before its reader: sandgate performs
/// that open for the program (the workspace root is carved), and must not
/// hold every other call of the program while the open waits.
#[test]
fn a_named_pipe_waiting_for_its_reader_holds_only_itself() {
    if !supported() {
        return;
    }
    for protection in ["mount", "carve"] {
        let e = env();
        let child = e
            .sandgate()
            .env("SANDGATE_RUN_PROTECTION", protection)
            .args(["run", "--no-ui", "--", "sh", "-c", "mkfifo p; (exec 3>p; echo writer-opened) & sleep 1; echo before-touch; touch x; echo touched; exec 4<p; wait; echo done"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let out = wait::finish(child, 20, protection);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{protection}: {}", text(&out.stderr));
        for line in ["before-touch", "touched", "writer-opened", "done"] {
            assert!(stdout.contains(line), "{protection}: {stdout}");
        }
    }
}

#[test]
fn writes_inside_the_workspace_and_temp_work() {
    if !supported() {
        return;
    }
    let e = env();
    let script = r#"set -e
echo a > top.txt
echo b > src/nested.txt
mkdir -p build/deep && echo c > build/deep/c.txt
python3 -c "open('py.txt','w').write('py')"
touch touched && mv touched moved && ln -s moved link
truncate -s 1 src/main.txt
rm top.txt && mkdir gone && rmdir gone
t=$(mktemp /tmp/sandgate-run-XXXXXX) && echo t > "$t" && rm "$t"
echo v > /var/tmp/sandgate-run-$$ && rm /var/tmp/sandgate-run-$$
echo ok > /dev/null
echo done"#;
    let out = e.run(script);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert!(text(&out.stdout).contains("done"));
    assert_eq!(
        fs::read_to_string(e.ws.join("src/nested.txt")).unwrap(),
        "b\n"
    );
    assert_eq!(
        fs::read_to_string(e.ws.join("build/deep/c.txt")).unwrap(),
        "c\n"
    );
    assert_eq!(fs::read_to_string(e.ws.join("py.txt")).unwrap(), "py");
    assert_eq!(fs::read_to_string(e.ws.join("src/main.txt")).unwrap(), "m");
    assert!(e.ws.join("moved").exists());
    assert!(fs::symlink_metadata(e.ws.join("link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(!e.ws.join("top.txt").exists());
    assert!(
        !text(&out.stderr).contains("denied"),
        "{}",
        text(&out.stderr)
    );
}

/// The supervisor keeps each thread's working directory and umask between
/// its system calls: a `cd`, a `umask` or a sibling thread's `chdir` must be
/// followed, or a write it performs lands in the wrong place or mode.
#[test]
fn writes_follow_cd_umask_and_a_sibling_threads_chdir() {
    use std::os::unix::fs::PermissionsExt;
    if !supported() {
        return;
    }
    let e = env();
    let script = r#"set -e
echo a > root1
cd src && echo b > in_src && cd ..
echo c > root2
umask 077 && echo d > private && umask 022
(cd src && echo e > from_subshell)
echo f > root3
python3 -c "
import os, threading
open('before', 'w').write('x')
t = threading.Thread(target=lambda: os.chdir('src'))
t.start(); t.join()
open('after', 'w').write('y')
"
echo done"#;
    let out = e.run(script);
    assert!(
        text(&out.stdout).contains("done"),
        "stderr: {}",
        text(&out.stderr)
    );
    for landed in [
        "root1",
        "src/in_src",
        "root2",
        "private",
        "src/from_subshell",
        "root3",
        "before",
        "src/after",
    ] {
        assert!(e.ws.join(landed).is_file(), "{landed} missing");
    }
    for stray in ["src/root2", "src/root3", "in_src", "after", "src/before"] {
        assert!(
            !e.ws.join(stray).exists(),
            "{stray} landed in the wrong place"
        );
    }
    let mode = |p: &str| fs::metadata(e.ws.join(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("private"), 0o600);
    assert_eq!(mode("root3"), 0o644);
}

/// Landlock does not cover metadata; the supervisor does: outside the
/// allowed set (directly, through a symlink, or by descriptor) a change is
/// refused, inside it works.
#[test]
fn metadata_changes_outside_are_refused_and_inside_work() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if !supported() {
        return;
    }
    let e = env();
    let keep = e.out.join("keep.txt");
    fs::set_permissions(&keep, fs::Permissions::from_mode(0o644)).unwrap();
    let before = fs::metadata(&keep).unwrap();
    let script = r#"
chmod 600 "$OUT/keep.txt"; echo chmod=$?
chown "$(id -u):$(id -g)" "$OUT/keep.txt"; echo chown=$?
touch -m -d @978307200 "$OUT/keep.txt"; echo touch=$?
ln -s "$OUT/keep.txt" link; chmod 600 link; echo via-link=$?
python3 -c "
import os
f = os.open(os.environ['OUT'] + '/keep.txt', os.O_RDONLY)
for name, call in [('fchmod', lambda: os.fchmod(f, 0o600)),
                   ('futimes', lambda: os.utime(f, (1, 1))),
                   ('xattr', lambda: os.setxattr(os.environ['OUT'] + '/keep.txt', 'user.sg', b'1'))]:
    try:
        call(); print(name + '=0')
    except OSError as err:
        print(name + '=' + str(err.errno))
"
chmod 777 .sandgate/sandbox.json; echo protected=$?
exec 4< src/main.txt
chmod 640 /proc/self/fd/4; echo proc-self=$?; stat -c proc-self-mode=%a src/main.txt
(cd /proc && chmod 604 thread-self/fd/4); echo thread-self=$?; stat -c thread-self-mode=%a src/main.txt
exec 4<&-
chmod 600 src/main.txt; echo inside=$?
touch -m -d @978307200 src/main.txt; echo touch-inside=$?
echo done"#;
    let out = e.run(script);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(stdout.contains("done"), "stdout: {stdout} stderr: {stderr}");
    for refused in ["chmod=1", "chown=1", "touch=1", "via-link=1", "protected=1"] {
        assert!(stdout.contains(refused), "{refused}: {stdout} {stderr}");
    }
    for refused in ["fchmod=13", "futimes=13", "xattr=13"] {
        assert!(stdout.contains(refused), "{refused}: {stdout} {stderr}");
    }
    // `/proc/self` and `/proc/thread-self` are the calling `chmod`'s own:
    // descriptor 4 it inherited names a file inside, so the change is made.
    for done in [
        "proc-self=0",
        "proc-self-mode=640",
        "thread-self=0",
        "thread-self-mode=604",
        "inside=0",
    ] {
        assert!(stdout.contains(done), "{done}: {stdout} {stderr}");
    }
    assert!(stdout.contains("touch-inside=0"), "{stdout} {stderr}");
    let after = fs::metadata(&keep).unwrap();
    assert_eq!(after.permissions().mode() & 0o777, 0o644);
    assert_eq!(after.mtime(), before.mtime());
    let inside = fs::metadata(e.ws.join("src/main.txt")).unwrap();
    assert_eq!(inside.permissions().mode() & 0o777, 0o600);
    assert_eq!(
        inside.mtime(),
        978307200,
        "the time set inside the workspace"
    );
    assert!(
        stderr.contains(&format!("denied chmod of `{}`", keep.display())),
        "{stderr}"
    );
    assert!(stderr.contains("denied chown of"), "{stderr}");
}

/// Waits up to 20 s for `child`; kills it and fails when it does not end.
fn wait_briefly(child: &mut std::process::Child) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if std::time::Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Every process below `pid`, with its state, what it waits in and its
/// command line: for the message of a test whose program did not end.
fn tree_below(pid: u32) -> String {
    let mut text = String::new();
    let mut queue = vec![(pid, 0)];
    while let Some((pid, depth)) = queue.pop() {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit_once(") ").map_or("?", |(_, rest)| &rest[..1]);
        let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .unwrap_or_default();
        let threads = std::fs::read_dir(format!("/proc/{pid}/task"))
            .map(|d| d.count())
            .unwrap_or(0);
        text.push_str(&format!(
            "{:indent$}{pid} {state} wchan={wchan} threads={threads} {cmdline}\n",
            "",
            indent = depth * 2
        ));
        let children =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
            queue.push((child, depth + 1));
        }
    }
    text
}

#[test]
fn signals_sent_to_sandgate_reach_the_program_and_its_status_comes_back() {
    use std::process::Stdio;
    if !supported() {
        return;
    }
    let e = env();
    for (signal, code) in [("TERM", 7), ("INT", 8), ("HUP", 9)] {
        let script = format!(
            "trap 'echo got-{signal}; echo x > after-{signal}.txt; exit {code}' {signal}; \
             echo ready; while :; do sleep 0.05; done"
        );
        // Started as from a terminal, with the signals at their defaults:
        // a suite run in a script's background inherits SIGINT ignored,
        // which sandgate and the program would keep (and sh may not trap).
        let plain = e.sandgate();
        let mut cmd = Command::new("env");
        cmd.arg("--default-signal=TERM,INT,HUP")
            .arg(plain.get_program())
            .args(["run", "--no-ui", "--", "sh", "-c", &script]);
        for (name, value) in plain.get_envs() {
            match value {
                Some(value) => cmd.env(name, value),
                None => cmd.env_remove(name),
            };
        }
        if let Some(dir) = plain.get_current_dir() {
            cmd.current_dir(dir);
        }
        let mut child = wait::Guard::spawn(cmd.stdout(Stdio::piped()).stderr(Stdio::piped()));
        let stdout = wait::Lines::new(child.stdout.take().unwrap());
        let stderr = wait::Lines::new(child.stderr.take().unwrap());
        let line = stdout.next_within(20, "the program's first line");
        assert_eq!(line.as_deref(), Some("ready"));
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status_within(DEADLINE)
            .unwrap();
        assert!(sent.success());
        let Some(status) = wait_briefly(&mut child) else {
            panic!(
                "SIG{signal}: sandgate did not end within 20 s of the signal\n\
                 processes:\n{}stdout so far:\n{}stderr so far:\n{}",
                tree_below(child.id()),
                stdout.so_far(),
                stderr.so_far()
            );
        };
        let rest = stdout.rest_within(20, "the program's stdout");
        let stderr = stderr.rest_within(20, "sandgate's stderr");
        assert_eq!(status.code(), Some(code), "SIG{signal}: {rest} {stderr}");
        assert!(rest.contains(&format!("got-{signal}")), "{rest}");
        // The supervisor was still there for the program's last write.
        assert!(
            e.ws.join(format!("after-{signal}.txt")).is_file(),
            "{stderr}"
        );
    }
    // A program that does not catch it ends from it: 128 + 15.
    let mut child = wait::Guard::spawn(
        e.sandgate()
            .args([
                "run",
                "--no-ui",
                "--",
                "sh",
                "-c",
                "echo ready; exec sleep 30",
            ])
            .stdout(Stdio::piped()),
    );
    let stdout = wait::Lines::new(child.stdout.take().unwrap());
    let line = stdout.next_within(20, "the program's first line");
    assert_eq!(line.as_deref(), Some("ready"));
    Command::new("kill")
        .arg(child.id().to_string())
        .status_within(DEADLINE)
        .unwrap();
    let status = wait_briefly(&mut child).unwrap_or_else(|| {
        panic!(
            "SIGTERM to `exec sleep 30`: sandgate did not end within 20 s\nprocesses:\n{}",
            tree_below(child.id())
        )
    });
    assert_eq!(status.code(), Some(143));
}

#[test]
fn workspace_under_tmp_still_protects_its_settings() {
    if !supported() {
        return;
    }
    let e = env_in(&std::env::temp_dir());
    let out = e
        .run("echo a > new.txt && echo b > src/x && echo evil > .sandgate/sandbox.json; echo done");
    assert!(text(&out.stdout).contains("done"));
    assert_eq!(fs::read_to_string(e.ws.join("new.txt")).unwrap(), "a\n");
    let settings = fs::read_to_string(e.settings()).unwrap();
    assert!(settings.contains("\"enabled\": false"), "{settings}");
}

#[test]
fn writes_outside_are_denied_and_leave_the_target_unchanged() {
    if !supported() {
        return;
    }
    let e = env();
    let attempts = [
        "echo x > \"$OUT/new.txt\"",
        "echo x >> \"$OUT/keep.txt\"",
        "python3 -c \"import os; open(os.environ['OUT'] + '/keep.txt', 'w').write('gone')\"",
        "python3 -c \"import os; os.remove(os.environ['OUT'] + '/keep.txt')\"",
        "rm -f \"$OUT/keep.txt\"",
        "mv \"$OUT/keep.txt\" moved.txt",
        "mv src/main.txt \"$OUT/main.txt\"",
        "truncate -s 0 \"$OUT/keep.txt\"",
        "touch \"$OUT/touched\"",
        "mkdir \"$OUT/dir\"",
        "ln -s /etc \"$OUT/link\"",
        "ln \"$OUT/keep.txt\" hard.txt",
        "ln -s \"$OUT\" out && echo x > out/via-link.txt",
    ];
    for attempt in attempts {
        let out = e.run(attempt);
        assert!(!out.status.success(), "`{attempt}` succeeded");
        let stderr = text(&out.stderr);
        assert!(stderr.contains("sandgate: denied"), "`{attempt}`: {stderr}");
        assert_eq!(
            fs::read_to_string(e.out.join("keep.txt")).unwrap(),
            "keep\n",
            "`{attempt}`"
        );
        assert_eq!(e.outside_entries(), vec!["keep.txt"], "`{attempt}`");
        let _ = fs::remove_file(e.ws.join("out"));
    }
    assert!(e.ws.join("src/main.txt").exists());
    assert!(!e.ws.join("hard.txt").exists());
}

#[test]
fn settings_survive_edit_delete_rename_and_symlink_swaps() {
    if !supported() {
        return;
    }
    let e = env();
    e.write_settings("{\"enabled\": true, \"allow\": [], \"deny\": []}\n");
    let before = fs::read(e.settings()).unwrap();
    let attempts = [
        "echo '{\"enabled\": false, \"allow\": [\"/\"]}' > .sandgate/sandbox.json",
        "echo x >> .sandgate/sandbox.json",
        "python3 -c \"open('.sandgate/sandbox.json','w').write('{}')\"",
        "truncate -s 0 .sandgate/sandbox.json",
        "rm -f .sandgate/sandbox.json",
        "rm -rf .sandgate",
        "mv .sandgate/sandbox.json x.json",
        "mv .sandgate sg-old",
        "echo '{}' > x.json && mv x.json .sandgate/sandbox.json",
        "ln -sf /dev/null .sandgate/sandbox.json",
        "echo permissions: > .sandgate/permissions.yaml",
        "ln -s .sandgate sg && echo x > sg/sandbox.json",
        "ln -s .sandgate/sandbox.json s.json && echo x > s.json",
        "mkdir fake && echo '{}' > fake/sandbox.json && mv fake .sandgate",
        "mv .sandgate gone; ln -s fake .sandgate",
        "python3 -c \"import os; os.rename('.sandgate', 'x')\"",
        "python3 -c \"import shutil; shutil.rmtree('.sandgate')\"",
    ];
    for attempt in attempts {
        let out = e.run(attempt);
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("read-only to the confined program"),
            "`{attempt}`: {stderr}"
        );
        assert!(
            fs::symlink_metadata(e.ws.join(".sandgate"))
                .unwrap()
                .is_dir(),
            "`{attempt}`"
        );
        assert_eq!(fs::read(e.settings()).unwrap(), before, "`{attempt}`");
        assert!(!e.ws.join(".sandgate/permissions.yaml").exists());
        for leftover in ["sg", "s.json", "x.json", "fake", "gone", "x", "sg-old"] {
            let p = e.ws.join(leftover);
            if fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir() && !m.file_type().is_symlink()) {
                fs::remove_dir_all(&p).unwrap();
            } else {
                let _ = fs::remove_file(&p);
            }
        }
    }
}

#[test]
fn strict_git_protects_git_even_before_it_exists() {
    if !supported() {
        return;
    }
    let e = env();
    e.write_settings("{\"enabled\": true, \"strictGit\": true}");
    // Missing at start: it cannot be created, by any route.
    for attempt in [
        "mkdir .git",
        "git init -q .",
        "mkdir g && mv g .git",
        "ln -s src .git",
        "echo x > .git",
    ] {
        let out = e.run(attempt);
        assert!(!out.status.success(), "`{attempt}` succeeded");
        assert!(
            fs::symlink_metadata(e.ws.join(".git")).is_err(),
            "`{attempt}` created .git"
        );
        let _ = fs::remove_dir_all(e.ws.join("g"));
    }
    // Present at start: read-only.
    fs::create_dir_all(e.ws.join(".git/hooks")).unwrap();
    fs::write(e.ws.join(".git/config"), "[core]\n").unwrap();
    for attempt in [
        "echo evil > .git/hooks/pre-commit",
        "echo x >> .git/config",
        "rm -rf .git",
        "mv .git git-old",
    ] {
        let out = e.run(attempt);
        assert!(!out.status.success(), "`{attempt}` succeeded");
        assert!(!e.ws.join(".git/hooks/pre-commit").exists());
        assert_eq!(
            fs::read_to_string(e.ws.join(".git/config")).unwrap(),
            "[core]\n"
        );
    }
}

#[test]
fn without_strict_git_git_works_but_its_hooks_and_config_are_read_only() {
    if !supported() {
        return;
    }
    let e = env();
    e.write_settings("{\"enabled\": true, \"strictGit\": false}");
    let init = Command::new("git")
        .args(["init", "-q", "."])
        .current_dir(&e.ws)
        .output_within(DEADLINE)
        .unwrap();
    assert!(init.status.success());
    let before = fs::read_to_string(e.ws.join(".git/config")).unwrap();
    let out = e.run(
        "git -c user.name=n -c user.email=e commit -q --allow-empty -m one && git checkout -q -b two && echo done; echo x > .git/hooks/pre-commit; echo y >> .git/config",
    );
    assert!(
        text(&out.stdout).contains("done"),
        "stderr: {}",
        text(&out.stderr)
    );
    assert!(!e.ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        fs::read_to_string(e.ws.join(".git/config")).unwrap(),
        before
    );
    assert!(text(&out.stderr).contains("read-only to the confined program"));
}

#[test]
fn a_child_of_a_child_is_still_confined() {
    if !supported() {
        return;
    }
    let e = env();
    fs::write(
        e.ws.join("inner.py"),
        "import os\nopen(os.environ['OUT'] + '/deep.txt', 'w')\n",
    )
    .unwrap();
    let script =
        "sh -c 'bash -c \"python3 inner.py\"'; (sleep 0.1; echo x > \"$OUT/bg.txt\") & wait";
    let out = e.run(script);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("deep.txt"), "{stderr}");
    assert!(stderr.contains("bg.txt"), "{stderr}");
    assert_eq!(e.outside_entries(), vec!["keep.txt"]);
}

#[test]
fn headless_runs_deny_without_asking_and_log_it() {
    if !supported() {
        return;
    }
    let e = env();
    // `setsid` leaves the program (and sandgate) without a controlling terminal.
    let out = Command::new("setsid")
        .arg("-w")
        .arg(env!("CARGO_BIN_EXE_sandgate"))
        .args([
            "run",
            "--",
            "sh",
            "-c",
            "echo x > \"$OUT/h.txt\"; echo rc=$?",
        ])
        .current_dir(&e.ws)
        .env("HOME", &e.home)
        .env("SANDGATE_AUDIT", "off")
        .env("SANDGATE_SANDBOX", "1")
        .env("OUT", &e.out)
        .output_within(DEADLINE)
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(text(&out.stdout).contains("rc=2"), "{}", text(&out.stdout));
    assert!(stderr.contains("no terminal to ask"), "{stderr}");
    assert!(stderr.contains("h.txt"), "{stderr}");
    assert!(!e.out.join("h.txt").exists());
}

#[test]
fn granted_and_denied_paths_from_the_settings_file() {
    if !supported() {
        return;
    }
    let e = env();
    fs::create_dir_all(e.out.join("granted")).unwrap();
    fs::create_dir_all(e.out.join("refused")).unwrap();
    e.write_settings(&format!(
        "{{\"enabled\": true, \"allow\": [\"{0}/granted\", \"{0}/later\"], \"deny\": [\"{0}/refused\"]}}",
        e.out.display()
    ));
    let out = e.run(
        "echo g > \"$OUT/granted/g.txt\" && mkdir \"$OUT/later\" && echo l > \"$OUT/later/l.txt\" && echo ok; echo r > \"$OUT/refused/r.txt\"",
    );
    let stderr = text(&out.stderr);
    assert!(text(&out.stdout).contains("ok"), "{stderr}");
    assert_eq!(
        fs::read_to_string(e.out.join("granted/g.txt")).unwrap(),
        "g\n"
    );
    assert_eq!(
        fs::read_to_string(e.out.join("later/l.txt")).unwrap(),
        "l\n"
    );
    assert!(stderr.contains("deny list"), "{stderr}");
    assert!(!e.out.join("refused/r.txt").exists());
}

#[test]
fn permission_errors_inside_the_workspace_get_a_hint_not_a_prompt() {
    if !supported() {
        return;
    }
    let e = env();
    // The unprivileged user must be able to reach the workspace.
    let mut dir = e.ws.clone();
    loop {
        let _ = Command::new("chmod")
            .arg("o+x")
            .arg(&dir)
            .status_within(DEADLINE);
        if !dir.pop() || dir.as_os_str() == "/" {
            break;
        }
    }
    fs::write(e.ws.join("src/ro.txt"), "ro\n").unwrap();
    Command::new("chmod")
        .arg("0444")
        .arg(e.ws.join("src/ro.txt"))
        .status_within(DEADLINE)
        .unwrap();
    let script = "python3 -c \"import os\nos.setgroups([]); os.setgid(65534); os.setuid(65534)\ntry:\n    open('src/ro.txt', 'w')\nexcept PermissionError as e:\n    print('EACCES', e.errno)\"";
    let out = e.run(script);
    let stderr = text(&out.stderr);
    assert!(
        text(&out.stdout).contains("EACCES 13"),
        "stdout: {} stderr: {stderr}",
        text(&out.stdout)
    );
    assert!(stderr.contains("sandgate: hint:"), "{stderr}");
    assert!(stderr.contains("file mode or ownership"), "{stderr}");
    assert!(!stderr.contains("sandgate: denied"), "{stderr}");
    assert_eq!(fs::read_to_string(e.ws.join("src/ro.txt")).unwrap(), "ro\n");
}

#[test]
fn unarmed_runs_unconfined_with_the_warning_and_creates_the_settings() {
    let e = env();
    let out = e
        .sandgate()
        .env_remove("SANDGATE_SANDBOX")
        .env("OUT", &e.out)
        .args(["run", "--", "sh", "-c", "echo x > \"$OUT/free.txt\""])
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("sandbox is OFF"),
        "{}",
        text(&out.stderr)
    );
    assert!(e.out.join("free.txt").exists());
    let settings = fs::read_to_string(e.settings()).unwrap();
    assert!(settings.contains("\"enabled\": false"), "{settings}");

    // Flipping the flag arms the next start.
    e.write_settings("{\"enabled\": true}");
    let out = e
        .sandgate()
        .env_remove("SANDGATE_SANDBOX")
        .env("OUT", &e.out)
        .args([
            "run",
            "--no-ui",
            "--",
            "sh",
            "-c",
            "echo x > \"$OUT/armed.txt\"",
        ])
        .output_within(DEADLINE)
        .unwrap();
    assert!(!out.status.success());
    assert!(!e.out.join("armed.txt").exists());
}

#[test]
fn dry_run_json_shows_the_allowed_set_protected_paths_and_mechanism() {
    let e = env();
    e.write_settings("{\"enabled\": true, \"strictGit\": true, \"allow\": [\"/opt/x\"]}");
    let out = e
        .sandgate()
        .env("TMPDIR", &e.out)
        .args(["run", "--dry-run", "--json"])
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["armed"], true);
    let allowed = v["allowed"].as_array().unwrap();
    let has = |path: &Path, kind: &str| {
        allowed
            .iter()
            .any(|a| a["path"] == path.to_string_lossy().as_ref() && a["kind"] == kind)
    };
    assert!(has(&e.ws, "workspace"), "{v:#}");
    assert!(has(Path::new("/tmp"), "temp"), "{v:#}");
    assert!(has(&e.out, "temp"), "$TMPDIR: {v:#}");
    assert!(has(&e.home.join(".claude"), "state"), "{v:#}");
    assert!(has(&e.home.join(".cache"), "cache"), "{v:#}");
    assert!(has(Path::new("/dev/null"), "device"), "{v:#}");
    assert!(has(Path::new("/opt/x"), "granted"), "{v:#}");
    let protected = v["protected"].as_array().unwrap();
    for p in [e.ws.join(".sandgate"), e.ws.join(".git")] {
        assert!(
            protected.iter().any(|x| x == p.to_string_lossy().as_ref()),
            "{v:#}"
        );
    }
    assert_eq!(v["mechanism"]["name"], "landlock+seccomp-notify");
    assert!(v["mechanism"]["enforcement"].is_string());
}

/// The built-in protected list is shown by `--dry-run` (those that exist as
/// `protected`, the missing ones as `guarded`), `protect` in `sandbox.json`
/// adds to it, and the shell start-up files of a home the settings allow
/// are on it too; each is read-only to the program, and a missing one
/// cannot be created, while the rest of the workspace and home stays writable.
#[test]
fn the_protected_list_is_shown_extended_by_protect_and_held() {
    if !supported() {
        return;
    }
    let e = env();
    assert!(
        e.home.starts_with(&e.root) && e.ws.starts_with(&e.root),
        "a throwaway tree"
    );
    e.write_settings(
        "{\"enabled\": true, \"allow\": [\"~\"], \"protect\": [\"Makefile\", \"docs/gen\"]}",
    );
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&e.ws)
        .env("HOME", &e.home)
        .output_within(DEADLINE)
        .unwrap();
    assert!(git.status.success(), "{}", text(&git.stderr));
    fs::write(e.ws.join("Makefile"), "all:\n").unwrap();
    fs::write(e.home.join(".bashrc"), "# rc\n").unwrap();

    let out = e
        .sandgate()
        .args(["run", "--dry-run", "--json"])
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = |key: &str, path: PathBuf| {
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x == path.to_string_lossy().as_ref())
    };
    for existing in [
        e.ws.join(".git/hooks"),
        e.ws.join(".git/config"),
        e.ws.join("Makefile"),
        e.home.join(".bashrc"),
    ] {
        assert!(listed("protected", existing.clone()), "{existing:?}: {v:#}");
    }
    for missing in [
        ".gitmodules",
        ".gitconfig",
        ".zshrc",
        ".claude/commands",
        ".claude/agents",
        ".mcp.json",
        ".vscode",
        ".idea",
        "docs/gen",
    ] {
        assert!(listed("guarded", e.ws.join(missing)), "{missing}: {v:#}");
    }
    assert!(listed("guarded", e.home.join(".zshrc")), "{v:#}");
    let text_form = e
        .sandgate()
        .args(["run", "--dry-run"])
        .output_within(DEADLINE)
        .unwrap();
    let shown = text(&text_form.stdout);
    assert!(
        shown.contains(&format!(
            "{}  (missing: refused when created)",
            e.ws.join(".mcp.json").display()
        )),
        "{shown}"
    );

    let out = e.run(
        r#"for w in 'echo x >> Makefile' 'mkdir -p docs/gen' 'echo evil >> $HOME/.bashrc' 'echo evil > $HOME/.zshrc' 'echo ok > $HOME/notes.txt' 'echo ok > docs/readme'; do (eval "$w") 2>/dev/null && echo "wrote: $w" || echo "refused: $w"; done"#,
    );
    let stdout = text(&out.stdout);
    for expected in [
        "refused: echo x >> Makefile",
        "refused: mkdir -p docs/gen",
        "refused: echo evil >> $HOME/.bashrc",
        "refused: echo evil > $HOME/.zshrc",
        "wrote: echo ok > $HOME/notes.txt",
        "wrote: echo ok > docs/readme",
    ] {
        assert!(
            stdout.contains(expected),
            "{expected}: {stdout} {}",
            text(&out.stderr)
        );
    }
    assert_eq!(fs::read_to_string(e.ws.join("Makefile")).unwrap(), "all:\n");
    assert_eq!(
        fs::read_to_string(e.home.join(".bashrc")).unwrap(),
        "# rc\n"
    );
    assert!(!e.ws.join("docs/gen").exists());
    assert!(!e.home.join(".zshrc").exists());
    assert!(e.home.join("notes.txt").exists());
}

#[test]
fn bad_settings_file_is_a_clear_error() {
    let e = env();
    e.write_settings("{\"enabled\": tru}");
    let out = e
        .sandgate()
        .args(["run", "--", "true"])
        .output_within(DEADLINE)
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("sandbox.json`:1:"), "{stderr}");
}

#[test]
fn the_policy_cache_the_hooks_trust_is_read_only_to_the_program() {
    if !supported() {
        return;
    }
    let e = env();
    let cache = e.home.join(".cache/sandgate");
    let run = |script: &str| {
        e.sandgate()
            .env("C", &cache)
            .env("SANDGATE_CACHE_DIR", &cache)
            .env_remove("XDG_CACHE_HOME")
            .env_remove("SANDGATE_CACHE")
            .args(["run", "--no-ui", "--", "sh", "-c", script])
            .output_within(DEADLINE)
            .unwrap()
    };
    // sandgate makes the directory and writes the policy's entry before the
    // program starts; the rest of `~/.cache` stays writable.
    let out = run("echo ok > \"$HOME/.cache/tool.txt\" && echo done");
    assert!(text(&out.stdout).contains("done"), "{}", text(&out.stderr));
    let entries = |dir: &Path| {
        let mut names: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        names.sort();
        names
    };
    // sandgate itself may add a kept path resolution (`paths-…`) at a start:
    // compare the policy entries, and look for the program's forgeries.
    let policy_entries = |dir: &Path| -> Vec<(String, Vec<u8>)> {
        entries(dir)
            .into_iter()
            .filter(|(name, _)| name.starts_with("policy-"))
            .collect()
    };
    let before = policy_entries(&cache);
    assert_eq!(before.len(), 1, "{:?}", entries(&cache));
    for attempt in [
        "echo forged > \"$C/policy-forged.cache\"",
        "for f in \"$C\"/policy-*; do echo forged > \"$f\"; done; false",
        "python3 -c \"import glob; [open(f, 'w').write('forged') for f in glob.glob('$C/policy-*')]\"",
        "rm -rf \"$C\"",
        "mv \"$C\" \"$C.old\"",
        "mv \"$C\" \"$C.old\" ; mkdir -p \"$C\" && echo forged > \"$C/policy-x.cache\"",
    ] {
        let out = run(attempt);
        assert!(!out.status.success(), "`{attempt}` succeeded");
        assert_eq!(policy_entries(&cache), before, "`{attempt}`");
        assert!(
            entries(&cache)
                .iter()
                .all(|(_, bytes)| !bytes.windows(6).any(|w| w == b"forged")),
            "`{attempt}` wrote into the cache"
        );
        assert!(!e.home.join(".cache/sandgate.old").exists(), "`{attempt}`");
    }
}
