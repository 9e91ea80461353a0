//! Shoot quota expiry (`shoot-quota`, spec §11): per Shoot in the garden, reads the Quotas of
//! its SecretBinding (or CredentialsBinding), writes the annotation
//! `shoot.gardener.cloud/expiration-timestamp` = creation + the smallest `clusterLifetimeDays`
//! (removes it when no quota sets a lifetime) and deletes the Shoot, with Gardener's deletion
//! confirmation, once that time has passed. Writes only to the garden.
//!
//! Triggered by a Shoot's first sighting; requeued every `controllers.shootQuota.syncPeriod`,
//! which is also the reconcile timeout.

pub mod expiry;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;
use std::time::Duration;

use seedlet_api::core::Shoot;
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::watch::concurrency;

pub use reconcile::Error;

use crate::caches::{GardenCaches, controller_on_transitions};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-quota";

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct ShootQuota {
    /// Garden client.
    pub client: kube::Client,
    /// Check period per Shoot; also the reconcile timeout.
    pub sync_period: Duration,
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// Parallel reconciles (`concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for ShootQuota {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShootQuota")
            .field("sync_period", &self.sync_period)
            .finish_non_exhaustive()
    }
}

impl GardenReconciler for ShootQuota {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        let config = &garden.config.controllers.shoot_quota;
        Some(Self {
            client: garden.client.clone(),
            sync_period: config.sync_period.as_std(),
            clock: garden.clock.clone(),
            concurrency: concurrency(i64::from(config.concurrent_syncs)),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Shoot> {
        controller_on_transitions(&caches.all::<Shoot>(), |_: &Shoot| (), first_sighting)
    }
}

/// The trigger: only a Shoot's first sighting (creates, and every Shoot at start-up).
pub fn first_sighting(previous: Option<&()>, _current: &()) -> bool {
    previous.is_none()
}
