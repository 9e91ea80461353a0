//! Seed controller (gardenlet `seed`, spec §5.2): watches our Seed in the garden and keeps the
//! status fields the agent owns current with JSON merge patches on `/status` — `lastOperation`,
//! `clusterIdentity` (the seed cluster's ConfigMap `kube-system/cluster-identity`, created when
//! missing), `gardener{id,name,version}`, `kubernetesVersion` (the seed API server's `/version`),
//! `observedGeneration`, `capacity`/`allocatable` (`resources` of the configuration) — and runs
//! the flow of [`flow`]: `seed-<name>` must exist in the garden, the minimum Kubernetes version
//! (1.32), the `gardener` finalizer, the labels of the seed's `garden` namespace and the core
//! BackupBucket for `spec.backup`. Deletion waits for Shoots and BackupBuckets ([`delete`]).
//!
//! A Seed whose `status.clusterIdentity` is another seed cluster's belongs to another agent: the
//! controller writes nothing, reports the clash and looks again later ([`another_agent`]).
//!
//! The ControllerInstallation controller waits for `status.clusterIdentity`. Triggered when the
//! Seed's generation or one of these fields changes; requeued every `controllers.seed.syncPeriod`.

pub mod another_agent;
pub mod delete;
pub mod flow;
pub mod io;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::WatchStreamExt;
use seedlet_api::core::{GardenerInfo, Seed};

pub use io::Error;
pub use reconcile::{DesiredStatus, status_patch};

use crate::caches::GardenCaches;
use crate::context::AgentContext;

/// Controller name (logs, metrics label).
pub const NAME: &str = "seed-status";

/// The Seed status controller on one garden client: what its reconcile needs.
pub struct SeedStatus {
    /// Time source for timestamps.
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
    /// The component configuration.
    pub config: Arc<seedlet_config::GardenletConfiguration>,
    /// Events in the garden.
    pub events: seedlet_runtime::events::Recorder,
    /// Whether the minimum seed Kubernetes version is enforced.
    pub kubernetes_version_check: bool,
    /// Client of the seed cluster.
    pub seed: kube::Client,
    /// Name of our Seed.
    pub seed_name: String,
    /// The garden client of this run.
    pub garden: kube::Client,
    /// Requeue period (`controllers.seed.syncPeriod`).
    pub sync_period: Duration,
    /// The `status.gardener` this process reports.
    pub gardener: GardenerInfo,
    /// Clashes with an agent of another seed cluster registering the same Seed.
    pub clashes: another_agent::Clashes,
    /// Shared with the heartbeat, which stops renewing the Lease while another agent holds the Seed.
    pub claim: Arc<crate::seed_claim::SeedClaim>,
}

impl std::fmt::Debug for SeedStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeedStatus")
            .field("seed", &self.seed_name)
            .field("sync_period", &self.sync_period)
            .finish_non_exhaustive()
    }
}

/// Runs the controller until `ctx.stop` is cancelled, restarting its watch when the garden client
/// is swapped.
pub async fn run(agent: Arc<AgentContext>) {
    let gardener = crate::gardener_identity::gardener_info();
    agent
        .run_on_garden(|caches| run_on(agent.clone(), caches, gardener.clone()))
        .await;
}

async fn run_on(agent: Arc<AgentContext>, caches: Arc<GardenCaches>, gardener: GardenerInfo) {
    let garden = caches.client().clone();
    let sync_period = agent.config.controllers.seed.sync_period.as_std();
    let informer = caches.seed();
    let reader = informer.store();
    let seeds = informer
        .applied_objects()
        .predicate_filter(owned_fields_hash, Default::default());
    let reconciler = Arc::new(SeedStatus {
        clock: agent.clock.clone(),
        config: agent.config.clone(),
        events: agent.events.clone(),
        kubernetes_version_check: agent.kubernetes_version_check,
        seed: agent.seed.clone(),
        seed_name: agent.seed_name.clone(),
        garden,
        sync_period,
        gardener,
        clashes: another_agent::Clashes::default(),
        claim: agent.seed_claim.clone(),
    });
    seedlet_runtime::controller::run(
        seedlet_runtime::controller::Triggers::for_stream(seeds, reader),
        reconciler,
        agent.stop.clone(),
        agent.metrics.common(),
    )
    .await;
}

/// Predicate: the generation, deletion and the status fields this controller owns, so heartbeats
/// and other writers' status changes do not trigger it.
pub fn owned_fields_hash(seed: &Seed) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let status = seed.status.as_ref();
    let owned = serde_json::to_string(&(
        seed.metadata.generation,
        seed.metadata.deletion_timestamp.is_some(),
        status.and_then(|s| s.cluster_identity.as_ref()),
        status.and_then(|s| s.gardener.as_ref()),
        status.and_then(|s| s.kubernetes_version.as_ref()),
        status.and_then(|s| s.observed_generation),
    ))
    .ok()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    owned.hash(&mut hasher);
    Some(hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_fields_hash_ignores_conditions_but_not_generation() {
        let mut seed = Seed::default();
        seed.metadata.generation = Some(1);
        let base = owned_fields_hash(&seed);
        let mut with_conditions = seed.clone();
        with_conditions.status = Some(Default::default());
        with_conditions.metadata.resource_version = Some("9".into());
        assert_eq!(owned_fields_hash(&with_conditions), base);
        seed.metadata.generation = Some(2);
        assert_ne!(owned_fields_hash(&seed), base);
    }
}
