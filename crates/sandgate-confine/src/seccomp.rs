//! The seccomp layer: a filter that hands to the supervisor
//! (`SECCOMP_RET_USER_NOTIF`) every write-class system call ([`NOTIFIED`]:
//! those that make, remove or rename names, write-opens, `truncate`, `bind`,
//! and `connect`), the metadata calls ([`METADATA`]) and the calls that
//! change what the supervisor caches about a caller ([`INVALIDATING`]); a
//! second filter that fails what the supervisor could not judge
//! ([`unjudged_filter`]); and the listener through which the supervisor
//! receives and answers them.
//!
//! Opens without a write flag, and every other system call, pass untouched:
//! reads and execution stay as fast as unconfined. So does an `openat`
//! marked by the preload library (see [`super::preload`]): the Landlock floor
//! alone decides it, and the library retries a refused one unmarked.
//!
//! The listener, the notifications and reading the caller's memory are
//! [`sandgate_sandbox::notify`]'s, shared with exec isolation.

use sandgate_sandbox::bpf::{
    arg_high, arg_low, jump, native_x86_64, stmt, JEQ_K, JSET_K, LD_W_ABS, RET_ALLOW, RET_K,
    RET_USER_NOTIF,
};

use super::preload::MARKER;

pub use sandgate_sandbox::notify::{install, load, Listener, Notif, Ready};
pub use sandgate_sandbox::supervisor::decode::{
    INODE_IOCTLS, SYS_REMOVEXATTRAT, SYS_SETXATTRAT, WRITE_OPEN_FLAGS,
};

/// System calls always handed to the supervisor (x86-64 numbers).
pub const NOTIFIED: &[libc::c_long] = &[
    libc::SYS_creat,
    libc::SYS_openat2,
    libc::SYS_mkdir,
    libc::SYS_mkdirat,
    libc::SYS_mknod,
    libc::SYS_mknodat,
    libc::SYS_unlink,
    libc::SYS_unlinkat,
    libc::SYS_rmdir,
    libc::SYS_rename,
    libc::SYS_renameat,
    libc::SYS_renameat2,
    libc::SYS_link,
    libc::SYS_linkat,
    libc::SYS_symlink,
    libc::SYS_symlinkat,
    libc::SYS_truncate,
    // A UNIX socket bound to a path makes a name; other binds continue.
    libc::SYS_bind,
    // Made by the supervisor, and kept only to the program's own UNIX
    // listeners and the listed sockets (see `supervisor::connect`).
    libc::SYS_connect,
    // Recorded by the exec tracking, then continued
    // (`sandgate_sandbox::supervisor::lineage`).
    libc::SYS_execve,
    libc::SYS_execveat,
];

/// System calls that change what the supervisor caches about a thread (see
/// `sandgate_sandbox::supervisor::callers`): handed to it so that it forgets
/// first.
pub const INVALIDATING: &[libc::c_long] = &[
    libc::SYS_chdir,
    libc::SYS_fchdir,
    libc::SYS_umask,
    libc::SYS_setuid,
    libc::SYS_setgid,
    libc::SYS_setreuid,
    libc::SYS_setregid,
    libc::SYS_setresuid,
    libc::SYS_setresgid,
    libc::SYS_setfsuid,
    libc::SYS_setfsgid,
    libc::SYS_setgroups,
    libc::SYS_capset,
];

/// The metadata system calls handed to the supervisor (x86-64 numbers),
/// which `sandgate_sandbox::supervisor::metadata` resolves.
pub const METADATA: &[libc::c_long] = &[
    libc::SYS_chmod,
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    libc::SYS_fchmodat2,
    libc::SYS_chown,
    libc::SYS_fchown,
    libc::SYS_lchown,
    libc::SYS_fchownat,
    libc::SYS_utime,
    libc::SYS_utimes,
    libc::SYS_futimesat,
    libc::SYS_utimensat,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    SYS_SETXATTRAT,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    SYS_REMOVEXATTRAT,
];

/// Every system call the filter hands to the supervisor unconditionally.
fn notified() -> impl Iterator<Item = libc::c_long> {
    NOTIFIED.iter().chain(METADATA).chain(INVALIDATING).copied()
}

/// The BPF program. Foreign architectures and the x32 ABI pass through
/// (the Landlock floor still holds for them, they are just never asked about).
/// An `openat` whose sixth argument is [`MARKER`] passes too, whatever its
/// flags: only the preload library's fast path sets it, and a program that
/// forges it gets the Landlock floor's decision without being asked.
/// An `ioctl` is handed over only for the [`INODE_IOCTLS`] requests.
pub fn program() -> Vec<libc::sock_filter> {
    let n = notified().count();
    let k = INODE_IOCTLS.len();
    // Layout (indices): 0 ld arch, 1 jeq, 2 ld nr, 3 jge x32, 4 jeq open,
    // 5 jeq openat, 6..6+n jeq notified, 6+n jeq ioctl, 7+n ret allow,
    // 8+n ld a1, 9+n jset, 10+n ld a5 low, 11+n jeq marker low,
    // 12+n ld a5 high, 13+n jeq marker high, 14+n ld a2, 15+n jset,
    // 16+n ld a1 (the request's 32 bits), 17+n.. jeq each request,
    // 17+n+k ret notif, 18+n+k ret allow.
    let allow_end = 18 + n + k;
    let notify = 17 + n + k;
    let load_a1 = 8 + n;
    let openat = 10 + n;
    let load_a2 = 14 + n;
    let ioctl = 16 + n;
    let to = |from: usize, target: usize| target - from - 1;
    let mut prog = native_x86_64(allow_end);
    prog.extend([
        jump(JEQ_K, libc::SYS_open as u32, to(4, load_a1), 0),
        jump(JEQ_K, libc::SYS_openat as u32, to(5, openat), 0),
    ]);
    for (i, nr) in notified().enumerate() {
        prog.push(jump(JEQ_K, nr as u32, to(6 + i, notify), 0));
    }
    prog.push(jump(JEQ_K, libc::SYS_ioctl as u32, to(6 + n, ioctl), 0));
    prog.push(stmt(RET_K, RET_ALLOW));
    prog.push(stmt(LD_W_ABS, arg_low(1)));
    prog.push(jump(
        JSET_K,
        WRITE_OPEN_FLAGS,
        to(9 + n, notify),
        to(9 + n, allow_end),
    ));
    prog.push(stmt(LD_W_ABS, arg_low(5)));
    prog.push(jump(JEQ_K, MARKER as u32, 0, to(11 + n, load_a2)));
    prog.push(stmt(LD_W_ABS, arg_high(5)));
    prog.push(jump(JEQ_K, (MARKER >> 32) as u32, to(13 + n, allow_end), 0));
    prog.push(stmt(LD_W_ABS, arg_low(2)));
    prog.push(jump(
        JSET_K,
        WRITE_OPEN_FLAGS,
        to(15 + n, notify),
        to(15 + n, allow_end),
    ));
    debug_assert_eq!(prog.len(), ioctl);
    prog.push(stmt(LD_W_ABS, arg_low(1)));
    for (i, request) in INODE_IOCTLS.iter().enumerate() {
        let here = ioctl + 1 + i;
        let miss = if i + 1 == k { to(here, allow_end) } else { 0 };
        prog.push(jump(JEQ_K, *request, to(here, notify), miss));
    }
    debug_assert_eq!(prog.len(), notify);
    prog.push(stmt(RET_K, RET_USER_NOTIF));
    prog.push(stmt(RET_K, RET_ALLOW));
    prog
}

/// The i386 system calls (`int 0x80`, from a 32-bit program or a 64-bit one)
/// that [`program`] would hand to the supervisor natively but cannot judge
/// in that ABI: the metadata changes (`chmod`, `lchown`, `fchmod`, `fchown`,
/// `chown`, `lchown32`, `fchown32`, `chown32`, `utime`, `utimes`,
/// `fchownat`, `futimesat`, `fchmodat`, `utimensat`, `utimensat_time64`,
/// the `*xattr` family, `fchmodat2`, `setxattrat`, `removexattrat`), which
/// Landlock does not see, and `socketcall` and `connect`, which could
/// reach a UNIX socket outside. io_uring's calls ([`IO_URING`]) fail in
/// this ABI too. Writes are left to Landlock.
const JUDGED_I386: &[u32] = &[
    15, 16, 94, 95, 182, 198, 207, 212, 30, 271, 298, 299, 306, 320, 412, 226, 227, 228, 235, 236,
    237, 452, 463, 466, 102, 362,
];

/// `io_uring_setup`, `io_uring_enter` and `io_uring_register` (the same
/// numbers on x86-64 and i386): a ring's operations (`connect`, `setxattr`,
/// `renameat`, …) never pass the supervisor.
const IO_URING: &[u32] = &[425, 426, 427];

/// `ioctl` on x86-64 and on i386.
const IOCTL_X86_64: u32 = 16;
const IOCTL_I386: u32 = 54;

/// The filter for the system calls the supervisor cannot judge, which fail
/// with `EPERM`: io_uring's ([`IO_URING`]), the [`JUDGED_I386`] calls, every
/// x32 call (a 64-bit ABI nobody ships programs for, whose numbers would
/// slip past [`program`]), and the `TIOCSTI` and `TIOCLINUX` ioctls in both
/// ABIs, which type into the terminal: what a program pushes there, the
/// shell reads once it ends, outside any confinement. Everything else
/// passes (the main filter decides it).
pub fn unjudged_filter() -> Vec<libc::sock_filter> {
    use sandgate_sandbox::bpf::{arg_low, AUDIT_ARCH_I386, AUDIT_ARCH_X86_64, JGE_K, RET_ERRNO};
    use sandgate_sandbox::bpf::{ARCH, NR, X32_SYSCALL_BIT};
    // Layout: 0 ld arch; 1 jeq x86_64 -> 4; 2 jeq i386 -> I; 3 ret allow;
    // 4 ld nr; 5 jge x32 -> deny; jeq ioctl -> T; jeq each io_uring call ->
    // deny; ret allow;
    // I: ld nr; jeq ioctl -> F; jeq each (and io_uring's) -> deny;
    // ret allow;
    // F (i386 only, where the supervisor is not asked): ld arg1; jeq each
    // of INODE_IOCTLS -> deny; then T;
    // T: ld arg1 (the request's 32 bits); jeq TIOCSTI -> deny;
    // jeq TIOCLINUX -> deny; ret allow; deny: ret errno.
    let native = 7 + IO_URING.len() + 1;
    let flags32 = native + 2 + JUDGED_I386.len() + IO_URING.len() + 1;
    let typing = flags32 + 1 + INODE_IOCTLS.len();
    let deny = typing + 4;
    let to = |from: usize, target: usize| target - from - 1;
    let mut prog = vec![
        stmt(LD_W_ABS, ARCH),
        jump(JEQ_K, AUDIT_ARCH_X86_64, to(1, 4), 0),
        jump(JEQ_K, AUDIT_ARCH_I386, to(2, native), 0),
        stmt(RET_K, RET_ALLOW),
        stmt(LD_W_ABS, NR),
        jump(JGE_K, X32_SYSCALL_BIT, to(5, deny), 0),
        jump(JEQ_K, IOCTL_X86_64, to(6, typing), 0),
    ];
    for nr in IO_URING {
        let here = prog.len();
        prog.push(jump(JEQ_K, *nr, to(here, deny), 0));
    }
    prog.push(stmt(RET_K, RET_ALLOW));
    debug_assert_eq!(prog.len(), native);
    prog.push(stmt(LD_W_ABS, NR));
    prog.push(jump(JEQ_K, IOCTL_I386, to(native + 1, flags32), 0));
    for nr in JUDGED_I386.iter().chain(IO_URING) {
        let here = prog.len();
        prog.push(jump(JEQ_K, *nr, to(here, deny), 0));
    }
    prog.push(stmt(RET_K, RET_ALLOW));
    debug_assert_eq!(prog.len(), flags32);
    prog.push(stmt(LD_W_ABS, arg_low(1)));
    for request in INODE_IOCTLS {
        let here = prog.len();
        prog.push(jump(JEQ_K, *request, to(here, deny), 0));
    }
    debug_assert_eq!(prog.len(), typing);
    prog.push(stmt(LD_W_ABS, arg_low(1)));
    prog.push(jump(JEQ_K, libc::TIOCSTI as u32, to(typing + 1, deny), 0));
    prog.push(jump(JEQ_K, libc::TIOCLINUX as u32, to(typing + 2, deny), 0));
    prog.push(stmt(RET_K, RET_ALLOW));
    debug_assert_eq!(prog.len(), deny);
    prog.push(stmt(RET_K, RET_ERRNO | libc::EPERM as u32));
    prog
}

/// The lineage filter, which keeps "a fresh child of the top process at its
/// first `exec`" meaning Claude Code's own spawn (assumptions 2 to 4 of
/// `sandgate_sandbox::supervisor::lineage`), in both ABIs: `clone` with
/// `CLONE_PARENT`, `ptrace` `PTRACE_ATTACH` and `PTRACE_SEIZE`,
/// `process_vm_writev` and `prctl(PR_SET_CHILD_SUBREAPER)` fail with
/// `EPERM`; `clone3` fails with `ENOSYS` (its flags are in memory, where no
/// filter reads them; the C library then falls back to `clone`). Everything
/// else passes.
pub fn lineage_filter() -> Vec<libc::sock_filter> {
    use sandgate_sandbox::bpf::{ARCH, AUDIT_ARCH_I386, AUDIT_ARCH_X86_64, NR, RET_ERRNO};
    use sandgate_sandbox::supervisor::lineage::{PR_SET_CHILD_SUBREAPER, PTRACE_SEIZE};
    // The calls, as (x86-64 number, i386 number), in this order: clone,
    // clone3, ptrace, process_vm_writev, prctl.
    const CALLS: [(u32, u32); 5] = [(56, 120), (435, 435), (101, 26), (311, 348), (157, 172)];
    // Layout: 0 ld arch; 1 jeq x86_64 -> NATIVE; 2 jeq i386 -> I386;
    // 3 ret allow; NATIVE: ld nr, 5 jeq, ret allow; I386: the same;
    // CLONE: ld a0, jset CLONE_PARENT -> deny, ret allow;
    // PTRACE: ld a0, jeq ATTACH -> deny, jeq SEIZE -> deny, ret allow;
    // PRCTL: ld a0, jeq SUBREAPER -> deny, ret allow; DENY; ENOSYS.
    let native = 4;
    let i386 = native + 7;
    let clone = i386 + 7;
    let ptrace = clone + 3;
    let prctl = ptrace + 4;
    let deny = prctl + 3;
    let enosys = deny + 1;
    let to = |from: usize, target: usize| target - from - 1;
    let mut prog = vec![
        stmt(LD_W_ABS, ARCH),
        jump(JEQ_K, AUDIT_ARCH_X86_64, to(1, native), 0),
        jump(JEQ_K, AUDIT_ARCH_I386, to(2, i386), 0),
        stmt(RET_K, RET_ALLOW),
    ];
    for abi in [0, 1] {
        prog.push(stmt(LD_W_ABS, NR));
        let targets = [clone, enosys, ptrace, deny, prctl];
        for (call, target) in CALLS.iter().zip(targets) {
            let nr = if abi == 0 { call.0 } else { call.1 };
            let here = prog.len();
            prog.push(jump(JEQ_K, nr, to(here, target), 0));
        }
        prog.push(stmt(RET_K, RET_ALLOW));
    }
    debug_assert_eq!(prog.len(), clone);
    prog.push(stmt(LD_W_ABS, arg_low(0)));
    prog.push(jump(
        JSET_K,
        libc::CLONE_PARENT as u32,
        to(clone + 1, deny),
        0,
    ));
    prog.push(stmt(RET_K, RET_ALLOW));
    debug_assert_eq!(prog.len(), ptrace);
    prog.push(stmt(LD_W_ABS, arg_low(0)));
    prog.push(jump(JEQ_K, libc::PTRACE_ATTACH, to(ptrace + 1, deny), 0));
    prog.push(jump(JEQ_K, PTRACE_SEIZE, to(ptrace + 2, deny), 0));
    prog.push(stmt(RET_K, RET_ALLOW));
    debug_assert_eq!(prog.len(), prctl);
    prog.push(stmt(LD_W_ABS, arg_low(0)));
    prog.push(jump(JEQ_K, PR_SET_CHILD_SUBREAPER, to(prctl + 1, deny), 0));
    prog.push(stmt(RET_K, RET_ALLOW));
    debug_assert_eq!(prog.len(), deny);
    prog.push(stmt(RET_K, RET_ERRNO | libc::EPERM as u32));
    prog.push(stmt(RET_K, RET_ERRNO | libc::ENOSYS as u32));
    prog
}

/// Runs `prog` on one system call as the kernel would (the instructions these
/// filters use), for the tests of this module and of the mount layer's filter.
#[cfg(test)]
pub(super) fn verdict(prog: &[libc::sock_filter], arch: u32, nr: i64, args: [u64; 6]) -> u32 {
    use sandgate_sandbox::bpf::{AND_K, JGE_K};
    let mut data = Vec::with_capacity(64);
    data.extend_from_slice(&(nr as i32).to_le_bytes());
    data.extend_from_slice(&arch.to_le_bytes());
    data.extend_from_slice(&0u64.to_le_bytes()); // instruction pointer
    for arg in args {
        data.extend_from_slice(&arg.to_le_bytes());
    }
    let word = |at: u32| {
        let at = at as usize;
        u32::from_le_bytes(data[at..at + 4].try_into().unwrap())
    };
    let (mut pc, mut acc) = (0usize, 0u32);
    loop {
        let ins = prog[pc];
        let taken = match ins.code {
            LD_W_ABS => {
                acc = word(ins.k);
                pc += 1;
                continue;
            }
            RET_K => return ins.k,
            JEQ_K => acc == ins.k,
            JGE_K => acc >= ins.k,
            JSET_K => acc & ins.k != 0,
            AND_K => {
                acc &= ins.k;
                pc += 1;
                continue;
            }
            other => panic!("unexpected instruction {other:#x}"),
        };
        pc += 1 + usize::from(if taken { ins.jt } else { ins.jf });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandgate_sandbox::bpf::{AUDIT_ARCH_X86_64, JGE_K};

    #[test]
    fn program_jumps_stay_inside() {
        let prog = program();
        // Jump offsets are 8 bits wide.
        assert!(prog.len() < 256);
        for (i, ins) in prog.iter().enumerate() {
            if ins.code == JEQ_K || ins.code == JGE_K || ins.code == JSET_K {
                assert!(i + 1 + (ins.jt as usize) < prog.len());
                assert!(i + 1 + (ins.jf as usize) < prog.len());
            }
        }
        assert_eq!(prog.last().map(|i| i.k), Some(RET_ALLOW));
    }

    /// Runs the filter on one system call, as the kernel's BPF interpreter
    /// does for the instructions the filter uses.

    #[test]
    fn marked_openat_passes_and_everything_else_is_as_before() {
        let prog = program();
        let x86 = AUDIT_ARCH_X86_64;
        let (lo, hi) = (MARKER & 0xffff_ffff, MARKER & !0xffff_ffff);
        let at = libc::AT_FDCWD as u64;
        let wr = (libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC) as u64;
        let rd = libc::O_RDONLY as u64;
        let openat = libc::SYS_openat;
        let table: &[(&str, u32, i64, [u64; 6], u32)] = &[
            (
                "marked write-open",
                x86,
                openat,
                [at, 0, wr, 0o666, 0, MARKER],
                RET_ALLOW,
            ),
            (
                "unmarked write-open",
                x86,
                openat,
                [at, 0, wr, 0o666, 0, 0],
                RET_USER_NOTIF,
            ),
            (
                "low half only",
                x86,
                openat,
                [at, 0, wr, 0, 0, lo],
                RET_USER_NOTIF,
            ),
            (
                "high half only",
                x86,
                openat,
                [at, 0, wr, 0, 0, hi],
                RET_USER_NOTIF,
            ),
            (
                "marker in arg 4",
                x86,
                openat,
                [at, 0, wr, 0, MARKER, 0],
                RET_USER_NOTIF,
            ),
            (
                "unmarked read-open",
                x86,
                openat,
                [at, 0, rd, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "marked read-open",
                x86,
                openat,
                [at, 0, rd, 0, 0, MARKER],
                RET_ALLOW,
            ),
            (
                "open for write",
                x86,
                libc::SYS_open,
                [0, wr, 0, 0, 0, 0],
                RET_USER_NOTIF,
            ),
            (
                "marked open (no fast path)",
                x86,
                libc::SYS_open,
                [0, wr, 0, 0, 0, MARKER],
                RET_USER_NOTIF,
            ),
            (
                "open for read",
                x86,
                libc::SYS_open,
                [0, rd, 0, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "marked openat2",
                x86,
                libc::SYS_openat2,
                [at, 0, 0, 0, 0, MARKER],
                RET_USER_NOTIF,
            ),
            (
                "marked mkdir",
                x86,
                libc::SYS_mkdir,
                [0, 0, 0, 0, 0, MARKER],
                RET_USER_NOTIF,
            ),
            ("unlinkat", x86, libc::SYS_unlinkat, [0; 6], RET_USER_NOTIF),
            ("chdir", x86, libc::SYS_chdir, [0; 6], RET_USER_NOTIF),
            ("read", x86, libc::SYS_read, [0; 6], RET_ALLOW),
            (
                "FS_IOC_SETFLAGS",
                x86,
                libc::SYS_ioctl,
                [3, 0x4008_6602, 0, 0, 0, 0],
                RET_USER_NOTIF,
            ),
            (
                "FS_IOC_FSSETXATTR, high bits set",
                x86,
                libc::SYS_ioctl,
                [3, 0xffff_ffff_401c_5820, 0, 0, 0, 0],
                RET_USER_NOTIF,
            ),
            (
                "FS_IOC_SET_ENCRYPTION_POLICY",
                x86,
                libc::SYS_ioctl,
                [3, 0x800c_6613, 0, 0, 0, 0],
                RET_USER_NOTIF,
            ),
            (
                "FS_IOC_GETFLAGS",
                x86,
                libc::SYS_ioctl,
                [3, 0x8008_6601, 0, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "TIOCGWINSZ",
                x86,
                libc::SYS_ioctl,
                [1, libc::TIOCGWINSZ, 0, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "x32 openat",
                x86,
                openat | 0x4000_0000,
                [at, 0, wr, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "foreign arch",
                0x4000_0003,
                5,
                [0, wr, 0, 0, 0, 0],
                RET_ALLOW,
            ),
        ];
        for (name, arch, nr, args, want) in table {
            assert_eq!(verdict(&prog, *arch, *nr, *args), *want, "{name}");
        }
    }

    #[test]
    fn the_lineage_filter_refuses_what_would_forge_a_spawn_of_the_agent() {
        use sandgate_sandbox::bpf::{AUDIT_ARCH_I386, RET_ERRNO};
        let prog = lineage_filter();
        let eperm = RET_ERRNO | libc::EPERM as u32;
        let enosys = RET_ERRNO | libc::ENOSYS as u32;
        let parent = libc::CLONE_PARENT as u64;
        let fork = libc::SIGCHLD as u64;
        let thread = (libc::CLONE_VM | libc::CLONE_THREAD | libc::CLONE_SIGHAND) as u64;
        let attach = libc::PTRACE_ATTACH as u64;
        let table: &[(&str, u32, i64, [u64; 6], u32)] = &[
            (
                "clone(CLONE_PARENT)",
                AUDIT_ARCH_X86_64,
                libc::SYS_clone,
                [parent | fork, 0, 0, 0, 0, 0],
                eperm,
            ),
            (
                "fork by clone",
                AUDIT_ARCH_X86_64,
                libc::SYS_clone,
                [fork, 0, 0, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "a thread",
                AUDIT_ARCH_X86_64,
                libc::SYS_clone,
                [thread, 0, 0, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "clone3",
                AUDIT_ARCH_X86_64,
                libc::SYS_clone3,
                [0; 6],
                enosys,
            ),
            (
                "PTRACE_ATTACH",
                AUDIT_ARCH_X86_64,
                libc::SYS_ptrace,
                [attach, 1, 0, 0, 0, 0],
                eperm,
            ),
            (
                "PTRACE_SEIZE",
                AUDIT_ARCH_X86_64,
                libc::SYS_ptrace,
                [0x4206, 1, 0, 0, 0, 0],
                eperm,
            ),
            (
                "PTRACE_TRACEME",
                AUDIT_ARCH_X86_64,
                libc::SYS_ptrace,
                [0, 0, 0, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "PTRACE_PEEKDATA",
                AUDIT_ARCH_X86_64,
                libc::SYS_ptrace,
                [2, 1, 0, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "process_vm_writev",
                AUDIT_ARCH_X86_64,
                libc::SYS_process_vm_writev,
                [1, 0, 0, 0, 0, 0],
                eperm,
            ),
            (
                "process_vm_readv",
                AUDIT_ARCH_X86_64,
                libc::SYS_process_vm_readv,
                [1, 0, 0, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "PR_SET_CHILD_SUBREAPER",
                AUDIT_ARCH_X86_64,
                libc::SYS_prctl,
                [36, 1, 0, 0, 0, 0],
                eperm,
            ),
            (
                "PR_SET_NAME",
                AUDIT_ARCH_X86_64,
                libc::SYS_prctl,
                [15, 0, 0, 0, 0, 0],
                RET_ALLOW,
            ),
            (
                "execve",
                AUDIT_ARCH_X86_64,
                libc::SYS_execve,
                [0; 6],
                RET_ALLOW,
            ),
            (
                "i386 clone(CLONE_PARENT)",
                AUDIT_ARCH_I386,
                120,
                [parent | fork, 0, 0, 0, 0, 0],
                eperm,
            ),
            (
                "i386 clone",
                AUDIT_ARCH_I386,
                120,
                [fork, 0, 0, 0, 0, 0],
                RET_ALLOW,
            ),
            ("i386 clone3", AUDIT_ARCH_I386, 435, [0; 6], enosys),
            (
                "i386 PTRACE_ATTACH",
                AUDIT_ARCH_I386,
                26,
                [attach, 1, 0, 0, 0, 0],
                eperm,
            ),
            (
                "i386 process_vm_writev",
                AUDIT_ARCH_I386,
                348,
                [1, 0, 0, 0, 0, 0],
                eperm,
            ),
            (
                "i386 PR_SET_CHILD_SUBREAPER",
                AUDIT_ARCH_I386,
                172,
                [36, 1, 0, 0, 0, 0],
                eperm,
            ),
            ("i386 write", AUDIT_ARCH_I386, 4, [0; 6], RET_ALLOW),
            (
                "foreign arch",
                0xc000_00b7,
                56,
                [parent, 0, 0, 0, 0, 0],
                RET_ALLOW,
            ),
        ];
        for (name, arch, nr, args, want) in table {
            assert_eq!(verdict(&prog, *arch, *nr, *args), *want, "{name}");
        }
    }

    #[test]
    fn the_unjudged_filter_fails_what_the_supervisor_cannot_judge() {
        use sandgate_sandbox::bpf::{AUDIT_ARCH_I386, RET_ERRNO, X32_SYSCALL_BIT};
        let prog = unjudged_filter();
        let eperm = RET_ERRNO | libc::EPERM as u32;
        for nr in JUDGED_I386.iter().chain(IO_URING) {
            assert_eq!(
                verdict(&prog, AUDIT_ARCH_I386, i64::from(*nr), [0; 6]),
                eperm,
                "{nr}"
            );
        }
        // i386 `open`, `write`, `execve` pass: Landlock holds the writes.
        for nr in [5, 4, 11] {
            assert_eq!(verdict(&prog, AUDIT_ARCH_I386, nr, [0; 6]), RET_ALLOW);
        }
        for nr in [
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ] {
            assert_eq!(verdict(&prog, AUDIT_ARCH_X86_64, nr, [0; 6]), eperm);
        }
        // Typing into the terminal, in both ABIs; other ioctls pass.
        for (arch, nr) in [
            (AUDIT_ARCH_X86_64, libc::SYS_ioctl),
            (AUDIT_ARCH_I386, i64::from(IOCTL_I386)),
        ] {
            for request in [libc::TIOCSTI, libc::TIOCLINUX] {
                let args = [0, request, 0, 0, 0, 0];
                assert_eq!(verdict(&prog, arch, nr, args), eperm, "{request:#x}");
            }
            let args = [0, libc::TIOCGWINSZ, 0, 0, 0, 0];
            assert_eq!(verdict(&prog, arch, nr, args), RET_ALLOW);
        }
        // Inode flags: refused in the i386 ABI, left to the supervisor natively.
        for request in INODE_IOCTLS {
            let args = [0, u64::from(*request), 0, 0, 0, 0];
            let i386 = verdict(&prog, AUDIT_ARCH_I386, i64::from(IOCTL_I386), args);
            assert_eq!(i386, eperm, "{request:#x}");
            let native = verdict(&prog, AUDIT_ARCH_X86_64, libc::SYS_ioctl, args);
            assert_eq!(native, RET_ALLOW, "{request:#x}");
        }
        for nr in [libc::SYS_connect, libc::SYS_chmod, libc::SYS_write] {
            assert_eq!(verdict(&prog, AUDIT_ARCH_X86_64, nr, [0; 6]), RET_ALLOW);
            let x32 = nr | i64::from(X32_SYSCALL_BIT);
            assert_eq!(verdict(&prog, AUDIT_ARCH_X86_64, x32, [0; 6]), eperm);
        }
    }
}
