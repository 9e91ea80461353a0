//! PATCH: JSON merge patch, JSON patch, strategic merge patch and server-side apply.

use http::Response;
use serde_json::{Value, json};

use super::write::{check_body_name, check_body_namespace, check_signer_approval};
use super::{Body, Call, json_response, present};
use crate::fieldmanager::fieldpath::{self, Element, ListKind, ListRules, Path};
use crate::fieldmanager::managed;
use crate::registry::generic::{self, Ownership, Writer};
use crate::registry::limits;
use crate::resources::Subresource;
use crate::status::ApiError;

const UNSUPPORTED: &str = "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml";

/// PATCH of an object or a subresource.
pub fn patch(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let content_type = call
        .content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim();
    if content_type == "application/apply-patch+yaml" {
        return apply(call);
    }
    let kind = patch_kind(call)?;
    let patch = patch_body(call)?;
    if call.path.subresource == Subresource::Approval {
        check_signer_approval(call)?;
    }
    let manager = call.field_manager();
    let writer = Writer {
        manager: &manager,
        user: call.user,
        dry_run: call.dry_run,
    };
    let stored = {
        let mut state = call.api.store.lock();
        let live = state
            .get(&call.rt, &call.path.namespace, &call.path.name)
            .ok_or_else(|| ApiError::not_found(&call.rt, &call.path.name))?;
        let mut document = patched(call, &live, kind, patch)?;
        // A patch may not rename or move the object (kube-apiserver checks the patched object).
        check_body_namespace(call, &document)?;
        check_body_name(call, &document)?;
        let update = |state: &mut crate::storage::State, document: Value, ownership| {
            generic::update(
                state,
                &call.rt,
                &call.path.namespace,
                &call.path.name,
                &call.path.subresource,
                document,
                &writer,
                ownership,
            )
        };
        match update(&mut state, document.clone(), Ownership::Record) {
            // Like kube-apiserver: an object too large to store is retried once without
            // managedFields, which can be large.
            Err(error) if limits::is_too_large(&error) => {
                crate::object::metadata_mut(&mut document).remove("managedFields");
                update(&mut state, document, Ownership::Precomputed)?
            }
            other => other?,
        }
    };
    Ok(json_response(200, &present(call, &stored)))
}

/// The kind of a non-apply patch from the content type (415 for others).
pub fn patch_kind(call: &Call<'_>) -> Result<PatchKind, ApiError> {
    let content_type = call
        .content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim();
    match content_type {
        "application/merge-patch+json" => Ok(PatchKind::Merge),
        "application/json-patch+json" => Ok(PatchKind::Json),
        "application/strategic-merge-patch+json" if !call.rt.custom => Ok(PatchKind::Strategic),
        _ => Err(ApiError::status(
            415,
            "UnsupportedMediaType",
            UNSUPPORTED,
            None,
        )),
    }
}

/// Whether the call is a server-side apply.
pub fn is_apply(call: &Call<'_>) -> bool {
    call.content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        == "application/apply-patch+yaml"
}

/// The patch document of a call.
pub fn patch_body(call: &Call<'_>) -> Result<Value, ApiError> {
    serde_json::from_slice(call.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))
}

/// `live` with a (non-apply) patch applied.
pub fn patched(
    call: &Call<'_>,
    live: &Value,
    kind: PatchKind,
    patch: Value,
) -> Result<Value, ApiError> {
    let mut document = live.clone();
    match kind {
        PatchKind::Merge => json_patch::merge(&mut document, &patch),
        PatchKind::Json => apply_json_patch(&mut document, patch)?,
        PatchKind::Strategic => {
            let rules = crate::registry::kinds::list_rules(&call.rt);
            strategic_merge(&mut document, &patch, &mut Vec::new(), rules.as_ref());
        }
    }
    Ok(document)
}

/// The non-apply patch kinds.
#[derive(Clone, Copy, Debug)]
pub enum PatchKind {
    Merge,
    Json,
    Strategic,
}

/// Server-side apply: merge the applied configuration, track ownership, report conflicts.
fn apply(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let Some(manager) = call
        .query
        .get("fieldManager")
        .filter(|m| !m.is_empty())
        .cloned()
    else {
        return Err(ApiError::status(
            422,
            "Invalid",
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
            Some(
                json!({"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [{"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"}]}),
            ),
        ));
    };
    let applied: Value = crate::endpoints::yaml::from_slice(call.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    if !applied.is_object() {
        return Err(ApiError::bad_request(
            "error decoding YAML: the applied configuration must be an object",
        ));
    }
    // The applied configuration may leave out name and namespace of an existing object, but
    // may not name another one; creating needs the name (kube-apiserver checks the merged object).
    check_body_namespace(call, &applied)?;
    if applied.pointer("/metadata/name").is_some() {
        check_body_name(call, &applied)?;
    }
    let force = crate::endpoints::request::flag(call.query, "force");
    let writer = Writer {
        manager: &manager,
        user: call.user,
        dry_run: call.dry_run,
    };
    let scope = generic::scope_for(&call.rt, &call.path.subresource);
    let api_version = call.rt.api_version();
    let now = crate::object::now_rfc3339();
    let rules = crate::registry::kinds::list_rules(&call.rt);
    let (stored, created) = {
        let mut state = call.api.store.lock();
        match state.get(&call.rt, &call.path.namespace, &call.path.name) {
            Some(live) => {
                let merged = managed::apply(
                    &live,
                    &applied,
                    &manager,
                    force,
                    &api_version,
                    scope,
                    rules.as_ref(),
                    &now,
                )
                .map_err(|conflicts| conflict_error(&conflicts))?;
                let stored = generic::update(
                    &mut state,
                    &call.rt,
                    &call.path.namespace,
                    &call.path.name,
                    &call.path.subresource,
                    merged,
                    &writer,
                    Ownership::Precomputed,
                )?;
                (stored, false)
            }
            None if call.path.subresource.is_none() => {
                check_body_name(call, &applied)?;
                let mut base = json!({"apiVersion": api_version, "kind": call.rt.kind, "metadata": {"name": call.path.name}});
                if let Some(kind) = applied.get("kind") {
                    base["kind"] = kind.clone();
                }
                let merged = managed::apply(
                    &base,
                    &applied,
                    &manager,
                    force,
                    &api_version,
                    scope,
                    rules.as_ref(),
                    &now,
                )
                .map_err(|conflicts| conflict_error(&conflicts))?;
                let stored = generic::create_with(
                    &mut state,
                    &call.rt,
                    &call.path.namespace,
                    merged,
                    &writer,
                    Ownership::Precomputed,
                )?;
                (stored, true)
            }
            None => return Err(ApiError::not_found(&call.rt, &call.path.name)),
        }
    };
    Ok(json_response(
        if created { 201 } else { 200 },
        &present(call, &stored),
    ))
}

/// Applies a JSON patch atomically the way kube-apiserver (evanphx/json-patch) does.
///
/// Bounded like kube-apiserver: more than 10 000 operations is a 413 before anything applies,
/// and the `copy` operations may copy 3 MiB in total, checked before each copy allocates (a
/// chain of copies doubling a map would otherwise reach gigabytes within a dozen operations).
/// A `test` of `null` passes on a missing path; kube-runtime's finalizer helper relies on it
/// (`test /metadata/finalizers == null` before `add`). Every failure to apply is kube-apiserver's
/// 422 without details.
fn apply_json_patch(document: &mut Value, patch: Value) -> Result<(), ApiError> {
    let Value::Array(items) = patch else {
        return Err(ApiError::bad_request(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
        ));
    };
    if items.len() > limits::MAX_JSON_PATCH_OPERATIONS {
        return Err(limits::too_many_operations(items.len()));
    }
    let rejected = || {
        ApiError::status(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
            Some(json!({})),
        )
    };
    // An unknown or incomplete operation fails when it is applied (evanphx decodes any object).
    let operations: json_patch::Patch =
        serde_json::from_value(Value::Array(items)).map_err(|_| rejected())?;
    let mut working = document.clone();
    let mut copied = 0usize;
    for operation in operations.iter() {
        match operation {
            json_patch::PatchOperation::Test(test)
                if test.value.is_null() && working.pointer(test.path.as_str()).is_none() =>
            {
                continue;
            }
            json_patch::PatchOperation::Copy(copy) => {
                let source = working.pointer(copy.from.as_str()).ok_or_else(rejected)?;
                let budget = limits::MAX_JSON_PATCH_COPY_BYTES - copied;
                copied += limits::json_len(source, budget).ok_or_else(rejected)?;
            }
            _ => {}
        }
        json_patch::patch(&mut working, std::slice::from_ref(operation)).map_err(|_| rejected())?;
    }
    *document = working;
    Ok(())
}

fn conflict_error(conflicts: &[managed::Conflict]) -> ApiError {
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|c| json!({"reason": "FieldManagerConflict", "message": format!("conflict with {}", c.manager), "field": c.path}))
        .collect();
    ApiError::status(
        409,
        "Conflict",
        managed::conflict_message(conflicts),
        Some(json!({"causes": causes})),
    )
}

/// Strategic merge patch for built-in kinds: maps merge, keyed lists merge by their merge key
/// (with `$patch: delete`), set lists union, other lists are replaced; `$retainKeys`,
/// `$deleteFromPrimitiveList/` and `$setElementOrder/` directives are honoured.
pub fn strategic_merge(target: &mut Value, patch: &Value, path: &mut Path, rules: &dyn ListRules) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if patch_map.get("$patch").and_then(Value::as_str) == Some("replace") {
        *target = strip_directives(patch);
        return;
    }
    if !target.is_object() {
        *target = json!({});
    }
    let Some(target_map) = target.as_object_mut() else {
        return;
    };
    if let Some(retain) = patch_map.get("$retainKeys").and_then(Value::as_array) {
        let keep: Vec<&str> = retain.iter().filter_map(Value::as_str).collect();
        target_map.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (key, value) in patch_map {
        if key.starts_with("$setElementOrder/") || key == "$patch" || key == "$retainKeys" {
            continue;
        }
        if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
            let removals = value.as_array().cloned().unwrap_or_default();
            if let Some(Value::Array(items)) = target_map.get_mut(field) {
                items.retain(|item| !removals.contains(item));
            }
            continue;
        }
        if value.is_null() {
            target_map.remove(key);
            continue;
        }
        path.push(Element::Field(key.clone()));
        match (target_map.get_mut(key), value) {
            (Some(existing @ Value::Object(_)), Value::Object(_)) => {
                strategic_merge(existing, value, path, rules)
            }
            (Some(Value::Array(existing)), Value::Array(items)) => {
                merge_list(existing, items, path, rules)
            }
            _ => {
                let cleaned = match value {
                    Value::Array(items) => Value::Array(
                        items
                            .iter()
                            .filter(|i| i.get("$patch").is_none())
                            .map(strip_directives)
                            .collect(),
                    ),
                    other => strip_directives(other),
                };
                target_map.insert(key.clone(), cleaned);
            }
        }
        path.pop();
    }
}

fn merge_list(existing: &mut Vec<Value>, items: &[Value], path: &mut Path, rules: &dyn ListRules) {
    match rules.list_kind(path) {
        ListKind::Set => {
            for item in items {
                if !existing.contains(item) {
                    existing.push(item.clone());
                }
            }
        }
        ListKind::Map(keys) => {
            // Strategic merge uses the first key (the patchMergeKey) only.
            let merge_key = keys.first().cloned().unwrap_or_default();
            for item in items {
                let wanted = item.get(&merge_key);
                let position =
                    wanted.and_then(|w| existing.iter().position(|e| e.get(&merge_key) == Some(w)));
                let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
                match (position, delete) {
                    (Some(i), true) => {
                        existing.remove(i);
                    }
                    (None, true) => {}
                    (Some(i), false) => {
                        let key = fieldpath::item_key(&existing[i], &keys);
                        path.push(key.unwrap_or(Element::Index(i)));
                        strategic_merge(&mut existing[i], item, path, rules);
                        path.pop();
                    }
                    (None, false) => existing.push(strip_directives(item)),
                }
            }
        }
        ListKind::Atomic => *existing = items.iter().map(strip_directives).collect(),
    }
}

fn strip_directives(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_directives).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fieldmanager::fieldpath::BuiltinListRules;

    fn smp(target: Value, patch: Value) -> Value {
        let mut target = target;
        strategic_merge(&mut target, &patch, &mut Vec::new(), &BuiltinListRules);
        target
    }

    #[test]
    fn strategic_merge_merges_containers_by_name() {
        let target = json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]}});
        let patched = smp(
            target,
            json!({"spec": {"containers": [{"name": "b", "image": "3"}]}}),
        );
        assert_eq!(
            patched["spec"]["containers"],
            json!([{"name": "a", "image": "1"}, {"name": "b", "image": "3"}])
        );
    }

    #[test]
    fn strategic_merge_deletes_items_and_null_fields() {
        let target = json!({"data": {"a": "1", "b": "2"}, "spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let patched = smp(
            target,
            json!({"data": {"a": null}, "spec": {"containers": [{"name": "a", "$patch": "delete"}]}}),
        );
        assert_eq!(
            patched,
            json!({"data": {"b": "2"}, "spec": {"containers": [{"name": "b"}]}})
        );
    }

    #[test]
    fn strategic_merge_unions_finalizers_and_replaces_plain_lists() {
        let target = json!({"metadata": {"finalizers": ["a"]}, "spec": {"args": ["x"]}});
        let patched = smp(
            target,
            json!({"metadata": {"finalizers": ["b"]}, "spec": {"args": ["y"]}}),
        );
        assert_eq!(
            patched,
            json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {"args": ["y"]}})
        );
    }
}
