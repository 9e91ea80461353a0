//! The storage operations every write path shares: create, update and delete with kube-apiserver's
//! metadata rules (system fields, generation, finalizers, status split, managedFields, no-op detection).
//!
//! A dry run (`dryRun=All`, [`Writer::dry_run`], [`DeleteOptions::dry_run`]) goes through every
//! check, default and managedFields step and answers the object as it would be stored, but the
//! store is not touched: no resourceVersion, no watch event, no follow-up of the kind's strategy.
//! Like kube-apiserver's dry-run storage, a created object has no resourceVersion and an updated
//! one keeps the stored one.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::fieldmanager::managed::{self, Scope};
use crate::object::{finalizers, metadata_mut, new_uid, now_rfc3339, random_suffix};
use crate::registry::kinds::{list_rules, strategy_for};
use crate::registry::strategy::Context;
use crate::registry::{limits, objectmeta, validation};
use crate::resources::{ResourceType, Subresource};
use crate::status::{ApiError, Cause, details};
use crate::storage::State;

pub use crate::registry::strategy::Writer;

/// Options of a delete.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    /// `Background` (default), `Foreground` or `Orphan`.
    pub propagation: Option<String>,
    /// `preconditions.uid`.
    pub uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub resource_version: Option<String>,
    /// `dryRun=All`: decide, answer, but change nothing.
    pub dry_run: bool,
}

impl DeleteOptions {
    /// Reads a DeleteOptions body and the `propagationPolicy` query parameter.
    pub fn parse(body: Option<&Value>, query_policy: Option<&str>) -> Self {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        let mut propagation = body
            .and_then(|b| text(b.get("propagationPolicy")))
            .or(query_policy.map(str::to_string));
        if propagation.is_none()
            && let Some(orphan) = body
                .and_then(|b| b.get("orphanDependents"))
                .and_then(Value::as_bool)
        {
            propagation = Some(if orphan { "Orphan" } else { "Background" }.to_string());
        }
        DeleteOptions {
            propagation,
            uid: body.and_then(|b| text(b.pointer("/preconditions/uid"))),
            resource_version: body.and_then(|b| text(b.pointer("/preconditions/resourceVersion"))),
            dry_run: false,
        }
    }
}

/// What a delete did.
#[derive(Clone, Debug)]
pub enum DeleteOutcome {
    /// The object is gone; this was its last state.
    Removed(Arc<Value>),
    /// The object is still there (finalizers), marked for deletion.
    Marked(Arc<Value>),
}

/// Creates an object at `namespace` (already checked by the caller to match the path).
pub fn create(
    state: &mut State,
    rt: &ResourceType,
    namespace: &str,
    object: Value,
    writer: &Writer<'_>,
) -> Result<Arc<Value>, ApiError> {
    create_with(state, rt, namespace, object, writer, Ownership::Record)
}

/// Creates an object; with [`Ownership::Precomputed`] its managedFields (from server-side apply) are kept.
pub fn create_with(
    state: &mut State,
    rt: &ResourceType,
    namespace: &str,
    mut object: Value,
    writer: &Writer<'_>,
    ownership: Ownership,
) -> Result<Arc<Value>, ApiError> {
    if !object.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be an object",
        ));
    }
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if object.get("metadata").is_none_or(|m| !m.is_object()) {
        object["metadata"] = json!({});
    }
    assign_name(&mut object, rt, &kind)?;
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if rt.custom && !kind.is_empty() && kind != rt.kind {
        return Err(ApiError::invalid(
            rt,
            &kind,
            &name,
            vec![Cause::new(
                "kind",
                "FieldValueInvalid",
                format!("Invalid value: \"{kind}\": must be {}", rt.kind),
            )],
        ));
    }
    let causes = objectmeta::validate_create(&object, strategy_for(rt).name_rule());
    if !causes.is_empty() {
        return Err(ApiError::invalid(rt, &rt.kind, &name, causes));
    }
    if rt.namespaced {
        crate::registry::namespace::check_accepts_content(state, rt, namespace, &name)?;
    }
    if state.get(rt, namespace, &name).is_some() {
        return Err(ApiError::already_exists(rt, &name));
    }
    set_identity(&mut object, rt, namespace);
    let metadata = metadata_mut(&mut object);
    for key in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
    ] {
        metadata.remove(key);
    }
    if ownership == Ownership::Record {
        metadata.remove("managedFields");
    }
    metadata.insert("uid".into(), json!(new_uid()));
    metadata.insert("creationTimestamp".into(), json!(now_rfc3339()));
    if rt.generation || rt.custom {
        metadata.insert("generation".into(), json!(1));
    } else {
        metadata.remove("generation");
    }
    if rt.status_subresource {
        if rt.custom {
            object.as_object_mut().map(|o| o.remove("status"));
        } else {
            object["status"] = json!({});
        }
    }
    let strategy = strategy_for(rt);
    strategy.prepare_create(&Context { state, rt, writer }, &mut object)?;
    if ownership == Ownership::Record {
        let rules = list_rules(rt);
        let api_version = rt.api_version();
        managed::record_update(
            None,
            &mut object,
            writer.manager,
            &api_version,
            scope_for(rt, &Subresource::None),
            rules.as_ref(),
            &now_rfc3339(),
        );
    }
    drop_empty_fields(rt, &mut object);
    let causes = objectmeta::validate_data(rt, &object);
    if !causes.is_empty() {
        return Err(ApiError::invalid(rt, &rt.kind, &name, causes));
    }
    if writer.dry_run {
        return Ok(Arc::new(object));
    }
    limits::check_object_size(&object)?;
    let stored = state.insert(&rt.storage_key(), object);
    strategy.after_write(state, &stored);
    Ok(stored)
}

/// How an update treats managedFields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ownership {
    /// Record the writer as an `Update` manager of what it changed.
    Record,
    /// managedFields were already computed (server-side apply).
    Precomputed,
}

/// Replaces an existing object through the main resource or a subresource.
/// Returns the object as stored (or, when the write removed the last finalizer of a deleting object,
/// its final state) and whether anything changed.
#[allow(clippy::too_many_arguments)]
pub fn update(
    state: &mut State,
    rt: &ResourceType,
    namespace: &str,
    name: &str,
    subresource: &Subresource,
    mut object: Value,
    writer: &Writer<'_>,
    ownership: Ownership,
) -> Result<Arc<Value>, ApiError> {
    if !object.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be an object",
        ));
    }
    if object.get("metadata").is_none_or(|m| !m.is_object()) {
        object["metadata"] = json!({});
    }
    let body_name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if !body_name.is_empty() && body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let Some(old) = state.get(rt, namespace, name) else {
        return Err(ApiError::not_found(rt, name));
    };
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if rt.custom && !kind.is_empty() && kind != rt.kind {
        return Err(ApiError::invalid(
            rt,
            &kind,
            name,
            vec![Cause::new(
                "kind",
                "FieldValueInvalid",
                format!("Invalid value: \"{kind}\": must be {}", rt.kind),
            )],
        ));
    }
    let requested_rv = object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let current_rv = old
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !requested_rv.is_empty() && requested_rv != current_rv {
        return Err(ApiError::stale(rt, name));
    }

    let scope = scope_for(rt, subresource);
    let applied_fields = object.pointer("/metadata/managedFields").cloned();
    let mut new = if subresource.is_none() {
        {
            // Main resource: status is owned by the status subresource.
            if rt.status_subresource {
                match old.get("status") {
                    Some(status) => object["status"] = status.clone(),
                    None => {
                        object.as_object_mut().map(|o| o.remove("status"));
                    }
                }
            }
            object
        }
    } else {
        subresource_object(rt, &old, object, subresource)
    };
    set_identity(&mut new, rt, namespace);
    keep_system_fields(&mut new, &old);
    if ownership == Ownership::Precomputed {
        let metadata = metadata_mut(&mut new);
        match applied_fields {
            Some(fields) => metadata.insert("managedFields".into(), fields),
            None => metadata.remove("managedFields"),
        };
    }
    let strategy = strategy_for(rt);
    strategy.prepare_update(&Context { state, rt, writer }, &old, &mut new, subresource)?;
    check_finalizers(rt, &old, &new, name)?;
    if (rt.generation || rt.custom) && spec_changed(&old, &new) {
        let generation = old
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            + 1;
        metadata_mut(&mut new).insert("generation".into(), json!(generation));
    }
    if ownership == Ownership::Record {
        let rules = list_rules(rt);
        managed::record_update(
            Some(&old),
            &mut new,
            writer.manager,
            &rt.api_version(),
            scope,
            rules.as_ref(),
            &now_rfc3339(),
        );
    }
    drop_empty_fields(rt, &mut new);
    let mut causes = objectmeta::validate_update(&new);
    causes.extend(objectmeta::validate_data(rt, &new));
    if !causes.is_empty() {
        return Err(ApiError::invalid(rt, &rt.kind, name, causes));
    }
    if unchanged(&old, &new) {
        return Ok(old);
    }
    if writer.dry_run {
        return Ok(Arc::new(new));
    }
    limits::check_object_size(&new)?;
    let deleting = new.pointer("/metadata/deletionTimestamp").is_some();
    if deleting && finalizers(&new).is_empty() && !strategy.removal_blocked(&new) {
        // The last finalizer is gone: the object is removed; watchers see its previous state.
        state.remove(&rt.storage_key(), namespace, name);
        strategy.after_remove(state, &new);
        return Ok(Arc::new(new));
    }
    let stored = state.replace(&rt.storage_key(), new);
    strategy.after_write(state, &stored);
    Ok(stored)
}

/// Deletes an object: preconditions, propagation finalizers, deletionTimestamp or removal.
pub fn delete(
    state: &mut State,
    rt: &ResourceType,
    namespace: &str,
    name: &str,
    options: &DeleteOptions,
) -> Result<DeleteOutcome, ApiError> {
    let Some(current) = state.get(rt, namespace, name) else {
        return Err(ApiError::not_found(rt, name));
    };
    let object_kind = current
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or(&rt.kind)
        .to_string();
    if let Some(uid) = &options.uid {
        let actual = current
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if uid != actual {
            return Err(precondition_failed(
                &object_kind,
                name,
                &format!(
                    "the UID in the precondition ({uid}) does not match the UID in record ({actual}). The object might have been deleted and then recreated"
                ),
            ));
        }
    }
    if let Some(rv) = &options.resource_version {
        let actual = current
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if rv != actual {
            return Err(precondition_failed(
                &object_kind,
                name,
                &format!(
                    "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified"
                ),
            ));
        }
    }
    let mut object = (*current).clone();
    let mut extra_finalizers: Vec<&str> = match options.propagation.as_deref() {
        Some("Foreground") => vec!["foregroundDeletion"],
        Some("Orphan") => vec!["orphan"],
        _ => Vec::new(),
    };
    let strategy = strategy_for(rt);
    extra_finalizers.extend(strategy.deletion_finalizers());
    let already_deleting = object.pointer("/metadata/deletionTimestamp").is_some();
    let mut present = finalizers(&object);
    let mut changed = false;
    for finalizer in extra_finalizers {
        if !present.iter().any(|f| f == finalizer) {
            present.push(finalizer.to_string());
            changed = true;
        }
    }
    if already_deleting {
        if !changed {
            return Ok(DeleteOutcome::Marked(current));
        }
        metadata_mut(&mut object).insert("finalizers".into(), json!(present));
        if options.dry_run {
            return Ok(DeleteOutcome::Marked(Arc::new(object)));
        }
        return Ok(DeleteOutcome::Marked(
            state.replace(&rt.storage_key(), object),
        ));
    }
    if present.is_empty() && !strategy.graceful_deletion() {
        if options.dry_run {
            return Ok(DeleteOutcome::Removed(current));
        }
        let removed = state
            .remove(&rt.storage_key(), namespace, name)
            .unwrap_or(current);
        strategy.after_remove(state, &removed);
        return Ok(DeleteOutcome::Removed(removed));
    }
    let metadata = metadata_mut(&mut object);
    // The first marking bumps a set generation, as kube-apiserver's store does (controllers
    // that filter on generation changes see the deletion).
    if let Some(generation) = metadata
        .get("generation")
        .and_then(Value::as_i64)
        .filter(|g| *g > 0)
    {
        metadata.insert("generation".into(), json!(generation + 1));
    }
    metadata.insert("deletionTimestamp".into(), json!(now_rfc3339()));
    if !strategy.graceful_deletion() {
        metadata.insert("deletionGracePeriodSeconds".into(), json!(0));
    }
    if !present.is_empty() {
        metadata.insert("finalizers".into(), json!(present));
    }
    strategy.mark_deleting(&mut object);
    if options.dry_run {
        return Ok(DeleteOutcome::Marked(Arc::new(object)));
    }
    Ok(DeleteOutcome::Marked(
        state.replace(&rt.storage_key(), object),
    ))
}

/// The Status answered for a removed object.
pub fn deleted_status(rt: &ResourceType, object: &Value) -> Value {
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut d = details(&rt.group, &rt.plural, name);
    if let (Some(map), Some(uid)) = (d.as_object_mut(), object.pointer("/metadata/uid")) {
        map.insert("uid".into(), uid.clone());
    }
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": d})
}

fn precondition_failed(kind: &str, name: &str, reason: &str) -> ApiError {
    ApiError::status(
        409,
        "Conflict",
        format!("Operation cannot be fulfilled on {kind} \"{name}\": {reason}"),
        Some(json!({"name": name, "kind": kind})),
    )
}

/// Which managedFields scope a write through `subresource` has.
pub fn scope_for(rt: &ResourceType, subresource: &Subresource) -> Scope {
    if !subresource.is_none() {
        Scope::Status
    } else if rt.status_subresource {
        Scope::Main
    } else {
        Scope::Whole
    }
}

/// The object a subresource write produces: the old object with the subresource's part taken from the body.
fn subresource_object(
    rt: &ResourceType,
    old: &Value,
    body: Value,
    subresource: &Subresource,
) -> Value {
    let mut new = old.clone();
    if *subresource == Subresource::Finalize {
        // A namespace's finalize subresource changes its spec (the finalizers list).
        if let Some(spec) = body.get("spec") {
            new["spec"] = spec.clone();
        }
    }
    if !rt.custom
        && let Some(metadata) = body.get("metadata")
    {
        new["metadata"] = metadata.clone();
    }
    match body.get("status") {
        Some(status) => new["status"] = status.clone(),
        None => {
            new.as_object_mut().map(|o| o.remove("status"));
        }
    }
    new
}

/// Sets apiVersion, kind and namespace from the resource type and path.
fn set_identity(object: &mut Value, rt: &ResourceType, namespace: &str) {
    if let Some(map) = object.as_object_mut() {
        let rest: Map<String, Value> = std::mem::take(map);
        map.insert("apiVersion".into(), json!(rt.api_version()));
        map.insert("kind".into(), json!(rt.kind));
        for (k, v) in rest {
            if k != "apiVersion" && k != "kind" {
                map.insert(k, v);
            }
        }
    }
    let metadata = metadata_mut(object);
    if rt.namespaced {
        metadata.insert("namespace".into(), json!(namespace));
    } else {
        metadata.remove("namespace");
    }
}

/// Carries the fields clients cannot change over from the stored object.
fn keep_system_fields(new: &mut Value, old: &Value) {
    let old_metadata = old
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let metadata = metadata_mut(new);
    for key in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "managedFields",
    ] {
        match old_metadata.get(key) {
            Some(v) => {
                metadata.insert(key.into(), v.clone());
            }
            None => {
                metadata.remove(key);
            }
        }
    }
    metadata.remove("resourceVersion");
    if let Some(rv) = old_metadata.get("resourceVersion") {
        metadata.insert("resourceVersion".into(), rv.clone());
    }
}

/// "No new finalizers can be added if the object is being deleted".
fn check_finalizers(
    rt: &ResourceType,
    old: &Value,
    new: &Value,
    name: &str,
) -> Result<(), ApiError> {
    if old.pointer("/metadata/deletionTimestamp").is_none() {
        return Ok(());
    }
    let before = finalizers(old);
    let added: Vec<String> = finalizers(new)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    if added.is_empty() {
        return Ok(());
    }
    let quoted: Vec<String> = added.iter().map(|f| format!("\"{f}\"")).collect();
    let message = format!(
        "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
        quoted.join(", ")
    );
    // kube-apiserver reports this twice (metadata update validation runs in two places).
    let cause = Cause::new("metadata.finalizers", "FieldValueForbidden", message);
    Err(ApiError::invalid(
        rt,
        &rt.kind,
        name,
        vec![cause.clone(), cause],
    ))
}

/// Drops empty metadata maps and lists (and empty data maps of built-in kinds), which kube-apiserver's
/// typed serialization omits.
fn drop_empty_fields(rt: &ResourceType, object: &mut Value) {
    let empty = |v: &Value| match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Null => true,
        _ => false,
    };
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in [
            "labels",
            "annotations",
            "finalizers",
            "ownerReferences",
            "managedFields",
        ] {
            if metadata.get(key).is_some_and(empty) {
                metadata.remove(key);
            }
        }
    }
    if !rt.custom
        && rt.group.is_empty()
        && (rt.kind == "Secret" || rt.kind == "ConfigMap")
        && let Some(map) = object.as_object_mut()
    {
        for key in ["data", "binaryData", "stringData"] {
            if map.get(key).is_some_and(empty) {
                map.remove(key);
            }
        }
    }
}

/// Whether anything but metadata and status differs.
fn spec_changed(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(map) = v.as_object_mut() {
            map.remove("metadata");
            map.remove("status");
        }
        v
    };
    strip(old) != strip(new)
}

/// Whether an update changes nothing but managedFields timestamps and the resourceVersion.
fn unchanged(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(metadata) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("resourceVersion");
            if let Some(Value::Array(entries)) = metadata.get_mut("managedFields") {
                for entry in entries.iter_mut().filter_map(Value::as_object_mut) {
                    entry.remove("time");
                }
            }
        }
        v
    };
    strip(old) == strip(new)
}

/// Fills `metadata.name` from `generateName`.
fn assign_name(object: &mut Value, rt: &ResourceType, kind: &str) -> Result<(), ApiError> {
    let metadata = metadata_mut(object);
    let name = metadata
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if !name.is_empty() {
        return Ok(());
    }
    let prefix = metadata
        .get("generateName")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if prefix.is_empty() {
        let kind = if kind.is_empty() {
            rt.kind.as_str()
        } else {
            kind
        };
        return Err(ApiError::invalid(
            rt,
            kind,
            "",
            vec![validation::name_required()],
        ));
    }
    metadata.insert("name".into(), json!(generated_name(&prefix)));
    Ok(())
}

/// kube-apiserver's `SimpleNameGenerator`: the prefix cut to 58 bytes, then 5 random characters,
/// so the name is never longer than a label however long the generateName.
fn generated_name(prefix: &str) -> String {
    const MAX_PREFIX: usize = 63 - 5;
    let mut cut = prefix.len().min(MAX_PREFIX);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{}", &prefix[..cut], random_suffix())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_change_ignores_metadata_and_status() {
        let old = json!({"metadata": {"labels": {}}, "spec": {"a": 1}, "status": {"x": 1}});
        let same =
            json!({"metadata": {"labels": {"b": "c"}}, "spec": {"a": 1}, "status": {"x": 2}});
        let changed = json!({"metadata": {}, "spec": {"a": 2}});
        assert!(!spec_changed(&old, &same));
        assert!(spec_changed(&old, &changed));
    }

    #[test]
    fn delete_options_read_body_then_query() {
        let body = json!({"propagationPolicy": "Foreground", "preconditions": {"uid": "u"}});
        let options = DeleteOptions::parse(Some(&body), Some("Orphan"));
        assert_eq!(options.propagation.as_deref(), Some("Foreground"));
        assert_eq!(options.uid.as_deref(), Some("u"));
        assert_eq!(
            DeleteOptions::parse(None, Some("Orphan"))
                .propagation
                .as_deref(),
            Some("Orphan")
        );
    }
}
