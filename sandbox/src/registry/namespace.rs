//! Namespaces: the `kubernetes.io/metadata.name` label, `spec.finalizers` and phase set by the
//! server, the `finalize` subresource, and deletion left to the namespace controller.

use serde_json::{Value, json};

use super::strategy::{Context, Strategy};
use crate::object::metadata_mut;
use crate::registry::validation::NameRule;
use crate::resources::{ResourceType, Subresource};
use crate::status::{ApiError, details};
use crate::storage::State;

/// The label kube-apiserver keeps equal to a namespace's name.
const NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// Namespace rules.
pub struct Namespaces;

impl Strategy for Namespaces {
    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    fn selectable_fields<'r>(&self, _rt: &'r ResourceType) -> Vec<&'r str> {
        vec!["status.phase"]
    }

    fn prepare_create(&self, _ctx: &Context<'_>, object: &mut Value) -> Result<(), ApiError> {
        let name = object
            .pointer("/metadata/name")
            .cloned()
            .unwrap_or(Value::Null);
        set_name_label(object, name);
        object["spec"] = json!({"finalizers": ["kubernetes"]});
        object["status"] = json!({"phase": "Active"});
        Ok(())
    }

    fn prepare_update(
        &self,
        _ctx: &Context<'_>,
        old: &Value,
        new: &mut Value,
        subresource: &Subresource,
    ) -> Result<(), ApiError> {
        if *subresource != Subresource::Finalize {
            new["spec"] = old.get("spec").cloned().unwrap_or_else(|| json!({}));
        }
        if *subresource == Subresource::None {
            new["status"] = old.get("status").cloned().unwrap_or_else(|| json!({}));
        }
        let name = old
            .pointer("/metadata/name")
            .cloned()
            .unwrap_or(Value::Null);
        set_name_label(new, name);
        Ok(())
    }

    fn graceful_deletion(&self) -> bool {
        true
    }

    fn removal_blocked(&self, object: &Value) -> bool {
        object
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty())
    }

    fn mark_deleting(&self, object: &mut Value) {
        object["status"] = json!({"phase": "Terminating"});
    }
}

/// NamespaceLifecycle admission: creating in a missing namespace is 404, in a terminating one
/// 403 NamespaceTerminating.
///
/// # Errors
/// Those answers.
pub fn check_accepts_content(
    state: &State,
    rt: &ResourceType,
    namespace: &str,
    name: &str,
) -> Result<(), ApiError> {
    let ns = state.get_by_key("namespaces", "", namespace);
    let Some(ns) = ns else {
        return Err(ApiError::not_found_in("", "namespaces", namespace));
    };
    let terminating = ns.pointer("/metadata/deletionTimestamp").is_some()
        || ns.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating");
    if terminating {
        let mut d = details(&rt.group, &rt.plural, name);
        if let Some(map) = d.as_object_mut() {
            map.insert(
                "causes".into(),
                json!([{"reason": "NamespaceTerminating", "message": format!("namespace {namespace} is being terminated"), "field": "metadata.namespace"}]),
            );
        }
        let subject = if name.is_empty() {
            rt.qualified_plural()
        } else {
            format!("{} \"{name}\"", rt.qualified_plural())
        };
        return Err(ApiError::status(
            403,
            "Forbidden",
            format!(
                "{subject} is forbidden: unable to create new content in namespace {namespace} because it is being terminated"
            ),
            Some(d),
        ));
    }
    Ok(())
}

/// Namespaces kube-apiserver's NamespaceLifecycle admission never lets go.
const IMMORTAL: &[&str] = &["default", "kube-system", "kube-public"];

/// NamespaceLifecycle admission of a delete: `default`, `kube-system` and `kube-public` may not
/// be deleted (403 Forbidden); anything else may.
///
/// # Errors
/// That answer.
pub fn check_deletable(rt: &ResourceType, name: &str) -> Result<(), ApiError> {
    if !(rt.group.is_empty() && rt.plural == "namespaces" && IMMORTAL.contains(&name)) {
        return Ok(());
    }
    Err(ApiError::status(
        403,
        "Forbidden",
        format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted"),
        Some(details("", "namespaces", name)),
    ))
}

fn set_name_label(object: &mut Value, name: Value) {
    let labels = metadata_mut(object)
        .entry("labels")
        .or_insert_with(|| json!({}));
    if let Some(labels) = labels.as_object_mut() {
        labels.insert(NAME_LABEL.into(), name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_label_follows_the_name_and_overrides_a_client_value() {
        let mut object = json!({"metadata": {"name": "a", "labels": {NAME_LABEL: "b", "x": "y"}}});
        set_name_label(&mut object, json!("a"));
        assert_eq!(
            object["metadata"]["labels"],
            json!({NAME_LABEL: "a", "x": "y"})
        );
    }

    #[test]
    fn only_immortal_namespaces_refuse_deletion() {
        let types = crate::resources::builtin_types();
        let rt = |plural: &str| {
            types
                .iter()
                .find(|t| t.plural == plural)
                .expect("builtin type")
        };
        for (plural, name, refused) in [
            ("namespaces", "default", true),
            ("namespaces", "kube-system", true),
            ("namespaces", "kube-public", true),
            ("namespaces", "kube-node-lease", false),
            ("namespaces", "garden", false),
            ("configmaps", "default", false),
        ] {
            let answer = check_deletable(rt(plural), name);
            assert_eq!(answer.is_err(), refused, "{plural}/{name}");
            if let Err(error) = answer {
                assert_eq!(error.code, 403);
                assert_eq!(
                    error.body["message"],
                    format!(
                        "namespaces \"{name}\" is forbidden: this namespace may not be deleted"
                    )
                );
                assert_eq!(
                    error.body["details"],
                    json!({"name": name, "kind": "namespaces"})
                );
            }
        }
    }

    #[test]
    fn only_spec_finalizers_block_removal() {
        assert!(Namespaces.removal_blocked(&json!({"spec": {"finalizers": ["kubernetes"]}})));
        assert!(!Namespaces.removal_blocked(&json!({"spec": {"finalizers": []}})));
    }
}
