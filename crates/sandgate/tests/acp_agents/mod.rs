//! The cases for `sandgate acp` with a real ACP agent behind it,
//! one body per case, shared by the agents' test files (`acp_gemini.rs`:
//! Gemini CLI's `--acp`; `acp_codex.rs`: Codex's adapter `codex-acp`). Each
//! agent runs offline against the scripted model server of the agent tests
//! (`agents_common`), and the editor is the official ACP Python SDK
//! (`agent-client-protocol`, pinned below and installed by `.ci/run`),
//! driven by `acp_client/editor.py`: it answers the permission requests it
//! receives as each test scripts, and records them.
//!
//! What differs between agents is in [`Adapter`]: how to start it, how it
//! asks about its own commands or runs them unasked, and how its tool calls
//! are named. How to run one case: see `agents_common/mod.rs`.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../../../../tests/support/acp.rs"]
mod acp;
use crate::agents_common::ci;
use crate::agents_common::wait::{self, Bounded, DEADLINE};
use crate::agents_common::{locate, Agent, Script, Step, Tree};
use serde_json::{json, Value};

/// The pinned SDK version `.ci/run` installs.
const SDK: &str = "0.12.1";

/// How long the editor has for one conversation (its own deadline, in
/// `editor.py`), and the test's last resort after it.
const CONVERSATION: Duration = Duration::from_secs(150);
const LAST_RESORT: Duration = Duration::from_secs(200);

/// A real ACP agent, as the tests start it.
pub struct Adapter {
    /// The agent whose settings and model protocol it uses.
    pub agent: Agent,
    /// Its binary, pinned in `.ci/agents.txt`.
    pub binary: &'static str,
    /// The variable naming another binary.
    pub env_override: &'static str,
    /// Its arguments to speak ACP.
    pub acp: &'static [&'static str],
    /// Its arguments to ask the editor about every command itself.
    pub asking: &'static [&'static str],
    /// Its arguments to ask nothing itself and run every command.
    pub unasking: &'static [&'static str],
    /// How its shell tool calls' ids begin.
    pub shell_call: &'static str,
    /// The prompts of the conversation where the agent asks about its own
    /// commands (an agent that ends its turn on a refusal needs one per
    /// refusal to go on).
    pub asking_prompts: &'static [&'static str],
}

/// Gemini CLI 0.61 (`gemini --acp`).
pub const GEMINI: Adapter = Adapter {
    agent: Agent::Gemini,
    binary: "gemini",
    env_override: "SANDGATE_GEMINI_BIN",
    acp: &["--acp"],
    asking: &[],
    unasking: &["--yolo", "--skip-trust"],
    shell_call: "run_shell_command",
    asking_prompts: &["Do the task."],
};

/// Codex's ACP adapter (`codex-acp`): `approval_policy = "untrusted"` asks
/// about every command it does not know to be safe; `"never"` asks nothing.
/// Its own sandbox is off (`danger-full-access`): sandgate's confinement is
/// the one under test. Refused a command ("abort"), Codex ends its turn, so
/// the conversation has a prompt for the command after the refused one.
pub const CODEX: Adapter = Adapter {
    agent: Agent::Codex,
    binary: "codex-acp",
    env_override: "SANDGATE_CODEX_ACP_BIN",
    acp: &[],
    asking: &[
        "-c",
        "approval_policy=\"untrusted\"",
        "-c",
        "sandbox_mode=\"danger-full-access\"",
    ],
    unasking: &[
        "-c",
        "approval_policy=\"never\"",
        "-c",
        "sandbox_mode=\"danger-full-access\"",
    ],
    shell_call: "call_",
    asking_prompts: &["Do the task.", "Go on with the task."],
};

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
    Some(why)
}

impl Adapter {
    /// A fresh tree for the agent, or `None` (after printing why) when it
    /// cannot run here outside CI. `confined`: outside every temp tree
    /// `sandgate run` allows, so that a write outside the workspace is
    /// asked about.
    pub fn tree(&self, confined: bool) -> Option<Tree> {
        if let Some(why) = missing_client() {
            ci::skip(&why);
            return None;
        }
        Tree::with_binary(self.agent, locate(self.binary, self.env_override), confined)
    }

    fn shell(&self, command: &str) -> Step {
        Step::shell(self.agent, command)
    }

    /// The editor's conversation: `sandgate acp ARGS -- AGENT ACP-ARGS
    /// AGENT-ARGS` in the tree's project, as `plan` says (see `editor.py`).
    pub fn converse(
        &self,
        t: &Tree,
        sandgate_args: &[&str],
        agent_args: &[&str],
        plan: Value,
    ) -> Seen {
        let mut command: Vec<String> = vec![env!("CARGO_BIN_EXE_sandgate").into(), "acp".into()];
        command.extend(sandgate_args.iter().map(|a| a.to_string()));
        command.push("--".into());
        command.push(t.bin.to_string_lossy().into_owned());
        command.extend(self.acp.iter().map(|a| a.to_string()));
        command.extend(agent_args.iter().map(|a| a.to_string()));
        let record = t.root.join("editor.json");
        let stderr = t.root.join("editor.err");
        let mut plan = plan;
        let obj = plan.as_object_mut().unwrap();
        obj.insert("command".into(), json!(command));
        obj.insert("cwd".into(), json!(t.work));
        obj.insert("record".into(), json!(record));
        obj.insert("stderr".into(), json!(stderr));
        obj.insert("deadline".into(), json!(CONVERSATION.as_secs()));
        obj.entry("prompts").or_insert(json!(["Do the task."]));
        let model = format!("http://127.0.0.1:{}", t.model_port());
        let mut env = json!({
            "PATH": std::env::var("PATH").unwrap_or_default(),
            "HOME": t.home,
            "USER": "root",
            "LANG": "C.UTF-8",
            "TMPDIR": t.root.join("tmp"),
            "SANDGATE_MANAGED_CONFIG": t.root.join("no-managed.yaml"),
            "NO_COLOR": "1",
        });
        match self.agent {
            Agent::Gemini => {
                env["GOOGLE_GEMINI_BASE_URL"] = json!(model);
                env["GEMINI_API_KEY"] = json!("test-key");
            }
            // The tree's `config.toml` names the model server.
            Agent::Codex => {
                env["CODEX_HOME"] = json!(t.codex_home());
                env["FAKE_KEY"] = json!("sk-test");
            }
            Agent::Claude => unreachable!("no Claude adapter is tested"),
        }
        if let Some(extra) = obj.remove("env") {
            for (k, v) in extra.as_object().unwrap() {
                env[k] = v.clone();
            }
        }
        obj.insert("env".into(), env);
        let plan_file = t.root.join("editor-plan.json");
        std::fs::write(&plan_file, plan.to_string()).unwrap();
        let editor = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp_client/editor.py");
        // The editor's own deadline ends it; this one is the last resort.
        let mut child = Command::new("python3")
            .arg(&editor)
            .arg(&plan_file)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if started.elapsed() > LAST_RESORT {
                wait::reap(&mut child);
                panic!("the editor did not finish within {LAST_RESORT:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let text = std::fs::read_to_string(&record)
            .unwrap_or_else(|e| panic!("the editor wrote no record (`{}`): {e}", record.display()));
        Seen {
            record: serde_json::from_str(&text).unwrap(),
            stderr: std::fs::read_to_string(&stderr).unwrap_or_default(),
        }
    }
}

/// What the editor saw.
pub struct Seen {
    pub record: Value,
    pub stderr: String,
}

impl Seen {
    pub fn permissions(&self) -> &Vec<Value> {
        self.record["permissions"].as_array().unwrap()
    }

    /// The first location of each permission request, in order.
    pub fn asked_paths(&self) -> Vec<String> {
        self.permissions()
            .iter()
            .map(|p| {
                p["toolCall"]["locations"][0]["path"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    }

    pub fn describe(&self) -> String {
        format!(
            "--- the editor's record:\n{:#}\n--- stderr (sandgate and the agent):\n{}",
            self.record, self.stderr
        )
    }

    /// The agent and sandgate ended once the editor closed the connection
    /// (by themselves, or by sandgate's `SIGTERM`/`SIGKILL` after the grace
    /// period: Codex's adapter does not end at the end of its input, nor
    /// does Gemini CLI 0.61 after a cancelled turn), and the editor's
    /// conversation had no failure.
    pub fn assert_ended(&self) {
        assert!(self.record["exit"].is_i64(), "{}", self.describe());
        assert!(self.record["failure"].is_null(), "{}", self.describe());
    }
}

pub fn acp_records(t: &Tree) -> Vec<Value> {
    t.audit()
        .into_iter()
        .filter(|r| r["surface"] == "acp")
        .collect()
}

pub fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The agent's own permission requests for commands: the one the policy
/// denies never reaches the editor (the agent gets the reject option), the
/// one it allows is answered without the editor, and only the unmatched one
/// is asked there; each decision is logged with its session and tool call.
pub fn the_agents_own_questions_are_answered_by_the_policy(a: &Adapter) {
    let Some(t) = a.tree(false) else { return };
    t.set_script(&Script::new(vec![
        a.shell("touch allowed.txt"),
        a.shell("touch denied.txt"),
        a.shell("touch unmatched.txt"),
    ]));
    let seen = a.converse(
        &t,
        &[],
        a.asking,
        json!({"answers": ["allow_once"], "prompts": a.asking_prompts}),
    );
    let asked: Vec<String> = seen
        .permissions()
        .iter()
        .map(|p| {
            p["toolCall"]["title"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(asked.len(), 1, "{}", seen.describe());
    assert!(
        asked[0].contains("touch unmatched.txt"),
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
            r["tool_call"]
                .as_str()
                .is_some_and(|c| c.starts_with(a.shell_call)),
            "{r}"
        );
    }
    seen.assert_ended();
}

/// Confined (armed by `SANDGATE_SANDBOX=1`), the agent asks nothing
/// itself. A write inside the workspace lands unasked; its writes outside
/// wait at the system call while sandgate asks the editor, in the session
/// and tool call in flight, with the four options: allowed once the write
/// lands, rejected once it fails, allowed always it lands and the same
/// write again asks nothing (the answer is in the workspace's
/// `sandbox.json`, which the agent cannot write). The floor is unreadable
/// and never asked about.
pub fn confined_writes_outside_are_asked_in_the_editor(a: &Adapter) {
    let Some(t) = a.tree(true) else { return };
    let inside = t.work.join("inside.txt");
    let once = t.outside.join("once.txt");
    let rejected = t.outside.join("rejected.txt");
    let always = t.outside.join("always.txt");
    let answers_file = t.work.join(".sandgate/sandbox.json");
    let shell = |c: String| a.shell(&c);
    t.set_script(&Script::new(vec![
        shell(format!("echo in > {}", path(&inside))),
        shell(format!("echo one > {}", path(&once))),
        shell(format!("echo two > {}", path(&rejected))),
        shell(format!("echo three > {}", path(&always))),
        shell(format!("echo four >> {}", path(&always))),
        shell("cat ~/.ssh/id_rsa > leak.txt".into()),
        shell("echo '{}' > .sandgate/sandbox.json".into()),
    ]));
    let seen = a.converse(
        &t,
        &[],
        a.unasking,
        json!({"env": {"SANDGATE_SANDBOX": "1"}, "answers": ["allow_once", "reject_once", "allow_always"]}),
    );
    assert_eq!(
        seen.asked_paths(),
        [path(&once), path(&rejected), path(&always)],
        "{}",
        seen.describe()
    );
    for p in seen.permissions() {
        acp::assert_options(p);
        assert_eq!(p["sessionId"], seen.record["session"]);
        assert!(
            p["toolCall"]["toolCallId"]
                .as_str()
                .unwrap()
                .starts_with(a.shell_call),
            "{p}"
        );
        let title = p["toolCall"]["title"].as_str().unwrap();
        assert!(
            title.contains("bash") || title.contains("sh"),
            "the process: {title}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&inside).ok().as_deref(),
        Some("in\n"),
        "{}",
        seen.describe()
    );
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
    seen.assert_ended();
}

/// A turn cancelled while sandgate's question is open: the question ends
/// as a reject once, the write fails, and nothing is left waiting (the turn
/// ends, and the agent and sandgate end with the editor).
pub fn a_cancelled_turn_leaves_nothing_waiting(a: &Adapter) {
    let Some(t) = a.tree(true) else { return };
    let target = t.outside.join("cancelled.txt");
    t.set_script(&Script::new(vec![
        a.shell(&format!("echo x > {}", path(&target)))
    ]));
    let seen = a.converse(
        &t,
        &[],
        a.unasking,
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
    seen.assert_ended();
}

/// With `--no-ui`, a write outside is refused without a question and logged.
pub fn without_the_editors_dialog_a_write_outside_is_refused_and_logged(a: &Adapter) {
    let Some(t) = a.tree(true) else { return };
    let target = t.outside.join("refused.txt");
    t.set_script(&Script::new(vec![
        a.shell(&format!("echo x > {}", path(&target)))
    ]));
    let seen = a.converse(
        &t,
        &["--no-ui"],
        a.unasking,
        json!({"env": {"SANDGATE_SANDBOX": "1"}}),
    );
    assert!(seen.permissions().is_empty(), "{}", seen.describe());
    assert!(!target.exists(), "{}", seen.describe());
    let logged = t.audit_for(&path(&target));
    assert!(logged.iter().any(|r| r["verdict"] == "deny"), "{logged:#?}");
    seen.assert_ended();
}

/// A session whose `cwd` lies outside every workspace: sandgate asks about
/// the directory once, through the editor; allowed, the agent's writes
/// beneath it land without another question.
pub fn a_session_outside_the_workspace_is_asked_about_once(a: &Adapter) {
    let Some(t) = a.tree(true) else { return };
    let project = t.outside.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let first = project.join("a.txt");
    let second = project.join("sub/b.txt");
    t.set_script(&Script::new(vec![
        a.shell(&format!("echo a > {}", path(&first))),
        a.shell(&format!(
            "mkdir -p {} && echo b > {}",
            path(&project.join("sub")),
            path(&second)
        )),
    ]));
    let seen = a.converse(
        &t,
        &[],
        a.unasking,
        json!({"env": {"SANDGATE_SANDBOX": "1"}, "session_cwd": project, "answers": ["allow_once"]}),
    );
    assert_eq!(seen.asked_paths(), [path(&project)], "{}", seen.describe());
    assert_eq!(
        std::fs::read_to_string(&first).ok().as_deref(),
        Some("a\n"),
        "{}",
        seen.describe()
    );
    assert_eq!(
        std::fs::read_to_string(&second).ok().as_deref(),
        Some("b\n"),
        "{}",
        seen.describe()
    );
    seen.assert_ended();
}

/// A session loaded (`session/load`) with a `cwd` outside every workspace:
/// asked about once, through the editor, exactly as a new one; allowed, the
/// agent's writes beneath it land without another question. The session is
/// one the agent made in that directory in an earlier connection, not
/// confined (Gemini CLI loads a session only in the directory it began in).
pub fn a_loaded_session_outside_the_workspace_is_asked_about_once(a: &Adapter) {
    let Some(t) = a.tree(true) else { return };
    let project = t.outside.join("project");
    std::fs::create_dir_all(&project).unwrap();
    t.set_script(&Script::new(Vec::new()));
    let first = a.converse(&t, &[], a.unasking, json!({"session_cwd": project}));
    assert!(first.permissions().is_empty(), "{}", first.describe());
    let session = first.record["session"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {}", first.describe()))
        .to_string();
    assert_eq!(
        first.record["initialize"]["agentCapabilities"]["loadSession"],
        true,
        "{}",
        first.describe()
    );
    let file = project.join("loaded.txt");
    let again = project.join("again.txt");
    t.set_script(&Script::new(vec![
        a.shell(&format!("echo loaded > {}", path(&file))),
        a.shell(&format!("echo again > {}", path(&again))),
    ]));
    let seen = a.converse(
        &t,
        &[],
        a.unasking,
        json!({"env": {"SANDGATE_SANDBOX": "1"}, "load_session": session, "session_cwd": project, "answers": ["allow_once"]}),
    );
    assert_eq!(seen.asked_paths(), [path(&project)], "{}", seen.describe());
    assert_eq!(seen.permissions()[0]["sessionId"], json!(session));
    assert_eq!(
        std::fs::read_to_string(&file).ok().as_deref(),
        Some("loaded\n"),
        "{}",
        seen.describe()
    );
    assert_eq!(
        std::fs::read_to_string(&again).ok().as_deref(),
        Some("again\n"),
        "{}",
        seen.describe()
    );
    seen.assert_ended();
}
