//! Writing ControllerInstallation conditions in the garden: read the latest object, merge the
//! updates by type, skip the write when nothing changed, and send a JSON merge patch on
//! `/status` guarded by `resourceVersion` (main, care and required share the list).

use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::json;

use seedlet_api::conditions::{self, Condition};
use seedlet_api::core::ControllerInstallation;

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
    let Some(latest) = api.get_opt(name).await? else {
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
    match api
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(false),
        Err(error) => Err(error),
    }
}
