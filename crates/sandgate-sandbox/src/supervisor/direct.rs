//! Direct connects under a network allow-list: a supervised caller's TCP
//! `connect()` to an address, decided by the allow-list and, when allowed,
//! made from sandgate's own network namespace.
//!
//! A command whose network is filtered by host runs in a network namespace
//! with only loopback ([`crate::netns`]): a program that ignores the proxy
//! variables and connects to an address it resolved would reach nothing.
//! So that it reaches a listed host (and nothing else), every `connect` of
//! the command goes to the supervisor, which hands a TCP connect to an
//! IPv4 or IPv6 address to a [`Route`] (the allow-list, in `sandgate-net`)
//! before anything else is done with it (`connect::connect_routed`):
//!
//! - [`Direct::Outside`]: the route connected a socket of its own, from
//!   sandgate's namespace, to the address; the supervisor puts that socket
//!   in the caller's descriptor table *at the caller's descriptor number*
//!   (`SECCOMP_IOCTL_NOTIF_ADDFD` with `SECCOMP_ADDFD_FLAG_SETFD`, which
//!   replaces the caller's socket as `dup2` would) and the call returns 0.
//!   The caller's file status flags (`O_NONBLOCK`), close-on-exec flag and
//!   the options a client sets before connecting (`TCP_NODELAY`,
//!   `SO_KEEPALIVE`) are carried over; a non-blocking connect returns 0 at
//!   once, which the kernel may do too. Not carried over: a local address
//!   the program bound its socket to before connecting (the connection
//!   leaves from sandgate's namespace, where that address means nothing),
//!   and other socket options.
//! - [`Direct::Inside`]: connected exactly as copied, in the namespace (its
//!   own loopback: the proxy, the resolver, a server the program started).
//! - [`Direct::Refused`]: the call fails with this errno.
//!
//! Everything else (UDP, raw sockets, UNIX sockets, other families) is not
//! routed: it is connected as copied in the namespace, where nothing routes
//! out of loopback, or decided by the UNIX socket rules.
//!
//! This module contains `unsafe` code: `fcntl`, `getsockopt` and
//! `setsockopt` on descriptors it owns.

#![allow(unsafe_code)]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use crate::notify::{Listener, Notif};

/// What a [`Route`] makes of a TCP connect to an address.
#[derive(Debug)]
pub enum Direct {
    /// A socket connected from sandgate's namespace: it takes the place of
    /// the caller's.
    Outside(OwnedFd),
    /// Connect the caller's socket as it asked, inside its namespace.
    Inside,
    /// Fail the call with this errno.
    Refused(i32),
}

/// Decides (and makes) the TCP connects a contained program makes to an
/// address.
pub trait Route: Send + Sync {
    /// The program's process `pid` connects to `to` (an IPv4-mapped IPv6
    /// address as the program wrote it).
    fn connect(&self, to: SocketAddr, pid: u32) -> Direct;

    /// Whether [`Route::connect`] to `to` would be [`Direct::Inside`],
    /// known without blocking (no question, no name looked up): such a
    /// connect of a non-blocking socket is made at once, on the
    /// supervisor's own thread. `false` when unsure.
    fn stays_inside(&self, _to: SocketAddr) -> bool {
        false
    }
}

impl std::fmt::Debug for dyn Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Route")
    }
}

/// The IPv4 or IPv6 address `address` (a `sockaddr` as copied) names, when
/// it is one whole.
pub fn inet_address(address: &[u8]) -> Option<SocketAddr> {
    let family = match address {
        [a, b, ..] => i32::from(u16::from_ne_bytes([*a, *b])),
        _ => return None,
    };
    match family {
        libc::AF_INET if address.len() >= 16 => {
            let port = u16::from_be_bytes([address[2], address[3]]);
            let ip = Ipv4Addr::new(address[4], address[5], address[6], address[7]);
            Some(SocketAddr::new(IpAddr::V4(ip), port))
        }
        libc::AF_INET6 if address.len() >= 28 => {
            let port = u16::from_be_bytes([address[2], address[3]]);
            let mut octets = [0u8; 16];
            octets.copy_from_slice(&address[8..24]);
            Some(SocketAddr::new(IpAddr::V6(Ipv6Addr::from(octets)), port))
        }
        _ => None,
    }
}

/// Whether `sock` is a TCP socket (a stream socket of `AF_INET` or
/// `AF_INET6` with protocol TCP), the only kind that is routed.
pub fn is_tcp(sock: &OwnedFd) -> bool {
    let domain = int_option(sock, libc::SOL_SOCKET, libc::SO_DOMAIN);
    let kind = int_option(sock, libc::SOL_SOCKET, libc::SO_TYPE);
    let protocol = int_option(sock, libc::SOL_SOCKET, libc::SO_PROTOCOL);
    matches!(domain, Some(libc::AF_INET | libc::AF_INET6))
        && kind == Some(libc::SOCK_STREAM)
        && protocol == Some(libc::IPPROTO_TCP)
}

/// Whether the caller's socket `sock` (a copy of it: the flag is the open
/// file's) is non-blocking.
pub fn is_nonblocking(sock: &OwnedFd) -> bool {
    // SAFETY: an integer argument only, on a descriptor this process owns.
    let flags = unsafe { libc::fcntl(sock.as_raw_fd(), libc::F_GETFL) };
    flags >= 0 && flags & libc::O_NONBLOCK != 0
}

/// Gives `outside` (a socket the route connected) what the caller set on
/// its own socket `theirs` before connecting: `O_NONBLOCK`, and the options
/// `TCP_NODELAY` and `SO_KEEPALIVE`.
pub fn carry_over(theirs: &OwnedFd, outside: &OwnedFd) {
    if is_nonblocking(theirs) {
        // SAFETY: integer arguments only, on a descriptor this process owns.
        unsafe {
            let own = libc::fcntl(outside.as_raw_fd(), libc::F_GETFL);
            if own >= 0 {
                libc::fcntl(outside.as_raw_fd(), libc::F_SETFL, own | libc::O_NONBLOCK);
            }
        }
    }
    for (level, option) in [
        (libc::IPPROTO_TCP, libc::TCP_NODELAY),
        (libc::SOL_SOCKET, libc::SO_KEEPALIVE),
    ] {
        if let Some(value) = int_option(theirs, level, option) {
            let value: libc::c_int = value;
            // SAFETY: a live int and its length, for an integer option.
            unsafe {
                libc::setsockopt(
                    outside.as_raw_fd(),
                    level,
                    option,
                    (&value as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                );
            }
        }
    }
}

/// Answer the connect `notif` asked for on the caller's descriptor `fd`
/// with `socket`, connected from outside ([`Direct::Outside`]): it takes
/// the caller's socket's place, close-on-exec as that was, and the call
/// returns 0; if it cannot be put there, the call fails with the reason.
pub fn answer_outside(listener: &Listener, notif: &Notif, fd: i32, socket: BorrowedFd<'_>) {
    let cloexec = is_cloexec(notif.pid, fd);
    match listener.replace_fd(notif.id, socket, fd, cloexec) {
        Ok(()) => listener.succeed(notif.id, 0),
        Err(e) => listener.fail(notif.id, e.raw_os_error().unwrap_or(libc::EBADF)),
    }
}

/// Whether the caller's descriptor `fd` of process `pid` is close-on-exec
/// (the `flags` line of `/proc/PID/fdinfo/FD`, in octal).
pub fn is_cloexec(pid: u32, fd: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}"))
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("flags:"))
                .and_then(|v| i64::from_str_radix(v.trim(), 8).ok())
        })
        .is_some_and(|flags| flags & i64::from(libc::O_CLOEXEC) != 0)
}

fn int_option(sock: &OwnedFd, level: libc::c_int, option: libc::c_int) -> Option<i32> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a live int and its length, for an integer option.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            level,
            option,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (rc == 0).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sockaddr(addr: SocketAddr) -> Vec<u8> {
        match addr {
            SocketAddr::V4(a) => {
                let mut b = (libc::AF_INET as u16).to_ne_bytes().to_vec();
                b.extend_from_slice(&a.port().to_be_bytes());
                b.extend_from_slice(&a.ip().octets());
                b.extend_from_slice(&[0; 8]);
                b
            }
            SocketAddr::V6(a) => {
                let mut b = (libc::AF_INET6 as u16).to_ne_bytes().to_vec();
                b.extend_from_slice(&a.port().to_be_bytes());
                b.extend_from_slice(&[0; 4]);
                b.extend_from_slice(&a.ip().octets());
                b.extend_from_slice(&[0; 4]);
                b
            }
        }
    }

    #[test]
    fn addresses_are_read_as_the_kernel_reads_them() {
        for text in ["192.0.2.7:443", "[2001:db8::1]:22", "[::ffff:10.0.0.1]:80"] {
            let addr: SocketAddr = text.parse().unwrap();
            assert_eq!(inet_address(&sockaddr(addr)), Some(addr));
        }
        let short = &sockaddr("192.0.2.7:443".parse().unwrap())[..8];
        assert_eq!(inet_address(short), None);
        assert_eq!(inet_address(&(libc::AF_UNIX as u16).to_ne_bytes()), None);
    }

    #[test]
    fn only_tcp_sockets_are_routed() {
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        assert!(is_tcp(&OwnedFd::from(tcp)));
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        assert!(!is_tcp(&OwnedFd::from(udp)));
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert!(!is_tcp(&OwnedFd::from(a)));
    }
}
