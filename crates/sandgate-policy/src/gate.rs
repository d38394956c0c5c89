//! The command gate's view of a policy, and nothing more: its command rules,
//! the floor and the path rules, the disk a decision reads, and the path
//! gate's verdict on a path ([`Rules`]). `Policy` implements it; the command
//! gate (`command`, `pathwords`) is a [`Gate`] over it and never reaches into
//! the policy's fields.

use std::path::{Path, PathBuf};

use crate::decision::{Access, Decision};
use crate::disk::Disk;
use crate::floor::FloorInodes;
use crate::request::Context;
use crate::rules::{CommandRules, PathRules};

/// What the command gate reads of a policy.
pub(crate) trait Rules {
    /// Whether commands are analysed as shell (`commands.shell`).
    fn shell(&self) -> bool;
    /// The command deny rules.
    fn command_deny(&self) -> &CommandRules;
    /// The command allow rules.
    fn command_allow(&self) -> &CommandRules;
    /// The built-in floor.
    fn floor(&self) -> &PathRules;
    /// The path deny rules.
    fn path_deny(&self) -> &PathRules;
    /// The path allow rules.
    fn path_allow(&self) -> &PathRules;
    /// The directories the floor protects, canonical.
    fn floor_dirs(&self) -> &[PathBuf];
    /// The floor files with other hard links.
    fn floor_inodes(&self) -> &FloorInodes;
    /// The disk a decision reads (patterns expanded, files rules name).
    fn disk(&self) -> &dyn Disk;
    /// The path gate on `path` as the call names it.
    fn evaluate_path(&self, path: &str, access: Access, ctx: &Context) -> Decision;
    /// The path gate on a canonical path.
    fn decide_canonical_path(&self, canonical: &Path, access: Access) -> Decision;
}

/// The command gate over a policy's [`Rules`] (its methods are in
/// `command` and `pathwords`).
#[derive(Clone, Copy)]
pub(crate) struct Gate<'a> {
    /// The policy, as the gate reads it.
    pub(crate) rules: &'a dyn Rules,
}

impl<'a> Gate<'a> {
    /// The gate of `rules`.
    pub(crate) fn new(rules: &'a dyn Rules) -> Gate<'a> {
        Gate { rules }
    }
}
