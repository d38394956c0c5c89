//! The Landlock floor: a ruleset that handles every write right and grants it
//! only beneath the plan's rules. Built in the parent; the child only calls
//! `landlock_restrict_self` on it (see [`super::spawn`]).
//!
//! This module contains `unsafe` code: the raw Landlock system calls.

#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use super::plan::Rule;

const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: u32 = 1;

const READ_FILE: u64 = 1 << 2;
const WRITE_FILE: u64 = 1 << 1;
const REMOVE_DIR: u64 = 1 << 4;
const REMOVE_FILE: u64 = 1 << 5;
const MAKE_CHAR: u64 = 1 << 6;
const MAKE_DIR: u64 = 1 << 7;
const MAKE_REG: u64 = 1 << 8;
const MAKE_SOCK: u64 = 1 << 9;
const MAKE_FIFO: u64 = 1 << 10;
const MAKE_BLOCK: u64 = 1 << 11;
const MAKE_SYM: u64 = 1 << 12;
const REFER: u64 = 1 << 13;
const TRUNCATE: u64 = 1 << 14;

/// `LANDLOCK_SCOPE_SIGNAL` (ABI 6): no signal leaves the domain.
const SCOPE_SIGNAL: u64 = 1 << 1;

/// `struct landlock_ruleset_attr`; only its first field before ABI 6.
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock ABI of the running kernel; 0 when Landlock is unavailable.
pub fn abi() -> u32 {
    // SAFETY: a null attribute with size 0 and the VERSION flag makes the
    // kernel read and write no memory; it only returns the ABI number.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(version).unwrap_or(0)
}

/// The write rights handled at `abi`: all of them are denied unless a rule grants them.
pub fn handled(abi: u32) -> u64 {
    let mut rights = WRITE_FILE
        | REMOVE_DIR
        | REMOVE_FILE
        | MAKE_CHAR
        | MAKE_DIR
        | MAKE_REG
        | MAKE_SOCK
        | MAKE_FIFO
        | MAKE_BLOCK
        | MAKE_SYM;
    if abi >= 2 {
        rights |= REFER;
    }
    if abi >= 3 {
        rights |= TRUNCATE;
    }
    rights
}

/// A ruleset ready to be applied.
#[derive(Debug)]
pub struct Ruleset {
    fd: OwnedFd,
}

impl Ruleset {
    /// The ruleset's descriptor, for the child.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Builds the ruleset for `rules` at `abi` (which must be at least 1). With
/// `read_rules`, reading files is handled too, and granted only beneath them.
pub fn build(rules: &[Rule], read_rules: &[Rule], abi: u32) -> io::Result<Ruleset> {
    let handled = handled(abi);
    // From ABI 6, signals to processes outside the confined tree fail
    // (`EPERM`); an older kernel gets only the first field.
    let read = if read_rules.is_empty() { 0 } else { READ_FILE };
    let attr = RulesetAttr {
        handled_access_fs: handled | read,
        handled_access_net: 0,
        scoped: if abi >= 6 { SCOPE_SIGNAL } else { 0 },
    };
    let size = if abi >= 6 {
        std::mem::size_of::<RulesetAttr>()
    } else {
        std::mem::size_of::<u64>()
    };
    // SAFETY: `attr` is a live, properly laid out struct of at least `size`
    // bytes; the kernel only reads those.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            size,
            0u32,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = RawFd::try_from(fd).map_err(io::Error::other)?;
    // SAFETY: the kernel just returned this descriptor to us; nobody else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let file_rights = WRITE_FILE | (handled & TRUNCATE);
    // A rule whose path vanished since the plan was made is skipped: its
    // writes then go through the supervisor, which re-checks the path.
    // Device nodes are never made, not even in the workspace.
    let dir_rights = handled & !(MAKE_CHAR | MAKE_BLOCK);
    let granted = rules
        .iter()
        .map(|rule| (rule, if rule.dir { dir_rights } else { file_rights }))
        .chain(read_rules.iter().map(|rule| (rule, READ_FILE)));
    for (rule, rights) in granted {
        let Ok(path) = CString::new(rule.path.as_os_str().as_bytes()) else {
            continue;
        };
        // SAFETY: `path` is a NUL-terminated string that outlives the call.
        let target = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW,
            )
        };
        if target < 0 {
            continue;
        }
        // SAFETY: `open` just returned this descriptor; we own it.
        let target = unsafe { OwnedFd::from_raw_fd(target) };
        let attr = PathBeneathAttr {
            allowed_access: rights,
            parent_fd: target.as_raw_fd(),
        };
        // SAFETY: both descriptors are open; `attr` is a live packed struct the
        // kernel only reads.
        unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                fd.as_raw_fd(),
                RULE_PATH_BENEATH,
                &attr as *const PathBeneathAttr,
                0u32,
            );
        }
    }
    Ok(Ruleset { fd })
}

/// Sets `no_new_privs` and enters the ruleset. Runs in the forked child: raw
/// system calls only, no allocation.
pub fn restrict_self(ruleset: RawFd) -> io::Result<()> {
    // SAFETY: prctl with integer arguments; touches no memory of ours.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: integer arguments only; the descriptor is the open ruleset.
    if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
