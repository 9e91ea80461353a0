//! The seedlet garden-side controller: CSR approval, seed lifecycle, extension scheduling,
//! finalizers, ShootState finalizer, reference protection, projects, extension ClusterRoles and
//! the Event TTL. Built on `seedlet-runtime`, a peer of the seed agent.

pub mod caches;
#[cfg(test)]
mod caches_tests;
pub mod cluster_identity;
pub mod context;
pub mod controllers;
pub mod daemon;
pub mod installations;
pub mod seed_csr;
pub mod seed_namespace;
pub mod selector;
#[cfg(test)]
pub(crate) mod testing;
pub mod webhooks;

pub use context::{GardenContext, GardenControllerSpec};
pub use daemon::{Error, Garden, RunningGarden, run_garden};
