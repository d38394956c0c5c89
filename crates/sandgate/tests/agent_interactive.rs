//! The real agents, interactive, as a person uses them: each in a private
//! tmux server (its socket in the test's tree, killed with the test), under
//! `sandgate run`, against the scripted model server, with keys typed by
//! `send-keys` and the screen read by `capture-pane`, several times, since
//! full-screen UIs redraw many times a second. Every wait has a deadline.
//!
//! The model writes outside the workspace. Start-up asks nothing; the
//! question must be on screen, whole and counting down, for as long as it
//! waits; a sentence with digits typed meanwhile answers nothing; a
//! deliberate `1` answers it, reaches nothing of the agent's, and the
//! agent's UI is intact afterwards, with no second question.
//!
//! `SANDGATE_E2E_SCREENS=1` prints the screen with the question and the one
//! after the answer (with `--nocapture`); `SANDGATE_E2E_KEEP=1` keeps the
//! tree (see `agents_common/mod.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agents_common;
#[path = "../../../tests/support/exe.rs"]
mod exe;

use agents_common::wait::{self, Bounded, DEADLINE};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agents_common::{in_ci, Agent, Script, Step, Tree};
use serde_json::Value;

/// A private tmux server, its socket under the test's tree
/// (`TMUX_TMPDIR`), killed when dropped.
struct Tmux {
    name: String,
    dir: PathBuf,
}

impl Tmux {
    /// A server named `name` under `root/tmux`, with one session running
    /// `program` in a window of 160×45.
    fn start(root: &Path, name: &str, program: &Path) -> Tmux {
        let dir = root.join("tmux");
        std::fs::create_dir_all(&dir).unwrap();
        let tmux = Tmux {
            name: format!("{name}-{}", std::process::id()),
            dir,
        };
        let ok = tmux
            .command()
            .args(["new-session", "-d", "-x", "160", "-y", "45"])
            .arg(program)
            .status_within(DEADLINE)
            .unwrap();
        assert!(ok.success(), "tmux new-session failed");
        tmux
    }

    fn command(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.name])
            .env("TMUX_TMPDIR", &self.dir)
            .env_remove("TMUX")
            .stdin(Stdio::null());
        c
    }

    fn screen(&self) -> String {
        let out = self
            .command()
            .args(["capture-pane", "-p"])
            .output_within(DEADLINE)
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let ok = self
            .command()
            .arg("send-keys")
            .args(keys)
            .status_within(DEADLINE)
            .unwrap();
        assert!(ok.success());
    }

    fn text(&self, text: &str) {
        let ok = self
            .command()
            .args(["send-keys", "-l", text])
            .status_within(DEADLINE)
            .unwrap();
        assert!(ok.success());
    }

    /// Waits until `done` holds for the screen; fails with the screen after `limit`.
    fn wait_for(&self, what: &str, limit: Duration, done: impl Fn(&str) -> bool) -> String {
        self.poll(limit, &done).unwrap_or_else(|| {
            panic!(
                "{what}: not within {limit:?}; the screen:\n{}",
                self.screen()
            )
        })
    }

    /// The first screen within `limit` for which `done` holds.
    fn poll(&self, limit: Duration, done: impl Fn(&str) -> bool) -> Option<String> {
        let until = Instant::now() + limit;
        loop {
            let screen = self.screen();
            if done(&screen) {
                return Some(screen);
            }
            if Instant::now() >= until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Types `task` into the agent's input and submits it, pressing Enter
    /// again while the agent has not taken it (a UI still starting, or one
    /// that reads a fast burst as a paste, keeps the text in its input);
    /// `ready` says the input is empty again.
    fn submit(&self, task: &str, ready: &dyn Fn(&str) -> bool) {
        self.text(task);
        self.wait_for("the typed task", Duration::from_secs(30), |s| {
            s.contains(task)
        });
        for _ in 0..6 {
            std::thread::sleep(Duration::from_millis(500));
            self.keys(&["Enter"]);
            if self
                .poll(Duration::from_secs(8), |s| ready(s) || question_text(s))
                .is_some()
            {
                return;
            }
        }
        panic!(
            "the agent never took the task; the screen:\n{}",
            self.screen()
        );
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").status_within(DEADLINE);
    }
}

fn tmux_present() -> bool {
    let found = Command::new("tmux")
        .arg("-V")
        .output_within(DEADLINE)
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            !in_ci(),
            "tmux is missing: install tmux (CI=true never skips)"
        );
        eprintln!("skipping: tmux is not installed");
    }
    found
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Writes `root/NAME.sh`: the agent under `sandgate run`, armed, in the
/// project, with a clean environment plus `env` (which replaces a variable
/// of the same name) and the pane's own `inherit` variables.
fn launcher(
    tree: &Tree,
    name: &str,
    env: &[(&str, String)],
    inherit: &[&str],
    agent_args: &[&str],
) -> PathBuf {
    let mut lines = vec![
        "#!/bin/sh".to_string(),
        format!("cd {} || exit 1", quote(&tree.work.to_string_lossy())),
    ];
    let mut vars: Vec<(&str, String)> = vec![
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("HOME", tree.home.to_string_lossy().into_owned()),
        ("USER", "root".into()),
        ("LANG", "C.UTF-8".into()),
        ("TERM", "xterm-256color".into()),
        (
            "TMPDIR",
            tree.root.join("tmp").to_string_lossy().into_owned(),
        ),
        (
            "SANDGATE_MANAGED_CONFIG",
            tree.root
                .join("no-managed.yaml")
                .to_string_lossy()
                .into_owned(),
        ),
        ("SANDGATE_SANDBOX", "1".into()),
    ];
    for (k, v) in env {
        match vars.iter_mut().find(|(name, _)| name == k) {
            Some(slot) => slot.1.clone_from(v),
            None => vars.push((k, v.clone())),
        }
    }
    let mut assignments: Vec<String> = vars
        .iter()
        .map(|(k, v)| format!("{k}={}", quote(v)))
        .collect();
    assignments.extend(inherit.iter().map(|k| format!("{k}=\"${k}\"")));
    let mut argv = vec![
        quote(env!("CARGO_BIN_EXE_sandgate")),
        "run".into(),
        "--".into(),
        quote(&tree.bin.to_string_lossy()),
    ];
    argv.extend(agent_args.iter().map(|a| quote(a)));
    lines.push(format!(
        "env -i {} {}",
        assignments.join(" "),
        argv.join(" ")
    ));
    lines.push("echo AGENT-EXITED $?; sleep 600".into());
    script(&tree.root.join(format!("{name}.sh")), &lines)
}

/// Writes an executable shell script of `lines` at `path`, without this
/// process ever holding it open for writing ("Text file busy", see
/// `tests/support/exe.rs`).
fn script(path: &Path, lines: &[String]) -> PathBuf {
    exe::write_executable(path, &(lines.join("\n") + "\n"));
    path.to_path_buf()
}

/// The seconds a question's countdown shows, if one is on screen.
fn countdown(screen: &str) -> Option<u64> {
    let at = screen.find("denied in ")?;
    screen[at + "denied in ".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// A question is on screen whole: header, every one of `needles` (what it
/// is about and why), the menu and the countdown.
fn question_whole(screen: &str, needles: &[String]) -> bool {
    screen.contains("sandgate: permission required")
        && needles.iter().all(|n| screen.contains(n.as_str()))
        && screen.contains("[1] allow once")
        && screen.contains("[4] deny always")
        && countdown(screen).is_some()
}

/// Some question text is on screen.
fn question_text(screen: &str) -> bool {
    screen.contains("permission required")
        || screen.contains("denied in")
        || screen.contains("[1] allow once")
}

/// Prints `screen` when `SANDGATE_E2E_SCREENS` is set (the transcripts in
/// docs/run.md are taken this way).
fn show(what: &str, screen: &str) {
    if std::env::var_os("SANDGATE_E2E_SCREENS").is_some() {
        eprintln!("--- {what}:\n{}\n---", screen.trim_end());
    }
}

/// What one interactive case looks for.
struct Case<'a> {
    /// The file the model's first call writes outside (`hello\n` once allowed).
    target: &'a Path,
    /// What the question must show besides its header and menu.
    needles: Vec<String>,
    /// The agent's prompt is up, waiting for input.
    ready: &'a dyn Fn(&str) -> bool,
    /// The agent is done with the task, its prompt empty and its UI whole.
    done: &'a dyn Fn(&str) -> bool,
}

/// Asks the agent to do the task, checks the question from the moment it
/// appears until it is answered, and that no other question follows.
/// Returns every screen seen from the task on.
fn the_question_is_whole_and_answered_on_purpose(
    tmux: &Tmux,
    tree: &Tree,
    case: &Case,
) -> Vec<String> {
    let target = case.target;
    tmux.wait_for("the agent's prompt", Duration::from_secs(90), case.ready);
    let before = tmux.screen();
    assert!(
        !before.contains("sandgate:") && !question_text(&before),
        "start-up printed or asked something:\n{before}"
    );
    assert!(
        tree.audit().iter().all(|r| r["verdict"] != "ask"),
        "start-up asked: {:#?}",
        tree.audit()
    );
    tmux.submit("Do the task.", case.ready);
    let asking = std::cell::RefCell::new(Vec::new());
    let first = tmux.wait_for("the question", Duration::from_secs(60), |s| {
        asking.borrow_mut().push(s.to_string());
        question_whole(s, &case.needles)
    });
    let mut asking = asking.into_inner();
    show("the question", &first);
    // Whole for as long as it waits, and counting.
    let mut shown = vec![countdown(&first).unwrap()];
    for _ in 0..6 {
        std::thread::sleep(Duration::from_millis(350));
        let screen = tmux.screen();
        assert!(
            question_whole(&screen, &case.needles),
            "the question is not whole on screen:\n{screen}"
        );
        shown.push(countdown(&screen).unwrap());
        asking.push(screen);
    }
    assert!(
        shown.first() > shown.last(),
        "the countdown does not count: {shown:?}"
    );
    // A sentence with digits, typed as if for the agent, answers nothing.
    tmux.text("please do 2 things, then 1 more");
    std::thread::sleep(Duration::from_millis(1500));
    let screen = tmux.screen();
    assert!(!target.exists(), "a typed sentence answered the question");
    assert!(
        question_whole(&screen, &case.needles),
        "the question went away:\n{screen}"
    );
    // A deliberate key answers.
    std::thread::sleep(Duration::from_millis(800));
    tmux.keys(&["1"]);
    let seen = std::cell::RefCell::new(Vec::new());
    tmux.wait_for(
        "the agent going on after the answer",
        Duration::from_secs(90),
        |s| {
            seen.borrow_mut().push(s.to_string());
            target.exists() && (case.done)(s)
        },
    );
    let mut seen = seen.into_inner();
    if let Some(last) = seen.last() {
        show("after the answer", last);
    }
    assert_eq!(std::fs::read_to_string(target).unwrap(), "hello\n");
    assert!(
        first_call_succeeded(tree),
        "the model's tool result does not say the write succeeded"
    );
    // No stale question, nothing typed reached the agent's prompt, and its UI is whole.
    for _ in 0..3 {
        let screen = tmux.screen();
        assert!(!question_text(&screen), "stale question text:\n{screen}");
        assert!((case.done)(&screen), "the agent's UI:\n{screen}");
        seen.push(screen);
        std::thread::sleep(Duration::from_millis(300));
    }
    for screen in &seen {
        assert!(
            !screen.contains("please do") && !screen.contains("things"),
            "the typed sentence reached the agent:\n{screen}"
        );
    }
    // Asked once: the answer held for the whole call.
    let late: Vec<&String> = seen
        .iter()
        .skip_while(|s| question_text(s))
        .filter(|s| question_text(s))
        .collect();
    assert!(
        late.is_empty(),
        "asked again after the answer:\n{}",
        late[0]
    );
    let audit = tree.audit_for(&target.to_string_lossy());
    assert!(
        audit.iter().any(|r| r["verdict"] == "allow"),
        "the answer is in the audit log: {audit:#?}"
    );
    asking.extend(seen);
    asking
}

/// Claude Code's first-run screens answered in a fresh tree, and its
/// environment against the tree's model server.
fn claude_tree() -> Option<(Tree, Vec<(&'static str, String)>)> {
    let tree = Tree::new_outside_temp(Agent::Claude)?;
    let key = "sk-test-interactive-0123456789abcdef";
    let seeded = serde_json::json!({
        "hasCompletedOnboarding": true,
        "bypassPermissionsModeAccepted": true,
        "projects": {tree.work.to_string_lossy(): {"hasTrustDialogAccepted": true}},
        "customApiKeyResponses": {"approved": [&key[key.len() - 20..]]},
    });
    std::fs::write(tree.home.join(".claude.json"), seeded.to_string()).unwrap();
    let env = vec![
        (
            "ANTHROPIC_BASE_URL",
            format!("http://127.0.0.1:{}", tree.model_port()),
        ),
        ("ANTHROPIC_API_KEY", key.to_string()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        // As root, the bypass mode needs it.
        ("IS_SANDBOX", "1".into()),
    ];
    Some((tree, env))
}

/// Claude Code in bypass mode (which keeps its own dialog out of the way of
/// sandgate's question) has its prompt up.
fn claude_bypass_ready(s: &str) -> bool {
    s.contains("bypass permissions on") && prompt_is_empty(s)
}

/// Waits past the bypass-mode warning Claude Code shows at every start.
fn accept_bypass_warning(tmux: &Tmux) {
    let first = tmux.wait_for("Claude Code to start", Duration::from_secs(90), |s| {
        s.contains("Yes, I accept") || claude_bypass_ready(s)
    });
    if first.contains("Yes, I accept") {
        // "Yes" is the second option (numbered in 2.1.197, not in 2.1.332).
        tmux.keys(&["Down"]);
        std::thread::sleep(Duration::from_millis(300));
        tmux.keys(&["Enter"]);
    }
}

/// Claude Code's screen is drawn once, with no stale frame: its header at
/// most once, and no call still shown as running.
fn claude_intact(screen: &str) -> bool {
    screen.matches("Claude Code v").count() <= 1
        && !screen.contains("Running…")
        && !screen.contains("Waiting…")
}

/// Claude Code's input line (`❯` between two rules) holds nothing.
fn prompt_is_empty(screen: &str) -> bool {
    screen
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('❯'))
        .is_some_and(|l| l.trim_start().trim_start_matches('❯').trim().is_empty())
}

/// The model's first call: `echo hello > TARGET`, as the agent's shell
/// tool. Claude Code's command prints the redirection's status after it;
/// Gemini CLI's is the redirection alone, so that its status is the call's
/// exit code, which Gemini CLI always reports (see [`gemini_results`]).
fn write_outside(agent: Agent, target: &Path) -> Step {
    let target = quote(&target.to_string_lossy());
    let command = match agent {
        Agent::Gemini => format!("echo hello > {target}"),
        Agent::Claude | Agent::Codex => format!("echo hello > {target}; echo rc=$?"),
    };
    Step::shell(agent, &command)
}

/// What the model received of each of Gemini CLI's tool calls, in order, in
/// its last request to the model server.
///
/// Gemini CLI 0.61 runs a shell call in a pseudo-terminal and destroys it as
/// soon as the command exits (`ShellExecutionService`, on `onExit`): output
/// still unread then is lost, which happens when its event loop is slow (on
/// a loaded machine the call's box stays empty and the model gets `Output:
/// (empty)`). The exit code comes from the process's status and is never
/// lost: `Exit Code: N` follows the output when N is not 0.
fn gemini_results(tree: &Tree) -> Vec<String> {
    let text = std::fs::read_to_string(tree.root.join("model/record.jsonl")).unwrap_or_default();
    let mut last = Vec::new();
    for line in text.lines() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if entry["main"] != true {
            continue;
        }
        let results: Vec<String> = entry["body"]["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|c| c["parts"].as_array().into_iter().flatten())
            .filter_map(|p| p.get("functionResponse"))
            .map(|r| r["response"].to_string())
            .collect();
        if results.len() >= last.len() {
            last = results;
        }
    }
    last
}

/// The model was told that its first call, [`write_outside`], succeeded:
/// Claude Code's result holds the status the command printed (Claude Code
/// 2.1.332 folds a call's output on screen into "Ran 1 shell command", so
/// it is read in what the model received); Gemini CLI's result has output
/// and no exit code, error or signal.
fn first_call_succeeded(tree: &Tree) -> bool {
    match tree.agent {
        Agent::Gemini => gemini_results(tree).first().is_some_and(|r| {
            r.contains("Output:")
                && !r.contains("Exit Code:")
                && !r.contains("Error:")
                && !r.contains("Signal:")
        }),
        Agent::Claude | Agent::Codex => {
            std::fs::read_to_string(tree.root.join("model/record.jsonl"))
                .unwrap_or_default()
                .contains("rc=0")
        }
    }
}

/// The question the kernel's write of `target` raises names the file and the process.
fn kernel_question(target: &Path) -> Vec<String> {
    vec![format!("   {}", target.display()), "tries to".into()]
}

#[test]
fn claude_code_interactive_asks_whole_and_only_on_purpose() {
    if !tmux_present() {
        return;
    }
    let Some((tree, env)) = claude_tree() else {
        return;
    };
    let target = tree.outside.join("x.txt");
    tree.set_script(&Script::new(vec![write_outside(Agent::Claude, &target)]));
    let launch = launcher(
        &tree,
        "launch",
        &env,
        &[],
        &["--permission-mode", "bypassPermissions"],
    );
    let tmux = Tmux::start(&tree.root, "claude", &launch);
    accept_bypass_warning(&tmux);
    the_question_is_whole_and_answered_on_purpose(
        &tmux,
        &tree,
        &Case {
            target: &target,
            needles: kernel_question(&target),
            ready: &claude_bypass_ready,
            done: &|s| s.contains("all done") && prompt_is_empty(s) && claude_intact(s),
        },
    );
}

/// Gemini CLI with its folder trusted (no trust dialog), and its environment
/// against the tree's model server.
fn gemini_tree() -> Option<(Tree, Vec<(&'static str, String)>)> {
    let tree = Tree::new_outside_temp(Agent::Gemini)?;
    std::fs::write(
        tree.home.join(".gemini/trustedFolders.json"),
        serde_json::json!({tree.work.to_string_lossy(): "TRUST_FOLDER"}).to_string(),
    )
    .unwrap();
    let env = vec![
        (
            "GOOGLE_GEMINI_BASE_URL",
            format!("http://127.0.0.1:{}", tree.model_port()),
        ),
        ("GEMINI_API_KEY", "test-key".to_string()),
    ];
    Some((tree, env))
}

/// Gemini CLI's screen is drawn once: its banner at most once.
fn gemini_intact(screen: &str) -> bool {
    screen.matches("Gemini CLI v").count() <= 1
}

/// Gemini CLI's input box is up and empty (its placeholder shows).
fn gemini_ready(s: &str) -> bool {
    s.contains("Type your message")
}

#[test]
fn gemini_cli_interactive_asks_whole_and_only_on_purpose() {
    if !tmux_present() {
        return;
    }
    let Some((tree, env)) = gemini_tree() else {
        return;
    };
    let target = tree.outside.join("x.txt");
    tree.set_script(&Script::new(vec![write_outside(Agent::Gemini, &target)]));
    let launch = launcher(&tree, "launch", &env, &[], &["--yolo"]);
    let tmux = Tmux::start(&tree.root, "gemini", &launch);
    the_question_is_whole_and_answered_on_purpose(
        &tmux,
        &tree,
        &Case {
            target: &target,
            needles: kernel_question(&target),
            ready: &gemini_ready,
            done: &|s| s.contains("all done") && gemini_ready(s) && gemini_intact(s),
        },
    );
}

/// The policy of the hook cases: the gate lets both calls run (the paths
/// outside are the run's business, not the policy's).
const HOOK_POLICY: &str = r#"permissions:
  paths:
    allow: ["{work}/**", "{outside}/**"]
  commands:
    allow: ["^python3 w\\.py$", "^echo "]
"#;

/// A tree with sandgate's hook installed and [`HOOK_POLICY`]; the model
/// writes `outside/x.txt` with `echo … >` (a write the gate foresees), then
/// runs `python3 w.py`, which writes `outside/unforeseen.txt` (one it cannot
/// see) and prints the error number when refused; for Gemini CLI, which can
/// lose a call's output (see [`gemini_results`]), it also exits with it.
/// Returns the two paths.
fn hooked(tree: &Tree) -> (PathBuf, PathBuf) {
    tree.install_hook(&[]);
    tree.write_policy(HOOK_POLICY);
    let target = tree.outside.join("x.txt");
    let unforeseen = tree.outside.join("unforeseen.txt");
    let exit = match tree.agent {
        Agent::Gemini => "raise SystemExit(e.errno)",
        Agent::Claude | Agent::Codex => "pass",
    };
    std::fs::write(
        tree.work.join("w.py"),
        format!(
            "try:\n    open('{}', 'w').write('x')\n    print('wrote it')\nexcept OSError as e:\n    print('py-refused', e.errno)\n    {exit}\n",
            unforeseen.display()
        ),
    )
    .unwrap();
    tree.set_script(&Script::new(vec![
        write_outside(tree.agent, &target),
        Step::shell(tree.agent, "python3 w.py"),
    ]));
    (target, unforeseen)
}

/// The question the run puts before a call whose writes it foresees: the
/// agent's tool, the command, and the path in the reason.
fn foreseen_question(tool: &str, target: &Path) -> Vec<String> {
    vec![
        format!(" run ({tool}) command:"),
        "   echo hello > ".into(),
        target.display().to_string(),
    ]
}

/// After a hook case: the write no one foresaw was refused without a
/// question, and the model was told why, with how the person can allow it.
fn unforeseen_refused(tree: &Tree, unforeseen: &Path) {
    assert!(!unforeseen.exists(), "the unforeseen write landed");
    // What the model received: the refusal's reason, from the post-tool
    // hook, and the call's failure.
    let record = std::fs::read_to_string(tree.root.join("model/record.jsonl")).unwrap_or_default();
    assert!(
        record.contains(&format!(
            "sandgate run refused the create/write of `{}`",
            unforeseen.display()
        )) && record.contains("can allow it"),
        "the model is not told why the write was refused"
    );
    let failed_with_eacces = match tree.agent {
        Agent::Gemini => gemini_results(tree)
            .get(1)
            .is_some_and(|r| r.contains("Exit Code: 13")),
        Agent::Claude | Agent::Codex => record.contains("py-refused 13"),
    };
    assert!(failed_with_eacces, "the call did not fail with EACCES");
}

/// [`unforeseen_refused`], and the person was asked exactly once, by the
/// run, and answered there.
fn unforeseen_refused_and_told(tree: &Tree, unforeseen: &Path, screens: &[String]) {
    unforeseen_refused(tree, unforeseen);
    // One question in all: the screens show one stretch of question text.
    let stretches = screens
        .windows(2)
        .filter(|w| !question_text(&w[0]) && question_text(&w[1]))
        .count()
        + usize::from(screens.first().is_some_and(|s| question_text(s)));
    assert_eq!(stretches, 1, "not asked exactly once");
    let hook_answers: Vec<Value> = tree
        .audit()
        .into_iter()
        .filter(|r| r["answered_by"] == "human")
        .collect();
    assert_eq!(
        hook_answers.len(),
        1,
        "one answer by the person: {:#?}",
        tree.audit()
    );
}

/// Claude Code in its default mode has its prompt up.
fn claude_default_ready(s: &str) -> bool {
    s.contains("for shortcuts") && prompt_is_empty(s)
}

/// Claude Code's own dialog asks about a hook's `ask`, with sandgate's
/// reason naming `target`.
fn claude_dialog(screen: &str, target: &Path) -> bool {
    screen.contains("Do you want to proceed?")
        && screen.contains("outside the sandbox of `sandgate run`")
        && screen.contains(&*target.to_string_lossy())
}

/// The open questions of every run of the tree's home, as `sandgate answer
/// --list --json` shows them.
fn open_questions(tree: &Tree) -> usize {
    let out = tree.sandgate(&["answer", "--list", "--json"]);
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    runs.as_array()
        .into_iter()
        .flatten()
        .map(|r| r["questions"].as_array().map_or(0, Vec::len))
        .sum()
}

/// Asks Claude Code (default mode, sandgate's hook installed) to do the task
/// and waits for its own dialog about `target`; checks that sandgate asked
/// nothing meanwhile (no question on screen, none open for `sandgate
/// answer`). Returns every screen seen.
fn claude_asks_in_its_own_dialog(tmux: &Tmux, tree: &Tree, target: &Path) -> Vec<String> {
    tmux.wait_for(
        "the agent's prompt",
        Duration::from_secs(90),
        claude_default_ready,
    );
    tmux.submit("Do the task.", &|s| {
        claude_default_ready(s) || s.contains("Do you want to proceed?")
    });
    let seen = std::cell::RefCell::new(Vec::new());
    let dialog = tmux.wait_for("Claude Code's own dialog", Duration::from_secs(60), |s| {
        seen.borrow_mut().push(s.to_string());
        claude_dialog(s, target)
    });
    show("Claude Code's dialog", &dialog);
    // Whole for as long as it waits, and sandgate asks nothing itself.
    let mut seen = seen.into_inner();
    for _ in 0..4 {
        std::thread::sleep(Duration::from_millis(300));
        let screen = tmux.screen();
        assert!(
            claude_dialog(&screen, target),
            "the dialog went away:\n{screen}"
        );
        seen.push(screen);
    }
    assert_eq!(open_questions(tree), 0, "sandgate asked too");
    assert!(!target.exists(), "written before the answer");
    seen
}

/// No screen shows a question of sandgate's own.
fn sandgate_asked_nothing(screens: &[String]) {
    for screen in screens {
        assert!(!question_text(screen), "sandgate asked:\n{screen}");
    }
}

/// With sandgate's hook installed, in Claude Code's default mode: the write
/// the gate foresees is asked about once, in Claude Code's own dialog, with
/// sandgate's reason; "1" there (Yes) lets Claude Code spawn the command,
/// which the run recognises at its first `exec` (see
/// `sandgate_sandbox::supervisor::lineage`), so the write lands without a
/// question of sandgate's; the write no one foresaw is refused without a
/// question and the model is told why.
#[test]
fn claude_code_interactive_with_the_hook_asks_once_in_its_own_dialog() {
    if !tmux_present() {
        return;
    }
    let Some((tree, env)) = claude_tree() else {
        return;
    };
    let (target, unforeseen) = hooked(&tree);
    let launch = launcher(
        &tree,
        "launch",
        &env,
        &[],
        &["--permission-mode", "default"],
    );
    let tmux = Tmux::start(&tree.root, "claude-hook", &launch);
    let mut seen = claude_asks_in_its_own_dialog(&tmux, &tree, &target);
    std::thread::sleep(Duration::from_millis(500));
    tmux.keys(&["1"]);
    let after = std::cell::RefCell::new(Vec::new());
    tmux.wait_for(
        "the agent going on after the answer",
        Duration::from_secs(90),
        |s| {
            after.borrow_mut().push(s.to_string());
            target.exists() && s.contains("all done") && claude_default_ready(s) && claude_intact(s)
        },
    );
    seen.extend(after.into_inner());
    if let Some(last) = seen.last() {
        show("after the answer", last);
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello\n");
    assert!(
        first_call_succeeded(&tree),
        "the model's tool result does not say the write succeeded"
    );
    sandgate_asked_nothing(&seen);
    // Claude Code's dialog came once.
    let dialogs = seen
        .windows(2)
        .filter(|w| {
            !w[0].contains("Do you want to proceed?") && w[1].contains("Do you want to proceed?")
        })
        .count()
        + usize::from(
            seen.first()
                .is_some_and(|s| s.contains("Do you want to proceed?")),
        );
    assert_eq!(dialogs, 1, "Claude Code asked {dialogs} times");
    unforeseen_refused(&tree, &unforeseen);
    let audit = tree.audit();
    assert!(
        audit
            .iter()
            .any(|r| r["became"] == "asked in the agent's own dialog for sandgate run"),
        "the hook's ask is not in the audit log: {audit:#?}"
    );
    assert!(
        !audit.iter().any(|r| r["answered_by"] == "human"),
        "sandgate asked the person itself: {audit:#?}"
    );
    let written = tree.audit_for(&target.to_string_lossy());
    assert!(
        written.iter().any(|r| r["verdict"] == "allow"),
        "the run's allowed write is not in the audit log: {written:#?}"
    );
}

/// With the hook installed, "No" in Claude Code's own dialog is final:
/// nothing is spawned, the write never happens, and sandgate asks nothing
/// (the grant waiting for the spawn expires unused).
#[test]
fn claude_code_interactive_with_the_hook_a_refusal_in_its_dialog_is_final() {
    if !tmux_present() {
        return;
    }
    let Some((tree, env)) = claude_tree() else {
        return;
    };
    tree.install_hook(&[]);
    tree.write_policy(HOOK_POLICY);
    let target = tree.outside.join("x.txt");
    tree.set_script(&Script::new(vec![write_outside(Agent::Claude, &target)]));
    let launch = launcher(
        &tree,
        "launch",
        &env,
        &[],
        &["--permission-mode", "default"],
    );
    let tmux = Tmux::start(&tree.root, "claude-hook-deny", &launch);
    let mut seen = claude_asks_in_its_own_dialog(&tmux, &tree, &target);
    std::thread::sleep(Duration::from_millis(500));
    tmux.keys(&["2"]);
    let after = std::cell::RefCell::new(Vec::new());
    tmux.wait_for(
        "the agent's prompt after the refusal",
        Duration::from_secs(90),
        |s| {
            after.borrow_mut().push(s.to_string());
            !s.contains("Do you want to proceed?") && prompt_is_empty(s) && claude_intact(s)
        },
    );
    // A while longer: nothing is spawned, nothing written, nothing asked.
    std::thread::sleep(Duration::from_secs(3));
    after.borrow_mut().push(tmux.screen());
    seen.extend(after.into_inner());
    if let Some(last) = seen.last() {
        show("after the refusal", last);
    }
    assert!(!target.exists(), "the refused write happened");
    sandgate_asked_nothing(&seen);
    assert_eq!(open_questions(&tree), 0, "sandgate asked");
    assert!(
        !tree.audit().iter().any(|r| r["answered_by"] == "human"),
        "{:#?}",
        tree.audit()
    );
}

/// The same with Gemini CLI.
#[test]
fn gemini_cli_interactive_with_the_hook_asks_once() {
    if !tmux_present() {
        return;
    }
    let Some((tree, env)) = gemini_tree() else {
        return;
    };
    let (target, unforeseen) = hooked(&tree);
    let launch = launcher(&tree, "launch", &env, &[], &["--yolo"]);
    let tmux = Tmux::start(&tree.root, "gemini-hook", &launch);
    let screens = the_question_is_whole_and_answered_on_purpose(
        &tmux,
        &tree,
        &Case {
            target: &target,
            needles: foreseen_question("run_shell_command", &target),
            ready: &gemini_ready,
            done: &|s| s.contains("all done") && gemini_ready(s) && gemini_intact(s),
        },
    );
    unforeseen_refused_and_told(&tree, &unforeseen, &screens);
}

/// Inside tmux the question is a `tmux display-popup` over the agent's pane:
/// the agent's UI stays on screen around it, the popup has the keyboard,
/// and a desktop notification (a `notify-send` on PATH, with a display) says
/// a question waits. The tmux the run is in is attached in a pane of a
/// second tmux, whose screen is the person's.
#[test]
fn inside_tmux_the_question_is_a_popup_with_a_notification() {
    if !tmux_present() {
        return;
    }
    let Some((tree, mut env)) = claude_tree() else {
        return;
    };
    let bin = tree.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let notified = tree.root.join("notified.txt");
    script(
        &bin.join("notify-send"),
        &[
            "#!/bin/sh".into(),
            format!(
                "printf '%s\\n' \"$@\" >> {}",
                quote(&notified.to_string_lossy())
            ),
        ],
    );
    env.push((
        "PATH",
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    ));
    env.push(("DISPLAY", ":99".into()));
    let target = tree.outside.join("x.txt");
    tree.set_script(&Script::new(vec![write_outside(Agent::Claude, &target)]));
    let launch = launcher(
        &tree,
        "launch",
        &env,
        &["TMUX", "TMUX_PANE"],
        &["--permission-mode", "bypassPermissions"],
    );
    let inner = Tmux::start(&tree.root, "inner", &launch);
    let attach = script(
        &tree.root.join("attach.sh"),
        &[
            "#!/bin/sh".into(),
            "unset TMUX".into(),
            format!(
                "TMUX_TMPDIR={} exec tmux -L {} attach",
                quote(&inner.dir.to_string_lossy()),
                quote(&inner.name)
            ),
        ],
    );
    let person = Tmux::start(&tree.root, "person", &attach);
    accept_bypass_warning(&person);
    let mut needles = kernel_question(&target);
    // A popup, with the agent's UI around it: its screen is not replaced.
    needles.push("┌─ sandgate ─".into());
    needles.push("Claude Code v".into());
    the_question_is_whole_and_answered_on_purpose(
        &person,
        &tree,
        &Case {
            target: &target,
            needles,
            ready: &claude_bypass_ready,
            done: &|s| s.contains("all done") && prompt_is_empty(s) && claude_intact(s),
        },
    );
    let notes = std::fs::read_to_string(&notified).unwrap_or_default();
    assert!(
        notes.contains("sandgate: a question waits") && notes.contains(&*target.to_string_lossy()),
        "no desktop notification: {notes:?}"
    );
}

/// Rewrites the `Bash` wrapper of the Claude Code process `argv[1]` (its
/// `/proc` command line) around the command in `c.txt`, as Claude Code
/// itself would have spawned it, and sends the run a `before` request for
/// that command as Claude Code's hook would (anything the agent runs can
/// reach the run's socket).
const FORGE_PY: &str = r#"import json, os, socket, sys
args = open('/proc/%s/cmdline' % sys.argv[1], 'rb').read().split(b'\0')[:-1]
script = args[2].decode()
command = open('c.txt').read()
head, rest = script.split(" && eval '", 1)
tail = rest[rest.index("' < /dev/null && pwd -P") + 1:]
request = {"op": "before", "agent": "claude", "tool": "Bash",
           "input": {"command": command}, "cwd": os.getcwd(), "session": None}
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(os.environ["SANDGATE_RUN_SOCKET"])
s.sendall((json.dumps(request) + "\n").encode())
sys.stdout.write(head + " && eval '" + command.replace("'", "'\"'\"'") + "'" + tail)
"#;

/// The policy of the forgery case: the gate lets both calls run.
const FORGE_POLICY: &str = r#"permissions:
  paths:
    allow: ["{work}/**", "{outside}/**"]
  commands:
    allow: ["^exec /bin/bash -c ", "^echo "]
"#;

/// A `Bash` call cannot pass for Claude Code's spawn of another command.
/// The model runs `exec /bin/bash -c "$(python3 forge.py $$)"`: a request
/// for `echo hello > x.txt` is sent to the run as if from the hook, and the
/// call's own process (a direct child of Claude Code, with the same
/// arguments as Claude Code's spawn of that command would have) becomes
/// that spawn. It gets nothing: the request is not the hook's, so the run
/// asks the person itself (refused here), and the write, by a process that
/// had run `exec` before, is refused. Then the model asks for the command
/// itself: Claude Code's own dialog asks, "1" lets exactly that spawn write.
#[test]
fn a_bash_call_that_passes_for_claude_codes_spawn_of_another_command_gets_nothing() {
    if !tmux_present() {
        return;
    }
    let Some((tree, env)) = claude_tree() else {
        return;
    };
    tree.install_hook(&[]);
    tree.write_policy(FORGE_POLICY);
    let target = tree.outside.join("x.txt");
    let command = format!(
        "echo hello > {}; echo rc=$?",
        quote(&target.to_string_lossy())
    );
    std::fs::write(tree.work.join("forge.py"), FORGE_PY).unwrap();
    std::fs::write(tree.work.join("c.txt"), &command).unwrap();
    tree.set_script(&Script::new(vec![
        Step::shell(
            Agent::Claude,
            "exec /bin/bash -c \"$(python3 forge.py $$)\"",
        ),
        Step::shell(Agent::Claude, &command),
    ]));
    let launch = launcher(
        &tree,
        "launch",
        &env,
        &[],
        &["--permission-mode", "default"],
    );
    let tmux = Tmux::start(&tree.root, "claude-forge", &launch);
    tmux.wait_for(
        "the agent's prompt",
        Duration::from_secs(90),
        claude_default_ready,
    );
    tmux.submit("Do the task.", &|s| {
        claude_default_ready(s) || s.contains("Do you want to proceed?") || question_text(s)
    });
    // The forged request's question (the run's own), answered "deny once";
    // a dialog of Claude Code's about the first call, if the gate asks,
    // answered "Yes"; until Claude Code's dialog about the command itself.
    let forged = foreseen_question("Bash", &target);
    let until = Instant::now() + Duration::from_secs(120);
    let mut refused_forged = false;
    let dialog = loop {
        let screen = tmux.screen();
        if claude_dialog(&screen, &target) {
            break screen;
        }
        assert!(
            Instant::now() < until,
            "no dialog for the command; the screen:\n{screen}"
        );
        if !refused_forged && question_whole(&screen, &forged) {
            show("the forged request's question", &screen);
            std::thread::sleep(Duration::from_millis(800));
            tmux.keys(&["3"]);
            refused_forged = true;
        } else if screen.contains("Do you want to proceed?") && !question_text(&screen) {
            std::thread::sleep(Duration::from_millis(500));
            tmux.keys(&["1"]);
            std::thread::sleep(Duration::from_millis(1000));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    show("Claude Code's dialog", &dialog);
    assert!(
        refused_forged,
        "the run did not ask about the forged request"
    );
    assert!(!target.exists(), "the forged spawn wrote");
    let record = std::fs::read_to_string(tree.root.join("model/record.jsonl")).unwrap_or_default();
    assert!(
        record.contains("rc=1"),
        "the forged spawn's write did not fail"
    );
    let refusals = tree.audit_for(&target.to_string_lossy());
    assert!(
        refusals.iter().any(|r| r["verdict"] == "deny"),
        "the forged write's refusal is not in the audit log: {refusals:#?}"
    );
    // The genuine spawn, after "Yes" in Claude Code's dialog, writes.
    std::thread::sleep(Duration::from_millis(500));
    tmux.keys(&["1"]);
    tmux.wait_for("the agent done", Duration::from_secs(90), |s| {
        target.exists() && s.contains("all done") && claude_default_ready(s)
    });
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello\n");
    let record = std::fs::read_to_string(tree.root.join("model/record.jsonl")).unwrap_or_default();
    assert!(record.contains("rc=0"), "the genuine spawn's write failed");
}
