//! ManagedSeedSets (`managedseedset`, spec §12): keeps `spec.replicas` replicas `<set>-<n>`, each
//! a Shoot made from `shootTemplate` and, once the Shoot is reconciled, a ManagedSeed made from
//! `template` — one pending replica at a time, retrying failed Shoots up to `maxShootRetries`,
//! scaling in the lowest-priority deletable replica first. Existing replicas are never updated.
//! Writes Shoots, ManagedSeeds, the set's status and finalizer `gardener`, and Events, in the
//! garden. Deploying an agent into a ManagedSeed's Shoot is out of scope (no gardenlet
//! deployment): a ManagedSeed's Seed must be registered by an agent started separately.
//!
//! Triggered by a set's first sighting and generation or deletion changes, by owned Shoots
//! (deletion, last operation, observed generation, status label), owned ManagedSeeds
//! (deletion, registration) and Seeds of ManagedSeeds (deletion, readiness); requeued every
//! `controllers.managedSeedSet.syncPeriod`, which is also the reconcile timeout.

pub mod desired;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod replica;

use std::sync::Arc;
use std::time::Duration;

use kube::api::ObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::names::condition_types;
use seedlet_api::seedmanagement::{ManagedSeed, ManagedSeedSet};
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::triggers::key_of;
use seedlet_runtime::watch::concurrency;

use crate::caches::{GardenCaches, changes};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

pub use reconcile::Error;

/// Controller name (logs, metrics label).
pub const NAME: &str = "managedseedset";
/// Component of the Events this controller records.
pub const EVENT_COMPONENT: &str = "managedseedset-controller";

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct ManagedSeedSets {
    /// Garden client.
    pub client: kube::Client,
    /// Retries of a replica's failed Shoot.
    pub max_shoot_retries: i32,
    /// Requeue period per set; also the reconcile timeout.
    pub sync_period: Duration,
    /// Time source (`pendingReplica.since`).
    pub clock: Arc<dyn Clock>,
    /// Events on the set.
    pub events: seedlet_runtime::events::Recorder,
    /// Parallel reconciles (`concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for ManagedSeedSets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagedSeedSets")
            .field("max_shoot_retries", &self.max_shoot_retries)
            .finish_non_exhaustive()
    }
}

impl GardenReconciler for ManagedSeedSets {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        let config = &garden.config.controllers.managed_seed_set;
        Some(Self {
            client: garden.client.clone(),
            max_shoot_retries: i32::try_from(config.max_shoot_retries).unwrap_or(i32::MAX),
            sync_period: config.sync_period.as_std(),
            clock: garden.clock.clone(),
            events: garden.events.named(EVENT_COMPONENT),
            concurrency: concurrency(i64::from(config.concurrent_syncs)),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<ManagedSeedSet> {
        let managed_seed_informer = caches.all::<ManagedSeed>();
        let managed_seeds = managed_seed_informer.store();
        let managed_seed_events = changes(&managed_seed_informer, managed_seed_key);
        let shoots = changes(&caches.all::<Shoot>(), shoot_key);
        let seeds = changes(&caches.all::<Seed>(), seed_key);
        // Only this controller reads ManagedSeedSets: a watch and store of its own.
        seedlet_runtime::triggers::controller_on_transitions(
            Api::<ManagedSeedSet>::all(self.client.clone()),
            watcher::Config::default(),
            |set: &ManagedSeedSet| {
                (
                    set.metadata.generation,
                    set.metadata.deletion_timestamp.is_some(),
                )
            },
            |previous: Option<&(Option<i64>, bool)>, current: &(Option<i64>, bool)| {
                previous != Some(current)
            },
        )
        .watches_stream(shoots, |shoot: Shoot| owning_set(&shoot.metadata))
        .watches_stream(managed_seed_events, |managed_seed: ManagedSeed| {
            owning_set(&managed_seed.metadata)
        })
        .watches_stream(seeds, move |seed: Seed| {
            set_of_seed(&managed_seeds, &seed.name_any())
        })
    }
}

/// The ManagedSeedSet that controls an object, from its controller owner reference.
pub fn owning_set(metadata: &ObjectMeta) -> Option<ObjectRef<ManagedSeedSet>> {
    let namespace = metadata.namespace.as_deref()?;
    metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|owner| owner.kind == "ManagedSeedSet" && owner.controller == Some(true))
        .map(|owner| ObjectRef::new(&owner.name).within(namespace))
}

/// The set owning the ManagedSeed `garden/<seed>`, if the cache knows it.
fn set_of_seed(
    managed_seeds: &Store<ManagedSeed>,
    seed: &str,
) -> Option<ObjectRef<ManagedSeedSet>> {
    let key = ObjectRef::new(seed).within(seedlet_api::names::namespaces::GARDEN);
    owning_set(&managed_seeds.get(&key)?.metadata)
}

/// What of a Shoot matters to its set.
pub fn shoot_key(shoot: &Shoot) -> String {
    let status = shoot.status.as_ref();
    key_of(&(
        shoot.metadata.deletion_timestamp.is_some(),
        status
            .and_then(|s| s.last_operation.as_ref())
            .map(|op| (op.type_, op.state)),
        status.and_then(|s| s.observed_generation) == shoot.metadata.generation,
        shoot
            .labels()
            .get(seedlet_api::names::shoot_lifecycle::STATUS_LABEL),
    ))
}

fn managed_seed_key(managed_seed: &ManagedSeed) -> String {
    let status = managed_seed.status.as_ref();
    key_of(&(
        managed_seed.metadata.deletion_timestamp.is_some(),
        status
            .and_then(|s| seedlet_api::conditions::find(&s.conditions, replica::SEED_REGISTERED))
            .map(|c| c.status.to_string()),
        status.and_then(|s| s.observed_generation) == managed_seed.metadata.generation,
    ))
}

fn seed_key(seed: &Seed) -> String {
    let statuses: Vec<(String, String)> = [
        condition_types::GARDENLET_READY,
        condition_types::SEED_SYSTEM_COMPONENTS_HEALTHY,
        condition_types::BACKUP_BUCKETS_READY,
    ]
    .iter()
    .filter_map(|type_| seedlet_api::conditions::find(seed.conditions(), type_))
    .map(|c| (c.type_.clone(), c.status.to_string()))
    .collect();
    key_of(&(
        seed.metadata.deletion_timestamp.is_some(),
        statuses,
        seed.status.as_ref().and_then(|s| s.observed_generation),
        seed.metadata.generation,
    ))
}
