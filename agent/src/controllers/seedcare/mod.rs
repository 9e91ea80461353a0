//! Seed care controller (gardenlet `seed-care`, spec §5.3): keeps the Seed condition
//! `SeedSystemComponentsHealthy` from the ManagedResources with a `spec.class` in the seed's
//! `garden` and `istio-system` namespaces (first failure wins; `controllers.seedCare.
//! conditionThresholds` delay False as Progressing), and `EmergencyStopShootReconciliations`
//! from the Seed annotation `shoot.gardener.cloud/emergency-stop-reconciliations=true`.
//! Conditions are written only on change.
//!
//! Triggers: our Seed (creation, its lastOperation reaching Succeeded, the emergency-stop
//! annotation) and seed ManagedResources labelled `gardener.cloud/role=seed-system-component`
//! (creation, deletion, generation, the `Resources*` conditions); always requeued after
//! `controllers.seedCare.syncPeriod`. Stale pods are not cleaned up (upstream's optional extra).

pub mod health;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::Api;
use kube::ResourceExt;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::core::Seed;
use seedlet_api::names::{labels, namespaces};
use seedlet_api::resources::ManagedResource;
use seedlet_runtime::triggers::{changes, filter_changes, key_of};

pub use reconcile::Error;

use crate::caches::GardenCaches;
use crate::context::AgentContext;

/// Controller name (logs, metrics label).
pub const NAME: &str = "seed-care";

/// Dependencies of one run on one garden client.
pub struct SeedCare {
    /// Time source for timestamps.
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
    /// Field manager of our writes.
    pub field_manager: &'static str,
    /// Client of the seed cluster.
    pub seed: kube::Client,
    /// Name of our Seed.
    pub seed_name: String,
    /// The garden client of this run.
    pub garden: kube::Client,
    /// Requeue period.
    pub sync_period: Duration,
    /// The `SeedSystemComponentsHealthy` threshold, if configured.
    pub threshold: Option<Duration>,
}

impl std::fmt::Debug for SeedCare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeedCare")
            .field("seed", &self.seed_name)
            .field("sync_period", &self.sync_period)
            .finish_non_exhaustive()
    }
}

/// Runs the controller until `ctx.stop` is cancelled, restarting its watches when the garden
/// client is swapped.
pub async fn run(agent: Arc<AgentContext>) {
    agent
        .run_on_garden(|caches| run_on(agent.clone(), caches))
        .await;
}

async fn run_on(agent: Arc<AgentContext>, caches: Arc<GardenCaches>) {
    let garden = caches.client().clone();
    let config = &agent.config.controllers.seed_care;
    let sync_period = config.sync_period.as_std().max(Duration::from_secs(1));
    let threshold = seedlet_config::threshold_for(
        &config.condition_thresholds,
        health::SYSTEM_COMPONENTS_HEALTHY,
    )
    .map(|duration| duration.as_std());
    let informer = caches.seed();
    let reader = informer.store();
    let seeds = filter_changes(informer.events(), seed_change);
    let seed_name = agent.seed_name.clone();
    let managed_resources = changes(
        Api::<ManagedResource>::all(agent.seed.clone()),
        watcher::Config::default().labels(&format!(
            "{}={}",
            labels::ROLE,
            labels::ROLE_SEED_SYSTEM_COMPONENT
        )),
        managed_resource_change,
    )
    .filter(|mr| {
        futures::future::ready(mr.as_ref().is_ok_and(|mr| {
            matches!(
                mr.namespace().as_deref(),
                Some(namespaces::GARDEN | "istio-system")
            )
        }))
    });
    let ctx = Arc::new(SeedCare {
        clock: agent.clock.clone(),
        field_manager: agent.field_manager,
        seed: agent.seed.clone(),
        seed_name: agent.seed_name.clone(),
        garden,
        sync_period,
        threshold,
    });
    let controller = seedlet_runtime::controller::Triggers::for_stream(seeds, reader)
        .watches_stream(managed_resources, move |_: ManagedResource| {
            Some(ObjectRef::<Seed>::new(&seed_name))
        });
    seedlet_runtime::controller::run(controller, ctx, agent.stop.clone(), agent.metrics.common())
        .await;
}

/// Seed events that need a care pass: creation, a lastOperation reaching Succeeded (not for a
/// deletion), and the emergency-stop annotation.
pub fn seed_change(seed: &Seed) -> String {
    let succeeded = seed
        .status
        .as_ref()
        .and_then(|s| s.last_operation.as_ref())
        .is_some_and(|op| {
            op.state == LastOperationState::Succeeded && op.type_ != LastOperationType::Delete
        });
    key_of(&(
        seed.uid(),
        succeeded,
        seed.annotations().get(health::EMERGENCY_STOP_ANNOTATION),
    ))
}

/// ManagedResource events that matter: generation and the `Resources*` conditions.
pub fn managed_resource_change(mr: &ManagedResource) -> String {
    let checked: Vec<_> = mr
        .conditions()
        .iter()
        .map(|c| {
            (
                c.type_.clone(),
                c.status.to_string(),
                c.reason.clone(),
                c.message.clone(),
            )
        })
        .collect();
    key_of(&(
        mr.metadata.generation,
        mr.status.as_ref().and_then(|s| s.observed_generation),
        checked,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn seed_change_fires_on_success_and_the_annotation_only() {
        let seed = |state: &str, annotated: bool| -> Seed {
            let mut value = json!({"metadata": {"name": "s", "uid": "u"},
                "spec": {"provider": {"type": "t", "region": "r"}, "networks": {"pods": "a", "services": "b"}},
                "status": {"lastOperation": {"type": "Reconcile", "state": state, "progress": 0,
                    "description": "", "lastUpdateTime": "2024-01-01T00:00:00Z"}}});
            if annotated {
                value["metadata"]["annotations"] =
                    json!({health::EMERGENCY_STOP_ANNOTATION: "true"});
            }
            serde_json::from_value(value).unwrap()
        };
        assert_ne!(
            seed_change(&seed("Processing", false)),
            seed_change(&seed("Succeeded", false))
        );
        assert_eq!(
            seed_change(&seed("Processing", false)),
            seed_change(&seed("Error", false))
        );
        assert_ne!(
            seed_change(&seed("Succeeded", false)),
            seed_change(&seed("Succeeded", true))
        );
    }
}
