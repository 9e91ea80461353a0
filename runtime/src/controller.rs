//! A controller as one type: [`Reconciler`] says what a controller reconciles, how one reconcile
//! goes and when a failure is retried; [`run`] owns everything around it that every controller
//! of both daemons does the same way — the reconcile metrics, the end of a logged run of
//! failures, a lost write race retried at once, a failure logged once per object and message,
//! the write budget charged to the controller, concurrency, graceful shutdown, the report of
//! failing watches (through [`Runner`]) and the periodic resync of a controller that declares one
//! ([`Reconciler::resync_period`], [`crate::resync`]).
//!
//! A controller's `mod.rs` builds its triggers (a `kube::runtime::Controller` over shared
//! informers, see [`crate::cache`]) and hands them to [`run`] with the reconciler:
//!
//! ```ignore
//! let controller = controller::for_stream(informer.applied_objects(), informer.store());
//! seedlet_runtime::controller::run(controller, Arc::new(reconciler), stop, metrics).await;
//! ```
//!
//! [`for_stream`] is kube's `Controller::for_stream` whose requests name their objects without
//! `extra` (resourceVersion and uid): kube-runtime keeps a queued request's reference twice, and
//! nothing reads `extra` of it (a reconcile gets the object from the store; `ObjectRef`'s `Eq` and
//! `Hash` ignore `extra`). [`object_ref`] makes such a reference for mappers.

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, TryStreamExt as _};
use kube::Resource;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;
use crate::policy;
use crate::watch::Runner;

/// The CamelCase reason of a failure, as a condition or Event shows it.
pub trait Reason {
    /// E.g. `ShootPatchError`.
    fn reason(&self) -> &'static str;
}

/// One controller: its object kind, its reconcile and its retry delays.
pub trait Reconciler: Send + Sync + 'static {
    /// The kind reconciled.
    type Object: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static;
    /// What a reconcile fails with; every variant names the failing step.
    type Error: std::error::Error + Reason + Send + Sync + 'static;
    /// The controller's name: logs, the `controller` label of the reconcile metrics, the write
    /// budget.
    const NAME: &'static str;

    /// One reconcile of `object`: what to do next, or why it failed.
    fn reconcile(
        &self,
        object: Arc<Self::Object>,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;

    /// How long to wait before retrying after `error` (a lost write race is retried at once
    /// whatever this says).
    fn retry_after(&self, error: &Self::Error) -> Duration;

    /// How many objects may be reconciled at once (`concurrentSyncs` of its configuration).
    fn concurrency(&self) -> u16 {
        1
    }

    /// The controller's sync period when it reconciles every object again after it, changed or
    /// not (gardenlet's `syncPeriod`); `None` (the default) when it does not. [`run`] then
    /// enqueues every object of the controller's store once per period, spread over it
    /// ([`crate::resync::spread`]), and drops a success's `Action::requeue` of exactly this
    /// period, so no object keeps a timer of its own for it. A shorter requeue (something is
    /// pending) and a retry after a failure stay timers per object.
    fn resync_period(&self) -> Option<Duration> {
        None
    }

    /// What follows a failed reconcile of `object`. The default, [`routine_failure`], is what a
    /// controller overriding this falls back to for the errors it has nothing special to say on.
    fn error_policy(&self, object: &Self::Object, error: &Self::Error) -> Action {
        routine_failure(self, object, error)
    }
}

/// A lost write race retried at once (a debug line), a seed authorizer graph lag retried quietly
/// (see [`policy`]); any other failure logged once per object
/// and message (WARN, then debug while it repeats) and retried after
/// [`Reconciler::retry_after`].
pub fn routine_failure<R: Reconciler + ?Sized>(
    reconciler: &R,
    object: &R::Object,
    error: &R::Error,
) -> Action {
    policy::requeue_after_failure(
        R::NAME,
        &policy::object_key(object),
        error.reason(),
        error,
        reconciler.retry_after(error),
    )
}

/// The reconciler with what [`run`] adds to it.
struct Running<R> {
    reconciler: Arc<R>,
    metrics: Arc<Metrics>,
}

async fn reconcile<R: Reconciler>(
    object: Arc<R::Object>,
    running: Arc<Running<R>>,
) -> Result<Action, R::Error> {
    let key = policy::object_key(object.as_ref());
    let action = policy::measured(
        &running.metrics,
        R::NAME,
        &key,
        running.reconciler.reconcile(object),
    )
    .await?;
    Ok(crate::resync::after_success(
        action,
        running.reconciler.resync_period(),
    ))
}

fn error_policy<R: Reconciler>(
    object: Arc<R::Object>,
    error: &R::Error,
    running: Arc<Running<R>>,
) -> Action {
    running.reconciler.error_policy(&object, error)
}

/// Runs `reconciler` on the triggers of `controller` until `stop` is cancelled (in-flight
/// reconciles finish): [`Reconciler::concurrency`] at once, every reconcile measured in
/// `metrics` under [`Reconciler::NAME`] and charged to its write budget, every failure through
/// [`Reconciler::error_policy`], every stored object once per [`Reconciler::resync_period`].
pub async fn run<R: Reconciler>(
    controller: Controller<R::Object>,
    reconciler: Arc<R>,
    stop: CancellationToken,
    metrics: Arc<Metrics>,
) {
    let controller = match reconciler.resync_period() {
        Some(period) => {
            let resyncs = crate::resync::spread(controller.store(), period, R::NAME, stop.clone());
            controller.reconcile_on(resyncs)
        }
        None => controller,
    };
    let runner = Runner::new(R::NAME, stop).concurrency(reconciler.concurrency());
    let running = Arc::new(Running {
        reconciler,
        metrics,
    });
    // Backing off belongs to each watch (`watch::NoTriggerBackoff` says why).
    let controller = controller.trigger_backoff(crate::watch::NoTriggerBackoff);
    runner
        .run(controller, reconcile::<R>, error_policy::<R>, running)
        .await;
}

/// kube's `Controller::for_stream`: reconciles every object `trigger` yields, reading it from
/// `store`, but its requests name the objects without `extra` (see the module docs). Only the
/// trigger's copy of an object loses its resourceVersion and uid; the store keeps them.
pub fn for_stream<K>(
    trigger: impl Stream<Item = Result<K, watcher::Error>> + Send + 'static,
    store: Store<K>,
) -> Controller<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let trigger = trigger.map_ok(|mut object| {
        let meta = object.meta_mut();
        meta.resource_version = None;
        meta.uid = None;
        object
    });
    Controller::for_stream(trigger, store)
}

/// The reference of `object` by namespace and name only, without kube's `extra`
/// (resourceVersion and uid), which nothing in a controller's queue reads.
pub fn object_ref<K: Resource<DynamicType = ()>>(object: &K) -> ObjectRef<K> {
    let meta = object.meta();
    let reference = ObjectRef::new(meta.name.as_deref().unwrap_or_default());
    match meta.namespace.as_deref() {
        Some(namespace) => reference.within(namespace),
        None => reference,
    }
}
