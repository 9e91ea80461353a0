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

use std::marker::PhantomData;

use futures::TryStreamExt as _;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};
use seedlet_api::core::{BackupEntry, Seed, Shoot};
use seedlet_api::seedmanagement::ManagedSeed;
use seedlet_runtime::cache::Informer;
use seedlet_runtime::controller::Triggers;

use crate::caches::GardenCaches;
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

pub use reconcile::{Error, MANAGED_SEED_NAMESPACE, SeedScoped};

/// Controller name (logs, metrics label).
pub const NAME: &str = "seed-labels";
/// Parallel reconciles per kind.
pub const CONCURRENT_SYNCS: u16 = 5;

/// The controller of the seed labels of one kind `K` (all four share [`NAME`]).
pub struct SeedLabels<K> {
    /// Garden client.
    pub client: kube::Client,
    kind: PhantomData<fn() -> K>,
}

impl<K> SeedLabels<K> {
    /// The controller of `K` writing through `client`.
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            kind: PhantomData,
        }
    }
}

impl<K: Resource<DynamicType = ()>> std::fmt::Debug for SeedLabels<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeedLabels")
            .field("kind", &K::kind(&()))
            .finish_non_exhaustive()
    }
}

/// A kind with seed labels and what triggers its reconciles.
pub trait Labelled: SeedScoped {
    /// Its triggers over the shared informers `caches`.
    fn triggers(caches: &GardenCaches) -> Triggers<Self>;
}

impl<K: Labelled> GardenReconciler for SeedLabels<K> {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        Some(Self::new(garden.client.clone()))
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<K> {
        K::triggers(caches)
    }
}

impl Labelled for Shoot {
    fn triggers(caches: &GardenCaches) -> Triggers<Self> {
        crate::caches::controller(&caches.all::<Self>())
    }
}

impl Labelled for BackupEntry {
    fn triggers(caches: &GardenCaches) -> Triggers<Self> {
        crate::caches::controller(&caches.all::<Self>())
    }
}

/// Seeds, also triggered by the ManagedSeed `garden/<seed>` that registers one.
impl Labelled for Seed {
    fn triggers(caches: &GardenCaches) -> Triggers<Self> {
        // The ManagedSeeds of `garden` (the shared informer holds every namespace).
        let managed_seeds = caches
            .all::<ManagedSeed>()
            .touched_objects()
            .try_filter(|managed| {
                std::future::ready(managed.namespace().as_deref() == Some(MANAGED_SEED_NAMESPACE))
            });
        on_label_changes(&caches.all::<Seed>(), |_| None).watches_stream(managed_seeds, |managed| {
            Some(ObjectRef::<Seed>::new(&managed.name_any()))
        })
    }
}

/// ManagedSeeds, also triggered when a Shoot changes seeds.
impl Labelled for ManagedSeed {
    fn triggers(caches: &GardenCaches) -> Triggers<Self> {
        let controller = on_label_changes(&caches.all::<ManagedSeed>(), |managed| {
            managed.shoot_name().map(str::to_owned)
        });
        let store = controller.store();
        let shoots = crate::caches::changes(&caches.all::<Shoot>(), |shoot: &Shoot| {
            seedlet_runtime::triggers::key_of(&shoot.spec.seed_name)
        });
        controller.watches_stream(shoots, move |shoot: Shoot| managed_seeds_of(&store, &shoot))
    }
}

/// A cached controller over `api` triggered when an object's seed labels or its `reference` (the
/// object its hosting seed is read from) change: these reconciles read other objects, so status
/// updates (a Seed's heartbeat) must not trigger them.
fn on_label_changes<K: SeedScoped>(
    informer: &Informer<K>,
    reference: fn(&K) -> Option<String>,
) -> Triggers<K> {
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
