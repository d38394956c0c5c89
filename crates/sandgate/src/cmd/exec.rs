//! `sandgate exec [--no-ui] [--] CMD…`: one command through the gate.
//!
//! One argument is a command string, as `sh -c` takes it; several are a
//! program and its arguments, each quoted for the shell, so that the command
//! runs as typed (as `timeout`, `env` or `sudo` run theirs). The command
//! string is gated like an `exec_run` call. An ASK goes to the terminal prompt. An
//! allowed command runs under `/bin/sh -c` in the working directory with
//! stdin, stdout and stderr passed through; sandgate exits with its exit code.
//! A denied command does not run: the reason goes to stderr and the exit code is 1.
//!
//! With `permissions.exec.isolation` (and the sandbox on) the allowed command
//! runs isolated by `sandgate-sandbox`; `--dry-run` shows the verdict, the
//! isolation plan, the argv and the enforcement level without running anything.

use std::process::{ExitCode, ExitStatus};

use clap::Args;
use sandgate_policy::config::IsolationMode;
use sandgate_policy::{Context, Decision, Policy, ToolCall, Verdict};
use sandgate_sandbox::supervise::{Attached, OUTER_NOTE};
use sandgate_sandbox::{notify, Environment, Isolation, IsolationError};
use sandgate_tools::resolver::settle;
use serde_json::json;

use crate::prompt::TerminalPrompt;
use crate::setup::GlobalArgs;
use crate::{EXIT_CANNOT_CHECK, EXIT_FAILED, EXIT_OK};

/// The tool name an `exec` is gated and audited as.
const TOOL: &str = "exec_run";

/// Run one command through the gate.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Never prompt: an ASK is an immediate DENY (also `SANDGATE_NO_UI=1`).
    #[arg(long)]
    pub no_ui: bool,
    /// Run nothing: print the verdict, the isolation plan, the argv and the enforcement level.
    #[arg(long)]
    pub dry_run: bool,
    /// The command and its arguments (each quoted for `/bin/sh -c`), or one command string.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<String>,
}

/// The command string `args` stand for: one argument is a command string
/// (`sandgate exec -- 'make test | tee log'`); several are a program and its
/// arguments, each quoted for the shell (`sandgate exec -- sh -c 'cat x'`
/// runs `sh -c 'cat x'`).
fn command_line(args: &[String]) -> String {
    match args {
        [one] => one.clone(),
        _ => args
            .iter()
            .map(|a| sandgate_policy::shell::quote_word(a))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// Run `exec`.
pub fn run(global: &GlobalArgs, args: ExecArgs) -> ExitCode {
    let command = command_line(&args.command);
    let loaded = match crate::load(global) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let call = ToolCall::new(TOOL, json!({ "command": command }));
    let decision = loaded.policy.evaluate(&call, &loaded.ctx);
    crate::audit::record("exec", TOOL, &decision);
    if args.dry_run {
        return dry_run(
            &loaded.policy,
            &loaded.ctx,
            &command,
            &decision,
            global.json,
        );
    }
    let mut policy = loaded.policy;
    let decision = match decision.verdict {
        Verdict::Ask => {
            let prompt = TerminalPrompt::new(args.no_ui);
            let settled = settle(&policy, &loaded.ctx, TOOL, &decision, &prompt);
            crate::audit::record_outcome(
                "exec prompt",
                TOOL,
                &settled.decision,
                crate::audit::ask_outcome(Some(&settled.resolution)),
            );
            match &settled.always {
                Some(Err(e)) => eprintln!("sandgate: warning: {e}"),
                Some(Ok(kept)) if kept.next_time != settled.decision.verdict => eprintln!(
                    "sandgate: warning: {} was written, but the policy still decides {} \
                     for this command, so it will not stop the question",
                    kept.rule, kept.next_time
                ),
                _ => {}
            }
            // An "always" answer changed the policy: run under the new one.
            if let Some(reloaded) = settled.reloaded {
                policy = reloaded;
            }
            settled.decision
        }
        _ => decision,
    };
    if decision.verdict != Verdict::Allow {
        report_denied(&decision);
        return ExitCode::from(EXIT_FAILED);
    }
    match spawn(&policy, &command, &loaded.ctx, args.no_ui) {
        Ok(status) => ExitCode::from(exit_code(status)),
        Err(SpawnError::Isolation(e)) => {
            eprintln!("sandgate: {e}");
            ExitCode::from(EXIT_CANNOT_CHECK)
        }
        Err(SpawnError::Io(e)) => {
            eprintln!("sandgate: cannot run `{command}`: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// `--dry-run`: the gate's verdict (never prompting) and what would run.
fn dry_run(
    policy: &Policy,
    ctx: &Context,
    command: &str,
    decision: &Decision,
    json: bool,
) -> ExitCode {
    let isolation = match isolation(policy, ctx) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("sandgate: {e}");
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    };
    let report = isolation.report(command);
    if json {
        let mut out = serde_json::to_value(decision).unwrap_or_default();
        if let Some(map) = out.as_object_mut() {
            map.insert("command".into(), json!(command));
            map.insert(
                "isolation".into(),
                serde_json::to_value(&report).unwrap_or_default(),
            );
        }
        println!("{out}");
    } else {
        println!("verdict: {}: {}", decision.verdict, decision.reason);
        if let Some(rule) = &decision.rule {
            println!(
                "  rule: {} `{}` ({})",
                rule.list_words(),
                rule.pattern,
                rule.origin
            );
        }
        print!("{report}");
    }
    ExitCode::from(EXIT_OK)
}

/// The isolation the merged settings ask for: `none` when the sandbox is off.
pub fn isolation(policy: &Policy, ctx: &Context) -> Result<Isolation, IsolationError> {
    let settings = policy.settings();
    let (deny, _) = policy.path_rules();
    let deny: Vec<String> = deny.iter().map(|r| r.pattern.clone()).collect();
    let env = Environment::new(ctx.cwd.clone(), ctx.home.clone());
    let config = settings.isolation.as_ref().map(|(config, _tier)| config);
    let (config, filtered) = sandgate_tools::network::isolation_config(policy, config);
    let mut isolation = Isolation::new(config.as_ref(), settings.sandbox, &deny, &env)?;
    if filtered {
        isolation.filter_network();
    }
    Ok(isolation)
}

/// Why an allowed command did not start.
#[derive(Debug)]
pub enum SpawnError {
    /// The isolation cannot be set up on this machine or with this config.
    Isolation(IsolationError),
    /// The command could not be started.
    Io(std::io::Error),
}

fn report_denied(decision: &Decision) {
    eprintln!("sandgate: denied: {}", decision.reason);
}

/// Run an allowed command and wait for it: `/bin/sh -c COMMAND` in the
/// working directory, isolated as `permissions.exec.isolation` says, with
/// stdin, stdout and stderr inherited.
///
/// This is the one place a gated command is started. Isolation errors and
/// warnings (e.g. an invalid custom template) are logged to stderr first.
///
/// With `landlock` and no supervisor this process *becomes* the command
/// (`exec`), so on success this function does not return: the confinement
/// runs in a `pre_exec` hook, which would force a full `fork` for a child
/// (measurably slower than the spawn used otherwise), and nothing is left
/// to do after the command ends. Under `landlock` and `bwrap` with protected
/// paths or `unix_sockets`, sandgate stays as the supervisor of the calls
/// that make names and of `connect()`, passes on the signals other
/// processes send it, and waits.
/// A host the network lists do not decide is asked at the terminal prompt
/// (none with `no_ui`, `--no-ui`).
pub fn spawn(
    policy: &Policy,
    command: &str,
    ctx: &Context,
    no_ui: bool,
) -> Result<ExitStatus, SpawnError> {
    let isolation = isolation(policy, ctx).map_err(SpawnError::Isolation)?;
    for notice in isolation.notices() {
        eprintln!("sandgate: {notice}");
    }
    let prepared = isolation.command(command).map_err(SpawnError::Isolation)?;
    let mut child = prepared.command;
    if let Some(outside) = prepared.network {
        // The proxy runs in this process: the command is spawned, not become.
        let network = policy.network().cloned().unwrap_or_default();
        let asker = crate::network::Asker::new(
            policy.clone(),
            ctx.clone(),
            Box::new(TerminalPrompt::new(no_ui)),
            "exec",
        );
        return spawn_filtered(
            child,
            prepared.supervision,
            outside,
            network,
            command,
            asker,
        );
    }
    let Some(supervision) = prepared.supervision else {
        if isolation.mode() == IsolationMode::Landlock {
            use std::os::unix::process::CommandExt;
            return Err(SpawnError::Io(child.exec()));
        }
        return child.status().map_err(SpawnError::Io);
    };
    notify::hold_forwarded(&mut child).map_err(SpawnError::Io)?;
    let mut running = child.spawn().map_err(|e| {
        let filtered =
            sandgate_sandbox::protect::status_field(std::process::id(), "Seccomp_filters:")
                .and_then(|v| v.parse::<u32>().ok())
                .is_some_and(|n| n > 0);
        if !filtered {
            return SpawnError::Io(e);
        }
        SpawnError::Io(std::io::Error::new(
            e.kind(),
            format!(
                "{e}; sandgate itself runs inside another sandbox (such as `sandgate run`), \
                 where exec isolation cannot make its mount namespace or its supervisor"
            ),
        ))
    })?;
    if let Err(e) = notify::forward_signals(&running) {
        eprintln!(
            "sandgate: warning: signals sent to sandgate are not passed on to the command: {e}"
        );
    }
    attach_or_stop(supervision, &mut running)?;
    running.wait().map_err(SpawnError::Io)
}

/// Starts supervising the running command; if the supervisor cannot start,
/// the command is ended, since nothing may run unsupervised.
fn attach_or_stop(
    supervision: sandgate_sandbox::Supervision,
    running: &mut std::process::Child,
) -> Result<(), SpawnError> {
    match supervision.attach() {
        Ok(Attached::Supervising) => Ok(()),
        Ok(Attached::Outer) => {
            eprintln!("sandgate: {OUTER_NOTE}");
            Ok(())
        }
        Err(e) => Err(stop(
            running,
            &format!("sandgate's supervisor did not start, so the command was stopped: {e}"),
        )),
    }
}

/// Ends and reaps the running command, and says why.
fn stop(running: &mut std::process::Child, why: &str) -> SpawnError {
    let _ = running.kill();
    let _ = running.wait();
    SpawnError::Io(std::io::Error::other(why.to_string()))
}

/// Run a command whose network is filtered by host: spawn it, serve its
/// proxy and resolver sockets, supervise it (its TCP connects routed by the
/// lists, hosts no entry decides asked through `asker`), and wait.
fn spawn_filtered(
    mut child: std::process::Command,
    supervision: Option<sandgate_sandbox::Supervision>,
    outside: sandgate_sandbox::netns::Outside,
    network: sandgate_policy::network::NetworkPolicy,
    command: &str,
    asker: crate::network::Asker,
) -> Result<ExitStatus, SpawnError> {
    notify::hold_forwarded(&mut child).map_err(SpawnError::Io)?;
    let mut running = child.spawn().map_err(|e| {
        SpawnError::Io(std::io::Error::new(
            e.kind(),
            format!("{e} (while making the command's network namespace for `permissions.network`)"),
        ))
    })?;
    let route = match crate::network::serve(outside, network, command, "exec", Some(asker)) {
        Ok(route) => route,
        Err(e) => {
            // Without its proxy the command reaches no host: say so, and stop it.
            return Err(stop(
                &mut running,
                &format!("the network proxy did not start, so the command was stopped: {e}"),
            ));
        }
    };
    if let Err(e) = notify::forward_signals(&running) {
        eprintln!(
            "sandgate: warning: signals sent to sandgate are not passed on to the command: {e}"
        );
    }
    if let Some(mut supervision) = supervision {
        // The command's own connects to addresses are decided by the lists.
        supervision.route_network(route);
        attach_or_stop(supervision, &mut running)?;
    }
    running.wait().map_err(SpawnError::Io)
}

/// The exit code sandgate passes on: the command's, or 128 + the signal that ended it.
fn exit_code(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(EXIT_FAILED),
        (None, Some(signal)) => u8::try_from((128 + signal) & 0xff).unwrap_or(EXIT_FAILED),
        (None, None) => EXIT_FAILED,
    }
}
