//! `sandgate acp` between a real editor client and the real Gemini CLI
//! (`gemini --acp`, pinned in `.ci/agents.txt`), offline against the
//! scripted model server of the agent tests. The editor is the official ACP
//! Python SDK (`agent-client-protocol`, pinned below and installed by
//! `.ci/run`), driven by `acp_client/editor.py`: it answers the permission
//! requests it receives as each test scripts, and records them.
//! How to run one case: see `agents_common/mod.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agents_common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use agents_common::wait::{self, Bounded, DEADLINE};
use agents_common::{in_ci, Agent, Script, Step, Tree};
use serde_json::{json, Value};

/// The pinned SDK version `.ci/run` installs.
const SDK: &str = "0.12.1";

/// Why the client cannot run here, if it cannot.
fn missing_client() -> Option<String> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('agent-client-protocol'))",
        ])
        .output_within(DEADLINE);
    let why = match out {
        Err(e) => format!("python3 is not available: {e}"),
        Ok(o) if !o.status.success() => format!(
            "the Python package `agent-client-protocol` is not installed \
             (pip install agent-client-protocol=={SDK})"
        ),
        Ok(o) if String::from_utf8_lossy(&o.stdout).trim() != SDK => format!(
            "the Python package `agent-client-protocol` is {}, not the pinned {SDK}",
            String::from_utf8_lossy(&o.stdout).trim()
        ),
        Ok(_) => return None,
    };
    if in_ci() {
        panic!("{why} (CI=true: this test never skips)");
    }
    Some(why)
}

fn tree() -> Option<Tree> {
    if let Some(why) = missing_client() {
        eprintln!("skipping: {why}");
        return None;
    }
    Tree::new(Agent::Gemini)
}

/// What the editor saw.
struct Seen {
    record: Value,
    stderr: String,
}

impl Seen {
    fn permissions(&self) -> &Vec<Value> {
        self.record["permissions"].as_array().unwrap()
    }

    fn titles(&self) -> Vec<String> {
        self.permissions()
            .iter()
            .map(|p| {
                p["toolCall"]["title"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    }

    fn describe(&self) -> String {
        format!(
            "--- the editor's record:\n{:#}\n--- stderr (sandgate and the agent):\n{}",
            self.record, self.stderr
        )
    }
}

/// The editor's plan: `sandgate acp ARGS -- gemini --acp` in the tree's
/// project, answering permission requests with `answers`.
fn converse(t: &Tree, sandgate_args: &[&str], agent_args: &[&str], plan: Value) -> Seen {
    let mut command: Vec<String> = vec![env!("CARGO_BIN_EXE_sandgate").into(), "acp".into()];
    command.extend(sandgate_args.iter().map(|a| a.to_string()));
    command.extend([
        "--".into(),
        t.bin.to_string_lossy().into_owned(),
        "--acp".into(),
    ]);
    command.extend(agent_args.iter().map(|a| a.to_string()));
    let record = t.root.join("editor.json");
    let stderr = t.root.join("editor.err");
    let mut plan = plan;
    let obj = plan.as_object_mut().unwrap();
    obj.insert("command".into(), json!(command));
    obj.insert("cwd".into(), json!(t.work));
    obj.insert("record".into(), json!(record));
    obj.insert("stderr".into(), json!(stderr));
    obj.entry("prompts").or_insert(json!(["Do the task."]));
    let mut env = json!({
        "PATH": std::env::var("PATH").unwrap_or_default(),
        "HOME": t.home,
        "USER": "root",
        "LANG": "C.UTF-8",
        "TMPDIR": t.root.join("tmp"),
        "SANDGATE_MANAGED_CONFIG": t.root.join("no-managed.yaml"),
        "NO_COLOR": "1",
        "GOOGLE_GEMINI_BASE_URL": format!("http://127.0.0.1:{}", t.model_port()),
        "GEMINI_API_KEY": "test-key",
    });
    if let Some(extra) = obj.remove("env") {
        for (k, v) in extra.as_object().unwrap() {
            env[k] = v.clone();
        }
    }
    obj.insert("env".into(), env);
    let plan_file = t.root.join("editor-plan.json");
    std::fs::write(&plan_file, plan.to_string()).unwrap();
    let editor = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp_client/editor.py");
    // The editor's own deadline (150 s) ends it; this one is the last resort.
    let mut child = Command::new("python3")
        .arg(&editor)
        .arg(&plan_file)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > std::time::Duration::from_secs(200) {
            wait::reap(&mut child);
            panic!("the editor did not finish within 200 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&record)
        .unwrap_or_else(|e| panic!("the editor wrote no record (`{}`): {e}", record.display()));
    Seen {
        record: serde_json::from_str(&text).unwrap(),
        stderr: std::fs::read_to_string(&stderr).unwrap_or_default(),
    }
}

/// The agent and sandgate ended once the editor closed the connection (by
/// themselves, or by sandgate's `SIGTERM`/`SIGKILL` after the grace period:
/// after a cancelled turn Gemini CLI 0.61 does not always end at the end of
/// its input).
fn assert_ended(seen: &Seen) {
    assert!(seen.record["exit"].is_i64(), "{}", seen.describe());
}

fn acp_records(t: &Tree) -> Vec<Value> {
    t.audit()
        .into_iter()
        .filter(|r| r["surface"] == "acp")
        .collect()
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The agent's own permission requests for commands: the one the policy
/// denies never reaches the editor (the agent gets the reject option), the
/// one it allows is answered without the editor, and only the unmatched one
/// is asked there; each decision is logged with its session and tool call.
#[test]
fn the_agents_own_questions_are_answered_by_the_policy() {
    let Some(t) = tree() else { return };
    t.set_script(&Script::new(vec![
        Step::shell(Agent::Gemini, "touch allowed.txt"),
        Step::shell(Agent::Gemini, "touch denied.txt"),
        Step::shell(Agent::Gemini, "touch unmatched.txt"),
    ]));
    let seen = converse(&t, &[], &[], json!({"answers": ["allow_once"]}));
    assert_eq!(
        seen.titles(),
        ["touch unmatched.txt"],
        "{}",
        seen.describe()
    );
    assert!(t.work.join("allowed.txt").exists(), "{}", seen.describe());
    assert!(!t.work.join("denied.txt").exists(), "{}", seen.describe());
    assert!(t.work.join("unmatched.txt").exists(), "{}", seen.describe());
    let session = seen.record["session"].as_str().unwrap().to_string();
    let records = acp_records(&t);
    let find = |needle: &str| {
        records
            .iter()
            .find(|r| r["subject"].as_str().is_some_and(|s| s.contains(needle)))
            .unwrap_or_else(|| panic!("no acp record of {needle}: {records:#?}"))
    };
    for (needle, verdict, outcome, by) in [
        ("touch allowed.txt", "allow", "allow", "policy"),
        ("touch denied.txt", "deny", "deny", "policy"),
        ("touch unmatched.txt", "ask", "allow", "human"),
    ] {
        let r = find(needle);
        assert_eq!(
            (
                r["verdict"].as_str(),
                r["outcome"].as_str(),
                r["answered_by"].as_str(),
                r["session"].as_str()
            ),
            (
                Some(verdict),
                Some(outcome),
                Some(by),
                Some(session.as_str())
            ),
            "{r}"
        );
        assert!(
            r["tool_call"].as_str().is_some_and(|c| !c.is_empty()),
            "{r}"
        );
    }
    assert_ended(&seen);
}

/// With the editor performing the agent's file operations (`fs/*`), a
/// write inside the workspace is judged (the policy allows it) and lands
/// through the editor without a question. Gemini CLI writes outside its
/// workspace itself, after its own question about the edit, which the
/// policy leaves to the person: rejected, nothing is written; allowed once,
/// the file lands.
#[test]
fn edits_inside_pass_and_edits_outside_are_the_persons_to_answer() {
    let Some(t) = tree() else { return };
    let write = |p: &PathBuf| {
        Step::call(
            "write_file",
            json!({"file_path": path(p), "content": "hello\n"}),
        )
    };
    let inside = t.work.join("inside.txt");
    let rejected = t.outside.join("rejected.txt");
    let allowed = t.outside.join("allowed.txt");
    // An existing file: Gemini CLI 0.61 fails the write of a new file through
    // the editor ("Error checking existing file: Resource not found") when
    // the editor answers its read with ACP's resource-not-found error.
    std::fs::write(&inside, "old\n").unwrap();
    t.set_script(&Script::new(vec![
        write(&inside),
        write(&rejected),
        write(&allowed),
    ]));
    let seen = converse(
        &t,
        &[],
        &["--include-directories", &path(&t.outside)],
        json!({"fs": true, "answers": ["reject_once", "allow_once"]}),
    );
    assert_eq!(
        std::fs::read_to_string(&inside).ok().as_deref(),
        Some("hello\n"),
        "{}",
        seen.describe()
    );
    assert!(!rejected.exists(), "{}", seen.describe());
    assert!(allowed.exists(), "{}", seen.describe());
    let asked: Vec<String> = seen
        .permissions()
        .iter()
        .map(|p| {
            p["toolCall"]["locations"][0]["path"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        asked,
        [path(&rejected), path(&allowed)],
        "{}",
        seen.describe()
    );
    let writes: Vec<&str> = seen.record["fs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["method"] == "fs/write_text_file")
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(writes, [path(&inside)], "{}", seen.describe());
    let records = acp_records(&t);
    let of = |p: &Path, tool: &str| {
        records
            .iter()
            .filter(|r| r["subject"] == path(p) && r["tool"] == tool)
            .map(|r| {
                (
                    r["verdict"].as_str().unwrap().to_string(),
                    r["outcome"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert!(
        of(&inside, "file_write").contains(&("allow".into(), "allow".into())),
        "{records:#?}"
    );
    assert_eq!(
        of(&rejected, "file_write"),
        [("ask".into(), "deny".into())],
        "{records:#?}"
    );
    assert_eq!(
        of(&allowed, "file_write"),
        [("ask".into(), "allow".into())],
        "{records:#?}"
    );
}

/// A tree outside every temp tree `sandgate run` allows, so that a write
/// outside the workspace is asked about.
fn confined_tree() -> Option<Tree> {
    if let Some(why) = missing_client() {
        eprintln!("skipping: {why}");
        return None;
    }
    Tree::new_outside_temp(Agent::Gemini)
}

/// Confined (armed by `SANDGATE_SANDBOX=1`), Gemini CLI in `--yolo` asks
/// nothing itself; its writes outside the workspace wait at the system call
/// while sandgate asks the editor, in the session and tool call in flight,
/// with the four options: allowed once the write lands, rejected once it
/// fails, allowed always it lands and the same write again asks nothing
/// (the answer is in the workspace's `sandbox.json`, which the agent cannot
/// write). The floor is unreadable and never asked about.
#[test]
fn confined_writes_outside_are_asked_in_the_editor() {
    let Some(t) = confined_tree() else { return };
    let once = t.outside.join("once.txt");
    let rejected = t.outside.join("rejected.txt");
    let always = t.outside.join("always.txt");
    let answers_file = t.work.join(".sandgate/sandbox.json");
    let shell = |c: String| Step::shell(Agent::Gemini, &c);
    t.set_script(&Script::new(vec![
        shell(format!("echo one > {}", path(&once))),
        shell(format!("echo two > {}", path(&rejected))),
        shell(format!("echo three > {}", path(&always))),
        shell(format!("echo four >> {}", path(&always))),
        shell("cat ~/.ssh/id_rsa > leak.txt".into()),
        shell("echo '{}' > .sandgate/sandbox.json".into()),
    ]));
    let seen = converse(
        &t,
        &[],
        &["--yolo", "--skip-trust"],
        json!({"env": {"SANDGATE_SANDBOX": "1"}, "answers": ["allow_once", "reject_once", "allow_always"]}),
    );
    let asked: Vec<&Value> = seen.permissions().iter().collect();
    let subjects: Vec<String> = asked
        .iter()
        .map(|p| {
            p["toolCall"]["locations"][0]["path"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(
        subjects,
        [path(&once), path(&rejected), path(&always)],
        "{}",
        seen.describe()
    );
    for p in &asked {
        let kinds: Vec<&str> = p["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["allow_once", "allow_always", "reject_once", "reject_always"]
        );
        assert_eq!(p["sessionId"], seen.record["session"]);
        assert!(
            p["toolCall"]["toolCallId"]
                .as_str()
                .unwrap()
                .starts_with("run_shell_command"),
            "{p}"
        );
        let title = p["toolCall"]["title"].as_str().unwrap();
        assert!(
            title.contains("bash") || title.contains("sh"),
            "the process: {title}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&once).ok().as_deref(),
        Some("one\n"),
        "{}",
        seen.describe()
    );
    assert!(!rejected.exists(), "{}", seen.describe());
    assert_eq!(
        std::fs::read_to_string(&always).ok().as_deref(),
        Some("three\nfour\n"),
        "{}",
        seen.describe()
    );
    let answers = std::fs::read_to_string(&answers_file).unwrap();
    assert!(answers.contains(&path(&always)), "{answers}");
    assert!(!std::fs::read_to_string(t.work.join("leak.txt"))
        .unwrap_or_default()
        .contains(&t.secret));
    assert_ended(&seen);
}

/// A turn cancelled while sandgate's question is open: the question ends
/// as a reject once, the write fails, and nothing is left waiting (the turn
/// ends, and the agent and sandgate end with the editor).
#[test]
fn a_cancelled_turn_leaves_nothing_waiting() {
    let Some(t) = confined_tree() else { return };
    let target = t.outside.join("cancelled.txt");
    t.set_script(&Script::new(vec![Step::shell(
        Agent::Gemini,
        &format!("echo x > {}", path(&target)),
    )]));
    let seen = converse(
        &t,
        &[],
        &["--yolo", "--skip-trust"],
        json!({"env": {"SANDGATE_SANDBOX": "1"}, "cancel_after_permission": true}),
    );
    assert_eq!(seen.permissions().len(), 1, "{}", seen.describe());
    assert_eq!(
        seen.record["turns"][0]["stopReason"],
        "cancelled",
        "{}",
        seen.describe()
    );
    assert!(!target.exists(), "{}", seen.describe());
    assert!(seen.record["failure"].is_null(), "{}", seen.describe());
    assert_ended(&seen);
}

/// With `--no-ui`, a write outside is refused without a question and logged.
#[test]
fn without_the_editors_dialog_a_write_outside_is_refused_and_logged() {
    let Some(t) = confined_tree() else { return };
    let target = t.outside.join("refused.txt");
    t.set_script(&Script::new(vec![Step::shell(
        Agent::Gemini,
        &format!("echo x > {}", path(&target)),
    )]));
    let seen = converse(
        &t,
        &["--no-ui"],
        &["--yolo", "--skip-trust"],
        json!({"env": {"SANDGATE_SANDBOX": "1"}}),
    );
    assert!(seen.permissions().is_empty(), "{}", seen.describe());
    assert!(!target.exists(), "{}", seen.describe());
    let logged = t.audit_for(&path(&target));
    assert!(logged.iter().any(|r| r["verdict"] == "deny"), "{logged:#?}");
}

/// A session whose `cwd` lies outside every workspace: sandgate asks about
/// the directory once, through the editor; allowed, the agent's writes
/// beneath it land without another question.
#[test]
fn a_session_outside_the_workspace_is_asked_about_once() {
    let Some(t) = confined_tree() else { return };
    let project = t.outside.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let a = project.join("a.txt");
    let b = project.join("sub/b.txt");
    t.set_script(&Script::new(vec![
        Step::shell(Agent::Gemini, &format!("echo a > {}", path(&a))),
        Step::shell(
            Agent::Gemini,
            &format!(
                "mkdir -p {} && echo b > {}",
                path(&project.join("sub")),
                path(&b)
            ),
        ),
    ]));
    let seen = converse(
        &t,
        &[],
        &["--yolo", "--skip-trust"],
        json!({"env": {"SANDGATE_SANDBOX": "1"}, "session_cwd": project, "answers": ["allow_once"]}),
    );
    let asked: Vec<String> = seen
        .permissions()
        .iter()
        .map(|p| {
            p["toolCall"]["locations"][0]["path"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(asked, [path(&project)], "{}", seen.describe());
    assert_eq!(
        std::fs::read_to_string(&a).ok().as_deref(),
        Some("a\n"),
        "{}",
        seen.describe()
    );
    assert_eq!(
        std::fs::read_to_string(&b).ok().as_deref(),
        Some("b\n"),
        "{}",
        seen.describe()
    );
    assert_ended(&seen);
}
