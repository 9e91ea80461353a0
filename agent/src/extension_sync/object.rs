//! Writing extension objects: create-or-merge-patch with the operation annotation, timestamp and
//! the wanted spec (keys the spec no longer has are removed), and deletion with the deletion
//! confirmation. Missing objects (and a missing CRD) count as deleted.

use std::collections::BTreeMap;

use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Resource};
use seedlet_api::extensions::ExtensionObject;
use seedlet_api::names::annotations;
use serde_json::{Value, json};

/// Whether an error means "the object (or its kind) is not there".
pub fn is_gone(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.is_not_found())
}

/// The merge patch turning `existing`'s spec into `desired`: `desired` plus `null` for each
/// top-level key only the existing spec has.
pub fn spec_patch(existing: Option<&Value>, desired: &Value) -> Value {
    let mut patch = desired.as_object().cloned().unwrap_or_default();
    if let Some(Value::Object(current)) = existing {
        for key in current.keys() {
            patch.entry(key.clone()).or_insert(Value::Null);
        }
    }
    Value::Object(patch)
}

/// Creates `name` (in `namespace` for namespaced kinds) or merge-patches it with `spec` and the
/// `annotations` (operation, timestamp, kind-specific ones), as `field_manager`.
///
/// # Errors
/// The API error of the create or patch.
pub async fn deploy<K: ExtensionObject>(
    api: &Api<K>,
    existing: Option<&K>,
    name: &str,
    namespace: Option<&str>,
    spec: &Value,
    object_annotations: &BTreeMap<String, String>,
    field_manager: &str,
) -> Result<(), kube::Error> {
    if existing.is_none() {
        let mut metadata = json!({"name": name, "annotations": object_annotations});
        if let Some(namespace) = namespace {
            metadata["namespace"] = json!(namespace);
        }
        let object = json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "metadata": metadata,
            "spec": spec,
        });
        let object: K = serde_json::from_value(object).map_err(kube::Error::SerdeError)?;
        let params = PostParams {
            field_manager: Some(field_manager.to_owned()),
            ..PostParams::default()
        };
        match api.create(&params, &object).await {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(status)) if status.is_already_exists() => {}
            Err(error) => return Err(error),
        }
    }
    let current_spec = existing
        .and_then(|object| serde_json::to_value(object).ok())
        .and_then(|value| value.get("spec").cloned());
    let patch = json!({
        "metadata": {"annotations": object_annotations},
        "spec": spec_patch(current_spec.as_ref(), spec),
    });
    api.patch(
        name,
        &PatchParams {
            field_manager: Some(field_manager.to_owned()),
            ..PatchParams::default()
        },
        &Patch::Merge(&patch),
    )
    .await
    .map(|_| ())
}

/// Annotates `name` with `extra` annotations (NotFound ignored).
///
/// # Errors
/// Other API errors.
pub async fn annotate<K>(
    api: &Api<K>,
    name: &str,
    extra: &BTreeMap<String, String>,
) -> Result<(), kube::Error>
where
    K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let patch = json!({"metadata": {"annotations": extra}});
    match api
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(error) if is_gone(&error) => Ok(()),
        Err(error) => Err(error),
    }
}

/// Deletes `name`, first confirming the deletion when `confirm` (Gardener's deletion protection
/// for extension objects); returns the object if it still exists afterwards.
///
/// # Errors
/// API errors other than NotFound.
pub async fn delete<K: ExtensionObject>(
    api: &Api<K>,
    name: &str,
    confirm: bool,
) -> Result<Option<K>, kube::Error> {
    if confirm {
        let confirmation = BTreeMap::from([(
            annotations::CONFIRMATION_DELETION.to_owned(),
            "true".to_owned(),
        )]);
        annotate(api, name, &confirmation).await?;
    }
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => {}
        Err(error) if is_gone(&error) => return Ok(None),
        Err(error) => return Err(error),
    }
    match api.get_opt(name).await {
        Ok(found) => Ok(found),
        Err(error) if is_gone(&error) => Ok(None),
        Err(error) => Err(error),
    }
}

/// The annotations of a deploy: `operation=<operation>`, `timestamp`, plus `extra`.
pub fn deploy_annotations(
    operation: &str,
    timestamp: &str,
    extra: &[(&str, &str)],
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::from([
        (annotations::OPERATION.to_owned(), operation.to_owned()),
        (annotations::TIMESTAMP.to_owned(), timestamp.to_owned()),
    ]);
    for (key, value) in extra {
        out.insert((*key).to_owned(), (*value).to_owned());
    }
    out
}

/// `status.<field>` of an extension object's kind-specific status, if set.
pub fn status_extra<'a, K: ExtensionObject>(object: &'a K, field: &str) -> Option<&'a Value> {
    object
        .extension_status()
        .and_then(|status| status.extra.get(field))
        .filter(|value| !value.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_patch_removes_keys_the_wanted_spec_lost() {
        let existing = json!({"type": "local", "region": "r", "providerConfig": {"a": 1}});
        let desired = json!({"type": "local", "region": "s"});
        assert_eq!(
            spec_patch(Some(&existing), &desired),
            json!({"type": "local", "region": "s", "providerConfig": null})
        );
        assert_eq!(spec_patch(None, &desired), desired);
    }

    #[test]
    fn deploy_annotations_carry_operation_timestamp_and_extras() {
        let annotations = deploy_annotations("reconcile", "t", &[("x/y", "garden")]);
        assert_eq!(annotations.len(), 3);
        assert_eq!(annotations["gardener.cloud/operation"], "reconcile");
        assert_eq!(annotations["x/y"], "garden");
    }
}
