//! The questions socket of a `sandgate run`: where it lies, and what is said
//! over it.
//!
//! Each run listens on `~/.sandgate/runs/<pid>.sock`, inside the built-in
//! floor, which the confined program can neither read nor write. One request
//! per connection, one JSON line each way:
//!
//! ```text
//! → {"op":"list","watching":true}
//! ← {"ok":true,"pid":4242,"program":"claude","questions":[{"id":1,"tool":"write",…,"left_ms":23750}]}
//! → {"op":"answer","id":1,"answer":"allow_once"}
//! ← {"ok":true}
//! ```
//!
//! The run refuses a peer that runs as another user or belongs to its own
//! process tree (the confined program, and what it started): the program
//! must not answer its own questions.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sandgate_policy::ask::Answer;
use serde::{Deserialize, Serialize};

/// How long a client waits for the run to reply.
const REPLY_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest path a UNIX socket address holds.
pub const SOCKET_PATH_MAX: usize = 107;

/// The directory holding the runs' sockets.
pub fn runs_dir(home: &Path) -> PathBuf {
    home.join(sandgate_policy::floor::SANDGATE_DIR).join("runs")
}

/// The socket of the run with process id `pid`.
pub fn socket_path(home: &Path, pid: u32) -> PathBuf {
    runs_dir(home).join(format!("{pid}.sock"))
}

/// A request.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The open questions. `watching`: a `sandgate answer` window is open and
    /// shows them (the run then leaves its terminal to the program).
    List {
        #[serde(default)]
        watching: bool,
    },
    /// Answer question `id`.
    Answer {
        /// The question.
        id: u64,
        /// `allow_once`, `allow_always`, `deny_once` or `deny_always`.
        answer: String,
    },
}

/// One open question, as a client sees it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Open {
    /// Its number in this run.
    pub id: u64,
    /// The tool or operation, e.g. `write`.
    pub tool: String,
    /// `path` or `command`.
    pub kind: String,
    /// What is asked about.
    pub subject: String,
    /// Why it is asked.
    pub reason: String,
    /// Milliseconds left before it is denied.
    pub left_ms: u64,
}

/// A reply.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Reply {
    /// Whether the request was done.
    pub ok: bool,
    /// Why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The run's process id.
    #[serde(default)]
    pub pid: u32,
    /// The program the run confines.
    #[serde(default)]
    pub program: String,
    /// The open questions (for `list`).
    #[serde(default)]
    pub questions: Vec<Open>,
}

/// The answer named `name` on the wire.
pub fn parse_answer(name: &str) -> Option<Answer> {
    Answer::ALL.into_iter().find(|a| a.as_str() == name)
}

/// Sends `request` to the run listening on `socket`.
pub fn call(socket: &Path, request: &Request) -> Result<Reply, String> {
    let stream = UnixStream::connect(socket).map_err(|e| format!("`{}`: {e}", socket.display()))?;
    let _ = stream.set_read_timeout(Some(REPLY_TIMEOUT));
    let _ = stream.set_write_timeout(Some(REPLY_TIMEOUT));
    let mut line = serde_json::to_string(request).map_err(|e| e.to_string())?;
    line.push('\n');
    (&stream)
        .write_all(line.as_bytes())
        .map_err(|e| format!("`{}`: {e}", socket.display()))?;
    let mut reply = String::new();
    BufReader::new(&stream)
        .read_line(&mut reply)
        .map_err(|e| format!("`{}`: {e}", socket.display()))?;
    if reply.is_empty() {
        return Err(format!(
            "`{}`: the run closed the connection (it refuses its own program's processes)",
            socket.display()
        ));
    }
    let reply: Reply = serde_json::from_str(&reply).map_err(|e| format!("bad reply: {e}"))?;
    match (&reply.ok, &reply.error) {
        (false, Some(error)) => Err(error.clone()),
        _ => Ok(reply),
    }
}

/// The sockets of the runs of this account, in process-id order.
pub fn sockets(home: &Path) -> Vec<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(runs_dir(home))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let pid = name.to_str()?.strip_suffix(".sock")?.parse().ok()?;
            Some((pid, entry.path()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}
