//! Agent hooks: sandgate as the pre-tool gate of Claude Code, Codex CLI and Gemini CLI.
//!
//! The agent spawns `sandgate hook AGENT` for every tool call, writes one JSON
//! document on stdin and reads the answer in its own wire format on stdout.
//! This path is kept short on purpose: no async runtime, and the policy comes
//! through the compiled-policy cache (`sandgate_policy::cache`).

pub mod claude;
pub mod gemini;
pub mod install;
pub mod map;

use std::fmt;
use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

use sandgate_policy::{Context, Decision, Sources, ToolCall};
use serde_json::{Map, Value};

use crate::cli::GlobalArgs;
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

/// A payload sandgate cannot check: exit 2, with this on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError(String);

impl InputError {
    /// An error with this message (lowercase, no final period).
    pub fn new(message: impl Into<String>) -> Self {
        InputError(message.into())
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The fields of a hook payload that sandgate reads.
#[derive(Debug, Clone)]
pub struct Payload {
    /// `hook_event_name`.
    pub event: String,
    /// `tool_name`.
    pub tool: String,
    /// `tool_input`.
    pub input: Map<String, Value>,
    /// `cwd`: relative paths resolve against it.
    pub cwd: String,
}

/// Parse a payload; every field sandgate needs must be there with the right type.
pub fn parse_payload(text: &str) -> Result<Payload, InputError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| InputError::new(format!("the hook payload is not valid JSON: {e}")))?;
    let Value::Object(mut obj) = value else {
        return Err(InputError::new("the hook payload must be a JSON object"));
    };
    let mut string = |key: &str| match obj.remove(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(InputError::new(format!(
            "the hook payload's `{key}` must be a string"
        ))),
        None => Err(InputError::new(format!("the hook payload has no `{key}`"))),
    };
    let event = string("hook_event_name")?;
    let tool = string("tool_name")?;
    let cwd = string("cwd")?;
    if !Path::new(&cwd).is_absolute() {
        return Err(InputError::new(format!(
            "the hook payload's `cwd` must be an absolute path, found `{cwd}`"
        )));
    }
    let input = match obj.remove("tool_input") {
        Some(Value::Object(m)) => m,
        Some(_) => {
            return Err(InputError::new(
                "the hook payload's `tool_input` must be an object",
            ))
        }
        None => return Err(InputError::new("the hook payload has no `tool_input`")),
    };
    Ok(Payload {
        event,
        tool,
        input,
        cwd,
    })
}

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
    match call.tool.as_str() {
        "exec_run" => format!("the command `{subject}`"),
        "file_read" => format!("reading `{subject}`"),
        "file_write" => format!("writing `{subject}`"),
        "file_edit" => format!("editing `{subject}`"),
        "file_list" => format!("listing `{subject}`"),
        "file_grep" => format!("searching `{subject}`"),
        "file_find" => format!("finding files in `{subject}`"),
        _ => format!("`{}` on `{subject}`", call.tool),
    }
}

/// The exact allow rule that would let this call through, as a policy line.
pub fn suggested_rule(call: &ToolCall, decision: &Decision) -> Option<String> {
    if call.tool == "exec_run" {
        let rule = sandgate_policy::persist::command_rule(&decision.subject);
        Some(format!("commands.allow: '{}'", rule.replace('\'', "''")))
    } else {
        let rule = sandgate_policy::persist::path_rule(Path::new(&decision.subject)).ok()?;
        Some(format!("paths.allow: '{}'", rule.replace('\'', "''")))
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
    match agent {
        Agent::Claude | Agent::Codex => {
            let event = claude::Event::parse(&payload.event, agent)?;
            let gate = map::claude(&payload.tool, &payload.input, &payload.cwd)?;
            let Some((call, decision)) = decide(gate, &payload, global, &surface)? else {
                return Ok(None);
            };
            Ok(claude::render(event, &call, &decision).map(|v| v.to_string()))
        }
        Agent::Gemini => {
            gemini::check_event(&payload.event)?;
            let gate = map::gemini(&payload.tool, &payload.input, &payload.cwd)?;
            let Some(((call, decision), ask)) =
                decide_with_settings(gate, &payload, global, &surface)?
            else {
                return Ok(Some(gemini::no_opinion().to_string()));
            };
            Ok(Some(gemini::render(&call, &decision, ask).to_string()))
        }
    }
}

type Decided = (ToolCall, Decision);

fn decide(
    gate: map::Gate,
    payload: &Payload,
    global: &GlobalArgs,
    surface: &str,
) -> Result<Option<Decided>, InputError> {
    Ok(decide_with_settings(gate, payload, global, surface)?.map(|(d, _)| d))
}

/// Load the policy for the payload's CWD and decide every call of `gate`.
/// Returns the strictest decision and the Gemini ask fallback of the policy.
fn decide_with_settings(
    gate: map::Gate,
    payload: &Payload,
    global: &GlobalArgs,
    surface: &str,
) -> Result<Option<(Decided, sandgate_policy::config::AskFallback)>, InputError> {
    let map::Gate::Calls(calls) = gate else {
        return Ok(None);
    };
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| InputError::new("`HOME` is not set, so `~` cannot be expanded"))?;
    let ctx = Context::new(Path::new(&payload.cwd), Path::new(&home))
        .map_err(|e| InputError::new(e.to_string()))?;
    let sources = Sources::discover(
        global.config.clone(),
        global.local_config.clone(),
        global.no_sandbox,
        &ctx.cwd,
        &ctx.home,
    );
    let policy =
        sandgate_policy::cache::load(&sources, &ctx).map_err(|e| InputError::new(e.to_string()))?;
    if !policy.settings().sandbox {
        crate::warn_sandbox_off(&policy.settings().sandbox_reason);
    }
    let decisions: Vec<Decided> = calls
        .into_iter()
        .map(|call| {
            let decision = policy.evaluate(&call, &ctx);
            crate::audit::record(surface, &call.tool, &decision);
            (call, decision)
        })
        .collect();
    let ask = policy.settings().gemini_ask;
    // The process ends after this one answer: freeing a thousand rules one by
    // one would only delay it.
    std::mem::forget(policy);
    Ok(strictest(decisions).map(|d| (d, ask)))
}
