//! `sandgate mcp --http ADDR`: streamable HTTP with a bearer token.
//!
//! Every request must carry `Authorization: Bearer TOKEN`; anything else gets
//! 401 before the MCP layer sees it, so no tool runs. The token comes from
//! `SANDGATE_MCP_TOKEN` or is generated (256 random bits) and printed at start.

use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::SandgateServer;

/// The environment variable that sets the token.
pub const TOKEN_ENV: &str = "SANDGATE_MCP_TOKEN";
/// The shortest token sandgate accepts from the environment.
pub const MIN_TOKEN_LEN: usize = 16;

/// Where the token came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    /// `SANDGATE_MCP_TOKEN`.
    Env,
    /// Generated at start.
    Generated,
}

/// The token from the environment, or a fresh random one.
pub fn token() -> Result<(String, TokenSource), String> {
    match std::env::var(TOKEN_ENV) {
        Ok(t) if t.len() >= MIN_TOKEN_LEN && t.bytes().all(|b| b.is_ascii_graphic()) => {
            Ok((t, TokenSource::Env))
        }
        Ok(t) if !t.is_empty() => Err(format!(
            "`{TOKEN_ENV}` must be at least {MIN_TOKEN_LEN} printable ASCII characters without spaces"
        )),
        _ => {
            let mut bytes = [0u8; 32];
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| f.read_exact(&mut bytes))
                .map_err(|e| format!("cannot generate a token from `/dev/urandom`: {e}"))?;
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            Ok((hex, TokenSource::Generated))
        }
    }
}

/// Compare without an early exit, so the time taken does not reveal the prefix.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn require_token(
    State(expected): State<Arc<String>>,
    request: Request,
    next: Next,
) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match given {
        Some(t) if same(t.as_bytes(), expected.as_bytes()) => next.run(request).await,
        _ => {
            let mut response = (
                StatusCode::UNAUTHORIZED,
                Body::from(
                    "sandgate: a valid bearer token is required (Authorization: Bearer TOKEN)\n",
                ),
            )
                .into_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            response
        }
    }
}

/// Serve `server` on `listener` until `ct` is cancelled.
pub async fn serve(
    server: SandgateServer,
    listener: tokio::net::TcpListener,
    token: String,
    remote: bool,
    ct: CancellationToken,
) -> std::io::Result<()> {
    let mut config =
        StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token());
    if remote {
        // The Host check guards loopback servers against DNS rebinding; a server
        // meant to be reached by other names relies on the token instead.
        config = config.disable_allowed_hosts();
    }
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service).layer(
        axum::middleware::from_fn_with_state(Arc::new(token), require_token),
    );
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { ct.cancelled().await })
        .await
}

/// Whether `addr` may be bound without `--allow-remote`.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_tokens_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
    }
}
