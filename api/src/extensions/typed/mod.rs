//! Typed shapes of the kind-specific fields of the extension kinds. The kinds' Rust types keep
//! those fields as raw JSON (controllers handle the kinds generically and round-trip them), so
//! these types only give the CRDs their exact schemas: `kubectl explain`, validation and pruning.

mod operatingsystemconfig;
mod others;
mod worker;

pub use operatingsystemconfig::*;
pub use others::*;
pub use worker::*;
