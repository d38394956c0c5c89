//! Classic BPF for seccomp filters written by hand: the opcodes, the return
//! values, the architecture constants and the offsets into `struct
//! seccomp_data`, spelled here once, and the two instruction builders.
//!
//! seccompiler compiles exec isolation's deny filters (the `seccomp` and
//! `harden` modules, which use this one): its actions suffice there. By hand
//! are only the programs it cannot express: the supervisors' filters (exec
//! isolation's in `supervise`, `sandgate run`'s), which return
//! `SECCOMP_RET_USER_NOTIF` (an action seccompiler does not have), the mount
//! layer's filter, which answers i386 calls instead of killing a foreign
//! architecture as a compiled filter does, and the x32 guard put in front of
//! seccompiler's programs.

/// `BPF_LD | BPF_W | BPF_ABS`: load the 32-bit word at offset `k`.
pub const LD_W_ABS: u16 = 0x20;
/// `BPF_JMP | BPF_JEQ | BPF_K`: jump if the accumulator equals `k`.
pub const JEQ_K: u16 = 0x15;
/// `BPF_JMP | BPF_JGE | BPF_K`: jump if the accumulator is at least `k`.
pub const JGE_K: u16 = 0x35;
/// `BPF_JMP | BPF_JSET | BPF_K`: jump if the accumulator has a bit of `k`.
pub const JSET_K: u16 = 0x45;
/// `BPF_RET | BPF_K`: return `k`.
pub const RET_K: u16 = 0x06;
/// `BPF_ALU | BPF_AND | BPF_K`: the accumulator and `k`.
pub const AND_K: u16 = 0x54;

/// `SECCOMP_RET_ALLOW`.
pub const RET_ALLOW: u32 = 0x7fff_0000;
/// `SECCOMP_RET_USER_NOTIF`: hand the call to the listener.
pub const RET_USER_NOTIF: u32 = 0x7fc0_0000;
/// `SECCOMP_RET_ERRNO`, to be or-ed with the error number.
pub const RET_ERRNO: u32 = 0x0005_0000;
/// `SECCOMP_RET_KILL_PROCESS`.
pub const RET_KILL_PROCESS: u32 = 0x8000_0000;

/// `AUDIT_ARCH_X86_64`.
pub const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
/// `AUDIT_ARCH_I386` (`int 0x80` from a 64-bit program).
pub const AUDIT_ARCH_I386: u32 = 0x4000_0003;
/// `__X32_SYSCALL_BIT`: x32 calls carry the x86-64 arch and this bit.
pub const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Offset of `nr` in `struct seccomp_data`.
pub const NR: u32 = 0;
/// Offset of `arch` in `struct seccomp_data`.
pub const ARCH: u32 = 4;

/// Offset of argument `n`'s low 32 bits in `struct seccomp_data`.
pub const fn arg_low(n: u32) -> u32 {
    16 + 8 * n
}

/// Offset of argument `n`'s high 32 bits (x86-64 is little-endian).
pub const fn arg_high(n: u32) -> u32 {
    arg_low(n) + 4
}

/// An instruction that does not jump.
pub fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// A conditional jump: `jt` instructions ahead when taken, `jf` when not.
/// Offsets are 8 bits wide; a program keeps them in range (its tests check),
/// and one that does not saturates rather than wraps.
pub fn jump(code: u16, k: u32, jt: usize, jf: usize) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: u8::try_from(jt).unwrap_or(u8::MAX),
        jf: u8::try_from(jf).unwrap_or(u8::MAX),
        k,
    }
}

/// The first four instructions of a filter that judges native x86-64 calls
/// only: a foreign architecture or an x32 call jumps to instruction `pass`
/// (an index in the program, after these four), and the rest go on with the
/// call number in the accumulator.
pub fn native_x86_64(pass: usize) -> Vec<libc::sock_filter> {
    let ahead = |from: usize| pass.saturating_sub(from + 1);
    vec![
        stmt(LD_W_ABS, ARCH),
        jump(JEQ_K, AUDIT_ARCH_X86_64, 0, ahead(1)),
        stmt(LD_W_ABS, NR),
        jump(JGE_K, X32_SYSCALL_BIT, ahead(3), 0),
    ]
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;

    #[test]
    fn the_constants_are_the_kernels() {
        let op = |v: u32| u16::try_from(v).unwrap();
        assert_eq!(LD_W_ABS, op(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS));
        assert_eq!(JEQ_K, op(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K));
        assert_eq!(JGE_K, op(libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K));
        assert_eq!(JSET_K, op(libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K));
        assert_eq!(RET_K, op(libc::BPF_RET | libc::BPF_K));
        assert_eq!(AND_K, op(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K));
        assert_eq!(RET_ALLOW, libc::SECCOMP_RET_ALLOW);
        assert_eq!(RET_USER_NOTIF, libc::SECCOMP_RET_USER_NOTIF);
        assert_eq!(RET_ERRNO, libc::SECCOMP_RET_ERRNO);
        assert_eq!(RET_KILL_PROCESS, libc::SECCOMP_RET_KILL_PROCESS);
        assert_eq!(arg_low(0), 16);
        assert_eq!(arg_high(5), 60);
    }

    #[test]
    fn the_native_prologue_sends_foreign_calls_to_the_given_instruction() {
        let p = native_x86_64(10);
        assert_eq!((p[0].code, p[0].k), (LD_W_ABS, ARCH));
        // Instruction 1 jumps to 10 when the arch is not x86-64: 1 + 1 + 8.
        assert_eq!(
            (p[1].code, p[1].k, p[1].jt, p[1].jf),
            (JEQ_K, AUDIT_ARCH_X86_64, 0, 8)
        );
        assert_eq!((p[2].code, p[2].k), (LD_W_ABS, NR));
        assert_eq!(
            (p[3].code, p[3].k, p[3].jt, p[3].jf),
            (JGE_K, X32_SYSCALL_BIT, 6, 0)
        );
    }

    #[test]
    fn a_jump_too_far_saturates() {
        let ins = jump(JEQ_K, 7, 3, 300);
        assert_eq!((ins.code, ins.k, ins.jt, ins.jf), (JEQ_K, 7, 3, u8::MAX));
        let ins = stmt(RET_K, RET_ALLOW);
        assert_eq!((ins.jt, ins.jf, ins.k), (0, 0, RET_ALLOW));
    }
}
