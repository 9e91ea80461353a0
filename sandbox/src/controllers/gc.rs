//! Owner-reference garbage collection: dependents of vanished owners are deleted; `foregroundDeletion`
//! owners wait for their blocking dependents; `orphan` owners release their dependents first.
//!
//! Both passes look only at the objects the event stream queued (see [`super::index`]), with the
//! index answering "does this UID still exist" and "who depends on this UID".

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::index::Index;
use super::object_ref::ObjectRef;
use crate::registry::generic::{self, DeleteOptions, Ownership, Writer};
use crate::resources::{Registry, Subresource};
use crate::storage::State;

/// Deletes the queued dependents whose owners (of served kinds) are all gone; returns whether
/// anything was written.
pub fn collect(state: &mut State, index: &Index, queued: &BTreeSet<ObjectRef>) -> bool {
    let registry = state.registry();
    let mut changed = false;
    for target in queued {
        let Some(object) = target.fetch(state) else {
            continue;
        };
        if object.pointer("/metadata/deletionTimestamp").is_some() {
            continue;
        }
        let references = object
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if all_owners_gone(references, index, &registry) {
            changed |= delete(state, target);
        }
    }
    changed
}

/// Whether every owner reference names a served kind whose object no longer exists (a reference
/// to a kind nobody serves can't be checked, so it keeps the dependent, like kube's GC).
fn all_owners_gone(references: &[Value], index: &Index, registry: &Registry) -> bool {
    !references.is_empty()
        && references.iter().all(|r| {
            let text = |field: &str| r.get(field).and_then(Value::as_str).unwrap_or_default();
            registry.by_kind(text("apiVersion"), text("kind")).is_some()
                && !index.exists(text("uid"))
        })
}

/// Finishes the queued owners that are deleting in the foreground (once no dependent blocks) or
/// orphaning (after releasing every dependent); returns whether anything was written.
pub fn finish_owners(
    state: &mut State,
    index: &Index,
    queued: &BTreeSet<ObjectRef>,
    writer: &Writer<'_>,
) -> bool {
    let mut changed = false;
    for target in queued {
        let Some(owner) = target.fetch(state) else {
            continue;
        };
        if owner.pointer("/metadata/deletionTimestamp").is_none() {
            continue;
        }
        let finalizers = crate::object::finalizers(&owner);
        let finalizer = if finalizers.iter().any(|f| f == "orphan") {
            "orphan"
        } else if finalizers.iter().any(|f| f == "foregroundDeletion") {
            "foregroundDeletion"
        } else {
            continue;
        };
        let uid = owner
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let mut blocking = false;
        for child_ref in index.dependents_of(&uid) {
            let Some(child) = child_ref.fetch(state) else {
                continue;
            };
            if finalizer == "orphan" {
                changed |= release(state, &child_ref, &uid, writer);
                continue;
            }
            blocking |= blocks_owner(&child, &uid);
            if child.pointer("/metadata/deletionTimestamp").is_none() {
                changed |= delete(state, &child_ref);
            }
        }
        if !blocking {
            changed |= remove_finalizer(state, target, finalizer, writer);
        }
    }
    changed
}

/// Whether `child` references `owner_uid` with `blockOwnerDeletion: true`.
fn blocks_owner(child: &Value, owner_uid: &str) -> bool {
    child
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|r| {
            r.get("uid").and_then(Value::as_str) == Some(owner_uid)
                && r.get("blockOwnerDeletion") == Some(&json!(true))
        })
}

fn delete(state: &mut State, target: &ObjectRef) -> bool {
    let Some(rt) = state.registry().by_storage_key(&target.key) else {
        return false;
    };
    let options = DeleteOptions {
        propagation: Some("Background".into()),
        ..DeleteOptions::default()
    };
    generic::delete(state, &rt, &target.namespace, &target.name, &options).is_ok()
}

/// Removes the owner reference to `owner_uid` from a dependent.
fn release(state: &mut State, target: &ObjectRef, owner_uid: &str, writer: &Writer<'_>) -> bool {
    let Some(rt) = state.registry().by_storage_key(&target.key) else {
        return false;
    };
    let Some(current) = target.fetch(state) else {
        return false;
    };
    let mut object = (*current).clone();
    if let Some(references) = object
        .pointer_mut("/metadata/ownerReferences")
        .and_then(Value::as_array_mut)
    {
        references.retain(|r| r.get("uid").and_then(Value::as_str) != Some(owner_uid));
        if references.is_empty() {
            crate::object::metadata_mut(&mut object).remove("ownerReferences");
        }
    }
    generic::update(
        state,
        &rt,
        &target.namespace,
        &target.name,
        &Subresource::None,
        object,
        writer,
        Ownership::Record,
    )
    .is_ok()
}

/// Removes one finalizer from an object (which removes the object if it was the last one).
pub fn remove_finalizer(
    state: &mut State,
    target: &ObjectRef,
    finalizer: &str,
    writer: &Writer<'_>,
) -> bool {
    let Some(rt) = state.registry().by_storage_key(&target.key) else {
        return false;
    };
    let Some(current) = target.fetch(state) else {
        return false;
    };
    let mut object = (*current).clone();
    let remaining: Vec<String> = crate::object::finalizers(&object)
        .into_iter()
        .filter(|f| f != finalizer)
        .collect();
    if remaining.is_empty() {
        crate::object::metadata_mut(&mut object).remove("finalizers");
    } else {
        crate::object::metadata_mut(&mut object).insert("finalizers".into(), json!(remaining));
    }
    generic::update(
        state,
        &rt,
        &target.namespace,
        &target.name,
        &Subresource::None,
        object,
        writer,
        Ownership::Record,
    )
    .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependent_blocks_only_the_owner_it_names_with_block_owner_deletion() {
        let child = json!({"metadata": {"ownerReferences": [
            {"uid": "a", "blockOwnerDeletion": true},
            {"uid": "b", "blockOwnerDeletion": false},
        ]}});
        assert!(blocks_owner(&child, "a"));
        assert!(!blocks_owner(&child, "b"));
        assert!(!blocks_owner(&child, "c"));
    }

    #[test]
    fn object_without_owner_references_is_never_collected() {
        let registry = Registry::new(Vec::new());
        assert!(!all_owners_gone(&[], &Index::default(), &registry));
    }
}
