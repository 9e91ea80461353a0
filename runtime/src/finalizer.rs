//! Adding and removing one finalizer with a JSON merge patch guarded by `resourceVersion`: a
//! concurrent change makes the write fail with 409 instead of dropping another controller's
//! entry; the caller returns the error and the queue retries with fresh state.

use std::fmt::Debug;

use kube::api::{Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::json;

/// Adds `finalizer` to `object` unless present. Returns whether it wrote. Idempotent.
///
/// # Errors
/// The API error of the patch (409 when `object` is stale).
pub async fn ensure<K>(api: &Api<K>, object: &K, finalizer: &str) -> Result<bool, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    if object.finalizers().iter().any(|f| f == finalizer) {
        return Ok(false);
    }
    let mut finalizers = object.finalizers().to_vec();
    finalizers.push(finalizer.to_owned());
    write(api, object, finalizers).await?;
    Ok(true)
}

/// Removes `finalizer` from `object` if present. Returns whether it wrote. A vanished object
/// counts as done. Idempotent.
///
/// # Errors
/// The API error of the patch (409 when `object` is stale).
pub async fn remove<K>(api: &Api<K>, object: &K, finalizer: &str) -> Result<bool, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    if !object.finalizers().iter().any(|f| f == finalizer) {
        return Ok(false);
    }
    let finalizers: Vec<String> = object
        .finalizers()
        .iter()
        .filter(|f| *f != finalizer)
        .cloned()
        .collect();
    match write(api, object, finalizers).await {
        Ok(()) => Ok(true),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(true),
        Err(error) => Err(error),
    }
}

async fn write<K>(api: &Api<K>, object: &K, finalizers: Vec<String>) -> Result<(), kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let patch = json!({
        "metadata": {
            "finalizers": finalizers,
            "resourceVersion": object.resource_version(),
        }
    });
    api.patch(
        &object.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map(|_| ())
}
