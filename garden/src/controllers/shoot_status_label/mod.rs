//! Shoot status label (`shoot-statuslabel`, spec §4): watches Shoots in the garden and keeps their
//! label `shoot.gardener.cloud/status` equal to the health computed from last operation, last
//! errors and conditions ([`label::shoot_health`]), with a merge patch of that one label.
//!
//! Triggered by every Shoot's first sighting and by updates where the label is missing or differs
//! from the computed value; no periodic requeue (every input is on the watched object).

pub mod label;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;

use kube::ResourceExt;
use seedlet_api::core::Shoot;
use seedlet_api::names::shoot_lifecycle;
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::watch::{RunWith, Runner};
use tokio_util::sync::CancellationToken;

pub use label::{Health, shoot_health};
pub use reconcile::{Error, error_policy, reconcile};

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-statuslabel";

/// Dependencies of the controller.
pub struct Ctx {
    /// Garden client.
    pub client: kube::Client,
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
        metrics: garden.metrics.clone(),
    });
    let concurrency = garden
        .config
        .controllers
        .shoot_status_label
        .concurrent_syncs;
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
    crate::caches::controller_on_transitions(&caches.all::<Shoot>(), label_state, label_outdated)
        .run_with(
            Runner::new(NAME, shutdown).concurrency(concurrent_syncs),
            reconcile,
            error_policy,
            ctx,
        )
        .await;
}

/// The stored label and the computed one.
pub fn label_state(shoot: &Shoot) -> (Option<String>, Health) {
    (
        shoot.labels().get(shoot_lifecycle::STATUS_LABEL).cloned(),
        shoot_health(shoot.status.as_ref()),
    )
}

/// The trigger: the first sighting (a create, or every Shoot at start-up), and updates whose
/// label is missing or differs from the computed value.
pub fn label_outdated(
    previous: Option<&(Option<String>, Health)>,
    (stored, computed): &(Option<String>, Health),
) -> bool {
    previous.is_none() || stored.as_deref() != Some(computed.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_passes_first_sightings_and_outdated_labels_only() {
        let current = (Some("healthy".to_owned()), Health::Healthy);
        assert!(label_outdated(None, &current));
        assert!(!label_outdated(Some(&current), &current));
        let missing = (None, Health::Healthy);
        assert!(label_outdated(Some(&current), &missing));
        let differs = (Some("healthy".to_owned()), Health::Unhealthy);
        assert!(label_outdated(Some(&current), &differs));
    }
}
