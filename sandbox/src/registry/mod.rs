//! What kube-apiserver's registry does: the generic create/update/delete every kind shares
//! ([`generic`]), the per-kind [`strategy`] hooks and the table of which kind follows which
//! ([`kinds`]), with one file per kind that has rules of its own.

pub mod basic;
pub mod crd;
pub mod csr;
pub mod generic;
pub mod jsonpath;
pub mod kinds;
pub mod lease;
pub mod limits;
pub mod namespace;
pub mod objectmeta;
pub mod printers;
pub mod secret;
pub mod service;
pub mod strategy;
pub mod validation;
pub mod workloads;
