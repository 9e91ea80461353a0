//! Seed lifecycle controller (spec §5.3, gardener's `gardenlet-lifecycle`): watches Seeds in the
//! garden and, every `syncPeriod` per Seed, checks the Seed's Lease in
//! `gardener-system-seed-lease`. When the agent has not renewed it for `monitorPeriod`, it sets
//! the Seed's `GardenletReady` to `Unknown`; when that has lasted `shootMonitorPeriod`, it sets the
//! health conditions and constraints of the Seed's Shoots to `Unknown`. Writes only to the garden.
//! Recovery is the agent's: its next heartbeat turns `GardenletReady` back to `True`.

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;
use std::time::Duration;

use seedlet_api::core::Seed;
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::Triggers;

pub use reconcile::Error;

use crate::caches::{GardenCaches, controller};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name (logs, metrics label).
pub const NAME: &str = "seed-lifecycle";

/// Timing of the controller (`controllers.seedLifecycle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Parallel reconciles.
    pub concurrent_syncs: u16,
    /// Check period per Seed; also the reconcile timeout.
    pub sync_period: Duration,
    /// Lease age after which `GardenletReady` turns `Unknown`.
    pub monitor_period: Duration,
    /// Time after that transition before the Seed's Shoots turn `Unknown`.
    pub shoot_monitor_period: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            concurrent_syncs: 5,
            sync_period: Duration::from_secs(10),
            monitor_period: Duration::from_secs(40),
            shoot_monitor_period: Duration::from_secs(200),
        }
    }
}

impl Settings {
    /// Settings from the garden controller configuration.
    pub fn from_config(config: &seedlet_config::GardenControllerConfiguration) -> Self {
        let lifecycle = &config.controllers.seed_lifecycle;
        Self {
            concurrent_syncs: seedlet_runtime::watch::concurrency(i64::from(
                lifecycle.concurrent_syncs,
            )),
            sync_period: lifecycle.sync_period.as_std(),
            monitor_period: lifecycle.monitor_period.as_std(),
            shoot_monitor_period: lifecycle.shoot_monitor_period.as_std(),
        }
    }
}

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct SeedLifecycle {
    /// Garden client.
    pub client: kube::Client,
    /// Timing.
    pub settings: Settings,
    /// Time source for staleness decisions and condition timestamps.
    pub clock: Arc<dyn Clock>,
}

impl GardenReconciler for SeedLifecycle {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        Some(Self {
            client: garden.client.clone(),
            settings: Settings::from_config(&garden.config),
            clock: garden.clock.clone(),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Seed> {
        controller(&caches.all::<Seed>())
    }
}
