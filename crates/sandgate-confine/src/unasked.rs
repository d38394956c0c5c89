//! Writes that are never questions: what an agent does to keep its own
//! state, and what it tries on start against the kernel or the desktop.
//!
//! Watched under `sandgate run` (Claude Code 2.1.197 and 2.1.332, Codex CLI
//! 0.171, Gemini CLI 0.61, interactive in tmux and headless, with the
//! supervisor's log and `strace -f`):
//!
//! - **State-file siblings.** Claude Code saves `~/.claude.json` (a state
//!   file beside the home directory's other entries, not in a directory of
//!   its own) through a lock directory `~/.claude.json.lock` (`mkdir`, then
//!   `rmdir`) and a temporary file `~/.claude.json.tmp.<pid>.<hex>` renamed
//!   over it: 3 to 6 operations a save, dozens a session. Codex CLI and
//!   Gemini CLI keep their state in directories (`~/.codex`, `~/.gemini`)
//!   and save inside them, so their siblings are allowed with the directory.
//!   An allowed state *file*'s siblings in the shapes such savers use
//!   ([`is_state_sibling`]) are allowed with it; any other name beside it
//!   stays outside.
//! - **Kernel pressure files** (`/proc/pressure/*`, `memory.pressure` and its
//!   kin under `/sys/fs/cgroup`): opening one for writing registers a
//!   pressure trigger, a way to watch memory that the program can do
//!   without. Refused without a question ([`Unasked::Kernel`]).
//! - **Desktop integration** (`~/.local/share/applications`, MIME and icon
//!   databases, `~/.config/autostart`): an entry there registers a program
//!   with the desktop, which runs it later, outside the run, for a link the
//!   person clicks or at the next login. Refused without a question
//!   ([`Unasked::Desktop`]).
//!
//! - **Another process's memory** (`/proc/PID/mem`,
//!   `/proc/PID/task/TID/mem`, `self` and `thread-self` too): writing there
//!   changes what another process of the tree runs, the agent itself
//!   included, which the exec tracking of the run relies on not happening
//!   (see `sandgate_sandbox::supervisor::lineage`). Refused without a
//!   question ([`Unasked::Memory`]).
//!
//! A refusal without a question is still reported (the audit log), only
//! never as a question or a line over the agent's screen.

use std::ffi::OsStr;
use std::path::Path;

/// A write that fails without a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unasked {
    /// A kernel pressure file (`/proc/pressure/*`, `*.pressure` in the cgroup tree).
    Kernel,
    /// A desktop-integration path (application entries, autostart, MIME).
    Desktop,
    /// A process's memory (`/proc/PID/mem`).
    Memory,
}

/// Desktop-integration paths, relative to the home directory: an entry in
/// any of them is run by the desktop outside the run.
const DESKTOP: &[&str] = &[
    ".local/share/applications",
    ".local/share/mime",
    ".local/share/icons",
    ".local/share/desktop-directories",
    ".config/autostart",
    ".config/mimeapps.list",
    ".config/menus",
];

/// Whether a write of `path` fails without a question, and why.
pub fn unasked(path: &Path, home: &Path) -> Option<Unasked> {
    if is_pressure_file(path) {
        return Some(Unasked::Kernel);
    }
    if is_process_memory(path) {
        return Some(Unasked::Memory);
    }
    let rest = path.strip_prefix(home).ok()?;
    DESKTOP
        .iter()
        .any(|d| rest.starts_with(d))
        .then_some(Unasked::Desktop)
}

/// Whether `path` is a process's memory: `/proc/P/mem` or
/// `/proc/P/task/T/mem`, `P` a number, `self` or `thread-self`.
fn is_process_memory(path: &Path) -> bool {
    let Ok(rest) = path.strip_prefix("/proc") else {
        return false;
    };
    let parts: Vec<&str> = rest
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .collect();
    let process = |p: &str| {
        p == "self"
            || p == "thread-self"
            || (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    match parts.as_slice() {
        [p, "mem"] => process(p),
        [p, "task", t, "mem"] => process(p) && process(t),
        _ => false,
    }
}

/// Whether `path` is a kernel pressure file: `/proc/pressure/*`, or a
/// `<resource>.pressure` file in the cgroup tree.
fn is_pressure_file(path: &Path) -> bool {
    if path.starts_with("/proc/pressure") {
        return true;
    }
    path.starts_with("/sys/fs/cgroup")
        && path
            .file_name()
            .and_then(OsStr::to_str)
            .is_some_and(|n| n.ends_with(".pressure"))
}

/// Whether `path` is a lock or temporary sibling of the state file `file`,
/// in a shape the agents' savers use:
///
/// - `F.lock` (a lock file or directory), and what a lock directory holds;
/// - `F.tmp`, `F.tmp.<word>…` or `F.tmp-<word>` (up to three words of
///   letters, digits and `_`, e.g. `F.tmp.<pid>.<hex>`), the file written and
///   renamed over `F`;
/// - `.F.tmp…`, `.F.lock` and `.F.swp` for a hidden saver's own name.
///
/// Any other name stays outside.
pub fn is_state_sibling(path: &Path, file: &Path) -> bool {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name().and_then(OsStr::to_str)) else {
        return false;
    };
    let Ok(rest) = path.strip_prefix(dir) else {
        return false;
    };
    let mut parts = rest.components();
    let Some(first) = parts.next().and_then(|c| c.as_os_str().to_str()) else {
        return false;
    };
    let beneath = parts.next().is_some();
    let (suffix, hidden) = match first.strip_prefix(name) {
        Some(suffix) => (Some(suffix), false),
        None => (
            first.strip_prefix('.').and_then(|f| f.strip_prefix(name)),
            true,
        ),
    };
    let Some(suffix) = suffix.and_then(|s| s.strip_prefix('.')) else {
        return false;
    };
    if suffix == "lock" {
        return true;
    }
    if beneath {
        return false;
    }
    if suffix == "swp" && hidden {
        return true;
    }
    let Some(words) = suffix.strip_prefix("tmp") else {
        return false;
    };
    if words.is_empty() {
        return true;
    }
    let Some(words) = words.strip_prefix(['.', '-']) else {
        return false;
    };
    let words: Vec<&str> = words.split(['.', '-']).collect();
    words.len() <= 3
        && words.iter().all(|w| {
            !w.is_empty()
                && w.len() <= 40
                && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_savers_shapes_are_siblings_and_nothing_else() {
        let file = Path::new("/home/u/.claude.json");
        let table = [
            ("/home/u/.claude.json.lock", true),
            ("/home/u/.claude.json.lock/pid", true),
            ("/home/u/.claude.json.tmp.4123.9d00dde67d98", true),
            ("/home/u/.claude.json.tmp", true),
            ("/home/u/.claude.json.tmp-17000000a1", true),
            ("/home/u/..claude.json.tmp", true),
            ("/home/u/..claude.json.swp", true),
            ("/home/u/.claude.json.swp", false),
            ("/home/u/.claude.json", false),
            ("/home/u/.claude.jsonx", false),
            ("/home/u/.claude.json.bak", false),
            ("/home/u/.claude.json.tmp.a.b.c.d", false),
            ("/home/u/.claude.json.tmp./x", false),
            ("/home/u/.claude.json.tmp.x/y", false),
            ("/home/u/.claude.json.tmp.a b", false),
            ("/home/u/.bashrc", false),
            ("/home/u/other/.claude.json.lock", false),
            ("/home/.claude.json.lock", false),
        ];
        for (path, want) in table {
            assert_eq!(is_state_sibling(Path::new(path), file), want, "{path}");
        }
    }

    #[test]
    fn pressure_files_and_desktop_paths_are_never_asked() {
        let home = Path::new("/home/u");
        let table = [
            ("/proc/pressure/memory", Some(Unasked::Kernel)),
            ("/proc/pressure/cpu", Some(Unasked::Kernel)),
            ("/sys/fs/cgroup/memory.pressure", Some(Unasked::Kernel)),
            (
                "/sys/fs/cgroup/user.slice/x.scope/io.pressure",
                Some(Unasked::Kernel),
            ),
            ("/sys/fs/cgroup/memory.max", None),
            ("/proc/self/oom_score_adj", None),
            ("/home/u/.local/share/applications", Some(Unasked::Desktop)),
            (
                "/home/u/.local/share/applications/claude.desktop",
                Some(Unasked::Desktop),
            ),
            (
                "/home/u/.config/autostart/x.desktop",
                Some(Unasked::Desktop),
            ),
            ("/home/u/.config/mimeapps.list", Some(Unasked::Desktop)),
            ("/home/u/.local/share/other", None),
            ("/home/u/.config/app/settings", None),
            ("/other/.local/share/applications", None),
        ];
        for (path, want) in table {
            assert_eq!(unasked(Path::new(path), home), want, "{path}");
        }
    }
}
