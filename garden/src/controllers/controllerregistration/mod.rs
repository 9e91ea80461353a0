//! ControllerRegistration seed reconciler (`controllerinstallation-seed`, spec §3.1): per Seed in
//! the garden, computes which extension controllers the Seed needs (from its Shoots,
//! BackupBuckets/BackupEntries and its own spec, the registrations' deployment policies and seed
//! selectors, and installations still `Required`) and creates, updates or deletes the Seed's
//! ControllerInstallations in the garden accordingly.
//!
//! Triggered by Seed spec/label/annotation/deletion changes, ControllerRegistrations and
//! ControllerDeployments (→ every Seed), `garden` ConfigMaps/Secrets labelled
//! `gardener.cloud/role=resource-reference` (→ every Seed), BackupBuckets/BackupEntries, Shoots and
//! ControllerInstallations (→ their Seed). Purely event-driven like upstream: no periodic requeue.
//!
//! Registrations, deployments, shoots and backups are read from the process's shared informers
//! ([`Caches`], [`crate::caches`]), and a Seed's installations with a `spec.seedRef.name` field selector: listing
//! every kind in full per Seed made one registration change cost seeds × installations objects
//! (500 seeds, 30 000 installations: minutes of scheduling and ~200 MiB in flight).

pub mod desired;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod wanted;

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use seedlet_api::conditions;
use seedlet_api::core::{
    BackupBucket, BackupEntry, ControllerDeployment, ControllerInstallation,
    ControllerRegistration, Seed, Shoot,
};
use seedlet_api::names::{condition_types, labels, namespaces};
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::watch::concurrency;

pub use reconcile::Error;
use seedlet_runtime::triggers::{changes, key_of};

use crate::caches::{GardenCaches, changes as shared_changes, controller_on_changes};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name (logs, metrics label).
pub const NAME: &str = "controllerinstallation-seed";
/// Default parallel reconciles (`controllers.controllerRegistration.concurrentSyncs`).
pub const DEFAULT_CONCURRENT_SYNCS: u16 = 5;

/// What scheduling reads: the stores of the shared informers whose changes trigger it.
#[derive(Clone)]
pub struct Caches {
    /// Every ControllerRegistration.
    pub registrations: Store<ControllerRegistration>,
    /// Every ControllerDeployment.
    pub deployments: Store<ControllerDeployment>,
    /// Every Shoot.
    pub shoots: Store<Shoot>,
    /// Every BackupBucket.
    pub buckets: Store<BackupBucket>,
    /// Every BackupEntry.
    pub entries: Store<BackupEntry>,
}

impl Caches {
    /// The stores of the shared informers in `caches`.
    pub fn of(caches: &GardenCaches) -> Self {
        Self {
            registrations: caches.all::<ControllerRegistration>().store(),
            deployments: caches.all::<ControllerDeployment>().store(),
            shoots: caches.all::<Shoot>().store(),
            buckets: caches.all::<BackupBucket>().store(),
            entries: caches.all::<BackupEntry>().store(),
        }
    }

    /// Waits until every cache has its first complete list (deciding on partial caches would
    /// delete installations of registrations not yet seen).
    pub async fn ready(&self) -> bool {
        listed(&self.registrations).await
            && listed(&self.deployments).await
            && listed(&self.shoots).await
            && listed(&self.buckets).await
            && listed(&self.entries).await
    }
}

/// How long scheduling waits for a cache's first list before it says so (and waits on).
const LIST_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// Waits until `store` has its first list; `false` when its informer ended first.
async fn listed<K>(store: &Store<K>) -> bool
where
    K: kube::Resource<DynamicType = ()> + Clone + 'static,
{
    if let Ok(ready) = tokio::time::timeout(LIST_PATIENCE, store.wait_until_ready()).await {
        return ready.is_ok();
    }
    tracing::warn!(
        controller = NAME,
        kind = %K::kind(&()),
        "the shared cache has no complete list yet; scheduling waits for it"
    );
    store.wait_until_ready().await.is_ok()
}

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct Scheduling {
    /// Garden client.
    pub client: kube::Client,
    /// Cached inputs.
    pub caches: Caches,
    /// Parallel reconciles (`concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for Scheduling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduling")
            .field("concurrency", &self.concurrency)
            .finish_non_exhaustive()
    }
}

impl GardenReconciler for Scheduling {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        let concurrent_syncs = garden
            .config
            .controllers
            .controller_registration
            .concurrent_syncs
            .max(1);
        Some(Self {
            client: garden.client.clone(),
            caches: Caches::of(&garden.caches),
            concurrency: concurrency(i64::from(concurrent_syncs)),
        })
    }

    /// Triggers over `caches`, whose stores `self.caches` must be.
    fn triggers(&self, caches: &GardenCaches) -> Triggers<Seed> {
        let client = self.client.clone();
        let seed_informer = caches.all::<Seed>();
        let reader = seed_informer.store();
        let all = reader.clone();
        let all_for_deployments = reader.clone();
        let all_for_config_maps = reader.clone();
        let all_for_secrets = reader;
        let references = watcher::Config::default().labels(&format!(
            "{}={}",
            labels::ROLE,
            labels::ROLE_RESOURCE_REFERENCE
        ));
        controller_on_changes(&seed_informer, seed_key)
            .watches_stream(
                shared_changes(&caches.all::<ControllerRegistration>(), |r| {
                    key_of(&(&r.spec, r.metadata.deletion_timestamp.is_some()))
                }),
                move |_: ControllerRegistration| all_seeds(&all),
            )
            .watches_stream(
                shared_changes(&caches.all::<ControllerDeployment>(), |d| key_of(&d.spec)),
                move |_: ControllerDeployment| all_seeds(&all_for_deployments),
            )
            .watches_stream(
                changes(
                    Api::<ConfigMap>::namespaced(client.clone(), namespaces::GARDEN),
                    references.clone(),
                    |c| c.metadata.resource_version.clone().unwrap_or_default(),
                ),
                move |_: ConfigMap| all_seeds(&all_for_config_maps),
            )
            .watches_stream(
                changes(
                    Api::<Secret>::namespaced(client.clone(), namespaces::GARDEN),
                    references,
                    |s| s.metadata.resource_version.clone().unwrap_or_default(),
                ),
                move |_: Secret| all_seeds(&all_for_secrets),
            )
            .watches_stream(
                shared_changes(&caches.all::<BackupBucket>(), |b| {
                    key_of(&(&b.spec.seed_name, &b.spec.provider.type_))
                }),
                backup_bucket_seed,
            )
            .watches_stream(
                shared_changes(&caches.all::<BackupEntry>(), |e| {
                    key_of(&(&e.spec.seed_name, &e.spec.bucket_name))
                }),
                backup_entry_seed,
            )
            .watches_stream(
                shared_changes(&caches.all::<Shoot>(), shoot_key),
                shoot_seeds,
            )
            // Installations: no reader keeps them (one per Seed and registration), the shared
            // store-less watch.
            .watches_stream(
                caches.installations().changes(installation_key),
                installation_seed,
            )
    }
}

/// Change key of a Seed: spec, labels, annotations and whether it is being deleted.
pub fn seed_key(seed: &Seed) -> String {
    key_of(&(
        &seed.spec,
        &seed.metadata.labels,
        &seed.metadata.annotations,
        seed.metadata.deletion_timestamp.is_some(),
    ))
}

/// Change key of a Shoot: the fields its wanted kind/types come from, and its seed names.
pub fn shoot_key(shoot: &Shoot) -> String {
    key_of(&(
        &shoot.spec.seed_name,
        shoot
            .status
            .as_ref()
            .and_then(|status| status.seed_name.as_ref()),
        &shoot.spec.provider.type_,
        &shoot.spec.provider.workers,
        &shoot.spec.extensions,
        &shoot.spec.dns,
        shoot
            .spec
            .networking
            .as_ref()
            .and_then(|networking| networking.type_.as_ref()),
    ))
}

/// Change key of a ControllerInstallation: its Seed and `Required` status (creation passes as the
/// first sighting).
pub fn installation_key(installation: &ControllerInstallation) -> String {
    let required = conditions::find(installation.conditions(), condition_types::REQUIRED)
        .map(|c| c.status.to_string());
    key_of(&(installation.seed_name(), required))
}

/// Every Seed in the store.
pub fn all_seeds(store: &Store<Seed>) -> Vec<ObjectRef<Seed>> {
    store
        .state()
        .iter()
        .map(|seed| ObjectRef::from_obj(seed.as_ref()))
        .collect()
}

/// The Seed of a BackupBucket (`spec.seedName`).
pub fn backup_bucket_seed(bucket: BackupBucket) -> Option<ObjectRef<Seed>> {
    bucket.spec.seed_name.as_deref().map(ObjectRef::new)
}

/// The Seed of a BackupEntry (`spec.seedName`).
pub fn backup_entry_seed(entry: BackupEntry) -> Option<ObjectRef<Seed>> {
    entry.spec.seed_name.as_deref().map(ObjectRef::new)
}

/// The Seeds of a Shoot: `spec.seedName` and `status.seedName` (both during a migration).
pub fn shoot_seeds(shoot: Shoot) -> Vec<ObjectRef<Seed>> {
    let names: BTreeSet<&str> = shoot
        .spec
        .seed_name
        .as_deref()
        .into_iter()
        .chain(
            shoot
                .status
                .as_ref()
                .and_then(|status| status.seed_name.as_deref()),
        )
        .collect();
    names.into_iter().map(ObjectRef::new).collect()
}

/// The Seed of a ControllerInstallation (`spec.seedRef.name`).
pub fn installation_seed(installation: ControllerInstallation) -> Option<ObjectRef<Seed>> {
    installation.seed_name().map(ObjectRef::new)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn shoot_maps_to_spec_and_status_seed_once_each() {
        let shoot: Shoot =
            serde_json::from_value(json!({"metadata": {"name": "a", "namespace": "garden-dev"},
            "spec": {"region": "r", "provider": {"type": "aws"}, "seedName": "new"},
            "status": {"seedName": "old"}}))
            .unwrap();
        let seeds: Vec<String> = shoot_seeds(shoot).into_iter().map(|r| r.name).collect();
        assert_eq!(seeds, ["new", "old"]);
        let unscheduled: Shoot =
            serde_json::from_value(json!({"metadata": {"name": "a", "namespace": "garden-dev"},
            "spec": {"region": "r", "provider": {"type": "aws"}}}))
            .unwrap();
        assert!(shoot_seeds(unscheduled).is_empty());
    }

    #[test]
    fn backups_and_installations_map_to_their_seed() {
        let bucket: BackupBucket = serde_json::from_value(json!({"metadata": {"name": "b"},
            "spec": {"provider": {"type": "s3", "region": "r"}, "seedName": "s1"}}))
        .unwrap();
        assert_eq!(
            backup_bucket_seed(bucket).map(|r| r.name).as_deref(),
            Some("s1")
        );
        let entry: BackupEntry =
            serde_json::from_value(json!({"metadata": {"name": "e", "namespace": "n"},
            "spec": {"bucketName": "b"}}))
            .unwrap();
        assert!(backup_entry_seed(entry).is_none());
        let installation: ControllerInstallation =
            serde_json::from_value(json!({"metadata": {"name": "ci"},
            "spec": {"registrationRef": {"name": "r"}, "seedRef": {"name": "s2"}}}))
            .unwrap();
        assert_eq!(
            installation_seed(installation).map(|r| r.name).as_deref(),
            Some("s2")
        );
    }

    #[test]
    fn seed_key_ignores_status_but_not_labels() {
        let seed: Seed = serde_json::from_value(json!({"metadata": {"name": "s"},
            "spec": {"provider": {"type": "local", "region": "r"}, "networks": {"pods": "p", "services": "s"}}}))
        .unwrap();
        let mut with_status = seed.clone();
        with_status.status = Some(Default::default());
        with_status.metadata.resource_version = Some("42".into());
        assert_eq!(seed_key(&seed), seed_key(&with_status));
        let mut labelled = seed.clone();
        labelled.metadata.labels = Some([("a".to_owned(), "b".to_owned())].into());
        assert_ne!(seed_key(&seed), seed_key(&labelled));
    }

    #[test]
    fn installation_key_changes_only_with_required_status() {
        let make = |conditions: serde_json::Value| -> ControllerInstallation {
            serde_json::from_value(json!({"metadata": {"name": "ci"},
                "spec": {"registrationRef": {"name": "r"}, "seedRef": {"name": "s"}},
                "status": {"conditions": conditions}}))
            .unwrap()
        };
        let condition = |type_: &str, status: &str| {
            json!({"type": type_, "status": status, "reason": "r", "message": "m",
                "lastTransitionTime": "2024-01-01T00:00:00Z", "lastUpdateTime": "2024-01-01T00:00:00Z"})
        };
        let base = make(json!([]));
        let healthy = make(json!([condition("Healthy", "True")]));
        let required = make(json!([condition("Required", "True")]));
        assert_eq!(installation_key(&base), installation_key(&healthy));
        assert_ne!(installation_key(&base), installation_key(&required));
    }
}
