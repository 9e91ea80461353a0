//! A controller as one type: [`Reconciler`] says what a controller reconciles, how one reconcile
//! goes and when a failure is retried; [`run`] owns everything around it that every controller
//! of both daemons does the same way — the reconcile metrics, the end of a logged run of
//! failures, a lost write race retried at once, a failure logged once per object and message,
//! the write budget charged to the controller, concurrency, graceful shutdown and the report of
//! failing watches (through [`Runner`]).
//!
//! A controller's `mod.rs` builds its triggers (a `kube::runtime::Controller` over shared
//! informers, see [`crate::cache`]) and hands them to [`run`] with the reconciler:
//!
//! ```ignore
//! let controller = Controller::for_stream(informer.applied_objects(), informer.store());
//! seedlet_runtime::controller::run(controller, Arc::new(reconciler), stop, metrics).await;
//! ```

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kube::Resource;
use kube::runtime::controller::{Action, Controller};
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
    policy::measured(
        &running.metrics,
        R::NAME,
        &key,
        running.reconciler.reconcile(object),
    )
    .await
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
/// [`Reconciler::error_policy`].
pub async fn run<R: Reconciler>(
    controller: Controller<R::Object>,
    reconciler: Arc<R>,
    stop: CancellationToken,
    metrics: Arc<Metrics>,
) {
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
