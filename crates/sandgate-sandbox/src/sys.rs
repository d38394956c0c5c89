//! The thin layer that talks to the kernel. Every `unsafe` block of the crate
//! lives here.
//!
//! The functions called from the child ([`confine_child`]) run between `fork`
//! and `exec`: they only make raw system calls and build no heap values, so
//! they are safe to run in a forked copy of a multithreaded parent.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// `LANDLOCK_CREATE_RULESET_VERSION`: ask the kernel for its Landlock ABI.
const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;

/// The Landlock ABI version of the running kernel; 0 when Landlock is
/// missing or disabled.
pub fn landlock_abi() -> u32 {
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the
    // kernel reads and writes no memory and only returns the ABI version (or
    // -1 with errno when Landlock is absent).
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(version).unwrap_or(0)
}

/// What the child applies to itself before `exec`.
#[derive(Debug, Default)]
pub struct ChildConfinement {
    /// Set `PR_SET_NO_NEW_PRIVS`.
    pub no_new_privs: bool,
    /// A Landlock ruleset to restrict the child with.
    pub landlock: Option<OwnedFd>,
    /// A classic BPF seccomp program to install.
    pub seccomp: Option<Vec<libc::sock_filter>>,
}

/// Installs `confinement` as a `pre_exec` hook of `command`: the child
/// restricts itself after `fork` and before `exec`, in this order:
/// `no_new_privs`, Landlock, seccomp (last, so that its filter does not see
/// the set-up calls).
pub fn confine_child(command: &mut Command, confinement: ChildConfinement) {
    let ChildConfinement {
        no_new_privs,
        landlock,
        seccomp,
    } = confinement;
    let program = seccomp.map(|filters| {
        let len = u16::try_from(filters.len()).unwrap_or(u16::MAX);
        (filters, len)
    });
    // Seccomp filters need `no_new_privs` from callers without CAP_SYS_ADMIN.
    let no_new_privs = no_new_privs || program.is_some();
    let hook = move || -> io::Result<()> {
        if no_new_privs {
            set_no_new_privs()?;
        }
        if let Some(fd) = &landlock {
            landlock_restrict_self(fd)?;
        }
        if let Some((filters, len)) = &program {
            install_seccomp(filters, *len)?;
        }
        Ok(())
    };
    // SAFETY: the hook runs in the forked child before `exec`. It only calls
    // `prctl`, `landlock_restrict_self` and `seccomp` on memory owned by the
    // closure (the ruleset fd and the filter vector, both built before the
    // fork) and allocates nothing, so it cannot deadlock on a lock held by
    // another thread of the parent at fork time. Errors are returned as
    // `io::Error` built from errno, which allocates nothing either.
    unsafe {
        command.pre_exec(hook);
    }
}

fn set_no_new_privs() -> io::Result<()> {
    // SAFETY: `PR_SET_NO_NEW_PRIVS` takes integer arguments only and touches
    // no memory of ours.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn landlock_restrict_self(ruleset: &OwnedFd) -> io::Result<()> {
    // SAFETY: the ruleset fd is open and owned by the closure for the whole
    // call; flags 0 asks for the plain restriction of the calling thread,
    // which (before exec, single-threaded in the child) is the whole process.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_restrict_self,
            ruleset.as_raw_fd(),
            0 as libc::c_uint,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn install_seccomp(filters: &[libc::sock_filter], len: u16) -> io::Result<()> {
    let program = libc::sock_fprog {
        len,
        filter: filters.as_ptr().cast_mut(),
    };
    // SAFETY: `program` points at `len` valid filter instructions that live
    // for the whole call; the kernel copies them and keeps no pointer.
    // `no_new_privs` is set before, as `SECCOMP_SET_MODE_FILTER` requires for
    // callers without CAP_SYS_ADMIN.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0 as libc::c_uint,
            &program as *const libc::sock_fprog,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
