//! Every finalizer write of both daemons: a JSON merge patch of `metadata.finalizers` guarded by
//! `resourceVersion`. A merge patch replaces the whole list, so without the guard a writer on a
//! stale copy would drop another controller's entry; with it a concurrent change makes the write
//! fail with 409, the caller returns the error and the queue retries with fresh state.
//!
//! [`ensure`] and [`remove`] write one finalizer; [`guarded_patch`] is the patch they send, for
//! the writers that set the list together with other fields of the same object (labels, owner
//! references, data) in one request.

use std::fmt::Debug;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Adds `finalizer` to `object` unless present. Returns whether it wrote. Idempotent.
///
/// # Errors
/// The API error of the patch (409 when `object` is stale).
pub async fn ensure<K>(api: &Api<K>, object: &K, finalizer: &str) -> Result<bool, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    ensured(api, object, finalizer)
        .await
        .map(|written| written.is_some())
}

/// Like [`ensure`], returning the object as the server stored it when it wrote (so a caller can
/// go on with a guarded write of its own without reading it again), `None` when the finalizer
/// was there already.
///
/// # Errors
/// The API error of the patch (409 when `object` is stale).
pub async fn ensured<K>(api: &Api<K>, object: &K, finalizer: &str) -> Result<Option<K>, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    if object.finalizers().iter().any(|f| f == finalizer) {
        return Ok(None);
    }
    let mut finalizers = object.finalizers().to_vec();
    finalizers.push(finalizer.to_owned());
    write(api, object, &finalizers).await.map(Some)
}

/// Like [`ensure`], but a lost race (409: another writer changed the object since it was read —
/// often only its status, as the care controllers of a new object do) is retried in place with a
/// fresh read ([`crate::status::retry_on_fresh_copy`]): the caller's reconcile goes on instead of
/// waiting for a requeue.
///
/// # Errors
/// The API error of the patch; 409 when the race was lost on every attempt or the fresh read
/// failed.
pub async fn ensure_retrying<K>(
    api: &Api<K>,
    object: &K,
    finalizer: &str,
) -> Result<bool, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync,
{
    crate::status::retry_on_fresh_copy(api, object, |current| {
        Box::pin(async move {
            ensured(api, &current, finalizer)
                .await
                .map(|written| written.is_some())
        })
    })
    .await
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
    match write(api, object, &finalizers).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(true),
        Err(error) => Err(error),
    }
}

/// The merge patch that sets the finalizers of the object `meta` was read from to `finalizers`,
/// guarded by its `resourceVersion`. A caller may add other fields of the same object before
/// sending it; the guard then covers them too.
///
/// `meta` must come from the server: without a `resourceVersion` the patch is unguarded.
pub fn guarded_patch(meta: &ObjectMeta, finalizers: &[String]) -> Value {
    json!({
        "metadata": {
            "finalizers": finalizers,
            "resourceVersion": meta.resource_version,
        }
    })
}

async fn write<K>(api: &Api<K>, object: &K, finalizers: &[String]) -> Result<K, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let patch = guarded_patch(object.meta(), finalizers);
    api.patch(
        &object.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patch_carries_the_whole_list_and_the_resource_version_read() {
        let meta = ObjectMeta {
            resource_version: Some("42".into()),
            finalizers: Some(vec!["other".into()]),
            ..ObjectMeta::default()
        };
        let patch = guarded_patch(&meta, &["other".to_owned(), "ours".to_owned()]);
        assert_eq!(
            patch,
            json!({"metadata": {"finalizers": ["other", "ours"], "resourceVersion": "42"}})
        );
        assert_eq!(
            guarded_patch(&meta, &[]),
            json!({"metadata": {"finalizers": [], "resourceVersion": "42"}}),
            "removing the last one writes an empty list, still guarded"
        );
    }
}
