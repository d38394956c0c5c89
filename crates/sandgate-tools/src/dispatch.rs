//! The dispatcher: one entry point for every tool call, and the gate in front
//! of each one.
//!
//! For a gated tool the order is fixed: check the arguments, ask the policy,
//! put an ASK to the [`Resolver`], record the decision, and only then run the
//! tool — on the canonical path the gate judged.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use sandgate_policy::{canon, Context, Decision, Policy, ToolCall, ToolKind, Verdict};
use sandgate_sandbox::supervise::{Attached, OUTER_NOTE};
use sandgate_sandbox::{Environment, Isolation};
use serde_json::{json, Value};

use crate::error::ToolError;
use crate::file;
use crate::grep::{self, GrepQuery};
use crate::jobs::{tail_lines, Job, JobState, JobTable};
use crate::judged::{self, Target};
use crate::output::ToolOutput;
use crate::params::Params;
use crate::resolver::settle;
use crate::spec;
use crate::walk::{self, EntryGate, WalkOptions};
use sandgate_policy::ask::{Resolution, Resolver};

/// Default seconds `exec_run` waits before a command becomes a background job.
pub const DEFAULT_EXEC_TIMEOUT_S: u64 = 15;
/// The most output `exec_run` and `exec_tail` return in one answer; older output is cut.
pub const MAX_EXEC_OUTPUT: usize = 64 * 1024;

/// Called with every gated decision: `(tool, decision, resolution)`, the
/// resolution being how an ASK was settled (for the decision that settled it).
/// The binary appends it to the audit log.
pub type DecisionSink = Box<dyn Fn(&str, &Decision, Option<&Resolution>) + Send + Sync>;

/// Serves the filtering proxy of a command whose network is filtered by
/// host (`permissions.network`): given where its proxy socket arrives, the
/// lists, the command and who is asked about a host the lists do not
/// decide, it starts serving, and returns what stops it and what decides
/// the command's own connects to addresses.
pub type NetworkServe = Box<
    dyn Fn(
            sandgate_sandbox::netns::Outside,
            sandgate_policy::network::NetworkPolicy,
            &str,
            NetworkAsk,
        ) -> std::io::Result<ServedNetwork>
        + Send
        + Sync,
>;

/// Who is asked about a host no entry of `permissions.network` decides,
/// for one command, and with what: the resolver (`None`: nobody can
/// answer, the host is refused), the policy in force when the command
/// started and the context (an "always" answer is written with them, see
/// [`settle`]), and what takes the policy reloaded after such a write (the
/// dispatcher's own, so the next call knows the new entry).
pub struct NetworkAsk {
    /// Who answers; `None`: nobody can.
    pub resolver: Option<Arc<dyn Resolver>>,
    /// The policy in force.
    pub policy: Policy,
    /// The context calls are made in.
    pub ctx: Context,
    /// Takes the policy reloaded after an "always" answer.
    pub reloaded: Box<dyn Fn(Policy) + Send + Sync>,
}

/// A command's network, served: what stops its proxy, and what decides its
/// own connects to addresses.
pub type ServedNetwork = (
    Box<dyn FnOnce() + Send>,
    Arc<dyn sandgate_sandbox::supervisor::direct::Route>,
);

/// Runs tool calls behind the gate.
pub struct Dispatcher {
    policy: Arc<RwLock<Arc<Policy>>>,
    ctx: Arc<Context>,
    resolver: Arc<dyn Resolver>,
    jobs: JobTable,
    record: DecisionSink,
    network: Option<NetworkServe>,
}

impl Dispatcher {
    /// A dispatcher over `policy` in `ctx`, asking `resolver` on ASK and
    /// reporting every gated decision to `record`.
    pub fn new(
        policy: Policy,
        ctx: Context,
        resolver: Arc<dyn Resolver>,
        record: DecisionSink,
    ) -> Self {
        Dispatcher {
            policy: Arc::new(RwLock::new(Arc::new(policy))),
            ctx: Arc::new(ctx),
            resolver,
            jobs: JobTable::new(),
            record,
            network: None,
        }
    }

    /// Who serves the proxy of a command whose network is filtered by host;
    /// without one, such a command is not run.
    pub fn with_network(mut self, serve: NetworkServe) -> Self {
        self.network = Some(serve);
        self
    }

    /// The policy in force (it changes when an "always" answer adds a rule).
    pub fn policy(&self) -> Arc<Policy> {
        Arc::clone(&self.policy.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The context calls are made in.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The background jobs.
    pub fn jobs(&self) -> &JobTable {
        &self.jobs
    }

    /// Run one tool call, putting an ASK to the dispatcher's own resolver.
    /// `tool` may carry the `client_` prefix.
    pub fn call(&self, tool: &str, params: &Value) -> Result<ToolOutput, ToolError> {
        let resolver = Arc::clone(&self.resolver);
        self.call_with(tool, params, resolver.as_ref())
    }

    /// What the gate would decide for this call, without asking anyone,
    /// recording or running anything; `None` for a tool outside the gate.
    /// Fails like [`Dispatcher::call`] on an unknown tool or bad arguments.
    pub fn preview(&self, tool: &str, params: &Value) -> Result<Option<Decision>, ToolError> {
        let (name, _known) = lookup(tool)?;
        if !Self::is_gated(name) {
            return Ok(None);
        }
        check_params(name, params)?;
        Ok(Some(self.evaluate(name, params, &self.policy())?))
    }

    /// Run one tool call, putting an ASK to `resolver`; a host no entry of
    /// `permissions.network` decides is refused to an `exec_run` command.
    pub fn call_with(
        &self,
        tool: &str,
        params: &Value,
        resolver: &dyn Resolver,
    ) -> Result<ToolOutput, ToolError> {
        self.call_asking(tool, params, resolver, None)
    }

    /// [`Dispatcher::call_with`], with `network` asked about a host no
    /// entry of `permissions.network` decides, while an `exec_run`
    /// command runs (`None`: such a host is refused).
    pub fn call_asking(
        &self,
        tool: &str,
        params: &Value,
        resolver: &dyn Resolver,
        network: Option<Arc<dyn Resolver>>,
    ) -> Result<ToolOutput, ToolError> {
        let (name, _known) = lookup(tool)?;
        let p = check_params(name, params)?;
        let r = resolver;
        match name {
            "file_read" => {
                let offset = p.opt_u64("offset", 1, u64::MAX)?;
                let limit = p.opt_u64("limit", 1, 100_000)?;
                let path = self.gate_path(name, &p, params, r)?;
                file::read(&path, offset, limit)
            }
            "file_write" => {
                let content = p.str("content")?;
                let path = self.gate_path(name, &p, params, r)?;
                file::write(&path, content)
            }
            "file_edit" => {
                let old = p.str("old_string")?;
                let new = p.str("new_string")?;
                let all = p.opt_bool("replace_all")?.unwrap_or(false);
                let path = self.gate_path(name, &p, params, r)?;
                file::edit(&path, old, new, all)
            }
            "file_head_tail" => {
                let head = p.opt_u64("head", 0, 10_000)?.unwrap_or(10);
                let tail = p.opt_u64("tail", 0, 10_000)?.unwrap_or(10);
                let path = self.gate_path(name, &p, params, r)?;
                file::head_tail(&path, head, tail)
            }
            "file_list" => {
                let depth = p.opt_u64("depth", 1, walk::MAX_LIST_DEPTH)?.unwrap_or(1);
                let path = self.gate_path(name, &p, params, r)?;
                walk::list(&path, depth, &self.entry_gate())
            }
            "file_find" => {
                let glob = p.str("glob")?;
                let max = p.opt_u64("max_results", 1, 10_000)?.unwrap_or(500) as usize;
                let options = WalkOptions {
                    hidden: p.opt_bool("hidden")?.unwrap_or(false),
                };
                let path = self.gate_path(name, &p, params, r)?;
                walk::find(&path, glob, max, options, &self.entry_gate())
            }
            "file_count" => {
                let options = WalkOptions {
                    hidden: p.opt_bool("hidden")?.unwrap_or(false),
                };
                let path = self.gate_path(name, &p, params, r)?;
                walk::count(&path, options, &self.entry_gate())
            }
            "file_grep" => {
                let query = GrepQuery {
                    pattern: p.str("pattern")?,
                    glob: p.opt_str("glob")?,
                    ignore_case: p.opt_bool("ignore_case")?.unwrap_or(false),
                    max_results: p.opt_u64("max_results", 1, 10_000)?.unwrap_or(200) as usize,
                    options: WalkOptions {
                        hidden: p.opt_bool("hidden")?.unwrap_or(false),
                    },
                };
                let path = self.gate_path(name, &p, params, r)?;
                grep::grep(&path, &query, &self.entry_gate())
            }
            "exec_run" => self.exec_run(&p, params, r, network),
            "exec_status" => {
                let job = self
                    .jobs
                    .get(p.opt_u64("id", 1, u64::MAX)?.ok_or_else(need_id)?)?;
                let summary = job.summary();
                Ok(ToolOutput::new(describe_job(&job), summary))
            }
            "exec_tail" => {
                let job = self
                    .jobs
                    .get(p.opt_u64("id", 1, u64::MAX)?.ok_or_else(need_id)?)?;
                let lines = p.opt_u64("lines", 1, 5000)?.unwrap_or(50) as usize;
                let (all, _) = job.output();
                let tail = clip_front(tail_lines(&all, lines));
                let text = format!(
                    "{tail}{}[{}]\n",
                    newline_if_needed(&tail),
                    describe_job(&job)
                );
                Ok(ToolOutput::new(
                    text,
                    json!({"job": job.summary(), "tail": tail}),
                ))
            }
            "exec_kill" => {
                let job = self
                    .jobs
                    .get(p.opt_u64("id", 1, u64::MAX)?.ok_or_else(need_id)?)?;
                let before = job.state();
                let state = job.kill();
                let text = if before == JobState::Running {
                    format!("stopped job {}: {}", job.id(), state.describe())
                } else {
                    format!("job {} had already ended: {}", job.id(), state.describe())
                };
                Ok(ToolOutput::new(text, job.summary()))
            }
            "exec_stat" => {
                let jobs = self.jobs.all();
                let mut text = String::new();
                if jobs.is_empty() {
                    text.push_str("no background jobs\n");
                }
                for j in &jobs {
                    text.push_str(&format!("{}\n", describe_job(j)));
                }
                let list: Vec<Value> = jobs.iter().map(|j| j.summary()).collect();
                Ok(ToolOutput::new(text, json!({"jobs": list})))
            }
            other => Err(ToolError::invalid(format!("there is no tool `{other}`"))),
        }
    }

    fn entry_gate(&self) -> EntryGate {
        EntryGate::new(self.policy(), Arc::clone(&self.ctx))
    }

    /// The gate's decision for a gated call, before anyone is asked. For
    /// `exec_run`, a `cwd` inside a denied directory denies the call too.
    fn evaluate(&self, tool: &str, params: &Value, policy: &Policy) -> Result<Decision, ToolError> {
        let call = ToolCall::new(tool, params.clone());
        let decision = policy.evaluate(&call, &self.ctx);
        if tool != "exec_run" || !policy.settings().sandbox || decision.verdict == Verdict::Deny {
            return Ok(decision);
        }
        let cwd = self.exec_cwd(params.get("cwd").and_then(Value::as_str), policy)?;
        let place = policy.decide_canonical_path(&cwd, sandgate_policy::Access::Read);
        if place.verdict == Verdict::Deny {
            return Ok(Decision {
                verdict: Verdict::Deny,
                subject: decision.subject,
                rule: place.rule,
                reason: format!("the working directory is denied: {}", place.reason),
            });
        }
        Ok(decision)
    }

    fn exec_cwd(&self, raw: Option<&str>, policy: &Policy) -> Result<PathBuf, ToolError> {
        let cwd = match raw {
            None => self.ctx.cwd.clone(),
            Some(raw) => policy
                .canonical_path(raw, &self.ctx)
                .map_err(|e| ToolError::invalid(format!("`cwd` `{raw}` cannot be used: {e}")))?,
        };
        if !cwd.is_dir() {
            return Err(ToolError::invalid(format!(
                "`cwd` `{}` is not an existing directory",
                cwd.display()
            )));
        }
        Ok(cwd)
    }

    /// Decide a gated call: evaluate, settle an ASK with `resolver`, record,
    /// and fail on DENY.
    pub fn gate(
        &self,
        tool: &str,
        params: &Value,
        resolver: &dyn Resolver,
    ) -> Result<Decision, ToolError> {
        let policy = self.policy();
        let decision = self.evaluate(tool, params, &policy)?;
        self.decide(tool, &policy, decision, resolver)
    }

    fn decide(
        &self,
        tool: &str,
        policy: &Policy,
        decision: Decision,
        resolver: &dyn Resolver,
    ) -> Result<Decision, ToolError> {
        (self.record)(tool, &decision, None);
        let decision = if decision.verdict == Verdict::Ask {
            let settled = settle(policy, &self.ctx, tool, &decision, resolver);
            if let Some(reloaded) = settled.reloaded {
                *self.policy.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(reloaded);
            }
            (self.record)(tool, &settled.decision, Some(&settled.resolution));
            settled.decision
        } else {
            decision
        };
        match decision.verdict {
            Verdict::Deny => Err(ToolError::Denied(Box::new(decision))),
            _ => Ok(decision),
        }
    }

    /// Gate a file tool and return the canonical path it judged, pinned:
    /// the path is canonicalized and what is there noted before the gate
    /// runs, and the gate must have judged that same path. The tool then opens
    /// exactly that path (see [`crate::judged`]).
    fn gate_path(
        &self,
        tool: &str,
        p: &Params<'_>,
        params: &Value,
        resolver: &dyn Resolver,
    ) -> Result<Target, ToolError> {
        let raw = p.opt_str("path")?.unwrap_or("");
        let before = self.policy().canonical_path(raw, &self.ctx);
        let pinned = before.as_ref().ok().map(|path| Target::pin(path.clone()));
        let decision = self.gate(tool, params, resolver)?;
        let canonical = before
            .map_err(|e| ToolError::invalid(format!("the path `{raw}` cannot be used: {e}")))?;
        let target = pinned.unwrap_or_else(|| Target::pin(canonical.clone()));
        // With the sandbox on, the decision's subject is the canonical path
        // the gate judged; it must be the one pinned.
        if self.policy().settings().sandbox && Path::new(&decision.subject) != target.path {
            return Err(judged::changed(&target.path));
        }
        Ok(target)
    }

    fn exec_run(
        &self,
        p: &Params<'_>,
        params: &Value,
        resolver: &dyn Resolver,
        network: Option<Arc<dyn Resolver>>,
    ) -> Result<ToolOutput, ToolError> {
        let command = p.str("command")?;
        let timeout = p
            .opt_u64("timeout_s", 0, 3600)?
            .unwrap_or(DEFAULT_EXEC_TIMEOUT_S);
        let policy = self.policy();
        let cwd = self.exec_cwd(p.opt_str("cwd")?, &policy)?;
        if !self.jobs.has_room() {
            return Err(ToolError::failed(format!(
                "{} background jobs are already running; stop one with `exec_kill` first",
                crate::jobs::MAX_RUNNING_JOBS
            )));
        }
        self.gate("exec_run", params, resolver)?;
        let policy = self.policy();
        let settings = policy.settings();
        // Absolute globs, so a `cwd` other than the server's does not move them.
        let deny: Vec<String> = policy.compiled_path_globs().1.to_vec();
        // The writable workdir stays anchored to the server's working directory
        // whatever `cwd` the call asks for; the command itself starts in `cwd`.
        let config = settings.isolation.as_ref().map(|(c, _)| {
            let mut c = c.clone();
            let workdir = c.workdir.clone().unwrap_or_else(|| "./".into());
            let expanded = canon::expand_tilde(&workdir, &self.ctx.home);
            let absolute = canon::normalize_lexically(&self.ctx.cwd.join(expanded));
            c.workdir = Some(absolute.to_string_lossy().into_owned());
            c
        });
        let env = Environment::new(cwd.clone(), self.ctx.home.clone());
        let (config, filtered) = crate::network::isolation_config(&policy, config.as_ref());
        let mut isolation = Isolation::new(config.as_ref(), settings.sandbox, &deny, &env)
            .map_err(|e| ToolError::failed(format!("cannot isolate the command: {e}")))?;
        if filtered {
            isolation.filter_network();
        }
        let mut notes = String::new();
        for n in isolation.notices() {
            notes.push_str(&format!("[sandgate: isolation {n}]\n"));
        }
        let prepared = isolation
            .command(command)
            .map_err(|e| ToolError::failed(format!("cannot isolate the command: {e}")))?;
        let cwd_text = cwd.display().to_string();
        let job = Job::spawn(prepared.command, command, &cwd_text)?;
        let mut route = None;
        if let Some(outside) = prepared.network {
            let lists = policy.network().cloned().unwrap_or_default();
            let shared = Arc::clone(&self.policy);
            let ask = NetworkAsk {
                resolver: network,
                policy: (*policy).clone(),
                ctx: (*self.ctx).clone(),
                reloaded: Box::new(move |reloaded| {
                    *shared.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(reloaded);
                }),
            };
            let served = match &self.network {
                Some(serve) => serve(outside, lists, command, ask),
                None => Err(std::io::Error::other("this server has no network proxy")),
            };
            match served {
                // The proxy ends with the command (a daemon it left behind
                // has no network from then on).
                Ok((stop, served)) => {
                    route = Some(served);
                    let watched = Arc::clone(&job);
                    std::thread::spawn(move || {
                        while watched.wait(Duration::from_secs(3600)) == JobState::Running {}
                        stop();
                    });
                }
                Err(e) => {
                    // Without its proxy the command reaches no host: stop it.
                    let _ = job.kill();
                    return Err(ToolError::failed(format!(
                        "the network proxy did not start, so the command was stopped: {e}"
                    )));
                }
            }
        }
        if let Some(mut supervision) = prepared.supervision {
            // The command's own connects to addresses are decided by the lists.
            if let Some(route) = route {
                supervision.route_network(route);
            }
            match supervision.attach() {
                Ok(Attached::Supervising) => {}
                Ok(Attached::Outer) => notes.push_str(&format!("[sandgate: {OUTER_NOTE}]\n")),
                Err(e) => {
                    // Nothing may run unsupervised: the command is ended.
                    let _ = job.kill();
                    return Err(ToolError::failed(format!(
                        "sandgate's supervisor did not start, so the command was stopped: {e}"
                    )));
                }
            }
        }
        let state = job.wait(Duration::from_secs(timeout));
        let (output, dropped) = job.output();
        let shown = clip_front(&output);
        let cut = dropped + (output.len() - shown.len()) as u64;
        let mut text = notes;
        if cut > 0 {
            text.push_str(&format!(
                "[sandgate: the first {cut} bytes of output are not shown]\n"
            ));
        }
        text.push_str(&shown);
        text.push_str(newline_if_needed(&text));
        if state == JobState::Running {
            let id = self.jobs.adopt(Arc::clone(&job));
            text.push_str(&format!(
                "[sandgate: still running after {timeout} s; it continues as background job {id}. \
                 Use `exec_tail` to read its output, `exec_status` for its state, `exec_kill` to stop it]\n"
            ));
            Ok(ToolOutput::new(
                text,
                json!({"state": "running", "job_id": id, "exit_code": null, "output": shown, "mode": format!("{:?}", isolation.mode()).to_lowercase()}),
            ))
        } else {
            text.push_str(&format!("[{}]\n", state.describe()));
            let code = match state {
                JobState::Exited(c) => Some(c),
                _ => None,
            };
            Ok(ToolOutput::new(
                text,
                json!({"state": state.as_str(), "job_id": null, "exit_code": code, "output": shown, "mode": format!("{:?}", isolation.mode()).to_lowercase()}),
            ))
        }
    }

    /// Whether a tool is gated (file and exec tools) or not (job inspection).
    pub fn is_gated(tool: &str) -> bool {
        sandgate_policy::request::tool_kind(tool) != ToolKind::OutOfScope
    }
}

/// The tool called `tool` (with or without the `client_` prefix).
fn lookup(tool: &str) -> Result<(&str, spec::ToolSpec), ToolError> {
    let name = tool.strip_prefix("client_").unwrap_or(tool);
    match spec::specs().into_iter().find(|s| s.name == name) {
        Some(known) => Ok((name, known)),
        None => Err(ToolError::invalid(format!(
            "there is no tool `{tool}`; the tools are {}",
            spec::specs()
                .iter()
                .map(|s| format!("`{}`", s.name))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Check the arguments against the names the tool's schema declares.
fn check_params<'a>(name: &'a str, params: &Value) -> Result<Params<'a>, ToolError> {
    let (_, known) = lookup(name)?;
    let names: Vec<&str> = known.input_schema["properties"]
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    Params::new(name, params, &names)
}

fn need_id() -> ToolError {
    ToolError::invalid("the job tools need the parameter `id`")
}

fn newline_if_needed(text: &str) -> &'static str {
    if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n"
    }
}

/// The last [`MAX_EXEC_OUTPUT`] bytes of `text`, cut at a character boundary.
fn clip_front(text: &str) -> String {
    if text.len() <= MAX_EXEC_OUTPUT {
        return text.to_string();
    }
    let mut start = text.len() - MAX_EXEC_OUTPUT;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_string()
}

fn describe_job(job: &Job) -> String {
    format!(
        "job {}: `{}` in {}: {} after {:.1} s",
        job.id(),
        job.command,
        job.cwd,
        job.state().describe(),
        job.runtime().as_secs_f64()
    )
}
