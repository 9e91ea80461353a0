//! Bastion controller (gardenlet `bastion`, spec §3): for each `operations.gardener.cloud`
//! Bastion of this seed, keeps the extension `Bastion` of the same name in the shoot's
//! control-plane namespace (`Shoot.status.technicalID`: provider type, user-data script with the
//! user's key, ingress ranges) and reports `BastionReady`, `status.ingress` and
//! `observedGeneration`. Deletion sets `BastionReady=False DeletionInProgress` first, copies the
//! force-deletion annotation to the extension object and waits until it is gone.
//!
//! Triggers: garden Bastions with `spec.seedName` = this seed (selected by the garden where it
//! can, see [`crate::garden_scope::bastions`]; creation, deletion, generation);
//! seed extension Bastions through the LOC trigger (→ the core Bastion of the same name, found
//! in the cache). Workers: `controllers.bastion.concurrentSyncs` (20).

pub mod desired;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use seedlet_api::extensions;
use seedlet_api::operations::Bastion;
use seedlet_runtime::triggers::key_of;

pub use reconcile::Error;

use crate::context::AgentContext;
use crate::extension_sync::trigger;

/// Controller name (logs, metrics label).
pub const NAME: &str = "bastion";
/// Parallel reconciles when `controllers.bastion.concurrentSyncs` is unset.
pub const DEFAULT_CONCURRENT_SYNCS: i64 = 20;

/// Dependencies of one run on one garden client.
pub struct Bastions {
    /// Time source for timestamps.
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
    /// Field manager of our writes.
    pub field_manager: &'static str,
    /// Parallel reconciles (its `concurrentSyncs`).
    pub concurrency: u16,
    /// Client of the seed cluster.
    pub seed: kube::Client,
    /// Name of our Seed.
    pub seed_name: String,
    /// The garden client of this run.
    pub garden: kube::Client,
}

impl std::fmt::Debug for Bastions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bastions")
            .field("seed", &self.seed_name)
            .finish_non_exhaustive()
    }
}

/// Runs the controller until `ctx.stop` is cancelled, restarting its watches when the garden
/// client is swapped.
pub async fn run(agent: Arc<AgentContext>) {
    let garden = agent.garden.clone();
    garden
        .run_with_current(|client| run_on(agent.clone(), client))
        .await;
}

async fn run_on(agent: Arc<AgentContext>, garden: kube::Client) {
    let concurrency = agent
        .config
        .controllers
        .bastion
        .as_ref()
        .and_then(|config| config.concurrent_syncs)
        .unwrap_or(DEFAULT_CONCURRENT_SYNCS);
    let seed_name = agent.seed_name.clone();
    let (reader, writer) = reflector::store::<Bastion>();
    let filter_seed = seed_name.clone();
    let scope = crate::garden_scope::bastions(&garden, &seed_name).await;
    let bastions = seedlet_runtime::triggers::filter_changes(
        watcher::watcher(Api::<Bastion>::all(garden.clone()), scope)
            .backoff(seedlet_runtime::watch::watch_backoff())
            .modify(seedlet_runtime::watch::slim)
            .reflect(writer),
        bastion_change,
    )
    .try_filter(move |bastion| {
        futures::future::ready(bastion.spec.seed_name.as_deref() == Some(filter_seed.as_str()))
    });
    let extension_events = trigger::changes(
        watcher::watcher(
            Api::<extensions::Bastion>::all(agent.seed.clone()),
            watcher::Config::default(),
        )
        .backoff(seedlet_runtime::watch::watch_backoff()),
        |object: &extensions::Bastion| {
            trigger::state_of(
                object,
                object
                    .status
                    .as_ref()
                    .and_then(|s| s.last_operation.as_ref()),
            )
        },
    );
    let ctx = Arc::new(Bastions {
        clock: agent.clock.clone(),
        field_manager: agent.field_manager,
        concurrency: seedlet_runtime::watch::concurrency(concurrency),
        seed: agent.seed.clone(),
        seed_name: agent.seed_name.clone(),
        garden,
    });
    let by_name = reader.clone();
    let controller = seedlet_runtime::controller::Triggers::for_stream(bastions, reader)
        .watches_stream(
            extension_events.map(Ok::<_, watcher::Error>),
            move |object: extensions::Bastion| {
                bastions_named(&by_name, &seed_name, &object.name_any())
            },
        );
    seedlet_runtime::controller::run(controller, ctx, agent.stop.clone(), agent.metrics.common())
        .await;
}

/// Change key of a Bastion: generation, deletion, and the force-deletion annotation (which
/// gardener-apiserver turns into a generation bump).
pub fn bastion_change(bastion: &Bastion) -> String {
    key_of(&(
        bastion.uid(),
        bastion.metadata.generation,
        bastion.metadata.deletion_timestamp.is_some(),
        bastion.annotations().get(desired::FORCE_DELETION),
    ))
}

/// Mapper: the Bastions of `seed` named like an extension object.
pub fn bastions_named(
    bastions: &Store<Bastion>,
    seed: &str,
    name: &str,
) -> Vec<ObjectRef<Bastion>> {
    bastions
        .state()
        .iter()
        .filter(|b| b.name_any() == name && b.spec.seed_name.as_deref() == Some(seed))
        .map(|b| seedlet_runtime::controller::object_ref(b.as_ref()))
        .collect()
}
