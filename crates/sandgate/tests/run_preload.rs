//! `sandgate run` with the write-open fast path in force (the preload
//! library in `LD_PRELOAD`): behaviour is the same as without it, for shell
//! redirections, Python, C and Rust programs, against the real kernel and
//! the real binary. That the fast path skips the supervisor is shown at the
//! kernel level in `crates/sandgate-confine/tests/preload.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

#[path = "../../../tests/support/pty.rs"]
mod pty;

use run_common::wait::{Bounded, DEADLINE};
use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use expectrl::process::unix::WaitStatus;
use expectrl::session::OsSession as Session;
use expectrl::{Eof, Expect};
use run_common::{supported, text, Tree as Env};

mod run_common;

fn env() -> Env {
    let e = Env::new().armed();
    fs::create_dir_all(e.ws.join("sub")).unwrap();
    e
}

impl Env {
    fn command(&self, script: &str) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
        cmd.args(["run", "--no-ui", "--", "sh", "-c", script])
            .current_dir(&self.ws)
            .env("HOME", &self.home)
            .env("OUT", &self.out)
            .env("BIN", self.root.join("bin"))
            .env("SANDGATE_AUDIT", "off")
            .env("SANDGATE_SANDBOX", "1")
            .env_remove("LD_PRELOAD")
            .env_remove("TMPDIR")
            .env_remove("SANDGATE_CONFIG")
            .env_remove("SANDGATE_LOCAL_CONFIG");
        cmd
    }

    /// `sandgate run --no-ui -- sh -c SCRIPT` in the workspace; `$OUT` is
    /// the outside dir, `$BIN` the directory of the compiled helpers.
    fn run(&self, script: &str) -> Output {
        self.command(script).output_within(DEADLINE).unwrap()
    }

    /// Compiles the C program `source` to `$BIN/name` (outside the
    /// workspace, so the program under test cannot change it).
    fn c_program(&self, name: &str, source: &str, extra: &[&str]) -> PathBuf {
        let dir = self.root.join("bin");
        fs::create_dir_all(&dir).unwrap();
        let src = dir.join(format!("{name}.c"));
        fs::write(&src, source).unwrap();
        let exe = dir.join(name);
        let status = Command::new("cc")
            .arg("-O1")
            .args(extra)
            .arg("-o")
            .arg(&exe)
            .arg(&src)
            .status_within(DEADLINE)
            .expect("a C compiler (`cc`) is installed");
        assert!(status.success(), "cc failed on {name}.c");
        exe
    }

    fn rust_program(&self, name: &str, source: &str) -> PathBuf {
        let dir = self.root.join("bin");
        fs::create_dir_all(&dir).unwrap();
        let src = dir.join(format!("{name}.rs"));
        fs::write(&src, source).unwrap();
        let exe = dir.join(name);
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let status = Command::new(rustc)
            .args(["--edition", "2021", "-o"])
            .arg(&exe)
            .arg(&src)
            .status_within(DEADLINE)
            .expect("rustc is installed (it built this test)");
        assert!(status.success(), "rustc failed on {name}.rs");
        exe
    }

    fn settings(&self) -> String {
        fs::read_to_string(self.ws.join(".sandgate/sandbox.json")).unwrap()
    }

    fn library(&self) -> PathBuf {
        let dir = self.home.join(".sandgate/lib");
        let mut names: Vec<PathBuf> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        names.remove(0)
    }
}

#[test]
fn the_dry_run_says_the_fast_path_is_built_in() {
    let e = env();
    let out = Command::new(env!("CARGO_BIN_EXE_sandgate"))
        .args(["run", "--dry-run", "--json"])
        .current_dir(&e.ws)
        .env("HOME", &e.home)
        .env("SANDGATE_AUDIT", "off")
        .output_within(DEADLINE)
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["mechanism"]["writeOpenFastPath"], true, "{v}");
}

/// A C program that writes through each wrapped entry point (and `fopen`,
/// which glibc opens internally, past the library: the slow path).
const C_WRITER: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static int put(int fd, const char *what) {
    if (fd < 0) { perror(what); return 1; }
    int bad = write(fd, what, strlen(what)) < 0;
    return close(fd) || bad;
}
int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    char path[4096];
    int failed = 0;
    snprintf(path, sizeof path, "%s/c-open.txt", dir);
    failed |= put(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), "open");
    snprintf(path, sizeof path, "%s/c-openat.txt", dir);
    failed |= put(openat(AT_FDCWD, path, O_RDWR | O_CREAT, 0600), "openat");
    snprintf(path, sizeof path, "%s/c-creat.txt", dir);
    failed |= put(creat(path, 0644), "creat");
    /* Two arguments and flags the compiler cannot see: `__open_2` when fortified. */
    int reopen = argc > 5 ? O_RDONLY : O_WRONLY | O_APPEND;
    snprintf(path, sizeof path, "%s/c-open.txt", dir);
    failed |= put(open(path, reopen), "-two");
    snprintf(path, sizeof path, "%s/c-fopen.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f || fputs("fopen", f) < 0 || fclose(f)) { perror("fopen"); failed = 1; }
    return failed;
}
"#;

const RUST_WRITER: &str = r#"
fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    match std::fs::write(format!("{dir}/rust.txt"), "rust") {
        Ok(()) => {}
        Err(e) => {
            eprintln!("rust write: {e}");
            std::process::exit(1);
        }
    }
}
"#;

#[test]
fn with_the_preload_writes_inside_the_workspace_land_from_every_kind_of_program() {
    if !supported() {
        return;
    }
    let e = env();
    e.c_program("cwriter", C_WRITER, &[]);
    let fortified = e.c_program(
        "cwriter-fortified",
        C_WRITER,
        &["-O2", "-D_FORTIFY_SOURCE=2"],
    );
    // The fortified build calls the library's `__open_2` (or `__open64_2`).
    if let Ok(symbols) = Command::new("nm")
        .arg("-D")
        .arg(&fortified)
        .output_within(DEADLINE)
    {
        let symbols = text(&symbols.stdout);
        assert!(
            symbols.contains(" __open_2@") || symbols.contains(" __open64_2@"),
            "{symbols}"
        );
    }
    e.rust_program("rwriter", RUST_WRITER);
    let script = r#"set -e
echo "preload=$LD_PRELOAD"
grep -q '/.sandgate/lib/preload-' /proc/$$/maps && echo mapped
echo a > top.txt
echo b > sub/nested.txt
echo c >> sub/nested.txt
python3 -c "open('py.txt','w').write('py'); open('sub/py.txt','w').write('py')"
"$BIN/cwriter" .
mkdir fortified && "$BIN/cwriter-fortified" fortified
"$BIN/cwriter" sub
"$BIN/rwriter" . && "$BIN/rwriter" sub
echo done"#;
    let out = e.run(script);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "stdout: {stdout} stderr: {}",
        text(&out.stderr)
    );
    let library = e.library();
    assert!(
        stdout.contains(&format!("preload={}\n", library.display())),
        "{stdout}"
    );
    assert!(stdout.contains("mapped\n"), "{stdout}");
    assert!(stdout.contains("done"), "{stdout}");
    assert_eq!(fs::read_to_string(e.ws.join("top.txt")).unwrap(), "a\n");
    assert_eq!(
        fs::read_to_string(e.ws.join("sub/nested.txt")).unwrap(),
        "b\nc\n"
    );
    for dir in [".", "sub"] {
        let d = e.ws.join(dir);
        assert_eq!(fs::read_to_string(d.join("py.txt")).unwrap(), "py");
        assert_eq!(fs::read_to_string(d.join("rust.txt")).unwrap(), "rust");
        for (name, content) in [
            ("c-open.txt", "open-two"),
            ("c-openat.txt", "openat"),
            ("c-creat.txt", "creat"),
            ("c-fopen.txt", "fopen"),
        ] {
            assert_eq!(
                fs::read_to_string(d.join(name)).unwrap(),
                content,
                "{dir}/{name}"
            );
        }
    }
    assert_eq!(
        fs::read_to_string(e.ws.join("fortified/c-open.txt")).unwrap(),
        "open-two"
    );
}

#[test]
fn with_the_preload_writes_outside_and_to_protected_files_are_still_denied() {
    if !supported() {
        return;
    }
    let e = env();
    e.c_program("cwriter", C_WRITER, &[]);
    e.rust_program("rwriter", RUST_WRITER);
    let settings = e.settings();
    // First run: materialises the library (its bytes are checked below).
    assert!(e.run("true").status.success());
    let library = e.library();
    let bytes = fs::read(&library).unwrap();
    let attempts = [
        "echo x > \"$OUT/new.txt\"",
        "echo x >> \"$OUT/keep.txt\"",
        "echo x > \"$OUT/keep.txt\"",
        "python3 -c \"import os; open(os.environ['OUT'] + '/keep.txt', 'w').write('gone')\"",
        "\"$BIN/cwriter\" \"$OUT\"",
        "\"$BIN/rwriter\" \"$OUT\"",
        "echo '{}' > .sandgate/sandbox.json",
        "python3 -c \"open('.sandgate/sandbox.json', 'w').write('{}')\"",
        "\"$BIN/cwriter\" .sandgate",
        "echo x > .sandgate/new.json",
        // The library itself: a program must not plant code in later runs.
        "echo x > \"${LD_PRELOAD##*:}\"",
        "python3 -c \"import os; open(os.environ['LD_PRELOAD'].split(':')[-1], 'wb').write(b'x')\"",
    ];
    for attempt in attempts {
        let out = e.run(attempt);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "`{attempt}` succeeded: {stderr}");
        assert!(stderr.contains("sandgate: denied"), "`{attempt}`: {stderr}");
        assert_eq!(
            fs::read_to_string(e.out.join("keep.txt")).unwrap(),
            "keep\n",
            "`{attempt}`"
        );
        let entries: Vec<_> = fs::read_dir(&e.out).unwrap().collect();
        assert_eq!(entries.len(), 1, "`{attempt}`: {entries:?}");
        assert_eq!(e.settings(), settings, "`{attempt}`");
        assert!(!e.ws.join(".sandgate/new.json").exists(), "`{attempt}`");
        assert_eq!(fs::read(&library).unwrap(), bytes, "`{attempt}`");
    }
}

#[test]
fn an_existing_ld_preload_stays_in_front_and_keeps_wrapping_open() {
    if !supported() {
        return;
    }
    let e = env();
    // A user's own preload that wraps `open` and hands it on.
    let other = e.c_program(
        "other.so",
        r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <unistd.h>
static int wrapped(const char *name, const char *path, int flags, int mode) {
    write(2, "other-open\n", 11);
    int (*next)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, name);
    return next(path, flags, mode);
}
int open(const char *p, int f, ...) { va_list a; va_start(a, f); int m = va_arg(a, int); va_end(a); return wrapped("open", p, f, m); }
int open64(const char *p, int f, ...) { va_list a; va_start(a, f); int m = va_arg(a, int); va_end(a); return wrapped("open64", p, f, m); }
"#,
        &["-shared", "-fPIC", "-ldl"],
    );
    let out = e
        .command("echo \"preload=$LD_PRELOAD\"; echo x > sub/through-both.txt && echo wrote")
        .env("LD_PRELOAD", &other)
        .output_within(DEADLINE)
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let library = e.library();
    let want = format!("preload={}:{}\n", other.display(), library.display());
    assert!(stdout.contains(&want), "{stdout}");
    assert!(stdout.contains("wrote"), "{stdout}");
    assert!(stderr.contains("other-open"), "{stderr}");
    assert_eq!(
        fs::read_to_string(e.ws.join("sub/through-both.txt")).unwrap(),
        "x\n"
    );
}

#[test]
fn an_outside_write_from_a_shell_redirection_is_still_asked_and_lands() {
    if !supported() {
        return;
    }
    let e = env();
    let target = e.out.join("asked.txt");
    let mut cmd = e.command(
        "case \"$LD_PRELOAD\" in */.sandgate/lib/preload-*) echo PRELOADED;; esac; \
         echo first > \"$OUT/asked.txt\" && echo WROTE",
    );
    cmd.env_remove("SANDGATE_SANDBOX")
        .env_remove("SANDGATE_NO_UI")
        .env_remove("SANDGATE_PROMPT_LOCK")
        .env_remove("XDG_RUNTIME_DIR")
        .env("TERM", "xterm");
    // The same command in a pty, with the terminal prompt (no `--no-ui`).
    let args: Vec<_> = cmd
        .get_args()
        .filter(|a| *a != "--no-ui")
        .map(|a| a.to_owned())
        .collect();
    let mut pty = Command::new(cmd.get_program());
    pty.args(args).current_dir(&e.ws);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => pty.env(k, v),
            None => pty.env_remove(k),
        };
    }
    let mut s = Session::spawn(pty).expect("spawn in a pty");
    s.set_expect_timeout(Some(Duration::from_secs(30)));
    s.expect("PRELOADED").expect("the preload is in force");
    s.expect(format!("   {}\r", target.display()))
        .expect("the question is shown");
    s.expect("[4] deny always").expect("the menu is shown");
    // As a person answers: one key, once the question has been on screen
    // longer than its arming delay (a key sooner is typed-ahead text).
    std::thread::sleep(Duration::from_millis(900));
    s.send("1").unwrap();
    let rest = s.expect(Eof).expect("the program ends");
    let rest = String::from_utf8_lossy(rest.as_bytes()).into_owned();
    let code = match pty::wait_within(&mut s, DEADLINE).expect("wait") {
        WaitStatus::Exited(_, code) => code,
        other => panic!("unexpected end: {other:?}"),
    };
    assert_eq!(code, 0, "{rest}");
    assert!(rest.contains("WROTE"), "{rest}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "first\n");
}

#[test]
fn a_file_mode_refusal_inside_the_workspace_still_gets_the_hint() {
    if !supported() {
        return;
    }
    let uid = Command::new("id")
        .arg("-u")
        .output_within(DEADLINE)
        .unwrap();
    if text(&uid.stdout).trim() != "0" {
        run_common::skip("dropping to another user needs root");
        return;
    }
    let e = env();
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
    // The unprivileged user must be able to load the library: a
    // `~/.sandgate` the user made traversable (sandgate creates it 0700).
    fs::create_dir_all(e.home.join(".sandgate")).unwrap();
    Command::new("chmod")
        .arg("0711")
        .arg(e.home.join(".sandgate"))
        .status_within(DEADLINE)
        .unwrap();
    fs::write(e.ws.join("sub/ro.txt"), "ro\n").unwrap();
    Command::new("chmod")
        .arg("0444")
        .arg(e.ws.join("sub/ro.txt"))
        .status_within(DEADLINE)
        .unwrap();
    // A shell redirection as an unprivileged user, with the library loaded.
    let script = "python3 -c \"import os\nos.setgroups([]); os.setgid(65534); os.setuid(65534)\nos.execvp('sh', ['sh', '-c', 'echo \\\"$LD_PRELOAD\\\"; echo x > sub/ro.txt'])\"";
    let out = e.run(script);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("/.sandgate/lib/preload-"), "{stdout}");
    assert!(!stderr.contains("cannot be preloaded"), "{stderr}");
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert!(stderr.contains("sandgate: hint:"), "{stderr}");
    assert!(stderr.contains("file mode or ownership"), "{stderr}");
    assert!(!stderr.contains("sandgate: denied"), "{stderr}");
    assert_eq!(fs::read_to_string(e.ws.join("sub/ro.txt")).unwrap(), "ro\n");
}

/// A musl program: reports whether the library is mapped into it, then
/// writes `argv[1]` through `open`.
const MUSL_WRITER: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    int mapped = 0;
    while (maps && fgets(line, sizeof line, maps))
        mapped |= strstr(line, "/.sandgate/lib/preload-") != NULL;
    printf("%s\n", mapped ? "mapped" : "not mapped");
    fflush(stdout);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) { perror(argv[1]); return 1; }
    int bad = write(fd, "musl", 4) != 4;
    return close(fd) || bad;
}
"#;

#[test]
fn the_library_loads_into_a_musl_program_too() {
    if !supported() {
        return;
    }
    let have_musl = Command::new("musl-gcc")
        .arg("--version")
        .output_within(DEADLINE)
        .is_ok_and(|o| o.status.success());
    if !have_musl {
        run_common::skip("no `musl-gcc` (Debian: musl-tools) to build a musl program");
        return;
    }
    let e = env();
    let dir = e.root.join("bin");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("mwriter.c"), MUSL_WRITER).unwrap();
    let status = Command::new("musl-gcc")
        .arg("-o")
        .arg(dir.join("mwriter"))
        .arg(dir.join("mwriter.c"))
        .status_within(DEADLINE)
        .unwrap();
    assert!(status.success(), "musl-gcc failed");
    let out = e.run("\"$BIN/mwriter\" sub/musl.txt && \"$BIN/mwriter\" musl.txt");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout} {stderr}");
    assert_eq!(stdout, "mapped\nmapped\n", "{stderr}");
    assert_eq!(
        fs::read_to_string(e.ws.join("sub/musl.txt")).unwrap(),
        "musl"
    );
    assert_eq!(fs::read_to_string(e.ws.join("musl.txt")).unwrap(), "musl");
    // errno reaches musl's own `errno` through `__errno_location`.
    let out = e.run("\"$BIN/mwriter\" \"$OUT/musl.txt\"");
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("musl.txt: Permission denied"), "{stderr}");
    assert!(stderr.contains("sandgate: denied"), "{stderr}");
    assert!(!e.out.join("musl.txt").exists());
}

/// A first run in a home with `~/.ssh` (hidden from reads) and without
/// `~/.sandgate`, carving: the library sandgate writes into `~/.sandgate`
/// is readable to the program, so every program loads it, silently.
#[test]
fn a_first_run_carving_loads_the_library_without_a_word() {
    if !supported() {
        return;
    }
    let e = env();
    fs::create_dir_all(e.home.join(".ssh")).unwrap();
    let _ = fs::remove_dir_all(e.home.join(".sandgate"));
    let out = e
        .command("grep -c preload- /proc/self/maps; echo x > sub/f")
        .env("SANDGATE_RUN_PROTECTION", "carve")
        .output_within(DEADLINE)
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stderr.contains("ld.so"), "{stderr}");
    assert_ne!(stdout.lines().next(), Some("0"), "not loaded: {stdout}");
}
