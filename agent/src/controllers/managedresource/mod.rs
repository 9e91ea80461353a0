//! The embedded ManagedResource applier (spec §5): watches ManagedResources of class `seed` in all
//! namespaces of the seed, the Secrets they reference and every kind it has applied; decodes the
//! manifests, server-side applies them (field manager `seedlet-resource-manager`), prunes objects
//! that left the set and writes `ResourcesApplied`/`ResourcesHealthy`/`ResourcesProgressing`,
//! `status.resources`, the checksum and `observedGeneration` in the seed. Requeues every
//! `controllers.managedResource.syncPeriod`; switched by `controllers.managedResource.enabled`
//! (off where gardener-resource-manager serves class `seed`).
//!
//! Differences to gardener-resource-manager, on purpose: objects are written with server-side
//! apply instead of get/merge/update (so label and annotation ownership follows managed fields),
//! health is evaluated in the same pass from the objects the apply returned, `equivalences` and
//! Brotli-compressed manifests are not supported, and there is no secret garbage collector.

pub mod apply;
pub mod cleanup;
pub mod error;
pub mod manifests;
pub mod prune;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod status;
pub mod watches;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{PredicateConfig, WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};

use seedlet_api::names::{field_managers, managed_resources};
use seedlet_api::resources::ManagedResource;

use crate::context::AgentContext;

pub use error::Error;

/// Controller name (metrics label, logs).
pub const NAME: &str = "managedresource";

/// Dependencies of the applier, valid for one leadership term.
pub struct Applier {
    /// Time source for timestamps.
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
    /// Parallel reconciles (its `concurrentSyncs`).
    pub concurrency: u16,
    /// Client of the seed cluster.
    pub seed: kube::Client,
    /// Discovery cache of applied kinds.
    pub kinds: apply::KindCache,
    /// Watches on applied kinds.
    pub watches: watches::Watches,
    /// Requeue period after a successful reconcile.
    pub sync_period: Duration,
    /// Field manager of applied objects.
    pub field_manager: &'static str,
}

impl std::fmt::Debug for Applier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Applier")
            .field("sync_period", &self.sync_period)
            .field("field_manager", &self.field_manager)
            .finish_non_exhaustive()
    }
}

impl Applier {
    /// The seed client.
    pub fn client(&self) -> Client {
        self.seed.clone()
    }
}

/// Runs the applier until `ctx.stop` is cancelled; returns at once when it is disabled.
pub async fn run(ctx: Arc<AgentContext>) {
    let config = &ctx.config.controllers.managed_resource;
    if !config.enabled {
        tracing::info!("managed resource applier disabled");
        ctx.stop.cancelled().await;
        return;
    }
    let sync_period: Duration = config.sync_period.into();
    let concurrency = seedlet_runtime::watch::concurrency(i64::from(config.concurrent_syncs));
    let (sender, receiver) = futures::channel::mpsc::unbounded();
    let applier = Arc::new(Applier {
        clock: ctx.clock.clone(),
        concurrency,
        seed: ctx.seed.clone(),
        kinds: apply::KindCache::default(),
        watches: watches::Watches::new(ctx.seed.clone(), sender, ctx.stop.clone()),
        sync_period: if sync_period.is_zero() {
            Duration::from_secs(60)
        } else {
            sync_period
        },
        field_manager: field_managers::RESOURCE_MANAGER,
    });

    let api: Api<ManagedResource> = Api::all(ctx.seed.clone());
    let (reader, writer) = reflector::store();
    let managed_resources = watcher(api, watcher::Config::default())
        .backoff(seedlet_runtime::watch::watch_backoff())
        .reflect(writer)
        .applied_objects()
        .predicate_filter(relevant_change, PredicateConfig::default());
    let secrets = watcher(
        Api::<PartialObjectMeta<Secret>>::all(ctx.seed.clone()),
        watcher::Config::default(),
    )
    .backoff(seedlet_runtime::watch::watch_backoff())
    .touched_objects();
    let store = reader.clone();
    let controller = seedlet_runtime::controller::Triggers::for_stream(managed_resources, reader)
        .watches_stream(secrets, move |secret| {
            referencing_managed_resources(&store, &secret)
        })
        .reconcile_on(receiver);
    seedlet_runtime::controller::run(controller, applier, ctx.stop.clone(), ctx.metrics.common())
        .await;
}

/// Predicate of ManagedResource events that need a reconcile: generation (spec), annotations
/// (ignore, operations), finalizers, deletion and class. Status-only writes (our own) are dropped.
pub fn relevant_change(mr: &ManagedResource) -> Option<u64> {
    let mut hasher = DefaultHasher::new();
    mr.metadata.generation.hash(&mut hasher);
    mr.annotations().hash(&mut hasher);
    mr.finalizers().hash(&mut hasher);
    mr.metadata.deletion_timestamp.is_some().hash(&mut hasher);
    mr.spec.class.hash(&mut hasher);
    Some(hasher.finish())
}

/// Maps a Secret event to the ManagedResources of class `seed` in its namespace referencing it.
pub fn referencing_managed_resources(
    store: &Store<ManagedResource>,
    secret: &PartialObjectMeta<Secret>,
) -> Vec<ObjectRef<ManagedResource>> {
    let namespace = secret.namespace();
    let name = secret.name_any();
    store
        .state()
        .iter()
        .filter(|mr| mr.namespace() == namespace)
        .filter(|mr| mr.spec.class.as_deref() == Some(managed_resources::CLASS_SEED))
        .filter(|mr| {
            mr.spec
                .secret_refs
                .iter()
                .any(|reference| reference.name == name)
        })
        .map(|mr| seedlet_runtime::controller::object_ref(mr.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use seedlet_api::common::LocalReference;
    use seedlet_api::resources::ManagedResourceSpec;

    use super::*;

    fn mr(namespace: &str, name: &str, class: Option<&str>, secrets: &[&str]) -> ManagedResource {
        let mut mr = ManagedResource::new(
            name,
            ManagedResourceSpec {
                class: class.map(Into::into),
                secret_refs: secrets
                    .iter()
                    .map(|s| LocalReference { name: (*s).into() })
                    .collect(),
                ..ManagedResourceSpec::default()
            },
        );
        mr.metadata.namespace = Some(namespace.into());
        mr
    }

    #[test]
    fn secret_maps_to_seed_class_managed_resources_referencing_it() {
        let (reader, mut writer) = reflector::store::<ManagedResource>();
        for object in [
            mr("garden", "a", Some("seed"), &["s1"]),
            mr("garden", "b", Some("seed"), &["s2"]),
            mr("other", "c", Some("seed"), &["s1"]),
            mr("garden", "d", None, &["s1"]),
        ] {
            writer.apply_watcher_event(&watcher::Event::Apply(object));
        }
        let mut secret: PartialObjectMeta<Secret> = PartialObjectMeta::default();
        secret.metadata.name = Some("s1".into());
        secret.metadata.namespace = Some("garden".into());
        let targets: Vec<_> = referencing_managed_resources(&reader, &secret)
            .into_iter()
            .map(|r| r.name)
            .collect();
        assert_eq!(targets, ["a"]);
    }

    #[test]
    fn status_only_changes_are_not_relevant() {
        let a = mr("garden", "a", Some("seed"), &["s1"]);
        let mut b = a.clone();
        b.status = Some(Default::default());
        assert_eq!(relevant_change(&a), relevant_change(&b));
        b.metadata.generation = Some(2);
        assert_ne!(relevant_change(&a), relevant_change(&b));
    }
}
