//! What the fuzz targets share: the binary's hook and ACP readers, and one
//! temporary tree (home, workspace, policy) per fuzzing process.

pub mod acp;
pub mod agentcall;
pub mod hook;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sandgate_policy::{Context, Policy, Sources};

/// A policy of the kinds of rules the presets have.
pub const POLICY: &str = r#"permissions:
  paths:
    deny: ["/dev/sd*", "./secrets/**"]
    allow: ["./**", "/tmp/**"]
    read:
      allow: ["/usr/**"]
  commands:
    deny: ["^git push( |$)", "^rm -rf /"]
    allow: ["^git (status|log|diff)( |$)", "^ls( |$)", "^cat( |$)"]
"#;

/// The tree every target of one process works in.
pub struct Tree {
    /// Kept for its lifetime: removed when the process exits normally.
    _dir: tempfile::TempDir,
    /// `HOME`.
    pub home: PathBuf,
    /// The workspace (the calls' working directory).
    pub work: PathBuf,
    /// The policy files.
    pub sources: Sources,
    /// The context of a call in `work`.
    pub ctx: Context,
    /// [`POLICY`], compiled.
    pub policy: Policy,
}

/// The process's tree, made on first use.
pub fn tree() -> &'static Tree {
    static TREE: OnceLock<Tree> = OnceLock::new();
    TREE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let home = root.join("home");
        let work = home.join("work");
        std::fs::create_dir_all(home.join(".sandgate")).expect("home");
        std::fs::create_dir_all(&work).expect("work");
        let central = home.join(".sandgate/permissions.yaml");
        std::fs::write(&central, POLICY).expect("policy");
        let sources = Sources {
            managed: None,
            central: Some(central),
            local: None,
            no_sandbox: false,
        };
        let ctx = Context::new(&work, &home).expect("context");
        let policy = Policy::load(&sources, &ctx).expect("the policy loads");
        Tree {
            _dir: dir,
            home,
            work,
            sources,
            ctx,
            policy,
        }
    })
}

/// `data` as text, when it is UTF-8.
pub fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// A path in `dir` named `name`.
pub fn at(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}
