//! Writing ControllerInstallation conditions in the garden: read the latest object, merge the
//! updates by type, skip the write when nothing changed, and send a JSON merge patch on
//! `/status` guarded by `resourceVersion` (main, care and required share the list).

use std::time::Duration;

use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::json;

use seedlet_api::conditions::{self, Condition};
use seedlet_api::core::ControllerInstallation;

use crate::retry::{self, RetryPolicy};

/// Requeue delay after losing a condition write to another writer (409): the three controllers
/// share the list, so this is routine and the next pass reads fresh state right away.
pub const CONFLICT_REQUEUE: Duration = Duration::from_millis(200);

/// Whether `error` is a 409 Conflict from the API server.
pub fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.is_conflict())
}

/// Merges the conditions returned by `updates` (given the latest stored conditions) into the
/// installation `name`. Returns whether it wrote. A vanished installation counts as done.
///
/// # Errors
/// Read or patch failures; 409 when another writer won the race (the caller requeues).
pub async fn patch_conditions(
    api: &Api<ControllerInstallation>,
    name: &str,
    updates: impl FnOnce(&[Condition]) -> Vec<Condition>,
) -> Result<bool, kube::Error> {
    let Some(latest) = retry::idempotent(&RetryPolicy::RECONCILE, || api.get_opt(name)).await?
    else {
        return Ok(false);
    };
    let existing = latest.conditions();
    let merged = conditions::merge(existing, updates(existing));
    if merged == existing {
        return Ok(false);
    }
    let patch = json!({
        "metadata": {"resourceVersion": latest.metadata.resource_version},
        "status": {"conditions": merged},
    });
    // Guarded by the resourceVersion read above: a retry after a write that did land answers
    // 409, which the caller treats as a lost race and requeues.
    let (params, patch) = (PatchParams::default(), Patch::Merge(&patch));
    match retry::idempotent(&RetryPolicy::RECONCILE, || {
        api.patch_status(name, &params, &patch)
    })
    .await
    {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(false),
        Err(error) => Err(error),
    }
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
}
