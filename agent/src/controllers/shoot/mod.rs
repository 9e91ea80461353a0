//! The Shoot "Main" controller (gardenlet's `shoot` controller, spec `gardenlet-shoot-flow.md`):
//! for the Shoots of this seed it decides when to reconcile and runs the reconcile flow over the
//! extension objects in the seed, reporting `lastOperation`/`lastErrors` on the Shoot.

pub mod decide;
pub mod desired;
pub mod flow;
pub mod status;
pub mod tasks;
