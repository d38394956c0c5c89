//! ACP's framing: one JSON-RPC message per line, each way.
//!
//! A line is read whole up to a size limit ([`MAX_MESSAGE_ENV`], default
//! [`DEFAULT_MAX_MESSAGE`]); a longer one is not kept: its first bytes are
//! scanned for the message's `id` (and whether it is a request), the rest is
//! skipped up to its newline, and the relay answers it with a JSON-RPC error
//! instead of waiting for the end of a message it will not hold.

use std::io::{self, BufRead, Write};
use std::sync::{Mutex, PoisonError};

use serde_json::Value;

/// The largest message relayed by default: 64 MiB (an `fs/write_text_file`
/// carries a whole file).
pub const DEFAULT_MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// The variable that sets another limit, in bytes.
pub const MAX_MESSAGE_ENV: &str = "SANDGATE_ACP_MAX_MESSAGE_BYTES";

/// How much of an oversized line is kept to find its `id`.
const HEAD: usize = 64 * 1024;

/// The limit in force: [`MAX_MESSAGE_ENV`] when it holds a number of at
/// least 1 KiB, else [`DEFAULT_MAX_MESSAGE`] (a bad value is named).
pub fn max_message() -> usize {
    let Some(value) = std::env::var_os(MAX_MESSAGE_ENV).filter(|v| !v.is_empty()) else {
        return DEFAULT_MAX_MESSAGE;
    };
    match value.to_string_lossy().trim().parse::<usize>() {
        Ok(n) if n >= 1024 => n,
        _ => {
            eprintln!(
                "sandgate: `{MAX_MESSAGE_ENV}` must be a whole number of bytes of at least 1024, \
                 not `{}`; the default {DEFAULT_MAX_MESSAGE} is used",
                value.to_string_lossy()
            );
            DEFAULT_MAX_MESSAGE
        }
    }
}

/// One line read.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A whole line, without its newline.
    Message(Vec<u8>),
    /// A line over the limit: its first bytes and its length.
    TooLong {
        /// The first bytes (up to 64 KiB).
        head: Vec<u8>,
        /// The whole length, newline excluded.
        len: usize,
    },
}

/// Reads lines of at most `max` bytes.
pub struct Lines<R> {
    inner: R,
    max: usize,
}

impl<R: BufRead> Lines<R> {
    /// Lines of `inner`, each at most `max` bytes.
    pub fn new(inner: R, max: usize) -> Lines<R> {
        Lines { inner, max }
    }

    /// The next line, or `None` at the end of the input. A last line
    /// without a newline is a line; empty lines are skipped.
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        loop {
            let mut kept: Vec<u8> = Vec::new();
            let mut len = 0usize;
            let mut ended = false;
            loop {
                let buf = match self.inner.fill_buf() {
                    Ok(buf) => buf,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                if buf.is_empty() {
                    break;
                }
                let (chunk, used, newline) = match buf.iter().position(|&b| b == b'\n') {
                    Some(i) => (&buf[..i], i + 1, true),
                    None => (buf, buf.len(), false),
                };
                let room = if len + chunk.len() <= self.max {
                    chunk.len()
                } else {
                    HEAD.saturating_sub(kept.len()).min(chunk.len())
                };
                if len + chunk.len() > self.max && kept.len() > HEAD {
                    kept.truncate(HEAD);
                }
                kept.extend_from_slice(&chunk[..room]);
                len += chunk.len();
                self.inner.consume(used);
                if newline {
                    ended = true;
                    break;
                }
            }
            if !ended && len == 0 {
                return Ok(None);
            }
            if len > self.max {
                kept.truncate(HEAD);
                return Ok(Some(Line::TooLong { head: kept, len }));
            }
            if kept.iter().all(u8::is_ascii_whitespace) {
                if !ended {
                    return Ok(None);
                }
                continue;
            }
            return Ok(Some(Line::Message(kept)));
        }
    }
}

/// One side's output: whole lines, one writer at a time.
pub struct Out {
    inner: Mutex<Option<Box<dyn Write + Send>>>,
}

impl Out {
    /// Lines written to `inner`.
    pub fn new(inner: Box<dyn Write + Send>) -> Out {
        Out {
            inner: Mutex::new(Some(inner)),
        }
    }

    /// Writes `line` and a newline, and flushes.
    pub fn send(&self, line: &[u8]) -> io::Result<()> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(w) = inner.as_mut() else {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"));
        };
        w.write_all(line)?;
        w.write_all(b"\n")?;
        w.flush()
    }

    /// Writes `message` as one line.
    pub fn send_json(&self, message: &Value) -> io::Result<()> {
        self.send(message.to_string().as_bytes())
    }

    /// Closes the output (the reader sees the end of its input).
    pub fn close(&self) {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

/// What the first bytes of an oversized message say about it.
#[derive(Debug, Default, PartialEq)]
pub struct Head {
    /// Its `id`, when the bytes hold it whole.
    pub id: Option<Value>,
    /// Whether it has a `method` (a request or a notification).
    pub method: bool,
}

/// Scans the top-level keys of the JSON object that `bytes` begins, as far
/// as they go, for `id` and `method`.
pub fn scan_head(bytes: &[u8]) -> Head {
    let mut head = Head::default();
    let mut s = Scanner { b: bytes, i: 0 };
    s.ws();
    if !s.eat(b'{') {
        return head;
    }
    loop {
        s.ws();
        let Some(key) = s.string() else {
            return head;
        };
        s.ws();
        if !s.eat(b':') {
            return head;
        }
        s.ws();
        let start = s.i;
        if !s.value() {
            return head;
        }
        let raw = &bytes[start..s.i];
        match key.as_str() {
            "id" => head.id = serde_json::from_slice(raw).ok(),
            "method" => head.method = true,
            _ => {}
        }
        s.ws();
        if !s.eat(b',') {
            return head;
        }
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while self.b.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// A whole string; `None` when it is not one or does not end.
    fn string(&mut self) -> Option<String> {
        let start = self.i;
        if !self.skip_string() {
            return None;
        }
        serde_json::from_slice(&self.b[start..self.i]).ok()
    }

    fn skip_string(&mut self) -> bool {
        if !self.eat(b'"') {
            return false;
        }
        while let Some(&c) = self.b.get(self.i) {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'"' => return true,
                _ => {}
            }
        }
        false
    }

    /// Skips one whole value; `false` when it does not end in the bytes.
    fn value(&mut self) -> bool {
        match self.b.get(self.i) {
            None => false,
            Some(b'"') => self.skip_string(),
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                while let Some(&c) = self.b.get(self.i) {
                    match c {
                        b'"' => {
                            if !self.skip_string() {
                                return false;
                            }
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return true;
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
                false
            }
            Some(_) => {
                let start = self.i;
                while self
                    .b
                    .get(self.i)
                    .is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace())
                {
                    self.i += 1;
                }
                self.i > start && self.i < self.b.len()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut r = Lines::new(input, max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(l);
        }
        out
    }

    #[test]
    fn lines_are_split_kept_whole_and_cut_past_the_limit() {
        let got = lines(b"{\"a\":1}\n\n  \nnot json\n{\"b\":2}", 16);
        assert_eq!(
            got,
            vec![
                Line::Message(b"{\"a\":1}".to_vec()),
                Line::Message(b"not json".to_vec()),
                Line::Message(b"{\"b\":2}".to_vec()),
            ]
        );
        let long = format!(
            "{{\"id\":7,\"method\":\"x\",\"p\":\"{}\"}}\nok\n",
            "y".repeat(100)
        );
        let got = lines(long.as_bytes(), 32);
        match &got[0] {
            Line::TooLong { head, len } => {
                assert_eq!(*len, long.len() - 4);
                assert_eq!(
                    scan_head(head),
                    Head {
                        id: Some(Value::from(7)),
                        method: true
                    }
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(got[1], Line::Message(b"ok".to_vec()));
    }

    #[test]
    fn the_head_gives_the_id_where_it_is_whole() {
        let cases: [(&str, Option<Value>, bool); 6] = [
            (
                r#"{"jsonrpc":"2.0","id":"a\"b","method":"m","params":{"x":"#,
                Some("a\"b".into()),
                true,
            ),
            (
                r#"{"params":{"id":3,"k":[1,{"id":4}]},"id":5,"result":"#,
                Some(5.into()),
                false,
            ),
            (r#"{"jsonrpc":"2.0","result":{"big":"xxxx"#, None, false),
            (r#"{"id":12"#, None, false),
            (r#"{ "id" : null , "method" : "#, Some(Value::Null), false),
            ("not json", None, false),
        ];
        for (text, id, method) in cases {
            assert_eq!(scan_head(text.as_bytes()), Head { id, method }, "{text}");
        }
    }
}
