//! Links the `sandgate` executable as a position-dependent executable on
//! Linux, where the agent hook starts it for every tool call.
//!
//! A position-independent executable carries about 21,000 relative
//! relocations that the dynamic loader applies at every start, writing (and
//! so copying) each page of `.data.rel.ro`: about a hundred page faults, a
//! third of the hook's start-up (BENCHMARKS.md). Linked without PIE, the
//! addresses are fixed at link time and those pages are never written. The
//! shared libraries, the stack and the heap keep their randomised addresses;
//! only the executable's own code and data lose theirs.
//!
//! `SANDGATE_BUILD_PIE=1` keeps the default position-independent link.

fn main() {
    println!("cargo:rerun-if-env-changed=SANDGATE_BUILD_PIE");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let pie = std::env::var_os("SANDGATE_BUILD_PIE").is_some_and(|v| v == "1");
    if linux && !pie {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
