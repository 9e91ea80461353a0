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
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::watch::{RunWith, Runner};
use tokio_util::sync::CancellationToken;

pub use reconcile::{Error, error_policy, reconcile};

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-quota";

/// Dependencies of the controller.
pub struct Ctx {
    /// Garden client.
    pub client: kube::Client,
    /// Check period per Shoot; also the reconcile timeout.
    pub sync_period: Duration,
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// Process metrics.
    pub metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("sync_period", &self.sync_period)
            .finish_non_exhaustive()
    }
}

/// Starts the controller for one leadership term of the garden process.
pub async fn start(garden: Arc<crate::context::GardenContext>) {
    let config = &garden.config.controllers.shoot_quota;
    let ctx = Arc::new(Ctx {
        client: garden.client.clone(),
        sync_period: config.sync_period.as_std(),
        clock: garden.clock.clone(),
        metrics: garden.metrics.clone(),
    });
    run_on(
        ctx,
        &garden.caches,
        config.concurrent_syncs,
        garden.stop.clone(),
    )
    .await;
}

/// Runs the controller on informers of its own until `shutdown` is cancelled (a test runs one
/// controller alone this way).
pub async fn run(ctx: Arc<Ctx>, concurrent_syncs: u32, shutdown: CancellationToken) {
    let caches = crate::caches::GardenCaches::new(ctx.client.clone(), &shutdown);
    run_on(ctx, &caches, concurrent_syncs, shutdown).await;
}

/// Runs the controller on the shared informers `caches` until `shutdown` is cancelled.
pub async fn run_on(
    ctx: Arc<Ctx>,
    caches: &crate::caches::GardenCaches,
    concurrent_syncs: u32,
    shutdown: CancellationToken,
) {
    crate::caches::controller_on_transitions(
        &caches.all::<Shoot>(),
        |_: &Shoot| (),
        first_sighting,
    )
    .run_with(
        Runner::new(NAME, shutdown).concurrency(concurrent_syncs),
        reconcile,
        error_policy,
        ctx,
    )
    .await;
}

/// The trigger: only a Shoot's first sighting (creates, and every Shoot at start-up).
pub fn first_sighting(previous: Option<&()>, _current: &()) -> bool {
    previous.is_none()
}
