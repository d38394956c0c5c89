//! sandgate-tools
