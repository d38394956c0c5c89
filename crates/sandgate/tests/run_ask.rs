//! `sandgate run`: the ask flow, driven through a real pseudo-terminal, for
//! each of the four answers, with persistence to `sandbox.json`, against the
//! real kernel and the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/pty.rs"]
mod pty;

use run_common::wait::{Bounded, DEADLINE};
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use expectrl::process::unix::WaitStatus;
use expectrl::session::OsSession as Session;
use expectrl::{Eof, Expect};
use run_common::{supported, Tree as Env};

mod run_common;

const MENU: &str = "[4] deny always";

fn env() -> Env {
    Env::new().armed()
}

impl Env {
    /// `sandgate run [EXTRA] -- sh -c SCRIPT` in the workspace; `$OUT` is the outside dir.
    fn command(&self, extra: &[&str], script: &str) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
        cmd.arg("run")
            .args(extra)
            .args(["--", "sh", "-c", script])
            .current_dir(&self.ws)
            .env("HOME", &self.home)
            .env("OUT", &self.out)
            .env("TERM", "xterm")
            .env("SANDGATE_AUDIT", "off")
            .env_remove("SANDGATE_SANDBOX")
            .env_remove("SANDGATE_NO_UI")
            .env_remove("SANDGATE_PROMPT_LOCK")
            .env_remove("SANDGATE_CONFIG")
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("TMPDIR");
        cmd
    }

    fn spawn(&self, script: &str) -> Session {
        let mut s = Session::spawn(self.command(&[], script)).expect("spawn in a pty");
        s.set_expect_timeout(Some(Duration::from_secs(30)));
        // Wide enough that a path is never cut across lines.
        s.get_process_mut().set_window_size(250, 40).unwrap();
        s
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::from_str(&fs::read_to_string(self.ws.join(".sandgate/sandbox.json")).unwrap())
            .unwrap()
    }

    fn list(&self, name: &str) -> Vec<String> {
        self.settings()[name]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    }

    fn path(&self, name: &str) -> String {
        self.out.join(name).to_string_lossy().into_owned()
    }
}

/// Waits for the question, checks it names the process and the path, and
/// answers `key` as a person does: once the question has been on screen a
/// moment, one key on its own; "always" (`2`, `4`) confirmed by the same key
/// again.
fn answer(s: &mut Session, path: &str, process: &str, key: &str) {
    // Skip redraws of an earlier question: this one starts with its path.
    s.expect(format!("   {path}\r"))
        .expect("the question is shown");
    let shown = s.expect(MENU).expect("the menu is shown");
    let shown = String::from_utf8_lossy(shown.before()).into_owned();
    assert!(
        shown.contains("[pid "),
        "the question names the process: {shown}"
    );
    assert!(
        shown.contains(&format!("   {process} (")),
        "the question names the process `{process}`: {shown}"
    );
    press(s, key);
    if key == "2" || key == "4" {
        s.expect("again to confirm")
            .expect("a confirmation is asked for");
        press(s, key);
    }
}

/// One key, after a pause longer than the arming delay.
fn press(s: &mut Session, key: &str) {
    std::thread::sleep(Duration::from_millis(900));
    s.send(key).unwrap();
}

/// Everything left until the end, and the exit code.
fn finish(mut s: Session) -> (String, i32) {
    let rest = s.expect(Eof).expect("the program ends");
    let text = String::from_utf8_lossy(rest.as_bytes()).into_owned();
    let code = match pty::wait_within(&mut s, DEADLINE).expect("wait") {
        WaitStatus::Exited(_, code) => code,
        other => panic!("unexpected end: {other:?}"),
    };
    (text, code)
}

#[test]
fn allow_once_lets_the_write_land_and_persists_nothing() {
    if !supported() {
        return;
    }
    let e = env();
    let target = e.path("once.txt");
    let mut s = e.spawn(
        "echo pid=$$; echo first > \"$OUT/once.txt\" && echo WROTE1; echo second > \"$OUT/once.txt\" || echo FAILED2; echo pid=$$",
    );
    answer(&mut s, &target, "sh", "1");
    // Once means once: the same path asks again in the same run.
    answer(&mut s, &target, "sh", "3");
    let (text, code) = finish(s);
    assert_eq!(code, 0, "{text}");
    // (`WROTE1` was printed before the second question: the first write
    // landed, as the file says.)
    assert!(text.contains("FAILED2"), "{text}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "first\n");
    assert!(
        e.list("allow").is_empty() && e.list("deny").is_empty(),
        "{}",
        e.settings()
    );
}

#[test]
fn allow_always_lands_persists_and_is_not_asked_again() {
    if !supported() {
        return;
    }
    let e = env();
    let target = e.path("always.txt");
    let mut s = e.spawn(
        "echo one > \"$OUT/always.txt\" && echo two >> \"$OUT/always.txt\" && rm \"$OUT/always.txt\" && echo three > \"$OUT/always.txt\" && echo DONE",
    );
    answer(&mut s, &target, "sh", "2");
    let (text, code) = finish(s);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("DONE"), "{text}");
    assert_eq!(text.matches(MENU).count(), 0, "asked again: {text}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "three\n");
    assert_eq!(e.list("allow"), vec![target.clone()]);

    // The next start has it in the allowed set: no question, even headless.
    let out = e
        .command(&["--no-ui"], "echo four > \"$OUT/always.txt\"")
        .output_within(DEADLINE)
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "four\n");
}

#[test]
fn reject_once_fails_the_write_and_persists_nothing() {
    if !supported() {
        return;
    }
    let e = env();
    fs::write(e.out.join("keep.txt"), "keep\n").unwrap();
    let target = e.path("keep.txt");
    let mut s = e.spawn("rm -f \"$OUT/keep.txt\"; echo rc=$?");
    answer(&mut s, &target, "rm", "3");
    let (text, _) = finish(s);
    assert!(text.contains("rc=1"), "{text}");
    assert!(text.contains("Permission denied"), "{text}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep\n");
    assert!(e.list("allow").is_empty() && e.list("deny").is_empty());

    // Not remembered: the next start asks again.
    let mut s = e.spawn("rm -f \"$OUT/keep.txt\"; echo rc=$?");
    answer(&mut s, &target, "rm", "3");
    let (text, _) = finish(s);
    assert!(text.contains("rc=1"), "{text}");
}

#[test]
fn reject_always_fails_persists_and_is_never_asked_again() {
    if !supported() {
        return;
    }
    let e = env();
    let target = e.path("never.txt");
    let mut s = e.spawn("mkdir \"$OUT/never.txt\"; echo rc=$?");
    answer(&mut s, &target, "mkdir", "4");
    let (text, _) = finish(s);
    assert!(text.contains("rc=1"), "{text}");
    assert!(!Path::new(&target).exists());
    assert_eq!(e.list("deny"), vec![target.clone()]);

    // The next start, with a terminal, fails it without a question.
    let s = e.spawn("touch \"$OUT/never.txt\"; echo rc=$?");
    let (text, _) = finish(s);
    assert!(!text.contains(MENU), "asked again: {text}");
    assert!(text.contains("rc=1"), "{text}");
    assert!(text.contains("deny list"), "{text}");
    assert!(!Path::new(&target).exists());
}

#[test]
fn several_asks_in_a_row_need_no_restart() {
    if !supported() {
        return;
    }
    let e = env();
    let mut s = e.spawn(
        "echo $$ > before; for f in a b c; do echo $f > \"$OUT/$f.txt\"; done; mkdir \"$OUT/d\" && mv \"$OUT/a.txt\" \"$OUT/d/\"; echo $$ > after",
    );
    answer(&mut s, &e.path("a.txt"), "sh", "1");
    answer(&mut s, &e.path("b.txt"), "sh", "1");
    answer(&mut s, &e.path("c.txt"), "sh", "1");
    answer(&mut s, &e.path("d"), "mkdir", "2");
    // The rename's source is outside too.
    answer(&mut s, &e.path("a.txt"), "mv", "1");
    let (text, code) = finish(s);
    assert_eq!(code, 0, "{text}");
    let before = fs::read_to_string(e.ws.join("before")).unwrap();
    let after = fs::read_to_string(e.ws.join("after")).unwrap();
    assert_eq!(before, after, "the program was restarted");
    assert_eq!(fs::read_to_string(e.out.join("d/a.txt")).unwrap(), "a\n");
    assert_eq!(fs::read_to_string(e.out.join("c.txt")).unwrap(), "c\n");
}

#[test]
fn an_unanswered_question_times_out_denies_and_persists_nothing() {
    if !supported() {
        return;
    }
    let e = env();
    let config = e.home.join("permissions.yaml");
    fs::write(&config, "permissions:\n  prompt:\n    timeout: 1\n").unwrap();
    let config = config.to_string_lossy().into_owned();
    let cmd = e.command(
        &["--config", &config],
        "echo x > \"$OUT/late.txt\"; echo rc=$?",
    );
    let mut s = Session::spawn(cmd).expect("spawn in a pty");
    s.set_expect_timeout(Some(Duration::from_secs(30)));
    s.expect(MENU).expect("the menu is shown");
    let (text, code) = finish(s);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("rc=2"), "{text}");
    assert!(text.contains("no answer in time"), "{text}");
    assert!(!e.out.join("late.txt").exists());
    assert!(e.list("allow").is_empty() && e.list("deny").is_empty());
}

#[test]
fn the_terminal_is_restored_when_the_program_ends_during_a_question() {
    if !supported() {
        return;
    }
    let e = env();
    // The program leaves a child behind whose write is asked about, and is
    // killed while the question is on screen (held while it is, it cannot
    // end by itself); a shell then reports the terminal mode.
    let inner = e.command(
        &[],
        "echo program=$$; (echo x > \"$OUT/late.txt\") & sleep 30",
    );
    let argv: Vec<String> = std::iter::once(inner.get_program())
        .chain(inner.get_args())
        .map(|a| format!("'{}'", a.to_string_lossy()))
        .collect();
    let mut outer = Command::new("sh");
    outer
        .arg("-c")
        .arg(format!(
            "echo mode=$(stty -g); {}; echo status=$?; echo mode=$(stty -g); echo END",
            argv.join(" ")
        ))
        .current_dir(&e.ws);
    for (key, value) in inner.get_envs() {
        match value {
            Some(value) => outer.env(key, value),
            None => outer.env_remove(key),
        };
    }
    let mut s = Session::spawn(outer).expect("spawn in a pty");
    s.set_expect_timeout(Some(Duration::from_secs(30)));
    let before = s.expect(MENU).expect("the menu is shown");
    let before = String::from_utf8_lossy(before.before()).into_owned();
    let program: i32 = before
        .split_whitespace()
        .find_map(|w| w.strip_prefix("program="))
        .and_then(|p| p.parse().ok())
        .expect("the program's pid");
    let killed = Command::new("kill")
        .args(["-KILL", &program.to_string()])
        .status_within(DEADLINE)
        .unwrap();
    assert!(killed.success());
    let after = s.expect("END").expect("the shell goes on");
    let after = String::from_utf8_lossy(after.before()).into_owned();
    // A word, not a line: the left-behind child's own error message (its
    // write was refused) may come out on the same line.
    let mode = |text: &str| {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix("mode="))
            .map(str::to_string)
    };
    assert!(after.contains("stays unanswered"), "{after}");
    assert!(after.contains("status=137"), "{after}");
    assert!(mode(&before).is_some(), "{before}");
    assert_eq!(
        mode(&before),
        mode(&after),
        "the terminal is left raw: {after}"
    );
    assert!(!e.out.join("late.txt").exists());
}

#[test]
fn a_metadata_change_outside_is_asked_about_and_applied_in_place() {
    use std::os::unix::fs::PermissionsExt;
    if !supported() {
        return;
    }
    let e = env();
    let target = e.path("mode.txt");
    fs::write(&target, "x").unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o644)).unwrap();
    let mut s = e.spawn(
        "chmod 600 \"$OUT/mode.txt\" && echo CHMOD1; chmod 666 \"$OUT/mode.txt\" || echo FAILED2",
    );
    answer(&mut s, &target, "chmod", "1");
    answer(&mut s, &target, "chmod", "3");
    let (text, code) = finish(s);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("FAILED2"), "{text}");
    // The allowed change landed (the question was answered in place), the
    // rejected one did not.
    let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

/// What a terminal and a person send while a question opens: replies to a
/// full-screen program's queries, focus events, a bracketed paste with digits,
/// and a sentence with digits typed in one go.
const NOISE: [&str; 7] = [
    "\x1b[12;40R",
    "\x1b[?64;1;2;6;22c",
    "\x1b[I",
    "\x1b[200~1\r2 yes\x1b[201~",
    "\x1b[O",
    "\x1b]11;rgb:0000/0000/0000\x07",
    "tell me 1 thing, 2 words",
];

#[test]
fn terminal_replies_and_typed_ahead_text_never_answer_a_deliberate_key_does() {
    if !supported() {
        return;
    }
    let e = env();
    let target = e.path("noise.txt");
    let mut s = e.spawn("echo READY; sleep 1; echo x > \"$OUT/noise.txt\"; echo rc=$?");
    s.expect("READY").unwrap();
    // Typed ahead, before the question exists.
    s.send("1").unwrap();
    s.send("\x1b[5;1R").unwrap();
    s.expect(format!("   {target}\r"))
        .expect("the question is shown");
    s.expect(MENU).expect("the menu is shown");
    // While it opens: every kind of noise, and a typed sentence.
    for noise in NOISE {
        s.send(noise).unwrap();
    }
    std::thread::sleep(Duration::from_millis(500));
    for noise in NOISE.iter().rev() {
        s.send(noise).unwrap();
    }
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!Path::new(&target).exists(), "answered by noise");
    // The question is still up and counting.
    s.expect("unless answered")
        .expect("the question still waits");
    press(&mut s, "1");
    let (text, code) = finish(s);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("rc=0"), "{text}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "x\n");
}

#[test]
fn a_burst_with_a_digit_after_the_arming_delay_does_not_answer_either() {
    if !supported() {
        return;
    }
    let e = env();
    let target = e.path("burst.txt");
    let mut s = e.spawn("echo x > \"$OUT/burst.txt\"; echo rc=$?");
    s.expect(MENU).expect("the menu is shown");
    std::thread::sleep(Duration::from_millis(1200));
    // Two keys at once, then one key right after a reply.
    s.send("13").unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    s.send("\x1b[12;40R").unwrap();
    s.send("1").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!Path::new(&target).exists(), "answered by a burst");
    // "Always" is not given by one key: asked to confirm, and another key goes back.
    press(&mut s, "2");
    s.expect("again to confirm").unwrap();
    press(&mut s, "x");
    std::thread::sleep(Duration::from_millis(800));
    assert!(e.list("allow").is_empty(), "{}", e.settings());
    press(&mut s, "3");
    let (text, _) = finish(s);
    assert!(text.contains("rc=") && !text.contains("rc=0"), "{text}");
    assert!(!Path::new(&target).exists());
    assert!(e.list("allow").is_empty() && e.list("deny").is_empty());
}

/// `cmd` (a `sandgate answer`) started in a terminal of its own, in `e`,
/// once it says that it waits for questions.
fn answer_window(e: &Env, mut cmd: Command) -> Session {
    cmd.current_dir(&e.root)
        .env("HOME", &e.home)
        .env("TERM", "xterm");
    let mut window = Session::spawn(cmd).expect("spawn in a pty");
    window.set_expect_timeout(Some(Duration::from_secs(30)));
    window.get_process_mut().set_window_size(250, 40).unwrap();
    window
        .expect("questions appear here")
        .expect("sandgate answer waits");
    window
}

#[test]
fn sandgate_answer_in_another_terminal_answers_and_leaves_the_program_s_terminal_alone() {
    if !supported() {
        return;
    }
    let e = env();
    let target = e.path("elsewhere.txt");
    let mut answer_cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
    answer_cmd.arg("answer");
    let mut window = answer_window(&e, answer_cmd);
    // The window looks at the new run within a moment, before its question.
    let mut s = e.spawn("sleep 1; echo x > \"$OUT/elsewhere.txt\"; echo rc=$?; sleep 1");
    window
        .expect(format!("   {target}\r"))
        .expect("the question is shown in the other terminal");
    window.expect(MENU).unwrap();
    // Listed too, to a process outside the run.
    let listed = Command::new(env!("CARGO_BIN_EXE_sandgate"))
        .args(["answer", "--list", "--json"])
        .env("HOME", &e.home)
        .output_within(DEADLINE)
        .unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        listed[0]["questions"][0]["subject"],
        target.as_str(),
        "{listed}"
    );
    // Nobody answers in the program's terminal, where nothing is drawn.
    std::thread::sleep(Duration::from_millis(1200));
    s.send("1").unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    assert!(
        !Path::new(&target).exists(),
        "answered in the program's terminal"
    );
    press(&mut window, "1");
    window
        .expect("allow once")
        .expect("the window says what was answered");
    let (text, code) = finish(s);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("rc=0"), "{text}");
    assert!(
        !text.contains(MENU),
        "the question was drawn over the program: {text}"
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "x\n");
    window.send("\x03").unwrap();
    window.expect(Eof).expect("Ctrl-C leaves sandgate answer");
}

/// A shell may start `sandgate answer` with SIGINT ignored (a background
/// job of a script, `nohup`): Ctrl-C still leaves it, whether it waits for
/// a question or is pressed the moment one closes, since it reads the key
/// itself.
#[test]
fn ctrl_c_leaves_sandgate_answer_where_sigint_is_ignored() {
    if !supported() {
        return;
    }
    let e = env();
    let answer = || {
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "trap '' INT; exec \"$0\" answer",
            env!("CARGO_BIN_EXE_sandgate"),
        ]);
        answer_window(&e, cmd)
    };
    // Waiting.
    let mut window = answer();
    window.send("\x03").unwrap();
    window
        .expect(Eof)
        .expect("Ctrl-C leaves the waiting sandgate answer");
    // Pressed right after the answer, with no pause.
    let mut window = answer();
    let target = e.path("pressed.txt");
    let s = e.spawn("sleep 1; echo x > \"$OUT/pressed.txt\"; echo rc=$?; sleep 1");
    window
        .expect(format!("   {target}\r"))
        .expect("the question is shown in the other terminal");
    window.expect(MENU).unwrap();
    press(&mut window, "1");
    // The moment the answer is taken (the program writes), Ctrl-C.
    run_common::wait::until(60, "the answer is taken", || Path::new(&target).exists());
    window.send("\x03").unwrap();
    window
        .expect(Eof)
        .expect("Ctrl-C pressed as the question closed leaves sandgate answer");
    let (text, code) = finish(s);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("rc=0"), "{text}");
}
