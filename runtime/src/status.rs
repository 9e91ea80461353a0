//! Writing status conditions of objects other writers share: merge by type onto the stored list,
//! skip the write when nothing changed, and send a JSON merge patch on `/status` guarded by
//! `resourceVersion`, so a concurrent writer's condition is never dropped (the loser gets 409
//! and its controller requeues with fresh state).

use std::fmt::Debug;
use std::time::Duration;

use futures::future::BoxFuture;
use kube::api::{Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use seedlet_api::conditions::{self, Condition, WithConditions};

use crate::retry::{self, RetryPolicy};

/// Requeue delay after losing a condition write to another writer (409): shared lists make this
/// routine, and the next pass reads fresh state right away.
pub const CONFLICT_REQUEUE: Duration = Duration::from_millis(200);

/// Whether `error` is a 409 Conflict from the API server.
pub fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.is_conflict())
}

/// Whether a 409 Conflict from the API server is anywhere in `error`'s source chain: a lost
/// optimistic-concurrency race (another writer changed the object since it was read). Expected
/// under concurrent controllers, healed by an immediate retry with fresh state, and not worth more
/// than a debug line ([`CONFLICT_REQUEUE`]).
pub fn conflict_in_chain(error: &(dyn std::error::Error + 'static)) -> bool {
    kube_error_in_chain(error, is_conflict)
}

/// Whether a kube error for which `matches` holds is anywhere in `error`'s source chain.
pub fn kube_error_in_chain(
    error: &(dyn std::error::Error + 'static),
    matches: impl Fn(&kube::Error) -> bool,
) -> bool {
    let mut current = Some(error);
    while let Some(error) = current {
        if error.downcast_ref::<kube::Error>().is_some_and(&matches) {
            return true;
        }
        current = error.source();
    }
    false
}

/// The error policy's answer to a lost write race: a debug line and an immediate requeue
/// ([`CONFLICT_REQUEUE`]) when a 409 is in `error`'s chain, `None` for any other error.
pub fn conflict_requeue(
    object: &dyn std::fmt::Display,
    error: &(dyn std::error::Error + 'static),
) -> Option<kube::runtime::controller::Action> {
    if !conflict_in_chain(error) {
        return None;
    }
    tracing::debug!(object = %object, error = %crate::error_chain(error), "lost a write race, retrying");
    Some(kube::runtime::controller::Action::requeue(CONFLICT_REQUEUE))
}

/// How often [`update_conditions`] reads again and re-merges after losing the write to another
/// writer of the same object before it gives the 409 to its caller.
pub const CONFLICT_ATTEMPTS: usize = 4;

/// Runs `attempt` on `object` and, each time it loses a race (a 409 anywhere in its error's chain:
/// another writer changed the object since it was read), again on a fresh copy read from `api`, up
/// to [`CONFLICT_ATTEMPTS`] attempts, as client-go's `RetryOnConflict` does. For a reconcile whose
/// guarded write decides what happens next: the runtime's conflict requeue would run it again from
/// the shared cache, which may still hold the stale copy. Returns the last attempt's outcome; when
/// the fresh read fails, the conflict goes to the caller (its requeue reads again).
///
/// # Errors
/// The last attempt's error; a 409 when the race was lost [`CONFLICT_ATTEMPTS`] times or the fresh
/// read failed.
pub async fn retry_on_fresh_copy<'env, K, T, E>(
    api: &Api<K>,
    object: &K,
    // Each attempt owns its copy, and its future is boxed rather than an async closure's: the
    // futures of async closures cannot be required to be `Send` yet, and reconciles must be.
    mut attempt: impl FnMut(K) -> BoxFuture<'env, Result<T, E>>,
) -> Result<T, E>
where
    K: Resource + Clone + DeserializeOwned + Debug,
    E: std::error::Error + 'static,
{
    let mut current = object.clone();
    let mut attempts = 1;
    loop {
        match attempt(current).await {
            Err(error) if conflict_in_chain(&error) && attempts < CONFLICT_ATTEMPTS => {
                attempts += 1;
                current = api.get(&object.name_any()).await.map_err(|_| error)?;
            }
            outcome => return outcome,
        }
    }
}

/// Reads the latest `name`, merges `updates` (conditions by type) onto the stored ones and writes
/// them when they changed. Returns whether it wrote; a vanished object counts as done. Reads and
/// the guarded write are retried in place on transient errors; a lost race (409: another writer,
/// e.g. a care controller, wrote its own conditions in between) is retried in place with a fresh
/// read, up to [`CONFLICT_ATTEMPTS`] writes, as client-go's `RetryOnConflict` does — the merge is
/// by type, so the other writer's conditions are kept, and the caller's reconcile (a chart render
/// and apply for an installation) is not repeated for a race it does not depend on.
///
/// # Errors
/// Read or patch failures; 409 when the race was lost [`CONFLICT_ATTEMPTS`] times.
pub async fn update_conditions<K>(
    api: &Api<K>,
    name: &str,
    updates: &[Condition],
) -> Result<bool, kube::Error>
where
    K: WithConditions + Resource + Clone + DeserializeOwned + Debug,
{
    let mut attempt = 1;
    loop {
        let Some(latest) = retry::idempotent(&RetryPolicy::RECONCILE, || api.get_opt(name)).await?
        else {
            return Ok(false);
        };
        let existing = latest.conditions();
        let merged = conditions::merge(existing, updates.iter().cloned());
        if merged == existing {
            return Ok(false);
        }
        // Guarded by the resourceVersion read above: a retry after a write that did land answers
        // 409, and the next read then finds nothing left to write.
        match patch_status_guarded(api, &latest, json!({"conditions": merged}), None).await {
            Ok(()) => return Ok(true),
            Err(kube::Error::Api(status)) if status.is_not_found() => return Ok(false),
            Err(error) if is_conflict(&error) && attempt < CONFLICT_ATTEMPTS => attempt += 1,
            Err(error) => return Err(error),
        }
    }
}

/// Writes `conditions` (the whole list) into `object`'s status, guarded by the
/// `resourceVersion` of `object` as the caller read it, as `field_manager` when given. For
/// callers that already hold a fresh copy and computed the list from it.
///
/// # Errors
/// The patch's API error; 409 when `object` is stale.
pub async fn write_conditions<K>(
    api: &Api<K>,
    object: &K,
    conditions: &[Condition],
    field_manager: Option<&str>,
) -> Result<(), kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    patch_status_guarded(
        api,
        object,
        json!({"conditions": conditions}),
        field_manager,
    )
    .await
}

/// Merge-patches `status` (an object of status fields) into `object`'s `/status`, guarded by the
/// `resourceVersion` the caller read, as `field_manager` when given.
///
/// # Errors
/// The patch's API error; 409 when `object` is stale.
pub async fn patch_status_guarded<K>(
    api: &Api<K>,
    object: &K,
    status: Value,
    field_manager: Option<&str>,
) -> Result<(), kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let patch = json!({
        "metadata": {"resourceVersion": object.resource_version()},
        "status": status,
    });
    let params = PatchParams {
        field_manager: field_manager.map(str::to_owned),
        ..PatchParams::default()
    };
    let patch = Patch::Merge(&patch);
    let name = object.name_any();
    retry::idempotent(&RetryPolicy::RECONCILE, || {
        api.patch_status(&name, &params, &patch)
    })
    .await
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_409_counts_as_a_lost_write() {
        let status = |code: u16, reason: &str| {
            kube::Error::Api(
                kube::core::Status::failure("m", reason)
                    .with_code(code)
                    .boxed(),
            )
        };
        assert!(is_conflict(&status(409, "Conflict")));
        assert!(!is_conflict(&status(404, "NotFound")));
        assert!(!is_conflict(&status(500, "InternalError")));
    }

    #[derive(Debug, thiserror::Error)]
    #[error("patching seed a")]
    struct Wrapped(#[source] kube::Error);

    fn api_error(code: u16, reason: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure("x", reason)
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn conflicts_are_found_anywhere_in_the_chain() {
        assert!(conflict_in_chain(&Wrapped(api_error(409, "Conflict"))));
        assert!(conflict_in_chain(&api_error(409, "Conflict")));
        assert!(!conflict_in_chain(&Wrapped(api_error(404, "NotFound"))));
        assert!(!conflict_in_chain(&std::fmt::Error));
    }
}
