//! The mount layer: protected paths held read-only by bind mounts in the
//! confined program's own mount namespace, the floor's directories (and the
//! credential-store directories the policy denies) hidden behind empty
//! read-only mounts, and the denied credential-store files covered by a
//! read-only bind of `/dev/null`.
//!
//! Landlock rules only add rights to whole subtrees, so without this layer an
//! allowed directory that contains a protected path is *carved* (see
//! [`super::plan`]) and every new entry in it costs a round trip to the
//! supervisor. With it, each protected path that exists at start is a
//! read-only bind mount of itself, seen only by the program; the plan then
//! gives the allowed directory a rule of its own, and the kernel alone
//! decides a write beneath it.
//!
//! The child makes the namespace between `fork` and `exec`, before it enters
//! the Landlock domain ([`enter`]): as root a plain mount namespace (the
//! program keeps root's view of file ownership); otherwise a user namespace
//! that maps only the caller's own uid and gid, and in it a mount
//! namespace. Each bind is made from a descriptor opened without following
//! any symbolic link (`openat2` with `RESOLVE_NO_SYMLINKS`), cloned with
//! `open_tree`, made read-only with `mount_setattr` and moved onto that same
//! descriptor with `move_mount`.
//!
//! A Landlock domain forbids changing the mount topology (`mount`,
//! `umount2`, `pivot_root`, `move_mount`). What it leaves open is closed by a
//! second, tiny seccomp filter ([`deny_filter`]): `mount_setattr` (it could
//! clear the read-only flag), `open_tree` (a non-recursive clone of the
//! workspace mount would not contain the binds), the new mount API and
//! `open_by_handle_at` (a root program could open a protected file through
//! another mount). All of them fail with `EPERM`.
//!
//! This module contains `unsafe` code: the namespace and mount system calls
//! (`unshare`, `open_tree`, `move_mount`, `fsopen`, `fsmount`,
//! `mount_setattr`), the id-map writes and the probe's `fork`.

#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use sandgate_sandbox::mount::{
    self, bind_read_only, check, open_path, Fd, MOVE_MOUNT_F_EMPTY_PATH, MOVE_MOUNT_T_EMPTY_PATH,
    OPEN_TREE_CLONE,
};

use super::plan::{FloorMount, Protection, RunPlan};
use super::seccomp;
use sandgate_sandbox::bpf::{
    jump, stmt, AND_K, ARCH, AUDIT_ARCH_I386, AUDIT_ARCH_X86_64, JEQ_K, LD_W_ABS, NR, RET_ALLOW,
    RET_ERRNO, RET_K, X32_SYSCALL_BIT,
};

/// The environment variable that chooses the protection: `carve`, `mount`
/// or `auto` (the default).
pub const PROTECTION_ENV: &str = "SANDGATE_RUN_PROTECTION";

/// The protection the user asked for with [`PROTECTION_ENV`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requested {
    /// The mount layer where the machine allows it, else carving.
    Auto,
    /// The mount layer, or no start at all.
    Mount,
    /// Carving only.
    Carve,
}

/// A value of [`PROTECTION_ENV`] that means nothing.
#[derive(Debug, thiserror::Error)]
#[error("{PROTECTION_ENV}=`{0}` is not a protection; use `auto`, `mount` or `carve`")]
pub struct UnknownProtection(pub String);

impl Requested {
    /// Reads [`PROTECTION_ENV`] (unset or empty: [`Requested::Auto`]).
    pub fn from_env() -> Result<Requested, UnknownProtection> {
        match std::env::var_os(PROTECTION_ENV) {
            None => Ok(Requested::Auto),
            Some(raw) => Requested::parse(&raw.to_string_lossy()),
        }
    }

    /// Parses a value of [`PROTECTION_ENV`].
    pub fn parse(raw: &str) -> Result<Requested, UnknownProtection> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Requested::Auto),
            "mount" => Ok(Requested::Mount),
            "carve" => Ok(Requested::Carve),
            _ => Err(UnknownProtection(raw.to_string())),
        }
    }

    /// The protection to plan with first.
    pub fn first_choice(self) -> Protection {
        match self {
            Requested::Auto | Requested::Mount => {
                if supported() {
                    Protection::Mount
                } else {
                    Protection::Carve
                }
            }
            Requested::Carve => Protection::Carve,
        }
    }
}

/// Whether this build can make the mount layer at all (its deny filter is
/// written for x86-64).
pub fn supported() -> bool {
    cfg!(target_arch = "x86_64")
}

/// Everything the child needs, prepared before the fork (the child must not
/// allocate).
#[derive(Debug)]
pub struct Setup {
    /// Root: a plain mount namespace, no user namespace.
    as_root: bool,
    /// `"UID UID 1\n"` for `/proc/self/uid_map`.
    uid_map: Vec<u8>,
    /// `"GID GID 1\n"` for `/proc/self/gid_map`.
    gid_map: Vec<u8>,
    /// The paths to hold read-only.
    targets: Vec<CString>,
    /// The floor directories to hide behind an empty read-only mount.
    floors: Vec<FloorSetup>,
    /// The files to cover with a read-only bind of `/dev/null`.
    covered: Vec<CString>,
    /// The program's working directory, entered again once the binds are in
    /// place, so that a working directory inside a protected path goes
    /// through its bind.
    cwd: Option<CString>,
    /// The deny filter.
    filter: Vec<libc::sock_filter>,
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("path `{}` contains a NUL byte", path.display()),
        )
    })
}

/// One floor directory hidden from the program, prepared before the fork.
#[derive(Debug)]
struct FloorSetup {
    /// The directory.
    dir: CString,
    /// Its permission bits in octal, for the empty mount's `mode`.
    mode: CString,
    /// The names beneath it that stay readable (read-only binds of the
    /// originals on the empty mount).
    keep: Vec<CString>,
}

impl Setup {
    /// Prepares the binds of `targets`, and hides each of `floors` behind an
    /// empty read-only mount except the files it keeps, for a program that
    /// starts in `cwd`.
    pub fn new(
        targets: &[PathBuf],
        floors: &[FloorMount],
        covered: &[PathBuf],
        cwd: Option<&Path>,
    ) -> io::Result<Setup> {
        let floors = floors
            .iter()
            .map(|f| {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::symlink_metadata(&f.dir)
                    .map(|m| m.permissions().mode() & 0o7777)
                    .unwrap_or(0o700);
                Ok(FloorSetup {
                    dir: c_path(&f.dir)?,
                    mode: CString::new(format!("{mode:o}")).map_err(io::Error::other)?,
                    keep: f
                        .keep
                        .iter()
                        .map(|k| CString::new(k.as_bytes()).map_err(io::Error::other))
                        .collect::<io::Result<_>>()?,
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        // SAFETY: these calls cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        Ok(Setup {
            as_root: uid == 0,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            targets: targets
                .iter()
                .map(|t| c_path(t))
                .collect::<io::Result<_>>()?,
            floors,
            covered: covered
                .iter()
                .map(|c| c_path(c))
                .collect::<io::Result<_>>()?,
            cwd: cwd.map(c_path).transpose()?,
            filter: deny_filter(),
        })
    }
}

/// The setup for `plan` and the program `cmd`, or `None` when the plan
/// carves everything.
pub fn setup_for(plan: &RunPlan, cmd: &Command) -> io::Result<Option<Setup>> {
    if plan.protection != Protection::Mount {
        return Ok(None);
    }
    let here = std::env::current_dir()?;
    let cwd = match cmd.get_current_dir() {
        Some(dir) => here.join(dir),
        None => here,
    };
    Setup::new(
        &plan.mounted,
        &plan.floor_mounts,
        &plan.covered_files,
        Some(&cwd),
    )
    .map(Some)
}

/// Whether the mount layer of `plan` can be made on this machine, tried in
/// a throw-away child (for reports that start nothing).
pub fn probe_plan(plan: &RunPlan) -> io::Result<()> {
    if !supported() {
        return Err(io::Error::from_raw_os_error(libc::ENOSYS));
    }
    probe(&Setup::new(
        &plan.mounted,
        &plan.floor_mounts,
        &plan.covered_files,
        None,
    )?)
}

const FSOPEN_CLOEXEC: libc::c_uint = 1;
const FSMOUNT_CLOEXEC: libc::c_uint = 1;
const FSCONFIG_SET_STRING: libc::c_uint = 1;
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
const MOUNT_ATTR_NOSUID: libc::c_uint = 0x2;
const MOUNT_ATTR_NODEV: libc::c_uint = 0x4;
const MOUNT_ATTR_NOEXEC: libc::c_uint = 0x8;

/// Hides the floor directory `floor.dir` behind an empty, read-only tmpfs;
/// the files it keeps are read-only binds of the originals on it. No
/// allocation.
fn hide(floor: &FloorSetup) -> io::Result<()> {
    let empty = c"";
    let original = open_path(libc::AT_FDCWD, &floor.dir, libc::O_DIRECTORY, 0)?;
    // SAFETY: a NUL-terminated file system name; flags only.
    let fs =
        Fd(
            check(unsafe { libc::syscall(libc::SYS_fsopen, c"tmpfs".as_ptr(), FSOPEN_CLOEXEC) })?
                as RawFd,
        );
    for (key, value) in [(c"mode", floor.mode.as_c_str()), (c"size", c"64k")] {
        // SAFETY: an fs context descriptor and NUL-terminated key and value.
        check(unsafe {
            libc::syscall(
                libc::SYS_fsconfig,
                fs.0,
                FSCONFIG_SET_STRING,
                key.as_ptr(),
                value.as_ptr(),
                0,
            )
        })?;
    }
    // SAFETY: an fs context descriptor; null key and value for CMD_CREATE.
    check(unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            fs.0,
            FSCONFIG_CMD_CREATE,
            std::ptr::null::<libc::c_char>(),
            std::ptr::null::<libc::c_void>(),
            0,
        )
    })?;
    // SAFETY: an fs context descriptor and flags.
    let mnt = Fd(check(unsafe {
        libc::syscall(
            libc::SYS_fsmount,
            fs.0,
            FSMOUNT_CLOEXEC,
            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
        )
    })? as RawFd);
    // SAFETY: two open descriptors and empty NUL-terminated paths.
    check(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            mnt.0,
            empty.as_ptr(),
            original.0,
            empty.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
        )
    })?;
    for name in &floor.keep {
        // Looked up through the covered directory: the original file.
        let Ok(source) = open_path(original.0, name, 0, libc::RESOLVE_BENEATH) else {
            continue;
        };
        // SAFETY: stat is plain integers; all-zero is a valid value.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: an open descriptor and a live stat buffer.
        check(unsafe { libc::fstat(source.0, &mut st) }.into())?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            continue;
        }
        // SAFETY: the new mount's root, a NUL-terminated name; creates an
        // empty file to bind onto.
        let spot = check(
            unsafe {
                libc::openat(
                    mnt.0,
                    name.as_ptr(),
                    libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
                    0o600 as libc::c_uint,
                )
            }
            .into(),
        )?;
        drop(Fd(spot as RawFd));
        // SAFETY: an open descriptor, an empty NUL-terminated path, flags.
        let tree = Fd(check(unsafe {
            libc::syscall(
                libc::SYS_open_tree,
                source.0,
                empty.as_ptr(),
                OPEN_TREE_CLONE
                    | libc::O_CLOEXEC as libc::c_uint
                    | libc::AT_EMPTY_PATH as libc::c_uint,
            )
        })? as RawFd);
        mount::set_read_only(&tree, false)?;
        // SAFETY: open descriptors and NUL-terminated paths.
        check(unsafe {
            libc::syscall(
                libc::SYS_move_mount,
                tree.0,
                empty.as_ptr(),
                mnt.0,
                name.as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH,
            )
        })?;
    }
    mount::set_read_only(&mnt, false)
}

/// Covers the file `path` with a read-only bind of `/dev/null`: it reads
/// as empty and cannot be written. Opened without following a symbolic
/// link. No allocation.
fn cover(path: &std::ffi::CStr) -> io::Result<()> {
    let target = open_path(libc::AT_FDCWD, path, 0, 0)?;
    let null = open_path(libc::AT_FDCWD, c"/dev/null", 0, 0)?;
    let tree = mount::clone_tree(&null, false)?;
    mount::set_read_only(&tree, false)?;
    mount::move_onto(&tree, &target, c"")
}

/// Enters a new mount namespace (and, unless root, a user namespace) and
/// makes every target a read-only bind mount of itself. Runs in the forked
/// child: raw system calls on prepared values only, no allocation.
pub fn enter(setup: &Setup) -> io::Result<()> {
    mount::enter_namespaces(setup.as_root, &setup.uid_map, &setup.gid_map)?;
    for target in &setup.targets {
        bind_read_only(target)?;
    }
    for floor in &setup.floors {
        hide(floor)?;
    }
    for file in &setup.covered {
        cover(file)?;
    }
    if let Some(cwd) = &setup.cwd {
        // SAFETY: a NUL-terminated path that outlives the call.
        if unsafe { libc::chdir(cwd.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Installs the deny filter (the thread must have `no_new_privs`). Runs in
/// the forked child: no allocation.
pub fn install_filter(setup: &Setup) -> io::Result<()> {
    seccomp::load(&setup.filter, 0).map(drop)
}

/// Tries [`enter`] in a throw-away child, for reports that start nothing.
pub fn probe(setup: &Setup) -> io::Result<()> {
    // SAFETY: the child only runs `enter` (raw system calls on prepared
    // values, no allocation, no locks) and `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        let code = match enter(setup) {
            Ok(()) => 0,
            Err(e) => e.raw_os_error().unwrap_or(libc::EINVAL).clamp(1, 255),
        };
        // SAFETY: ends the child without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above; `status` is live.
    if unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else if libc::WIFEXITED(status) {
        Err(io::Error::from_raw_os_error(libc::WEXITSTATUS(status)))
    } else {
        Err(io::Error::other(
            "the mount namespace probe ended abnormally",
        ))
    }
}

/// Mount-changing system calls on x86-64 (and x32, whose numbers are these
/// plus [`X32_SYSCALL_BIT`]): `mount`, `umount2`, `pivot_root`,
/// `open_by_handle_at`, `open_tree`, `move_mount`, `fsopen`, `fsconfig`,
/// `fsmount`, `fspick`, `mount_setattr`, `open_tree_attr`.
const DENIED_X86_64: &[u32] = &[165, 166, 155, 304, 428, 429, 430, 431, 432, 433, 442, 467];
/// The same on i386 (`int 0x80` from a 64-bit program), with the old `umount`.
const DENIED_I386: &[u32] = &[21, 22, 52, 217, 342, 428, 429, 430, 431, 432, 433, 442, 467];

/// The deny filter: the mount-changing calls fail with `EPERM`, everything
/// else passes (the main filter decides it).
pub fn deny_filter() -> Vec<libc::sock_filter> {
    // Layout: ld arch; jeq x86_64 -> X; jeq i386 -> I; ret allow;
    // X: ld nr; and ~x32; jeq each -> deny; ret allow;
    // I: ld nr; jeq each -> deny; ret allow; deny: ret errno.
    let mut prog = vec![stmt(LD_W_ABS, ARCH)];
    let x_len = 2 + DENIED_X86_64.len() + 1;
    let i_len = 1 + DENIED_I386.len() + 1;
    // Offsets are small (the lists are short): they fit in a u8.
    let jump = |k: u32, jt: usize, jf: usize| jump(JEQ_K, k, jt, jf);
    prog.push(jump(AUDIT_ARCH_X86_64, 2, 0));
    prog.push(jump(AUDIT_ARCH_I386, 1 + x_len, 0));
    prog.push(stmt(RET_K, RET_ALLOW));
    let deny_at = prog.len() + x_len + i_len;
    prog.push(stmt(LD_W_ABS, NR));
    prog.push(stmt(AND_K, !X32_SYSCALL_BIT));
    for nr in DENIED_X86_64 {
        let here = prog.len();
        prog.push(jump(*nr, deny_at - here - 1, 0));
    }
    prog.push(stmt(RET_K, RET_ALLOW));
    prog.push(stmt(LD_W_ABS, NR));
    for nr in DENIED_I386 {
        let here = prog.len();
        prog.push(jump(*nr, deny_at - here - 1, 0));
    }
    prog.push(stmt(RET_K, RET_ALLOW));
    prog.push(stmt(RET_K, RET_ERRNO | libc::EPERM as u32));
    prog
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_values() {
        assert_eq!(Requested::parse("").unwrap(), Requested::Auto);
        assert_eq!(Requested::parse("Carve").unwrap(), Requested::Carve);
        assert_eq!(Requested::parse(" mount ").unwrap(), Requested::Mount);
        let err = Requested::parse("bind").unwrap_err().to_string();
        assert_eq!(
            err,
            "SANDGATE_RUN_PROTECTION=`bind` is not a protection; use `auto`, `mount` or `carve`"
        );
    }

    fn run(prog: &[libc::sock_filter], arch: u32, nr: u32) -> u32 {
        seccomp::verdict(prog, arch, i64::from(nr), [0; 6])
    }

    #[test]
    fn filter_denies_mount_calls_on_every_abi() {
        let prog = deny_filter();
        let eperm = RET_ERRNO | libc::EPERM as u32;
        for nr in DENIED_X86_64 {
            assert_eq!(run(&prog, AUDIT_ARCH_X86_64, *nr), eperm, "x86-64 {nr}");
            let x32 = nr | X32_SYSCALL_BIT;
            assert_eq!(run(&prog, AUDIT_ARCH_X86_64, x32), eperm, "x32 {nr}");
        }
        for nr in DENIED_I386 {
            assert_eq!(run(&prog, AUDIT_ARCH_I386, *nr), eperm, "i386 {nr}");
        }
        for nr in [0, 1, 2, 257, 59, 272] {
            assert_eq!(run(&prog, AUDIT_ARCH_X86_64, nr), RET_ALLOW, "x86-64 {nr}");
        }
        assert_eq!(run(&prog, AUDIT_ARCH_I386, 5), RET_ALLOW);
        assert_eq!(run(&prog, 0xdead, 165), RET_ALLOW);
    }
}
