//! `connect()` made for a supervised caller, for both scopes (exec
//! isolation's listed `unix_sockets`, and `sandgate run`'s sockets): the one
//! place where sandgate connects a socket on a caller's behalf.
//!
//! Neither Landlock (up to ABI 7) nor a read-only mount stops a `connect()`
//! to a socket file, and a UNIX socket whose listener is outside the
//! confinement would act for the program outside it (a terminal
//! multiplexer's `new-window`, a desktop bus's `systemd-run`, docker's
//! `run -v /:/host`). So a supervised `connect` is never continued: the
//! kernel would read the address again from memory another thread can
//! change, and look up the descriptor again, which another thread can point
//! elsewhere meanwhile (`dup2`). Instead the scope copies the address once
//! ([`copy_address`]), takes the caller's own socket with `pidfd_getfd`
//! ([`super::caller::take_fd`]), and hands both to [`connect_copied`], which
//! decides from what the address names ([`named`]) and what the scope lets
//! the caller [`Reach`]:
//!
//! - an address of another family (or none past the family) is connected
//!   exactly as copied: the network is decided elsewhere (by exec
//!   isolation's `network` filter; not at all by `sandgate run`). Under a
//!   network allow-list, [`connect_routed`] first hands a TCP connect to
//!   an address to the allow-list's [`Route`] ([`super::direct`]), which
//!   may connect a socket of its own from sandgate's namespace to take the
//!   place of the caller's;
//! - a socket path is resolved in the caller's view (its root and working
//!   directory) to a descriptor of the socket file, and the connection made
//!   through that descriptor (`/proc/self/fd/N`), never to a path the caller
//!   could swap in between ([`connect_path_for`]). A file listed in
//!   [`Sockets`] (by device and inode, each opened once when the confinement
//!   starts) is connected;
//! - any other UNIX socket, by path or abstract, is connected only when the
//!   scope judges listeners by the process that listens ([`Reach::inside`],
//!   `sandgate run`: [`Peers`]) and that process is inside; the caller's
//!   socket is then shut down and the call refused otherwise. Without that
//!   judgement (exec isolation) an unlisted path is refused (`EACCES`) and
//!   an abstract address fails with `EPERM` (connected from outside the
//!   sandbox it would pass Landlock's scoping of abstract sockets).
//!
//! This module contains `unsafe` code: `shutdown` and `getsockopt` on
//! descriptors it owns.

#![allow(unsafe_code)]

use std::fs;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::caller::{open_path, raw_connect, RESOLVE_IN_ROOT, RESOLVE_NO_MAGICLINKS};
use super::direct::{self, Direct, Route};
use crate::beneath;
use crate::notify;

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

/// A caller's socket (its copy, taken with `pidfd_getfd`) and the address
/// it connects to, copied once ([`copy_address`]).
#[derive(Debug)]
pub struct Taken {
    /// The caller's socket.
    pub sock: OwnedFd,
    room: [u8; ADDRESS_ROOM],
    len: usize,
}

impl Taken {
    /// `sock` and the address of `len` bytes at `at` in thread `tid`'s
    /// memory; `Err` is the errno of [`copy_address`].
    pub fn copy(sock: OwnedFd, tid: u32, at: u64, len: u64) -> Result<Taken, i32> {
        let mut room = [0u8; ADDRESS_ROOM];
        let len = copy_address(tid, at, len, &mut room)?.len();
        Ok(Taken { sock, room, len })
    }

    /// The address as copied.
    pub fn address(&self) -> &[u8] {
        &self.room[..self.len]
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

/// What a scope lets a supervised caller reach over UNIX sockets.
#[derive(Clone, Copy)]
pub struct Reach<'a> {
    /// The listed socket files, connected whoever listens.
    pub listed: &'a Sockets,
    /// With `Some`, any other UNIX socket is connected, then kept only when
    /// this accepts the pid of the process that listens (`sandgate run`:
    /// [`Peers::inside`]). With `None`, every other socket file is refused
    /// and every abstract address fails with `EPERM` (exec isolation).
    pub inside: Option<&'a dyn Fn(u32) -> bool>,
}

/// Why [`connect_copied`] did not connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The call fails with this errno, as the kernel would fail it (or as
    /// the scope fails an address it never reaches).
    Errno(i32),
    /// The listener is outside what the caller may reach: the call fails
    /// with `EACCES`, and a scope that reports refusals names this socket.
    Outside(Unreached),
}

/// A UNIX socket a caller was refused, as its address named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreached {
    /// An abstract socket: its name, after the leading NUL.
    Abstract(Vec<u8>),
    /// A socket file: its path as the caller wrote it (maybe relative).
    Path(PathBuf),
}

/// Connects `sock` (the caller's own socket, taken with `pidfd_getfd`) as
/// thread `tid` asked, with `address` as copied once ([`copy_address`]):
/// the one place a supervised caller's `connect` is made. See the module
/// documentation for what each kind of address gets.
pub fn connect_copied(
    sock: &OwnedFd,
    tid: u32,
    address: &[u8],
    reach: Reach<'_>,
) -> Result<(), Refusal> {
    match named(address) {
        // Another family (`AF_UNSPEC` dissolves a datagram socket's
        // association), or an unnamed address: no listener to judge.
        // Connected exactly as copied; the kernel fails what it would fail.
        // A network allow-list decides here, before this connect.
        Named::Other => raw_connect(sock.as_raw_fd(), address).map_err(Refusal::Errno),
        // Abstract: no file, so nothing to list; only the program's own
        // listener is reached, where the scope judges listeners at all.
        Named::Abstract(name) => match reach.inside {
            None => Err(Refusal::Errno(libc::EPERM)),
            Some(inside) => settle(connect_abstract_for(sock, address, inside), || {
                Unreached::Abstract(name.to_vec())
            }),
        },
        Named::Path(path) => settle(
            connect_path_for(
                sock,
                tid,
                path,
                |identity| reach.listed.contains(identity),
                reach.inside,
            ),
            || Unreached::Path(PathBuf::from(std::ffi::OsStr::from_bytes(path))),
        ),
    }
}

/// Whether the connect of `sock` (the caller's) to `address` (as copied)
/// cannot block, so that the supervisor makes it at once on its own thread
/// instead of starting one for it: a non-blocking IPv4 or IPv6 socket
/// connected as copied, or, under a network allow-list, to where `route`
/// keeps it inside ([`direct::Route::stays_inside`]; the proxy and the
/// resolver). Anything else may wait: a UNIX socket's path on a slow file
/// system or its full backlog, a blocking socket, a route that connects
/// from outside or asks a person.
pub fn at_once(sock: &OwnedFd, address: &[u8], route: Option<&dyn Route>) -> bool {
    if named(address) != Named::Other
        || !matches!(
            socket_domain(sock.as_fd()),
            Some(libc::AF_INET | libc::AF_INET6)
        )
        || !direct::is_nonblocking(sock)
    {
        return false;
    }
    // As [`connect_routed`] chooses: a TCP connect to an address is the
    // route's, anything else is connected as copied.
    match (route, direct::inet_address(address)) {
        (Some(route), Some(to)) if direct::is_tcp(sock) => route.stays_inside(to),
        _ => true,
    }
}

/// [`connect_copied`], with a network allow-list's `route` first: a TCP
/// connect to an IPv4 or IPv6 address is the route's to decide
/// ([`super::direct`]). `Ok(Some(socket))`: the route connected `socket`
/// from sandgate's namespace, to be put in the caller's place of `sock`
/// (with what the caller had set on `sock` carried over); `Ok(None)`:
/// `sock` itself is connected.
pub fn connect_routed(
    sock: &OwnedFd,
    tid: u32,
    address: &[u8],
    reach: Reach<'_>,
    route: Option<&dyn Route>,
) -> Result<Option<OwnedFd>, Refusal> {
    if let (Named::Other, Some(route)) = (named(address), route) {
        if let Some(to) = direct::inet_address(address) {
            if direct::is_tcp(sock) {
                return match route.connect(to, tid) {
                    Direct::Outside(socket) => {
                        direct::carry_over(sock, &socket);
                        Ok(Some(socket))
                    }
                    Direct::Inside => raw_connect(sock.as_raw_fd(), address)
                        .map(|()| None)
                        .map_err(Refusal::Errno),
                    Direct::Refused(errno) => Err(Refusal::Errno(errno)),
                };
            }
        }
    }
    connect_copied(sock, tid, address, reach).map(|()| None)
}

/// The call's result for `outcome`; a refusal names the socket as `shown`
/// gives it.
fn settle(outcome: PathConnect, shown: impl FnOnce() -> Unreached) -> Result<(), Refusal> {
    match outcome {
        PathConnect::Connected => Ok(()),
        PathConnect::Refused => Err(Refusal::Outside(shown())),
        PathConnect::Failed(errno) => Err(Refusal::Errno(errno)),
    }
}

/// How many parents up the process tree a listener is looked for.
const TREE_DEPTH: usize = 4_096;

/// Who counts as the program for `sandgate run`: the processes in its user
/// namespace, when it has one of its own, and those below it in the process
/// tree, where sandgate keeps the orphans it adopted
/// (`PR_SET_CHILD_SUBREAPER`).
#[derive(Debug)]
pub struct Peers {
    /// The program's first process.
    program: u32,
    /// The program's user namespace, when it is not sandgate's.
    namespace: Option<String>,
}

impl Peers {
    /// The program started as process `program` (already in its namespaces).
    pub fn new(program: u32) -> Peers {
        let ns = |pid: &str| fs::read_link(format!("/proc/{pid}/ns/user")).ok();
        let own = ns("self");
        let namespace = ns(&program.to_string())
            .filter(|theirs| Some(theirs) != own.as_ref())
            .map(|theirs| theirs.to_string_lossy().into_owned());
        Peers { program, namespace }
    }

    /// Whether process `pid` is the program's.
    pub fn inside(&self, pid: u32) -> bool {
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
        child.wait().unwrap(); // not a wait: the child was just killed
    }

    #[test]
    fn a_parent_is_read_past_a_name_with_parentheses() {
        assert_eq!(
            parent(std::process::id()),
            Some(std::os::unix::process::parent_id())
        );
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

    /// A route that keeps one port inside.
    struct KeepsInside(u16);

    impl Route for KeepsInside {
        fn connect(&self, _to: std::net::SocketAddr, _pid: u32) -> Direct {
            Direct::Refused(libc::EACCES)
        }
        fn stays_inside(&self, to: std::net::SocketAddr) -> bool {
            to.port() == self.0
        }
    }

    /// A new socket of `domain` and `kind` (`SOCK_NONBLOCK` or not).
    fn socket(domain: i32, kind: i32) -> OwnedFd {
        // SAFETY: integer arguments only; the descriptor is checked and
        // owned by the result alone.
        let fd = unsafe { libc::socket(domain, kind | libc::SOCK_CLOEXEC, 0) };
        assert!(fd >= 0, "socket: {}", io::Error::last_os_error());
        // SAFETY: `fd` was just opened here and is owned by nothing else.
        unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) }
    }

    fn inet(port: u16) -> Vec<u8> {
        let mut a = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        a.extend_from_slice(&port.to_be_bytes());
        a.extend_from_slice(&[127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
        a
    }

    #[test]
    fn only_connects_that_cannot_block_are_made_at_once() {
        let tcp = socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK);
        let blocking = socket(libc::AF_INET, libc::SOCK_STREAM);
        let udp = socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_NONBLOCK);
        let unix = socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_NONBLOCK);
        let route = KeepsInside(3128);
        let mut path = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        path.extend_from_slice(b"/run/s.sock\0");
        // Without a route, a non-blocking IPv4 or IPv6 socket is connected
        // as copied: it cannot wait.
        assert!(at_once(&tcp, &inet(443), None));
        assert!(at_once(&udp, &inet(53), None));
        // With one, a TCP connect is the route's: at once only inside.
        assert!(at_once(&tcp, &inet(3128), Some(&route)));
        assert!(
            !at_once(&tcp, &inet(443), Some(&route)),
            "connected from outside, or asked"
        );
        assert!(at_once(&udp, &inet(53), Some(&route)), "not routed");
        // A blocking socket, a UNIX socket, an address naming a file: on a thread.
        assert!(!at_once(&blocking, &inet(3128), Some(&route)));
        assert!(!at_once(&blocking, &inet(443), None));
        assert!(!at_once(&unix, &path, None));
        assert!(!at_once(&tcp, &path, None));
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
