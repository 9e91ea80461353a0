//! The seedlet garden-side controller: CSR approval, seed lifecycle, extension scheduling,
//! finalizers, ShootState finalizer. Built on `seedlet-runtime`, a peer of the seed agent.

pub mod context;
pub mod controllerregistration;
pub mod controllers;
pub mod csr_approval;
pub mod daemon;
pub mod extensions_check;
pub mod finalizers;
pub mod seed_lifecycle;
pub mod shootstate_finalizer;

pub use context::{GardenContext, GardenControllerSpec};
pub use daemon::{Error, Garden, RunningGarden, run_garden};
