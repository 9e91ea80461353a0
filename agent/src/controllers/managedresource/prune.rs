//! Pruning objects that left the applied set (spec §5.4 step 7, §5.6): which references to
//! prune (pure), whether a live object is kept or its finalizers are due (pure), and the deletion.

use std::collections::HashSet;

use jiff::Timestamp;
use kube::Client;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use seedlet_api::names::managed_resources;
use seedlet_api::resources::ObjectReference;

use super::apply::{self, KindCache, identity, split_api_version};
use super::manifests::annotation;
use seedlet_api::names::parses_as_true;
use seedlet_runtime::retry::{self, RetryPolicy};

/// Old references that are neither desired any more nor released (`mode=Ignore`).
pub fn to_prune(
    old: &[ObjectReference],
    desired: &[ObjectReference],
    released: &[ObjectReference],
) -> Vec<ObjectReference> {
    let keep: HashSet<_> = desired.iter().chain(released).map(identity).collect();
    old.iter()
        .filter(|reference| !keep.contains(&identity(reference)))
        .cloned()
        .collect()
}

/// Whether a live object stays when pruned: `resources.gardener.cloud/keep-object` truthy.
///
/// gardener-resource-manager also keeps garbage-collectable ConfigMaps/Secrets when its secret
/// GC runs; seedlet runs no such GC, so that rule does not apply here.
pub fn keeps(live: &Value) -> bool {
    parses_as_true(annotation(live, managed_resources::KEEP_OBJECT))
}

/// Whether the finalizers of a deleting object are to be cleared:
/// `resources.gardener.cloud/finalize-deletion-after` set and `deletionTimestamp + after < now`.
///
/// # Errors
/// The annotation is not a Go duration, or the deletion timestamp does not parse.
pub fn finalizers_due(live: &Value, now: Timestamp) -> Result<bool, String> {
    let Some(after) = annotation(live, managed_resources::FINALIZE_DELETION_AFTER) else {
        return Ok(false);
    };
    let Some(deleted) = live
        .pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
    else {
        return Ok(false);
    };
    let after: seedlet_config::Duration = after.parse().map_err(|error| {
        format!(
            "invalid {} annotation {after:?}: {error}",
            managed_resources::FINALIZE_DELETION_AFTER
        )
    })?;
    let deleted: Timestamp = deleted
        .parse()
        .map_err(|error| format!("invalid deletionTimestamp {deleted:?}: {error}"))?;
    let after = jiff::SignedDuration::try_from(std::time::Duration::from(after))
        .unwrap_or(jiff::SignedDuration::MAX);
    Ok(deleted.saturating_add(after).is_ok_and(|due| due < now))
}

/// Outcome of pruning a set of references.
#[derive(Debug, Default)]
pub struct Pruned {
    /// Objects whose deletion was requested or is still running (`<Kind> <ns>/<name>`).
    pub pending: Vec<String>,
    /// Failures (`<Kind> <ns>/<name>: <error>`).
    pub failed: Vec<String>,
}

/// Deletes every object of `references` that still exists and is not kept.
pub async fn prune(
    client: &Client,
    kinds: &KindCache,
    references: &[ObjectReference],
    now: Timestamp,
) -> Pruned {
    let mut out = Pruned::default();
    let results = futures::future::join_all(
        references
            .iter()
            .map(|reference| prune_one(client, kinds, reference, now)),
    )
    .await;
    for (reference, result) in references.iter().zip(results) {
        let (_, kind, namespace, name) = identity(reference);
        let label = format!("{kind} {namespace}/{name}");
        match result {
            Ok(true) => out.pending.push(label),
            Ok(false) => {}
            Err(error) => out.failed.push(format!("{label}: {error}")),
        }
    }
    out
}

/// Prunes one object; `Ok(true)` while its deletion is pending.
async fn prune_one(
    client: &Client,
    kinds: &KindCache,
    reference: &ObjectReference,
    now: Timestamp,
) -> Result<bool, String> {
    let api_version = reference.api_version.as_deref().unwrap_or_default();
    let kind = reference.kind.as_deref().unwrap_or_default();
    let name = reference.name.as_deref().unwrap_or_default();
    let Some(resolved) = kinds
        .resolve(client, api_version, kind)
        .await
        .map_err(|e| e.to_string())?
    else {
        // The kind is no longer served: nothing left to delete.
        return Ok(false);
    };
    let api = apply::dynamic_api(client, &resolved, reference.namespace.as_deref());
    let Some(object) = retry::idempotent(&RetryPolicy::RECONCILE, || api.get_opt(name))
        .await
        .map_err(|e| e.to_string())?
    else {
        return Ok(false);
    };
    let live = serde_json::to_value(&object).map_err(|e| e.to_string())?;
    if keeps(&live) {
        return Ok(false);
    }
    if live.pointer("/metadata/deletionTimestamp").is_some() {
        if finalizers_due(&live, now)? {
            let patch = if kind == "Namespace" && split_api_version(api_version).0.is_empty() {
                json!({"spec": {"finalizers": []}})
            } else {
                // Every finalizer goes, through the runtime's guarded finalizer patch: a
                // change since the read fails it (409) and the next pass decides again.
                seedlet_runtime::finalizer::guarded_patch(&object.metadata, &[])
            };
            let (params, patch) = (PatchParams::default(), Patch::Merge(&patch));
            retry::idempotent(&RetryPolicy::RECONCILE, || api.patch(name, &params, &patch))
                .await
                .map_err(|e| e.to_string())?;
        }
        return Ok(true);
    }
    let group = split_api_version(api_version).0;
    apply::delete(&api, group, name, None)
        .await
        .map_err(|e| e.to_string())?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(kind: &str, name: &str) -> ObjectReference {
        ObjectReference {
            api_version: Some("v1".into()),
            kind: Some(kind.into()),
            name: Some(name.into()),
            namespace: Some("n".into()),
            ..ObjectReference::default()
        }
    }

    #[test]
    fn to_prune_is_old_minus_desired_and_released() {
        let old = [
            reference("ConfigMap", "a"),
            reference("ConfigMap", "b"),
            reference("Secret", "a"),
            reference("ConfigMap", "c"),
        ];
        let desired = [reference("ConfigMap", "a")];
        let released = [reference("ConfigMap", "c")];
        let pruned: Vec<_> = to_prune(&old, &desired, &released)
            .into_iter()
            .map(|r| (r.kind.unwrap(), r.name.unwrap()))
            .collect();
        assert_eq!(
            pruned,
            [
                ("ConfigMap".into(), "b".into()),
                ("Secret".into(), "a".into())
            ]
        );
    }

    #[test]
    fn keep_object_annotation_keeps_when_truthy() {
        let live = |value: &str| json!({"metadata": {"annotations": {"resources.gardener.cloud/keep-object": value}}});
        assert!(keeps(&live("true")));
        assert!(!keeps(&live("false")));
        assert!(!keeps(&json!({})));
    }

    #[test]
    fn finalizers_are_due_only_after_the_configured_duration() {
        let now: Timestamp = "2024-01-01T00:10:00Z".parse().unwrap();
        let live = |after: &str| json!({"metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z", "annotations": {"resources.gardener.cloud/finalize-deletion-after": after}}});
        assert_eq!(finalizers_due(&live("5m"), now), Ok(true));
        assert_eq!(finalizers_due(&live("1h"), now), Ok(false));
        assert!(finalizers_due(&live("soon"), now).is_err());
        assert_eq!(finalizers_due(&json!({"metadata": {}}), now), Ok(false));
    }
}
