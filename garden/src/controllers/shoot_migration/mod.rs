//! Shoot migration readiness (`shoot-migration`, spec §7.3): watches Shoots in the garden and,
//! while a Shoot migrates (`spec.seedName` differs from `status.seedName`), keeps the constraint
//! `ReadyForMigration` saying whether the destination Seed can take it (same Gardener version as
//! the source, generation observed, `GardenletReady` and `SeedSystemComponentsHealthy` True,
//! not deleting); removes the constraint once the Shoot no longer migrates. Writes only the
//! Shoot's `status.constraints`, in the garden.
//!
//! Triggered by [`readiness::relevant`]; an unready destination is checked again after 5 s.

pub mod readiness;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;

use seedlet_api::core::Shoot;
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::watch::concurrency;

pub use reconcile::Error;

use crate::caches::{GardenCaches, controller_on_transitions};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-migration";

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct ShootMigration {
    /// Garden client.
    pub client: kube::Client,
    /// Time source for constraint timestamps.
    pub clock: Arc<dyn Clock>,
    /// Parallel reconciles (`concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for ShootMigration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShootMigration").finish_non_exhaustive()
    }
}

impl GardenReconciler for ShootMigration {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        Some(Self {
            client: garden.client.clone(),
            clock: garden.clock.clone(),
            concurrency: concurrency(i64::from(
                garden.config.controllers.shoot_migration.concurrent_syncs,
            )),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Shoot> {
        controller_on_transitions(&caches.all::<Shoot>(), readiness::view, readiness::relevant)
    }
}
