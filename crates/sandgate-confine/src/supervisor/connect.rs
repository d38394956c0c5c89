//! `connect()` in `sandgate run`: every `connect` of the program comes here
//! and is made by the shared supervisor's
//! [`sandgate_sandbox::supervisor::connect::connect_copied`] (see there for
//! what each kind of address gets), with the sockets listed in
//! `sandbox.json`'s `unixSockets` and the program's own listeners
//! ([`Peers`]) as what the program may reach. This module takes the
//! program's socket, answers at once a connect that cannot block and any
//! other on a thread of its own, so that a slow connection never holds up
//! the other calls, and reports a refused socket like a refused write.
//!
//! A socket of another family is connected as copied: the network is not
//! `sandgate run`'s business (a sandbox the program itself sets up with
//! Landlock's TCP rules alone is not honoured for `connect`: sandgate makes
//! the connection).

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;

use sandgate_sandbox::supervisor::caller::take_fd;
use sandgate_sandbox::supervisor::connect::{self, Reach, Refusal, Taken, Unreached};
use sandgate_sandbox::supervisor::serve::Connect as Asked;

use super::report::describe;
use super::{Attempt, DenyReason, Event, Shared};
use crate::seccomp::Notif;

pub(super) use sandgate_sandbox::supervisor::connect::Peers;

/// Answers `connect` notification `notif` (decoded as `asked`): at once
/// where the connect cannot block ([`connect::at_once`]), else on a thread
/// of its own. Nothing is left to the kernel: it would look up the
/// descriptor again, which another thread of the program can point at a
/// UNIX socket meanwhile (`dup2`), and read the address again.
pub(super) fn connect(shared: &Arc<Shared>, notif: Notif, asked: Asked) {
    let sock = match take_fd(notif.pid, asked.fd) {
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
    if connect::socket_domain(sock.as_fd()).is_none() {
        shared.listener.fail(notif.id, libc::ENOTSOCK);
        return;
    }
    let taken = match Taken::copy(sock, notif.pid, asked.addr, asked.len) {
        Ok(taken) => taken,
        Err(errno) => {
            shared.listener.fail(notif.id, errno);
            return;
        }
    };
    if connect::at_once(&taken.sock, taken.address(), shared.route.as_deref()) {
        answer(shared, &notif, asked.fd, &taken);
        return;
    }
    let shared_for_thread = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("sandgate-connect".into())
        .stack_size(128 * 1024)
        .spawn(move || answer(&shared_for_thread, &notif, asked.fd, &taken));
    if spawned.is_err() {
        shared.listener.fail(notif.id, libc::EAGAIN);
    }
}

/// Makes the connect `notif` asked for (the caller's descriptor `fd`) and
/// answers it.
fn answer(shared: &Shared, notif: &Notif, fd: i32, taken: &Taken) {
    match connect_for(shared, notif, taken) {
        Ok(None) => shared.listener.succeed(notif.id, 0),
        // With `permissions.network`: a socket connected from outside takes
        // the caller's socket's place.
        Ok(Some(socket)) => sandgate_sandbox::supervisor::direct::answer_outside(
            &shared.listener,
            notif,
            fd,
            socket.as_fd(),
        ),
        Err(Refusal::Errno(errno)) => shared.listener.fail(notif.id, errno),
        Err(Refusal::Outside(unreached)) => {
            shared.reporter.report(&Event::Denied {
                attempt: Attempt {
                    pid: notif.pid,
                    process: describe(notif.pid),
                    operation: "connect".into(),
                    path: shown(shared, notif.pid, unreached),
                },
                reason: DenyReason::SocketOutside,
            });
            shared.listener.fail(notif.id, libc::EACCES);
        }
    }
}

/// Connects the caller's socket as `notif` asks; `Some(socket)`: the
/// network allow-list's route connected `socket` from outside instead.
fn connect_for(shared: &Shared, notif: &Notif, taken: &Taken) -> Result<Option<OwnedFd>, Refusal> {
    let inside = |pid: u32| shared.peers.inside(pid);
    let reach = Reach {
        listed: &shared.sockets,
        inside: Some(&inside),
    };
    connect::connect_routed(
        &taken.sock,
        notif.pid,
        taken.address(),
        reach,
        shared.route.as_deref(),
    )
}

/// How a refused socket is named in the report: an abstract one as
/// `@name`, a relative path from the caller's working directory.
fn shown(shared: &Shared, pid: u32, unreached: Unreached) -> PathBuf {
    match unreached {
        Unreached::Abstract(name) => {
            let name = String::from_utf8_lossy(&name);
            PathBuf::from(format!("@{}", name.trim_end_matches('\0')))
        }
        Unreached::Path(raw) => {
            if raw.is_absolute() {
                return raw;
            }
            let cwd = shared.callers.cwd(pid, true);
            cwd.map_or(raw.clone(), |cwd| cwd.join(&raw))
        }
    }
}
