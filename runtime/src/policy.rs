//! What most controllers do around one reconcile: measure it, and after a failure decide how
//! loudly to log and when to retry. A lost write race is routine (debug line, retry at once); a
//! failure is a WARN line once per object and distinct message while it persists, then debug
//! lines until the object reconciles again (one INFO line says so).
//!
//! A 403 of Gardener's seed authorizer saying `no relationship found` is routine for a moment:
//! the authorizer's graph learns of a new object from its own watch, and a seed agent that saw the
//! object on its watch first may ask before the graph has the edge (gardenlet meets the same race
//! and controller-runtime's per-item back-off, starting at 5 ms, hides it). Such a failure is
//! retried quietly after [`AUTHORIZER_LAG_REQUEUE`], doubling, [`AUTHORIZER_LAG_ATTEMPTS`] times;
//! a denial that outlasts them is a failure like any other.

use std::collections::HashMap;
use std::fmt::Display;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use kube::runtime::controller::Action;

use crate::metrics::Metrics;
use crate::repeated::{Failure, RepeatedFailures};

/// The failures of each `(controller, object)` since its last successful reconcile. An object
/// deleted while failing leaves its entry behind: one short string pair per such object.
fn failures() -> &'static Mutex<HashMap<(String, String), RepeatedFailures>> {
    static FAILURES: OnceLock<Mutex<HashMap<(String, String), RepeatedFailures>>> = OnceLock::new();
    FAILURES.get_or_init(Mutex::default)
}

/// The quiet retries of an authorizer graph lag so far, per `(controller, object)`, until the
/// object reconciles again.
fn authorizer_lags() -> &'static Mutex<HashMap<(String, String), u32>> {
    static LAGS: OnceLock<Mutex<HashMap<(String, String), u32>>> = OnceLock::new();
    LAGS.get_or_init(Mutex::default)
}

/// First delay after a `no relationship found` 403 (then 20, 40, … ms).
pub const AUTHORIZER_LAG_REQUEUE: Duration = Duration::from_millis(10);
/// Quiet retries of a `no relationship found` 403 before it is handled as a failure.
pub const AUTHORIZER_LAG_ATTEMPTS: u32 = 6;

/// Whether a 403 whose message says the seed authorizer found no relationship (its graph has not
/// seen the object yet, or there is none) is anywhere in `error`'s source chain.
pub fn authorizer_lag_in_chain(error: &(dyn std::error::Error + 'static)) -> bool {
    crate::status::kube_error_in_chain(error, |error| {
        matches!(error, kube::Error::Api(status)
            if status.code == 403 && status.message.contains("no relationship found"))
    })
}

/// How logs name `object`: `namespace/name`, or `name` for a cluster-scoped object.
pub fn object_key(object: &impl kube::ResourceExt) -> String {
    match object.namespace() {
        Some(namespace) => format!("{namespace}/{}", object.name_any()),
        None => object.name_any(),
    }
}

/// Runs one reconcile of `object` by `controller`, records its duration and outcome in
/// `metrics`, and after a success ends the object's run of logged failures.
pub async fn measured<T, E>(
    metrics: &Metrics,
    controller: &str,
    object: &str,
    work: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    let started = Instant::now();
    let result = work.await;
    metrics.reconciled(controller, started.elapsed(), result.is_ok());
    if result.is_ok() {
        recovered(controller, object);
    }
    result
}

/// Ends the run of logged failures of `object` (one INFO line when there was one). [`measured`]
/// does this for the reconciled object; a controller that logs a failure shared by many objects
/// under one name calls it for that name.
pub fn recovered(controller: &str, object: &str) {
    let key = (controller.to_owned(), object.to_owned());
    authorizer_lags()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&key);
    let mut failures = failures().lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(count) = failures.remove(&key).and_then(|mut run| run.succeeded()) {
        tracing::info!(controller, object, failures = count, "reconciled again");
    }
}

/// The error policy after `error` (with CamelCase `reason`) failed a reconcile of `object` by
/// `controller`: a 409 in the chain requeues at once; any other error is logged (WARN when its
/// message is new for the object, debug while it repeats) and requeued after `delay`.
pub fn requeue_after_failure(
    controller: &str,
    object: &dyn Display,
    reason: &str,
    error: &(dyn std::error::Error + 'static),
    delay: Duration,
) -> Action {
    if let Some(action) = crate::status::conflict_requeue(object, error) {
        return action;
    }
    if let Some(delay) = authorizer_lag_retry(controller, object, error) {
        tracing::debug!(controller, object = %object, error = %crate::error_chain(error), "the seed authorizer does not know the object yet, retrying");
        return Action::requeue(delay);
    }
    let message = crate::error_chain(error).to_string();
    let news = failures()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry((controller.to_owned(), object.to_string()))
        .or_default()
        .failed(&message);
    match news {
        Failure::New => {
            tracing::warn!(controller, object = %object, reason, error = %message, "reconcile failed");
        }
        Failure::Repeated => {
            tracing::debug!(controller, object = %object, reason, error = %message, "reconcile failed again");
        }
    }
    Action::requeue(delay)
}

/// The delay of the next quiet retry when `error` is an authorizer graph lag and `object` has
/// quiet retries left; `None` otherwise.
fn authorizer_lag_retry(
    controller: &str,
    object: &dyn Display,
    error: &(dyn std::error::Error + 'static),
) -> Option<Duration> {
    if !authorizer_lag_in_chain(error) {
        return None;
    }
    let mut lags = authorizer_lags()
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let attempts = lags
        .entry((controller.to_owned(), object.to_string()))
        .or_default();
    if *attempts >= AUTHORIZER_LAG_ATTEMPTS {
        return None;
    }
    let delay = AUTHORIZER_LAG_REQUEUE * 2u32.pow(*attempts);
    *attempts += 1;
    Some(delay)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("boom {0}")]
    struct Boom(u32);

    fn failing(controller: &str, object: &str) -> bool {
        failures()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&(controller.to_owned(), object.to_owned()))
    }

    #[tokio::test]
    async fn a_success_ends_the_objects_run_of_failures() {
        let metrics = Metrics::new("test");
        let delay = Duration::from_secs(5);
        for _ in 0..3 {
            let action = requeue_after_failure("policy-test", &"ns/a", "Boom", &Boom(1), delay);
            assert_eq!(action, Action::requeue(delay));
        }
        assert!(failing("policy-test", "ns/a"));
        let ok: Result<(), Boom> =
            measured(&metrics, "policy-test", "ns/a", async { Ok(()) }).await;
        assert!(ok.is_ok());
        assert!(
            !failing("policy-test", "ns/a"),
            "a success forgets the failures"
        );
        let failed: Result<(), Boom> =
            measured(&metrics, "policy-test", "ns/b", async { Err(Boom(2)) }).await;
        assert!(failed.is_err());
        assert!(
            !failing("policy-test", "ns/b"),
            "only the error policy records failures"
        );
        let encoded = metrics.encode(jiff::Timestamp::now());
        assert!(
            encoded.contains("seedlet_reconcile_errors_total{controller=\"policy-test\"} 1"),
            "the reconciles are counted: {encoded}"
        );
    }

    fn forbidden(message: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure(message, "Forbidden")
                .with_code(403)
                .boxed(),
        )
    }

    #[test]
    fn only_the_authorizers_no_relationship_403_is_a_graph_lag() {
        let lag = forbidden(
            "controllerinstallations.core.gardener.cloud \"a\" is forbidden: User \"gardener.cloud:system:seed:local\" cannot patch resource: no relationship found",
        );
        assert!(authorizer_lag_in_chain(&lag));
        assert!(!authorizer_lag_in_chain(&forbidden(
            "secrets is forbidden: RBAC"
        )));
        assert!(!authorizer_lag_in_chain(&Boom(1)));
    }

    #[test]
    fn a_graph_lag_is_retried_quietly_doubling_then_fails_like_any_error() {
        let delay = Duration::from_secs(5);
        let lag = forbidden("x is forbidden: no relationship found");
        let delays: Vec<Action> = (0..8)
            .map(|_| requeue_after_failure("policy-lag-test", &"a", "Forbidden", &lag, delay))
            .collect();
        let expected: Vec<Action> = [10, 20, 40, 80, 160, 320]
            .map(|ms| Action::requeue(Duration::from_millis(ms)))
            .into_iter()
            .chain([Action::requeue(delay), Action::requeue(delay)])
            .collect();
        assert_eq!(delays, expected);
        assert!(failing("policy-lag-test", "a"), "then it is a failure");
        recovered("policy-lag-test", "a");
        assert_eq!(
            requeue_after_failure("policy-lag-test", &"a", "Forbidden", &lag, delay),
            Action::requeue(Duration::from_millis(10)),
            "a success starts the quiet retries afresh"
        );
        assert!(!failing("policy-lag-test", "a"));
    }
}
