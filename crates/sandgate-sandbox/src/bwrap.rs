//! Bubblewrap: the plan as a `bwrap` command line.
//!
//! The whole file system is bound read-only, the workdir (and the temp dir
//! with `allow_tmp`) read-write, and an empty read-only tmpfs is laid over
//! every denied directory. Mounts apply in order, so a denied directory
//! inside the workdir stays hidden.

use std::path::{Path, PathBuf};

use crate::plan::Plan;

/// The Debian/Ubuntu/Fedora/Arch package that provides `bwrap`.
pub const PACKAGE: &str = "bubblewrap";

/// Finds `bwrap` on `PATH`.
pub fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("bwrap"))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The `bwrap` options for `plan`, up to and including the `--` before the
/// command. `exists` decides which denied directories need a tmpfs (a
/// missing one cannot be mounted over, and cannot be created read-only).
pub fn options(plan: &Plan, cwd: &Path, exists: &dyn Fn(&Path) -> bool) -> Vec<String> {
    let mut args: Vec<String> = ["--die-with-parent", "--new-session", "--ro-bind", "/", "/"]
        .map(String::from)
        .to_vec();
    args.extend(["--dev", "/dev", "--proc", "/proc"].map(String::from));
    for dir in &plan.writable {
        let dir = dir.display().to_string();
        args.extend(["--bind".to_string(), dir.clone(), dir]);
    }
    for denied in &plan.denied {
        if !exists(&denied.path) {
            continue;
        }
        let dir = denied.path.display().to_string();
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
        })
        .unwrap();
        let exists = |p: &Path| p != Path::new("/home/ann/.aws");
        let args = options(&plan, Path::new("/home/ann/my proj"), &exists).join(" ");
        assert_eq!(
            args,
            "--die-with-parent --new-session --ro-bind / / --dev /dev --proc /proc \
             --bind /home/ann/my proj /home/ann/my proj --bind /tmp /tmp \
             --tmpfs /home/ann/.gnupg --remount-ro /home/ann/.gnupg \
             --tmpfs /home/ann/.sandgate --remount-ro /home/ann/.sandgate \
             --tmpfs /home/ann/.ssh --remount-ro /home/ann/.ssh \
             --tmpfs /srv/secret --remount-ro /srv/secret \
             --unshare-net --chdir /home/ann/my proj --"
        );
        let mut open = plan.clone();
        open.network = true;
        assert!(!options(&open, Path::new("/"), &exists).contains(&"--unshare-net".to_string()));
    }
}
