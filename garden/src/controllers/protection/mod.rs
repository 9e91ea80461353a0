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
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use kube::{Api, Resource};
use seedlet_api::core::{
    CloudProfile, CredentialsBinding, ExposureClass, NamespacedCloudProfile, Quota, SecretBinding,
};
use seedlet_config::garden::GardenControllers;
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::events::{EventType, Recorder};
use seedlet_runtime::watch::concurrency;
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use reconcile::Error;

use crate::caches::GardenCaches;
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// What a protected kind's hooks may use.
pub struct Ctx {
    /// Garden client.
    pub client: kube::Client,
    /// Events as `<name>-controller`.
    pub events: Recorder,
    /// Time source (CloudProfile classifications).
    pub clock: Arc<dyn Clock>,
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
    fn watches(controller: Triggers<Self>, caches: &GardenCaches) -> Triggers<Self>;
}

/// The protection controller of kind `K`.
pub struct Protection<K> {
    /// What the kind's hooks use.
    pub ctx: Arc<Ctx>,
    /// Parallel reconciles (the kind's `concurrentSyncs`).
    pub concurrency: u16,
    kind: PhantomData<fn() -> K>,
}

impl<K> Protection<K> {
    /// The controller of `K` with `ctx`, reconciling `concurrency` objects at once.
    pub fn new(ctx: Arc<Ctx>, concurrency: u16) -> Self {
        Self {
            ctx,
            concurrency,
            kind: PhantomData,
        }
    }
}

impl<K: Protected> Debug for Protection<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protection")
            .field("kind", &K::KIND)
            .finish_non_exhaustive()
    }
}

/// A protected kind the garden runs a controller for, with its configuration block.
pub trait Configured: Protected {
    /// The kind's `concurrentSyncs`.
    fn concurrent_syncs(controllers: &GardenControllers) -> u32;
}

impl<K: Configured> GardenReconciler for Protection<K> {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        let ctx = Ctx {
            client: garden.client.clone(),
            events: garden.events.named(format!("{}-controller", K::NAME)),
            clock: garden.clock.clone(),
        };
        let concurrent_syncs = K::concurrent_syncs(&garden.config.controllers);
        Some(Self::new(
            Arc::new(ctx),
            concurrency(i64::from(concurrent_syncs)),
        ))
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<K> {
        K::watches(crate::caches::controller(&caches.all::<K>()), caches)
    }
}

/// [`Configured`] for each kind from its block of `controllers`.
macro_rules! configured {
    ($($kind:ty => $block:ident),+ $(,)?) => {$(
        impl Configured for $kind {
            fn concurrent_syncs(controllers: &GardenControllers) -> u32 {
                controllers.$block.concurrent_syncs
            }
        }
    )+};
}

configured!(
    CloudProfile => cloud_profile,
    NamespacedCloudProfile => namespaced_cloud_profile,
    SecretBinding => secret_binding,
    CredentialsBinding => credentials_binding,
    Quota => quota,
    ExposureClass => exposure_class,
);
