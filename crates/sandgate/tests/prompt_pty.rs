//! The terminal prompt, driven through a real pseudo-terminal against the real binary.
//!
//! Every test uses its own temporary HOME and `--config`, so nothing touches
//! the real `~/.sandgate`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/wait.rs"]
mod wait;

#[path = "../../../tests/support/pty.rs"]
mod pty;

use wait::{Bounded, DEADLINE};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::process::unix::{Signal, WaitStatus};
use expectrl::session::OsSession as Session;
use expectrl::{Eof, Expect};

const MENU: &str = "[4] deny always";

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    work: PathBuf,
    config: PathBuf,
}

/// A central file with comments in several places, and the given prompt timeout.
fn commented_policy(timeout: u64) -> String {
    format!(
        "# my policy: hand-written, keep these comments\n\
         permissions:\n\
         \x20 prompt:\n\
         \x20   timeout: {timeout}   # seconds\n\
         \x20 commands:\n\
         \x20   # only what I trust\n\
         \x20   allow: [\"^true$\"]\n\
         \x20   deny:\n\
         \x20     - '^rm -rf /'   # never\n"
    )
}

fn env(timeout: u64) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let home = root.join("home");
    let work = root.join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let config = root.join("central.yaml");
    std::fs::write(&config, commented_policy(timeout)).unwrap();
    Env {
        _tmp: tmp,
        root,
        home,
        work,
        config,
    }
}

impl Env {
    /// `sandgate --config C --local-config L ARGS…` in the work directory, with a clean environment.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
        cmd.arg("--config")
            .arg(&self.config)
            .arg("--local-config")
            .arg(self.root.join("local.yaml"))
            .args(args)
            .current_dir(&self.work)
            .env("HOME", &self.home)
            .env("SANDGATE_MANAGED_CONFIG", self.root.join("managed.yaml"))
            .env("TERM", "xterm")
            .env_remove("SANDGATE_CONFIG")
            .env_remove("SANDGATE_LOCAL_CONFIG")
            .env_remove("SANDGATE_NO_UI")
            .env_remove("SANDGATE_PROMPT_LOCK")
            .env_remove("SANDGATE_AUDIT")
            .env_remove("SANDGATE_AUDIT_LOG")
            .env_remove("XDG_RUNTIME_DIR");
        cmd
    }

    /// `/bin/sh -c SCRIPT` in the work directory with the same clean environment.
    fn shell(&self, script: &str) -> Command {
        let mut sh = Command::new("/bin/sh");
        sh.arg("-c").arg(script).current_dir(&self.work);
        for (k, v) in self.command(&[]).get_envs() {
            match v {
                Some(v) => sh.env(k, v),
                None => sh.env_remove(k),
            };
        }
        sh
    }

    /// The binary with this environment's policy flags, quoted for a shell script.
    fn sandgate_in_shell(&self, config: &Path) -> String {
        format!(
            "'{}' --config '{}' --local-config '{}'",
            env!("CARGO_BIN_EXE_sandgate"),
            config.display(),
            self.root.join("local.yaml").display()
        )
    }

    fn exec(&self, command: &str) -> Command {
        self.command(&["exec", "--", command])
    }

    fn spawn(&self, cmd: Command) -> Session {
        let mut s = Session::spawn(cmd).expect("spawn in a pty");
        s.set_expect_timeout(Some(Duration::from_secs(30)));
        s
    }

    fn policy_text(&self) -> String {
        std::fs::read_to_string(&self.config).unwrap()
    }

    fn audit(&self) -> Vec<serde_json::Value> {
        let text =
            std::fs::read_to_string(self.home.join(".sandgate/audit.jsonl")).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).expect("audit line is JSON"))
            .collect()
    }
}

/// The allow and deny lists of `permissions.commands`, parsed.
fn command_lists(text: &str) -> (Vec<String>, Vec<String>) {
    let v: serde_json::Value = serde_saphyr::from_str(text).expect("the policy parses");
    let list = |name: &str| -> Vec<String> {
        v["permissions"]["commands"][name]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    (list("allow"), list("deny"))
}

fn comments(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.find('#').map(|i| l[i..].to_string()))
        .collect()
}

fn exit_code(session: &mut Session) -> i32 {
    let _ = session.expect(Eof);
    match pty::wait_within(session, DEADLINE).expect("wait") {
        WaitStatus::Exited(_, code) => code,
        other => panic!("unexpected end: {other:?}"),
    }
}

/// Run `command` in a pty, answer `key` at the menu, return (output after the menu, exit code).
fn answer(env: &Env, cmd: Command, key: &str) -> (String, i32) {
    let mut s = env.spawn(cmd);
    s.expect(MENU).expect("the menu is shown");
    s.send(key).unwrap();
    let rest = s.expect(Eof).expect("the command ends");
    let output = String::from_utf8_lossy(rest.as_bytes()).into_owned();
    let code = match pty::wait_within(&mut s, DEADLINE).expect("wait") {
        WaitStatus::Exited(_, code) => code,
        other => panic!("unexpected end: {other:?}"),
    };
    (output, code)
}

/// The same command again, with `--no-ui`: decided without a prompt, or denied with the WARN line.
fn again_without_ui(env: &Env, command: &str) -> std::process::Output {
    env.command(&["exec", "--no-ui", "--", command])
        .output_within(DEADLINE)
        .unwrap()
}

#[test]
fn the_prompt_shows_tool_subject_reason_and_menu() {
    let env = env(25);
    let mut s = env.spawn(env.exec("echo hello"));
    let shown = s.expect(MENU).unwrap();
    let shown = String::from_utf8_lossy(shown.before()).into_owned();
    assert!(shown.contains("exec_run"), "{shown}");
    assert!(shown.contains("command: echo hello"), "{shown}");
    assert!(shown.contains("no allow rule matched"), "{shown}");
    assert!(
        shown.contains("[1] allow once  [2] allow always  [3] deny once"),
        "{shown}"
    );
    s.expect("25 s").expect("a countdown");
    s.send("3").unwrap();
    assert_eq!(exit_code(&mut s), 1);
}

#[test]
fn allow_once_runs_the_command_and_writes_nothing() {
    let env = env(25);
    let (out, code) = answer(&env, env.exec("echo ran-$((40+2))"), "1");
    assert!(out.contains("allow once"), "{out}");
    assert!(out.contains("ran-42"), "{out}");
    assert_eq!(code, 0);
    assert_eq!(env.policy_text(), commented_policy(25));
    // Once means once: the next identical call asks again.
    let again = again_without_ui(&env, "echo ran-$((40+2))");
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("WARN"));
}

#[test]
fn the_exit_code_of_the_command_is_passed_on() {
    let env = env(25);
    let (_, code) = answer(&env, env.exec("exit 7"), "1");
    assert_eq!(code, 7);
}

#[test]
fn deny_once_does_not_run_and_exits_1_with_the_reason() {
    let env = env(25);
    let marker = env.work.join("ran");
    let cmd = format!("touch {}", marker.display());
    let (out, code) = answer(&env, env.exec(&cmd), "3");
    assert_eq!(code, 1);
    assert!(out.contains("denied"), "{out}");
    assert!(!marker.exists(), "a denied command must not run");
    assert_eq!(env.policy_text(), commented_policy(25));
}

#[test]
fn allow_always_writes_the_exact_rule_and_the_next_call_is_not_asked() {
    let env = env(25);
    let command = "echo 'a.b*c (x) [y] $z ^w'";
    let before = env.policy_text();
    let (out, code) = answer(&env, env.exec(command), "2");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("a.b*c (x) [y] $z ^w"), "{out}");

    let after = env.policy_text();
    let (allow_before, deny_before) = command_lists(&before);
    let (allow_after, deny_after) = command_lists(&after);
    let rule = r"^echo 'a\.b\*c \(x\) \[y\] \$z \^w'$";
    let mut want = allow_before.clone();
    want.push(rule.to_string());
    assert_eq!(allow_after, want, "exactly that rule is added:\n{after}");
    assert_eq!(deny_after, deny_before);
    assert_eq!(
        comments(&after),
        comments(&before),
        "comments intact:\n{after}"
    );

    // The next identical request is decided without a prompt.
    let again = again_without_ui(&env, command);
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    assert!(String::from_utf8_lossy(&again.stdout).contains("a.b*c (x) [y] $z ^w"));
    assert!(!String::from_utf8_lossy(&again.stderr).contains("WARN"));

    // One character different still asks.
    let differs = "echo 'a.b*c (x) [y] $z ^W'";
    let mut s = env.spawn(env.exec(differs));
    s.expect(MENU).expect("a one-character change still asks");
    s.send("3").unwrap();
    assert_eq!(exit_code(&mut s), 1);
    let other = again_without_ui(&env, "echo 'a.b*c (x) [y] $z ^ww'");
    assert_eq!(other.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&other.stderr).contains("WARN"));

    // Answering "deny once" to the neighbour changed nothing in the file.
    assert_eq!(env.policy_text(), after);
}

#[test]
fn deny_always_writes_a_deny_rule_and_the_next_call_is_denied_by_it() {
    let env = env(25);
    let command = "echo a.b*c (x) [y] $z ^w";
    let before = env.policy_text();
    let (out, code) = answer(&env, env.exec(command), "4");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("deny always"), "{out}");

    let after = env.policy_text();
    let (allow_before, deny_before) = command_lists(&before);
    let (allow_after, deny_after) = command_lists(&after);
    let rule = r"^echo a\.b\*c \(x\) \[y\] \$z \^w$";
    let mut want = deny_before.clone();
    want.push(rule.to_string());
    assert_eq!(deny_after, want, "{after}");
    assert_eq!(allow_after, allow_before);
    assert_eq!(comments(&after), comments(&before), "{after}");

    // Denied by the new rule, without a prompt and without the no-terminal warning.
    let again = again_without_ui(&env, command);
    assert_eq!(again.status.code(), Some(1));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains(rule), "{err}");
    assert!(!err.contains("WARN"), "{err}");

    // One character different is not denied by it: it asks.
    let mut s = env.spawn(env.exec("echo a.b*c (x) [y] $z ^v"));
    s.expect(MENU).expect("still asks");
    s.send("\x1b").unwrap();
    assert_eq!(exit_code(&mut s), 1);
}

#[test]
fn escape_and_ctrl_c_deny_once() {
    let env = env(25);
    for key in ["\x1b", "\x03"] {
        let marker = env.work.join("ran");
        let (out, code) = answer(&env, env.exec(&format!("touch {}", marker.display())), key);
        assert_eq!(code, 1, "{key:?}: {out}");
        assert!(out.contains("deny once"), "{key:?}: {out}");
        assert!(!marker.exists());
        assert_eq!(env.policy_text(), commented_policy(25));
    }
}

#[test]
fn other_keys_do_not_answer() {
    let env = env(25);
    let mut s = env.spawn(env.exec("echo answered"));
    s.expect(MENU).unwrap();
    s.send("x5\r y").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    s.send("1").unwrap();
    s.expect("answered").unwrap();
    assert_eq!(exit_code(&mut s), 0);
}

/// Whether the pty is in canonical (line) mode, i.e. not in raw mode.
fn canonical(s: &Session) -> bool {
    let master = s.get_process().get_raw_handle().unwrap();
    let termios = nix::sys::termios::tcgetattr(&master).unwrap();
    termios
        .local_flags
        .contains(nix::sys::termios::LocalFlags::ICANON)
}

#[test]
fn a_signal_during_the_prompt_restores_the_terminal_and_runs_nothing() {
    let env = env(25);
    for signal in [Signal::SIGTERM, Signal::SIGHUP] {
        let marker = env.work.join("ran");
        // Not checked right after the start: sandgate may be asking already.
        // Raw while asking and line mode after the signal show that both
        // states are seen.
        let mut s = env.spawn(env.exec(&format!("touch {}", marker.display())));
        s.expect(MENU).unwrap();
        assert!(!canonical(&s), "raw mode while asking");
        s.get_process_mut().signal(signal).unwrap();
        let _ = s.expect(Eof);
        match pty::wait_within(&mut s, DEADLINE).unwrap() {
            WaitStatus::Signaled(_, got, _) => assert_eq!(got, signal),
            other => panic!("{signal:?}: {other:?}"),
        }
        assert!(canonical(&s), "{signal:?} left the terminal in raw mode");
        assert!(!marker.exists());
    }
}

#[test]
fn an_unanswered_prompt_times_out_to_deny() {
    let env = env(2);
    let marker = env.work.join("ran");
    let started = Instant::now();
    let mut s = env.spawn(env.exec(&format!("touch {}", marker.display())));
    s.expect(MENU).unwrap();
    s.expect("2 s")
        .expect("the countdown starts at the configured timeout");
    s.expect("1 s").expect("and counts down");
    let rest = s.expect(Eof).unwrap();
    let out = String::from_utf8_lossy(rest.as_bytes()).into_owned();
    let code = match pty::wait_within(&mut s, DEADLINE).unwrap() {
        WaitStatus::Exited(_, c) => c,
        other => panic!("{other:?}"),
    };
    let elapsed = started.elapsed();
    assert_eq!(code, 1);
    assert!(out.contains("timed out"), "{out}");
    assert!(out.contains("no answer within 2 s"), "{out}");
    assert!(!marker.exists());
    assert!(elapsed >= Duration::from_secs(2), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(15), "{elapsed:?}");
    let audit = env.audit();
    let last = audit.last().expect("audited");
    assert_eq!(last["verdict"], "deny");
    assert!(last["reason"].as_str().unwrap().contains("timed out"));
}

#[test]
fn the_prompt_uses_the_terminal_while_stdin_and_stdout_are_pipes() {
    let env = env(25);
    let sg = env.sandgate_in_shell(&env.config);
    let sh = env.shell(&format!(
        "echo piped-input | {sg} exec -- tr a-z A-Z | sed 's/^/out:/'"
    ));
    let mut s = env.spawn(sh);
    s.expect(MENU).unwrap();
    s.send("1").unwrap();
    s.expect("out:PIPED-INPUT")
        .expect("stdin and stdout pass through");
    assert_eq!(exit_code(&mut s), 0);
}

#[test]
fn two_concurrent_asks_take_turns() {
    let env = env(25);
    let sg = env.sandgate_in_shell(&env.config);
    let sh = env.shell(&format!(
        "{sg} exec -- echo first-ran & sleep 2; {sg} exec -- echo second-ran; wait"
    ));
    let mut s = env.spawn(sh);
    s.expect("command: echo first-ran").unwrap();
    s.expect(MENU).unwrap();
    // The second ask starts 2 s after the first and must be waiting, not drawing.
    std::thread::sleep(Duration::from_secs(3));
    s.send("1").unwrap();
    let between = s.expect("command: echo second-ran").unwrap();
    let between = String::from_utf8_lossy(between.before()).into_owned();
    // The second prompt is drawn only after the first one was answered.
    let answered = between.find("→ allow once").expect("the first answer");
    let second = between
        .find("permission required")
        .expect("the second header");
    assert!(
        answered < second,
        "the second prompt was drawn while the first was open: {between}"
    );
    s.expect(MENU).unwrap();
    s.send("1").unwrap();
    s.expect("second-ran").unwrap();
    assert_eq!(exit_code(&mut s), 0);
}

#[test]
fn a_waiting_ask_whose_timeout_runs_out_is_denied() {
    let env = env(20);
    let short = env.root.join("short.yaml");
    std::fs::write(&short, commented_policy(1)).unwrap();
    let long = env.sandgate_in_shell(&env.config);
    let short = env.sandgate_in_shell(&short);
    let sh = env.shell(&format!(
        "{long} exec -- echo first-ran & sleep 2; \
         {short} exec -- echo second-ran; echo second-exit=$?; wait"
    ));
    let mut s = env.spawn(sh);
    s.expect(MENU).unwrap();
    let waited = s.expect("second-exit=1").expect("the second ask gives up");
    let waited = String::from_utf8_lossy(waited.before()).into_owned();
    assert!(waited.contains("timed out"), "{waited}");
    assert!(!waited.contains("second-ran\r\n"), "{waited}");
    s.send("1").unwrap();
    s.expect("first-ran").unwrap();
    assert_eq!(exit_code(&mut s), 0);
}

fn assert_headless_deny(env: &Env, output: &std::process::Output, subject: &str, why: &str) {
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let err = String::from_utf8_lossy(&output.stderr);
    let warn: Vec<&str> = err.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warn.len(), 1, "exactly one WARN line: {err}");
    assert!(warn[0].contains("exec_run"), "{err}");
    assert!(warn[0].contains(subject), "{err}");
    assert!(warn[0].contains(why), "{err}");
    assert!(!err.contains(MENU), "{err}");
    let audit = env.audit();
    let last = audit.last().expect("audited");
    assert_eq!(last["verdict"], "deny");
    assert_eq!(last["subject"], subject);
}

#[test]
fn no_terminal_denies_at_once_with_one_warn_line() {
    let env = env(25);
    let marker = env.work.join("ran");
    let command = format!("touch {}", marker.display());

    let started = Instant::now();
    let out = env
        .command(&["exec", "--no-ui", "--", &command])
        .output_within(DEADLINE)
        .unwrap();
    assert_headless_deny(&env, &out, &command, "--no-ui");

    let out = env
        .exec(&command)
        .env("SANDGATE_NO_UI", "1")
        .output_within(DEADLINE)
        .unwrap();
    assert_headless_deny(&env, &out, &command, "SANDGATE_NO_UI=1");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!marker.exists());
}

#[test]
fn no_controlling_terminal_denies_at_once() {
    let setsid = ["/usr/bin/setsid", "/bin/setsid"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(setsid) = setsid else {
        eprintln!("skipped: no setsid(1) to start a process without a controlling terminal");
        return;
    };
    let env = env(25);
    let inner = env.exec("echo never");
    let mut cmd = Command::new(setsid);
    cmd.arg("--wait")
        .arg(inner.get_program())
        .args(inner.get_args());
    cmd.current_dir(&env.work);
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let started = Instant::now();
    let out = cmd.output_within(DEADLINE).unwrap();
    assert_headless_deny(&env, &out, "echo never", "/dev/tty");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("never"));
}
