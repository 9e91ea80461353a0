//! Shoot conditions (`shoot-conditions`, spec §7.2): for Shoots registered as Seeds through a
//! ManagedSeed, merges the Seed's conditions into the Shoot's `status.conditions` (after the
//! Shoot's own five types), and drops seed-derived conditions once the Shoot is no managed seed.
//! Writes only the Shoot's conditions, in the garden.
//!
//! Triggered by a Shoot's first sighting, by ManagedSeeds (→ their Shoot) and by Seeds whose
//! conditions changed (→ the Shoot of the ManagedSeed `garden/<seed>`); no periodic requeue.

pub mod merge;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use futures::TryStreamExt as _;
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::names::namespaces;
use seedlet_api::seedmanagement::ManagedSeed;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::triggers::key_of;
use seedlet_runtime::watch::concurrency;

pub use reconcile::Error;

use crate::caches::{GardenCaches, changes, controller_on_transitions};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-conditions";

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct ShootConditions {
    /// Garden client.
    pub client: kube::Client,
    /// Parallel reconciles (`concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for ShootConditions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShootConditions").finish_non_exhaustive()
    }
}

impl GardenReconciler for ShootConditions {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        Some(Self {
            client: garden.client.clone(),
            concurrency: concurrency(i64::from(
                garden.config.controllers.shoot_conditions.concurrent_syncs,
            )),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Shoot> {
        let managed_seed_informer = caches.all::<ManagedSeed>();
        let managed_seeds = managed_seed_informer.store();
        // ManagedSeeds live in `garden`; the shared informer holds every namespace.
        let managed_seed_events =
            managed_seed_informer
                .touched_objects()
                .try_filter(|managed_seed| {
                    std::future::ready(
                        managed_seed.namespace().as_deref() == Some(namespaces::GARDEN),
                    )
                });
        let seeds = changes(&caches.all::<Seed>(), |seed: &Seed| {
            key_of(&seed.conditions())
        });
        controller_on_transitions(
            &caches.all::<Shoot>(),
            |_: &Shoot| (),
            |previous: Option<&()>, _: &()| previous.is_none(),
        )
        .watches_stream(managed_seed_events, |managed_seed: ManagedSeed| {
            shoot_of(&managed_seed)
        })
        .watches_stream(seeds, move |seed: Seed| {
            shoot_of_seed(&managed_seeds, &seed.name_any())
        })
    }
}

/// The Shoot a ManagedSeed registers.
pub fn shoot_of(managed_seed: &ManagedSeed) -> Option<ObjectRef<Shoot>> {
    let namespace = managed_seed.namespace()?;
    Some(ObjectRef::new(managed_seed.shoot_name()?).within(&namespace))
}

/// The Shoot of the ManagedSeed `garden/<seed>`, if the cache knows one.
fn shoot_of_seed(managed_seeds: &Store<ManagedSeed>, seed: &str) -> Option<ObjectRef<Shoot>> {
    let key = ObjectRef::new(seed).within(namespaces::GARDEN);
    shoot_of(managed_seeds.get(&key)?.as_ref())
}
