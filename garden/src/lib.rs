//! The seedlet garden-side controller: CSR approval, seed lifecycle, extension scheduling.

pub mod controllerregistration;
pub mod csr_approval;
pub mod extensions_check;
pub mod finalizers;
pub mod runtime;
pub mod seed_lifecycle;
pub mod shootstate_finalizer;
