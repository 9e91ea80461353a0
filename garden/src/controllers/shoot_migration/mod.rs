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
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::watch::{RunWith, Runner};
use tokio_util::sync::CancellationToken;

pub use reconcile::{Error, error_policy, reconcile};

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-migration";

/// Dependencies of the controller.
pub struct Ctx {
    /// Garden client.
    pub client: kube::Client,
    /// Time source for constraint timestamps.
    pub clock: Arc<dyn Clock>,
    /// Process metrics.
    pub metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").finish_non_exhaustive()
    }
}

/// Starts the controller for one leadership term of the garden process.
pub async fn start(garden: Arc<crate::context::GardenContext>) {
    let ctx = Arc::new(Ctx {
        client: garden.client.clone(),
        clock: garden.clock.clone(),
        metrics: garden.metrics.clone(),
    });
    let concurrency = garden.config.controllers.shoot_migration.concurrent_syncs;
    run_on(ctx, &garden.caches, concurrency, garden.stop.clone()).await;
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
        readiness::view,
        readiness::relevant,
    )
    .run_with(
        Runner::new(NAME, shutdown).concurrency(concurrent_syncs),
        reconcile,
        error_policy,
        ctx,
    )
    .await;
}
