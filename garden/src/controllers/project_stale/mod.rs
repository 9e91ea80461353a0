//! Stale projects (`project-stale`, spec §3.4): a project whose namespace has been unused for
//! long enough gets `status.staleSinceTimestamp`, after the grace period
//! `status.staleAutoDeleteTimestamp`, and is deleted at that instant. Time comes from the
//! injected clock. Triggered by Project creation and by updates other than activity-only ones
//! (generation or observedGeneration changes), and every `staleSyncPeriod`.
//!
//! The project activity controller (`project-activity`) writes the `status.lastActivityTimestamp`
//! this check reads; the two share no code.

pub mod decide;
pub mod in_use;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;
use std::time::Duration;

use seedlet_api::core::Project;
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::triggers::key_of;
use seedlet_runtime::watch::concurrency;

pub use reconcile::Error;

use crate::caches::GardenCaches;
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name.
pub const NAME: &str = "project-stale";

/// The stale-project controller: what its reconciles need (its `Reconciler` impl is in
/// `reconcile.rs`).
pub struct StaleProjects {
    /// Garden client.
    pub client: kube::Client,
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// Thresholds.
    pub settings: decide::Settings,
    /// `staleSyncPeriod`.
    pub sync_period: Duration,
    /// Parallel reconciles (`concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for StaleProjects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaleProjects").finish_non_exhaustive()
    }
}

impl GardenReconciler for StaleProjects {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        let config = &garden.config.controllers.project;
        Some(Self {
            client: garden.client.clone(),
            clock: garden.clock.clone(),
            settings: decide::Settings {
                minimum_lifetime: decide::days(config.minimum_lifetime_days),
                grace_period: decide::days(config.stale_grace_period_days),
                expiration: decide::days(config.stale_expiration_time_days),
            },
            sync_period: config.stale_sync_period.as_std(),
            concurrency: concurrency(i64::from(config.concurrent_syncs)),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Project> {
        crate::caches::controller_on_changes(&caches.all::<Project>(), trigger_key)
    }
}

/// The change key: activity-only updates do not trigger (spec §3.4).
pub fn trigger_key(project: &Project) -> String {
    let observed = project.status.as_ref().and_then(|s| s.observed_generation);
    key_of(&(
        project.metadata.generation,
        observed,
        project.metadata.deletion_timestamp.is_some(),
    ))
}
