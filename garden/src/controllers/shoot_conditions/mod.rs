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

use futures::TryStreamExt as _;
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::names::namespaces;
use seedlet_api::seedmanagement::ManagedSeed;
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::triggers::key_of;
use seedlet_runtime::watch::{RunWith, Runner};
use tokio_util::sync::CancellationToken;

pub use reconcile::{Error, error_policy, reconcile};

use crate::caches::{GardenCaches, changes, controller_on_transitions};

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
    run_on(ctx, &garden.caches, concurrency, garden.stop.clone()).await;
}

/// Runs the controller on informers of its own until `shutdown` is cancelled (a test runs one
/// controller alone this way).
pub async fn run(ctx: Arc<Ctx>, concurrent_syncs: u32, shutdown: CancellationToken) {
    let caches = GardenCaches::new(ctx.client.clone(), &shutdown);
    run_on(ctx, &caches, concurrent_syncs, shutdown).await;
}

/// Runs the controller on the shared informers `caches` until `shutdown` is cancelled.
pub async fn run_on(
    ctx: Arc<Ctx>,
    caches: &GardenCaches,
    concurrent_syncs: u32,
    shutdown: CancellationToken,
) {
    let managed_seed_informer = caches.all::<ManagedSeed>();
    let managed_seeds = managed_seed_informer.store();
    // ManagedSeeds live in `garden`; the shared informer holds every namespace.
    let managed_seed_events = managed_seed_informer
        .touched_objects()
        .try_filter(|managed_seed| {
            std::future::ready(managed_seed.namespace().as_deref() == Some(namespaces::GARDEN))
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
