//! Finalizer controllers of the garden (spec §3.2): Seeds and ControllerRegistrations carry
//! `core.gardener.cloud/controllerregistration`, ControllerDeployments
//! `core.gardener.cloud/controllerdeployment`; each is removed only when nothing references the
//! object any more (ControllerInstallations of the Seed or of the registration; registrations
//! listing the deployment). The Seed controller also keeps the Seed's garden namespace
//! `seed-<name>` (owned by the Seed, label `gardener.cloud/role=seed`), which the agent waits for
//! during registration.
//!
//! Triggered by changes of the object's finalizers/deletion and by ControllerInstallation (→ Seed,
//! registration) and ControllerRegistration (→ deployment) events; live objects are re-checked
//! every [`RESYNC_PERIOD`] as a safety net (e.g. a deleted `seed-<name>` namespace).

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::time::Duration;

use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use seedlet_api::core::{
    ControllerDeployment, ControllerInstallation, ControllerRegistration, Seed,
};
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::triggers::key_of;

pub use reconcile::{Error, Finalized, Finalizer};

use crate::caches::{GardenCaches, controller, controller_on_changes};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Seed finalizer controller (metrics label).
pub const SEED_NAME: &str = "seed-controllerregistration-finalizer";
/// ControllerRegistration finalizer controller (metrics label).
pub const REGISTRATION_NAME: &str = "controllerregistration-finalizer";
/// ControllerDeployment finalizer controller (metrics label).
pub const DEPLOYMENT_NAME: &str = "controllerdeployment-finalizer";
/// Re-check period of live objects.
pub const RESYNC_PERIOD: Duration = Duration::from_secs(600);
/// Delay before a failed (or blocked) reconcile is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);

/// Parallel reconciles of each (not configurable upstream).
pub const CONCURRENCY: u16 = 5;

/// The Seed finalizer controller.
pub type SeedFinalizer = Finalizer<Seed>;
/// The ControllerRegistration finalizer controller.
pub type RegistrationFinalizer = Finalizer<ControllerRegistration>;
/// The ControllerDeployment finalizer controller.
pub type DeploymentFinalizer = Finalizer<ControllerDeployment>;

/// A finalized kind and what triggers its controller.
pub trait Watched: Finalized {
    /// Its triggers over the shared informers `caches` (plus watches of its own over `client`).
    fn triggers(client: &kube::Client, caches: &GardenCaches) -> Triggers<Self>;
}

impl<K: Watched> GardenReconciler for Finalizer<K> {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        Some(Self::new(garden.client.clone()))
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<K> {
        K::triggers(&self.client, caches)
    }
}

impl Watched for Seed {
    fn triggers(_client: &kube::Client, caches: &GardenCaches) -> Triggers<Self> {
        controller_on_changes(&caches.all::<Seed>(), lifecycle_key).watches_stream(
            caches.installations().changes(|ci| key_of(&ci.seed_name())),
            installation_seed,
        )
    }
}

impl Watched for ControllerRegistration {
    fn triggers(_client: &kube::Client, caches: &GardenCaches) -> Triggers<Self> {
        controller(&caches.all::<ControllerRegistration>()).watches_stream(
            caches
                .installations()
                .changes(|ci| key_of(&ci.spec.registration_ref.name)),
            installation_registration,
        )
    }
}

impl Watched for ControllerDeployment {
    fn triggers(_client: &kube::Client, caches: &GardenCaches) -> Triggers<Self> {
        controller(&caches.all::<ControllerDeployment>()).watches_stream(
            crate::caches::changes(&caches.all::<ControllerRegistration>(), |r| {
                key_of(&r.deployment_name())
            }),
            registration_deployments,
        )
    }
}

/// Change key for finalizer work: whether the object is deleting and its finalizers.
pub fn lifecycle_key<K: Resource>(object: &K) -> String {
    key_of(&(
        object.meta().deletion_timestamp.is_some(),
        object.finalizers(),
    ))
}

/// The Seed of a ControllerInstallation.
pub fn installation_seed(installation: ControllerInstallation) -> Option<ObjectRef<Seed>> {
    installation.seed_name().map(ObjectRef::new)
}

/// The registration of a ControllerInstallation.
pub fn installation_registration(
    installation: ControllerInstallation,
) -> Option<ObjectRef<ControllerRegistration>> {
    Some(ObjectRef::new(&installation.spec.registration_ref.name))
}

/// The deployments a ControllerRegistration references.
pub fn registration_deployments(
    registration: ControllerRegistration,
) -> Vec<ObjectRef<ControllerDeployment>> {
    registration
        .spec
        .deployment
        .iter()
        .flat_map(|deployment| &deployment.deployment_refs)
        .map(|reference| ObjectRef::new(&reference.name))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn registration_maps_to_its_deployments() {
        let registration: ControllerRegistration =
            serde_json::from_value(json!({"metadata": {"name": "r"},
            "spec": {"deployment": {"deploymentRefs": [{"name": "d"}]}}}))
            .unwrap();
        let refs: Vec<String> = registration_deployments(registration)
            .into_iter()
            .map(|r| r.name)
            .collect();
        assert_eq!(refs, ["d"]);
    }

    #[test]
    fn lifecycle_key_changes_with_deletion_and_finalizers_only() {
        let mut seed = Seed::default();
        let base = lifecycle_key(&seed);
        seed.metadata.resource_version = Some("5".into());
        assert_eq!(lifecycle_key(&seed), base);
        seed.metadata.finalizers = Some(vec!["x".into()]);
        assert_ne!(lifecycle_key(&seed), base);
    }
}
