//! Typed shapes of Gardener API fields that seedlet itself does not interpret, so that the
//! generated CRDs describe every field gardener-apiserver's types have (for `kubectl explain`,
//! validation and pruning). The kinds' own types in [`crate::core`], [`crate::seedmanagement`]
//! and [`crate::security`] use these for fields they add or whose schema they take from here.

mod cloudprofile;
mod core;
mod security;
mod seed;
mod seedmanagement;

pub use cloudprofile::*;
pub use core::*;
pub use security::*;
pub use seed::*;
pub use seedmanagement::*;
