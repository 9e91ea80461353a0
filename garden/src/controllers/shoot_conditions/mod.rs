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

use std::sync::Arc;

use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::names::namespaces;
use seedlet_api::seedmanagement::ManagedSeed;
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::triggers::{changes, key_of};
use seedlet_runtime::watch::{RunWith, Runner};
use tokio_util::sync::CancellationToken;

pub use reconcile::{Error, error_policy, reconcile};

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-conditions";

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
    let concurrency = garden.config.controllers.shoot_conditions.concurrent_syncs;
    run(ctx, concurrency, garden.stop.clone()).await;
}

/// Runs the controller until `shutdown` is cancelled.
pub async fn run(ctx: Arc<Ctx>, concurrent_syncs: u32, shutdown: CancellationToken) {
    let client = ctx.client.clone();
    let (managed_seeds, writer) = reflector::store::<ManagedSeed>();
    let managed_seed_events = watcher::watcher(
        Api::<ManagedSeed>::namespaced(client.clone(), namespaces::GARDEN),
        watcher::Config::default(),
    )
    .backoff(seedlet_runtime::watch::watch_backoff())
    .modify(seedlet_runtime::watch::slim)
    .reflect(writer)
    .touched_objects();
    let seeds = changes(
        Api::<Seed>::all(client.clone()),
        watcher::Config::default(),
        |seed: &Seed| key_of(&seed.conditions()),
    );
    seedlet_runtime::triggers::controller_on_transitions(
        Api::<Shoot>::all(client),
        watcher::Config::default(),
        |_: &Shoot| (),
        |previous: Option<&()>, _: &()| previous.is_none(),
    )
    .watches_stream(managed_seed_events, |managed_seed: ManagedSeed| {
        shoot_of(&managed_seed)
    })
    .watches_stream(seeds, move |seed: Seed| {
        shoot_of_seed(&managed_seeds, &seed.name_any())
    })
    .run_with(
        Runner::new(NAME, shutdown).concurrency(concurrent_syncs),
        reconcile,
        error_policy,
        ctx,
    )
    .await;
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
