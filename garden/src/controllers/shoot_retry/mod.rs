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
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::watch::concurrency;

pub use reconcile::Error;

use crate::caches::{GardenCaches, controller_on_transitions};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-retry";

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct ShootRetry {
    /// Garden client.
    pub client: kube::Client,
    /// Time after the failure before the retry.
    pub retry_period: SignedDuration,
    /// Upper bound of the random delay added to the retry instant.
    pub retry_jitter_period: SignedDuration,
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// Parallel reconciles (`concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for ShootRetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShootRetry")
            .field("retry_period", &self.retry_period)
            .finish_non_exhaustive()
    }
}

impl GardenReconciler for ShootRetry {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        let config = &garden.config.controllers.shoot_retry;
        Some(Self {
            client: garden.client.clone(),
            retry_period: signed(config.retry_period.as_std()),
            retry_jitter_period: signed(config.retry_jitter_period.as_std()),
            clock: garden.clock.clone(),
            concurrency: concurrency(i64::from(config.concurrent_syncs)),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Shoot> {
        controller_on_transitions(
            &caches.all::<Shoot>(),
            decide::failure,
            decide::became_rate_limited,
        )
    }
}

fn signed(duration: std::time::Duration) -> SignedDuration {
    SignedDuration::try_from(duration).unwrap_or(SignedDuration::MAX)
}
