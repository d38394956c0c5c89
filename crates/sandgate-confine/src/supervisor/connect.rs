//! `connect()`: a UNIX socket whose listener is outside the run would act
//! for the program outside the confinement (a terminal multiplexer's
//! `new-window`, a desktop bus's `systemd-run`, docker's `run -v /:/host`),
//! and neither Landlock nor the write supervision sees it. So every
//! `connect` comes here, and sandgate makes it itself, from the address it
//! copied once (the kernel would read it again from memory another thread
//! can change), on the program's own socket (`pidfd_getfd`: the socket the
//! descriptor named then, whatever it names later), on a thread of its own
//! so that a slow connection never holds up the other calls:
//!
//! - a socket of another family is connected as copied: the network is
//!   not `sandgate run`'s business (a sandbox the program itself sets up
//!   with Landlock's TCP rules alone is not honoured for `connect`: sandgate
//!   makes the connection);
//! - a UNIX socket listed in `sandbox.json`'s `unixSockets` is connected
//!   (by the listed file's device and inode, through the file the path
//!   resolves to, so no path switched meanwhile redirects it);
//! - any other UNIX socket, by path or abstract, is connected only when the
//!   process that listens on it is the program's own: in the program's user
//!   namespace (the mount layer makes one) or below the program in the
//!   process tree. Otherwise the program's socket is shut down and the call
//!   fails with `EACCES`, reported like a refused write. A datagram socket
//!   has no listener to ask about: only listed ones are reached.

use std::fs;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::Arc;

use sandgate_sandbox::supervise::{self, Named, PathConnect};

use super::report::describe;
use super::{Attempt, DenyReason, Event, Shared};
use crate::seccomp::Notif;

/// How many parents up the process tree a listener is looked for.
const TREE_DEPTH: usize = 4_096;

/// Answers `connect` notification `notif`, on a thread of its own. Nothing
/// is left to the kernel: it would look up the descriptor again, which
/// another thread of the program can point at a UNIX socket meanwhile
/// (`dup2`), and read the address again.
pub(super) fn connect(shared: &Arc<Shared>, notif: Notif) {
    // The descriptor is an `int`: the kernel ignores the upper half.
    let sock = match supervise::take_fd(notif.pid, notif.args[0] as u32 as i32) {
        Ok(sock) => sock,
        Err(e) => {
            shared
                .listener
                .fail(notif.id, e.raw_os_error().unwrap_or(libc::EBADF));
            return;
        }
    };
    // The thread id named the caller when its descriptor was taken: from
    // here on the copy is the caller's socket.
    if !shared.listener.id_valid(notif.id) {
        return;
    }
    if supervise::socket_domain(sock.as_fd()).is_none() {
        shared.listener.fail(notif.id, libc::ENOTSOCK);
        return;
    }
    let shared_for_thread = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("sandgate-connect".into())
        .stack_size(128 * 1024)
        .spawn(move || answer(&shared_for_thread, &notif, &sock));
    if spawned.is_err() {
        shared.listener.fail(notif.id, libc::EAGAIN);
    }
}

fn answer(shared: &Shared, notif: &Notif, sock: &OwnedFd) {
    match connect_for(shared, notif, sock) {
        Ok(()) => shared.listener.succeed(notif.id, 0),
        Err(Refusal::Errno(errno)) => shared.listener.fail(notif.id, errno),
        Err(Refusal::Outside(path)) => {
            shared.reporter.report(&Event::Denied {
                attempt: Attempt {
                    pid: notif.pid,
                    process: describe(notif.pid),
                    operation: "connect".into(),
                    path,
                },
                reason: DenyReason::SocketOutside,
            });
            shared.listener.fail(notif.id, libc::EACCES);
        }
    }
}

enum Refusal {
    /// The call fails with this errno, as the kernel would fail it.
    Errno(i32),
    /// The listener is outside the run: a refusal to report.
    Outside(PathBuf),
}

/// Connects `sock`, the caller's, as `notif` asks.
fn connect_for(shared: &Shared, notif: &Notif, sock: &OwnedFd) -> Result<(), Refusal> {
    let mut room = [0u8; supervise::ADDRESS_ROOM];
    let address = supervise::copy_address(notif.pid, notif.args[1], notif.args[2], &mut room)
        .map_err(Refusal::Errno)?;
    let inside = |pid: u32| shared.peers.inside(pid);
    match supervise::named(address) {
        // Another family (`AF_UNSPEC` dissolves a datagram socket's
        // association), or an unnamed address: no listener to judge.
        // Connected exactly as copied; the kernel fails what it would fail.
        Named::Other => supervise::raw_connect(sock.as_raw_fd(), address).map_err(Refusal::Errno),
        // Abstract: no file, so nothing to list; only the program's own
        // listener is reached.
        Named::Abstract(name) => settle(
            supervise::connect_abstract_for(sock, address, &inside),
            || {
                let name = String::from_utf8_lossy(name);
                PathBuf::from(format!("@{}", name.trim_end_matches('\0')))
            },
        ),
        Named::Path(path) => settle(
            supervise::connect_path_for(
                sock,
                notif.pid,
                path,
                |identity| shared.sockets.contains(identity),
                Some(&inside),
            ),
            || {
                let raw = PathBuf::from(std::ffi::OsStr::from_bytes(path));
                if raw.is_absolute() {
                    return raw;
                }
                let cwd = shared.callers.cwd(notif.pid, true);
                cwd.map_or(raw.clone(), |cwd| cwd.join(&raw))
            },
        ),
    }
}

/// The call's result for `outcome`; a refusal names the socket as `shown`
/// gives it.
fn settle(outcome: PathConnect, shown: impl FnOnce() -> PathBuf) -> Result<(), Refusal> {
    match outcome {
        PathConnect::Connected => Ok(()),
        PathConnect::Refused => Err(Refusal::Outside(shown())),
        PathConnect::Failed(errno) => Err(Refusal::Errno(errno)),
    }
}

/// Who counts as the program: the processes in its user namespace, when
/// it has one of its own, and those below it in the process tree, where
/// sandgate keeps the orphans it adopted (`PR_SET_CHILD_SUBREAPER`).
#[derive(Debug)]
pub(super) struct Peers {
    /// The program's first process.
    program: u32,
    /// The program's user namespace, when it is not sandgate's.
    namespace: Option<String>,
}

impl Peers {
    /// The program started as process `program` (already in its namespaces).
    pub(super) fn new(program: u32) -> Peers {
        let ns = |pid: &str| fs::read_link(format!("/proc/{pid}/ns/user")).ok();
        let own = ns("self");
        let namespace = ns(&program.to_string())
            .filter(|theirs| Some(theirs) != own.as_ref())
            .map(|theirs| theirs.to_string_lossy().into_owned());
        Peers { program, namespace }
    }

    /// Whether process `pid` is the program's.
    pub(super) fn inside(&self, pid: u32) -> bool {
        let first = pid;
        if let Some(namespace) = &self.namespace {
            let theirs = fs::read_link(format!("/proc/{pid}/ns/user")).ok();
            if theirs.is_some_and(|t| t.to_string_lossy() == namespace.as_str()) {
                return true;
            }
        }
        let mut pid = pid;
        for _ in 0..TREE_DEPTH {
            // Below the program, or an orphan of its that sandgate adopted
            // (sandgate's only other children).
            if pid == self.program || pid == std::process::id() && pid != first {
                return true;
            }
            match parent(pid) {
                Some(up) if up > 1 => pid = up,
                _ => return false,
            }
        }
        false
    }
}

/// The parent of process `pid` (`/proc/PID/stat`, after the name, which may
/// hold any byte).
fn parent(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_and_what_it_starts_are_inside_and_the_rest_not() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & wait"])
            .spawn()
            .unwrap();
        let peers = Peers::new(child.id());
        assert!(peers.namespace.is_none(), "no namespace of its own");
        assert!(peers.inside(child.id()));
        // The `sleep` below it.
        let mut below = None;
        for _ in 0..100 {
            below = fs::read_dir("/proc").unwrap().flatten().find_map(|e| {
                let pid: u32 = e.file_name().to_str()?.parse().ok()?;
                (parent(pid) == Some(child.id())).then_some(pid)
            });
            if below.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(peers.inside(below.expect("sleep started")));
        assert!(!peers.inside(std::process::id()), "sandgate itself");
        assert!(!peers.inside(1));
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn a_parent_is_read_past_a_name_with_parentheses() {
        assert_eq!(
            parent(std::process::id()),
            Some(std::os::unix::process::parent_id())
        );
    }
}
