//! Seccomp: the network part of the plan, and two small hardenings.
//!
//! With the network off the filter fails `socket(2)` and `socketpair(2)` for
//! every family other than `AF_UNIX`, and `io_uring_setup(2)` (io_uring can
//! open sockets without the `socket` system call). Always, it fails the
//! `TIOCSTI` and `TIOCLINUX` ioctls, which could push keystrokes into the
//! terminal outside the sandbox. Denied calls fail with `EACCES`. In front
//! of the compiled filter, `x32_guard` fails every x32 system call (whose
//! numbers the rules would not see) and kills a foreign architecture.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// A filter that could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SeccompError {
    /// The filter is not available for this CPU architecture.
    #[error("seccomp filters are not supported on `{0}`")]
    Architecture(String),
    /// The filter could not be compiled.
    #[error("cannot build the seccomp filter: {0}")]
    Build(#[from] seccompiler::BackendError),
}

/// What the filter denies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilterSpec {
    /// Deny sockets other than `AF_UNIX` (and io_uring).
    pub deny_network: bool,
}

/// Compiles the filter to classic BPF for the running architecture.
pub fn program(spec: FilterSpec) -> Result<Vec<libc::sock_filter>, SeccompError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|_| SeccompError::Architecture(std::env::consts::ARCH.to_string()))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    if spec.deny_network {
        let not_unix = || {
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::AF_UNIX as u64,
            )
            .and_then(|c| SeccompRule::new(vec![c]))
        };
        rules.insert(libc::SYS_socket, vec![not_unix()?]);
        rules.insert(libc::SYS_socketpair, vec![not_unix()?]);
        // An empty rule list matches every call.
        rules.insert(libc::SYS_io_uring_setup, vec![]);
    }
    let ioctl = |request: u64| {
        SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)
            .and_then(|c| SeccompRule::new(vec![c]))
    };
    // The ioctl request type is `c_ulong` on some libc targets and `c_int` on others.
    #[allow(clippy::unnecessary_cast)]
    rules.insert(
        libc::SYS_ioctl,
        vec![ioctl(libc::TIOCSTI as u64)?, ioctl(libc::TIOCLINUX as u64)?],
    );
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )?;
    let bpf: BpfProgram = filter.try_into()?;
    let mut program = x32_guard();
    program.extend(bpf.into_iter().map(|f| libc::sock_filter {
        code: f.code,
        jt: f.jt,
        jf: f.jf,
        k: f.k,
    }));
    Ok(program)
}

/// On x86-64, x32 system calls carry the x86-64 audit arch but numbers with
/// bit 30 set, so rules keyed on plain numbers would not see an x32
/// `socket`. This prefix fails every x32 call (and kills a foreign arch, as
/// the compiled filter does too). Jumps in BPF are relative, so prefixing
/// leaves the compiled program intact.
pub(crate) fn x32_guard() -> Vec<libc::sock_filter> {
    if !cfg!(target_arch = "x86_64") {
        return Vec::new();
    }
    use crate::bpf::{
        ARCH, AUDIT_ARCH_X86_64, JEQ_K, JGE_K, LD_W_ABS, NR, RET_ERRNO, RET_K, RET_KILL_PROCESS,
        X32_SYSCALL_BIT,
    };
    let op = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
    vec![
        op(LD_W_ABS, 0, 0, ARCH),
        op(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        op(RET_K, 0, 0, RET_KILL_PROCESS),
        op(LD_W_ABS, 0, 0, NR),
        op(JGE_K, 0, 1, X32_SYSCALL_BIT),
        op(RET_K, 0, 0, RET_ERRNO | libc::EACCES as u32),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_network_rules_make_the_filter_longer() {
        let closed = program(FilterSpec { deny_network: true }).unwrap();
        let open = program(FilterSpec {
            deny_network: false,
        })
        .unwrap();
        assert!(!open.is_empty());
        assert!(closed.len() > open.len());
    }

    #[test]
    fn x32_calls_are_cut_off_before_the_rules() {
        let program = program(FilterSpec { deny_network: true }).unwrap();
        if cfg!(target_arch = "x86_64") {
            assert_eq!(program[4].k, 0x4000_0000);
            assert_eq!(program[5].k, libc::SECCOMP_RET_ERRNO | libc::EACCES as u32);
        }
    }
}
