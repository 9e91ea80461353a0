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
use std::sync::Arc;

use kube::{Api, ResourceExt};
use seedlet_api::core::{ControllerDeployment, Seed, Shoot};
use seedlet_api::names::finalizers;
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::watch::{RunWith, Runner};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

pub use reconcile::{Error, error_policy, reconcile};
use refs::Kind;

use crate::caches::GardenCaches;
use crate::context::GardenContext;

/// Name of the three reference controllers together (the builtin list).
pub const NAME: &str = "references";

/// Finalizer on referrers and on the objects they reference.
pub const REFERENCE_PROTECTION: &str = "gardener.cloud/reference-protection";

/// Dependencies of one reference controller.
pub struct Ctx {
    /// Garden client.
    pub client: kube::Client,
    /// Process metrics.
    pub metrics: Arc<Metrics>,
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
}

impl Referrer for Shoot {
    const NAME: &'static str = "shoot-reference";
    const KIND: Kind = Kind::Shoot;

    fn api(client: &kube::Client, namespace: Option<&str>) -> Api<Self> {
        Api::namespaced(client.clone(), namespace.unwrap_or_default())
    }
}

impl Referrer for Seed {
    const NAME: &'static str = "seed-reference";
    const KIND: Kind = Kind::Seed;

    fn api(client: &kube::Client, _: Option<&str>) -> Api<Self> {
        Api::all(client.clone())
    }
}

impl Referrer for ControllerDeployment {
    const NAME: &'static str = "controllerdeployment-reference";
    const KIND: Kind = Kind::ControllerDeployment;

    fn api(client: &kube::Client, _: Option<&str>) -> Api<Self> {
        Api::all(client.clone())
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

/// Starts the three reference controllers for one leadership term.
pub async fn start(garden: Arc<GardenContext>) {
    let ctx = Arc::new(Ctx {
        client: garden.client.clone(),
        metrics: garden.metrics.clone(),
    });
    let controllers = &garden.config.controllers;
    tokio::join!(
        run::<Shoot>(
            ctx.clone(),
            &garden.caches,
            controllers.shoot_reference.concurrent_syncs,
            garden.stop.clone()
        ),
        run::<Seed>(
            ctx.clone(),
            &garden.caches,
            controllers.seed_reference.concurrent_syncs,
            garden.stop.clone()
        ),
        run::<ControllerDeployment>(
            ctx,
            &garden.caches,
            controllers.controller_deployment_reference.concurrent_syncs,
            garden.stop.clone()
        ),
    );
}

/// Runs the reference controller of `K` until `shutdown` is cancelled: triggered by creations,
/// changes of the reference fields, and deletions that are released ([`released`]).
pub async fn run<K: Referrer>(
    ctx: Arc<Ctx>,
    caches: &GardenCaches,
    concurrent_syncs: u32,
    shutdown: CancellationToken,
) {
    crate::caches::controller_on_changes(&caches.all::<K>(), |object: &K| {
        let value = serde_json::to_value(object).unwrap_or_default();
        format!(
            "{}|{}",
            refs::trigger_key(K::KIND, &value),
            released(object)
        )
    })
    .run_with(
        Runner::new(K::NAME, shutdown).concurrency(concurrent_syncs),
        reconcile::<K>,
        error_policy::<K>,
        ctx,
    )
    .await;
}
