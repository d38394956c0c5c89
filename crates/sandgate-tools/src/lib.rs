//! sandgate-tools

pub mod resolver;
