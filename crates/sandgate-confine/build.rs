//! Builds the `sandgate run` preload library (`shim/preload.c`) into a shared
//! object on x86-64 Linux, and writes `preload.rs` into `OUT_DIR`: the marker
//! the library and the seccomp filter share, and the library's bytes and
//! content hash (none on other targets, which run without the fast path).

#![allow(
    clippy::expect_used,
    reason = "a build script fails the build by panicking, its message the error"
)]

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

/// The value a preloaded open puts in `openat`'s unused sixth argument. Not a
/// secret (see `shim/preload.c`); one place for both the C and the Rust side.
const MARKER: u64 = 0x5347_4154_455f_4650; // "SGATE_FP"

const SOURCE: &str = "shim/preload.c";

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    println!("cargo:rerun-if-changed=build.rs");
    // Cargo always sets OUT_DIR for a build script; without it nothing can be built.
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();

    let mut generated = String::new();
    let _ = writeln!(
        generated,
        "/// The marker in `openat`'s sixth argument that the seccomp filter lets\n\
         /// through unnotified (shared with `shim/preload.c`).\n\
         pub const MARKER: u64 = {MARKER:#018x};"
    );
    if arch == "x86_64" && os == "linux" {
        let library = out.join("sandgate-preload.so");
        compile(&library);
        // `compile` returned, so the compiler wrote the file.
        let bytes = fs::read(&library).expect("the preload library was just built");
        let _ = writeln!(
            generated,
            "/// The preload library (an x86-64 shared object).\n\
             pub const LIBRARY: Option<&[u8]> = Some(include_bytes!({:?}));\n\
             /// FNV-1a of [`LIBRARY`], for its content-addressed file name.\n\
             pub const LIBRARY_HASH: u64 = {:#018x};",
            library.display().to_string(),
            fnv1a(&bytes)
        );
    } else {
        let _ = writeln!(
            generated,
            "/// No preload library on this target.\n\
             pub const LIBRARY: Option<&[u8]> = None;\n\
             /// No library, no hash.\n\
             pub const LIBRARY_HASH: u64 = 0;"
        );
    }
    // A build script that cannot write its OUT_DIR cannot do anything else either.
    fs::write(out.join("preload.rs"), generated).expect("OUT_DIR is writable");
}

/// Compiles the shim with the target's C compiler: a freestanding shared
/// object with no libc dependency of its own. Fails the build (panics, as
/// build scripts do) when the compiler cannot: a Linux Rust toolchain links
/// through `cc`, so one is always there.
fn compile(library: &PathBuf) {
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .cargo_warnings(false)
        .get_compiler();
    let mut cmd: Command = compiler.to_command();
    cmd.args([
        "-shared",
        "-fPIC",
        "-O2",
        // The same bytes (and file name) from debug and release builds.
        "-g0",
        "-nostdlib",
        "-ffreestanding",
        "-fno-builtin",
        "-fno-stack-protector",
        "-fno-asynchronous-unwind-tables",
        "-fvisibility=hidden",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-Wl,-z,noexecstack",
        "-Wl,--hash-style=both",
    ])
    .arg(format!("-DSANDGATE_MARKER={MARKER:#x}ULL"))
    .arg("-o")
    .arg(library)
    .arg(SOURCE);
    let status = cmd.status().unwrap_or_else(|e| {
        panic!("cannot run the C compiler for the preload library ({cmd:?}): {e}")
    });
    assert!(
        status.success(),
        "the C compiler failed to build the preload library `{SOURCE}` ({cmd:?})"
    );
}

/// 64-bit FNV-1a: a stable content hash without a dependency.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
