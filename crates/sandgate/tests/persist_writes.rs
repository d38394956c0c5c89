//! The rule writer under load, through the real binary: many processes at
//! once, and processes killed with SIGKILL in the middle of their writes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wait::{Bounded, DEADLINE};

#[path = "../../../tests/support/wait.rs"]
mod wait;

const HEADER: &str = "# central policy: these comments must survive every write\n";

fn policy_text() -> String {
    format!(
        "{HEADER}permissions:\n\
         \x20 commands:\n\
         \x20   # trusted commands\n\
         \x20   allow: [\"^true$\"]   # trailing comment\n\
         \x20   deny:\n\
         \x20     - '^rm -rf /'\n\
         # footer comment\n"
    )
}

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    config: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    let config = root.join("sandgate/permissions.yaml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, policy_text()).unwrap();
    Env {
        _tmp: tmp,
        root,
        config,
    }
}

impl Env {
    fn sandgate(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
        cmd.arg("--config")
            .arg(&self.config)
            .arg("--local-config")
            .arg(self.root.join("local.yaml"))
            .args(args)
            .current_dir(&self.root)
            .env("HOME", self.root.join("home"))
            .env("SANDGATE_MANAGED_CONFIG", self.root.join("managed.yaml"))
            .env("SANDGATE_AUDIT", "off")
            .env_remove("SANDGATE_CONFIG")
            .env_remove("SANDGATE_LOCAL_CONFIG")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        cmd
    }

    fn allow_command(&self, rule: &str) -> Command {
        self.sandgate(&["policy", "allow", "command", rule])
    }
}

/// The `permissions.commands.allow` list, or the reason the text does not parse.
fn allow_list(text: &str) -> Result<Vec<String>, String> {
    let v: serde_json::Value = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
    let list = v["permissions"]["commands"]["allow"]
        .as_array()
        .ok_or_else(|| format!("no allow list in:\n{text}"))?;
    list.iter()
        .map(|x| {
            x.as_str()
                .map(str::to_string)
                .ok_or_else(|| "a rule is not a string".to_string())
        })
        .collect()
}

fn assert_comments_intact(text: &str) {
    for comment in [
        HEADER.trim_end(),
        "# trusted commands",
        "# trailing comment",
        "# footer comment",
    ] {
        assert!(text.contains(comment), "lost `{comment}`:\n{text}");
    }
}

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn fifty_processes_append_fifty_rules_at_once() {
    let env = env();
    // Regex metacharacters make each rule a real escaping test too.
    let rules: Vec<String> = (0..50)
        .map(|i| format!(r"^echo 'rule-{i} a\.b\*c \(x\) \[y\] \$z'$"))
        .collect();
    let children: Vec<Child> = rules
        .iter()
        .map(|r| env.allow_command(r).spawn().unwrap())
        .collect();
    for child in children {
        let out = wait::finish(child, 120, "policy allow");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = std::fs::read_to_string(&env.config).unwrap();
    let list = allow_list(&text).unwrap_or_else(|e| panic!("the file must parse: {e}"));
    for rule in &rules {
        let n = list.iter().filter(|r| *r == rule).count();
        assert_eq!(n, 1, "`{rule}` is present {n} times:\n{text}");
    }
    assert_eq!(list.len(), 51, "{text}");
    assert_eq!(list[0], "^true$");
    assert_comments_intact(&text);
    assert!(temp_files(env.config.parent().unwrap()).is_empty());

    // The whole policy still loads, and the engine uses every rule.
    let show = env
        .sandgate(&["policy", "show"])
        .output_within(DEADLINE)
        .unwrap();
    assert!(show.status.success());
    let check = env
        .sandgate(&[
            "check",
            "--json",
            r#"{"tool": "exec_run", "params": {"command": "echo 'rule-37 a.b*c (x) [y] $z'"}}"#,
        ])
        .stdout(Stdio::piped())
        .output_within(DEADLINE)
        .unwrap();
    let decision: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(decision["verdict"], "allow", "{decision}");

    // Writing them all again changes nothing.
    for rule in rules.iter().take(5) {
        assert!(env
            .allow_command(rule)
            .status_within(DEADLINE)
            .unwrap()
            .success());
    }
    assert_eq!(std::fs::read_to_string(&env.config).unwrap(), text);
}

/// A small deterministic pseudo-random sequence (xorshift), seeded from the clock.
struct Jitter(u64);

impl Jitter {
    fn next_below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn sigkill_in_the_middle_of_writes_never_leaves_a_broken_file() {
    let env = env();
    let config = env.config.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));

    // A reader checks the file continuously while writers are being killed.
    let reader = {
        let (stop, reads, config) = (stop.clone(), reads.clone(), config.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let text = std::fs::read_to_string(&config).expect("the file always exists");
                if let Err(e) = allow_list(&text) {
                    panic!("a reader saw a broken file: {e}\n{text}");
                }
                assert_comments_intact(&text);
                reads.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut jitter = Jitter(seed);
    let mut completed: Vec<String> = Vec::new();
    let mut killed = 0;
    let started = Instant::now();
    let mut i = 0;
    while i < 200 && started.elapsed() < Duration::from_secs(10) {
        // A few writers at a time, each killed after a random few milliseconds.
        let batch: Vec<(String, Child)> = (0..4)
            .map(|k| {
                let rule = format!("^write-{i}-{k}$");
                let child = env.allow_command(&rule).spawn().unwrap();
                (rule, child)
            })
            .collect();
        std::thread::sleep(Duration::from_micros(jitter.next_below(25_000)));
        for (rule, mut child) in batch {
            if jitter.next_below(2) == 0 {
                let _ = child.kill();
            }
            let status = wait::status_within(&mut child, 60, &rule);
            if status.success() {
                completed.push(rule);
            } else {
                killed += 1;
            }
        }
        i += 1;
    }
    stop.store(true, Ordering::Relaxed);
    wait::join_within(reader, DEADLINE, "the reader thread")
        .expect("the reader never saw a broken file");

    let text = std::fs::read_to_string(&config).unwrap();
    let list = allow_list(&text).unwrap_or_else(|e| panic!("final file: {e}\n{text}"));
    for rule in &completed {
        assert_eq!(
            list.iter().filter(|r| *r == rule).count(),
            1,
            "a completed write of `{rule}` must be present exactly once"
        );
    }
    let mut sorted = list.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), list.len(), "no duplicates");
    assert_comments_intact(&text);
    assert!(
        killed > 0,
        "no writer was killed: the test did not test anything"
    );
    assert!(reads.load(Ordering::Relaxed) > 0);

    // The next write cleans up temp files left by killed writers.
    assert!(env
        .allow_command("^final$")
        .status_within(DEADLINE)
        .unwrap()
        .success());
    assert!(
        temp_files(config.parent().unwrap()).is_empty(),
        "{:?}",
        temp_files(config.parent().unwrap())
    );
    eprintln!(
        "{} writes completed, {killed} writers killed, {} reads checked",
        completed.len(),
        reads.load(Ordering::Relaxed)
    );
}
