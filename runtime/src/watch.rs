//! Watches and controllers: the backoff of every watch and controller trigger stream, slim
//! reflector caches, and [`Runner`], the one way a controller of either daemon is run (name,
//! concurrency from config, graceful shutdown).
//!
//! The backoff:  kube-runtime's default (0.8 s doubling to 30 s with jitter, reset only after 120 s
//! without errors) suits controllers sharing a struggling API server; a seed agent runs about
//! twenty watches and must catch up within seconds after a garden or seed outage. A restarted API
//! server answers the first re-watch with `410 Gone`, one more failure on top of those during the
//! outage, so with the default a 4 s outage took anywhere from 1 s to over a minute to recover
//! from, depending on where each watch was in its doubling.

use std::fmt::Debug;
use std::time::Duration;

use std::future::Future;
use std::sync::Arc;

use futures::StreamExt as _;
use kube::runtime::controller::{self, Action};
use kube::runtime::utils::{Backoff, CancelableJoinHandle, ResetTimerBackoff};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Resource};
use rand::Rng;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use crate::controller::Triggers;
use crate::controller::queue::Queue;
use crate::controller::triggers::reference;
use crate::repeated::{Failure, RepeatedFailures};

/// First delay after a failed watch.
pub const MIN_DELAY: Duration = Duration::from_millis(200);
/// Largest delay between attempts.
pub const MAX_DELAY: Duration = Duration::from_secs(5);
/// A watch that kept working this long starts over at [`MIN_DELAY`].
pub const RESET_AFTER: Duration = Duration::from_secs(10);

/// The backoff to pass to `WatchStreamExt::backoff` for every agent watch.
pub fn watch_backoff() -> ResetTimerBackoff<Exponential> {
    ResetTimerBackoff::new(Exponential::default(), RESET_AFTER)
}

/// The triggers of a controller over `api`: its own watch, backing off with [`watch_backoff`].
/// Its cache keeps whole objects but `managedFields` ([`slim`]); [`controller_with_view`] keeps a
/// view of its own.
pub fn controller<K>(api: Api<K>, config: watcher::Config) -> Triggers<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    controller_with_view(api, config, slim)
}

/// The triggers of a controller over `api` whose cache holds the objects after `view` (e.g.
/// [`slim`]); like [`controller`], its watch backs off with [`watch_backoff`].
pub fn controller_with_view<K>(
    api: Api<K>,
    config: watcher::Config,
    view: fn(&mut K),
) -> Triggers<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let (reader, writer) = reflector::store();
    let objects = watcher(api, config)
        .backoff(watch_backoff())
        .modify(view)
        .reflect(writer)
        .applied_objects();
    Triggers::for_stream(objects, reader)
}

/// Drops what no controller reads from a cached object: `metadata.managedFields`.
pub fn slim<K: Resource>(object: &mut K) {
    object.meta_mut().managed_fields = None;
}

/// Parallel reconciles from a configured `concurrentSyncs`: at least one (Gardener defaults an
/// unset or zero value), at most `u16::MAX`.
pub fn concurrency(configured: i64) -> u16 {
    u16::try_from(configured.max(1)).unwrap_or(u16::MAX)
}

/// Runs a controller's [`Triggers`]: its name (logs), the concurrency, and the token whose
/// cancellation shuts it down gracefully (in-flight reconciles finish). Every controller of both
/// daemons is run through it; reconcile metrics are recorded by the reconcilers themselves.
#[derive(Debug, Clone)]
pub struct Runner {
    name: &'static str,
    concurrency: u16,
    stop: CancellationToken,
}

impl Runner {
    /// A runner for controller `name` with one worker, stopping when `stop` is cancelled.
    pub fn new(name: &'static str, stop: CancellationToken) -> Self {
        Self {
            name,
            concurrency: 1,
            stop,
        }
    }

    /// Reconciles up to `concurrent_syncs` objects at once (see [`concurrency`]).
    #[must_use]
    pub fn concurrency(mut self, concurrent_syncs: impl Into<i64>) -> Self {
        self.concurrency = concurrency(concurrent_syncs.into());
        self
    }

    /// Runs a controller on `triggers` until the stop token is cancelled (or its trigger streams
    /// end): their requests through the controller's [`queue`](crate::controller::queue) into
    /// kube-runtime's applier, each reconcile spawned as its own task and charged to the
    /// controller's write budget.
    pub async fn run<K, C, E, F, Fut>(
        self,
        triggers: Triggers<K>,
        reconcile: F,
        error_policy: fn(Arc<K>, &E, Arc<C>) -> Action,
        ctx: Arc<C>,
    ) where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        C: Send + Sync + 'static,
        E: std::error::Error + Send + 'static,
        F: Fn(Arc<K>, Arc<C>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let Self {
            name,
            concurrency,
            stop,
        } = self;
        let kind = K::kind(&()).into_owned();
        let mut watch_failures = RepeatedFailures::new();
        let (store, requests) = triggers.into_parts();
        let queue = Queue::for_concurrency(concurrency);
        let requests = queue.gate(requests).take_until(stop.cancelled_owned());
        let started = queue.clone();
        // Every write of a reconcile is charged to this controller's budget.
        let reconcile = move |object: Arc<K>, ctx| {
            started.started(&crate::controller::object_ref(object.as_ref()));
            CancelableJoinHandle::spawn(
                crate::budget::scoped(name, reconcile(object, ctx)).in_current_span(),
                &tokio::runtime::Handle::current(),
            )
        };
        let config = controller::Config::default().concurrency(concurrency);
        controller::applier(reconcile, error_policy, ctx, store, requests, config)
            .for_each(|result| {
                if let Err(controller::Error::ObjectNotFound(gone)) = &result {
                    queue.not_found(&reference(gone.namespace.as_deref(), &gone.name));
                }
                report_watch(name, &kind, &result, &mut watch_failures);
                futures::future::ready(())
            })
            .await;
        tracing::debug!(controller = name, "controller stopped");
    }
}

/// Says when a controller's watches fail, once per distinct failure (they retry with
/// [`watch_backoff`] on their own; a garden that does not serve a kind would otherwise be silent
/// at the default level), and when they work again.
fn report_watch<T, E: std::error::Error + 'static>(
    controller: &'static str,
    kind: &str,
    result: &Result<T, controller::Error<E, kube::runtime::watcher::Error>>,
    failures: &mut RepeatedFailures,
) {
    match result {
        Err(controller::Error::QueueError(error)) => {
            report_failure(controller, kind, error, failures);
        }
        Ok(_) | Err(controller::Error::ReconcilerFailed(..)) => {
            report_success(controller, kind, failures);
        }
        Err(_) => {}
    }
}

/// Logs a failed watch of `kind` read by `reader` (a controller, or the shared informers): an
/// expired resourceVersion is routine (debug; the watcher re-lists on its own); any other failure
/// is a WARN once per process and message — the first reader to meet it says it, its peers (one
/// garden, ~30 controllers, all meeting the same missing CRDs) and its repeats are debug lines.
pub(crate) fn report_failure(
    reader: &str,
    kind: &str,
    error: &kube::runtime::watcher::Error,
    failures: &mut RepeatedFailures,
) {
    if is_expired(error) {
        tracing::debug!(
            controller = reader,
            kind,
            "watch expired (410 Gone), re-listing"
        );
        return;
    }
    let message = crate::error_chain(error);
    match failures.failed(&message) {
        Failure::New if first_to_report(&message) => {
            tracing::warn!(controller = reader, kind, error = %message, "watch failed, retrying");
        }
        Failure::New | Failure::Repeated => {
            tracing::debug!(controller = reader, kind, error = %message, "watch failed again");
        }
    }
}

/// Logs that a watch of `kind` read by `reader` works again after failures (INFO, once), and
/// makes every failure news again for the next outage.
pub(crate) fn report_success(reader: &str, kind: &str, failures: &mut RepeatedFailures) {
    if let Some(count) = failures.succeeded() {
        forget_reported();
        tracing::info!(
            controller = reader,
            kind,
            failures = count,
            "watch works again"
        );
    }
}

/// Whether a watch failed only because its resourceVersion expired (`410 Gone`): the watcher
/// re-lists, nothing is wrong.
pub fn is_expired(error: &kube::runtime::watcher::Error) -> bool {
    use kube::runtime::watcher::Error;
    match error {
        Error::WatchError(status) => status.code == 410,
        Error::InitialListFailed(kube::Error::Api(status))
        | Error::WatchStartFailed(kube::Error::Api(status)) => status.code == 410,
        _ => false,
    }
}

/// Watch failures already reported in this process.
static REPORTED: std::sync::LazyLock<std::sync::Mutex<std::collections::HashSet<String>>> =
    std::sync::LazyLock::new(Default::default);

/// Whether `message` is a watch failure not yet reported in this process (and now is).
fn first_to_report(message: &str) -> bool {
    REPORTED
        .lock()
        .map(|mut reported| reported.insert(message.to_owned()))
        .unwrap_or(true)
}

/// A recovered watch makes every failure news again (the next outage is reported anew).
fn forget_reported() {
    if let Ok(mut reported) = REPORTED.lock() {
        reported.clear();
    }
}

/// Runs a built controller through a [`Runner`] at the end of the builder chain:
/// `controller(api, cfg).watches_stream(..).run_with(Runner::new(NAME, stop), reconcile,
/// error_policy, ctx).await`.
pub trait RunWith<K> {
    /// See [`Runner::run`].
    fn run_with<C, E, F, Fut>(
        self,
        runner: Runner,
        reconcile: F,
        error_policy: fn(Arc<K>, &E, Arc<C>) -> Action,
        ctx: Arc<C>,
    ) -> impl Future<Output = ()> + Send
    where
        C: Send + Sync + 'static,
        E: std::error::Error + Send + 'static,
        F: Fn(Arc<K>, Arc<C>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static;
}

impl<K> RunWith<K> for Triggers<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    fn run_with<C, E, F, Fut>(
        self,
        runner: Runner,
        reconcile: F,
        error_policy: fn(Arc<K>, &E, Arc<C>) -> Action,
        ctx: Arc<C>,
    ) -> impl Future<Output = ()> + Send
    where
        C: Send + Sync + 'static,
        E: std::error::Error + Send + 'static,
        F: Fn(Arc<K>, Arc<C>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        runner.run(self, reconcile, error_policy, ctx)
    }
}

/// Doubling delays from [`MIN_DELAY`] to [`MAX_DELAY`], each with up to 20 % jitter so that
/// the agent's watches do not retry in lockstep.
#[derive(Debug, Clone)]
pub struct Exponential {
    next: Duration,
}

impl Default for Exponential {
    fn default() -> Self {
        Self { next: MIN_DELAY }
    }
}

impl Iterator for Exponential {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let base = self.next;
        self.next = (base * 2).min(MAX_DELAY);
        let jitter = rand::rng().random_range(0.0..0.2);
        Some(base.mul_f64(1.0 + jitter))
    }
}

impl Backoff for Exponential {
    fn reset(&mut self) {
        self.next = MIN_DELAY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_expired_resource_version_counts_as_expired() {
        use kube::runtime::watcher::Error;
        let status = |code: u16| kube::core::Status::failure("x", "y").with_code(code);
        assert!(is_expired(&Error::WatchError(Box::new(status(410)))));
        assert!(is_expired(&Error::InitialListFailed(kube::Error::Api(
            status(410).boxed()
        ))));
        assert!(!is_expired(&Error::WatchError(Box::new(status(403)))));
        assert!(!is_expired(&Error::WatchStartFailed(kube::Error::Api(
            status(500).boxed()
        ))));
        assert!(!is_expired(&Error::NoResourceVersion));
    }

    #[test]
    fn concurrency_is_at_least_one_and_at_most_u16_max() {
        for (configured, expected) in [(-3, 1), (0, 1), (1, 1), (5, 5), (70_000, u16::MAX)] {
            assert_eq!(concurrency(configured), expected, "{configured}");
        }
    }

    #[test]
    fn slim_drops_managed_fields_and_keeps_everything_else() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let mut object = ConfigMap::default();
        object.metadata.name = Some("a".into());
        object.metadata.managed_fields = Some(vec![Default::default()]);
        let mut expected = object.clone();
        expected.metadata.managed_fields = None;
        slim(&mut object);
        assert_eq!(object, expected);
    }

    #[test]
    fn delays_double_up_to_the_maximum_with_bounded_jitter() {
        let mut backoff = Exponential::default();
        let delays: Vec<Duration> = (&mut backoff).take(8).collect();
        for (delay, base_ms) in delays
            .iter()
            .zip([200, 400, 800, 1600, 3200, 5000, 5000, 5000])
        {
            let base = Duration::from_millis(base_ms);
            assert!(
                *delay >= base && *delay <= base.mul_f64(1.2),
                "{delay:?} for {base:?}"
            );
        }
        backoff.reset();
        assert!(
            backoff
                .next()
                .is_some_and(|delay| delay < Duration::from_millis(250))
        );
    }
}
