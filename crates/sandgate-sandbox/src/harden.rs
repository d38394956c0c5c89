//! The hardening filter: system calls an isolated command never needs and
//! that could reach past the sandbox.
//!
//! Every isolated mode that runs a seccomp filter adds this one. It fails
//! with `EPERM`:
//!
//! - `ptrace`, `process_vm_readv`, `process_vm_writev` (another process's memory);
//! - the mount family: `mount`, `umount2`, `pivot_root`, `move_mount`,
//!   `open_tree`, `open_tree_attr`, `fsopen`, `fsconfig`, `fsmount`,
//!   `fspick`, `mount_setattr` (a remount could make a read-only tree
//!   writable again, an unmount could uncover a hidden one);
//! - `name_to_handle_at` and `open_by_handle_at` (a file handle opens a file
//!   without a path, past every path rule);
//! - `io_uring_setup`, `io_uring_enter`, `io_uring_register` (system calls
//!   no seccomp filter sees);
//! - `unshare` and `clone` asking for a new namespace, and every `setns`;
//! - `keyctl`, `add_key`, `request_key` (the kernel keyrings, shared with the
//!   session outside);
//! - `bpf`, `perf_event_open`, `userfaultfd`;
//! - `socket(AF_UNIX, …)` unless UNIX sockets are allowed: with no socket,
//!   nothing can `connect()` to a listener by path (stream and seqpacket
//!   socket pairs still work);
//! - `socketpair(AF_UNIX, SOCK_DGRAM, …)` (and `socket(AF_UNIX, SOCK_DGRAM, …)`
//!   when UNIX sockets are allowed), and the same with `SOCK_RAW`, which
//!   makes a datagram socket too: a datagram socket sends to any listener
//!   by path with `sendto`, connected or not, so a datagram pair would reach
//!   every datagram listener on the machine;
//! - the `TIOCSTI` and `TIOCLINUX` ioctls (typing into the terminal outside).
//!
//! A second, tiny filter fails `clone3` with `ENOSYS`: its flags are in
//! memory, where no filter can read them, and the C library falls back to
//! `clone`, whose flags the first filter checks.
//!
//! x32 system calls fail and a foreign architecture is killed, as in
//! [`crate::seccomp`]. The filters are built with `seccompiler`.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::seccomp::SeccompError;

/// `open_tree_attr` (Linux 6.15), not yet in every `libc` release; the same
/// number on every architecture that has the unified system call table.
const SYS_OPEN_TREE_ATTR: i64 = 467;

/// Every `CLONE_NEW*` flag: a `clone` or `unshare` asking for any of them is refused.
const NAMESPACE_FLAGS: [u64; 8] = [
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWCGROUP as u64,
    0x80, // CLONE_NEWTIME
];

/// The bits of the `socket` type argument that hold the type (the kernel's `SOCK_TYPE_MASK`).
const SOCK_TYPE_MASK: u64 = 0xf;

/// What the hardening filter lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HardenSpec {
    /// Whether `socket(AF_UNIX, …)` is allowed.
    pub unix_sockets: bool,
}

/// The system calls the hardening filter refuses outright, for `--dry-run`
/// and the tests.
pub const REFUSED: &[&str] = &[
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "move_mount",
    "open_tree",
    "open_tree_attr",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "name_to_handle_at",
    "open_by_handle_at",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "setns",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
];

const REFUSED_NUMBERS: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    SYS_OPEN_TREE_ATTR,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_name_to_handle_at,
    libc::SYS_open_by_handle_at,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_setns,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
];

fn arch() -> Result<TargetArch, SeccompError> {
    TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|_| SeccompError::Architecture(std::env::consts::ARCH.to_string()))
}

fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
) -> Result<Vec<libc::sock_filter>, SeccompError> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch()?,
    )?;
    let bpf: BpfProgram = filter.try_into()?;
    let mut program = crate::seccomp::x32_guard();
    program.extend(bpf.into_iter().map(|f| libc::sock_filter {
        code: f.code,
        jt: f.jt,
        jf: f.jf,
        k: f.k,
    }));
    Ok(program)
}

fn arg_rule(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompRule, SeccompError> {
    let condition = SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value)?;
    Ok(SeccompRule::new(vec![condition])?)
}

/// The two filters, in the order they are installed: the main one
/// (`EPERM`), then the `clone3` one (`ENOSYS`).
pub fn programs(spec: HardenSpec) -> Result<[Vec<libc::sock_filter>; 2], SeccompError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in REFUSED_NUMBERS {
        // An empty rule list matches every call.
        rules.insert(*nr, Vec::new());
    }
    let namespaced = |arg: u8| -> Result<Vec<SeccompRule>, SeccompError> {
        NAMESPACE_FLAGS
            .iter()
            .map(|flag| arg_rule(arg, SeccompCmpOp::MaskedEq(*flag), *flag))
            .collect()
    };
    rules.insert(libc::SYS_unshare, namespaced(0)?);
    rules.insert(libc::SYS_clone, namespaced(0)?);
    let unix = || {
        SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::AF_UNIX as u64,
        )
    };
    // The type argument carries SOCK_NONBLOCK and SOCK_CLOEXEC above the
    // type. An AF_UNIX `SOCK_RAW` socket is a datagram socket too.
    let of_type = |kind: i32| {
        SeccompCondition::new(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK),
            kind as u64,
        )
    };
    let unix_datagram = || -> Result<Vec<SeccompRule>, SeccompError> {
        [libc::SOCK_DGRAM, libc::SOCK_RAW]
            .into_iter()
            .map(|kind| Ok(SeccompRule::new(vec![unix()?, of_type(kind)?])?))
            .collect()
    };
    if spec.unix_sockets {
        rules.insert(libc::SYS_socket, unix_datagram()?);
    } else {
        rules.insert(libc::SYS_socket, vec![SeccompRule::new(vec![unix()?])?]);
    }
    rules.insert(libc::SYS_socketpair, unix_datagram()?);
    let ioctl = |request: u64| -> Result<SeccompRule, SeccompError> {
        let c = SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)?;
        Ok(SeccompRule::new(vec![c])?)
    };
    // The ioctl request type is `c_ulong` on some libc targets and `c_int` on others.
    #[allow(clippy::unnecessary_cast)]
    rules.insert(
        libc::SYS_ioctl,
        vec![ioctl(libc::TIOCSTI as u64)?, ioctl(libc::TIOCLINUX as u64)?],
    );
    let main = compile(rules, libc::EPERM)?;
    let clone3 = compile(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        libc::ENOSYS,
    )?;
    Ok([main, clone3])
}

/// A filter program as the bytes `bwrap --add-seccomp-fd` reads.
pub fn to_bytes(program: &[libc::sock_filter]) -> Vec<u8> {
    let mut out = Vec::with_capacity(program.len() * 8);
    for ins in program {
        out.extend_from_slice(&ins.code.to_ne_bytes());
        out.push(ins.jt);
        out.push(ins.jf);
        out.extend_from_slice(&ins.k.to_ne_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_agree() {
        assert_eq!(REFUSED.len(), REFUSED_NUMBERS.len());
    }

    #[test]
    fn unix_sockets_change_the_filter() {
        let closed = programs(HardenSpec {
            unix_sockets: false,
        })
        .unwrap();
        let open = programs(HardenSpec { unix_sockets: true }).unwrap();
        assert_ne!(closed[0].len(), open[0].len());
        assert_eq!(to_bytes(&closed[1]).len(), closed[1].len() * 8);
    }
}
