//! The mount system calls both confinements make in a child between `fork`
//! and `exec`: entering a private mount namespace (and, unless root, a user
//! namespace mapping only the caller's ids), and read-only bind mounts made
//! from descriptors opened without following a symbolic link (`openat2`
//! with `RESOLVE_NO_SYMLINKS`), cloned with `open_tree`, flagged with
//! `mount_setattr` and attached with `move_mount`.
//!
//! Exec isolation's `landlock` mode (its read-only view, in `sys`) and `sandgate
//! run`'s mount layer (`sandgate-confine`) build on these. Every function
//! makes raw system calls on memory its caller prepared, and allocates
//! nothing, so it may run in the forked copy of a multithreaded parent.
//!
//! This module contains `unsafe` code: those system calls.

#![allow(unsafe_code)]

use std::ffi::CStr;
use std::io;
use std::os::fd::{IntoRawFd, RawFd};

/// `MOUNT_ATTR_RDONLY`.
const MOUNT_ATTR_RDONLY: u64 = 0x1;
/// `OPEN_TREE_CLONE`.
pub const OPEN_TREE_CLONE: libc::c_uint = 1;
/// `MOVE_MOUNT_F_EMPTY_PATH`: the source is the descriptor itself.
pub const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x04;
/// `MOVE_MOUNT_T_EMPTY_PATH`: the target is the descriptor itself.
pub const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// A descriptor, closed on drop. No allocation.
#[derive(Debug)]
pub struct Fd(pub RawFd);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: the descriptor was returned by the kernel to us and is
        // closed only here.
        unsafe { libc::close(self.0) };
    }
}

/// A raw system call's result: the value, or the error in `errno`.
pub fn check(rc: libc::c_long) -> io::Result<libc::c_long> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// Writes `text` to the file `path` in one `write` (for `/proc/self` files).
pub fn write_file(path: &CStr, text: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated and outlives the call.
    let fd = check(unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) }.into())?;
    let fd = Fd(fd as RawFd);
    // SAFETY: `text` is live for its length; `fd` is open.
    let written = unsafe { libc::write(fd.0, text.as_ptr().cast(), text.len()) };
    if usize::try_from(written).ok() == Some(text.len()) {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Enters a new mount namespace in which nothing propagates back to the
/// caller's; unless `as_root`, first a user namespace with the id maps
/// `uid_map` and `gid_map` (`"ID ID 1"`: the caller's own ids only).
pub fn enter_namespaces(as_root: bool, uid_map: &[u8], gid_map: &[u8]) -> io::Result<()> {
    let flags = if as_root {
        libc::CLONE_NEWNS
    } else {
        libc::CLONE_NEWUSER | libc::CLONE_NEWNS
    };
    // SAFETY: integer arguments only.
    check(unsafe { libc::unshare(flags) }.into())?;
    if !as_root {
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/uid_map", uid_map)?;
        write_file(c"/proc/self/gid_map", gid_map)?;
    }
    // SAFETY: NUL-terminated literals; null source, type and data are allowed
    // for a propagation change.
    check(
        unsafe {
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_SLAVE,
                std::ptr::null(),
            )
        }
        .into(),
    )
    .map(drop)
}

/// `openat2(dirfd, path, O_PATH | O_NOFOLLOW | extra, RESOLVE_NO_SYMLINKS | resolve)`.
pub fn open_path(dirfd: RawFd, path: &CStr, extra: i32, resolve: u64) -> io::Result<Fd> {
    let fd = crate::beneath::raw_openat2(
        dirfd,
        path,
        libc::O_PATH | libc::O_NOFOLLOW | extra,
        0,
        libc::RESOLVE_NO_SYMLINKS | resolve,
    )?;
    Ok(Fd(fd.into_raw_fd()))
}

/// A detached copy of the mount at `fd` (with the mounts below it when
/// `recursive`), keeping each mount's flags.
pub fn clone_tree(fd: &Fd, recursive: bool) -> io::Result<Fd> {
    let mut flags =
        OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | libc::AT_EMPTY_PATH as libc::c_uint;
    if recursive {
        flags |= libc::AT_RECURSIVE as libc::c_uint;
    }
    // SAFETY: an open descriptor, an empty NUL-terminated path, flags.
    let tree = check(unsafe { libc::syscall(libc::SYS_open_tree, fd.0, c"".as_ptr(), flags) })?;
    Ok(Fd(tree as RawFd))
}

/// Sets the read-only flag of the mount `fd` refers to (and of the mounts
/// below it when `recursive`).
pub fn set_read_only(fd: &Fd, recursive: bool) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let mut flags = libc::AT_EMPTY_PATH as libc::c_uint;
    if recursive {
        flags |= libc::AT_RECURSIVE as libc::c_uint;
    }
    // SAFETY: an open descriptor, an empty path, and a live `mount_attr`
    // whose size is passed; the kernel only reads it.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            fd.0,
            c"".as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })
    .map(drop)
}

/// Attaches the detached tree `tree` at `target` (`name` below it, or the
/// descriptor itself when `name` is empty).
pub fn move_onto(tree: &Fd, target: &Fd, name: &CStr) -> io::Result<()> {
    let mut flags = MOVE_MOUNT_F_EMPTY_PATH;
    if name.is_empty() {
        flags |= MOVE_MOUNT_T_EMPTY_PATH;
    }
    // SAFETY: two open descriptors and NUL-terminated paths.
    check(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.0,
            c"".as_ptr(),
            target.0,
            name.as_ptr(),
            flags,
        )
    })
    .map(drop)
}

/// Makes `path` a read-only bind mount of itself (with the mounts below it),
/// opened without following a symbolic link.
pub fn bind_read_only(path: &CStr) -> io::Result<()> {
    let target = open_path(libc::AT_FDCWD, path, 0, 0)?;
    let tree = clone_tree(&target, true)?;
    set_read_only(&tree, true)?;
    move_onto(&tree, &target, c"")
}
