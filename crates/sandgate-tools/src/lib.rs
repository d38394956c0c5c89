//! The gated tools of sandgate: `file_*` and `exec_*`, and the [`Dispatcher`]
//! that asks the policy before every gated call.
//!
//! ```no_run
//! use std::sync::Arc;
//! use sandgate_policy::ask::NoHuman;
//! use sandgate_policy::{Context, Policy, Sources};
//! use sandgate_tools::Dispatcher;
//!
//! let ctx = Context::from_env(None).unwrap();
//! let policy = Policy::load(&Sources::default(), &ctx).unwrap();
//! let tools = Dispatcher::new(
//!     policy,
//!     ctx,
//!     Arc::new(NoHuman { reason: "headless".into() }),
//!     Box::new(|_tool, _decision, _resolution| {}),
//! );
//! let denied = tools.call("file_read", &serde_json::json!({"path": "~/.ssh/id_rsa"}));
//! assert!(denied.is_err());
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod dispatch;
pub mod error;
pub mod file;
pub mod grep;
pub mod jobs;
pub mod judged;
pub mod network;
pub mod output;
pub mod params;
pub mod resolver;
pub mod spec;
pub mod walk;

pub use dispatch::Dispatcher;
pub use error::ToolError;
pub use output::ToolOutput;
pub use spec::{specs, ToolSpec};
