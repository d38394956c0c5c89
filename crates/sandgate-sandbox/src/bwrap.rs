//! Bubblewrap: the plan as a `bwrap` command line.
//!
//! The whole file system is bound read-only, the workdir (and the temp dir
//! with `allow_tmp`) read-write, an empty read-only tmpfs is laid over
//! every denied directory, and `/dev/null` is bound read-only over every
//! denied file (another name of a floor file, a deny rule that names one
//! file such as `~/.netrc`). Mounts apply in order, so a denied directory
//! inside the workdir stays hidden.
//!
//! The command keeps nothing it does not need, whoever runs it (root
//! included): it gets its own user namespace that maps only the caller's uid
//! and gid and forbids nested ones, its own PID namespace with a fresh
//! `/proc` (processes outside are invisible, so they cannot be signalled,
//! traced or entered through `/proc/PID/cwd`), no capabilities, a new
//! session (no terminal to type into), and the [`crate::harden`] filters,
//! which `bwrap` installs right before it runs the command.

use std::path::{Path, PathBuf};

use crate::plan::Plan;

/// The Debian/Ubuntu/Fedora/Arch package that provides `bwrap`.
pub const PACKAGE: &str = "bubblewrap";

/// Where `bwrap` was looked for on `PATH`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    /// The first `bwrap` on `PATH` that only root can change.
    pub found: Option<PathBuf>,
    /// Each `bwrap` before it (or, with none found, on all of `PATH`) that
    /// someone else could have put there or could change.
    pub skipped: Vec<PathBuf>,
}

/// The directories a `bwrap` may be in (at any depth), as found on `PATH`
/// and where its links lead: where packages install it.
pub const SYSTEM_DIRS: &[&str] = &["/usr", "/bin", "/sbin", "/nix/store"];

/// Finds `bwrap` on `PATH`, taking only one that only root can change.
///
/// sandgate runs `bwrap` itself, outside the sandbox, with the command it
/// confines: a `bwrap` a confined program could write (a `bin` in the
/// workdir or in a writable state directory such as `~/.cargo/bin`, a
/// relative `PATH` entry) would run unconfined at the next command. So the
/// file must lie in one of [`SYSTEM_DIRS`], as found and where its links
/// lead (a program confined as root owns what it writes), and the file and
/// every directory above it must be owned by root and writable by no one
/// else.
pub fn find() -> Search {
    let mut search = Search::default();
    let Some(path) = std::env::var_os("PATH") else {
        return search;
    };
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join("bwrap");
        if !is_executable(&candidate) {
            continue;
        }
        if only_root_changes(&candidate) {
            search.found = Some(candidate);
            break;
        }
        search.skipped.push(candidate);
    }
    search
}

/// Whether `path` and where it leads lie in [`SYSTEM_DIRS`] and are owned
/// by root and writable by no one else, and so is every directory above
/// each.
fn only_root_changes(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let chain = |p: &Path| {
        SYSTEM_DIRS.iter().any(|dir| p.starts_with(dir))
            && p.ancestors()
                .all(|a| std::fs::metadata(a).is_ok_and(|m| m.uid() == 0 && m.mode() & 0o022 == 0))
    };
    chain(path) && std::fs::canonicalize(path).is_ok_and(|real| chain(&real))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// What `--dry-run` shows in place of the descriptor numbers of the filters,
/// which exist only once the command is prepared.
pub const FILTER_FD_PLACEHOLDER: &str = "FD";

/// The options that drop what the command does not need, in front of the mounts.
pub const HARDENING: [&str; 7] = [
    "--unshare-user",
    "--disable-userns",
    "--unshare-pid",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
];

/// The `bwrap` options for `plan`, up to and including the `--` before the
/// command. `exists` decides which denied directories need a tmpfs (a
/// missing one cannot be mounted over, and cannot be created read-only);
/// `filter_fds` are the descriptors of the [`crate::harden`] programs, in
/// the order they are installed.
pub fn options(
    plan: &Plan,
    cwd: &Path,
    exists: &dyn Fn(&Path) -> bool,
    filter_fds: &[String],
) -> Vec<String> {
    let mut args: Vec<String> = HARDENING.map(String::from).to_vec();
    args.extend(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"].map(String::from));
    for dir in &plan.writable {
        let dir = dir.display().to_string();
        args.extend(["--bind".to_string(), dir.clone(), dir]);
    }
    // Protected paths that exist are read-only binds of themselves, on top
    // of the writable ones.
    for protected in plan.protected.iter().filter(|p| p.exists) {
        let path = protected.path.display().to_string();
        args.extend(["--ro-bind".to_string(), path.clone(), path]);
    }
    for denied in &plan.denied {
        if !exists(&denied.path) {
            continue;
        }
        let dir = denied.path.display().to_string();
        if denied.file {
            // Another name of a floor file, or a denied file: an empty
            // file, read-only.
            args.extend(["--ro-bind".to_string(), "/dev/null".to_string(), dir]);
            continue;
        }
        args.extend([
            "--tmpfs".to_string(),
            dir.clone(),
            "--remount-ro".to_string(),
            dir,
        ]);
    }
    if !plan.network {
        args.push("--unshare-net".to_string());
    }
    for fd in filter_fds {
        args.extend(["--add-seccomp-fd".to_string(), fd.clone()]);
    }
    args.extend(["--chdir".to_string(), cwd.display().to_string()]);
    args.push("--".to_string());
    args
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use sandgate_policy::config::IsolationConfig;

    use super::*;
    use crate::plan::{build, PlanInput};

    #[test]
    fn the_preset_binds_workdir_hides_denied_dirs_and_cuts_the_network() {
        let config = IsolationConfig {
            allow_tmp: Some(true),
            ..IsolationConfig::default()
        };
        let deny = vec!["/srv/secret/**".to_string()];
        let plan = build(&PlanInput {
            config: &config,
            deny_patterns: &deny,
            cwd: Path::new("/home/ann/my proj"),
            home: Path::new("/home/ann"),
            temp_dir: Path::new("/tmp"),
            other_homes: &[],
        })
        .unwrap();
        let exists = |p: &Path| p != Path::new("/home/ann/.aws");
        let fds = ["3".to_string(), "4".to_string()];
        let args = options(&plan, Path::new("/home/ann/my proj"), &exists, &fds).join(" ");
        assert_eq!(
            args,
            "--unshare-user --disable-userns --unshare-pid --die-with-parent --new-session \
             --cap-drop ALL --ro-bind / / --dev /dev --proc /proc \
             --bind /home/ann/my proj /home/ann/my proj --bind /tmp /tmp \
             --tmpfs /home/ann/.gnupg --remount-ro /home/ann/.gnupg \
             --tmpfs /home/ann/.sandgate --remount-ro /home/ann/.sandgate \
             --tmpfs /home/ann/.ssh --remount-ro /home/ann/.ssh \
             --tmpfs /srv/secret --remount-ro /srv/secret \
             --unshare-net --add-seccomp-fd 3 --add-seccomp-fd 4 --chdir /home/ann/my proj --"
        );
        let mut open = plan.clone();
        open.network = true;
        assert!(
            !options(&open, Path::new("/"), &exists, &fds).contains(&"--unshare-net".to_string())
        );
    }

    #[test]
    fn only_a_bwrap_in_the_system_directories_that_only_root_changes_is_trusted() {
        assert!(!only_root_changes(Path::new("bin/bwrap")), "relative");
        let dir = tempfile::tempdir().unwrap();
        let planted = dir.path().join("bwrap");
        std::fs::write(&planted, "#!/bin/sh\n").unwrap();
        assert!(!only_root_changes(&planted));
        let link = dir.path().join("sh");
        std::os::unix::fs::symlink("/bin/sh", &link).unwrap();
        assert!(
            !only_root_changes(&link),
            "a link in a directory of anyone's"
        );
        if std::fs::metadata("/usr/bin/sh").is_ok() {
            assert!(only_root_changes(Path::new("/usr/bin/sh")));
            assert!(!only_root_changes(Path::new("/usr/bin/../../tmp")));
        }
    }
}
