//! What most controllers do around one reconcile: measure it, and after a failure decide how
//! loudly to log and when to retry. A lost write race is routine (debug line, retry at once); a
//! failure is a WARN line once per object and distinct message while it persists, then debug
//! lines until the object reconciles again (one INFO line says so).

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
    let mut failures = failures().lock().unwrap_or_else(PoisonError::into_inner);
    let key = (controller.to_owned(), object.to_owned());
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
}
