//! `sandgate mcp [--http ADDR [--allow-remote] [--allow-origin ORIGIN]...] [--no-ui]`: serve the gated
//! tools over MCP, on stdio (the default) or streamable HTTP.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use sandgate_policy::ask::Resolver;
use sandgate_tools::Dispatcher;
use tokio_util::sync::CancellationToken;

use crate::mcp::http::{self, TokenSource};
use crate::mcp::{SandgateServer, Shared};
use crate::prompt::TerminalPrompt;
use crate::setup::GlobalArgs;
use crate::{EXIT_CANNOT_CHECK, EXIT_FAILED};

/// Serve the gated tools over MCP.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve streamable HTTP on this address (e.g. `127.0.0.1:8765`) instead of stdio.
    /// Every request needs `Authorization: Bearer TOKEN` (`SANDGATE_MCP_TOKEN`, or
    /// generated and printed at start).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// Allow `--http` to bind an address other than loopback.
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
    /// With `--http`, also accept requests whose `Origin` header is ORIGIN
    /// (`scheme://host[:port]`, `:*` for any port; repeatable). Without it only
    /// loopback origins (`http://localhost:*`, `http://127.0.0.1:*`,
    /// `http://[::1]:*` and their `https` forms) or no `Origin` are accepted.
    #[arg(long, requires = "http", value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// Never prompt on the terminal: an ASK the client cannot elicit is a DENY
    /// (also `SANDGATE_NO_UI=1`).
    #[arg(long)]
    pub no_ui: bool,
}

/// Run `mcp`.
pub fn run(global: &GlobalArgs, args: McpArgs) -> ExitCode {
    if let Some(bad) = args.allow_origin.iter().find(|o| !http::is_origin(o)) {
        eprintln!(
            "sandgate: `--allow-origin {bad}` is not an origin; write `scheme://host[:port]`, e.g. `https://app.example.com` or `http://localhost:*`"
        );
        return ExitCode::from(EXIT_CANNOT_CHECK);
    }
    if let Some(addr) = args.http {
        if !http::is_loopback(&addr) && !args.allow_remote {
            eprintln!(
                "sandgate: `{addr}` is not a loopback address; pass --allow-remote to serve other machines"
            );
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    }
    let loaded = match crate::load(global) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let fallback: Arc<dyn Resolver> = Arc::new(TerminalPrompt::new(args.no_ui));
    let tools = Dispatcher::new(
        loaded.policy,
        loaded.ctx,
        Arc::clone(&fallback),
        Box::new(|tool, decision, resolution| {
            crate::audit::record_outcome(
                "mcp",
                tool,
                decision,
                crate::audit::ask_outcome(resolution),
            )
        }),
    )
    .with_network(Box::new(|outside, lists, command, ask| {
        // A host the lists do not decide is asked through the call's
        // client (elicitation), or refused when nobody can answer.
        let asker = ask.resolver.map(|resolver| {
            crate::network::Asker::new(ask.policy, ask.ctx, Box::new(OfTheCall(resolver)), "mcp")
                .with_reloaded(ask.reloaded)
        });
        crate::network::serve_stoppable(outside, lists, command, "mcp", asker)
    }));
    let shared = Arc::new(Shared { tools, fallback });
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sandgate: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let server = SandgateServer::new(Arc::clone(&shared));
    let code = match args.http {
        None => runtime.block_on(serve_stdio(server)),
        Some(addr) => runtime.block_on(serve_http(
            server,
            addr,
            args.allow_remote,
            args.allow_origin,
        )),
    };
    shared.tools.jobs().kill_all();
    // A blocked stdin read must not hold the process open after the session ended.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    code
}

/// A resolver shared with the call that started the command.
struct OfTheCall(Arc<dyn Resolver>);

impl Resolver for OfTheCall {
    fn resolve(
        &self,
        question: &sandgate_policy::ask::Question,
    ) -> sandgate_policy::ask::Resolution {
        self.0.resolve(question)
    }
}

async fn serve_stdio(server: SandgateServer) -> ExitCode {
    match crate::mcp::stdio::serve(server).await {
        Ok(Ok(_)) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("sandgate: the MCP session failed: {e}");
            ExitCode::from(EXIT_FAILED)
        }
        Err(e) => {
            eprintln!("sandgate: the MCP session did not start: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

async fn serve_http(
    server: SandgateServer,
    addr: SocketAddr,
    remote: bool,
    origins: Vec<String>,
) -> ExitCode {
    let (token, source) = match http::token() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("sandgate: {e}");
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    };
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("sandgate: cannot listen on `{addr}`: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let bound = listener.local_addr().unwrap_or(addr);
    if !http::is_loopback(&bound) {
        eprintln!(
            "sandgate: warning: serving the gated tools to other machines on {bound}; anyone with the token can read and write files and run commands as you"
        );
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "sandgate mcp: streamable HTTP on http://{bound}/mcp");
    match source {
        TokenSource::Generated => {
            let _ = writeln!(out, "sandgate mcp: bearer token: {token}");
        }
        TokenSource::Env => {
            let _ = writeln!(out, "sandgate mcp: bearer token from `{}`", http::TOKEN_ENV);
        }
    }
    let _ = out.flush();
    drop(out);
    let ct = CancellationToken::new();
    let stop = ct.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    });
    match http::serve(server, listener, token, remote, origins, ct).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sandgate: the HTTP server failed: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}
