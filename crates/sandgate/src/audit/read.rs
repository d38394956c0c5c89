//! Reading the audit log back.
