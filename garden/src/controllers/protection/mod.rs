//! Reference protection (spec garden-controllers §2.1–§2.7): one generic controller, run once
//! per protected kind — CloudProfile (`cloudprofile`), NamespacedCloudProfile
//! (`namespacedcloudprofile`), SecretBinding (`secretbinding`), CredentialsBinding
//! (`credentialsbinding`), Quota (`quota`) and ExposureClass (`exposureclass`).
//!
//! Each object carries the finalizer `gardener` while it lives. Deleting it waits until nothing
//! refers to it any more: the "in use" check ([`Protected::blockers`], pure decisions in
//! [`users`]) records an Event and fails the reconcile (so it is retried), and the controller is
//! triggered again by the referrers' deletions and reference changes ([`Protected::watches`]).
//! Kind-specific work rides on the same loop: the bindings label and protect their credentials
//! and Quotas ([`bindings`], pure patches in [`credential`]), the NamespacedCloudProfile
//! writes `status.cloudProfileSpec` ([`ncp_status`], pure merge in [`merge`]).

pub mod bindings;
pub mod classification;
pub mod credential;
pub mod kinds;
pub mod merge;
pub mod ncp_status;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod users;

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::Controller;
use kube::{Api, Resource};
use seedlet_api::core::{
    CloudProfile, CredentialsBinding, ExposureClass, NamespacedCloudProfile, Quota, SecretBinding,
};
use seedlet_runtime::clock::Clock;
use seedlet_runtime::events::{EventType, Recorder};
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::watch::{RunWith, Runner};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

pub use reconcile::{Error, error_policy, reconcile};

use crate::caches::GardenCaches;
use crate::context::GardenContext;

/// Name of the protection controllers together (the builtin list).
pub const NAME: &str = "reference-protection";

/// Dependencies of one protection controller.
pub struct Ctx {
    /// Garden client.
    pub client: kube::Client,
    /// Events as `<name>-controller`.
    pub events: Recorder,
    /// Time source (CloudProfile classifications).
    pub clock: Arc<dyn Clock>,
    /// Process metrics.
    pub metrics: Arc<Metrics>,
}

impl Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").finish_non_exhaustive()
    }
}

/// Why deletion must wait: the Event to record and the error to fail the reconcile with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// Event type.
    pub event_type: EventType,
    /// Event action (`Reconcile` or `Delete`).
    pub action: &'static str,
    /// Event note.
    pub note: String,
    /// Error text (upstream sometimes lowercases the first word).
    pub error: String,
}

impl Blocked {
    /// A `ResourceReferenced` block whose error repeats the event note.
    pub fn new(event_type: EventType, action: &'static str, note: String) -> Self {
        Self {
            event_type,
            action,
            error: note.clone(),
            note,
        }
    }
}

/// A kind guarded by the generic protection controller.
pub trait Protected:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug + Send + Sync + 'static
{
    /// Controller name (logs, metrics, event component).
    const NAME: &'static str;
    /// Kind (errors).
    const KIND: &'static str;

    /// The API to read and patch `namespace`'s objects (cluster-scoped kinds ignore it).
    fn api(client: &kube::Client, namespace: Option<&str>) -> Api<Self>;

    /// What blocks deletion, if anything.
    fn blockers(&self, ctx: &Ctx) -> impl Future<Output = Result<Option<Blocked>, Error>> + Send;

    /// Work after the finalizer is ensured on a live object (labels, status); returns when to
    /// look again (a CloudProfile's next lifecycle change), if ever.
    fn reconcile_live(
        &self,
        _ctx: &Ctx,
    ) -> impl Future<Output = Result<Option<Duration>, Error>> + Send {
        async { Ok(None) }
    }

    /// Work on a deleting object before the in-use check (re-protect the credential).
    fn before_delete(&self, _ctx: &Ctx) -> impl Future<Output = Result<(), Error>> + Send {
        async { Ok(()) }
    }

    /// Work on a deleting object that nothing uses any more, before its finalizer goes.
    fn release(&self, _ctx: &Ctx) -> impl Future<Output = Result<(), Error>> + Send {
        async { Ok(()) }
    }

    /// Adds the secondary triggers (referrers) to the controller of this kind.
    /// Kinds other controllers read come from the shared informers `caches`.
    fn watches(controller: Controller<Self>, caches: &GardenCaches) -> Controller<Self>;
}

/// Starts all protection controllers for one leadership term.
pub async fn start(garden: Arc<GardenContext>) {
    let controllers = &garden.config.controllers;
    tokio::join!(
        run::<CloudProfile>(&garden, controllers.cloud_profile.concurrent_syncs),
        run::<NamespacedCloudProfile>(
            &garden,
            controllers.namespaced_cloud_profile.concurrent_syncs
        ),
        run::<SecretBinding>(&garden, controllers.secret_binding.concurrent_syncs),
        run::<CredentialsBinding>(&garden, controllers.credentials_binding.concurrent_syncs),
        run::<Quota>(&garden, controllers.quota.concurrent_syncs),
        run::<ExposureClass>(&garden, controllers.exposure_class.concurrent_syncs),
    );
}

/// Runs the protection controller of kind `K` until the term's token is cancelled.
pub async fn run<K: Protected>(garden: &GardenContext, concurrent_syncs: u32) {
    let ctx = Arc::new(Ctx {
        client: garden.client.clone(),
        events: garden.events.named(format!("{}-controller", K::NAME)),
        clock: garden.clock.clone(),
        metrics: garden.metrics.clone(),
    });
    run_with::<K>(ctx, &garden.caches, concurrent_syncs, garden.stop.clone()).await;
}

/// Runs the protection controller of kind `K` with `ctx` until `shutdown` is cancelled.
pub async fn run_with<K: Protected>(
    ctx: Arc<Ctx>,
    caches: &GardenCaches,
    concurrent_syncs: u32,
    shutdown: CancellationToken,
) {
    let controller = crate::caches::controller(&caches.all::<K>());
    K::watches(controller, caches)
        .run_with(
            Runner::new(K::NAME, shutdown).concurrency(concurrent_syncs),
            reconcile::<K>,
            error_policy::<K>,
            ctx,
        )
        .await;
}
