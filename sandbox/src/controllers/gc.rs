//! Owner-reference garbage collection: dependents of vanished owners are deleted; `foregroundDeletion`
//! owners wait for their blocking dependents; `orphan` owners release their dependents first.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::ops::{self, DeleteOptions, Ownership, Writer};
use crate::store::{State, object_key};

/// Where an object is stored.
#[derive(Clone, Debug)]
struct Location {
    key: String,
    namespace: String,
    name: String,
}

/// One garbage-collection pass; returns whether anything was written.
pub fn pass(state: &mut State, writer: &Writer<'_>) -> bool {
    let registry = state.registry();
    let mut existing: HashSet<String> = HashSet::new();
    let mut dependents: HashMap<String, Vec<(Location, Arc<Value>)>> = HashMap::new();
    let mut owners_waiting: Vec<(Location, Arc<Value>)> = Vec::new();
    for key in state.resource_keys() {
        for object in state.list(&key, None) {
            let (namespace, name) = object_key(&object);
            let location = Location {
                key: key.clone(),
                namespace,
                name,
            };
            if let Some(uid) = object.pointer("/metadata/uid").and_then(Value::as_str) {
                existing.insert(uid.to_string());
            }
            for reference in object
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(uid) = reference.get("uid").and_then(Value::as_str) {
                    dependents
                        .entry(uid.to_string())
                        .or_default()
                        .push((location.clone(), object.clone()));
                }
            }
            let finalizers = ops::finalizers(&object);
            if object.pointer("/metadata/deletionTimestamp").is_some()
                && finalizers
                    .iter()
                    .any(|f| f == "foregroundDeletion" || f == "orphan")
            {
                owners_waiting.push((location, object.clone()));
            }
        }
    }
    let mut changed = false;

    // Dependents whose owners (of served kinds) are all gone.
    let mut collected: HashSet<String> = HashSet::new();
    for (owner_uid, items) in &dependents {
        if existing.contains(owner_uid) {
            continue;
        }
        for (location, object) in items {
            let references = object
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let all_gone = references.iter().all(|r| {
                let uid = r.get("uid").and_then(Value::as_str).unwrap_or_default();
                let kind_served = registry
                    .by_kind(
                        r.get("apiVersion")
                            .and_then(Value::as_str)
                            .unwrap_or_default(),
                        r.get("kind").and_then(Value::as_str).unwrap_or_default(),
                    )
                    .is_some();
                kind_served && !existing.contains(uid)
            });
            let deleting = object.pointer("/metadata/deletionTimestamp").is_some();
            let id = format!("{}/{}/{}", location.key, location.namespace, location.name);
            if all_gone && !deleting && collected.insert(id) {
                changed |= delete(state, location);
            }
        }
    }

    // Owners deleting in the foreground or orphaning.
    for (location, owner) in owners_waiting {
        let uid = owner
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let children = dependents.get(&uid).cloned().unwrap_or_default();
        let finalizers = ops::finalizers(&owner);
        let finalizer = if finalizers.iter().any(|f| f == "orphan") {
            "orphan"
        } else {
            "foregroundDeletion"
        };
        let mut blocking = false;
        for (child_location, child) in &children {
            if finalizer == "orphan" {
                changed |= release(state, child_location, &uid, writer);
                continue;
            }
            let blocks = child
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|r| {
                    r.get("uid").and_then(Value::as_str) == Some(uid.as_str())
                        && r.get("blockOwnerDeletion") == Some(&json!(true))
                });
            blocking |= blocks;
            if child.pointer("/metadata/deletionTimestamp").is_none() {
                changed |= delete(state, child_location);
            }
        }
        if !blocking {
            changed |= remove_finalizer(state, &location, finalizer, writer);
        }
    }
    changed
}

fn delete(state: &mut State, location: &Location) -> bool {
    let Some(rt) = state.registry().by_storage_key(&location.key) else {
        return false;
    };
    let options = DeleteOptions {
        propagation: Some("Background".into()),
        ..DeleteOptions::default()
    };
    ops::delete(state, &rt, &location.namespace, &location.name, &options).is_ok()
}

/// Removes the owner reference to `owner_uid` from a dependent.
fn release(state: &mut State, location: &Location, owner_uid: &str, writer: &Writer<'_>) -> bool {
    let Some(rt) = state.registry().by_storage_key(&location.key) else {
        return false;
    };
    let Some(current) = state.get(&rt, &location.namespace, &location.name) else {
        return false;
    };
    let mut object = (*current).clone();
    if let Some(references) = object
        .pointer_mut("/metadata/ownerReferences")
        .and_then(Value::as_array_mut)
    {
        references.retain(|r| r.get("uid").and_then(Value::as_str) != Some(owner_uid));
        if references.is_empty() {
            ops::metadata_mut(&mut object).remove("ownerReferences");
        }
    }
    ops::update(
        state,
        &rt,
        &location.namespace,
        &location.name,
        "",
        object,
        writer,
        Ownership::Record,
    )
    .is_ok()
}

/// Removes one finalizer from an object (which removes the object if it was the last one).
pub fn remove_finalizer(
    state: &mut State,
    location_key: &LocationRef<'_>,
    finalizer: &str,
    writer: &Writer<'_>,
) -> bool {
    let Some(rt) = state.registry().by_storage_key(location_key.key()) else {
        return false;
    };
    let Some(current) = state.get(&rt, location_key.namespace(), location_key.name()) else {
        return false;
    };
    let mut object = (*current).clone();
    let remaining: Vec<String> = ops::finalizers(&object)
        .into_iter()
        .filter(|f| f != finalizer)
        .collect();
    if remaining.is_empty() {
        ops::metadata_mut(&mut object).remove("finalizers");
    } else {
        ops::metadata_mut(&mut object).insert("finalizers".into(), json!(remaining));
    }
    ops::update(
        state,
        &rt,
        location_key.namespace(),
        location_key.name(),
        "",
        object,
        writer,
        Ownership::Record,
    )
    .is_ok()
}

/// Anything that names a stored object.
pub trait LocationLike {
    /// Storage key.
    fn key(&self) -> &str;
    /// Namespace.
    fn namespace(&self) -> &str;
    /// Name.
    fn name(&self) -> &str;
}

/// A borrowed object location.
pub type LocationRef<'a> = dyn LocationLike + 'a;

impl LocationLike for Location {
    fn key(&self) -> &str {
        &self.key
    }
    fn namespace(&self) -> &str {
        &self.namespace
    }
    fn name(&self) -> &str {
        &self.name
    }
}

impl LocationLike for (String, String, String) {
    fn key(&self) -> &str {
        &self.0
    }
    fn namespace(&self) -> &str {
        &self.1
    }
    fn name(&self) -> &str {
        &self.2
    }
}
