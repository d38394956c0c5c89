//! The MCP file tools against a check-then-use race: while a directory of the
//! project and a symlink into `~/.ssh` are swapped back and forth
//! (`renameat2(RENAME_EXCHANGE)`, in a loop, for a bounded time), every file
//! tool is called through the real server and a real MCP client (the Python
//! SDK). The key never leaks, nothing lands in `~/.ssh`, no temporary file is
//! left anywhere. First the same swap is shown to beat a naive
//! check-then-open-by-name, so the test can fail.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod mcp_client;

#[path = "../../../tests/support/ci.rs"]
mod ci;
#[path = "../../../tests/support/wait.rs"]
mod wait;

use wait::{Bounded, DEADLINE};

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

const SECRET: &str = "SECRET-KEY-5f1d0c";
/// A name that exists only in `~/.ssh`: a listing that shows it read the floor.
const FLOOR_ONLY_NAME: &str = "id_ed25519_floor_only";

fn missing_client() -> Option<String> {
    let out = Command::new("python3")
        .args(["-c", "import mcp"])
        .output_within(DEADLINE);
    match out {
        Err(e) => Some(format!("python3 is not available: {e}")),
        Ok(o) if !o.status.success() => Some(
            "the Python package `mcp` is not installed (pip install mcp==2.3.0, as .ci/run does)"
                .into(),
        ),
        Ok(_) => None,
    }
}

/// Every file under `dir` with its content.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        out.insert(name, bytes);
    }
    out
}

fn race(plan: Value) -> Value {
    let v = mcp_client::run("race.py", &plan);
    assert_eq!(v["swapper_exit"], 0, "the swapper failed: {v}");
    v
}

#[test]
fn a_swapped_symlink_never_redirects_a_file_tool() {
    if let Some(reason) = missing_client() {
        ci::skip(&reason);
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home: PathBuf = root.join("home");
    let work = home.join("work");
    let ssh = home.join(".ssh");
    // The swap renames inside this throwaway tree only.
    let real_home = std::env::var("HOME").unwrap_or_default();
    assert!(home.starts_with(&root) && home != Path::new(&real_home));
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::create_dir_all(work.join("d")).unwrap();
    std::fs::create_dir_all(home.join(".sandgate")).unwrap();
    std::fs::write(ssh.join("id_rsa"), format!("{SECRET}\n")).unwrap();
    std::fs::write(ssh.join("notes"), "one\n").unwrap();
    std::fs::write(ssh.join(FLOOR_ONLY_NAME), format!("{SECRET}\n")).unwrap();
    std::fs::write(work.join("d/id_rsa"), "benign\n").unwrap();
    std::fs::write(work.join("d/notes"), "one\n").unwrap();
    symlink(&ssh, work.join("s")).unwrap();
    std::fs::write(
        home.join(".sandgate/permissions.yaml"),
        "permissions:\n  paths:\n    allow: [\"~/work/**\"]\n",
    )
    .unwrap();
    let before = snapshot(&ssh);

    // The attack works against a check that is not tied to the open.
    let naive = race(json!({
        "mode": "naive",
        "work": work,
        "seconds": 20,
        "secret": SECRET,
        "floor": ssh,
    }));
    assert_eq!(
        naive["leaked"], true,
        "the swap never beat a naive check-then-open: {naive}"
    );
    assert_eq!(snapshot(&ssh), before);

    let d = |rel: &str| work.join("d").join(rel).to_string_lossy().into_owned();
    let calls = json!([
        {"tool": "file_read", "args": {"path": d("id_rsa")}},
        {"tool": "file_head_tail", "args": {"path": d("id_rsa")}},
        {"tool": "file_write", "args": {"path": d("authorized_keys"), "content": "ssh-ed25519 AAAA planted\n"}},
        {"tool": "file_edit", "args": {"path": d("notes"), "old_string": "one", "new_string": "two"}},
        {"tool": "file_edit", "args": {"path": d("notes"), "old_string": "two", "new_string": "one"}},
        {"tool": "file_grep", "args": {"pattern": "SECRET|benign", "path": d("")}},
        {"tool": "file_find", "args": {"glob": "*", "path": d("")}},
        {"tool": "file_count", "args": {"path": d("")}},
        {"tool": "file_list", "args": {"path": d("")}},
        {"tool": "file_count", "args": {"path": d("id_rsa")}},
    ]);
    let out = race(json!({
        "mode": "mcp",
        "work": work,
        "seconds": 8,
        "command": [env!("CARGO_BIN_EXE_sandgate"), "mcp"],
        "env": {
            "HOME": home,
            "PATH": std::env::var("PATH").unwrap_or_default(),
            "SANDGATE_MANAGED_CONFIG": home.join("no-managed.yaml"),
            "SANDGATE_AUDIT_LOG": home.join("audit.jsonl"),
            "SANDGATE_NO_UI": "1",
        },
        "calls": calls,
    }));
    let results = out["results"].as_object().unwrap();
    let mut allowed_reads = 0u64;
    let mut refused = 0u64;
    for (tool, texts) in results {
        for (text, count) in texts.as_object().unwrap() {
            assert!(
                !text.contains(SECRET) && !text.contains(FLOOR_ONLY_NAME),
                "{tool} showed the floor: {text}"
            );
            let count = count.as_u64().unwrap();
            if tool == "file_read" && text.starts_with("ok: benign") {
                allowed_reads += count;
            }
            if text.contains("built-in floor") || text.contains("changed between the check") {
                refused += count;
            }
        }
    }
    eprintln!(
        "{} rounds: {}",
        out["rounds"],
        serde_json::to_string_pretty(results).unwrap()
    );
    // The race really ran: some calls saw the directory, some the symlink.
    assert!(allowed_reads > 0 && refused > 0, "{out}");
    // Nothing landed in ~/.ssh, nothing there changed, no temporary file anywhere.
    assert_eq!(snapshot(&ssh), before, "the floor changed");
    for dir in [&ssh, &work.join("d"), &work] {
        for name in snapshot(dir).keys() {
            assert!(
                !name.starts_with(".sandgate-write-"),
                "{name} left in {}",
                dir.display()
            );
        }
    }
}
