//! Shared by the `agent_*` tests: the real Claude Code, Codex CLI and Gemini
//! CLI, driven headless against a scripted model server on 127.0.0.1.
//!
//! HOWTO run one case:
//!
//! ```sh
//! .ci/install-agents                      # once: the pinned agents from npm (.ci/agents.txt)
//! cargo test -p sandgate --test agent_claude -- commands_allowed --nocapture
//! ```
//!
//! The agents are looked up in `$SANDGATE_AGENTS_DIR` (default
//! `/opt/sandgate-agents`), as `<package name>-<version>/node_modules/.bin/<binary>`,
//! at the versions of `.ci/agents.txt`; `SANDGATE_CLAUDE_BIN`,
//! `SANDGATE_CODEX_BIN`, `SANDGATE_GEMINI_BIN` name another binary. A missing
//! agent skips the test with a printed reason, and fails it under `CI=true`.
//! `SANDGATE_E2E_KEEP=1` keeps each test's tree and prints where it is: the
//! model server's record (`model/record.jsonl`: every request the agent sent,
//! with times), the agent's output (`agent.out`, `agent.err`) and the audit log
//! (`home/.sandgate/audit.jsonl`).
//!
//! A test makes a [`Tree`]: a fresh temporary root holding the agent's `HOME`
//! (with `~/.ssh/id_rsa` carrying a random marker, and the agent's settings
//! pointed at the model server), the project (`work/`, the agent's CWD) and a
//! directory outside it (`outside/`). It writes a policy, installs the hook
//! with the real `sandgate hook install`, and [`Tree::run`]s the agent with a
//! [`Script`]: the tool calls the model "chooses", one after the other. The
//! test then asserts from outside: files on disk, what the model received
//! (never the marker) and the audit log. Every path a scripted command touches
//! is inside the tree, and [`Tree::run`] checks that `HOME`, `CODEX_HOME` and
//! the CWD are inside it before it starts the agent.
//!
//! The model server is `model_server.py` (Python 3 standard library), started
//! once per tree; see its module doc for the wire protocols it speaks.

#![allow(dead_code)]

#[path = "../../../../tests/support/ci.rs"]
pub mod ci;
#[path = "../../../../tests/support/wait.rs"]
pub mod wait;

use wait::{Bounded, DEADLINE};

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[path = "../../../../tests/support/outside.rs"]
pub mod outside;

/// The pins, shared with `.ci/install-agents`.
const PINS: &str = include_str!("../../../../.ci/agents.txt");

/// How long one agent run may take before the test fails.
const RUN_TIMEOUT: Duration = Duration::from_secs(180);

/// One of the real agents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
}

impl Agent {
    /// The name `sandgate hook …` uses.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
        }
    }

    fn binary(self) -> &'static str {
        self.name()
    }

    fn env_override(self) -> &'static str {
        match self {
            Agent::Claude => "SANDGATE_CLAUDE_BIN",
            Agent::Codex => "SANDGATE_CODEX_BIN",
            Agent::Gemini => "SANDGATE_GEMINI_BIN",
        }
    }

    /// `(package, version)` pinned in `.ci/agents.txt`.
    pub fn pin(self) -> (&'static str, &'static str) {
        pin_of(self.binary())
    }

    /// The installed binary, or why there is none.
    pub fn locate(self) -> Result<PathBuf, String> {
        locate(self.binary(), self.env_override())
    }
}

/// `(package, version)` pinned in `.ci/agents.txt` for `binary`.
pub fn pin_of(binary: &str) -> (&'static str, &'static str) {
    PINS.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && f[2] == binary).then_some((f[0], f[1]))
        })
        .unwrap_or_else(|| panic!("no pin for `{binary}` in .ci/agents.txt"))
}

/// The installed `binary` of the package pinned for it (or the file the
/// environment variable `env_override` names), or why there is none.
pub fn locate(binary: &str, env_override: &str) -> Result<PathBuf, String> {
    let (package, version) = pin_of(binary);
    let install = format!("run .ci/install-agents (npm install {package}@{version})");
    if let Some(bin) = std::env::var_os(env_override).filter(|v| !v.is_empty()) {
        let bin = PathBuf::from(bin);
        return if bin.is_file() {
            Ok(bin)
        } else {
            Err(format!(
                "{env_override} names `{}`, which is not a file",
                bin.display()
            ))
        };
    }
    let dir = std::env::var_os("SANDGATE_AGENTS_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/sandgate-agents"));
    let short = package.rsplit('/').next().unwrap_or(package);
    let prefix = dir.join(format!("{short}-{version}"));
    let bin = prefix.join("node_modules/.bin").join(binary);
    if !bin.exists() {
        return Err(format!(
            "{package}@{version} is not installed at `{}`: {install}",
            bin.display()
        ));
    }
    let manifest = prefix
        .join("node_modules")
        .join(package)
        .join("package.json");
    let found = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["version"].as_str().map(str::to_owned));
    if found.as_deref() != Some(version) {
        return Err(format!(
            "`{}` holds version {found:?}, not the pinned {version}: {install}",
            manifest.display()
        ));
    }
    if which("node").is_none() {
        return Err("`node` is not on PATH: install Node.js 20 and npm".into());
    }
    Ok(bin)
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}

/// Under `CI=true` a missing tool fails the test; elsewhere it skips it.
pub fn in_ci() -> bool {
    ci::under_ci()
}

/// A temporary directory with no `.git` in it or above it. Claude Code
/// takes the nearest directory holding a `.git` (even an empty one, such as
/// a mount point another agent's sandbox left in /tmp) as the project, and
/// keys its trust on it, and in a repository it applies project settings
/// without trust: a tree under one would test something else.
fn base_without_git() -> Option<PathBuf> {
    let candidates = [
        std::env::temp_dir(),
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/dev/shm"),
    ];
    candidates.into_iter().find(|dir| no_git_above(dir))
}

/// A directory outside every temp tree `sandgate run` allows (see
/// `tests/support/outside.rs`) with no `.git` in or above it: cargo's target
/// tmp dir lies in the checkout, whose `.git` the agent would take for the
/// project's.
fn outside_without_git() -> Option<PathBuf> {
    let mut candidates = vec![
        outside::base().to_path_buf(),
        PathBuf::from("/run/sandgate-tests"),
    ];
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(Path::new(&home).join(".sandgate-tests"));
    }
    candidates.into_iter().find(|dir| {
        std::fs::create_dir_all(dir).is_ok()
            && std::fs::canonicalize(dir).is_ok_and(|d| !outside::in_temp_tree(&d))
            && no_git_above(dir)
    })
}

/// Whether `dir` is a directory with no `.git` in it or above it.
fn no_git_above(dir: &Path) -> bool {
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return false;
    };
    dir.is_dir()
        && dir
            .ancestors()
            .all(|d| std::fs::symlink_metadata(d.join(".git")).is_err())
}

fn skip_or_fail(what: &str) -> Option<Tree> {
    if in_ci() {
        panic!("{what} (CI=true: the real-agent tests never skip)");
    }
    eprintln!("skipping: {what}");
    None
}

/// A permission mode of the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Claude Code `default`, Codex `-s workspace-write`, Gemini `auto_edit`
    /// (which offers no shell tool headless).
    Default,
    /// Claude Code `bypassPermissions`, Codex
    /// `--dangerously-bypass-approvals-and-sandbox`, Gemini `--yolo`.
    Bypass,
    /// Claude Code `acceptEdits` (every edit accepted unasked); the others
    /// as [`Mode::Default`].
    AcceptEdits,
}

/// One tool call of the scripted model.
#[derive(Clone, Debug)]
pub struct Step(Value);

impl Step {
    /// A function call `name(args)`.
    pub fn call(name: &str, args: Value) -> Step {
        Step(json!({"name": name, "args": args}))
    }

    /// A Codex freeform tool call (`apply_patch`) with `input` as its text.
    pub fn custom(name: &str, input: &str) -> Step {
        Step(json!({"name": name, "custom": input}))
    }

    /// The agent's shell tool running `command`.
    pub fn shell(agent: Agent, command: &str) -> Step {
        match agent {
            Agent::Claude => Step::call(
                "Bash",
                json!({"command": command, "description": "run a command"}),
            ),
            Agent::Codex => Step::call("exec_command", json!({"cmd": command})),
            Agent::Gemini => Step::call("run_shell_command", json!({"command": command})),
        }
    }
}

/// The model's script: tool calls, one per turn, then a final text.
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub steps: Vec<Step>,
}

impl Script {
    pub fn new(steps: Vec<Step>) -> Script {
        Script { steps }
    }
}

/// How to run the agent.
#[derive(Clone, Debug)]
pub struct RunOpts {
    pub mode: Mode,
    /// Extra arguments, before the prompt.
    pub args: Vec<String>,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// The model name the agent asks for (Codex offers `apply_patch` only to
    /// models it knows).
    pub model: Option<String>,
    /// Start the agent under `sandgate run --no-ui`, armed.
    pub confined: bool,
    /// Words put before the command (e.g. a mount namespace with the test's
    /// own `/etc/hosts`, which then execs the command).
    pub wrap: Vec<String>,
    /// Confined without `--no-ui`: the run asks on its terminal.
    pub asking: bool,
}

impl RunOpts {
    pub fn mode(mode: Mode) -> RunOpts {
        RunOpts {
            mode,
            args: Vec::new(),
            env: Vec::new(),
            model: None,
            confined: false,
            wrap: Vec::new(),
            asking: false,
        }
    }

    /// Confined without `--no-ui`: the run asks on its terminal (start the
    /// command from [`Tree::command`] in a pseudo-terminal).
    pub fn asking(mut self) -> RunOpts {
        self.asking = true;
        self
    }

    /// Start the command through `words` (which exec it).
    pub fn wrapped(mut self, words: Vec<String>) -> RunOpts {
        self.wrap = words;
        self
    }

    /// Start the agent under `sandgate run --no-ui`, armed.
    pub fn confined(mut self) -> RunOpts {
        self.confined = true;
        self
    }

    pub fn arg(mut self, a: &str) -> RunOpts {
        self.args.push(a.to_owned());
        self
    }

    pub fn model(mut self, m: &str) -> RunOpts {
        self.model = Some(m.to_owned());
        self
    }
}

/// The outcome of one agent run.
pub struct Run {
    pub agent: Agent,
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Every request the agent sent the model server during this run.
    pub requests: Vec<Value>,
    pub elapsed: Duration,
}

impl Run {
    /// Every request body, as JSON text.
    pub fn sent_text(&self) -> String {
        self.requests
            .iter()
            .map(|r| r["body"].to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Whether `needle` appears in anything the agent sent the model.
    pub fn model_saw(&self, needle: &str) -> bool {
        // JSON escapes quotes and backslashes; look for both spellings.
        let text = self.sent_text();
        text.contains(needle)
            || text.contains(
                &Value::from(needle)
                    .to_string()
                    .trim_matches('"')
                    .to_string(),
            )
    }

    /// The main-conversation requests, in order.
    pub fn main_requests(&self) -> Vec<&Value> {
        self.requests.iter().filter(|r| r["main"] == true).collect()
    }

    /// The tool results the model received, in order (from the last main
    /// request, which carries the whole conversation), each as JSON text.
    pub fn tool_results(&self) -> Vec<String> {
        let Some(last) = self.main_requests().last().map(|r| &r["body"]) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        match self.agent {
            Agent::Claude => {
                for m in last["messages"].as_array().into_iter().flatten() {
                    for b in m["content"].as_array().into_iter().flatten() {
                        if b["type"] == "tool_result" {
                            out.push(b["content"].to_string());
                        }
                    }
                }
            }
            Agent::Codex => {
                for it in last["input"].as_array().into_iter().flatten() {
                    if it["type"] == "function_call_output"
                        || it["type"] == "custom_tool_call_output"
                    {
                        out.push(it["output"].to_string());
                    }
                }
            }
            Agent::Gemini => {
                for c in last["contents"].as_array().into_iter().flatten() {
                    for p in c["parts"].as_array().into_iter().flatten() {
                        if let Some(r) = p.get("functionResponse") {
                            out.push(r["response"].to_string());
                        }
                    }
                }
            }
        }
        out
    }

    /// The names of the tools the agent offered the model (first main request).
    pub fn offered_tools(&self) -> Vec<String> {
        let Some(first) = self.main_requests().first().map(|r| &r["body"]) else {
            return Vec::new();
        };
        let mut names = Vec::new();
        for t in first["tools"].as_array().into_iter().flatten() {
            if let Some(decls) = t["functionDeclarations"].as_array() {
                names.extend(
                    decls
                        .iter()
                        .filter_map(|d| d["name"].as_str().map(str::to_owned)),
                );
            } else if let Some(n) = t["name"].as_str() {
                names.push(n.to_owned());
            }
            if let Some(tools) = t["tools"].as_array() {
                let ns = t["name"].as_str().unwrap_or_default();
                names.extend(
                    tools
                        .iter()
                        .filter_map(|d| d["name"].as_str().map(|n| format!("{ns}/{n}"))),
                );
            }
        }
        names
    }

    /// A description for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "{:?} exited {:?} after {:?}\n--- tool results the model received:\n{}\n--- stdout (tail):\n{}\n--- stderr (tail):\n{}",
            self.agent,
            self.status.code(),
            self.elapsed,
            self.tool_results().join("\n"),
            tail(&self.stdout, 4000),
            tail(&self.stderr, 3000)
        )
    }
}

fn tail(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut i = s.len() - n;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

/// A running model server.
struct Server {
    child: Child,
    port: u16,
    script: PathBuf,
    record: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        wait::reap(&mut self.child);
    }
}

/// A throwaway tree for one agent: HOME, the project, the model server.
pub struct Tree {
    pub agent: Agent,
    pub bin: PathBuf,
    tmp: Option<tempfile::TempDir>,
    /// The canonical root of the tree.
    pub root: PathBuf,
    /// The agent's `HOME` (`root/home`).
    pub home: PathBuf,
    /// The project: the agent's CWD (`root/work`).
    pub work: PathBuf,
    /// A directory outside the project, with no rule (`root/outside`).
    pub outside: PathBuf,
    /// The random marker in `~/.ssh/id_rsa`.
    pub secret: String,
    server: Server,
}

/// The default test policy; `{work}` and `{outside}` stand for those paths.
pub const POLICY: &str = r#"permissions:
  paths:
    allow: ["{work}/**"]
  commands:
    deny: ["^touch denied"]
    allow: ["^touch allowed\\.txt$"]
"#;

impl Tree {
    /// A fresh tree for `agent` with [`POLICY`], or `None` (after printing why)
    /// when the agent is not installed outside CI.
    pub fn new(agent: Agent) -> Option<Tree> {
        let Some(base) = base_without_git() else {
            return skip_or_fail(
                "every temporary directory lies under a `.git` (TMPDIR, /tmp, /var/tmp, /dev/shm): \
                 set TMPDIR to a directory outside any repository",
            );
        };
        Tree::new_in(agent, &base)
    }

    /// A fresh tree outside every tree `sandgate run` allows (see
    /// `tests/support/outside.rs`): what the agent writes in its home is
    /// then judged as in a real home, not allowed as a temp tree.
    pub fn new_outside_temp(agent: Agent) -> Option<Tree> {
        let Some(base) = outside_without_git() else {
            return skip_or_fail(
                "no directory outside the temp trees without a `.git` above it \
                 (target/tmp, /run/sandgate-tests, ~/.sandgate-tests)",
            );
        };
        Tree::new_in(agent, &base)
    }

    /// A fresh tree for `agent` (its settings, its model server) that runs
    /// `bin` instead of the agent's own binary: an ACP adapter of the agent
    /// (`codex-acp` for Codex), located with [`locate`]. `outside_temp` as
    /// in [`Tree::new_outside_temp`].
    pub fn with_binary(
        agent: Agent,
        bin: Result<PathBuf, String>,
        outside_temp: bool,
    ) -> Option<Tree> {
        let base = if outside_temp {
            outside_without_git()
        } else {
            base_without_git()
        };
        let Some(base) = base else {
            return skip_or_fail(
                "no temporary directory without a `.git` above it: \
                 set TMPDIR to a directory outside any repository",
            );
        };
        Tree::new_with(agent, &base, bin)
    }

    fn new_in(agent: Agent, base: &Path) -> Option<Tree> {
        Tree::new_with(agent, base, agent.locate())
    }

    fn new_with(agent: Agent, base: &Path, bin: Result<PathBuf, String>) -> Option<Tree> {
        let bin = match bin {
            Ok(b) => b,
            Err(why) => return skip_or_fail(&why),
        };
        if which("python3").is_none() {
            return skip_or_fail("`python3` is not on PATH (the model server): install python3");
        }
        if !no_git_above(base) {
            return skip_or_fail(&format!(
                "`{}` lies under a `.git`: the agent would take that as the project",
                base.display()
            ));
        }
        let tmp = tempfile::Builder::new()
            .prefix(&format!("sandgate-e2e-{}-", agent.name()))
            .tempdir_in(base)
            .unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let work = root.join("work");
        let outside = root.join("outside");
        for d in [
            &home,
            &work,
            &outside,
            &root.join("model"),
            &root.join("tmp"),
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        let secret = format!(
            "SANDGATE-E2E-SECRET-{:x}{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        );
        let ssh = home.join(".ssh");
        std::fs::create_dir_all(&ssh).unwrap();
        std::fs::write(
            ssh.join("id_rsa"),
            format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{secret}\n-----END OPENSSH PRIVATE KEY-----\n"),
        )
        .unwrap();
        let server = start_server(&root);
        let tree = Tree {
            agent,
            bin,
            tmp: Some(tmp),
            root,
            home,
            work,
            outside,
            secret,
            server,
        };
        tree.write_policy(POLICY);
        tree.write_agent_config();
        Some(tree)
    }

    /// `CODEX_HOME` (`~/.codex`).
    pub fn codex_home(&self) -> PathBuf {
        self.home.join(".codex")
    }

    /// The audit log sandgate writes (the default, in the tree's HOME).
    pub fn audit_log(&self) -> PathBuf {
        self.home.join(".sandgate/audit.jsonl")
    }

    /// The audit log's records.
    pub fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(self.audit_log())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The audit records whose subject contains `needle`.
    pub fn audit_for(&self, needle: &str) -> Vec<Value> {
        self.audit()
            .into_iter()
            .filter(|r| r["subject"].as_str().is_some_and(|s| s.contains(needle)))
            .collect()
    }

    /// Replace the user policy (`~/.sandgate/permissions.yaml`).
    pub fn write_policy(&self, policy: &str) {
        let file = self.home.join(".sandgate/permissions.yaml");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let text = policy
            .replace("{work}", &self.work.to_string_lossy())
            .replace("{outside}", &self.outside.to_string_lossy())
            .replace("{home}", &self.home.to_string_lossy());
        std::fs::write(file, text).unwrap();
    }

    /// The agent's settings, pointed at the model server.
    fn write_agent_config(&self) {
        match self.agent {
            Agent::Claude => {}
            Agent::Codex => {
                let dir = self.codex_home();
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(
                    dir.join("config.toml"),
                    format!(
                        "model = \"some-model\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"http://127.0.0.1:{}/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_KEY\"\n",
                        self.server.port
                    ),
                )
                .unwrap();
            }
            Agent::Gemini => {
                let dir = self.home.join(".gemini");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(
                    dir.join("settings.json"),
                    "{\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}\n}\n",
                )
                .unwrap();
            }
        }
    }

    /// The agent's user settings file that `sandgate hook install` edits.
    pub fn settings_file(&self) -> PathBuf {
        match self.agent {
            Agent::Claude => self.home.join(".claude/settings.json"),
            Agent::Codex => self.codex_home().join("hooks.json"),
            Agent::Gemini => self.home.join(".gemini/settings.json"),
        }
    }

    /// The agent confined by `sandgate run` (with `opts`, and sandgate's
    /// hook installed): it starts, its hook answers and the allowed command
    /// runs as without the sandbox; commands the hook lets through that
    /// overwrite the agent's user settings (dropping sandgate's hook) and
    /// make its project settings fail, because those are protected paths.
    /// The model is told, sandgate says why, and the settings keep the hook.
    pub fn assert_settings_held_when_confined(&self, opts: RunOpts) {
        self.install_hook(&[]);
        self.write_policy(
            r#"permissions:
  paths:
    allow: ["{work}/**", "{home}/**"]
  commands:
    allow: ["^touch allowed\\.txt$", "^mkdir -p ", "^echo "]
"#,
        );
        let user = self.settings_file();
        let before = std::fs::read_to_string(&user).unwrap();
        assert!(before.contains("sandgate"), "{before}");
        let project = match self.agent {
            Agent::Claude => ".claude/settings.json",
            Agent::Codex => ".codex/hooks.json",
            Agent::Gemini => ".gemini/settings.json",
        };
        let dir = Path::new(project).parent().unwrap().display().to_string();
        let shell = |command: &str| Step::shell(self.agent, command);
        let run = self.run(
            &Script::new(vec![
                shell("touch allowed.txt"),
                shell(&format!("echo '{{}}' > {}", user.display())),
                shell(&format!("mkdir -p {dir}")),
                shell(&format!("echo '{{}}' > {project}")),
            ]),
            &opts.confined(),
        );
        assert!(run.status.success(), "{}", run.describe());
        assert!(self.work.join("allowed.txt").exists(), "{}", run.describe());
        let after = std::fs::read_to_string(&user).unwrap();
        assert_eq!(after, before, "{}", run.describe());
        assert!(!self.work.join(project).exists(), "{}", run.describe());
        let results = run.tool_results().join("\n");
        // bash says "Permission denied", zsh (Claude Code's shell where it
        // is installed) "permission denied".
        assert!(
            results.to_lowercase().contains("permission denied"),
            "{results}"
        );
        assert!(
            run.stderr.contains("read-only to the confined program"),
            "{}",
            run.stderr
        );
    }

    /// `sandgate ARGS` in the tree (HOME, CODEX_HOME, CWD the project).
    pub fn sandgate(&self, args: &[&str]) -> std::process::Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
        self.clean_env(&mut cmd);
        cmd.current_dir(&self.work).args(args).stdin(Stdio::null());
        cmd.output_within(DEADLINE).unwrap()
    }

    /// `sandgate hook install AGENT ARGS`, which must succeed.
    pub fn install_hook(&self, args: &[&str]) -> String {
        let mut all = vec!["hook", "install", self.agent.name()];
        all.extend_from_slice(args);
        let out = self.sandgate(&all);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "sandgate {all:?} failed: {text}");
        text
    }

    fn clean_env(&self, cmd: &mut Command) {
        let path = std::env::var_os("PATH").unwrap_or_default();
        cmd.env_clear()
            .env("PATH", path)
            .env("HOME", &self.home)
            .env("USER", "root")
            .env("LANG", "C.UTF-8")
            .env("TMPDIR", self.root.join("tmp"))
            .env("CODEX_HOME", self.codex_home())
            .env("SANDGATE_MANAGED_CONFIG", self.root.join("no-managed.yaml"))
            .env("NO_COLOR", "1");
    }

    /// Check that every path the agent is given lies in this fresh tree.
    fn check_contained(&self) {
        let tmp = self.tmp.as_ref().expect("tree kept");
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        assert_eq!(root, self.root, "the tree moved");
        assert!(
            root.components().count() >= 3,
            "refusing to run an agent in `{}`: not a temporary tree",
            root.display()
        );
        if let Some(real) = std::env::var_os("HOME") {
            assert!(
                !Path::new(&real).starts_with(&root) && Path::new(&real) != self.home,
                "the tree `{}` must not be or hold the real HOME",
                root.display()
            );
        }
        for p in [&self.home, &self.work, &self.outside, &self.codex_home()] {
            assert!(
                p.starts_with(&root) && p != &root,
                "`{}` is not inside the tree `{}`",
                p.display(),
                root.display()
            );
        }
    }

    /// The port of the model server on 127.0.0.1.
    pub fn model_port(&self) -> u16 {
        self.server.port
    }

    /// Gives the model server `script` for the next conversation, and
    /// checks first that every path the agent is given lies in this tree.
    pub fn set_script(&self, script: &Script) {
        self.check_contained();
        let steps: Vec<Value> = script.steps.iter().map(|s| s.0.clone()).collect();
        std::fs::write(
            &self.server.script,
            serde_json::to_string_pretty(&json!({"steps": steps, "final": "all done"})).unwrap(),
        )
        .unwrap();
        std::fs::write(&self.server.record, "").unwrap();
    }

    /// The agent's command for `script` as `opts` say (the script given to
    /// the model server and its record emptied first), for a test that
    /// starts it itself (e.g. in a pseudo-terminal).
    pub fn command(&self, script: &Script, opts: &RunOpts) -> Command {
        self.check_contained();
        let steps: Vec<Value> = script.steps.iter().map(|s| s.0.clone()).collect();
        std::fs::write(
            &self.server.script,
            serde_json::to_string_pretty(&json!({"steps": steps, "final": "all done"})).unwrap(),
        )
        .unwrap();
        std::fs::write(&self.server.record, "").unwrap();
        let prompt = "Do the task.";
        let mut cmd = match (opts.wrap.split_first(), opts.confined) {
            (Some((first, rest)), confined) => {
                let mut c = Command::new(first);
                c.args(rest);
                if confined {
                    c.arg(env!("CARGO_BIN_EXE_sandgate")).arg("run");
                    if !opts.asking {
                        c.arg("--no-ui");
                    }
                    c.arg("--");
                }
                c.arg(&self.bin);
                c
            }
            (None, true) => {
                let mut c = Command::new(env!("CARGO_BIN_EXE_sandgate"));
                c.args(["run", "--no-ui", "--"]).arg(&self.bin);
                c
            }
            (None, false) => Command::new(&self.bin),
        };
        self.clean_env(&mut cmd);
        if opts.confined {
            cmd.env("SANDGATE_SANDBOX", "1");
        }
        cmd.current_dir(&self.work);
        match self.agent {
            Agent::Claude => {
                cmd.env(
                    "ANTHROPIC_BASE_URL",
                    format!("http://127.0.0.1:{}", self.server.port),
                )
                .env("ANTHROPIC_API_KEY", "sk-test")
                .env("DISABLE_TELEMETRY", "1")
                .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                .env("DISABLE_AUTOUPDATER", "1");
                if let Some(m) = &opts.model {
                    cmd.args(["--model", m]);
                }
                let mode = match opts.mode {
                    Mode::Default => "default",
                    Mode::AcceptEdits => "acceptEdits",
                    Mode::Bypass => {
                        // As root, Claude Code refuses the bypass modes without it.
                        cmd.env("IS_SANDBOX", "1");
                        "bypassPermissions"
                    }
                };
                cmd.args(["-p", prompt, "--output-format", "stream-json", "--verbose"])
                    .args(["--no-session-persistence", "--permission-mode", mode]);
                cmd.args(&opts.args);
            }
            Agent::Codex => {
                cmd.env("FAKE_KEY", "sk-test");
                cmd.args(["exec", "--skip-git-repo-check", "--json"]);
                if let Some(m) = &opts.model {
                    cmd.args(["-m", m]);
                }
                match opts.mode {
                    Mode::Default | Mode::AcceptEdits => cmd.args(["-s", "workspace-write"]),
                    Mode::Bypass => cmd.arg("--dangerously-bypass-approvals-and-sandbox"),
                };
                cmd.args(&opts.args).arg(prompt);
            }
            Agent::Gemini => {
                cmd.env(
                    "GOOGLE_GEMINI_BASE_URL",
                    format!("http://127.0.0.1:{}", self.server.port),
                )
                .env("GEMINI_API_KEY", "test-key");
                if let Some(m) = &opts.model {
                    cmd.args(["-m", m]);
                }
                cmd.args(["-p", prompt, "--output-format", "json", "--skip-trust"]);
                match opts.mode {
                    Mode::Default | Mode::AcceptEdits => cmd.args(["--approval-mode", "auto_edit"]),
                    Mode::Bypass => cmd.arg("--yolo"),
                };
                cmd.args(&opts.args);
            }
        }
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// What the model server recorded since the last command: one JSON
    /// request a line.
    pub fn recorded(&self) -> String {
        std::fs::read_to_string(&self.server.record).unwrap_or_default()
    }

    /// Run the agent headless with `script`, in the project.
    pub fn run(&self, script: &Script, opts: &RunOpts) -> Run {
        let mut cmd = self.command(script, opts);
        let out_path = self.root.join("agent.out");
        let err_path = self.root.join("agent.err");
        cmd.stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path).unwrap())
            .stderr(std::fs::File::create(&err_path).unwrap());
        let start = Instant::now();
        // Its own process group, so that whatever it started ends with it.
        cmd.process_group(0);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `{}`: {e}", self.bin.display()));
        let group = Group(child.id());
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > RUN_TIMEOUT {
                drop(group);
                wait::reap(&mut child);
                panic!(
                    "{:?} did not finish within {RUN_TIMEOUT:?}; its output is in `{}`",
                    self.agent,
                    self.root.display()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let elapsed = start.elapsed();
        drop(group);
        let read = |p: &Path| {
            let mut s = String::new();
            let _ = std::fs::File::open(p).and_then(|mut f| f.read_to_string(&mut s));
            s
        };
        let requests = read(&self.server.record)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        Run {
            agent: self.agent,
            status,
            stdout: read(&out_path),
            stderr: read(&err_path),
            requests,
            elapsed,
        }
    }

    /// Assert what the `touch allowed.txt`, `touch denied.txt` pair (and any
    /// `touch unmatched.txt` after it) did in `run`: the allowed file landed,
    /// the others did not, and the model was told which rule denied the
    /// second. `results` is how many tool results the model received.
    pub fn assert_touches(&self, run: &Run, results: usize, why: &str) {
        assert!(run.status.success(), "{why}: {}", run.describe());
        assert!(
            self.work.join("allowed.txt").exists(),
            "{why}: {}",
            run.describe()
        );
        for name in ["denied.txt", "unmatched.txt"] {
            assert!(
                !self.work.join(name).exists(),
                "{why}: {name}: {}",
                run.describe()
            );
        }
        let got = run.tool_results();
        assert_eq!(got.len(), results, "{why}: {}", run.describe());
        assert!(
            got[1].contains("sandgate") && got[1].contains("^touch denied"),
            "{why}: the model is told which rule denied it: {}",
            got[1]
        );
    }

    /// The verdicts of the audit records of `surface`, in order.
    pub fn verdicts_of(&self, surface: &str) -> Vec<String> {
        self.audit()
            .into_iter()
            .filter(|r| r["surface"] == surface)
            .map(|r| r["verdict"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    /// Assert the secret marker reached the model nowhere in `run`.
    pub fn assert_secret_kept(&self, run: &Run) {
        assert!(
            !run.model_saw(&self.secret),
            "the model received the content of ~/.ssh/id_rsa\n{}",
            run.describe()
        );
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if std::env::var_os("SANDGATE_E2E_KEEP").is_some() {
            if let Some(t) = self.tmp.take() {
                eprintln!("kept the tree `{}`", t.keep().display());
            }
        }
    }
}

/// A process group, killed when dropped: an agent's helpers (MCP servers,
/// shells it left running) die with the run.
struct Group(u32);

impl Drop for Group {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0)])
            .stderr(Stdio::null())
            .status_within(DEADLINE);
    }
}

fn start_server(root: &Path) -> Server {
    let script = root.join("model/script.json");
    let record = root.join("model/record.jsonl");
    std::fs::write(&script, "{\"steps\": []}").unwrap();
    let server_py =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents_common/model_server.py");
    let mut child = Command::new("python3")
        .arg(&server_py)
        .arg(&script)
        .arg(&record)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(root.join("model/server.err")).unwrap())
        .spawn()
        .expect("start the model server");
    // It prints its port once it accepts connections.
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| {
            wait::reap(&mut child);
            panic!("the model server did not start within 30 s")
        });
    let port = line
        .trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("the model server did not start: {line:?}"));
    Server {
        child,
        port,
        script,
        record,
    }
}

impl Tree {
    /// Register `sandgate mcp` with the agent as its README says (for Claude
    /// Code, a file for `--mcp-config`, returned).
    pub fn register_mcp(&self) -> PathBuf {
        let exe = env!("CARGO_BIN_EXE_sandgate");
        match self.agent {
            Agent::Claude => {
                let file = self.root.join("mcp.json");
                let config = json!({"mcpServers": {"sandgate": {"type": "stdio", "command": exe, "args": ["mcp"]}}});
                std::fs::write(&file, serde_json::to_string_pretty(&config).unwrap()).unwrap();
                file
            }
            Agent::Codex => {
                let file = self.codex_home().join("config.toml");
                let mut text = std::fs::read_to_string(&file).unwrap();
                text.push_str(&format!(
                    "\n[mcp_servers.sandgate]\ncommand = {}\nargs = [\"mcp\"]\ndefault_tools_approval_mode = \"approve\"\n",
                    Value::from(exe)
                ));
                std::fs::write(&file, text).unwrap();
                file
            }
            Agent::Gemini => {
                let file = self.home.join(".gemini/settings.json");
                let mut v: Value =
                    serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
                v["mcpServers"] = json!({"sandgate": {"command": exe, "args": ["mcp"]}});
                std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
                file
            }
        }
    }

    /// Through `sandgate mcp`: read `~/.ssh/id_rsa`, run the allowed and the
    /// denied `touch`, then `extra`.
    pub fn mcp_floor_and_exec(&self, extra: Vec<Step>) -> Script {
        let mut steps = vec![
            self.mcp_call("file_read", json!({"path": self.home.join(".ssh/id_rsa")})),
            self.mcp_call("exec_run", json!({"command": "touch allowed.txt"})),
            self.mcp_call("exec_run", json!({"command": "touch denied.txt"})),
        ];
        steps.extend(extra);
        Script::new(steps)
    }

    /// What `mcp_floor_and_exec` must show: the key never reached the model,
    /// the floor was named, only the allowed file landed, and the MCP
    /// server's audit records are `verdicts`.
    pub fn assert_mcp_floor_and_exec(&self, run: &Run, verdicts: &[&str]) {
        assert!(run.status.success(), "{}", run.describe());
        let results = run.tool_results();
        assert_eq!(results.len(), verdicts.len(), "{}", run.describe());
        self.assert_secret_kept(run);
        assert!(results[0].contains("built-in floor"), "{}", results[0]);
        assert!(self.work.join("allowed.txt").exists(), "{}", run.describe());
        assert!(!self.work.join("denied.txt").exists(), "{}", run.describe());
        assert!(results[2].contains("^touch denied"), "{}", results[2]);
        assert_eq!(self.verdicts_of("mcp"), verdicts, "{:#?}", self.audit());
    }

    /// A call of `sandgate mcp`'s tool `tool`, as the agent offers it to the
    /// model: `mcp__sandgate__TOOL` (Claude Code), `TOOL` in the namespace
    /// `mcp__sandgate` (Codex CLI), `mcp_sandgate_TOOL` (Gemini CLI).
    pub fn mcp_call(&self, tool: &str, args: Value) -> Step {
        match self.agent {
            Agent::Claude => Step::call(&format!("mcp__sandgate__{tool}"), args),
            Agent::Codex => {
                let mut step = Step::call(tool, args);
                step.0["namespace"] = json!("mcp__sandgate");
                step
            }
            Agent::Gemini => Step::call(&format!("mcp_sandgate_{tool}"), args),
        }
    }
}

/// Every ASK in `records` says what it became and who settled it, on its own
/// line or on a later line about the same surface and subject (the MCP server
/// logs the question, then its outcome); no human is named as having answered
/// (the runs are headless), and none became an allow. Returns the settling
/// record of each ASK, in order.
pub fn assert_asks_settled(records: &[Value]) -> Vec<Value> {
    let mut settled = Vec::new();
    let mut seen = Vec::new();
    for (i, r) in records.iter().enumerate() {
        if r["verdict"] != "ask" {
            continue;
        }
        let (at, outcome) = if r["became"].is_string() {
            (i, r)
        } else {
            records
                .iter()
                .enumerate()
                .skip(i + 1)
                .find(|(_, l)| {
                    l["surface"] == r["surface"]
                        && l["subject"] == r["subject"]
                        && l["became"].is_string()
                })
                .unwrap_or_else(|| panic!("an ASK that does not say what became of it: {r}"))
        };
        // MCP's stateless revision (Claude Code 2.1.332) asks in two calls:
        // the first returns the question, the retried one carries the
        // answer and is judged again. One question, one outcome.
        if seen.contains(&at) {
            continue;
        }
        seen.push(at);
        assert!(outcome["answered_by"].is_string(), "{outcome}");
        assert_ne!(outcome["answered_by"], "human", "{outcome}");
        assert!(
            !outcome["became"]
                .as_str()
                .unwrap_or_default()
                .starts_with("allowed"),
            "{outcome}"
        );
        settled.push(outcome.clone());
    }
    settled
}
