//! The seedlet garden-side controller: CSR approval, seed lifecycle, extension scheduling.

pub mod csr_approval;
pub mod runtime;
pub mod seed_lifecycle;
