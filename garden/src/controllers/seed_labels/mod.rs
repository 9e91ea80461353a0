//! Seed labels (`seed-labels`): keeps `name.seed.gardener.cloud/<seed>=true` on Shoots and
//! BackupEntries (from `spec.seedName` and `status.seedName`) and on Seeds (their own name), as
//! gardener-apiserver does on a Gardener garden. The seed authorizer lets a seed list these kinds
//! only with that label selector, so without the labels its watches would be empty.

pub mod desired;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;

use kube::Api;
use kube::runtime::watcher;
use seedlet_api::core::{BackupEntry, Seed, Shoot};
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::watch::{RunWith, Runner};

pub use reconcile::{Error, SeedScoped, error_policy, reconcile};

/// Controller name (logs, metrics label).
pub const NAME: &str = "seed-labels";
/// Parallel reconciles per kind.
pub const CONCURRENT_SYNCS: u16 = 5;

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
    let stop = garden.stop.clone();
    tokio::join!(
        run_for::<Shoot>(ctx.clone(), stop.clone()),
        run_for::<BackupEntry>(ctx.clone(), stop.clone()),
        run_for::<Seed>(ctx, stop),
    );
}

async fn run_for<K: SeedScoped>(ctx: Arc<Ctx>, stop: tokio_util::sync::CancellationToken) {
    let api: Api<K> = Api::all(ctx.client.clone());
    seedlet_runtime::watch::controller(api, watcher::Config::default())
        .run_with(
            Runner::new(NAME, stop).concurrency(CONCURRENT_SYNCS),
            reconcile::<K>,
            error_policy::<K>,
            ctx,
        )
        .await;
}
