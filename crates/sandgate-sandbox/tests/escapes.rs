//! Escape attempts against the real kernel: every isolation mode that runs on
//! this machine must give the same answers on the same table.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use sandgate_policy::config::{IsolationConfig, IsolationMode};
use sandgate_sandbox::{landlock_abi, EnforcementLevel, Environment, Isolation, IsolationError};

#[path = "../../../tests/support/wait.rs"]
mod wait;

/// A fake home with a floor directory, a workdir with a space in its name,
/// and an outside directory the command may read but not write.
struct Fixture {
    _root: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    outside: PathBuf,
    tmp: PathBuf,
}

fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    let home = base.join("home");
    let work = home.join("my work");
    let outside = base.join("outside");
    let tmp = base.join("tmp");
    for dir in [
        &home.join(".ssh"),
        &work,
        &outside,
        &tmp,
        &base.join("denied"),
    ] {
        fs::create_dir_all(dir).unwrap();
    }
    fs::write(home.join(".ssh/id_ed25519"), "SECRET KEY\n").unwrap();
    fs::write(base.join("denied/data"), "DENIED DATA\n").unwrap();
    fs::write(outside.join("public.txt"), "PUBLIC\n").unwrap();
    Fixture {
        _root: root,
        home,
        work,
        outside,
        tmp,
    }
}

impl Fixture {
    fn isolation(&self, mode: IsolationMode, network: bool) -> Isolation {
        self.isolation_with(IsolationConfig {
            mode: Some(mode),
            network: Some(network),
            ..IsolationConfig::default()
        })
        .unwrap()
    }

    fn isolation_with(&self, config: IsolationConfig) -> Result<Isolation, IsolationError> {
        let env = Environment {
            cwd: self.work.clone(),
            home: self.home.clone(),
            temp_dir: self.tmp.clone(),
            other_homes: Vec::new(),
        };
        let denied_dir = self.outside.parent().unwrap().join("denied");
        let deny = vec![format!("{}/**", denied_dir.display())];
        Isolation::new(Some(&config), true, &deny, &env)
    }
}

fn run(isolation: &Isolation, command: &str) -> Output {
    let prepared = isolation.command(command).unwrap();
    let mut cmd = prepared.command;
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(supervision) = prepared.supervision {
        supervision.attach().unwrap();
    }
    wait::finish(child, 60, command)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Which modes run here; prints why a mode is skipped.
fn modes() -> Vec<IsolationMode> {
    let mut modes = Vec::new();
    if landlock_abi() >= 5 {
        modes.push(IsolationMode::Landlock);
    } else {
        eprintln!(
            "skipping landlock: the kernel has Landlock ABI {}, these tests need 5",
            landlock_abi()
        );
    }
    if sandgate_sandbox::bwrap::find().found.is_some() {
        modes.push(IsolationMode::Bwrap);
    } else {
        eprintln!("skipping bwrap: `bwrap` is not installed (package `bubblewrap`)");
    }
    modes
}

#[test]
fn writes_land_only_in_the_workdir() {
    for mode in modes() {
        let f = fixture();
        let iso = f.isolation(mode, false);
        let out = run(&iso, "echo inside > inside.txt && cat inside.txt");
        assert!(out.status.success(), "{mode:?}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "inside\n", "{mode:?}");

        let target = f.outside.join("escape.txt");
        let out = run(&iso, &format!("echo x > '{}'", target.display()));
        assert!(!out.status.success(), "{mode:?} wrote outside the workdir");
        assert!(!target.exists(), "{mode:?}: {target:?} exists");

        // The temp dir is not writable without allow_tmp.
        let out = run(&iso, &format!("touch '{}/t'", f.tmp.display()));
        assert!(!out.status.success(), "{mode:?} wrote to the temp dir");

        // /dev/null stays writable.
        let out = run(&iso, "echo gone > /dev/null && echo ok");
        assert_eq!(text(&out.stdout), "ok\n", "{mode:?}: {}", text(&out.stderr));
    }
}

#[test]
fn allow_tmp_makes_the_temp_dir_writable() {
    for mode in modes() {
        let f = fixture();
        let iso = f
            .isolation_with(IsolationConfig {
                mode: Some(mode),
                allow_tmp: Some(true),
                ..IsolationConfig::default()
            })
            .unwrap();
        let out = run(&iso, &format!("echo t > '{}/t'", f.tmp.display()));
        assert!(out.status.success(), "{mode:?}: {}", text(&out.stderr));
        assert_eq!(fs::read_to_string(f.tmp.join("t")).unwrap(), "t\n");
    }
}

#[test]
fn floor_and_denied_dirs_cannot_be_read_but_the_rest_can() {
    for mode in modes() {
        let f = fixture();
        let iso = f.isolation(mode, false);
        let key = f.home.join(".ssh/id_ed25519");
        let out = run(&iso, &format!("cat '{}'", key.display()));
        assert!(!out.status.success(), "{mode:?} read the key");
        assert!(!text(&out.stdout).contains("SECRET"), "{mode:?}");

        let out = run(&iso, &format!("ls '{}'", f.home.join(".ssh").display()));
        assert!(
            !text(&out.stdout).contains("id_ed25519"),
            "{mode:?} listed ~/.ssh"
        );

        let denied = f.outside.parent().unwrap().join("denied/data");
        let out = run(&iso, &format!("cat '{}'", denied.display()));
        assert!(
            !text(&out.stdout).contains("DENIED"),
            "{mode:?} read paths.deny"
        );

        let out = run(
            &iso,
            &format!("cat '{}'", f.outside.join("public.txt").display()),
        );
        assert_eq!(
            text(&out.stdout),
            "PUBLIC\n",
            "{mode:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_symlink_in_the_workdir_does_not_lead_outside() {
    for mode in modes() {
        let f = fixture();
        std::os::unix::fs::symlink(&f.outside, f.work.join("out")).unwrap();
        std::os::unix::fs::symlink(f.home.join(".ssh"), f.work.join("keys")).unwrap();
        let iso = f.isolation(mode, false);
        let out = run(&iso, "echo x > out/escape.txt");
        assert!(!out.status.success(), "{mode:?} wrote through the symlink");
        assert!(!f.outside.join("escape.txt").exists(), "{mode:?}");

        let out = run(&iso, "cat keys/id_ed25519");
        assert!(
            !text(&out.stdout).contains("SECRET"),
            "{mode:?} read through the symlink"
        );

        // Nor can one made inside the sandbox.
        let out = run(
            &iso,
            &format!(
                "ln -s '{}' made && echo y > made/made.txt",
                f.outside.display()
            ),
        );
        assert!(!out.status.success(), "{mode:?}");
        assert!(!f.outside.join("made.txt").exists(), "{mode:?}");
    }
}

/// Runs a TCP connect to a loopback listener from inside the sandbox, two
/// ways; returns (bash /dev/tcp exit ok, python connect ok, connections seen).
fn connect_attempts(iso: &Isolation) -> (bool, Option<bool>, usize) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let bash = run(
        iso,
        &format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'"),
    );
    let python = which("python3").map(|_| {
        run(
            iso,
            &format!(
                "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=5)'"
            ),
        )
        .status
        .success()
    });
    if python.is_none() {
        eprintln!("python3 is not installed: only the bash /dev/tcp connect runs");
    }
    std::thread::sleep(Duration::from_millis(50));
    let mut seen = 0;
    loop {
        match listener.accept() {
            Ok(_) => seen += 1,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => panic!("accept: {e}"),
        }
    }
    (bash.status.success(), python, seen)
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

#[test]
fn network_off_blocks_loopback_tcp_and_network_on_allows_it() {
    if which("bash").is_none() {
        eprintln!("skipping: bash is not installed (needed for /dev/tcp)");
        return;
    }
    for mode in modes() {
        let f = fixture();
        let (bash, python, seen) = connect_attempts(&f.isolation(mode, false));
        assert!(!bash, "{mode:?}: /dev/tcp connected with the network off");
        assert_ne!(python, Some(true), "{mode:?}: python connected");
        assert_eq!(seen, 0, "{mode:?}: the listener saw a connection");

        let (bash, python, seen) = connect_attempts(&f.isolation(mode, true));
        assert!(bash, "{mode:?}: /dev/tcp failed with the network on");
        assert_ne!(
            python,
            Some(false),
            "{mode:?}: python failed with network on"
        );
        assert!(seen >= 1, "{mode:?}: the listener saw nothing");
    }
}

#[test]
fn unix_sockets_still_work_with_the_network_off() {
    if which("python3").is_none() {
        eprintln!("skipping: python3 is not installed");
        return;
    }
    for mode in modes() {
        let f = fixture();
        let iso = f.isolation(mode, false);
        let out = run(
            &iso,
            "python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"u\"); print(b.recv(1).decode())'",
        );
        assert_eq!(text(&out.stdout), "u\n", "{mode:?}: {}", text(&out.stderr));
    }
}

#[test]
fn no_new_privs_is_set() {
    for mode in modes() {
        let f = fixture();
        let out = run(
            &f.isolation(mode, false),
            "grep NoNewPrivs /proc/self/status",
        );
        assert_eq!(text(&out.stdout), "NoNewPrivs:\t1\n", "{mode:?}");
    }
}

#[test]
fn exit_codes_stdout_and_stderr_pass_through() {
    let mut all = modes();
    all.push(IsolationMode::None);
    for mode in all {
        let f = fixture();
        let out = run(
            &f.isolation(mode, false),
            "echo \"out $((6*7))\"; echo 'err;\"$x\"' >&2; exit 7",
        );
        assert_eq!(out.status.code(), Some(7), "{mode:?}");
        assert_eq!(text(&out.stdout), "out 42\n", "{mode:?}");
        assert_eq!(text(&out.stderr), "err;\"$x\"\n", "{mode:?}");
    }
}

#[test]
fn the_command_starts_in_the_working_directory() {
    for mode in modes() {
        let f = fixture();
        let out = run(&f.isolation(mode, false), "pwd");
        assert_eq!(text(&out.stdout).trim_end(), f.work.display().to_string());
    }
}

#[test]
fn landlock_reports_full_enforcement_here() {
    if landlock_abi() < 5 {
        eprintln!("skipping: the kernel has Landlock ABI {}", landlock_abi());
        return;
    }
    let f = fixture();
    let iso = f.isolation(IsolationMode::Landlock, false);
    assert_eq!(iso.mode(), IsolationMode::Landlock);
    assert_eq!(iso.enforcement().level, EnforcementLevel::FullyEnforced);
    assert!(iso.ensure_startable().is_ok());
    assert_eq!(iso.argv("true"), ["/bin/sh", "-c", "true"]);
}

#[test]
fn custom_template_with_spaces_in_the_workdir_and_shell_syntax_in_the_command() {
    let f = fixture();
    let iso = f
        .isolation_with(IsolationConfig {
            mode: Some(IsolationMode::Custom),
            template: Some("env SANDGATE_WORKDIR={workdir}   /bin/sh -c {cmd}".into()),
            ..IsolationConfig::default()
        })
        .unwrap();
    assert_eq!(iso.mode(), IsolationMode::Custom);
    assert_eq!(iso.enforcement().level, EnforcementLevel::Delegated);
    let command = "printf '%s|' \"$SANDGATE_WORKDIR\"; echo \"a;b\" '$HOME' `echo x`";
    assert_eq!(
        iso.argv(command),
        [
            "env".to_string(),
            format!("SANDGATE_WORKDIR={}", f.work.display()),
            "/bin/sh".into(),
            "-c".into(),
            command.into(),
        ]
    );
    let out = run(&iso, command);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{}|a;b $HOME x\n", f.work.display())
    );
}

#[test]
fn custom_template_around_bwrap_confines_writes() {
    if sandgate_sandbox::bwrap::find().found.is_none() {
        eprintln!("skipping: `bwrap` is not installed (package `bubblewrap`)");
        return;
    }
    let f = fixture();
    let iso = f
        .isolation_with(IsolationConfig {
            mode: Some(IsolationMode::Custom),
            template: Some(
                "bwrap --ro-bind / / --dev /dev --bind {workdir} {workdir} --chdir {workdir} --unshare-net /bin/sh -c {cmd}"
                    .into(),
            ),
            ..IsolationConfig::default()
        })
        .unwrap();
    let target = f.outside.join("x");
    let out = run(
        &iso,
        &format!("echo 'in;side' > in.txt; echo out > '{}'", target.display()),
    );
    assert!(!out.status.success());
    assert_eq!(
        fs::read_to_string(f.work.join("in.txt")).unwrap(),
        "in;side\n"
    );
    assert!(!target.exists());
}

#[test]
fn an_invalid_custom_template_is_an_error_and_runs_nothing() {
    let f = fixture();
    for template in [None, Some("   "), Some("bwrap --ro-bind / / sh -c")] {
        let err = f
            .isolation_with(IsolationConfig {
                mode: Some(IsolationMode::Custom),
                template: template.map(String::from),
                ..IsolationConfig::default()
            })
            .err()
            .unwrap_or_else(|| panic!("{template:?}: accepted"));
        assert!(
            matches!(err, IsolationError::Template(_))
                && err.to_string().contains("the command does not run"),
            "{template:?}: {err}"
        );
    }
}

#[test]
fn the_sandbox_off_turns_isolation_off() {
    let f = fixture();
    let config = IsolationConfig {
        mode: Some(IsolationMode::Landlock),
        ..IsolationConfig::default()
    };
    let env = Environment::new(f.work.clone(), f.home.clone());
    let iso = Isolation::new(Some(&config), false, &[], &env).unwrap();
    assert_eq!(iso.mode(), IsolationMode::None);
    assert!(iso.plan().is_none());
    assert!(iso.notices().is_empty());
}

#[test]
fn a_missing_or_denied_workdir_is_an_error() {
    let f = fixture();
    let err = f
        .isolation_with(IsolationConfig {
            mode: Some(IsolationMode::Landlock),
            workdir: Some("does/not exist".into()),
            ..IsolationConfig::default()
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "isolation workdir `{}` is not an existing directory",
            f.work.join("does/not exist").display()
        )
    );
    // A symlinked workdir that really is a floor dir.
    std::os::unix::fs::symlink(f.home.join(".ssh"), f.work.join("k")).unwrap();
    let err = f
        .isolation_with(IsolationConfig {
            mode: Some(IsolationMode::Bwrap),
            workdir: Some("k".into()),
            ..IsolationConfig::default()
        })
        .unwrap_err();
    assert!(
        err.to_string().contains("lies inside the denied directory"),
        "{err}"
    );
}

#[test]
fn seatbelt_is_refused_off_macos() {
    if cfg!(target_os = "macos") {
        return;
    }
    let f = fixture();
    let iso = f.isolation(IsolationMode::Seatbelt, false);
    assert_eq!(iso.enforcement().level, EnforcementLevel::NotEnforced);
    let err = iso.command("true").unwrap_err();
    assert_eq!(
        err.to_string(),
        "isolation mode `seatbelt` needs `/usr/bin/sandbox-exec`, which exists only on macOS"
    );
    let argv = iso.argv("true");
    assert_eq!(argv[0], "/usr/bin/sandbox-exec");
    assert!(argv.contains(&format!("WORKDIR={}", f.work.display())));
}

#[test]
fn the_dry_run_report_serializes() {
    let f = fixture();
    let iso = f.isolation(IsolationMode::Landlock, false);
    let json = serde_json::to_value(iso.report("ls")).unwrap();
    assert_eq!(json["mode"], "landlock");
    assert_eq!(json["argv"], serde_json::json!(["/bin/sh", "-c", "ls"]));
    assert_eq!(json["plan"]["network"], false);
    assert_eq!(json["plan"]["no_new_privs"], true);
    assert_eq!(json["plan"]["workdir"], f.work.display().to_string());
    assert!(json["enforcement"]["level"].is_string());
    let text = iso.report("ls").to_string();
    assert!(text.contains("isolation: landlock"), "{text}");
    assert!(text.contains("network: off"), "{text}");
    assert!(Path::new(&f.work).is_dir());
}

#[test]
fn landlock_seccomp_denies_inet_sockets_and_x32_calls() {
    if landlock_abi() < 5 || which("python3").is_none() {
        eprintln!("skipping: needs Landlock ABI 5 and python3");
        return;
    }
    let f = fixture();
    let iso = f.isolation(IsolationMode::Landlock, false);
    // socket(AF_INET, SOCK_DGRAM) through libc, and the same call with the
    // x32 bit set (x86-64 only), must both fail with EACCES.
    let script = "import ctypes, platform\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        print(libc.socket(2, 2, 0), ctypes.get_errno())\n\
        if platform.machine() == 'x86_64':\n    \
            print(libc.syscall(0x40000000 + 41, 2, 2, 0), ctypes.get_errno())\n";
    let out = run(&iso, &format!("python3 -c \"{script}\""));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(!lines.is_empty(), "{}", text(&out.stderr));
    for line in lines {
        assert_eq!(line, "-1 13", "{stdout}");
    }
}
