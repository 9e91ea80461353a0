//! The seedlet garden-side controller: CSR approval, seed lifecycle, extension scheduling.
