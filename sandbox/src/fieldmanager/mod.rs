//! Field ownership: managedFields entries of `Update` and `Apply` managers ([`managed`]) over the
//! field sets of objects ([`fieldpath`]), as structured-merge-diff computes them.

pub mod fieldpath;
pub mod managed;
