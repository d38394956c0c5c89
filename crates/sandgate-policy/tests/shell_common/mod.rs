//! Helpers shared by the shell-gate tests: a policy from YAML, in a fresh home.

use sandgate_policy::load::{parse_policy, LoadedFile};
use sandgate_policy::{Context, Policy, Sources, Tier};

/// A home directory with a project directory as the CWD; removed on drop.
pub struct Home {
    _dir: tempfile::TempDir,
    pub ctx: Context,
}

impl Home {
    pub fn new() -> Home {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = dir.path().join("home");
        let cwd = home.join("project");
        std::fs::create_dir_all(&cwd).expect("cwd");
        let ctx = Context::new(&cwd, &home).expect("context");
        Home { _dir: dir, ctx }
    }

    /// Compiles `yaml` as the central file; `shell` overrides `commands.shell`.
    pub fn policy(&self, yaml: &str, shell: Option<bool>) -> Policy {
        let path = self.ctx.home.join(".sandgate/permissions.yaml");
        let mut file = parse_policy(yaml, &path).expect("test policy parses");
        if shell.is_some() {
            file.permissions.commands.shell = shell;
        }
        let loaded = LoadedFile {
            tier: Tier::Central,
            path,
            file,
        };
        Policy::from_files(Sources::default(), &[loaded], &self.ctx).expect("test policy compiles")
    }
}
