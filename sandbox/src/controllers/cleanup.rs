//! Namespace termination (delete the contents, then finalize) and CRD cleanup (delete the custom objects,
//! then drop the cleanup finalizer).

use serde_json::{Value, json};

use super::gc::remove_finalizer;
use crate::crd::{self, CLEANUP_FINALIZER, CRD_KEY};
use crate::ops::{self, DeleteOptions, Ownership, Writer};
use crate::store::{State, object_key};

/// One pass over terminating namespaces; returns whether anything was written.
pub fn namespaces(state: &mut State, writer: &Writer<'_>) -> bool {
    let terminating: Vec<String> = state
        .list("namespaces", None)
        .iter()
        .filter(|ns| ns.pointer("/metadata/deletionTimestamp").is_some())
        .map(|ns| object_key(ns).1)
        .collect();
    let mut changed = false;
    let registry = state.registry();
    for namespace in terminating {
        if state.namespace_has_objects(&namespace) {
            for key in state.resource_keys() {
                let Some(rt) = registry.by_storage_key(&key) else {
                    continue;
                };
                if !rt.namespaced {
                    continue;
                }
                for object in state.list(&key, Some(&namespace)) {
                    if object.pointer("/metadata/deletionTimestamp").is_some() {
                        continue;
                    }
                    let name = object_key(&object).1;
                    changed |=
                        ops::delete(state, &rt, &namespace, &name, &DeleteOptions::default())
                            .is_ok();
                }
            }
            continue;
        }
        let Some(rt) = registry.by_storage_key("namespaces") else {
            continue;
        };
        let Some(current) = state.get(&rt, "", &namespace) else {
            continue;
        };
        let mut object = (*current).clone();
        let remaining: Vec<Value> = object
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .map(|f| {
                f.iter()
                    .filter(|f| f.as_str() != Some("kubernetes"))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        object["spec"] = json!({"finalizers": remaining});
        changed |= ops::update(
            state,
            &rt,
            "",
            &namespace,
            "finalize",
            object,
            writer,
            Ownership::Record,
        )
        .is_ok();
    }
    changed
}

/// One pass over deleting CRDs; returns whether anything was written.
pub fn custom_resource_definitions(state: &mut State, writer: &Writer<'_>) -> bool {
    let deleting: Vec<Value> = state
        .list(CRD_KEY, None)
        .iter()
        .filter(|c| {
            c.pointer("/metadata/deletionTimestamp").is_some()
                && ops::finalizers(c).iter().any(|f| f == CLEANUP_FINALIZER)
        })
        .map(|c| (**c).clone())
        .collect();
    let mut changed = false;
    for definition in deleting {
        let mut remaining = 0;
        for custom in crd::types_of(&definition).into_iter().take(1) {
            for object in state.list(&custom.storage_key(), None) {
                remaining += 1;
                if object.pointer("/metadata/deletionTimestamp").is_some() {
                    continue;
                }
                let (namespace, name) = object_key(&object);
                changed |=
                    ops::delete(state, &custom, &namespace, &name, &DeleteOptions::default())
                        .is_ok();
            }
        }
        if remaining == 0 {
            let location = (
                CRD_KEY.to_string(),
                String::new(),
                object_key(&definition).1,
            );
            changed |= remove_finalizer(state, &location, CLEANUP_FINALIZER, writer);
        }
    }
    changed
}
