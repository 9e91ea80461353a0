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

use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Api, ResourceExt};
use seedlet_api::core::{BackupEntry, Seed, Shoot};
use seedlet_api::seedmanagement::ManagedSeed;
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::watch::{RunWith, Runner};

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
    tokio::join!(
        run_for::<Shoot>(ctx.clone(), stop.clone()),
        run_for::<BackupEntry>(ctx.clone(), stop.clone()),
        run_seeds(ctx.clone(), stop.clone()),
        run_managed_seeds(ctx, stop),
    );
}

/// Seeds, also triggered by the ManagedSeed `garden/<seed>` that registers one.
async fn run_seeds(ctx: Arc<Ctx>, stop: tokio_util::sync::CancellationToken) {
    let managed_seeds: Api<ManagedSeed> =
        Api::namespaced(ctx.client.clone(), MANAGED_SEED_NAMESPACE);
    on_label_changes(Api::<Seed>::all(ctx.client.clone()), |_| None)
        .watches(managed_seeds, watcher::Config::default(), |managed| {
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
async fn run_managed_seeds(ctx: Arc<Ctx>, stop: tokio_util::sync::CancellationToken) {
    let controller = on_label_changes(Api::<ManagedSeed>::all(ctx.client.clone()), |managed| {
        managed.shoot_name().map(str::to_owned)
    });
    let store = controller.store();
    let shoots = seedlet_runtime::triggers::changes(
        Api::<Shoot>::all(ctx.client.clone()),
        watcher::Config::default(),
        |shoot: &Shoot| seedlet_runtime::triggers::key_of(&shoot.spec.seed_name),
    );
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
    api: Api<K>,
    reference: fn(&K) -> Option<String>,
) -> kube::runtime::Controller<K> {
    seedlet_runtime::triggers::controller_on_transitions(
        api,
        watcher::Config::default(),
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
