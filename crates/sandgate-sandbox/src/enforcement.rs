//! How strongly a plan is enforced, as a value the caller sees and can require.

use serde::Serialize;

/// How much of the plan the mechanism enforces on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EnforcementLevel {
    /// Every restriction of the plan is enforced by the kernel.
    FullyEnforced,
    /// Some restrictions are enforced; [`Enforcement::missing`] lists the others.
    PartiallyEnforced,
    /// Nothing is enforced: the command runs unconfined.
    NotEnforced,
    /// A user-supplied wrapper enforces whatever it enforces; sandgate cannot verify it.
    Delegated,
}

impl std::fmt::Display for EnforcementLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EnforcementLevel::FullyEnforced => "fully enforced",
            EnforcementLevel::PartiallyEnforced => "partially enforced",
            EnforcementLevel::NotEnforced => "not enforced",
            EnforcementLevel::Delegated => "delegated to the custom wrapper",
        })
    }
}

/// The enforcement level with what is missing and what else is worth knowing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Enforcement {
    /// The level.
    pub level: EnforcementLevel,
    /// Restrictions of the plan that this machine cannot enforce.
    pub missing: Vec<String>,
    /// Extra restrictions applied beyond the plan, and consequences of the plan worth knowing.
    pub notes: Vec<String>,
}

impl Enforcement {
    /// A level with nothing missing and no notes.
    pub fn new(level: EnforcementLevel) -> Enforcement {
        Enforcement {
            level,
            missing: Vec::new(),
            notes: Vec::new(),
        }
    }
}
