//! ControllerInstallation care controller (spec §2.8): watches the garden's installations of this
//! seed and the seed's ManagedResources `garden/*` labelled `controllerinstallation-name`
//! (creation, deletion, changes of generation or of the `Resources*` conditions), and keeps
//! `Installed`/`Healthy`/`Progressing` in the garden. Requeues every
//! `controllers.controllerInstallationCare.syncPeriod`; restarts on a garden client swap.

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{PredicateConfig, WatchStreamExt, watcher};
use kube::{Api, ResourceExt};

use seedlet_api::core::ControllerInstallation;
use seedlet_api::names::{condition_types, labels, namespaces};
use seedlet_api::resources::ManagedResource;

use crate::caches::GardenCaches;
use crate::context::AgentContext;
use seedlet_runtime::metrics::Metrics;

pub use reconcile::Error;

/// Controller name (metrics label, logs).
pub const NAME: &str = "controllerinstallation-care";

/// Dependencies of the care controller.
pub struct Care {
    /// Time source for timestamps.
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
    /// Events in the garden.
    pub events: seedlet_runtime::events::Recorder,
    /// Hot-swappable garden client.
    pub garden: seedlet_bootstrap::GardenClient,
    /// Parallel reconciles (its `concurrentSyncs`).
    pub concurrency: u16,
    /// Client of the seed cluster.
    pub seed: kube::Client,
    /// Name of our Seed.
    pub seed_name: String,
    /// Cancelled when the leadership term ends.
    pub stop: tokio_util::sync::CancellationToken,
    /// Requeue period.
    pub sync_period: Duration,
}

impl std::fmt::Debug for Care {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Care")
            .field("seed", &self.seed_name)
            .finish_non_exhaustive()
    }
}

/// Runs the care controller until `ctx.stop` is cancelled.
pub async fn run(ctx: Arc<AgentContext>) {
    let config = &ctx.config.controllers.controller_installation_care;
    let sync_period: Duration = config.sync_period.into();
    let concurrency = seedlet_runtime::watch::concurrency(i64::from(config.concurrent_syncs));
    let care = Arc::new(Care {
        clock: ctx.clock.clone(),
        events: ctx.events.clone(),
        garden: ctx.garden.clone(),
        concurrency,
        seed: ctx.seed.clone(),
        seed_name: ctx.seed_name.clone(),
        stop: ctx.stop.clone(),
        sync_period: if sync_period.is_zero() {
            Duration::from_secs(30)
        } else {
            sync_period
        },
    });
    let metrics = ctx.metrics.common();
    ctx.run_on_garden(|caches| run_with(caches, care.clone(), metrics.clone()))
        .await;
}

async fn run_with(caches: Arc<GardenCaches>, care: Arc<Care>, metrics: Arc<Metrics>) {
    let ctx = care.clone();
    let seed_name = ctx.seed_name.clone();
    let informer = caches.installations().await;
    let reader = informer.store();
    let installations = informer
        .applied_objects()
        .try_filter(move |ci| futures::future::ready(ci.seed_name() == Some(seed_name.as_str())))
        .predicate_filter(installation_change, PredicateConfig::default());
    let selector = labels::CONTROLLER_INSTALLATION_NAME.to_owned();
    let managed_resources = watcher(
        Api::<ManagedResource>::namespaced(ctx.seed.clone(), namespaces::GARDEN),
        watcher::Config::default().labels(&selector),
    )
    .backoff(seedlet_runtime::watch::watch_backoff())
    .touched_objects()
    .predicate_filter(managed_resource_change, PredicateConfig::default())
    .filter_map(|mr| futures::future::ready(mr.ok().and_then(|mr| installation_of(&mr))));
    let controller = seedlet_runtime::controller::Triggers::for_stream(installations, reader)
        .reconcile_on(managed_resources);
    seedlet_runtime::controller::run(controller, care, ctx.stop.clone(), metrics).await;
}

/// Installation events that need a care pass: creation and deletion state (status writes dropped).
pub fn installation_change(ci: &ControllerInstallation) -> Option<u64> {
    let mut hasher = DefaultHasher::new();
    ci.uid().hash(&mut hasher);
    ci.metadata.deletion_timestamp.is_some().hash(&mut hasher);
    Some(hasher.finish())
}

/// ManagedResource events that matter: generations and status/reason/message of the three
/// `Resources*` conditions; deletion is seen as a change of the uid set by the predicate cache.
pub fn managed_resource_change(mr: &ManagedResource) -> Option<u64> {
    let mut hasher = DefaultHasher::new();
    mr.uid().hash(&mut hasher);
    mr.metadata.generation.hash(&mut hasher);
    mr.status
        .as_ref()
        .and_then(|s| s.observed_generation)
        .hash(&mut hasher);
    mr.metadata.deletion_timestamp.is_some().hash(&mut hasher);
    for type_ in [
        condition_types::RESOURCES_APPLIED,
        condition_types::RESOURCES_HEALTHY,
        condition_types::RESOURCES_PROGRESSING,
    ] {
        if let Some(condition) = seedlet_api::conditions::find(mr.conditions(), type_) {
            (
                condition.status.as_str(),
                &condition.reason,
                &condition.message,
            )
                .hash(&mut hasher);
        }
    }
    Some(hasher.finish())
}

/// The installation a ManagedResource belongs to (label `controllerinstallation-name`).
pub fn installation_of(mr: &ManagedResource) -> Option<ObjectRef<ControllerInstallation>> {
    mr.labels()
        .get(labels::CONTROLLER_INSTALLATION_NAME)
        .filter(|name| !name.is_empty())
        .map(|name| ObjectRef::new(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn managed_resource_maps_to_installation_by_label() {
        let mut mr = ManagedResource::new("x", Default::default());
        assert!(installation_of(&mr).is_none());
        mr.metadata.labels = Some(
            [(
                labels::CONTROLLER_INSTALLATION_NAME.to_owned(),
                "ci-1".to_owned(),
            )]
            .into(),
        );
        assert_eq!(installation_of(&mr).unwrap().name, "ci-1");
        mr.metadata.labels = Some(
            [(
                labels::CONTROLLER_INSTALLATION_NAME.to_owned(),
                String::new(),
            )]
            .into(),
        );
        assert!(installation_of(&mr).is_none());
    }

    #[test]
    fn only_condition_and_generation_changes_of_managed_resources_matter() {
        let now = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        let mut a = ManagedResource::new("x", Default::default());
        a.metadata.resource_version = Some("1".into());
        let mut b = a.clone();
        b.metadata.resource_version = Some("2".into());
        assert_eq!(managed_resource_change(&a), managed_resource_change(&b));
        let condition =
            seedlet_api::Condition::initialized(condition_types::RESOURCES_HEALTHY, now);
        b.status = Some(seedlet_api::resources::ManagedResourceStatus {
            conditions: vec![condition],
            ..Default::default()
        });
        assert_ne!(managed_resource_change(&a), managed_resource_change(&b));
    }
}
