//! `sandgate mcp --http ADDR`: streamable HTTP with a bearer token.
//!
//! Every request must carry `Authorization: Bearer TOKEN`; anything else gets
//! 401 before the MCP layer sees it, so no tool runs. The token comes from
//! `SANDGATE_MCP_TOKEN` or is generated (256 random bits) and printed at start.
//! A request whose `Origin` header names a page other than a loopback one (or
//! one `--allow-origin` names) is refused with 403, as the MCP transport
//! specification asks, so a web page cannot drive the tools from a browser.

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

/// The origins a browser page on this machine has: loopback names, any port.
pub const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// Whether `text` has the shape of an origin: `scheme://host[:port|:*]`, no path.
pub fn is_origin(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once("://") else {
        return false;
    };
    let scheme_ok = !scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    if !scheme_ok || rest.contains(['/', '?', '#', '@', ' ']) {
        return false;
    }
    let (host, port) = match rest.strip_prefix('[') {
        Some(inner) => match inner.split_once(']') {
            Some((host, after)) => (host, after),
            None => return false,
        },
        None => match rest.split_once(':') {
            Some((host, _)) => (host, &rest[host.len()..]),
            None => (rest, ""),
        },
    };
    let port_ok = match port.strip_prefix(':') {
        None => port.is_empty(),
        Some(p) => p == "*" || p.parse::<u16>().is_ok(),
    };
    !host.is_empty() && port_ok
}

/// A response over the size limit (rmcp answers 413 in plain text) becomes a
/// JSON-RPC error that names the limit, so a client can show it.
async fn json_rpc_limit(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    if response.status() != StatusCode::PAYLOAD_TOO_LARGE {
        return response;
    }
    let mut response = (
        StatusCode::PAYLOAD_TOO_LARGE,
        Body::from(super::stdio::too_large(serde_json::Value::Null).to_string()),
    )
        .into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Serve `server` on `listener` until `ct` is cancelled. A request with an
/// `Origin` header must come from [`LOOPBACK_ORIGINS`] or `origins` (403 otherwise).
pub async fn serve(
    server: SandgateServer,
    listener: tokio::net::TcpListener,
    token: String,
    remote: bool,
    origins: Vec<String>,
    ct: CancellationToken,
) -> std::io::Result<()> {
    let allowed: Vec<String> = LOOPBACK_ORIGINS
        .iter()
        .map(|o| o.to_string())
        .chain(origins)
        .collect();
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(ct.child_token())
        .with_allowed_origins(allowed)
        .enforce_origin_validation()
        .with_max_request_body_bytes(super::stdio::MAX_MESSAGE_BYTES);
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
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(json_rpc_limit))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(token),
            require_token,
        ));
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
    fn origins_have_a_scheme_and_a_host_only() {
        for good in [
            "https://app.example.com",
            "http://localhost:*",
            "http://[::1]:8080",
            "http://10.0.0.2:3000",
        ] {
            assert!(is_origin(good), "{good}");
        }
        for bad in [
            "app.example.com",
            "https://",
            "https://a.example/path",
            "http://a:b",
            "null",
            "https://u@a.example",
        ] {
            assert!(!is_origin(bad), "{bad}");
        }
    }

    #[test]
    fn compares_tokens_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
    }
}
