//! sandgate-grant
