//! Seed labels (`seed-labels`): keeps `name.seed.gardener.cloud/<seed>=true` on Shoots and
//! BackupEntries (from `spec.seedName` and `status.seedName`), on ManagedSeeds (the seed of their
//! Shoot) and on Seeds (their own name, plus the parent seed when a ManagedSeed `garden/<seed>`
//! registers them), as gardener-apiserver does on a Gardener garden. The seed authorizer lets a
//! seed list these kinds only with that label selector, so without the labels its watches would
//! be empty.
//!
//! A ManagedSeed is re-labelled when its Shoot moves to another seed; a Seed when its
//! ManagedSeed changes, and through its ManagedSeed's reconcile when that Shoot moves.

pub mod desired;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;

use futures::TryStreamExt as _;
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use seedlet_api::core::{BackupEntry, Seed, Shoot};
use seedlet_api::seedmanagement::ManagedSeed;
use seedlet_runtime::cache::Informer;
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::watch::{RunWith, Runner};
use tokio_util::sync::CancellationToken;

use crate::caches::GardenCaches;

pub use reconcile::{Error, MANAGED_SEED_NAMESPACE, SeedScoped, error_policy, reconcile};

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
    let caches = &garden.caches;
    tokio::join!(
        run_for::<Shoot>(ctx.clone(), caches, stop.clone()),
        run_for::<BackupEntry>(ctx.clone(), caches, stop.clone()),
        run_seeds(ctx.clone(), caches, stop.clone()),
        run_managed_seeds(ctx, caches, stop),
    );
}

/// Seeds, also triggered by the ManagedSeed `garden/<seed>` that registers one.
async fn run_seeds(ctx: Arc<Ctx>, caches: &GardenCaches, stop: CancellationToken) {
    // The ManagedSeeds of `garden` (the shared informer holds every namespace).
    let managed_seeds = caches
        .all::<ManagedSeed>()
        .touched_objects()
        .try_filter(|managed| {
            std::future::ready(managed.namespace().as_deref() == Some(MANAGED_SEED_NAMESPACE))
        });
    on_label_changes(&caches.all::<Seed>(), |_| None)
        .watches_stream(managed_seeds, |managed| {
            Some(ObjectRef::<Seed>::new(&managed.name_any()))
        })
        .run_with(
            Runner::new(NAME, stop).concurrency(CONCURRENT_SYNCS),
            reconcile::<Seed>,
            error_policy::<Seed>,
            ctx,
        )
        .await;
}

/// ManagedSeeds, also triggered when a Shoot changes seeds.
async fn run_managed_seeds(ctx: Arc<Ctx>, caches: &GardenCaches, stop: CancellationToken) {
    let controller = on_label_changes(&caches.all::<ManagedSeed>(), |managed| {
        managed.shoot_name().map(str::to_owned)
    });
    let store = controller.store();
    let shoots = crate::caches::changes(&caches.all::<Shoot>(), |shoot: &Shoot| {
        seedlet_runtime::triggers::key_of(&shoot.spec.seed_name)
    });
    controller
        .watches_stream(shoots, move |shoot: Shoot| managed_seeds_of(&store, &shoot))
        .run_with(
            Runner::new(NAME, stop).concurrency(CONCURRENT_SYNCS),
            reconcile::<ManagedSeed>,
            error_policy::<ManagedSeed>,
            ctx,
        )
        .await;
}

/// A cached controller over `api` triggered when an object's seed labels or its `reference` (the
/// object its hosting seed is read from) change: these reconciles read other objects, so status
/// updates (a Seed's heartbeat) must not trigger them.
fn on_label_changes<K: SeedScoped>(
    informer: &Informer<K>,
    reference: fn(&K) -> Option<String>,
) -> kube::runtime::Controller<K> {
    crate::caches::controller_on_transitions(
        informer,
        move |object: &K| {
            let labels: Vec<(&String, &String)> = object
                .labels()
                .iter()
                .filter(|(key, _)| key.starts_with(desired::SEED_LABEL_PREFIX))
                .collect();
            seedlet_runtime::triggers::key_of(&(labels, reference(object)))
        },
        |previous, current| previous != Some(current),
    )
}

/// Mapper: the ManagedSeeds that register `shoot`.
pub fn managed_seeds_of(store: &Store<ManagedSeed>, shoot: &Shoot) -> Vec<ObjectRef<ManagedSeed>> {
    store
        .state()
        .iter()
        .filter(|managed| {
            managed.namespace() == shoot.namespace()
                && managed.shoot_name() == Some(shoot.name_any().as_str())
        })
        .map(|managed| ObjectRef::from_obj(managed.as_ref()))
        .collect()
}

async fn run_for<K: SeedScoped>(ctx: Arc<Ctx>, caches: &GardenCaches, stop: CancellationToken) {
    crate::caches::controller(&caches.all::<K>())
        .run_with(
            Runner::new(NAME, stop).concurrency(CONCURRENT_SYNCS),
            reconcile::<K>,
            error_policy::<K>,
            ctx,
        )
        .await;
}
