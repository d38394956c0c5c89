//! `sandgate run`: start a program (an agent) with the writes of its whole
//! process tree confined to the workspace and a few well-known places, and
//! ask the human when it reaches outside; the floor, its other names and the
//! credential stores the policy denies are hidden from its reads, and its
//! `connect` calls reach only its own listeners and the listed sockets.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{IsTerminal, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::UnixListener;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;
use sandgate_confine::{
    self as confine, ConfineError, Event, Mechanism, Protection, Reporter, Requested, RunPlan,
    RunPlanExt, RunPlanInputs, SandboxFile, SandboxSettings, Supervisor,
};
use sandgate_policy::ask::{NoHuman, Question, Resolution, Resolver};
use serde_json::json;

use crate::ask::hub::{Questions, Routes};
use crate::runlink::{Gatekeeper, Link};
use crate::setup::GlobalArgs;
use crate::{EXIT_CANNOT_CHECK, EXIT_FAILED, EXIT_OK};

/// Arguments of `sandgate run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// A workspace root the program may write (repeatable; default: the working directory).
    #[arg(long = "workspace", value_name = "DIR")]
    pub workspaces: Vec<PathBuf>,
    /// Never ask: a write outside the allowed set is denied and logged.
    #[arg(long)]
    pub no_ui: bool,
    /// Print the effective allowed set, the protected paths and the mechanism; start nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The program and its arguments (after `--`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM"
    )]
    pub program: Vec<OsString>,
}

/// Another front for the program than the terminal (`sandgate acp`): it
/// owns the program's stdin and stdout, answers the run's questions, and
/// waits for the program while it serves it.
pub trait Host {
    /// Before the program starts: its stdio.
    fn prepare(&mut self, command: &mut Command);
    /// Once it started: begins serving it, and gives who answers the run's
    /// questions about writes outside.
    fn start(&mut self, child: &mut std::process::Child) -> Arc<dyn Resolver>;
    /// Waits for the program to end.
    fn wait(&mut self, child: &mut std::process::Child) -> std::io::Result<ExitStatus>;
    /// Once the run is confined: its answers, to grant writes from outside.
    fn supervising(&mut self, _grants: confine::Grants) {}
}

/// Whether `SANDGATE_SANDBOX` arms every workspace.
fn armed_by_env() -> bool {
    std::env::var("SANDGATE_SANDBOX")
        .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
}

/// The workspaces' settings, merged: any file can arm and tighten; grants and
/// refusals of every file apply (relative entries against their own workspace).
fn merged_settings(workspaces: &[PathBuf]) -> Result<SandboxSettings, String> {
    let mut merged = SandboxSettings::default();
    for ws in workspaces {
        let settings = SandboxFile::of(ws)
            .load_or_create()
            .map_err(|e| e.to_string())?;
        let absolute = |entries: &[String]| -> Vec<String> {
            entries
                .iter()
                .map(|e| {
                    if e.starts_with('/') || e == "~" || e.starts_with("~/") {
                        e.clone()
                    } else {
                        ws.join(e).to_string_lossy().into_owned()
                    }
                })
                .collect()
        };
        merged.enabled |= settings.enabled;
        merged.strict_git |= settings.strict_git;
        merged.allow.extend(absolute(&settings.allow));
        merged.deny.extend(absolute(&settings.deny));
        merged.state_dirs.extend(absolute(&settings.state_dirs));
        merged.protect.extend(absolute(&settings.protect));
        merged.unix_sockets.extend(absolute(&settings.unix_sockets));
    }
    // The ssh-agent the program inherits signs with keys it cannot read:
    // the floor hides `~/.ssh` and leaves that way open on purpose.
    if let Some(agent) = std::env::var_os("SSH_AUTH_SOCK").filter(|a| !a.is_empty()) {
        let agent = PathBuf::from(agent);
        if agent.is_absolute() {
            merged
                .unix_sockets
                .push(agent.to_string_lossy().into_owned());
        }
    }
    Ok(merged)
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("sandgate: {message}");
    ExitCode::from(EXIT_CANNOT_CHECK)
}

/// Why `workspace` cannot be one: `/`, or a directory above the home
/// directory, would leave the whole file system or every home writable.
/// The home directory itself may be a workspace.
fn too_wide(workspace: &Path, home: &Path) -> Option<String> {
    let home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    let what = if workspace == Path::new("/") {
        "the whole file system".to_string()
    } else if home.starts_with(workspace) && home != workspace {
        format!(
            "everything under it, your home directory `{}` too,",
            home.display()
        )
    } else {
        return None;
    };
    Some(format!(
        "workspace `{}` is too wide: {what} would be writable by the program; \
         run sandgate from the project directory, or name it with `--workspace DIR`",
        workspace.display()
    ))
}

/// Runs `sandgate run`.
pub fn run(global: &GlobalArgs, args: RunArgs) -> ExitCode {
    run_hosted(global, args, None)
}

/// Runs the program confined as `sandgate run` does, served by `host`
/// instead of the terminal when one is given.
pub fn run_hosted(global: &GlobalArgs, args: RunArgs, mut host: Option<&mut dyn Host>) -> ExitCode {
    let ctx = match crate::setup::context(global) {
        Ok(ctx) => ctx,
        Err(code) => return code,
    };
    let raw = if args.workspaces.is_empty() {
        vec![ctx.cwd.clone()]
    } else {
        args.workspaces.clone()
    };
    let mut workspaces = Vec::new();
    for ws in &raw {
        let joined = ctx.cwd.join(ws);
        match std::fs::canonicalize(&joined) {
            Ok(path) if path.is_dir() => {
                if let Some(why) = too_wide(&path, &ctx.home) {
                    return fail(why);
                }
                workspaces.push(path)
            }
            Ok(_) => return fail(format!("workspace `{}` is not a directory", ws.display())),
            Err(e) => return fail(format!("workspace `{}`: {e}", ws.display())),
        }
    }
    let settings = match merged_settings(&workspaces) {
        Ok(settings) => settings,
        Err(e) => return fail(e),
    };
    let env_armed = armed_by_env();
    let armed = !global.no_sandbox && (env_armed || settings.enabled);
    let armed_by = if global.no_sandbox {
        "off: --no-sandbox"
    } else if env_armed {
        "SANDGATE_SANDBOX=1"
    } else if settings.enabled {
        "\"enabled\": true in sandbox.json"
    } else {
        "off"
    };
    let requested = match Requested::from_env() {
        Ok(requested) => requested,
        Err(e) => return fail(e),
    };
    // Made now if missing, so that the plan sees them. The hooks trust the
    // compiled-policy cache, so the program may not write it, and the mount
    // layer can hold only what exists. The preload library is written into
    // `~/.sandgate` once the plan is made; when carving, reading is granted
    // around the hidden floor directories by what exists when the plan is
    // made, so a directory made later would stay unreadable (the loader
    // would refuse the library in every process).
    let policy_cache = sandgate_policy::cache::cache_dir(&ctx.home);
    let state = ctx.home.join(sandgate_policy::floor::SANDGATE_DIR);
    for dir in policy_cache.iter().chain([&state]) {
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir);
    }
    // The policy's cache entry, written now: the program cannot write the
    // cache, and hooks that run inside it find the entry ready.
    let sources = crate::setup::sources_with_the_gate_on(global, &ctx);
    let loaded = sandgate_policy::cache::load(&sources, &ctx);
    // The credential stores the policy denies reading are hidden like the
    // floor; a policy that does not load hides them all.
    let stores = match &loaded {
        Ok(policy) => sandgate_policy::credentials::denied_by(policy),
        Err(_) => sandgate_policy::credentials::CREDENTIAL_STORES
            .iter()
            .collect(),
    };
    let inputs = RunPlanInputs {
        workspaces: workspaces.clone(),
        home: ctx.home.clone(),
        tmpdir: std::env::var_os("TMPDIR")
            .filter(|t| !t.is_empty())
            .map(PathBuf::from),
        settings,
        policy_cache,
        credentials: stores.iter().map(|s| s.path(&ctx.home)).collect(),
    };
    // `permissions.network`: the program's whole tree in a network namespace
    // whose one way out is the filtering proxy (see `crate::network`).
    let network = network_of(&loaded);
    let mut plan = RunPlan::build_with(&inputs, requested.first_choice());
    if requested == Requested::Mount && plan.protection != Protection::Mount {
        return fail(
            "SANDGATE_RUN_PROTECTION=mount: this build has no mount layer (x86-64 only); use `auto` or `carve`",
        );
    }
    let primary = SandboxFile::of(&workspaces[0]);

    if args.dry_run {
        if plan.protection == Protection::Mount {
            if let Err(e) = confine::probe_mounts(&plan) {
                if requested == Requested::Mount {
                    return fail(ConfineError::Mounts(e));
                }
                plan = RunPlan::build_with(&inputs, Protection::Carve);
            }
        }
        return dry_run(
            global.json,
            armed,
            armed_by,
            &plan,
            &primary,
            network.as_ref().filter(|_| armed),
        );
    }
    let Some((program, program_args)) = args.program.split_first() else {
        return fail(
            "no program to run; usage: sandgate run [--workspace DIR]... -- PROGRAM [ARGS]...",
        );
    };
    // The hooks inside the run speak to it on this socket (see
    // `crate::runlink`); made only when the run is armed.
    let link_socket = armed.then(|| open_link(&state)).flatten();
    let new_command = || {
        // Found here, the program is started by one `exec` (see
        // `crate::program`), under the name it was given.
        let mut command = match crate::program::find(program) {
            Some(path) => {
                let mut command = Command::new(path);
                command.arg0(program);
                command
            }
            None => Command::new(program),
        };
        command.args(program_args);
        if let Some(cwd) = &global.cwd {
            command.current_dir(cwd);
        }
        match &link_socket {
            Some((path, _)) => command.env(crate::runlink::SOCKET_ENV, path),
            None => command.env_remove(crate::runlink::SOCKET_ENV),
        };
        command
    };
    let mut command = new_command();
    if let Some(host) = host.as_mut() {
        host.prepare(&mut command);
    }

    if !armed {
        crate::warn_sandbox_off(&format!(
            "sandgate run is not armed: set \"enabled\": true in {} or SANDGATE_SANDBOX=1",
            primary.path().display()
        ));
        if network.is_some() {
            eprintln!(
                "sandgate: warning: the network is not filtered by `permissions.network`: the run is not armed"
            );
        }
        hold_signals(&mut command);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                eprintln!(
                    "sandgate: cannot start `{}`: {e}",
                    program.to_string_lossy()
                );
                return ExitCode::from(EXIT_FAILED);
            }
        };
        if let Err(e) = confine::forward_signals(&child) {
            eprintln!("sandgate: signals sent to sandgate will not reach the program: {e}");
        }
        let status = match host {
            Some(host) => {
                host.start(&mut child);
                host.wait(&mut child)
            }
            None => child.wait(),
        };
        return match status {
            Ok(status) => exit_code(status),
            Err(e) => {
                eprintln!("sandgate: cannot wait for the program: {e}");
                ExitCode::from(EXIT_FAILED)
            }
        };
    }

    // The prompt timeout (`permissions.prompt.timeout`) comes from the same
    // load, or its default when the policy does not load.
    let timeout = match &loaded {
        Ok(p) => {
            crate::auditlog::configure(p.settings(), &ctx.cwd);
            p.settings().prompt_timeout
        }
        Err(_) => Duration::from_secs(25),
    };

    // A daemon the program starts stays below sandgate, where the
    // supervisor recognises it as the program's (a UNIX socket it listens
    // on may be reached).
    let adopting = confine::adopt_orphans();
    if let Err(e) = &adopting {
        eprintln!("sandgate: daemons the program starts will not count as its own: {e}");
    }
    // The network namespace comes first: its hook must run while the
    // child still has its capabilities.
    let mut outside = match enter_network(&mut command, network.as_ref()) {
        Ok(outside) => outside,
        Err(e) => return fail(e),
    };
    hold_signals(&mut command);
    let confined = match confine::spawn(&mut command, &plan) {
        // No namespace here (user namespaces disabled or restricted, an old
        // kernel): nothing started; carve around every protected path.
        Err(ConfineError::Mounts(_)) if requested == Requested::Auto => {
            plan = RunPlan::build_with(&inputs, Protection::Carve);
            let mut command = new_command();
            if let Some(host) = host.as_mut() {
                host.prepare(&mut command);
            }
            outside = match enter_network(&mut command, network.as_ref()) {
                Ok(outside) => outside,
                Err(e) => return fail(e),
            };
            hold_signals(&mut command);
            confine::spawn(&mut command, &plan)
        }
        spawned => spawned,
    };
    // Named as given, not as found on `PATH` (`crate::program`).
    let confined = confined.map_err(|e| match e {
        ConfineError::Spawn { source, .. } => ConfineError::Spawn {
            program: program.to_string_lossy().into_owned(),
            source,
        },
        e => e,
    });
    let confined = match confined {
        Ok(confined) => confined,
        Err(ConfineError::Spawn { program, source }) if outside.is_some() => {
            return fail(format!(
                "cannot start `{program}`: {source} (while making its network namespace for \
                 `permissions.network`)"
            ))
        }
        Err(e) => return fail(e),
    };
    confine::clear_umask();
    let confine::Confined {
        mut child,
        listener,
    } = confined;
    // Before any thread starts: they inherit the blocked signals. While a
    // question holds the terminal, the program's writes to it raise SIGTTOU
    // in its whole process group, sandgate's own process included: blocked,
    // it never stops sandgate.
    hold_terminal_stops();
    if let Err(e) = confine::forward_signals(&child) {
        eprintln!("sandgate: signals sent to sandgate will not reach the program: {e}");
    }
    if adopting.is_ok() {
        if let Err(e) = confine::reap_orphans(child.id()) {
            eprintln!("sandgate: the program's orphans will not be collected until it ends: {e}");
        }
    }
    let terminal = TerminalMode::save();
    let program_name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (person, questions): (Arc<dyn Resolver>, _) = match host.as_mut() {
        Some(host) => (host.start(&mut child), None),
        None => {
            let (person, questions) = resolver(args.no_ui, &ctx.home, &program_name);
            (Arc::from(person), questions)
        }
    };
    // The program's `exec`s, tracked from its first (see
    // `sandgate_sandbox::supervisor::lineage`).
    let lineage = Arc::new(confine::Lineage::new(child.id()));
    let (link, resolver): (Option<Arc<Link>>, Box<dyn Resolver>) = match link_socket {
        Some((path, listener)) => {
            plan.unix_sockets.push(path);
            let link = Arc::new(Link::new(
                Arc::clone(&lineage),
                Arc::clone(&person),
                plan.clone(),
                primary.clone(),
                timeout,
                global.clone(),
                ctx.home.clone(),
            ));
            link.serve(listener);
            let gate = Gatekeeper {
                link: Arc::clone(&link),
            };
            (Some(link), Box::new(gate))
        }
        None => (None, Box::new(Person(Arc::clone(&person)))),
    };
    let socket = link.as_ref().and(plan.unix_sockets.last().cloned());
    let log = Arc::new(Log::new(link, primary.path().to_path_buf()));
    // With `permissions.network`: what decides the program's own connects
    // to addresses (a program that ignores the proxy variables).
    let mut route = None;
    if let (Some(outside), Some(network)) = (outside, network) {
        let told = Arc::clone(&log);
        let tell: crate::network::Tell = Arc::new(move |line| told.refusal(line));
        let command = args
            .program
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        // A host the lists do not decide is put to the run's questions,
        // where a person can answer (with the policy loaded): one at a
        // time, each answer holding for the rest of the run.
        let asker = loaded.ok().map(|policy| {
            crate::network::Asker::new(
                policy,
                ctx.clone(),
                Box::new(Person(Arc::clone(&person))),
                "run prompt",
            )
        });
        match crate::network::serve_telling(outside, network, &command, "run", Some(tell), asker) {
            Ok(served) => route = Some(served),
            Err(e) => {
                // Without its proxy the program reaches no host: say so, and stop it.
                let _ = child.kill();
                let _ = child.wait();
                return fail(format!(
                    "the network proxy did not start, so the program was stopped: {e}"
                ));
            }
        }
    }
    let supervisor = Supervisor::start(
        child.id(),
        lineage,
        listener,
        plan,
        primary,
        resolver,
        timeout,
        Arc::clone(&log) as Arc<dyn Reporter>,
        route,
    );
    if let Some(host) = host.as_mut() {
        host.supervising(supervisor.grants());
    }
    let status = match host {
        Some(host) => host.wait(&mut child),
        None => child.wait(),
    };
    supervisor.stop();
    if let Some(socket) = socket {
        let _ = std::fs::remove_file(socket);
    }
    // A question still open: it ends unanswered, and its window gives the
    // terminal back; the terminal's mode is then the one it had at the start.
    if let Some(questions) = questions {
        if questions.close() {
            if let Some(terminal) = terminal {
                terminal.restore();
            }
        }
    }
    log.finish();
    match status {
        Ok(status) => exit_code(status),
        Err(e) => {
            eprintln!("sandgate: cannot wait for the program: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// The network lists `sandgate run` enforces: `permissions.network` of the
/// policy; none when it has none. A policy that does not load cannot say,
/// so the network is filtered with nothing listed (every host refused).
fn network_of(
    loaded: &Result<sandgate_policy::Policy, sandgate_policy::LoadError>,
) -> Option<sandgate_policy::network::NetworkPolicy> {
    match loaded {
        Ok(policy) => policy.network().cloned(),
        Err(e) => {
            eprintln!(
                "sandgate: warning: the policy does not load ({e}), so the program's network is \
                 filtered with no host allowed"
            );
            Some(sandgate_policy::network::NetworkPolicy::default())
        }
    }
}

/// Has `command` start in a network namespace of its own whose one way
/// out is the proxy, when `network` filters the run; the end where its
/// proxy socket arrives.
fn enter_network(
    command: &mut Command,
    network: Option<&sandgate_policy::network::NetworkPolicy>,
) -> Result<Option<sandgate_sandbox::netns::Outside>, String> {
    if network.is_none() {
        return Ok(None);
    }
    sandgate_sandbox::netns::enter(command)
        .map(Some)
        .map_err(|e| format!("cannot prepare the network namespace for `permissions.network`: {e}"))
}

/// The socket the hooks inside the run speak to (`~/.sandgate/run/PID.sock`,
/// in sandgate's own directory, which the program cannot change), bound and
/// listening; `None` (with a note) when it cannot be made.
fn open_link(state: &Path) -> Option<(PathBuf, UnixListener)> {
    let dir = state.join("run");
    let made = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir);
    let path = dir.join(format!("{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    match made.and_then(|()| UnixListener::bind(&path)) {
        Ok(listener) => Some((path, listener)),
        Err(e) => {
            eprintln!(
                "sandgate: the agents' hooks cannot reach this run (`{}`: {e}); they decide alone",
                path.display()
            );
            None
        }
    }
}

/// What the model is told of a refusal during its tool call (through the
/// agent's post-tool hook): which write, why, and how the person can allow it.
fn refusal_for_the_model(
    attempt: &confine::Attempt,
    reason: confine::DenyReason,
    settings: &Path,
) -> String {
    let why = reason.describe(&attempt.path);
    let how = match reason {
        confine::DenyReason::Floor
        | confine::DenyReason::Protected
        | confine::DenyReason::SandgateOwn
        | confine::DenyReason::Unasked(_)
        | confine::DenyReason::LinkFromOutside
        | confine::DenyReason::Unnamed => {
            "no answer allows this; do not retry it or reach the same result another way".to_string()
        }
        _ => format!(
            "the person running the agent can allow it: by answering sandgate's question when a command that writes it is asked about, \
             or by adding \"{}\" to \"allow\" in {}; ask them if the write is needed, naming the path and why",
            attempt.path.display(),
            settings.display()
        ),
    };
    format!(
        "sandgate run refused the {} of `{}` by {}: {why}. This is the person's sandbox, not a failure to retry: {how}",
        attempt.operation,
        attempt.path.display(),
        attempt.process
    )
}

/// The person's resolver, as the supervisor's.
struct Person(Arc<dyn Resolver>);

impl Resolver for Person {
    fn resolve(&self, question: &Question) -> Resolution {
        self.0.resolve(question)
    }
}

/// Holds the signals that are forwarded to the program until
/// [`confine::forward_signals`] takes them: one sent right after the start
/// must not end sandgate and orphan the program.
fn hold_signals(command: &mut Command) {
    if let Err(e) = confine::hold_forwarded(command) {
        eprintln!("sandgate: signals sent to sandgate right at the start may end it: {e}");
    }
}

/// The program's exit code, or 128 + the signal that ended it.
fn exit_code(status: ExitStatus) -> ExitCode {
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(i32::from(EXIT_FAILED));
    ExitCode::from(u8::try_from(code).unwrap_or(EXIT_FAILED))
}

fn dry_run(
    json: bool,
    armed: bool,
    armed_by: &str,
    plan: &RunPlan,
    file: &SandboxFile,
    network: Option<&sandgate_policy::network::NetworkPolicy>,
) -> ExitCode {
    let mechanism = Mechanism::probe_for(plan.protection);
    let lists = network.map(|n| {
        let (deny, allow) = n.entries();
        let words = |v: Vec<&sandgate_policy::network::Entry>| {
            v.iter().map(|e| e.to_string()).collect::<Vec<_>>()
        };
        (words(allow), words(deny))
    });
    if json {
        let out = json!({
            "armed": armed,
            "armedBy": armed_by,
            "settingsFile": file.path(),
            "mechanism": mechanism,
            "workspaces": plan.workspaces,
            "allowed": plan.allowed,
            "protected": plan.held(),
            "guarded": plan.guarded(),
            "deny": plan.deny,
            "strictGit": plan.strict_git,
            "protection": plan.protection,
            "mounted": plan.mounted,
            "floor": plan.floor_dirs,
            "floorLinks": plan.floor_links,
            "credentials": plan.credentials,
            "floorAliases": plan.floor_aliases,
            "floorUnreachable": plan.floor_unreachable,
            "unixSockets": sandgate_sandbox::supervise::states(&plan.unix_sockets),
            "landlockRules": plan.rules.len(),
            "landlockReadRules": plan.read_rules.len(),
            "lineageRefused": sandgate_sandbox::supervisor::lineage::LINEAGE_REFUSED,
            "network": lists.as_ref().map(|(allow, deny)| json!({
                "proxy": format!("127.0.0.1:{}", sandgate_sandbox::netns::PROXY_PORT),
                "allow": allow,
                "deny": deny,
            })),
        });
        println!("{out:#}");
        return ExitCode::from(EXIT_OK);
    }
    println!("armed: {armed} ({armed_by})");
    println!("settings: {}", file.path().display());
    println!(
        "mechanism: {} (Landlock ABI {}, enforcement {}, answers applied in place)",
        mechanism.name, mechanism.landlock_abi, mechanism.enforcement
    );
    println!(
        "exec tracking: every execve recorded; refused: {}",
        sandgate_sandbox::supervisor::lineage::LINEAGE_REFUSED.join(", ")
    );
    println!("allowed (with everything beneath):");
    for a in &plan.allowed {
        let missing = if a.exists { "" } else { "  (missing)" };
        println!(
            "  {:<9} {}{missing}",
            format!("{:?}", a.kind).to_lowercase(),
            a.path.display()
        );
    }
    println!(
        "protected (read-only), held by {}:",
        match plan.protection {
            Protection::Mount => "bind mounts where they exist, else by carving",
            Protection::Carve => "carving the Landlock rules around them",
        }
    );
    for p in plan.held() {
        let how = if plan.mounted.iter().any(|m| m == p) {
            "  (bind mount)"
        } else if plan.protection == Protection::Mount {
            "  (carved)"
        } else {
            ""
        };
        println!("  {}{how}", p.display());
    }
    for p in plan.guarded() {
        println!("  {}  (missing: refused when created)", p.display());
    }
    println!("built-in floor (never written; unreadable but for the files named):");
    for f in &plan.floor_dirs {
        let how = if !f.exists {
            "  (missing; cannot be created)".to_string()
        } else if !f.hidden {
            "  (readable, read-only)".to_string()
        } else {
            let held = if plan.floor_mounts.iter().any(|m| m.dir == f.path) {
                "empty read-only mount"
            } else {
                "Landlock read rules carved around it"
            };
            if f.readable.is_empty() {
                format!("  ({held})")
            } else {
                format!("  ({held}; readable: {})", f.readable.join(", "))
            }
        };
        println!("  {}{how}", f.path.display());
    }
    for alias in &plan.floor_aliases {
        let how = if plan.floor_links.contains(&alias.path) {
            "never written, unreadable too"
        } else {
            "never written"
        };
        println!(
            "  {}  (another name of the floor's `{}`: {how})",
            alias.path.display(),
            alias.floor.display()
        );
    }
    if !plan.credentials.is_empty() {
        println!("credential stores (unreadable: deny rules of the policy):");
        for path in &plan.credentials {
            println!("  {}", path.display());
        }
    }
    if let Some(why) = &plan.floor_unreachable {
        println!("  cannot start armed: {why}");
    }
    if !plan.deny.is_empty() {
        println!("denied without asking:");
        for p in &plan.deny {
            println!("  {}", p.display());
        }
    }
    println!("UNIX sockets outside the run it may connect to (besides its own listeners):");
    if plan.unix_sockets.is_empty() {
        println!("  none");
    }
    for socket in sandgate_sandbox::supervise::states(&plan.unix_sockets) {
        println!("  {}  ({})", socket.path.display(), socket.state);
    }
    match &lists {
        Some((allow, deny)) => {
            println!(
                "network: filtered by `permissions.network`: only through the proxy on 127.0.0.1:{}",
                sandgate_sandbox::netns::PROXY_PORT
            );
            println!(
                "  allow: {}",
                if allow.is_empty() {
                    "none".into()
                } else {
                    allow.join(", ")
                }
            );
            println!(
                "  deny:  {}",
                if deny.is_empty() {
                    "none".into()
                } else {
                    deny.join(", ")
                }
            );
        }
        None => {
            println!("network: not filtered (no `permissions.network`, or the run is not armed)")
        }
    }
    ExitCode::from(EXIT_OK)
}

/// The terminal's mode when the program started. A question can still be on
/// screen when the program ends (asked for a process it left behind); the
/// prompt's raw mode then has to be undone here, as its thread ends with
/// sandgate without cleaning up.
struct TerminalMode {
    tty: File,
    termios: nix::sys::termios::Termios,
}

impl TerminalMode {
    fn save() -> Option<TerminalMode> {
        let tty = OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        let termios = nix::sys::termios::tcgetattr(&tty).ok()?;
        Some(TerminalMode { tty, termios })
    }

    /// Puts the saved mode back and says why the question goes unanswered.
    fn restore(mut self) {
        let _ = nix::sys::termios::tcsetattr(
            &self.tty,
            nix::sys::termios::SetArg::TCSANOW,
            &self.termios,
        );
        let _ = writeln!(
            self.tty,
            "\r\nsandgate: the program ended while a question was open; it stays unanswered"
        );
    }
}

/// Blocks the terminal's job-control stops (`SIGTTOU`, `SIGTTIN`) in the
/// calling thread and the threads it starts.
fn hold_terminal_stops() {
    let mut stops = nix::sys::signal::SigSet::empty();
    stops.add(nix::sys::signal::Signal::SIGTTOU);
    stops.add(nix::sys::signal::Signal::SIGTTIN);
    if let Err(e) = stops.thread_block() {
        eprintln!("sandgate: a question on this terminal may stop sandgate: {e}");
    }
}

/// Chooses who answers questions: nobody when `--no-ui` (or
/// `SANDGATE_NO_UI=1`) is given or there is no terminal; else the run's
/// questions, shown on the routes of [`crate::ask`]. The questions are
/// returned too, to be closed when the program ends.
fn resolver(no_ui: bool, home: &Path, program: &str) -> (Box<dyn Resolver>, Option<Questions>) {
    let terminal = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .is_ok();
    if no_ui || crate::prompt::no_ui_by_env() || !terminal {
        let nobody = NoHuman {
            reason: "no terminal to ask (headless or --no-ui)".into(),
        };
        return (Box::new(nobody), None);
    }
    match Questions::start(home, program, Routes::detect(terminal)) {
        Ok(questions) => (Box::new(questions.clone()), Some(questions)),
        Err(e) => {
            eprintln!("sandgate: questions cannot be asked ({e}); writes outside are denied");
            let nobody = NoHuman {
                reason: format!("questions cannot be asked: {e}"),
            };
            (Box::new(nobody), None)
        }
    }
}

/// Reports the supervisor's events in the audit log, and on stderr when that
/// is not the terminal the program draws on. While it is (an agent's
/// full-screen UI), nothing is written over the program's screen: refusals
/// are counted and the notes kept, and [`Log::finish`] prints them once the
/// program has ended. Quiet refusals ([`confine::DenyReason::quiet`]) are
/// only logged.
struct Log {
    hinted: AtomicBool,
    /// Whether stderr is a terminal (the program's screen).
    on_screen: bool,
    /// The socket of the terminal multiplexer sandgate runs in (`$TMUX`):
    /// the program is refused it (it would drive the person's terminal),
    /// quietly, as agents ask it for their window on start.
    multiplexer: Option<PathBuf>,
    /// Refusals not printed while the program ran.
    refused: AtomicUsize,
    /// The first of them, in words.
    first_refusal: Mutex<Option<String>>,
    /// Notes kept until the program ends.
    notes: Mutex<Vec<String>>,
    /// The hooks' link, told of each refusal so the model can be.
    link: Option<Arc<Link>>,
    /// The run's `sandbox.json`, named in what the model is told.
    settings: PathBuf,
}

impl Log {
    fn new(link: Option<Arc<Link>>, settings: PathBuf) -> Log {
        Log {
            link,
            settings,
            hinted: AtomicBool::new(false),
            on_screen: std::io::stderr().is_terminal(),
            multiplexer: std::env::var("TMUX")
                .ok()
                .and_then(|t| t.split(',').next().map(PathBuf::from))
                .filter(|p| p.is_absolute()),
            refused: AtomicUsize::new(0),
            first_refusal: Mutex::new(None),
            notes: Mutex::new(Vec::new()),
        }
    }

    /// Prints `line` now, or keeps it for [`Log::finish`] while the program
    /// draws on the terminal.
    fn say(&self, line: String) {
        if self.on_screen {
            self.notes
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(line);
        } else {
            eprintln!("{line}");
        }
    }

    /// A refusal that is not the supervisor's (the network proxy's): printed
    /// now, or counted and kept for [`Log::finish`] while the program draws
    /// on the terminal.
    fn refusal(&self, line: String) {
        if !self.on_screen {
            eprintln!("{line}");
            return;
        }
        self.refused.fetch_add(1, Ordering::Relaxed);
        self.first_refusal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get_or_insert_with(|| line.trim_start_matches("sandgate: ").to_string());
    }

    /// After the program ended: the notes kept, and one line for the
    /// refusals that were only logged.
    fn finish(&self) {
        let notes = std::mem::take(
            &mut *self
                .notes
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for line in notes {
            eprintln!("{line}");
        }
        let refused = self.refused.load(Ordering::Relaxed);
        let first = self
            .first_refusal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let (true, Some(first)) = (self.on_screen, first) {
            let more = match refused.saturating_sub(1) {
                0 => String::new(),
                1 => " and 1 more".into(),
                n => format!(" and {n} more"),
            };
            eprintln!(
                "sandgate: refused during the run: {first}{more}; `sandgate audit` shows each and why"
            );
        }
    }
}

impl Reporter for Log {
    fn report(&self, event: &Event) {
        match event {
            Event::Denied { attempt, reason } => {
                if let Some(link) = self
                    .link
                    .as_ref()
                    .filter(|_| *reason != confine::DenyReason::SandgateOwn)
                {
                    link.refused(refusal_for_the_model(attempt, *reason, &self.settings));
                }
                let quiet = reason.quiet()
                    || (*reason == confine::DenyReason::SocketOutside
                        && self.multiplexer.as_deref() == Some(attempt.path.as_path()));
                if quiet || self.on_screen {
                    self.refused.fetch_add(1, Ordering::Relaxed);
                    self.first_refusal
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .get_or_insert_with(|| {
                            format!(
                                "{} of `{}` ({})",
                                attempt.operation,
                                attempt.path.display(),
                                reason.describe(&attempt.path)
                            )
                        });
                } else {
                    eprintln!(
                        "sandgate: denied {} of `{}` by {} [pid {}]: {}",
                        attempt.operation,
                        attempt.path.display(),
                        attempt.process,
                        attempt.pid,
                        reason.describe(&attempt.path)
                    );
                }
            }
            Event::Allowed { .. } => {}
            Event::PermissionHint { path, process } => {
                let first = !self.hinted.swap(true, Ordering::Relaxed);
                let more = if first {
                    "; this is not a sandbox denial, so there is no prompt: change the mode or owner (chmod/chown) if the write is intended"
                } else {
                    ""
                };
                self.say(format!(
                    "sandgate: hint: {process} cannot write `{}`: permission denied by its file mode or ownership{more}",
                    path.display()
                ));
            }
            Event::Repository { path, process } => self.say(format!(
                "sandgate: note: {process} made a git repository at `{}`: its config and hooks are the program's, \
                 and git run there (or `git status` of the project, once it is a staged submodule) runs what they name; \
                 look at them before you use git there",
                path.display()
            )),
            Event::Error(message) => self.say(format!("sandgate: {message}")),
        }
        if let Some(decision) = event.decision() {
            crate::audit::record("run", "run", &decision);
        }
    }
}
