//! The one shape every garden controller has: a [`Reconciler`] that also says how one
//! leadership term builds it from the [`GardenContext`] and what triggers it on the process's
//! shared informers ([`GardenReconciler`]). [`spec`] turns such a type into its line of
//! [`super::builtin`]; [`run_alone`] runs one on informers of its own (an end-to-end test runs
//! a single controller this way). Metrics, 409s, failure logs, the write budget, concurrency
//! and graceful stop belong to [`seedlet_runtime::controller::run`].

use std::sync::Arc;

use seedlet_runtime::controller::{Reconciler, Triggers};
use seedlet_runtime::metrics::Metrics;
use tokio_util::sync::CancellationToken;

use crate::caches::GardenCaches;
use crate::context::{GardenContext, GardenControllerSpec};

/// A garden controller: a [`Reconciler`] with how it is built and triggered.
pub trait GardenReconciler: Reconciler + Sized {
    /// The controller for one leadership term, from what the term offers; `None` when the
    /// configuration switches it off (it then idles until the term ends).
    fn from_garden(garden: &GardenContext) -> Option<Self>;

    /// What triggers its reconciles: a controller over the shared informers of `caches`, plus
    /// watches of its own for kinds no other reader keeps.
    fn triggers(&self, caches: &GardenCaches) -> Triggers<Self::Object>;
}

/// The line of [`super::builtin`] that runs `R` once per leadership term.
pub fn spec<R: GardenReconciler>() -> GardenControllerSpec {
    GardenControllerSpec::new(R::NAME, |garden| Box::pin(run_term::<R>(garden)))
}

/// Runs `R` for one leadership term: until the term's token is cancelled.
async fn run_term<R: GardenReconciler>(garden: Arc<GardenContext>) {
    let Some(reconciler) = R::from_garden(&garden) else {
        // Returning early would count as a crash to the supervisor.
        garden.stop.cancelled().await;
        return;
    };
    run_on(
        Arc::new(reconciler),
        &garden.caches,
        garden.stop.clone(),
        garden.metrics.clone(),
    )
    .await;
}

/// Runs `reconciler` on the shared informers `caches` until `stop` is cancelled, its reconciles
/// measured in `metrics`.
pub async fn run_on<R: GardenReconciler>(
    reconciler: Arc<R>,
    caches: &GardenCaches,
    stop: CancellationToken,
    metrics: Arc<Metrics>,
) {
    let controller = reconciler.triggers(caches);
    seedlet_runtime::controller::run(controller, reconciler, stop, metrics).await;
}

/// Runs `reconciler` alone, on informers of its own over `client`, until `stop` is cancelled;
/// its reconcile metrics go to a registry of its own.
pub async fn run_alone<R: GardenReconciler>(
    reconciler: Arc<R>,
    client: kube::Client,
    stop: CancellationToken,
) {
    let caches = GardenCaches::new(client, &stop);
    let metrics = Arc::new(Metrics::new("garden"));
    run_on(reconciler, &caches, stop, metrics).await;
}
