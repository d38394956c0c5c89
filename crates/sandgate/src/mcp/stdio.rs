//! The stdio transport's framing, in front of rmcp.
//!
//! rmcp's line reader drops a line that is too long or is not JSON without an
//! answer, so a client waits for a reply that never comes. sandgate reads
//! stdin itself: every line of at most [`MAX_MESSAGE_BYTES`] that is JSON goes
//! on to rmcp unchanged; a longer line gets a JSON-RPC `-32600` error naming
//! the limit (with the request's `id`, found by scanning the line as it
//! streams past, never holding it whole), and a line that is not JSON, or
//! that JSON rmcp cannot read (a string that is not UTF-8, a lone surrogate,
//! nesting deeper than 128), gets `-32700`, with its `id` when one is found. The answers and rmcp's own messages reach stdout whole, one line
//! each, through one writer.

use rmcp::ServiceExt;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::SandgateServer;

/// The largest JSON-RPC message sandgate accepts, on stdio and over HTTP.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;

/// JSON-RPC: the request is not a valid request object.
const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: the text is not JSON.
const PARSE_ERROR: i64 = -32700;

/// The error for a message over the limit, as a JSON-RPC response with `id`.
pub fn too_large(id: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": INVALID_REQUEST,
            "message": format!(
                "the message is larger than {} MiB ({MAX_MESSAGE_BYTES} bytes), the most sandgate accepts in one request; send the content in smaller parts",
                MAX_MESSAGE_BYTES / (1024 * 1024)
            ),
            "data": {"limit_bytes": MAX_MESSAGE_BYTES},
        }
    })
}

/// The error for a line that is not JSON rmcp can read, with the request's
/// `id` when a scan finds one (`null` otherwise).
fn parse_error(detail: &str, id: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": PARSE_ERROR, "message": format!("parse error: the line is not JSON ({detail})")},
    })
}

/// Serve `server` on stdin/stdout until stdin ends. Returns rmcp's result.
pub async fn serve(
    server: SandgateServer,
) -> Result<Result<rmcp::service::QuitReason, String>, String> {
    let (to_rmcp, rmcp_in) = tokio::io::duplex(256 * 1024);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(256 * 1024);
    let (errors, error_lines) = mpsc::unbounded_channel::<Vec<u8>>();
    let output = tokio::spawn(write_output(from_rmcp, error_lines, tokio::io::stdout()));
    let input = tokio::spawn(read_input(tokio::io::stdin(), to_rmcp, errors));
    let running = match server.serve((rmcp_in, rmcp_out)).await {
        Ok(r) => r,
        Err(e) => {
            input.abort();
            output.abort();
            return Err(e.to_string());
        }
    };
    let result = running.waiting().await.map_err(|e| e.to_string());
    input.abort();
    let _ = output.await;
    Ok(result)
}

/// Copy whole lines from rmcp and the framing errors to `out`.
async fn write_output(
    from_rmcp: impl AsyncRead + Unpin,
    mut errors: mpsc::UnboundedReceiver<Vec<u8>>,
    mut out: impl AsyncWrite + Unpin,
) {
    let mut lines = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let mut errors_open = true;
    loop {
        tokio::select! {
            read = lines.read_until(b'\n', &mut line) => {
                match read {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if out.write_all(&line).await.and(out.flush().await).is_err() {
                            return;
                        }
                        line.clear();
                    }
                }
            }
            error = errors.recv(), if errors_open => match error {
                Some(text) => {
                    if out.write_all(&text).await.and(out.flush().await).is_err() {
                        return;
                    }
                }
                None => errors_open = false,
            },
        }
    }
    // rmcp ended; answer what the reader still reported.
    while let Ok(text) = errors.try_recv() {
        if out.write_all(&text).await.is_err() {
            return;
        }
    }
    let _ = out.flush().await;
}

fn response_line(value: &Value) -> Vec<u8> {
    let mut text = value.to_string().into_bytes();
    text.push(b'\n');
    text
}

/// Read `input` line by line, bounded; pass JSON lines to rmcp, answer the rest.
async fn read_input(
    input: impl AsyncRead + Unpin,
    mut to_rmcp: impl AsyncWrite + Unpin,
    errors: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line: Vec<u8> = Vec::new();
    let mut oversized: Option<IdScan> = None;
    loop {
        let (consumed, ended) = {
            let available = match reader.fill_buf().await {
                Ok(a) => a,
                Err(_) => return,
            };
            if available.is_empty() {
                // A last line without a newline is still a message.
                if oversized.is_none() && !line.is_empty() {
                    let _ = handle_line(&line, &mut to_rmcp, &errors).await;
                }
                return;
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..take];
            match &mut oversized {
                Some(scan) => scan.feed(chunk),
                None if line.len() + take > MAX_MESSAGE_BYTES + 1 => {
                    let mut scan = IdScan::default();
                    scan.feed(&line);
                    scan.feed(chunk);
                    line.clear();
                    line.shrink_to(64 * 1024);
                    oversized = Some(scan);
                }
                None => line.extend_from_slice(chunk),
            }
            (take, newline.is_some())
        };
        reader.consume(consumed);
        if !ended {
            continue;
        }
        if let Some(scan) = oversized.take() {
            if errors.send(response_line(&too_large(scan.id()))).is_err() {
                return;
            }
            continue;
        }
        if handle_line(&line, &mut to_rmcp, &errors).await.is_err() {
            return;
        }
        line.clear();
    }
}

/// One whole line: forward it if it is JSON, answer it if not.
async fn handle_line(
    line: &[u8],
    to_rmcp: &mut (impl AsyncWrite + Unpin),
    errors: &mpsc::UnboundedSender<Vec<u8>>,
) -> Result<(), ()> {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let body = body.strip_suffix(b"\r").unwrap_or(body);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    // Parsed whole, as rmcp will parse it: a string that is not UTF-8, a
    // lone surrogate or nesting past serde_json's limit pass a skimming
    // check but not rmcp, which would drop the line without an answer.
    if let Err(e) = serde_json::from_slice::<Value>(body) {
        let mut scan = IdScan::default();
        scan.feed(body);
        return errors
            .send(response_line(&parse_error(&e.to_string(), scan.id())))
            .map_err(|_| ());
    }
    to_rmcp.write_all(body).await.map_err(|_| ())?;
    to_rmcp.write_all(b"\n").await.map_err(|_| ())?;
    to_rmcp.flush().await.map_err(|_| ())
}

/// Finds the top-level `"id"` of a JSON object fed in pieces, keeping only a
/// few bytes: a small streaming scanner, because a JSON parser would have to
/// hold the whole oversized message.
#[derive(Default)]
struct IdScan {
    depth: u32,
    in_string: bool,
    escape: bool,
    expect_key: bool,
    reading_key: bool,
    key: Vec<u8>,
    capturing: bool,
    raw: Vec<u8>,
    done: bool,
}

/// The longest `id` kept.
const MAX_ID_BYTES: usize = 256;

impl IdScan {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.done {
                return;
            }
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if self.capturing {
            if !self.in_string && self.depth == 1 && (b == b',' || b == b'}') {
                self.capturing = false;
                self.done = true;
                return;
            }
            if self.raw.len() < MAX_ID_BYTES + 1 {
                self.raw.push(b);
            }
        }
        if self.in_string {
            if self.escape {
                self.escape = false;
            } else if b == b'\\' {
                self.escape = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.reading_key {
                    self.reading_key = false;
                    return;
                }
            }
            if self.reading_key && self.key.len() < 8 {
                self.key.push(b);
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.reading_key = true;
                    self.expect_key = false;
                    self.key.clear();
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth == 1 {
                    self.expect_key = b == b'{';
                }
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b':' if self.depth == 1 && self.key == b"id" => {
                self.capturing = true;
                self.raw.clear();
            }
            b',' if self.depth == 1 => self.expect_key = true,
            _ => {}
        }
    }

    /// The request's id if it was a number or a string, else `null`.
    fn id(&self) -> Value {
        if self.raw.len() > MAX_ID_BYTES {
            return Value::Null;
        }
        match serde_json::from_slice::<Value>(self.raw.trim_ascii()) {
            Ok(v @ (Value::Number(_) | Value::String(_))) => v,
            _ => Value::Null,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(text: &str, piece: usize) -> Value {
        let mut scan = IdScan::default();
        for chunk in text.as_bytes().chunks(piece) {
            scan.feed(chunk);
        }
        scan.id()
    }

    #[test]
    fn finds_the_top_level_id_in_any_split() {
        for piece in [1, 2, 3, 7, 1000] {
            assert_eq!(
                id_of(r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#, piece),
                json!(7)
            );
            assert_eq!(
                id_of(
                    r#"{"params":{"id":1,"s":"\"id\":3"},"id" : "a\"b","x":1}"#,
                    piece
                ),
                json!("a\"b")
            );
            assert_eq!(
                id_of(r#"{"method":"x","params":{"id":5}}"#, piece),
                Value::Null
            );
            assert_eq!(id_of(r#"[{"id":1}]"#, piece), Value::Null);
            assert_eq!(id_of(r#"{"id":{"a":1}}"#, piece), Value::Null);
            assert_eq!(id_of(r#"{"idx":1,"id":2}"#, piece), json!(2));
        }
    }
}
