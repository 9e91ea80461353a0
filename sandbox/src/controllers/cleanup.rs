//! Namespace termination (delete the contents, then finalize) and CRD cleanup (delete the custom objects,
//! then drop the cleanup finalizer), for the namespaces and CRDs the event stream queued.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::gc::remove_finalizer;
use super::object_ref::ObjectRef;
use crate::registry::crd::{self, CLEANUP_FINALIZER, CRD_KEY};
use crate::registry::generic::{self, DeleteOptions, Ownership, Writer};
use crate::resources::Subresource;
use crate::storage::{State, object_key};

/// Advances the queued terminating namespaces; returns whether anything was written.
pub fn namespaces(state: &mut State, queued: &BTreeSet<String>, writer: &Writer<'_>) -> bool {
    let mut changed = false;
    let registry = state.registry();
    for namespace in queued {
        let terminating = state
            .get_by_key("namespaces", "", namespace)
            .is_some_and(|ns| ns.pointer("/metadata/deletionTimestamp").is_some());
        if !terminating {
            continue;
        }
        if state.namespace_has_objects(namespace) {
            for key in state.resource_keys() {
                let Some(rt) = registry.by_storage_key(&key) else {
                    continue;
                };
                if !rt.namespaced {
                    continue;
                }
                for object in state.list(&key, Some(namespace)) {
                    if object.pointer("/metadata/deletionTimestamp").is_some() {
                        continue;
                    }
                    let name = object_key(&object).1;
                    changed |=
                        generic::delete(state, &rt, namespace, &name, &DeleteOptions::default())
                            .is_ok();
                }
            }
            continue;
        }
        let Some(rt) = registry.by_storage_key("namespaces") else {
            continue;
        };
        let Some(current) = state.get(&rt, "", namespace) else {
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
        changed |= generic::update(
            state,
            &rt,
            "",
            namespace,
            &Subresource::Finalize,
            object,
            writer,
            Ownership::Record,
        )
        .is_ok();
    }
    changed
}

/// Advances the queued deleting CRDs; returns whether anything was written.
pub fn custom_resource_definitions(
    state: &mut State,
    queued: &BTreeSet<String>,
    writer: &Writer<'_>,
) -> bool {
    let deleting: Vec<Value> = queued
        .iter()
        .filter_map(|name| state.get_by_key(CRD_KEY, "", name))
        .filter(|c| {
            c.pointer("/metadata/deletionTimestamp").is_some()
                && crate::object::finalizers(c)
                    .iter()
                    .any(|f| f == CLEANUP_FINALIZER)
        })
        .map(|c| (*c).clone())
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
                    generic::delete(state, &custom, &namespace, &name, &DeleteOptions::default())
                        .is_ok();
            }
        }
        if remaining == 0 {
            let location = ObjectRef {
                key: CRD_KEY.to_string(),
                namespace: String::new(),
                name: object_key(&definition).1,
            };
            changed |= remove_finalizer(state, &location, CLEANUP_FINALIZER, writer);
        }
    }
    changed
}
