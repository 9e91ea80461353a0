//! Gardener API types, conditions and well-known names used by seedlet.
//!
//! - [`core`]: `core.gardener.cloud` (Seed, Shoot, Controller*, ShootState, ...).
//! - [`extensions`]: `extensions.gardener.cloud` (Cluster and the extension kinds).
//! - [`resources`]: `resources.gardener.cloud` (ManagedResource).
//! - [`seedmanagement`]: `seedmanagement.gardener.cloud` (ManagedSeed, ManagedSeedSet).
//! - [`conditions`]: the Condition type and pure helpers with gardener's time semantics.
//! - [`names`]: every well-known label, annotation, namespace, finalizer, reason, ...
//! - [`crds`]: CustomResourceDefinitions generated from these types.
//! - [`typed`]: typed shapes of fields seedlet does not interpret, which give the CRDs every
//!   field of gardener's types.

#![warn(missing_docs)]

pub mod common;
pub mod conditions;
pub mod core;
pub mod crds;
pub mod extensions;
pub mod names;
pub mod operations;
pub mod resources;
pub mod security;
pub mod seedmanagement;
pub mod typed;

pub use conditions::{Condition, ConditionStatus};
