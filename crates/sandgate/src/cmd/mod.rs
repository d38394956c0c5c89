//! One module per subcommand.

pub mod answer;
pub mod audit;
pub mod check;
pub mod completions;
pub mod detect;
pub mod exec;
pub mod grant;
pub mod hook;
pub mod import;
pub mod init;
pub mod mcp;
pub mod policy;
pub mod policy_edit;
pub mod run;
