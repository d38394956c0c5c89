//! A network namespace with only loopback for a contained command, and the
//! ways out of it: sockets made inside and handed to sandgate outside,
//! which serves them (`sandgate-net`) as a filtering proxy and as a
//! resolver that answers only listed names.
//!
//! The command's child, before anything else of its `pre_exec` hooks,
//! enters a new network namespace and a new mount namespace (root with
//! `CAP_SYS_ADMIN` directly; anyone else inside a new user namespace that
//! maps only the caller's uid and gid), brings its loopback interface up,
//! makes a TCP socket listening on `127.0.0.1:`[`PROXY_PORT`], a UDP socket
//! and a TCP socket listening on `127.0.0.1:`[`DNS_PORT`] there, and sends
//! the three to the parent over a socket pair made before the fork. The
//! sockets stay in the namespace they were made in, so sandgate serves the
//! command from outside. In its mount namespace (its mounts made slaves
//! first, so nothing propagates back), the child mounts a file that names
//! `127.0.0.1` as the only name server over `/etc/resolv.conf` (when that
//! exists; without it, the C library asks `127.0.0.1` anyway), so the
//! command's own lookups reach sandgate's resolver; both isolation modes
//! see it (`bwrap` binds the root it sees, and Landlock mode's read-only
//! mounts are made in a namespace copied from this one). Nothing else in
//! the namespace routes anywhere: if sandgate goes away, so do the only
//! ways out (fail closed).
//!
//! For root, the network namespace is made early instead, on a thread of
//! sandgate's own, while the rest of the command is prepared (its Landlock
//! rules, its mount layer): a new network namespace takes the kernel about
//! 0.4 ms here, which the child would otherwise spend before its command
//! starts. The thread brings `lo` up, makes the three sockets there, sends
//! them to the parent's end of the socket pair and the namespace (its
//! `/proc/thread-self/ns/net`) to the child's; the child waits for it,
//! enters it with `setns`, and makes only its mount namespace. Anyone else
//! keeps the child's way: a thread of a process with other threads cannot
//! make the user namespace the network namespace must belong to.
//!
//! This module contains `unsafe` code: `unshare`, `setns`, `mount`, the
//! interface `ioctl`, and the socket calls of the `pre_exec` hook and of the
//! early thread.

#![allow(unsafe_code)]

use std::io;
use std::net::{TcpListener, UdpSocket};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

use crate::notify::{recv_fd_or_tag, send_fd, send_tag, socketpair};

/// The port the proxy listens on inside the namespace (the namespace is
/// the command's own, so nothing else holds it).
pub const PROXY_PORT: u16 = 3128;
/// The port the resolver answers on inside the namespace (UDP and TCP).
pub const DNS_PORT: u16 = 53;
/// What the command's `/etc/resolv.conf` says.
pub const RESOLV_CONF: &str =
    "# sandgate: names are resolved by sandgate, and only listed ones\nnameserver 127.0.0.1\n";

/// The parent's end: where the sockets arrive.
#[derive(Debug)]
pub struct Outside {
    sock: OwnedFd,
    /// The file mounted over the command's `/etc/resolv.conf`, removed once
    /// the command has started (the mount holds it).
    _resolv: Option<TempFile>,
}

/// The sockets a command's namespace hands out.
#[derive(Debug)]
pub struct Handed {
    /// Listening on `127.0.0.1:PROXY_PORT`.
    pub proxy: TcpListener,
    /// Bound to `127.0.0.1:DNS_PORT`.
    pub dns_udp: UdpSocket,
    /// Listening on `127.0.0.1:DNS_PORT`.
    pub dns_tcp: TcpListener,
}

impl Outside {
    /// The proxy's listening socket the child made in its namespace; call
    /// after the command has started (the child sent it before `exec`).
    /// The resolver's sockets are closed: names do not resolve.
    pub fn listener(self) -> io::Result<TcpListener> {
        Ok(self.take()?.proxy)
    }

    /// The sockets the child made in its namespace; call after the
    /// command has started (the child sent them before `exec`).
    pub fn take(self) -> io::Result<Handed> {
        let next = |what: &str| match recv_fd_or_tag(self.sock.as_raw_fd())? {
            Ok(fd) => Ok(fd),
            Err(_) => Err(io::Error::other(format!(
                "the command did not hand over its {what}"
            ))),
        };
        Ok(Handed {
            proxy: TcpListener::from(next("proxy socket")?),
            dns_udp: UdpSocket::from(next("resolver's UDP socket")?),
            dns_tcp: TcpListener::from(next("resolver's TCP socket")?),
        })
    }
}

/// A file in a directory of its own, both removed on drop.
#[derive(Debug)]
struct TempFile {
    dir: std::path::PathBuf,
    path: std::ffi::CString,
}

impl TempFile {
    fn new(name: &str, text: &str) -> io::Result<TempFile> {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::PermissionsExt;
        let unique = format!(
            "sandgate-netns-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        );
        let dir = std::env::temp_dir().join(unique);
        std::fs::create_dir(&dir)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        let file = dir.join(name);
        std::fs::write(&file, text)?;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644))?;
        let path = std::ffi::CString::new(file.as_os_str().as_bytes())
            .map_err(|_| io::Error::other("a temporary path with a NUL byte"))?;
        Ok(TempFile { dir, path })
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The environment that points a command's clients at the proxy: the
/// usual proxy variables, upper and lower case (`ALL_PROXY` as
/// `socks5h://`, so that names are resolved by sandgate), and no
/// `NO_PROXY`, whose hosts would be tried directly and fail.
pub fn proxy_environment() -> Vec<(&'static str, Option<String>)> {
    let http = format!("http://127.0.0.1:{PROXY_PORT}");
    let socks = format!("socks5h://127.0.0.1:{PROXY_PORT}");
    vec![
        ("HTTP_PROXY", Some(http.clone())),
        ("HTTPS_PROXY", Some(http.clone())),
        ("http_proxy", Some(http.clone())),
        ("https_proxy", Some(http)),
        ("ALL_PROXY", Some(socks.clone())),
        ("all_proxy", Some(socks)),
        ("NO_PROXY", None),
        ("no_proxy", None),
    ]
}

/// Have `command` start in a network namespace of its own with only
/// loopback (and a mount namespace whose `/etc/resolv.conf` names the
/// resolver), and hand its proxy and resolver sockets out. Call before any
/// other `pre_exec` hook is registered (this one must run first, while the
/// child still has its capabilities). Root with `CAP_SYS_ADMIN` gets plain
/// namespaces, the network's made at once on a thread (see the module's
/// doc); anyone else a user namespace first, all made by the child.
pub fn enter(command: &mut Command) -> io::Result<Outside> {
    // SAFETY: geteuid takes no arguments and cannot fail.
    let as_root =
        unsafe { libc::geteuid() } == 0 && crate::sys::has_capability(crate::sys::CAP_SYS_ADMIN);
    let (outside, inside) = socketpair()?;
    if as_root {
        made_early(&outside, &inside)?;
    }
    // Only when there is one to cover: without it the C library asks
    // 127.0.0.1 anyway. A symbolic link is followed to the file it names.
    let resolv = if std::path::Path::new("/etc/resolv.conf").exists() {
        Some(TempFile::new("resolv.conf", RESOLV_CONF)?)
    } else {
        None
    };
    let resolv_source = resolv.as_ref().map(|f| f.path.clone());
    for (name, value) in proxy_environment() {
        match value {
            Some(v) => command.env(name, v),
            None => command.env_remove(name),
        };
    }
    // SAFETY: geteuid and getgid take no arguments and cannot fail.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getgid()) };
    let uid_map = std::ffi::CString::new(format!("{uid} {uid} 1"))
        .map_err(|_| io::Error::other("uid map"))?;
    let gid_map = std::ffi::CString::new(format!("{gid} {gid} 1"))
        .map_err(|_| io::Error::other("gid map"))?;
    let hook = move || -> io::Result<()> {
        if as_root {
            // The namespace the early thread made, once it is ready.
            let netns = match recv_fd_or_tag(inside.as_raw_fd())? {
                Ok(fd) => fd,
                Err(0) => return Err(io::Error::from_raw_os_error(libc::EPIPE)),
                Err(code) => return Err(io::Error::from_raw_os_error(code.into())),
            };
            // SAFETY: a descriptor just received, and a namespace type.
            if unsafe { libc::setns(netns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        let flags = if as_root {
            libc::CLONE_NEWNS
        } else {
            libc::CLONE_NEWUSER | libc::CLONE_NEWNET | libc::CLONE_NEWNS
        };
        // SAFETY: integer arguments only.
        if unsafe { libc::unshare(flags) } != 0 {
            return Err(io::Error::last_os_error());
        }
        if !as_root {
            crate::mount::write_file(c"/proc/self/setgroups", b"deny")?;
            crate::mount::write_file(c"/proc/self/uid_map", uid_map.as_bytes())?;
            crate::mount::write_file(c"/proc/self/gid_map", gid_map.as_bytes())?;
        }
        // Nothing mounted here reaches the namespace it was copied from.
        // SAFETY: NUL-terminated literals; null source, type and data are
        // allowed for a propagation change.
        let rc = unsafe {
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_SLAVE,
                std::ptr::null(),
            )
        };
        crate::mount::check(rc.into())?;
        if let Some(source) = &resolv_source {
            // SAFETY: NUL-terminated strings made before the fork; null
            // type and data are allowed for a bind.
            let rc = unsafe {
                libc::mount(
                    source.as_ptr(),
                    c"/etc/resolv.conf".as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                )
            };
            crate::mount::check(rc.into())?;
        }
        if as_root {
            // Made and handed out by the early thread.
            return Ok(());
        }
        hand_out(inside.as_raw_fd())
    };
    // SAFETY: the hook runs in the forked child before `exec`. It only calls
    // `recvmsg`, `setns`, `unshare`, `open`/`write`/`close` of `/proc/self`
    // files, `mount`, `socket`, `ioctl`, `setsockopt`, `bind`, `listen`,
    // `sendmsg` and `close`, on memory owned by the closure (the id maps and
    // the path, made before the fork) or on its stack, and allocates
    // nothing; errors are built from errno.
    unsafe {
        command.pre_exec(hook);
    }
    Ok(Outside {
        sock: outside,
        _resolv: resolv,
    })
}

/// The sockets a command's namespace hands out, in the order
/// [`Outside::take`] receives them: the proxy's, the resolver's UDP and TCP.
const SOCKETS: [(libc::c_int, u16); 3] = [
    (libc::SOCK_STREAM, PROXY_PORT),
    (libc::SOCK_DGRAM, DNS_PORT),
    (libc::SOCK_STREAM, DNS_PORT),
];

/// How long the child waits for the early thread's namespace before it
/// gives up (and the command does not start).
const EARLY_WAIT: Duration = Duration::from_secs(60);

/// Start the thread that makes the command's network namespace early (see
/// the module's doc): what it makes arrives at `outside` (the sockets, for
/// [`Outside::take`]) and at `inside` (the namespace, for the child's hook),
/// or, if it fails, the child's hook gets the error's number instead.
fn made_early(outside: &OwnedFd, inside: &OwnedFd) -> io::Result<()> {
    let timeout = libc::timeval {
        tv_sec: EARLY_WAIT.as_secs() as libc::time_t,
        tv_usec: 0,
    };
    // SAFETY: a live timeval of the length given, on an open socket.
    let rc = unsafe {
        libc::setsockopt(
            inside.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&timeout as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // Written on one end, read at the other: the thread writes the sockets
    // on the child's end (they arrive at the parent's) and the namespace on
    // the parent's (it arrives at the child's).
    let (to_parent, to_child) = (inside.try_clone()?, outside.try_clone()?);
    std::thread::Builder::new()
        .name("sandgate-netns".into())
        .spawn(move || {
            // The sockets first: once the child has the namespace, the
            // parent may take them.
            let handed = made_namespace(to_parent.as_raw_fd())
                .and_then(|netns| send_fd(to_child.as_raw_fd(), netns.as_raw_fd()));
            if let Err(e) = handed {
                let code = e.raw_os_error().and_then(|n| u8::try_from(n).ok());
                let _ = send_tag(
                    to_child.as_raw_fd(),
                    code.filter(|n| *n != 0).unwrap_or(libc::EIO as u8),
                );
            }
        })?;
    Ok(())
}

/// On the calling thread (which stays in it): a new network namespace,
/// made ready by [`hand_out`] with its sockets sent over `sock`; the
/// namespace itself.
fn made_namespace(sock: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: an integer argument; only this thread changes namespace.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    hand_out(sock)?;
    Ok(std::fs::File::open("/proc/thread-self/ns/net")?.into())
}

/// In the current network namespace: brings `lo` up with its addresses,
/// and makes the sockets of [`SOCKETS`] and sends them over `sock`, each
/// closed once sent. Runs in the forked child too: no allocation.
fn hand_out(sock: libc::c_int) -> io::Result<()> {
    loopback_up()?;
    local_addresses()?;
    for (kind, port) in SOCKETS {
        let socket = bound_on_loopback(kind, port)?;
        let sent = send_fd(sock, socket);
        // SAFETY: `socket` was made above and is closed once.
        unsafe { libc::close(socket) };
        sent?;
    }
    Ok(())
}

/// Brings `lo` up in the current network namespace.
fn loopback_up() -> io::Result<()> {
    // SAFETY: a plain socket call with integer arguments.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: an all-zero ifreq is valid; the name fits its 16 bytes with
    // the NUL, and the union is written as the flags member SIOCSIFFLAGS reads.
    let rc = unsafe {
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo\0".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        req.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        libc::ioctl(fd, libc::SIOCSIFFLAGS, &req)
    };
    let error = io::Error::last_os_error();
    // SAFETY: `fd` was made above and is closed once.
    unsafe { libc::close(fd) };
    if rc != 0 {
        return Err(error);
    }
    Ok(())
}

/// The addresses `local_addresses` gives `lo` besides its own.
pub const LOCAL_V4: [u8; 4] = [127, 0, 0, 2];
/// See [`LOCAL_V4`]: from the discard-only prefix (RFC 6666).
pub const LOCAL_V6: [u8; 16] = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x53];

/// Gives `lo` a second IPv4 address ([`LOCAL_V4`], as the alias `lo:1`)
/// and an IPv6 one ([`LOCAL_V6`]). The C library's `getaddrinfo` with
/// `AI_ADDRCONFIG` (`getent ahostsv4`, many clients) returns nothing for a
/// family of which only loopback's own address (`127.0.0.1`, `::1`) is
/// configured; with these it resolves as it would outside. Both are local:
/// a connection to them stays in the namespace, unless an allow entry
/// names them (then it goes out, see the direct connects).
fn local_addresses() -> io::Result<()> {
    // SAFETY: a plain socket call with integer arguments.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: an all-zero ifreq is valid; the name fits its 16 bytes with
    // the NUL, and the union is written as the sockaddr_in SIOCSIFADDR reads.
    let rc = unsafe {
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo:1\0".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        let sin = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from_be_bytes(LOCAL_V4).to_be(),
            },
            sin_zero: [0; 8],
        };
        std::ptr::write_unaligned(
            std::ptr::addr_of_mut!(req.ifr_ifru).cast::<libc::sockaddr_in>(),
            sin,
        );
        libc::ioctl(fd, libc::SIOCSIFADDR, &req)
    };
    let error = io::Error::last_os_error();
    // SAFETY: `fd` was made above and is closed once.
    unsafe { libc::close(fd) };
    if rc != 0 {
        return Err(error);
    }
    // SAFETY: a plain socket call with integer arguments.
    let fd = unsafe { libc::socket(libc::AF_INET6, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        // No IPv6 here at all: nothing to configure.
        return Ok(());
    }
    let req = libc::in6_ifreq {
        ifr6_addr: libc::in6_addr { s6_addr: LOCAL_V6 },
        ifr6_prefixlen: 128,
        // `lo` is the first interface of a new namespace.
        ifr6_ifindex: 1,
    };
    // SAFETY: a live in6_ifreq, as SIOCSIFADDR reads it on an IPv6 socket.
    let rc = unsafe { libc::ioctl(fd, libc::SIOCSIFADDR, &req) };
    let error = io::Error::last_os_error();
    // SAFETY: `fd` was made above and is closed once.
    unsafe { libc::close(fd) };
    if rc != 0 {
        return Err(error);
    }
    Ok(())
}

/// A socket of `kind` bound to `127.0.0.1:port` (and listening, for a
/// stream socket); its raw descriptor.
fn bound_on_loopback(kind: libc::c_int, port: u16) -> io::Result<libc::c_int> {
    // SAFETY: a plain socket call with integer arguments.
    let fd = unsafe { libc::socket(libc::AF_INET, kind | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_be_bytes([127, 0, 0, 1]).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: `addr` is a live sockaddr_in of the length given; `fd` is open.
    let rc = unsafe {
        let bound = libc::bind(
            fd,
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        if bound == 0 && kind == libc::SOCK_STREAM {
            libc::listen(fd, 512)
        } else {
            bound
        }
    };
    if rc != 0 {
        let error = io::Error::last_os_error();
        // SAFETY: `fd` was made above and is closed once.
        unsafe { libc::close(fd) };
        return Err(error);
    }
    Ok(fd)
}
