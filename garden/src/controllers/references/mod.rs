//! The generic reference reconciler (spec §2.8): `shoot-reference`, `seed-reference` and
//! `controllerdeployment-reference`. Secrets, ConfigMaps and WorkloadIdentities a Shoot, Seed
//! or ControllerDeployment references carry `gardener.cloud/reference-protection` while any
//! referrer needs them, and the referrer carries it while it references something.
//!
//! One computation across kinds decides what is still referenced in a namespace (the Shoots
//! there, plus Seeds and ControllerDeployments for `garden`), so one referrer's reconcile never
//! strips protection another kind still needs (the [QUIRK] of upstream's per-kind computation).
//! Pure decisions are in [`refs`].

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod refs;

use std::fmt::Debug;
use std::marker::PhantomData;

use kube::{Api, ResourceExt};
use seedlet_api::core::{ControllerDeployment, Seed, Shoot};
use seedlet_api::names::finalizers;
use seedlet_config::garden::GardenControllers;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::watch::concurrency;
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use reconcile::Error;
use refs::Kind;

use crate::caches::GardenCaches;
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Finalizer on referrers and on the objects they reference.
pub const REFERENCE_PROTECTION: &str = "gardener.cloud/reference-protection";

/// What a reference controller reads and writes through.
pub struct Ctx {
    /// Garden client.
    pub client: kube::Client,
}

impl Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").finish_non_exhaustive()
    }
}

/// A kind whose references are protected.
pub trait Referrer:
    kube::Resource<DynamicType = ()>
    + Clone
    + DeserializeOwned
    + Serialize
    + Debug
    + Send
    + Sync
    + 'static
{
    /// Controller name.
    const NAME: &'static str;
    /// Which table row applies.
    const KIND: Kind;

    /// The API of the object's namespace (cluster-scoped kinds ignore it).
    fn api(client: &kube::Client, namespace: Option<&str>) -> Api<Self>;

    /// The controller's `concurrentSyncs`.
    fn concurrent_syncs(controllers: &GardenControllers) -> u32;
}

impl Referrer for Shoot {
    const NAME: &'static str = "shoot-reference";
    const KIND: Kind = Kind::Shoot;

    fn api(client: &kube::Client, namespace: Option<&str>) -> Api<Self> {
        Api::namespaced(client.clone(), namespace.unwrap_or_default())
    }
    fn concurrent_syncs(controllers: &GardenControllers) -> u32 {
        controllers.shoot_reference.concurrent_syncs
    }
}

impl Referrer for Seed {
    const NAME: &'static str = "seed-reference";
    const KIND: Kind = Kind::Seed;

    fn api(client: &kube::Client, _: Option<&str>) -> Api<Self> {
        Api::all(client.clone())
    }
    fn concurrent_syncs(controllers: &GardenControllers) -> u32 {
        controllers.seed_reference.concurrent_syncs
    }
}

impl Referrer for ControllerDeployment {
    const NAME: &'static str = "controllerdeployment-reference";
    const KIND: Kind = Kind::ControllerDeployment;

    fn api(client: &kube::Client, _: Option<&str>) -> Api<Self> {
        Api::all(client.clone())
    }
    fn concurrent_syncs(controllers: &GardenControllers) -> u32 {
        controllers.controller_deployment_reference.concurrent_syncs
    }
}

/// Whether `object` is deleting and gardener's deletion flow is done with it (`gardener` gone):
/// it no longer needs what it references.
pub fn released<K: kube::Resource>(object: &K) -> bool {
    object.meta().deletion_timestamp.is_some()
        && !object
            .finalizers()
            .iter()
            .any(|f| f == finalizers::GARDENER)
}

/// The reference controller of kind `K`: triggered by creations, changes of the reference
/// fields, and deletions that are released ([`released`]).
pub struct References<K> {
    /// The client.
    pub ctx: Ctx,
    /// Parallel reconciles (the kind's `concurrentSyncs`).
    pub concurrency: u16,
    kind: PhantomData<fn() -> K>,
}

impl<K> References<K> {
    /// The controller of `K` writing through `client`, reconciling `concurrency` objects at once.
    pub fn new(client: kube::Client, concurrency: u16) -> Self {
        Self {
            ctx: Ctx { client },
            concurrency,
            kind: PhantomData,
        }
    }
}

impl<K: Referrer> Debug for References<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("References")
            .field("controller", &K::NAME)
            .finish_non_exhaustive()
    }
}

impl<K: Referrer> GardenReconciler for References<K> {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        let concurrent_syncs = K::concurrent_syncs(&garden.config.controllers);
        Some(Self::new(
            garden.client.clone(),
            concurrency(i64::from(concurrent_syncs)),
        ))
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<K> {
        crate::caches::controller_on_changes(&caches.all::<K>(), |object: &K| {
            let value = serde_json::to_value(object).unwrap_or_default();
            format!(
                "{}|{}",
                refs::trigger_key(K::KIND, &value),
                released(object)
            )
        })
    }
}
