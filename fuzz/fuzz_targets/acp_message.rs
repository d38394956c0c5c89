//! What `sandgate acp` reads from the editor and the agent: a byte stream
//! of newline-delimited JSON-RPC messages. Whatever the bytes:
//! - the framing yields exactly the stream's non-blank lines, in order, a
//!   line over the limit as its length and its first bytes (whatever the
//!   reader's buffer size);
//! - the scan of a message's first bytes finds the same `id` and `method`
//!   as a full JSON parse of a whole message;
//! - a permission request's tool call and the client methods
//!   (`fs/read_text_file`, `fs/write_text_file`, `terminal/create`) map to
//!   the calls the policy judges, or to an error in words, and every call
//!   is judged without panicking.
//!
//! The first byte picks the reader's buffer size, the second the size
//! limit (small, so that oversized lines are common).
#![no_main]

use std::io::{BufReader, Cursor};

use libfuzzer_sys::fuzz_target;
use sandgate_fuzz::acp::frame::{scan_head, Line, Lines};
use sandgate_fuzz::acp::judge;
use sandgate_fuzz::hook::map::Gate;
use serde_json::{Map, Value};

/// The first bytes of an oversized line the framing keeps (its `HEAD`).
const HEAD: usize = 64 * 1024;

fn expected(stream: &[u8], max: usize) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut segments: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    if stream.ends_with(b"\n") || stream.is_empty() {
        segments.pop();
    }
    for seg in segments {
        if seg.len() > max {
            lines.push(Line::TooLong {
                head: seg[..seg.len().min(HEAD)].to_vec(),
                len: seg.len(),
            });
        } else if !seg.iter().all(u8::is_ascii_whitespace) {
            lines.push(Line::Message(seg.to_vec()));
        }
    }
    lines
}

fn judge_message(message: &Map<String, Value>) {
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return;
    };
    let empty = Map::new();
    let params = message
        .get("params")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let t = sandgate_fuzz::tree();
    let cwd = t.work.to_str().expect("a UTF-8 tree");
    let gate = if method == "session/request_permission" {
        let Some(call) = params.get("toolCall").and_then(Value::as_object) else {
            return;
        };
        judge::tool_call(call, cwd)
    } else {
        match judge::client_method(method, params, cwd) {
            Some(gate) => gate,
            None => return,
        }
    };
    match gate {
        Ok(Gate::Calls(checks)) => {
            for check in checks {
                let _ = t.policy.evaluate(&check.call, &t.ctx);
            }
        }
        Ok(Gate::OutOfScope) => {}
        Err(e) => assert!(!e.to_string().is_empty(), "{message:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let [cap, limit, stream @ ..] = data else {
        return;
    };
    let max = 16 + usize::from(*limit);
    let reader = BufReader::with_capacity(1 + usize::from(*cap % 64), Cursor::new(stream));
    let mut lines = Lines::new(reader, max);
    let mut got = Vec::new();
    while let Some(line) = lines.next_line().expect("reading memory cannot fail") {
        got.push(line);
    }
    assert_eq!(got, expected(stream, max), "max {max}");

    for line in &got {
        let Line::Message(bytes) = line else {
            continue;
        };
        let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        let head = scan_head(bytes);
        assert_eq!(head.id.as_ref(), message.get("id"), "{bytes:?}");
        assert_eq!(head.method, message.contains_key("method"), "{bytes:?}");
        judge_message(&message);
    }
});
