//! The options every subcommand shares, and loading the policy and context
//! the way every subcommand does.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use sandgate_policy::{Context, Policy, Sources};

use crate::EXIT_CANNOT_CHECK;

/// Options every subcommand understands.
#[derive(Debug, Clone, Args, Default)]
pub struct GlobalArgs {
    /// Central policy file (default: ~/.sandgate/permissions.yaml).
    #[arg(long, global = true, env = "SANDGATE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Local (project) policy file (default: ./.sandgate/permissions.yaml).
    #[arg(
        long,
        global = true,
        env = "SANDGATE_LOCAL_CONFIG",
        value_name = "FILE"
    )]
    pub local_config: Option<PathBuf>,
    /// Switch the gate and the sandbox off, whatever the policy files say.
    #[arg(long, global = true)]
    pub no_sandbox: bool,
    /// Working directory that relative paths resolve against (default: the process CWD).
    #[arg(long, global = true, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
}

/// A loaded policy and the context it was compiled for.
pub struct Loaded {
    /// The compiled policy.
    pub policy: Policy,
    /// The working and home directories.
    pub ctx: Context,
}

/// The policy files named by the options and found from `ctx`.
pub fn sources(global: &GlobalArgs, ctx: &Context) -> Sources {
    discover(global, ctx, global.no_sandbox)
}

/// The policy files, as [`sources`], but with `--no-sandbox` not applied:
/// for the commands that look at the rules themselves, or that must not run
/// a program with the gate off.
pub fn sources_with_the_gate_on(global: &GlobalArgs, ctx: &Context) -> Sources {
    discover(global, ctx, false)
}

fn discover(global: &GlobalArgs, ctx: &Context, no_sandbox: bool) -> Sources {
    Sources::discover(
        global.config.clone(),
        global.local_config.clone(),
        no_sandbox,
        &ctx.cwd,
        &ctx.home,
    )
}

/// Build the context and load the policy (through the compiled-policy cache,
/// which never changes a decision), or print why not and give exit code 2.
/// Prints the sandbox-off warning when the gate is off.
pub fn load(global: &GlobalArgs) -> Result<Loaded, ExitCode> {
    let ctx = context(global)?;
    let sources = sources(global, &ctx);
    let policy = sandgate_policy::cache::load(&sources, &ctx).map_err(|e| {
        eprintln!("sandgate: {e}");
        ExitCode::from(EXIT_CANNOT_CHECK)
    })?;
    if !policy.settings().sandbox {
        crate::warn_sandbox_off(&policy.settings().sandbox_reason);
    }
    crate::auditlog::configure(policy.settings(), &ctx.cwd);
    Ok(Loaded { policy, ctx })
}

/// The context alone (`--cwd` or the process CWD, and `$HOME`).
pub fn context(global: &GlobalArgs) -> Result<Context, ExitCode> {
    Context::from_env(global.cwd.as_deref()).map_err(|e| {
        eprintln!("sandgate: {e}");
        ExitCode::from(EXIT_CANNOT_CHECK)
    })
}
