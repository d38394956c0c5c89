//! Exec isolation's scope of the one supervisor ([`crate::supervisor`]).
//! It has two jobs, on one seccomp listener (a process can have only one):
//! the listed UNIX sockets (`exec.isolation.unix_sockets`) are the only ones
//! an isolated command can `connect()` to by path, and the protected paths,
//! also those missing at start, are never made or moved (see
//! [`crate::protect`]).
//!
//! This module holds exec isolation's filter ([`program`]), the hand-over of
//! the listener from the started command ([`prepare`], [`Supervision`]) and
//! what exec isolation plugs into the one notification loop
//! ([`crate::supervisor::serve`]), run on a thread of its own: each
//! `connect` is made by [`crate::supervisor::connect::connect_copied`] with
//! the listed sockets only (an unlisted socket file is `EACCES`, an abstract
//! address `EPERM`, another family, with `network: true`, connected as
//! copied; under a network allow-list, a TCP connect to an address is the
//! allow-list's [`Route`] to decide first, see
//! [`crate::supervisor::direct`]), each call that makes a name is
//! [`crate::protect`]'s. The
//! child's half of the listener hand-over is in [`crate::notify`].

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::bpf::{
    arg_low, jump, native_x86_64, stmt, JEQ_K, JSET_K, LD_W_ABS, RET_ALLOW, RET_ERRNO, RET_K,
    RET_USER_NOTIF,
};
pub use crate::notify::ChildHalf;
use crate::notify::{self, Listener, Notif, OUTER_SUPERVISOR};
use crate::plan::Plan;
use crate::protect;
use crate::supervisor::caller::take_fd;
use crate::supervisor::connect::{self, Reach, Refusal, Sockets, Taken};
pub use crate::supervisor::connect::{states, SocketState};
use crate::supervisor::decode::Syscall;
use crate::supervisor::direct::Route;
use crate::supervisor::serve::{self, Scope};

/// The filter: with `sockets`, every `connect` goes to the supervisor; with
/// `protect`, every call that makes or moves a name, and `openat2` fails with
/// `ENOSYS`. Everything else passes (the other filters decide it). x32 and
/// foreign system calls pass here and are failed or killed by
/// [`crate::seccomp`]'s filter.
pub fn program(sockets: bool, protect: bool) -> Vec<libc::sock_filter> {
    // Labels, resolved once the layout is known.
    enum To {
        Notify,
        Enosys,
        OpenFlags(u32),
    }
    let mut body: Vec<(u16, u32, To)> = Vec::new();
    if sockets {
        body.push((JEQ_K, libc::SYS_connect as u32, To::Notify));
    }
    if sockets && protect {
        // Binding a UNIX socket makes a name too.
        body.push((JEQ_K, libc::SYS_bind as u32, To::Notify));
    }
    if protect {
        body.push((JEQ_K, libc::SYS_openat2 as u32, To::Enosys));
        body.push((JEQ_K, libc::SYS_open as u32, To::OpenFlags(1)));
        body.push((JEQ_K, libc::SYS_openat as u32, To::OpenFlags(2)));
        for nr in protect::NOTIFIED {
            body.push((JEQ_K, *nr as u32, To::Notify));
        }
        // So that the supervisor knows when the umask it keeps is stale.
        body.push((JEQ_K, libc::SYS_umask as u32, To::Notify));
    }
    // Layout (BPF jumps forward only): 0 ld arch, 1 jeq x86-64, 2 ld nr,
    // 3 jge x32, body…, allow, then per open flavour four instructions (ld
    // flags, jset O_CREAT, notify, allow), then notify, then enosys.
    let first = 4;
    let allow = first + body.len();
    let flags_at = |arg: u32| allow + 1 + if arg == 1 { 0 } else { 4 };
    let notify = allow + 9;
    let enosys = notify + 1;
    let off = |from: usize, to: usize| to - from - 1;
    let mut prog = native_x86_64(allow);
    for (i, (code, k, to)) in body.iter().enumerate() {
        let at = first + i;
        let target = match to {
            To::Notify => notify,
            To::Enosys => enosys,
            To::OpenFlags(arg) => flags_at(*arg),
        };
        prog.push(jump(*code, *k, off(at, target), 0));
    }
    prog.push(stmt(RET_K, RET_ALLOW));
    for arg in [1u32, 2] {
        prog.push(stmt(LD_W_ABS, arg_low(arg)));
        prog.push(jump(JSET_K, libc::O_CREAT as u32, 0, 1));
        prog.push(stmt(RET_K, RET_USER_NOTIF));
        prog.push(stmt(RET_K, RET_ALLOW));
    }
    prog.push(stmt(RET_K, RET_USER_NOTIF));
    prog.push(stmt(RET_K, RET_ERRNO | libc::ENOSYS as u32));
    prog
}

/// The parent's half: attach it once the child has started.
#[derive(Debug)]
pub struct Supervision {
    sock: OwnedFd,
    sockets: Option<Arc<Sockets>>,
    names: Option<Arc<Names>>,
    /// Every `connect` is notified for a network allow-list.
    network: bool,
    route: Option<Arc<dyn Route>>,
}

/// What the names a command makes are judged by: its plan (resolved), and
/// the wrapper that sets the sandbox up (`bwrap`, as device and inode),
/// whose calls pass while it runs under this filter alone.
#[derive(Debug)]
pub struct Names {
    /// The plan, resolved ([`crate::plan::resolve_links`]).
    pub plan: Plan,
    /// The set-up wrapper, as device and inode.
    pub setup: Option<(u64, u64)>,
}

/// What to tell the user when the command runs under another supervisor.
pub const OUTER_NOTE: &str = "warning: another sandbox's supervisor (`sandgate run`) holds this command's system calls, so the protected paths missing at start are held by its rules, not by exec isolation's";

/// What [`Supervision::attach`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attached {
    /// The supervisor runs.
    Supervising,
    /// The command runs under another supervisor (it is inside `sandgate
    /// run`), which holds the one listener a process may have: the
    /// protected paths missing at start are that supervisor's to hold.
    Outer,
}

/// Prepares the supervisor: of the listed `sockets` (with `unix_sockets`),
/// of the names the command makes (`names`, when there are protected
/// paths). The child's half
/// goes into the command's `pre_exec` hook, the parent's is attached after
/// the spawn. With `network` (a network allow-list), every `connect` is
/// notified, for the [`Route`] given to [`Supervision::route_network`].
pub fn prepare(
    sockets: Option<Sockets>,
    names: Option<Names>,
    network: bool,
) -> io::Result<(ChildHalf, Supervision)> {
    let (parent, child) = notify::socketpair()?;
    Ok((
        ChildHalf::new(
            program(sockets.is_some() || network, names.is_some()),
            child,
            // Unsupervised, a listed socket would be reachable and every
            // other too: only protection may give way to an outer supervisor.
            sockets.is_none(),
        ),
        Supervision {
            sock: parent,
            sockets: sockets.map(Arc::new),
            names: names.map(Arc::new),
            network,
            route: None,
        },
    ))
}

impl Supervision {
    /// Has a network allow-list's `route` decide the command's TCP
    /// connects to addresses ([`crate::supervisor::direct`]). Call before
    /// [`Supervision::attach`]; without it, such a connect is made as
    /// copied, in the command's namespace.
    pub fn route_network(&mut self, route: Arc<dyn Route>) {
        self.route = Some(route);
    }

    /// Takes the listener the started child sent and answers its calls on
    /// a thread of its own, which ends when the last process under the
    /// filter has ended. Call right after a successful spawn; dropped
    /// instead, the listener closes and every supervised call fails
    /// (`ENOSYS`).
    pub fn attach(self) -> io::Result<Attached> {
        let fd = match notify::recv_fd_or_tag(self.sock.as_raw_fd())? {
            Ok(fd) => fd,
            Err(OUTER_SUPERVISOR) => return Ok(Attached::Outer),
            Err(_) => {
                return Err(io::Error::other(
                    "the command did not hand over its seccomp listener",
                ))
            }
        };
        let listener = Arc::new(Listener::new(fd));
        // With the network filtered, every `connect` is notified: the
        // UNIX socket rules then hold with the sockets listed, none or some.
        let sockets = match (self.sockets, self.network) {
            (None, true) => Some(Arc::new(Sockets::open(&[]))),
            (sockets, _) => sockets,
        };
        let (names, route) = (self.names, self.route);
        std::thread::Builder::new()
            .name("sandgate-supervisor".into())
            .spawn(move || run(&listener, sockets.as_ref(), names.as_ref(), route))?;
        Ok(Attached::Supervising)
    }
}

/// Exec isolation's scope of the one loop ([`serve::serve`]).
struct Exec<'a> {
    listener: &'a Arc<Listener>,
    sockets: Option<&'a Arc<Sockets>>,
    names: Option<&'a Arc<Names>>,
    route: Option<Arc<dyn Route>>,
    /// Whether this thread took on its own file-system context and dropped
    /// its effective capabilities (else names are never made for the command).
    own_context: bool,
    cache: protect::Cache,
}

impl Scope for Exec<'_> {
    // `umask` (the only call of its kind notified here): an integer
    // argument only, nothing to read twice.
    fn context_changes(&mut self, _pid: u32) {
        self.cache.umask_changes();
    }

    // Not notified here.
    fn creds_change(&mut self) {}

    fn connect(&mut self, n: Notif, asked: serve::Connect) {
        let Some(sockets) = self.sockets else {
            self.listener.fail(n.id, libc::EACCES);
            return;
        };
        let taken = match take(self.listener, &n, &asked) {
            Ok(taken) => taken,
            Err(errno) => {
                self.listener.fail(n.id, errno);
                return;
            }
        };
        let route = self.route.as_deref();
        if connect::at_once(&taken.sock, taken.address(), route) {
            answer(self.listener, sockets, route, &n, asked.fd, &taken);
            return;
        }
        // A connect that can block (a full backlog, a slow TCP peer, a
        // question) gets a thread, so one never holds up another.
        let (l, s, r) = (
            Arc::clone(self.listener),
            Arc::clone(sockets),
            self.route.clone(),
        );
        let spawned = std::thread::Builder::new()
            .name("sandgate-connect".into())
            .spawn(move || answer(&l, &s, r.as_deref(), &n, asked.fd, &taken));
        if spawned.is_err() {
            self.listener.fail(n.id, libc::EAGAIN);
        }
    }

    fn judge(&mut self, n: Notif, call: Option<Syscall>) {
        match self.names {
            Some(names) if self.own_context => {
                let (plan, setup) = (&names.plan, names.setup);
                protect::answer(self.listener, plan, setup, &mut self.cache, &n, call);
            }
            _ => self.listener.fail(n.id, libc::EACCES),
        }
    }
}

fn run(
    listener: &Arc<Listener>,
    sockets: Option<&Arc<Sockets>>,
    names: Option<&Arc<Names>>,
    route: Option<Arc<dyn Route>>,
) {
    // This thread takes on the command's umask for the calls it performs,
    // and has no more capabilities than the command.
    let own_context =
        protect::own_fs_context().is_ok() && protect::drop_effective_capabilities().is_ok();
    let mut scope = Exec {
        listener,
        sockets,
        names,
        route,
        own_context,
        cache: protect::Cache::default(),
    };
    serve::serve(listener, &mut scope, &AtomicBool::new(false));
}

/// Takes the socket and copies the address of notified `connect` `n`;
/// `Err` is the errno for the caller.
fn take(listener: &Listener, n: &Notif, asked: &serve::Connect) -> Result<Taken, i32> {
    let sock = take_fd(n.pid, asked.fd).map_err(|e| e.raw_os_error().unwrap_or(libc::EBADF))?;
    // The thread id named the caller when its descriptor was taken: from
    // here on the copy is the caller's socket.
    if !listener.id_valid(n.id) {
        return Err(libc::ESRCH);
    }
    Taken::copy(sock, n.pid, asked.addr, asked.len)
}

/// Makes the connect `n` asked for (the caller's descriptor `fd`) and
/// answers it.
fn answer(
    listener: &Listener,
    sockets: &Sockets,
    route: Option<&dyn Route>,
    n: &Notif,
    fd: i32,
    taken: &Taken,
) {
    let reach = Reach {
        listed: sockets,
        inside: None,
    };
    match connect::connect_routed(&taken.sock, n.pid, taken.address(), reach, route) {
        Ok(None) => listener.succeed(n.id, 0),
        // A socket connected from outside takes the caller's socket's place.
        Ok(Some(socket)) => {
            crate::supervisor::direct::answer_outside(listener, n, fd, socket.as_fd())
        }
        Err(Refusal::Errno(errno)) => listener.fail(n.id, errno),
        Err(Refusal::Outside(_)) => listener.fail(n.id, libc::EACCES),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_jumps_stay_inside() {
        for (sockets, protect) in [(true, false), (false, true), (true, true)] {
            let prog = program(sockets, protect);
            for (i, ins) in prog.iter().enumerate() {
                if ins.code == JEQ_K || ins.code == crate::bpf::JGE_K || ins.code == JSET_K {
                    assert!(i + 1 + usize::from(ins.jt) < prog.len());
                    assert!(i + 1 + usize::from(ins.jf) < prog.len());
                }
            }
        }
    }
}
