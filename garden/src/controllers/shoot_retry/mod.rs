//! Shoot retry (`shoot-retry`, spec §7.1): watches Shoots in the garden and, once
//! `retryPeriod` (plus a random jitter) has passed since a failure caused by provider rate limits
//! (`ERR_INFRA_RATE_LIMITS_EXCEEDED`), annotates `gardener.cloud/operation: retry` so the seed
//! agent tries again. Writes only that annotation, in the garden.
//!
//! Triggered by a Shoot's first sighting and by a Shoot becoming rate-limited from not failed;
//! requeued to the retry instant while it waits.

pub mod decide;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;

use jiff::SignedDuration;
use seedlet_api::core::Shoot;
use seedlet_runtime::clock::Clock;
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::watch::{RunWith, Runner};
use tokio_util::sync::CancellationToken;

pub use reconcile::{Error, error_policy, reconcile};

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-retry";

/// Dependencies of the controller.
pub struct Ctx {
    /// Garden client.
    pub client: kube::Client,
    /// Time after the failure before the retry.
    pub retry_period: SignedDuration,
    /// Upper bound of the random delay added to the retry instant.
    pub retry_jitter_period: SignedDuration,
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// Process metrics.
    pub metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("retry_period", &self.retry_period)
            .finish_non_exhaustive()
    }
}

/// Starts the controller for one leadership term of the garden process.
pub async fn start(garden: Arc<crate::context::GardenContext>) {
    let config = &garden.config.controllers.shoot_retry;
    let ctx = Arc::new(Ctx {
        client: garden.client.clone(),
        retry_period: signed(config.retry_period.as_std()),
        retry_jitter_period: signed(config.retry_jitter_period.as_std()),
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
        decide::failure,
        decide::became_rate_limited,
    )
    .run_with(
        Runner::new(NAME, shutdown).concurrency(concurrent_syncs),
        reconcile,
        error_policy,
        ctx,
    )
    .await;
}

fn signed(duration: std::time::Duration) -> SignedDuration {
    SignedDuration::try_from(duration).unwrap_or(SignedDuration::MAX)
}
