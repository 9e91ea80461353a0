//! A controller as one type: [`Reconciler`] says what a controller reconciles, how one reconcile
//! goes and when a failure is retried; [`run`] owns everything around it that every controller
//! of both daemons does the same way — the reconcile metrics, the end of a logged run of
//! failures, a lost write race retried at once, a failure logged once per object and message,
//! the write budget charged to the controller, concurrency, graceful shutdown, the report of
//! failing watches (through [`Runner`]) and the periodic resync of a controller that declares one
//! ([`Reconciler::resync_period`], [`crate::resync`]).
//!
//! A controller's `mod.rs` builds its [`Triggers`] (over shared informers, see [`crate::cache`])
//! and hands them to [`run`] with the reconciler:
//!
//! ```ignore
//! let triggers = Triggers::for_stream(informer.applied_objects(), informer.store());
//! seedlet_runtime::controller::run(triggers, Arc::new(reconciler), stop, metrics).await;
//! ```
//!
//! The requests wait in the controller's own [`queue`] and reach kube-runtime's scheduler a few at
//! a time, so that a burst of requests does not leave the scheduler's tables at the burst's size.

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kube::Resource;
use kube::runtime::controller::Action;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;
use crate::policy;
use crate::watch::Runner;

pub(crate) mod queue;
pub(crate) mod triggers;

pub use triggers::{Triggers, object_ref};

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

/// Runs `reconciler` on `triggers` until `stop` is cancelled (in-flight
/// reconciles finish): [`Reconciler::concurrency`] at once, every reconcile measured in
/// `metrics` under [`Reconciler::NAME`] and charged to its write budget, every failure through
/// [`Reconciler::error_policy`], every stored object once per [`Reconciler::resync_period`].
pub async fn run<R: Reconciler>(
    triggers: Triggers<R::Object>,
    reconciler: Arc<R>,
    stop: CancellationToken,
    metrics: Arc<Metrics>,
) {
    let triggers = match reconciler.resync_period() {
        Some(period) => {
            let resyncs = crate::resync::spread(triggers.store(), period, R::NAME, stop.clone());
            triggers.reconcile_on(resyncs)
        }
        None => triggers,
    };
    let runner = Runner::new(R::NAME, stop).concurrency(reconciler.concurrency());
    let running = Arc::new(Running {
        reconciler,
        metrics,
    });
    runner
        .run(triggers, reconcile::<R>, error_policy::<R>, running)
        .await;
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod run_tests;

/// The error of test reconcilers that never fail.
#[cfg(test)]
#[derive(Debug, thiserror::Error)]
#[error("never")]
pub(crate) struct Never;

#[cfg(test)]
impl Reason for Never {
    fn reason(&self) -> &'static str {
        "Never"
    }
}
