//! The presets' promise, checked by running what they allow.
//!
//! `sandgate init --preset readonly|rust|node|python` promises that an
//! allowed command only reads: it writes nothing (beyond the build and cache
//! directories its own build tools keep), runs no program the preset would
//! not allow on its own, and neither opens nor lists the floor or a
//! credential store. For each preset this test generates commands from the
//! preset's programs × their real options (read from their `--help` on this
//! machine) × the shell spellings that have hidden paths and options from
//! the gate before (see `preset_oracle/generate.rs`), puts each to the gate
//! in-process, and runs every allowed one under `strace -f`, in a fresh copy
//! of a throwaway tree with fake floor files, with no network but its own
//! loopback, stdin from /dev/null and a deadline. A sample goes through
//! `sandgate hook claude` too, which must answer as the library does.
//!
//! Each breach is printed as `preset<TAB>command<TAB>what happened`. The
//! breaches known today are listed in `preset_oracle/known-failures.txt`;
//! the test fails on a breach that is not listed, and on a listed one that
//! no longer happens (so the list only shrinks).
//!
//! `ORACLE_PRESETS=readonly,rust` limits the presets; `ORACLE_REPORT=FILE`
//! writes every breach, grouped by class, to FILE.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "preset_oracle/fixture.rs"]
mod fixture;
#[path = "preset_oracle/generate.rs"]
mod generate;
#[path = "preset_oracle/judge.rs"]
mod judge;
#[path = "preset_oracle/options.rs"]
mod options;
#[path = "preset_oracle/trace.rs"]
mod trace;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use wait::{Bounded, DEADLINE};

use sandgate_policy::load::{parse_policy, LoadedFile};
use sandgate_policy::{Context, Policy, Sources, Tier, ToolCall, Verdict};

use fixture::{Template, Tree};
use generate::Case;
use judge::{Breach, Judge};

const PRESETS: [&str; 4] = ["readonly", "rust", "node", "python"];

/// Runs of one heavy ecosystem program (cargo, npm, pytest, …) at most, in
/// the generated order (the issue's own forms come first).
const HEAVY_BUDGET: usize = 8;

use ci::under_ci as ci;

/// The preset's policy text, as `sandgate init --print` writes it.
fn preset_text(preset: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sandgate"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", tmp.path())
        .env("SANDGATE_MANAGED_CONFIG", tmp.path().join("none.yaml"))
        .env("SANDGATE_AUDIT", "off")
        .args(["init", "--preset", preset, "--print"])
        .current_dir(tmp.path())
        .output_within(DEADLINE)
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The preset compiled for a tree whose home is `home` and working
/// directory `cwd`.
pub fn compile(text: &str, home: &Path, cwd: &Path) -> (Policy, Context) {
    let path = home.join(".sandgate/permissions.yaml");
    let file = parse_policy(text, &path).unwrap();
    let loaded = LoadedFile {
        tier: Tier::Central,
        path: path.clone(),
        file,
    };
    let sources = Sources {
        central: Some(path),
        ..Sources::default()
    };
    let ctx = Context::new(cwd, home).unwrap();
    let policy = Policy::from_files(sources, &[loaded], &ctx).unwrap();
    (policy, ctx)
}

/// PATH and the toolchains' variables for the runs: pyenv's shims (which
/// need the real home) give way to the interpreter's own directory, and
/// rustup's proxies keep the real RUSTUP_HOME.
fn run_env() -> trace::RunEnv {
    let path = std::env::var("PATH").unwrap_or_default();
    let python_bin = Command::new("python3")
        .args([
            "-c",
            "import os,sys; print(os.path.dirname(os.path.realpath(sys.executable)))",
        ])
        .output_within(DEADLINE)
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty());
    let dirs: Vec<String> = path
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| match (&python_bin, d.ends_with("/.pyenv/shims")) {
            (Some(bin), true) => bin.clone(),
            _ => d.to_string(),
        })
        .collect();
    let mut vars = Vec::new();
    let real_home = std::env::var("HOME").unwrap_or_default();
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or(format!("{real_home}/.rustup"));
    if Path::new(&rustup_home).is_dir() {
        vars.push(("RUSTUP_HOME".to_string(), rustup_home));
    }
    trace::RunEnv {
        path: dirs.join(":"),
        vars,
    }
}

fn on_path(program: &str, path: &str) -> bool {
    path.split(':')
        .any(|d| Path::new(d).join(program).is_file())
}

/// What the hook answers for `command` in the template.
fn hook_answer(template: &Template, command: &str) -> String {
    let home = template.root.join("home");
    let cwd = home.join(fixture::PROJECT);
    let payload = serde_json::json!({
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "cwd": cwd,
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_sandgate"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("SANDGATE_MANAGED_CONFIG", template.root.join("none.yaml"))
        .env("SANDGATE_CACHE_DIR", template.root.join("cache"))
        .env("SANDGATE_AUDIT", "off")
        .current_dir(&cwd)
        .args(["hook", "claude"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(payload.to_string().as_bytes()).unwrap();
    }
    let out = finish(child, 30, "sandgate hook claude");
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    answer["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("none")
        .to_string()
}

#[path = "../../../tests/support/ci.rs"]
mod ci;
#[path = "../../../tests/support/wait.rs"]
mod wait;
use wait::finish;
#[path = "../../../tests/support/account.rs"]
mod account;

/// The known breaches: `preset<TAB>command` lines; `#` starts a comment.
fn known_failures() -> BTreeSet<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/preset_oracle/known-failures.txt");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (p, c) = l
                .split_once('\t')
                .expect("known-failures.txt: preset<TAB>command");
            (p.to_string(), c.to_string())
        })
        .collect()
}

/// One preset's breaches (and the notes: timeouts, runs that could not be
/// traced, programs skipped).
#[derive(Default)]
struct Outcome {
    breaches: Vec<Breach>,
    notes: Vec<String>,
    /// The commands that were run.
    ran: BTreeSet<String>,
    allowed: usize,
    generated: usize,
    /// Commands whose runs could not be traced, or that the hook answers
    /// otherwise than the library: the test fails on them.
    untraced: Vec<String>,
    /// Commands whose outcome is unknown: not run because their program is
    /// missing here (outside CI), or still running at their deadline.
    undecided: BTreeSet<String>,
}

/// The deadline of one run, in seconds: the readonly preset's programs
/// read a small tree; the others build, test and make environments.
fn timeout_of(preset: &str) -> u64 {
    if preset == "readonly" {
        5
    } else {
        120
    }
}

fn check_preset(preset: &str, env: &trace::RunEnv, known: &BTreeSet<(String, String)>) -> Outcome {
    let mut outcome = Outcome::default();
    let text = preset_text(preset);
    let template = Template::build(&text);
    let home = template.root.join("home");
    let project = home.join(fixture::PROJECT);
    let (policy, ctx) = compile(&text, &home, &project);

    let mut missing = Vec::new();
    for program in generate::needed_programs(preset) {
        if !on_path(program, &env.path) {
            missing.push(program);
        }
    }
    if !missing.is_empty() {
        let message = format!(
            "{preset}: not installed here: {} (`.ci/run` installs them: apt ripgrep, pip pytest \
             mypy ruff black flake8 pylint tox nox uv, npm -g yarn pnpm pyright)",
            missing.join(", ")
        );
        assert!(!ci(), "{message}");
        eprintln!("skipping the commands of {message}");
        outcome.notes.push(message);
    }
    // A command needs every program it names (`VAR=… rg`, `cat x | rg -`).
    let needs_missing = |command: &str| {
        command
            .split(|c: char| !(c.is_ascii_alphanumeric() || "_.-".contains(c)))
            .any(|w| missing.contains(&w))
    };
    let mut cases = generate::cases(preset);
    // The known failures are run whatever the generator makes here.
    for (p, command) in known {
        if p == preset && !cases.iter().any(|c| c.command == *command) {
            let program = command.split(' ').next().unwrap_or("").to_string();
            cases.push(Case {
                command: command.clone(),
                program,
                tags: vec!["known"],
            });
        }
    }
    let (cases, skipped): (Vec<Case>, Vec<Case>) =
        cases.into_iter().partition(|c| !needs_missing(&c.command));
    outcome
        .undecided
        .extend(skipped.into_iter().map(|c| c.command));
    outcome.generated = cases.len();

    eprintln!("{preset}: {} commands generated", outcome.generated);
    // The heavy programs' budget goes first to the forms most likely to
    // write or run something: environment prefixes, then options with a
    // value, then abbreviations, then flags.
    let priority = |c: &Case| -> u8 {
        if c.tags.contains(&"extra") || c.tags.contains(&"known") {
            0
        } else if c.tags.contains(&"env") {
            1
        } else if c.tags.contains(&"value") || c.tags.contains(&"bare") {
            2
        } else if c.tags.contains(&"abbrev") || c.tags.contains(&"optval") {
            3
        } else {
            4
        }
    };
    let mut cases = cases;
    if preset != "readonly" {
        cases.sort_by_key(|c| priority(c));
    }
    let mut heavy_runs: BTreeMap<String, usize> = BTreeMap::new();
    let mut to_run = Vec::new();
    for case in cases {
        let call = ToolCall::new("exec_run", serde_json::json!({ "command": case.command }));
        if policy.evaluate(&call, &ctx).verdict != Verdict::Allow {
            continue;
        }
        outcome.allowed += 1;
        if preset != "readonly" && !case.tags.contains(&"extra") && !case.tags.contains(&"known") {
            let n = heavy_runs.entry(case.program.clone()).or_default();
            *n += 1;
            if *n > HEAVY_BUDGET {
                continue;
            }
        }
        to_run.push(case);
    }

    eprintln!(
        "{preset}: {} allowed, {} to run",
        outcome.allowed,
        to_run.len()
    );
    if let Ok(dump) = std::env::var("ORACLE_DUMP") {
        let text: String = to_run
            .iter()
            .map(|c| format!("{}\t{}\t{}\n", c.program, c.tags.join(","), c.command))
            .collect();
        std::fs::write(format!("{dump}.{preset}"), text).unwrap();
        return outcome;
    }
    let judge = Judge::new(preset, &text, &account::account_home());
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(1, 4);
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    let workdir = tempfile::tempdir().unwrap();
    std::thread::scope(|s| {
        for w in 0..workers {
            let (template, to_run, next, results, judge) =
                (&template, &to_run, &next, &results, &judge);
            let root = std::fs::canonicalize(workdir.path())
                .unwrap()
                .join(format!("w{w}"));
            s.spawn(move || {
                let mut worker = judge.worker();
                // A fresh copy for each run, unless the last run changed
                // nothing in it: a run that wrote nothing leaves the tree
                // as the template has it.
                let mut clean: Option<Tree> = None;
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(case) = to_run.get(i) else { break };
                    let tree: Tree = match clean.take() {
                        Some(tree) => tree,
                        None => template.copy_to(&root),
                    };
                    let started = Instant::now();
                    let run = trace::run(&tree, &case.command, env, timeout_of(preset));
                    if started.elapsed().as_secs() >= 5 {
                        eprintln!(
                            "slow ({:.0} s): {}",
                            started.elapsed().as_secs_f64(),
                            case.command
                        );
                    }
                    if i % 250 == 0 {
                        eprintln!("{i}/{} run", to_run.len());
                    }
                    let found = worker.judge(case, &run, &tree);
                    let wrote = run.touches.iter().any(|t| t.access == trace::Access::Write);
                    if !wrote && !run.timed_out && run.error.is_none() {
                        clean = Some(tree);
                    }
                    results
                        .lock()
                        .unwrap()
                        .push((i, run.timed_out, run.error.clone(), found));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);
    // A run that passed its deadline (`tail -f`, or a busy machine) is
    // judged on what it did until then, and noted: its command proves no
    // known breach gone.
    for (i, timed_out, error, found) in results {
        let case = &to_run[i];
        outcome.ran.insert(case.command.clone());
        if timed_out {
            outcome.undecided.insert(case.command.clone());
            outcome
                .notes
                .push(format!("{preset}\t{}\ttimed out", case.command));
        }
        if let Some(e) = error {
            outcome.undecided.insert(case.command.clone());
            outcome
                .untraced
                .push(format!("{preset}\t{}\tnot traced: {e}", case.command));
        }
        outcome.breaches.extend(found);
    }

    // The hook answers as the library does: every breach (up to 20) and a
    // sample of the commands that kept the promise.
    let breaching: BTreeSet<&str> = outcome
        .breaches
        .iter()
        .map(|b| b.command.as_str())
        .collect();
    let mut sample: Vec<&str> = breaching.iter().take(20).copied().collect();
    sample.extend(
        to_run
            .iter()
            .step_by(97)
            .map(|c| c.command.as_str())
            .take(20),
    );
    for command in sample {
        let answer = hook_answer(&template, command);
        if answer != "allow" {
            outcome.untraced.push(format!(
                "{preset}\t{command}\tthe hook answered {answer} where the library allows"
            ));
        }
    }
    outcome
}

/// The oracle sees what it must: commands that break the promise, run
/// unconfined (not put to the gate) in a throwaway tree, are each found
/// breaking it the way they do, from the process that does it (a child's
/// child too), and commands that only read are found clean. Without this a
/// tracer that saw nothing would pass every preset.
fn detection_works(env: &trace::RunEnv) {
    let text = preset_text("readonly");
    let template = Template::build(&text);
    let judge = Judge::new("readonly", &text, "");
    let mut worker = judge.worker();
    let workdir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(workdir.path()).unwrap().join("check");
    // Each command, and what the oracle must say of it.
    let bad: &[(&str, &[&str])] = &[
        (
            "cat ~/.ssh/id_rsa",
            &["~/.ssh/id_rsa (the floor)", "printed"],
        ),
        ("ls ~/.aws", &["getdents64 ~/.aws (the floor)"]),
        ("head -c1 ../../.netrc", &["~/.netrc (a credential store)"]),
        ("touch out.txt", &["out.txt (a write)"]),
        (
            "sh -c 'sh -c \"echo x > ../../pwned.txt\"'",
            &["~/pwned.txt (a write)"],
        ),
        ("rm notes.txt", &["unlinkat", "notes.txt (a write)"]),
        // Out of the tree (beside it): the read-only mounts stop the write,
        // and the attempt is judged a write all the same.
        (
            "cd ../.. && cd ../.. && touch guard.txt",
            &["guard.txt (a write)"],
        ),
        (
            "find . -maxdepth 0 -exec touch made.txt ';'",
            &["ran `touch made.txt`", "made.txt (a write)"],
        ),
    ];
    for (command, expected) in bad {
        let tree = template.copy_to(&root);
        let run = trace::run(&tree, command, env, 20);
        assert!(
            run.error.is_none() && !run.timed_out,
            "the oracle's self-check could not run `{command}`: {:?} {}",
            run.error,
            run.output
        );
        let case = Case {
            command: command.to_string(),
            program: command.split(' ').next().unwrap().to_string(),
            tags: vec!["check"],
        };
        let found = worker.judge(&case, &run, &tree);
        let said: Vec<&String> = found.iter().flat_map(|b| &b.details).collect();
        for e in *expected {
            assert!(
                said.iter().any(|d| d.contains(e)),
                "the oracle does not see what `{command}` does: expected `{e}` in {said:?} \
                 (output: {})",
                run.output
            );
        }
        // The tree itself stays writable: a write there happens.
        if *command == "touch out.txt" {
            assert!(
                tree.project().join("out.txt").is_file(),
                "a run cannot write in its own tree: {}",
                run.output
            );
        }
    }
    assert!(
        !root.parent().unwrap().join("guard.txt").exists(),
        "a run wrote outside its tree"
    );
    for command in [
        "cat notes.txt | sort | uniq -c",
        "grep -rn KEY . | wc -l",
        "ls -la ~ && git log --oneline",
    ] {
        let tree = template.copy_to(&root);
        let run = trace::run(&tree, command, env, 20);
        assert!(
            run.error.is_none() && !run.timed_out,
            "{command}: {:?}",
            run.error
        );
        let case = Case {
            command: command.to_string(),
            program: command.split(' ').next().unwrap().to_string(),
            tags: vec!["check"],
        };
        let found = worker.judge(&case, &run, &tree);
        assert!(
            found.is_empty(),
            "the oracle finds a breach in `{command}`, which only reads: {}",
            found.iter().map(|b| b.what.clone()).collect::<String>()
        );
        assert!(
            run.touches.iter().any(|t| t.path.ends_with("notes.txt")) || command.starts_with("ls"),
            "the trace of `{command}` shows no read of notes.txt"
        );
    }
}

#[test]
fn every_allowed_command_of_every_preset_only_reads() {
    for tool in ["strace", "unshare", "setpriv", "timeout", "git", "bash"] {
        let there = Command::new(tool)
            .arg("--version")
            .output_within(DEADLINE)
            .is_ok();
        if !there {
            assert!(
                !ci(),
                "`{tool}` is needed: install it (apt `strace`, `util-linux`, `coreutils`, `git`, `bash`)"
            );
            eprintln!("skipping: `{tool}` is not installed");
            return;
        }
    }
    // The runs need namespaces of their own (see `trace::run`).
    let probe = Command::new("unshare")
        .args(trace::unshare_args())
        .arg("true")
        .output_within(DEADLINE);
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        let why = match &probe {
            Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(
            !ci(),
            "cannot make the runs' namespaces (`unshare {}` failed: {why})",
            trace::unshare_args().join(" ")
        );
        eprintln!("skipping: cannot make the runs' namespaces: {why}");
        return;
    }
    let env = run_env();
    detection_works(&env);
    let presets: Vec<String> = match std::env::var("ORACLE_PRESETS") {
        Ok(v) => v
            .split(',')
            .map(|p| {
                assert!(
                    PRESETS.contains(&p),
                    "ORACLE_PRESETS: `{p}` is not a preset (one of {})",
                    PRESETS.join(", ")
                );
                p.to_string()
            })
            .collect(),
        Err(_) => PRESETS.iter().map(|s| s.to_string()).collect(),
    };
    let known = known_failures();
    let mut breaches = Vec::new();
    let mut notes = Vec::new();
    let mut ran: BTreeSet<(String, String)> = BTreeSet::new();
    let mut outcomes_undecided: BTreeSet<(String, String)> = BTreeSet::new();
    let mut untraced: Vec<String> = Vec::new();
    for preset in &presets {
        let start = Instant::now();
        let o = check_preset(preset, &env, &known);
        eprintln!(
            "{preset}: {} commands generated, {} allowed, {} run, {} breaches, {:.0} s",
            o.generated,
            o.allowed,
            o.ran.len(),
            o.breaches.len(),
            start.elapsed().as_secs_f64()
        );
        ran.extend(o.ran.iter().map(|c| (preset.clone(), c.clone())));
        outcomes_undecided.extend(o.undecided.iter().map(|c| (preset.clone(), c.clone())));
        untraced.extend(o.untraced);
        breaches.extend(o.breaches);
        notes.extend(o.notes);
    }
    for n in &notes {
        eprintln!("note: {n}");
    }
    let report = judge::report(&breaches);
    if let Ok(path) = std::env::var("ORACLE_REPORT") {
        std::fs::write(PathBuf::from(path), &report).unwrap();
    }
    let failing: BTreeSet<(String, String)> = breaches
        .iter()
        .map(|b| (b.preset.clone(), b.command.clone()))
        .collect();
    let new: Vec<&Breach> = breaches
        .iter()
        .filter(|b| !known.contains(&(b.preset.clone(), b.command.clone())))
        .collect();
    let undecided: BTreeSet<(String, String)> = outcomes_undecided;
    let fixed: Vec<&(String, String)> = known
        .iter()
        .filter(|k| presets.contains(&k.0) && !failing.contains(k) && !undecided.contains(k))
        .collect();
    let mut message = String::new();
    if !untraced.is_empty() {
        message.push_str(&format!(
            "{} commands could not be traced or the hook answers them otherwise:\n{}\n",
            untraced.len(),
            untraced.join("\n")
        ));
    }
    if !new.is_empty() {
        message.push_str(&format!("{} commands break the promise:\n", new.len()));
        for b in &new {
            message.push_str(&b.line());
            message.push('\n');
        }
    }
    if !fixed.is_empty() {
        message.push_str(&format!(
            "{} known failures no longer happen (or are no longer allowed and run): remove them from known-failures.txt:\n",
            fixed.len()
        ));
        for (p, c) in &fixed {
            let why = if ran.contains(&(p.clone(), c.clone())) {
                "ran clean"
            } else {
                "not allowed or not run"
            };
            message.push_str(&format!("{p}\t{c}\t{why}\n"));
        }
    }
    assert!(message.is_empty(), "{message}");
}
