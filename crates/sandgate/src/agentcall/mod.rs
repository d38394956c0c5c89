//! From an agent's hook payload to the sandgate calls that gate it.
//!
//! [`payload`] reads the JSON document an agent writes on a hook's stdin;
//! [`map`] turns each agent's tool call into the `file_*` / `exec_run` calls
//! the policy judges, with [`patch`] (the files a patch touches) and
//! [`pattern`] (the paths a search pattern can reach). Nothing here reads the
//! policy or any file: the hooks (the `hook` module) judge the calls, and
//! the run's link (the `runlink` module) maps a hook's call again to work out
//! itself which writes it implies. The fuzz targets build these files by path.

pub mod map;
pub mod patch;
pub mod pattern;
pub mod payload;

pub use payload::{parse_payload, InputError, Payload};
