//! Exec isolation's supervisor. It has two jobs, on one seccomp listener
//! (a process can have only one): the listed UNIX sockets
//! (`exec.isolation.unix_sockets`) are the only ones an isolated command can
//! `connect()` to by path, and the protected paths, also those missing at
//! start, are never made or moved (see [`crate::protect`]).
//!
//! Neither Landlock (up to ABI 7) nor a read-only mount stops a `connect()`
//! to a socket file, so the command's `connect` calls go to this supervisor
//! through seccomp user notification. The supervisor never lets the kernel
//! continue one, since the kernel would read the address again from memory
//! another thread can change: it copies the address once, takes the
//! caller's socket with `pidfd_getfd`, and connects that socket itself.
//!
//! - An address of another family (with `network: true`) is connected as
//!   copied.
//! - A socket path is resolved in the caller's view (its root and working
//!   directory), and its inode compared with those of the listed sockets,
//!   each opened once when the command starts. On a match, the supervisor
//!   connects to the socket it opened (`/proc/self/fd/N`), never to a path
//!   the caller could swap in between; otherwise the call fails with
//!   `EACCES`.
//! - An abstract address fails with `EPERM`: connected from outside the
//!   sandbox it would pass Landlock's scoping of abstract sockets.
//!
//! The calls made for the caller (taking its socket, `openat2`, `connect`,
//! `bind`) are in [`crate::caller`], and the child's half of the listener
//! hand-over in [`crate::notify`].
//!
//! This module contains `unsafe` code: `shutdown` and `getsockopt` on
//! descriptors it owns.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::beneath;
use crate::bpf::{
    arg_low, jump, native_x86_64, stmt, JEQ_K, JSET_K, LD_W_ABS, RET_ALLOW, RET_ERRNO, RET_K,
    RET_USER_NOTIF,
};
pub use crate::caller::{bind_for, raw_connect, take_fd};
use crate::caller::{open_path, pidfd_getfd, pidfd_open, RESOLVE_IN_ROOT, RESOLVE_NO_MAGICLINKS};
pub use crate::notify::ChildHalf;
use crate::notify::{self, Listener, Notif, Ready, OUTER_SUPERVISOR};
use crate::protect::{self, Guard};

/// The size of `struct sockaddr_un`.
const SOCKADDR_UN_LEN: usize = std::mem::size_of::<libc::sockaddr_un>();

/// One entry of `exec.isolation.unix_sockets` as found when the command starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SocketState {
    /// The path as listed, made absolute.
    pub path: PathBuf,
    /// `socket`, `missing` or `not a socket`.
    pub state: &'static str,
}

#[derive(Debug)]
struct Listed {
    /// Held open for the whole run, so that the inode cannot go and its
    /// number come back as another socket file's.
    _pinned: OwnedFd,
    identity: (u64, u64),
}

/// The listed sockets, each opened once (`O_PATH`).
#[derive(Debug)]
pub struct Sockets {
    listed: Vec<Listed>,
}

impl Sockets {
    /// Opens every listed path that is a socket now; the others are left
    /// out (see [`states`]).
    pub fn open(paths: &[PathBuf]) -> Sockets {
        let listed = paths
            .iter()
            .filter_map(|p| {
                let fd = open_path(libc::AT_FDCWD, p, 0).ok()?;
                let st = beneath::stat(fd.as_fd()).ok()?;
                st.is_socket().then_some(Listed {
                    _pinned: fd,
                    identity: st.identity(),
                })
            })
            .collect();
        Sockets { listed }
    }

    fn find(&self, identity: (u64, u64)) -> Option<&Listed> {
        self.listed.iter().find(|l| l.identity == identity)
    }

    /// Whether the socket file with `identity` (device, inode) is listed.
    pub fn contains(&self, identity: (u64, u64)) -> bool {
        self.find(identity).is_some()
    }
}

/// What each listed path is right now, for `--dry-run`.
pub fn states(paths: &[PathBuf]) -> Vec<SocketState> {
    use std::os::unix::fs::FileTypeExt;
    paths
        .iter()
        .map(|p| SocketState {
            path: p.clone(),
            state: match std::fs::metadata(p) {
                Ok(m) if m.file_type().is_socket() => "socket",
                Ok(_) => "not a socket",
                Err(_) => "missing",
            },
        })
        .collect()
}

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
    guard: Option<Arc<Guard>>,
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
/// of the protected paths (`guard`, when there are any). The child's half
/// goes into the command's `pre_exec` hook, the parent's is attached after
/// the spawn.
pub fn prepare(
    sockets: Option<Sockets>,
    guard: Option<Guard>,
) -> io::Result<(ChildHalf, Supervision)> {
    let (parent, child) = notify::socketpair()?;
    Ok((
        ChildHalf::new(
            program(sockets.is_some(), guard.is_some()),
            child,
            // Unsupervised, a listed socket would be reachable and every
            // other too: only protection may give way to an outer supervisor.
            sockets.is_none(),
        ),
        Supervision {
            sock: parent,
            sockets: sockets.map(Arc::new),
            guard: guard.map(Arc::new),
        },
    ))
}

impl Supervision {
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
        let (sockets, guard) = (self.sockets, self.guard);
        std::thread::Builder::new()
            .name("sandgate-supervisor".into())
            .spawn(move || serve(&listener, sockets.as_ref(), guard.as_ref()))?;
        Ok(Attached::Supervising)
    }
}

fn serve(listener: &Arc<Listener>, sockets: Option<&Arc<Sockets>>, guard: Option<&Arc<Guard>>) {
    // This thread takes on the command's umask for the calls it performs,
    // and has no more capabilities than the command.
    let own_context =
        protect::own_fs_context().is_ok() && protect::drop_effective_capabilities().is_ok();
    let mut cache = protect::Cache::default();
    loop {
        match listener.wait(-1) {
            Ok(Ready::Notification) => {}
            Ok(Ready::Idle) => continue,
            Ok(Ready::Gone) | Err(_) => return,
        }
        let Ok(n) = listener.recv() else {
            // The caller was interrupted or ended before the notification was read.
            continue;
        };
        if n.nr == libc::SYS_umask {
            // An integer argument only: nothing to read twice.
            cache.umask_changes();
            listener.allow(n.id);
            continue;
        }
        if n.nr != libc::SYS_connect {
            match guard {
                Some(guard) if own_context => protect::answer(listener, guard, &mut cache, &n),
                _ => listener.fail(n.id, libc::EACCES),
            }
            continue;
        }
        let Some(sockets) = sockets else {
            listener.fail(n.id, libc::EACCES);
            continue;
        };
        // A connect can block (a full backlog, a slow TCP peer): each gets a
        // thread, so one never holds up another.
        let (l, s) = (Arc::clone(listener), Arc::clone(sockets));
        let spawned = std::thread::Builder::new()
            .name("sandgate-connect".into())
            .spawn(move || answer(&l, &s, &n));
        if spawned.is_err() {
            listener.fail(n.id, libc::EAGAIN);
        }
    }
}

fn answer(listener: &Listener, sockets: &Sockets, n: &Notif) {
    match connect_for(listener, sockets, n) {
        Ok(()) => listener.succeed(n.id, 0),
        Err(errno) => listener.fail(n.id, errno),
    }
}

/// Performs the notified `connect` for the caller; `Err` is the errno it gets.
fn connect_for(listener: &Listener, sockets: &Sockets, n: &Notif) -> Result<(), i32> {
    if n.nr != libc::SYS_connect {
        return Err(libc::ENOSYS);
    }
    let pidfd = pidfd_open(n.pid).map_err(|_| libc::ESRCH)?;
    // The thread id named the caller when the pidfd was made: from here on
    // the pidfd cannot name another process.
    if !listener.id_valid(n.id) {
        return Err(libc::ESRCH);
    }
    let mut room = [0u8; ADDRESS_ROOM];
    let address = copy_address(n.pid, n.args[1], n.args[2], &mut room)?;
    // The descriptor is an `int`: the kernel ignores the upper half.
    let target_fd = n.args[0] as u32 as i32;
    let sock =
        pidfd_getfd(&pidfd, target_fd).map_err(|e| e.raw_os_error().unwrap_or(libc::EBADF))?;
    match named(address) {
        // Another family (network allowed), or no address at all: connected
        // exactly as copied; no socket file is named.
        Named::Other => raw_connect(sock.as_raw_fd(), address),
        Named::Abstract(_) => Err(libc::EPERM),
        Named::Path(path) => match connect_path_for(
            &sock,
            n.pid,
            path,
            |identity| sockets.contains(identity),
            None,
        ) {
            PathConnect::Connected => Ok(()),
            PathConnect::Refused => Err(libc::EACCES),
            PathConnect::Failed(errno) => Err(errno),
        },
    }
}

/// The room for a socket address (`struct sockaddr_storage`).
pub const ADDRESS_ROOM: usize = 128;

/// Copies, once, the socket address of `len` bytes at `at` in thread
/// `tid`'s memory into `room`; `Err` is the errno the kernel would give:
/// `EINVAL` for one longer than `sockaddr_storage`, `EFAULT` for one that
/// cannot be read whole.
pub fn copy_address(
    tid: u32,
    at: u64,
    len: u64,
    room: &mut [u8; ADDRESS_ROOM],
) -> Result<&[u8], i32> {
    // `socklen_t` is 32 bits: the kernel ignores the upper half.
    let len = (len as u32) as usize;
    if len > ADDRESS_ROOM {
        return Err(libc::EINVAL);
    }
    match notify::read_memory(tid, at, &mut room[..len]) {
        Ok(read) if read == len => Ok(&room[..len]),
        _ => Err(libc::EFAULT),
    }
}

/// What a socket address names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named<'a> {
    /// No UNIX socket: another family, or nothing past the family.
    Other,
    /// An abstract UNIX socket: its name, after the leading NUL.
    Abstract(&'a [u8]),
    /// A UNIX socket file: its path, up to the first NUL.
    Path(&'a [u8]),
}

/// What `address` names, read as the kernel reads it.
pub fn named(address: &[u8]) -> Named<'_> {
    let family = match address {
        [a, b, ..] => u16::from_ne_bytes([*a, *b]),
        _ => 0,
    };
    if i32::from(family) != libc::AF_UNIX || address.len() <= 2 {
        return Named::Other;
    }
    let name = &address[2..];
    if name[0] == 0 {
        return Named::Abstract(&name[1..]);
    }
    Named::Path(match name.iter().position(|b| *b == 0) {
        Some(end) => &name[..end],
        None => name,
    })
}

/// How [`connect_path_for`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathConnect {
    /// The socket is connected.
    Connected,
    /// The listener is neither listed nor accepted: the caller gets
    /// `EACCES`, and its socket, if it got connected to find that out, is
    /// shut down (it can never send or receive).
    Refused,
    /// The connection failed as the kernel failed it (this errno).
    Failed(i32),
}

/// Connects `sock` (the caller's own socket, taken with `pidfd_getfd`) to
/// the UNIX socket file at `path` (the address's bytes, as the caller
/// `tid` would resolve them: in its root, from its working directory).
///
/// The path is resolved once, to a descriptor of the socket file, and the
/// connection is made through that descriptor (`/proc/self/fd/N`), so
/// nothing the caller changes meanwhile (a symbolic link switched, the file
/// renamed) redirects it. A socket file `listed` accepts (by device and
/// inode) is connected. With `inside`, a stream or seqpacket socket is
/// connected to any other, and then `inside` decides from the process that
/// listens (its pid from `SO_PEERCRED`); a datagram socket, which has no
/// listener to ask about, is refused. Without `inside`, every other is
/// refused.
pub fn connect_path_for(
    sock: &OwnedFd,
    tid: u32,
    path: &[u8],
    listed: impl Fn((u64, u64)) -> bool,
    inside: Option<&dyn Fn(u32) -> bool>,
) -> PathConnect {
    let found = match resolve_as_caller(tid, Path::new(std::ffi::OsStr::from_bytes(path))) {
        Ok(found) => found,
        Err(e) => return PathConnect::Failed(e.raw_os_error().unwrap_or(libc::EACCES)),
    };
    let Ok(st) = beneath::stat(found.as_fd()) else {
        return PathConnect::Failed(libc::EACCES);
    };
    if !st.is_socket() {
        return PathConnect::Failed(libc::ECONNREFUSED);
    }
    let via = format!("/proc/self/fd/{}", found.as_raw_fd());
    let mut un = [0u8; SOCKADDR_UN_LEN];
    un[..2].copy_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
    un[2..2 + via.len()].copy_from_slice(via.as_bytes());
    let connect = || match raw_connect(sock.as_raw_fd(), &un[..2 + via.len() + 1]) {
        Ok(()) => PathConnect::Connected,
        Err(errno) => PathConnect::Failed(errno),
    };
    if listed(st.identity()) {
        return connect();
    }
    let Some(inside) = inside else {
        return PathConnect::Refused;
    };
    connect_checked(sock, connect, inside)
}

/// Connects `sock` (the caller's own socket, taken with `pidfd_getfd`) to
/// the abstract UNIX socket `address` (as copied), then lets `inside`
/// decide from the listener's pid as [`connect_path_for`] does.
pub fn connect_abstract_for(
    sock: &OwnedFd,
    address: &[u8],
    inside: &dyn Fn(u32) -> bool,
) -> PathConnect {
    let connect = || match raw_connect(sock.as_raw_fd(), address) {
        Ok(()) => PathConnect::Connected,
        Err(errno) => PathConnect::Failed(errno),
    };
    connect_checked(sock, connect, inside)
}

/// Connects with `connect` a stream or seqpacket `sock`, then keeps the
/// connection only when `inside` accepts the pid of the process that
/// listens; a datagram socket is refused unconnected.
fn connect_checked(
    sock: &OwnedFd,
    connect: impl FnOnce() -> PathConnect,
    inside: &dyn Fn(u32) -> bool,
) -> PathConnect {
    if socket_type(sock.as_fd()) == Some(libc::SOCK_DGRAM) {
        return PathConnect::Refused;
    }
    match connect() {
        PathConnect::Connected => {}
        other => return other,
    }
    match peer_pid(sock.as_fd()) {
        Some(pid) if pid > 0 && inside(pid) => PathConnect::Connected,
        _ => {
            // SAFETY: integer arguments only, on a socket this process owns
            // a copy of.
            unsafe { libc::shutdown(sock.as_raw_fd(), libc::SHUT_RDWR) };
            PathConnect::Refused
        }
    }
}

/// The address family of socket `sock` (`SO_DOMAIN`), fixed when it was
/// made: only an `AF_UNIX` socket can reach a UNIX socket.
pub fn socket_domain(sock: std::os::fd::BorrowedFd<'_>) -> Option<i32> {
    int_option(sock, libc::SO_DOMAIN)
}

/// `SO_TYPE` of socket `sock`.
fn socket_type(sock: std::os::fd::BorrowedFd<'_>) -> Option<i32> {
    int_option(sock, libc::SO_TYPE)
}

/// An integer option of socket `sock` at level `SOL_SOCKET`.
fn int_option(sock: std::os::fd::BorrowedFd<'_>, option: libc::c_int) -> Option<i32> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a live int and its length, for an integer option.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (rc == 0).then_some(value)
}

/// The pid of the process that listened on the peer of connected socket
/// `sock` (`SO_PEERCRED`), in this process's PID namespace.
fn peer_pid(sock: std::os::fd::BorrowedFd<'_>) -> Option<u32> {
    // SAFETY: ucred is plain integers; all-zero is a valid value.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: a live ucred and its length, as SO_PEERCRED fills it.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (rc == 0).then(|| u32::try_from(cred.pid).unwrap_or(0))
}

/// `path` as the caller `tid` would reach it: an absolute path inside its
/// root, a relative one from its working directory.
fn resolve_as_caller(tid: u32, path: &Path) -> io::Result<OwnedFd> {
    if path.is_absolute() {
        let root = open_path(libc::AT_FDCWD, Path::new(&format!("/proc/{tid}/root")), 0)?;
        let rel = path.strip_prefix("/").unwrap_or(path);
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        open_path(
            root.as_raw_fd(),
            rel,
            RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        )
    } else {
        let cwd = open_path(libc::AT_FDCWD, Path::new(&format!("/proc/{tid}/cwd")), 0)?;
        open_path(cwd.as_raw_fd(), path, RESOLVE_NO_MAGICLINKS)
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

    #[test]
    fn states_name_what_each_listed_path_is() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("s");
        let _l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        let gone = dir.path().join("gone");
        let got = states(&[sock.clone(), file, gone]);
        let names: Vec<&str> = got.iter().map(|s| s.state).collect();
        assert_eq!(names, ["socket", "not a socket", "missing"]);
        assert_eq!(Sockets::open(&[sock]).listed.len(), 1);
    }

    #[test]
    fn an_address_names_a_socket_file_an_abstract_socket_or_neither() {
        let unix = |rest: &[u8]| {
            let mut a = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
            a.extend_from_slice(rest);
            a
        };
        assert_eq!(
            named(&unix(b"run/s.sock\0junk")),
            Named::Path(b"run/s.sock")
        );
        assert_eq!(named(&unix(b"s.sock")), Named::Path(b"s.sock"));
        assert_eq!(named(&unix(b"\0bus\0")), Named::Abstract(b"bus\0"));
        assert_eq!(named(&unix(b"")), Named::Other);
        let mut inet = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        inet.extend_from_slice(b"\0\0\x7f\0\0\x01");
        assert_eq!(named(&inet), Named::Other);
        assert_eq!(named(&[1]), Named::Other);
    }
}
