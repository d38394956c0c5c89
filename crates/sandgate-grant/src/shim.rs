//! `compat.sh`, the portability shim detector scripts source.

/// The text of `compat.sh` (POSIX sh; runs under dash and bash).
///
/// It decides everything when the detector runs: it exports `SANDGATE_OS`,
/// `SANDGATE_USERLAND` (`gnu` or `bsd`) and `SANDGATE_BASH_MAJOR` (0 without
/// bash), and defines `sed_i`, `stat_size`, `stat_mtime`, `readlink_f`,
/// `sha256`, `need_bash N`, `require CMD…` and `compat_report`. `need_bash`,
/// `require` and `sha256` exit 2 — this machine cannot run the check — never 1.
pub const COMPAT_SH: &str = include_str!("compat.sh");
