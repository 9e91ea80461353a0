//! Shoot care (gardenlet `shoot-care`, spec gardenlet-shoot-flow §7): keeps the conditions
//! `APIServerAvailable`, `ControlPlaneHealthy`, `ObservabilityComponentsHealthy`, `EveryNodeReady`,
//! `SystemComponentsHealthy` and the constraints care owns in the `status` of this seed's Shoots
//! in the garden, computed from what the seed shows in each shoot's control-plane namespace:
//! extension health reports (judged by their controller's heartbeat Lease), ManagedResources and
//! control-plane Deployments. Parts that need the shoot's own API server are `Unknown`. Only
//! care's entries are written, as a status merge patch guarded by `resourceVersion`, and only when
//! they changed; `lastOperation` and `lastErrors` are never touched.
//!
//! Triggers: a Shoot's first sighting, its last operation turning Succeeded (not for a deletion),
//! its `status.seedName` getting set, its hibernation or technical ID changing; changes of the
//! health reports of extension objects and of ManagedResources in control-plane namespaces. Every
//! Shoot is looked at again each `controllers.shootCare.syncPeriod` (1 m; the runtime's resync,
//! spread over the period), which also bounds a pass.

pub mod checks;
pub mod constraints;
pub mod health;
pub mod merge;
pub mod observe;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod transitions;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::{self, BoxStream};
use k8s_openapi::api::core::v1::Namespace;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Api, ResourceExt};
use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::core::{ControllerInstallation, ControllerRegistration, Shoot};
use seedlet_api::extensions::{
    BackupEntry, ContainerRuntime, ControlPlane, Extension, ExtensionObject, Infrastructure,
    Network, OperatingSystemConfig, Worker,
};
use seedlet_api::names::technical_id;
use seedlet_api::resources::ManagedResource;
use seedlet_runtime::triggers::{changes, filter_transitions, key_of};

pub use reconcile::Error;

use crate::caches::GardenCaches;
use crate::cluster_shoot::stored_technical_id;
use crate::context::AgentContext;

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-care";

/// Dependencies of one run on one garden client.
pub struct ShootCare {
    /// Time source for condition timestamps.
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
    /// Field manager of our writes.
    pub field_manager: &'static str,
    /// Parallel reconciles (`controllers.shootCare.concurrentSyncs`).
    pub concurrency: u16,
    /// Client of the seed cluster.
    pub seed: kube::Client,
    /// Name of our Seed.
    pub seed_name: String,
    /// The garden client of this run.
    pub garden: kube::Client,
    /// This seed's ControllerInstallations (which extension controller serves a kind and type).
    pub installations: Store<ControllerInstallation>,
    /// ControllerRegistrations.
    pub registrations: Store<ControllerRegistration>,
    /// Requeue period and bound of one pass.
    pub sync_period: Duration,
    /// Heartbeat age after which extension reports are outdated; `None` disables the check.
    pub stale_after: Option<Duration>,
    /// How long a ManagedResource may be progressing.
    pub progressing_threshold: Option<Duration>,
    /// Condition thresholds by type.
    pub thresholds: BTreeMap<String, Duration>,
}

impl std::fmt::Debug for ShootCare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShootCare")
            .field("seed", &self.seed_name)
            .field("sync_period", &self.sync_period)
            .finish_non_exhaustive()
    }
}

/// Runs the controller until `ctx.stop` is cancelled, restarting its garden watches when the
/// garden client is swapped.
pub async fn run(agent: Arc<AgentContext>) {
    agent
        .run_on_garden(|caches| run_on(agent.clone(), caches))
        .await;
}

async fn run_on(agent: Arc<AgentContext>, caches: Arc<GardenCaches>) {
    let garden = caches.client().clone();
    let config = &agent.config.controllers.shoot_care;
    let stale = &config.stale_extension_health_checks;
    let shoot_informer = caches.shoots().await;
    let shoots = shoot_informer.store();
    let shoot_events = filter_transitions(shoot_informer.events(), shoot_view, shoot_needs_care);
    let installations = caches.installations().await.store();
    let registrations = caches.registrations().store();

    let ctx = Arc::new(ShootCare {
        clock: agent.clock.clone(),
        field_manager: agent.field_manager,
        concurrency: seedlet_runtime::watch::concurrency(config.concurrent_syncs.into()),
        seed: agent.seed.clone(),
        seed_name: agent.seed_name.clone(),
        garden,
        installations,
        registrations,
        sync_period: config.sync_period.as_std().max(Duration::from_secs(1)),
        stale_after: stale.enabled.then(|| stale.threshold.as_std()),
        progressing_threshold: config
            .managed_resource_progressing_threshold
            .map(|threshold| threshold.as_std()),
        thresholds: config
            .condition_thresholds
            .iter()
            .map(|threshold| {
                (
                    threshold.condition_type.clone(),
                    threshold.duration.as_std(),
                )
            })
            .collect(),
    });
    let by_namespace = shoots.clone();
    let controller = seedlet_runtime::controller::Triggers::for_stream(shoot_events, shoots)
        .watches_stream(seed_changes(&agent.seed), move |namespace: Namespace| {
            shoot_of_namespace(&by_namespace.state(), &namespace.name_any())
        });
    seedlet_runtime::controller::run(controller, ctx, agent.stop.clone(), agent.metrics.common())
        .await;
}

/// What care looks at to decide whether a Shoot update needs a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShootView {
    last_operation: Option<(LastOperationType, LastOperationState)>,
    seed_name_set: bool,
    hibernated: (bool, bool),
    technical_id: Option<String>,
}

/// The [`ShootView`] of a Shoot.
pub fn shoot_view(shoot: &Shoot) -> ShootView {
    let status = shoot.status.as_ref();
    ShootView {
        last_operation: status
            .and_then(|status| status.last_operation.as_ref())
            .map(|operation| (operation.type_, operation.state)),
        seed_name_set: status.is_some_and(|status| status.seed_name.is_some()),
        hibernated: (
            shoot.hibernation_enabled(),
            status.and_then(|status| status.hibernated).unwrap_or(false),
        ),
        technical_id: stored_technical_id(shoot).map(str::to_owned),
    }
}

/// Whether a Shoot event needs a pass (spec §7.1 plus the hibernation and technical ID, which a
/// seed agent learns from the Shoot only): its first sighting, its last operation going from
/// Processing to Succeeded (neither a deletion), `status.seedName` getting set, or a change of
/// its hibernation or technical ID.
pub fn shoot_needs_care(previous: Option<&ShootView>, current: &ShootView) -> bool {
    let Some(previous) = previous else {
        return true;
    };
    let finished = matches!(
        (&previous.last_operation, &current.last_operation),
        (Some((before, LastOperationState::Processing)), Some((after, LastOperationState::Succeeded)))
            if *before != LastOperationType::Delete && *after != LastOperationType::Delete
    );
    finished
        || (!previous.seed_name_set && current.seed_name_set)
        || previous.hibernated != current.hibernated
        || previous.technical_id != current.technical_id
}

/// Mapper: the Shoot whose control-plane namespace is `namespace`.
pub fn shoot_of_namespace(shoots: &[Arc<Shoot>], namespace: &str) -> Option<ObjectRef<Shoot>> {
    shoots
        .iter()
        .find(|shoot| stored_technical_id(shoot) == Some(namespace))
        .map(|shoot| seedlet_runtime::controller::object_ref(shoot.as_ref()))
}

/// Control-plane namespaces (as bare Namespace objects, which the controller's triggers need)
/// whose extension health reports or ManagedResources changed.
fn seed_changes(seed: &kube::Client) -> BoxStream<'static, Result<Namespace, watcher::Error>> {
    let managed_resources = changes(
        Api::<ManagedResource>::all(seed.clone()),
        watcher::Config::default(),
        managed_resource_change,
    )
    .filter_map(|event| {
        futures::future::ready(namespace_of(event, |mr| mr.metadata.namespace.clone()))
    });
    stream::select_all([
        managed_resources.boxed(),
        extension_changes::<Extension>(seed),
        extension_changes::<ContainerRuntime>(seed),
        extension_changes::<ControlPlane>(seed),
        extension_changes::<Infrastructure>(seed),
        extension_changes::<Network>(seed),
        extension_changes::<OperatingSystemConfig>(seed),
        extension_changes::<Worker>(seed),
        extension_changes::<BackupEntry>(seed),
    ])
    .boxed()
}

fn extension_changes<K: ExtensionObject>(
    seed: &kube::Client,
) -> BoxStream<'static, Result<Namespace, watcher::Error>> {
    changes(
        Api::<K>::all(seed.clone()),
        watcher::Config::default(),
        extension_change,
    )
    .filter_map(|event| {
        futures::future::ready(namespace_of(event, |object: &K| {
            match object.meta().namespace.clone() {
                Some(namespace) => Some(namespace),
                // The cluster-scoped BackupEntry is named after its shoot's namespace.
                None => object
                    .meta()
                    .name
                    .as_deref()
                    .and_then(technical_id::control_plane_namespace_of_backup_entry)
                    .map(str::to_owned),
            }
        }))
    })
    .boxed()
}

/// The shoot namespace of an event's object, errors passed on, other namespaces dropped.
fn namespace_of<K>(
    event: Result<K, watcher::Error>,
    namespace: impl Fn(&K) -> Option<String>,
) -> Option<Result<Namespace, watcher::Error>> {
    match event {
        Ok(object) => namespace(&object)
            .filter(|namespace| technical_id::is_shoot_namespace(namespace))
            .map(|name| {
                let mut namespace = Namespace::default();
                namespace.metadata.name = Some(name);
                Ok(namespace)
            }),
        Err(error) => Some(Err(error)),
    }
}

/// ManagedResource changes that matter: generation, the `Resources*` conditions, labels and the
/// ignore annotation.
pub fn managed_resource_change(mr: &ManagedResource) -> String {
    key_of(&(
        mr.metadata.generation,
        mr.status
            .as_ref()
            .and_then(|status| status.observed_generation),
        condition_states(mr.conditions()),
        &mr.metadata.labels,
        mr.metadata
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(seedlet_api::names::managed_resources::IGNORE)),
    ))
}

/// Extension object changes that matter: the reported health conditions.
pub fn extension_change<K: ExtensionObject>(object: &K) -> String {
    let reported = object
        .extension_status()
        .map(|status| status.conditions.as_slice())
        .unwrap_or_default();
    key_of(&condition_states(reported))
}

fn condition_states(conditions: &[seedlet_api::Condition]) -> Vec<(&str, &str, &str, &str)> {
    conditions
        .iter()
        .map(|c| {
            (
                c.type_.as_str(),
                c.status.as_str(),
                c.reason.as_str(),
                c.message.as_str(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
