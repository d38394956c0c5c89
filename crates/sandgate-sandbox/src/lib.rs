//! sandgate-sandbox
