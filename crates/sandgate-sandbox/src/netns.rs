//! A network namespace with only loopback for a contained command, and the
//! one way out of it: a listening socket made inside and handed to sandgate
//! outside, which serves it as a filtering proxy (`sandgate-net`).
//!
//! The command's child, before anything else of its `pre_exec` hooks,
//! enters a new network namespace (root with `CAP_SYS_ADMIN` directly;
//! anyone else inside a new user namespace that maps only the caller's uid
//! and gid), brings its loopback interface up, makes a TCP socket
//! listening on `127.0.0.1:`[`PROXY_PORT`] there, and sends it to the parent
//! over a socket pair made before the fork. The socket stays in the
//! namespace it was made in, so sandgate accepts the command's connections
//! from outside. Nothing else in the namespace routes anywhere: if sandgate
//! goes away, so does the only way out (fail closed).
//!
//! This module contains `unsafe` code: `unshare`, the interface `ioctl`,
//! and the socket calls of the `pre_exec` hook.

#![allow(unsafe_code)]

use std::io;
use std::net::TcpListener;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::notify::{recv_fd_or_tag, send_fd, socketpair};

/// The port the proxy listens on inside the namespace (the namespace is
/// the command's own, so nothing else holds it).
pub const PROXY_PORT: u16 = 3128;

/// The parent's end: where the listening socket arrives.
#[derive(Debug)]
pub struct Outside {
    sock: OwnedFd,
}

impl Outside {
    /// The listening socket the child made in its namespace; call after the
    /// command has started (the child sent it before `exec`).
    pub fn listener(self) -> io::Result<TcpListener> {
        match recv_fd_or_tag(self.sock.as_raw_fd())? {
            Ok(fd) => Ok(TcpListener::from(fd)),
            Err(_) => Err(io::Error::other(
                "the command did not hand over its proxy socket",
            )),
        }
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
/// loopback, and hand its proxy socket out. Call before any other
/// `pre_exec` hook is registered (this one must run first, while the child
/// still has its capabilities). Root with `CAP_SYS_ADMIN` gets a plain
/// network namespace; anyone else a user namespace first.
pub fn enter(command: &mut Command) -> io::Result<Outside> {
    // SAFETY: geteuid takes no arguments and cannot fail.
    let as_root =
        unsafe { libc::geteuid() } == 0 && crate::sys::has_capability(crate::sys::CAP_SYS_ADMIN);
    let (outside, inside) = socketpair()?;
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
        let flags = if as_root {
            libc::CLONE_NEWNET
        } else {
            libc::CLONE_NEWUSER | libc::CLONE_NEWNET
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
        loopback_up()?;
        let listener = listen_on_loopback()?;
        let sent = send_fd(inside.as_raw_fd(), listener);
        // SAFETY: `listener` was made above and is closed once.
        unsafe { libc::close(listener) };
        sent
    };
    // SAFETY: the hook runs in the forked child before `exec`. It only calls
    // `unshare`, `open`/`write`/`close` of `/proc/self` files, `socket`,
    // `ioctl`, `setsockopt`, `bind`, `listen`, `sendmsg` and `close`, on
    // memory owned by the closure (the id maps, made before the fork) or on
    // its stack, and allocates nothing; errors are built from errno.
    unsafe {
        command.pre_exec(hook);
    }
    Ok(Outside { sock: outside })
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

/// A socket listening on `127.0.0.1:PROXY_PORT`; its raw descriptor.
fn listen_on_loopback() -> io::Result<libc::c_int> {
    // SAFETY: a plain socket call with integer arguments.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: PROXY_PORT.to_be(),
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
        if bound == 0 {
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
