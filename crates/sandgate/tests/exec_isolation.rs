//! `sandgate exec` with isolation, against the built binary and the real
//! kernel: the same escape table for `landlock` and `bwrap`, the custom
//! wrapper, the invalid-template fallback, and `--dry-run`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;
use wait::{Bounded, DEADLINE};

use std::process::Command;

#[path = "../../../tests/support/account.rs"]
mod account;
#[path = "../../../tests/support/ci.rs"]
mod ci;
#[path = "../../../tests/support/wait.rs"]
mod wait;

/// A fake home with a floor dir, a workdir with a space in its name, an
/// outside dir, and a policy whose gate allows everything (so that whatever
/// is stopped, isolation stopped it).
struct Fixture {
    _root: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    outside: PathBuf,
    config: PathBuf,
}

fn fixture(isolation: &str) -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    let home = base.join("home");
    let work = base.join("my work");
    let outside = base.join("outside");
    for dir in [&home.join(".ssh"), &work, &outside] {
        fs::create_dir_all(dir).unwrap();
    }
    fs::write(home.join(".ssh/id_ed25519"), "SECRET KEY\n").unwrap();
    fs::write(outside.join("public.txt"), "PUBLIC\n").unwrap();
    let config = base.join("permissions.yaml");
    fs::write(
        &config,
        format!(
            "permissions:\n  paths:\n    allow: [\"/**\"]\n  commands:\n    shell: false\n    allow: [\".\"]\n  exec:\n    isolation:\n{isolation}"
        ),
    )
    .unwrap();
    Fixture {
        _root: root,
        home,
        work,
        outside,
        config,
    }
}

impl Fixture {
    fn sandgate(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
        cmd.env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("SANDGATE_NO_UI", "1")
            .current_dir(&self.work)
            .arg("--config")
            .arg(&self.config);
        cmd
    }

    fn exec(&self, command: &str) -> Output {
        self.sandgate()
            .args(["exec", "--", command])
            .output_within(DEADLINE)
            .unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn mode_block(mode: &str, network: bool) -> String {
    format!("      mode: {mode}\n      network: {network}\n")
}

fn landlock_abi() -> u32 {
    sandgate_sandbox::landlock_abi()
}

fn has_bwrap() -> bool {
    sandgate_sandbox::bwrap::find().found.is_some()
}

use ci::skip;

/// The modes that can run here, with the reason printed for each one skipped.
fn modes() -> Vec<&'static str> {
    let mut modes = Vec::new();
    if landlock_abi() >= 5 {
        modes.push("landlock");
    } else {
        skip(&format!(
            "landlock: the kernel has Landlock ABI {}, these tests need 5",
            landlock_abi()
        ));
    }
    if has_bwrap() {
        modes.push("bwrap");
    } else {
        skip("bwrap: `bwrap` is not installed (package `bubblewrap`)");
    }
    modes
}

fn not_gated(out: &Output) {
    assert!(
        !text(&out.stderr).contains("sandgate: denied"),
        "the gate, not isolation, stopped it: {}",
        text(&out.stderr)
    );
}

#[test]
fn escape_table() {
    for mode in modes() {
        let f = fixture(&mode_block(mode, false));

        // A write inside the workdir works.
        let out = f.exec("echo inside > in.txt && cat in.txt");
        assert!(out.status.success(), "{mode}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "inside\n");

        // A write outside the workdir fails.
        let target = f.outside.join("escape.txt");
        let out = f.exec(&format!("echo x > '{}'", target.display()));
        not_gated(&out);
        assert!(!out.status.success(), "{mode}: wrote outside");
        assert!(!target.exists(), "{mode}");

        // Reading a file in a floor dir fails; other files read fine.
        let out = f.exec(&format!(
            "cat '{}'",
            f.home.join(".ssh/id_ed25519").display()
        ));
        not_gated(&out);
        assert!(!out.status.success(), "{mode}: read the key");
        assert!(!text(&out.stdout).contains("SECRET"));
        let out = f.exec(&format!("cat '{}'", f.outside.join("public.txt").display()));
        assert_eq!(
            text(&out.stdout),
            "PUBLIC\n",
            "{mode}: {}",
            text(&out.stderr)
        );

        // A symlink in the workdir that points outside leads nowhere.
        std::os::unix::fs::symlink(&f.outside, f.work.join("link")).unwrap();
        let out = f.exec("echo x > link/via-link.txt");
        not_gated(&out);
        assert!(!out.status.success(), "{mode}: wrote through the symlink");
        assert!(!f.outside.join("via-link.txt").exists());

        // no_new_privs is set.
        let out = f.exec("grep NoNewPrivs /proc/self/status");
        assert_eq!(text(&out.stdout), "NoNewPrivs:\t1\n", "{mode}");

        // Exit code, stdout and stderr pass through.
        let out = f.exec("echo \"out $((6*7))\"; echo 'e;rr' >&2; exit 7");
        assert_eq!(out.status.code(), Some(7), "{mode}");
        assert_eq!(text(&out.stdout), "out 42\n");
        assert!(
            text(&out.stderr).ends_with("e;rr\n"),
            "{}",
            text(&out.stderr)
        );
    }
}

/// Tries a TCP connect to a loopback listener from inside the sandbox with
/// bash's `/dev/tcp`; returns whether bash succeeded and whether the
/// listener saw a connection.
fn loopback_connect(f: &Fixture) -> (bool, bool) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = f.exec(&format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'"));
    not_gated(&out);
    std::thread::sleep(Duration::from_millis(50));
    let seen = match listener.accept() {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::WouldBlock => false,
        Err(e) => panic!("accept: {e}"),
    };
    (out.status.success(), seen)
}

#[test]
fn network_off_and_on() {
    if !Path::new("/bin/bash").exists() && !Path::new("/usr/bin/bash").exists() {
        skip("network_off_and_on: bash is not installed (needed for /dev/tcp)");
        return;
    }
    for mode in modes() {
        let off = fixture(&mode_block(mode, false));
        assert_eq!(
            loopback_connect(&off),
            (false, false),
            "{mode}: network off"
        );
        let on = fixture(&mode_block(mode, true));
        assert_eq!(loopback_connect(&on), (true, true), "{mode}: network on");
    }
}

#[test]
fn no_sandbox_turns_isolation_off() {
    if landlock_abi() < 5 {
        skip(&format!(
            "no_sandbox_turns_isolation_off: the kernel has Landlock ABI {}",
            landlock_abi()
        ));
        return;
    }
    let f = fixture(&mode_block("landlock", false));
    let target = f.outside.join("free.txt");
    let out = f
        .sandgate()
        .args(["--no-sandbox", "exec", "--"])
        .arg(format!("echo x > '{}'", target.display()))
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(target.exists());
}

/// `--dry-run` lists the protected paths of the built-in list with whether
/// each exists, `protect` adds to them, and under each mode the ones that
/// exist stay read-only while the rest of the workdir is writable.
#[test]
fn protected_paths_are_listed_extended_by_protect_and_read_only() {
    for mode in modes() {
        let f = fixture(&format!(
            "{}      protect: [\"Makefile\", \"gen/out\"]\n",
            mode_block(mode, false)
        ));
        let git = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&f.work)
            .env("HOME", &f.home)
            .output_within(DEADLINE)
            .unwrap();
        assert!(git.status.success(), "{}", text(&git.stderr));
        fs::write(f.work.join("Makefile"), "all:\n").unwrap();
        let config = fs::read_to_string(f.work.join(".git/config")).unwrap();

        let out = f
            .sandgate()
            .args(["--json", "exec", "--dry-run", "--", "true"])
            .output_within(DEADLINE)
            .unwrap();
        assert!(out.status.success(), "{mode}: {}", text(&out.stderr));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let protected = json["isolation"]["plan"]["protected"].as_array().unwrap();
        let exists = |rel: &str| {
            let path = f.work.join(rel).display().to_string();
            protected
                .iter()
                .find(|p| p["path"] == path.as_str())
                .map(|p| p["exists"].as_bool().unwrap())
        };
        for (rel, there) in [
            (".git/hooks", true),
            (".git/config", true),
            (".gitmodules", false),
            (".sandgate", false),
            (".bashrc", false),
            (".gitconfig", false),
            (".claude/commands", false),
            (".claude/agents", false),
            (".mcp.json", false),
            (".vscode", false),
            (".idea", false),
            ("Makefile", true),
            ("gen/out", false),
        ] {
            assert_eq!(exists(rel), Some(there), "{mode}: {rel} in {protected:#?}");
        }
        let shown = f
            .sandgate()
            .args(["exec", "--dry-run", "--", "true"])
            .output_within(DEADLINE)
            .unwrap();
        assert!(
            text(&shown.stdout).contains(&format!("{}/.mcp.json (missing)", f.work.display())),
            "{mode}: {}",
            text(&shown.stdout)
        );

        let out = f.exec("echo x >> Makefile; echo x >> .git/config; echo ok > other.txt");
        not_gated(&out);
        assert_eq!(
            fs::read_to_string(f.work.join("Makefile")).unwrap(),
            "all:\n",
            "{mode}"
        );
        assert_eq!(
            fs::read_to_string(f.work.join(".git/config")).unwrap(),
            config,
            "{mode}"
        );
        assert!(
            f.work.join("other.txt").exists(),
            "{mode}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_named_pipe_waiting_for_its_reader_holds_only_itself() {
    for mode in modes() {
        let f = fixture(&mode_block(mode, false));
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_sandgate"))
            .env_clear()
            .env("HOME", &f.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("SANDGATE_NO_UI", "1")
            .current_dir(&f.work)
            .arg("--config")
            .arg(&f.config)
            .args(["exec", "--", FIFO_SCRIPT])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let out = wait::finish(child, 20, mode);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{mode}: {}", text(&out.stderr));
        for line in ["before-touch", "touched", "writer-opened", "done"] {
            assert!(stdout.contains(line), "{mode}: {stdout}");
        }
        assert!(f.work.join("x").exists(), "{mode}");
    }
}

/// With `HOME` pointing elsewhere, isolation denies the floor of the
/// account's own home (from the user database) as well as `$HOME`'s.
#[test]
fn the_accounts_own_home_floor_is_denied_when_home_points_elsewhere() {
    let account = account::account_home();
    assert!(
        !account.is_empty() && account != "/",
        "no home in the user database"
    );
    for mode in modes() {
        let f = fixture(&mode_block(mode, false));
        assert_ne!(f.home.display().to_string(), account);
        let out = f
            .sandgate()
            .args(["--json", "exec", "--dry-run", "--", "true"])
            .output_within(DEADLINE)
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let denied: Vec<String> = v["isolation"]["plan"]["denied"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["source"]["kind"] == "floor")
            .map(|d| d["path"].as_str().unwrap().to_string())
            .collect();
        for dir in [".ssh", ".aws", ".gnupg", ".sandgate"] {
            for home in [account.clone(), f.home.display().to_string()] {
                let want = format!("{home}/{dir}");
                assert!(denied.contains(&want), "{mode}: {want} not in {denied:?}");
            }
        }
    }
}

#[test]
fn custom_template_keeps_spaces_and_shell_syntax_intact() {
    let f =
        fixture("      mode: custom\n      template: env SANDGATE_WD={workdir} /bin/sh -c {cmd}\n");
    let out = f.exec("printf '%s|' \"$SANDGATE_WD\"; echo \"a;b\" '$HOME' `echo x`; exit 3");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{}|a;b $HOME x\n", f.work.display())
    );
}

#[test]
fn custom_template_around_bwrap_confines() {
    if !has_bwrap() {
        skip("custom_template_around_bwrap_confines: `bwrap` is not installed (package `bubblewrap`)");
        return;
    }
    let f = fixture(
        "      mode: custom\n      template: \"bwrap --ro-bind / / --dev /dev --bind {workdir} {workdir} --chdir {workdir} /bin/sh -c {cmd}\"\n",
    );
    let target = f.outside.join("x");
    let out = f.exec(&format!(
        "echo 'in side' > in.txt; echo x > '{}'",
        target.display()
    ));
    assert!(!out.status.success());
    assert_eq!(
        fs::read_to_string(f.work.join("in.txt")).unwrap(),
        "in side\n"
    );
    assert!(!target.exists());
}

#[test]
fn an_invalid_template_runs_nothing_and_says_why() {
    let target = |f: &Fixture| f.outside.join("ran.txt");
    // The control: a valid template runs the command.
    let f = fixture("      mode: custom\n      template: /bin/sh -c {cmd}\n");
    let out = f.exec(&format!("echo x > '{}'", target(&f).display()));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(target(&f).exists());
    for template in ["bwrap --ro-bind / / /bin/sh -c", "\"\"", "\"   \""] {
        let f = fixture(&format!("      mode: custom\n      template: {template}\n"));
        let out = f.exec(&format!("echo x > '{}'", target(&f).display()));
        assert_eq!(
            out.status.code(),
            Some(2),
            "{template}: {}",
            text(&out.stderr)
        );
        assert!(!target(&f).exists(), "{template}: the command ran");
        assert!(
            text(&out.stderr).contains("the command does not run"),
            "{template}: {}",
            text(&out.stderr)
        );
    }
    let f = fixture("      mode: custom\n      template: bwrap --ro-bind / / /bin/sh -c\n");
    assert!(text(&f.exec("true").stderr).contains(
        "isolation template `bwrap --ro-bind / / /bin/sh -c` has no `{cmd}` placeholder"
    ));
}

/// A project's `.sandgate/permissions.yaml` may only tighten: a custom
/// template there would run a program of the project's choosing for every
/// allowed command.
#[test]
fn a_local_file_cannot_choose_a_custom_template() {
    let f = fixture("      mode: none\n");
    let marker = f.outside.join("pwned");
    fs::create_dir_all(f.work.join(".sandgate")).unwrap();
    let local = f.work.join(".sandgate/permissions.yaml");
    let custom = format!(
        "permissions:\n  exec:\n    isolation:\n      mode: custom\n      template: /usr/bin/touch {} {{cmd}}\n",
        marker.display()
    );
    // The control: the same template in the central file runs.
    let central = fixture(&custom["permissions:\n  exec:\n    isolation:\n".len()..]);
    let out = central.exec("echo hello");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(marker.exists(), "the central template did not run");
    fs::remove_file(&marker).unwrap();
    let only_template = format!(
        "permissions:\n  exec:\n    isolation:\n      mode: landlock\n      template: /usr/bin/touch {} {{cmd}}\n",
        marker.display()
    );
    for (body, line) in [(&custom, 4), (&only_template, 5)] {
        fs::write(&local, body).unwrap();
        let out = f.exec("echo hello");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(!marker.exists(), "the local template ran");
        assert!(
            err.contains(&format!("{}:{line}:", local.display()))
                && err.contains("a local (project) file cannot set `exec.isolation`"),
            "{err}"
        );
    }
    // Choosing a built-in mode is tightening, and allowed.
    fs::write(
        &local,
        "permissions:\n  exec:\n    isolation:\n      mode: landlock\n",
    )
    .unwrap();
    let out = f.exec(&format!("echo x > '{}'", marker.display()));
    assert!(!out.status.success(), "{}", text(&out.stderr));
    assert!(!marker.exists(), "the local landlock mode did not confine");
}

#[test]
fn missing_bwrap_names_the_package() {
    let f = fixture(&mode_block("bwrap", false));
    let out = f
        .sandgate()
        .env("PATH", "/nonexistent")
        .args(["exec", "--", "true"])
        .output_within(DEADLINE)
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("install the `bubblewrap` package"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn dry_run_json_shows_verdict_plan_argv_and_enforcement() {
    let f = fixture(&mode_block("landlock", false));
    let target = f.outside.join("never.txt");
    let out = f
        .sandgate()
        .args(["--json", "exec", "--dry-run", "--"])
        .arg(format!("echo x > '{}'", target.display()))
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!target.exists(), "--dry-run ran the command");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["verdict"], "allow");
    let iso = &json["isolation"];
    assert_eq!(iso["mode"], "landlock");
    assert_eq!(
        iso["argv"],
        serde_json::json!(["/bin/sh", "-c", format!("echo x > '{}'", target.display())])
    );
    assert_eq!(iso["plan"]["workdir"], f.work.display().to_string());
    assert_eq!(iso["plan"]["network"], false);
    let denied: Vec<String> = iso["plan"]["denied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap().to_string())
        .collect();
    assert!(denied.contains(&f.home.join(".ssh").display().to_string()));
    let level = iso["enforcement"]["level"].as_str().unwrap();
    if landlock_abi() >= 5 {
        assert_eq!(level, "fully_enforced");
    }

    // The text form says the same for people.
    let out = f
        .sandgate()
        .args(["exec", "--dry-run", "--", "ls"])
        .output_within(DEADLINE)
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("verdict: allow"), "{stdout}");
    assert!(stdout.contains("isolation: landlock"), "{stdout}");
    assert!(stdout.contains("network: off"), "{stdout}");
}

#[test]
fn dry_run_shows_the_bwrap_argv() {
    let f = fixture(&mode_block("bwrap", true));
    let out = f
        .sandgate()
        .args(["--json", "exec", "--dry-run", "--", "make test"])
        .output_within(DEADLINE)
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let argv: Vec<String> = json["isolation"]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let work = f.work.display().to_string();
    let tail = ["--", "/bin/sh", "-c", "make test"].map(String::from);
    assert!(argv.ends_with(&tail), "{argv:?}");
    assert!(
        argv.windows(3).any(|w| w == ["--bind", &work, &work]),
        "{argv:?}"
    );
    assert!(!argv.contains(&"--unshare-net".to_string()), "{argv:?}");
}

/// The script opens a named pipe for writing in the background before any
/// reader, makes a file, then opens the reading end. sandgate performs the
/// writing open for the command; it must not hold every other call of the
/// command while that open waits.
const FIFO_SCRIPT: &str = "mkfifo p; (exec 3>p; echo writer-opened) & sleep 1; echo before-touch; touch x; echo touched; exec 4<p; wait; echo done";
