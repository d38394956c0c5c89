//! Agent hooks: sandgate as the pre-tool gate of Claude Code, Codex CLI and Gemini CLI.
//!
//! The agent spawns `sandgate hook AGENT` for every tool call, writes one JSON
//! document on stdin and reads the answer in its own wire format on stdout.
//! This path is kept short on purpose: no async runtime, and the policy comes
//! through the compiled-policy cache (`sandgate_policy::cache`).

pub mod claude;
pub mod gemini;
pub mod install;
pub mod trust;

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

use sandgate_policy::{Context, Decision, ToolCall, ToolKind, Verdict};
use serde_json::Value;

use crate::setup::GlobalArgs;
use crate::EXIT_CANNOT_CHECK;

/// The largest payload read from stdin (a `Write` carries the whole file).
const MAX_PAYLOAD_BYTES: u64 = 64 * 1024 * 1024;

/// The agents sandgate can gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    /// Claude Code.
    Claude,
    /// Codex CLI (Claude Code's wire format).
    Codex,
    /// Gemini CLI.
    Gemini,
}

impl Agent {
    /// The lowercase name, as on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
        }
    }

    /// The name people know the agent by.
    pub fn display_name(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex CLI",
            Agent::Gemini => "Gemini CLI",
        }
    }
}

use crate::agentcall::{map, pattern};
pub use crate::agentcall::{parse_payload, InputError, Payload};

/// The strictest of several decisions (the first one of that verdict).
pub fn strictest(decisions: Vec<(ToolCall, Decision)>) -> Option<(ToolCall, Decision)> {
    let mut best: Option<(ToolCall, Decision)> = None;
    for (call, decision) in decisions {
        if best
            .as_ref()
            .is_none_or(|(_, b)| decision.verdict > b.verdict)
        {
            best = Some((call, decision));
        }
    }
    best
}

/// What the gated call is, in words: "the command `ls`", "reading `/etc/x`".
pub fn describe(call: &ToolCall, decision: &Decision) -> String {
    let subject = &decision.subject;
    match sandgate_policy::request::gated_tool(&call.tool) {
        Some(tool) => format!("{} `{subject}`", tool.action),
        None => format!("`{}` on `{subject}`", call.tool),
    }
}

/// The exact allow rule that would let this call through, as a policy line.
pub fn suggested_rule(call: &ToolCall, decision: &Decision) -> Option<String> {
    if call.tool == "exec_run" {
        let rule = sandgate_policy::persist::command_rule(&decision.subject);
        Some(format!("commands.allow: '{}'", rule.replace('\'', "''")))
    } else {
        // The narrowest rule: about the one access the call makes.
        let rule = sandgate_policy::persist::path_rule(Path::new(&decision.subject)).ok()?;
        let access = sandgate_policy::request::gated_tool(&call.tool).and_then(|t| t.access);
        let key = sandgate_policy::persist::Section::paths_for(access).key();
        Some(format!("{key}.allow: '{}'", rule.replace('\'', "''")))
    }
}

/// The reason shown to the model when sandgate denies a call.
pub fn deny_reason(call: &ToolCall, decision: &Decision) -> String {
    format!(
        "sandgate blocked {}: {}. This is the user's policy, not a failure to retry: \
         do not repeat the call or reach the same result another way; \
         choose a different approach, or ask the user to change the sandgate policy",
        describe(call, decision),
        decision.reason
    )
}

/// The reason given when an ASK is turned into a deny: what would have been
/// asked, why it is blocked, and the exact rule that would allow each asked
/// part of the call.
pub fn ask_denied_reason(asks: &[(ToolCall, Decision)], why: &str, also: Option<&str>) -> String {
    let what: Vec<String> = asks
        .iter()
        .map(|(call, decision)| format!("{} ({})", describe(call, decision), decision.reason))
        .collect();
    let mut rules: Vec<String> = asks
        .iter()
        .filter_map(|(call, decision)| suggested_rule(call, decision))
        .map(|rule| format!("`{rule}`"))
        .collect();
    rules.dedup();
    let how = if rules.is_empty() || rules.len() < asks.len() {
        "add an allow rule for it to ~/.sandgate/permissions.yaml".to_string()
    } else {
        format!(
            "add {} to ~/.sandgate/permissions.yaml",
            rules.join(" and ")
        )
    };
    let also = also.map(|a| format!(", {a}")).unwrap_or_default();
    format!(
        "sandgate would ask the user before {}, and {why}, so it is blocked. \
         Tell the user: to allow it, {how}{also}",
        what.join("; ")
    )
}

/// Run `sandgate hook AGENT`: read the payload, decide, answer.
pub fn run(agent: Agent, global: &GlobalArgs) -> ExitCode {
    let mut text = String::new();
    if let Err(e) = std::io::stdin()
        .take(MAX_PAYLOAD_BYTES)
        .read_to_string(&mut text)
    {
        return fail(format!("cannot read the hook payload from stdin: {e}"));
    }
    match respond(agent, &text, global) {
        Ok(Some(out)) => {
            let mut stdout = std::io::stdout().lock();
            if writeln!(stdout, "{out}")
                .and_then(|_| stdout.flush())
                .is_err()
            {
                return fail("cannot write the answer to stdout".into());
            }
            ExitCode::SUCCESS
        }
        Ok(None) => ExitCode::SUCCESS,
        Err(e) => fail(e.to_string()),
    }
}

fn fail(message: String) -> ExitCode {
    eprintln!("sandgate: {message}");
    ExitCode::from(EXIT_CANNOT_CHECK)
}

/// Decide one payload; `Ok(None)` means "no opinion" (nothing on stdout).
fn respond(agent: Agent, text: &str, global: &GlobalArgs) -> Result<Option<String>, InputError> {
    let payload = parse_payload(text)?;
    let surface = format!("hook {}", agent.as_str());
    if after_events(agent).contains(&payload.event.as_str()) {
        return Ok(after_tool(agent, &payload).map(|v| v.to_string()));
    }
    match agent {
        Agent::Claude | Agent::Codex => {
            let event = claude::Event::parse(&payload.event, agent)?;
            let gate = map::claude(&payload.tool, &payload.input, &payload.cwd)?;
            let Some(decided) = decide(gate, &payload, global)? else {
                return Ok(None);
            };
            if event == claude::Event::PreToolUse {
                if let Some(reply) = asked_in_run(agent, &payload, &decided) {
                    return Ok(reply.map(|v| v.to_string()));
                }
            }
            let asked = claude::Asked {
                agent,
                event,
                tool: &payload.tool,
                mode: payload.mode.as_deref(),
                claude_ask: decided.settings.claude_ask,
            };
            let (call, decision) = &decided.strictest;
            let answer = claude::answer(&asked, call, decision, &decided.asks);
            decided.record(&surface, answer.outcome);
            Ok(answer.output.map(|v| v.to_string()))
        }
        Agent::Gemini => {
            gemini::check_event(&payload.event)?;
            let gate = map::gemini(&payload.tool, &payload.input, &payload.cwd)?;
            let Some(decided) = decide(gate, &payload, global)? else {
                return Ok(Some(gemini::no_opinion().to_string()));
            };
            if let Some(reply) = asked_in_run(agent, &payload, &decided) {
                return Ok(reply.map(|v| v.to_string()));
            }
            let (call, decision) = &decided.strictest;
            let answer = gemini::render(call, decision, decided.settings.gemini_ask, &decided.asks);
            decided.record(&surface, answer.outcome);
            Ok(answer.output.map(|v| v.to_string()))
        }
    }
}

type Decided = (ToolCall, Decision);

/// The agent's events after a tool call: `PostToolUse` (Claude Code, Codex
/// CLI), `PostToolUseFailure` (Claude Code, after a call that failed) or
/// `AfterTool` (Gemini CLI).
fn after_events(agent: Agent) -> &'static [&'static str] {
    match agent {
        Agent::Claude => &["PostToolUse", "PostToolUseFailure"],
        Agent::Codex => &["PostToolUse"],
        Agent::Gemini => &["AfterTool"],
    }
}

/// After a tool call inside `sandgate run`: what the run refused during it,
/// as context for the model (nothing outside a run, or when nothing was
/// refused).
fn after_tool(agent: Agent, payload: &Payload) -> Option<Value> {
    let refusals = crate::runlink::send(
        &crate::runlink::Request::After {
            session: payload.session.clone(),
        },
        std::time::Duration::from_secs(5),
    )
    .map(|reply| reply.refusals)
    .unwrap_or_default();
    if refusals.is_empty() {
        return (agent == Agent::Gemini).then(gemini::no_opinion);
    }
    Some(serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": payload.event,
            "additionalContext": refusals.join("\n"),
        }
    }))
}

/// Before a call inside `sandgate run` that the policy does not deny: the
/// run asks the person about the writes it foresees outside its allowed set
/// (see [`crate::runlink`]). `Some(answer)` when the person was asked: the
/// agent gets their answer and is not asked again; `None` to decide as
/// outside a run.
fn asked_in_run(agent: Agent, payload: &Payload, decided: &Decisions) -> Option<Option<Value>> {
    let (call, decision) = &decided.strictest;
    if decision.verdict == Verdict::Deny {
        return None;
    }
    let wait = decided.settings.prompt_timeout + std::time::Duration::from_secs(30);
    let reply = crate::runlink::send(
        &crate::runlink::Request::Before {
            agent: agent.as_str().into(),
            tool: payload.tool.clone(),
            input: payload.input.clone(),
            cwd: payload.cwd.clone(),
            session: payload.session.clone(),
        },
        wait,
    )?;
    let surface = format!("hook {}", agent.as_str());
    if reply.ask_in_agent && agent == Agent::Claude {
        // The person answers in Claude Code's own dialog; the run lets the
        // writes of Claude Code's spawn of exactly this command through
        // after a "Yes" (see `crate::runlink`).
        decided.record(
            &surface,
            crate::audit::Outcome {
                became: "asked in the agent's own dialog for sandgate run",
                answered_by: "agent",
            },
        );
        return Some(Some(serde_json::json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": reply.reason,
            }
        })));
    }
    if !reply.asked {
        return None;
    }
    let what = describe(call, decision);
    let (verdict, text, outcome) = if reply.allowed {
        (
            "allow",
            format!("sandgate allows {what}: {}", reply.reason),
            crate::audit::Outcome {
                became: "allowed by the person in sandgate run",
                answered_by: "human",
            },
        )
    } else {
        (
            "deny",
            format!(
                "sandgate blocked {what}: {}. The person running the agent decides this; \
                 do not retry it or reach the same result another way unless they say so",
                reply.reason
            ),
            crate::audit::Outcome {
                became: "denied in sandgate run",
                answered_by: "human",
            },
        )
    };
    decided.record(&surface, outcome);
    Some(match (agent, reply.allowed) {
        // Codex CLI treats a bare `allow` as a failed hook: say nothing.
        (Agent::Codex, true) => None,
        (Agent::Claude | Agent::Codex, _) => Some(serde_json::json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": verdict,
                "permissionDecisionReason": text,
            }
        })),
        (Agent::Gemini, true) => Some(serde_json::json!({ "decision": "allow" })),
        (Agent::Gemini, false) => Some(serde_json::json!({ "decision": "deny", "reason": text })),
    })
}

/// Every decision of one agent tool call.
pub(crate) struct Decisions {
    /// Each call and its decision, in order.
    pub(crate) all: Vec<Decided>,
    /// The strictest (the first of that verdict).
    pub(crate) strictest: Decided,
    /// The directory each call of `all` runs in.
    pub(crate) cwds: Vec<std::path::PathBuf>,
    /// The calls that were ASK.
    pub(crate) asks: Vec<Decided>,
    /// The policy's settings.
    pub(crate) settings: sandgate_policy::Settings,
}

impl Decisions {
    /// Audit every decision with what the answer made of the call, each in
    /// the directory it ran in.
    pub(crate) fn record(&self, surface: &str, outcome: crate::audit::Outcome) {
        for ((call, decision), cwd) in self.all.iter().zip(&self.cwds) {
            crate::audit::record_in(surface, &call.tool, decision, Some(outcome), Some(cwd));
        }
    }
}

/// Load the policy for the payload's CWD and decide every call of `gate`, each
/// in its own working directory.
fn decide(
    gate: map::Gate,
    payload: &Payload,
    global: &GlobalArgs,
) -> Result<Option<Decisions>, InputError> {
    let decided = decide_in(gate, &payload.cwd, payload.session.as_deref(), global)?;
    Ok(decided.map(|(decisions, policy)| {
        // The process ends after this one answer: freeing a thousand rules
        // one by one would only delay it.
        std::mem::forget(policy);
        decisions
    }))
}

/// [`decide`] for the calls of `gate` made in `cwd` (absolute) by agent
/// session `session`: the decisions, and the policy they were made with (a
/// long-lived caller, `sandgate acp`, keeps or drops it).
pub(crate) fn decide_in(
    gate: map::Gate,
    cwd: &str,
    session: Option<&str>,
    global: &GlobalArgs,
) -> Result<Option<(Decisions, sandgate_policy::Policy)>, InputError> {
    let map::Gate::Calls(checks) = gate else {
        return Ok(None);
    };
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| InputError::new("`HOME` is not set, so `~` cannot be expanded"))?;
    let home = Path::new(&home);
    let ctx = Context::new(Path::new(cwd), home).map_err(|e| InputError::new(e.to_string()))?;
    let sources = crate::setup::sources(global, &ctx);
    let cache = sandgate_policy::cache::cache_dir(&ctx.home);
    let (policy, cached) = sandgate_policy::cache::load_with(&sources, &ctx, cache.as_deref())
        .map_err(|e| InputError::new(e.to_string()))?;
    if cached == sandgate_policy::cache::CacheStatus::NotWritten {
        // Inside `sandgate run` the cache is read-only: the run writes it.
        let request = crate::runlink::Request::Warm {
            cwd: cwd.to_string(),
        };
        let _ = crate::runlink::send(&request, std::time::Duration::from_secs(5));
    }
    if !policy.settings().sandbox {
        crate::warn_sandbox_off(&policy.settings().sandbox_reason);
    }
    crate::auditlog::configure(policy.settings(), &ctx.cwd);
    crate::auditlog::set_session(session);
    let mut all: Vec<Decided> = Vec::with_capacity(checks.len());
    let mut cwds = Vec::with_capacity(checks.len());
    for check in checks {
        let dir_ctx;
        let here = match &check.cwd {
            None => &ctx,
            Some(dir) => {
                let dir = expand_dir(dir, &ctx);
                dir_ctx = Context::new(&dir, &ctx.home).map_err(|e| {
                    InputError::new(format!(
                        "the command's working directory `{}`: {e}",
                        dir.display()
                    ))
                })?;
                &dir_ctx
            }
        };
        for (call, decision) in judge(&check.call, &policy, here) {
            let decision = match &check.unknown_tool {
                Some(tool) => Decision {
                    reason: format!(
                        "`{tool}` is a tool sandgate does not know, gated as a read and a write of its path: {}",
                        decision.reason
                    ),
                    ..decision
                },
                None => decision,
            };
            cwds.push(here.cwd.clone());
            all.push((call, decision));
        }
    }
    let settings = policy.settings().clone();
    let asks: Vec<Decided> = all
        .iter()
        .filter(|(_, d)| d.verdict == Verdict::Ask)
        .cloned()
        .collect();
    let Some(strictest) = strictest(all.clone()) else {
        return Ok(None);
    };
    Ok(Some((
        Decisions {
            all,
            cwds,
            strictest,
            asks,
            settings,
        },
        policy,
    )))
}

/// A working directory from a tool's parameter: `~` is the home, a relative
/// one is relative to the payload's `cwd`.
fn expand_dir(dir: &str, ctx: &Context) -> std::path::PathBuf {
    if dir == "~" {
        ctx.home.clone()
    } else if let Some(rest) = dir.strip_prefix("~/") {
        ctx.home.join(rest)
    } else {
        ctx.cwd.join(dir)
    }
}

/// Decide one gated call, and what it implies: a file tool's path that is a
/// glob pattern is judged also at the directory each of its alternatives
/// starts from and at every floor directory it could match, and an agent's
/// search rooted above a floor directory, or above a path a read deny rule
/// names, is denied.
fn judge(call: &ToolCall, policy: &sandgate_policy::Policy, ctx: &Context) -> Vec<Decided> {
    let mut out = vec![(call.clone(), policy.evaluate(call, ctx))];
    let Some(path) = call
        .str_param("path")
        .filter(|_| sandgate_policy::request::tool_kind(&call.tool) == ToolKind::File)
    else {
        return out;
    };
    if pattern::has_glob(path) {
        match pattern_paths(path, policy, ctx) {
            Some(paths) => {
                for p in paths {
                    let implied =
                        ToolCall::new(call.tool.clone(), serde_json::json!({ "path": p }));
                    let decision = policy.evaluate(&implied, ctx);
                    let decision = Decision {
                        reason: format!("the pattern `{path}` reaches `{p}`: {}", decision.reason),
                        ..decision
                    };
                    out.push((implied, decision));
                }
            }
            None => {
                let decision = Decision::new(
                    Verdict::Ask,
                    path,
                    format!(
                        "the pattern `{path}` has more braces than sandgate expands (over {} \
                         paths, 64 braces or 4096 bytes), so where it reaches is not known",
                        pattern::MAX_ALTERNATIVES
                    ),
                );
                out.push((call.clone(), decision));
            }
        }
    }
    // sandgate's own `file_grep` skips the floor as it walks; the agent's
    // search does not, so one rooted above a floor directory would read it.
    if call.tool == "file_grep" && out[0].1.verdict != Verdict::Deny {
        let root = policy
            .canonical_path(path, ctx)
            .unwrap_or_else(|_| ctx.cwd.join(path));
        let floor = sandgate_policy::floor::gate_dirs(&ctx.home);
        if let Some(dir) = floor.iter().find(|d| d.starts_with(&root)) {
            let reason = format!(
                "the agent's own search reads every file below `{}`, which holds the floor \
                 directory `{}` (unlike sandgate's `file_grep`, it does not skip the floor); \
                 no rule can allow it",
                root.display(),
                dir.display()
            );
            let subject = out[0].1.subject.clone();
            out[0].1 = match policy.path_matches(dir).first() {
                Some(&rule) => Decision::by_rule(Verdict::Deny, subject, rule.clone(), reason),
                None => Decision::new(Verdict::Deny, subject, reason),
            };
        } else if let Some((rule, held)) = policy.read_deny_below(&root) {
            // The same for a path a deny rule names (a credential store).
            let store = sandgate_policy::credentials::store_of_rule(&rule.pattern)
                .map(|s| format!(": a credential store: {}", s.why))
                .unwrap_or_default();
            let reason = format!(
                "the agent's own search reads every file below `{}`, which holds `{}`, \
                 denied by the {} rule `{}` ({}){store} (unlike sandgate's `file_grep`, \
                 it does not skip denied paths)",
                root.display(),
                held.display(),
                rule.list_words(),
                rule.pattern,
                rule.origin
            );
            let subject = out[0].1.subject.clone();
            out[0].1 = Decision::by_rule(Verdict::Deny, subject, rule.clone(), reason);
        }
    }
    out
}

/// The paths a glob pattern implies, for each of its brace alternatives: the
/// literal directory it starts from (as written, and with `.`/`..` collapsed)
/// and each floor directory it could match, found from the real directory
/// of that literal part. `None` when the braces expand to too many words.
fn pattern_paths(
    path: &str,
    policy: &sandgate_policy::Policy,
    ctx: &Context,
) -> Option<Vec<String>> {
    let floor = sandgate_policy::floor::gate_dirs(&ctx.home);
    let mut paths: Vec<String> = Vec::new();
    let mut add = |p: String| {
        if !paths.contains(&p) {
            paths.push(p);
        }
    };
    for alt in pattern::brace_expand(path)? {
        let absolute = if alt == "~" {
            ctx.home.to_string_lossy().into_owned()
        } else if let Some(rest) = alt.strip_prefix("~/") {
            format!("{}/{rest}", ctx.home.to_string_lossy())
        } else if alt.starts_with('/') {
            alt.clone()
        } else {
            format!("{}/{alt}", ctx.cwd.to_string_lossy())
        };
        let collapsed = format!("/{}", pattern::lexical(&absolute).join("/"));
        for text in [&absolute, &collapsed] {
            let (literal, rest) = pattern::split_literal(text);
            add(literal.clone());
            if rest.is_empty() {
                continue;
            }
            let real = policy
                .canonical_path(&literal, ctx)
                .unwrap_or_else(|_| std::path::PathBuf::from(&literal));
            let full = format!("{}/{}", real.to_string_lossy(), rest.join("/"));
            for dir in pattern::floor_reached(&pattern::lexical(&full), &floor) {
                add(dir.to_string_lossy().into_owned());
            }
        }
    }
    Some(paths)
}
