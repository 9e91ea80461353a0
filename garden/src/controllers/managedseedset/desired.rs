//! The objects a ManagedSeedSet writes, from its templates: a replica's Shoot and ManagedSeed
//! (labels and annotations of the template, a controller owner reference to the set, the
//! replica's name for `replica-name` in the DNS and ingress domains), and its label selector.

use std::collections::BTreeMap;

use kube::ResourceExt;
use seedlet_api::seedmanagement::ManagedSeedSet;
use serde_json::{Value, json};

/// Placeholder in template domains replaced by the replica's name.
pub const REPLICA_NAME: &str = "replica-name";

/// The controller owner reference to `set`.
fn owner(set: &ManagedSeedSet) -> Value {
    json!([{
        "apiVersion": "seedmanagement.gardener.cloud/v1alpha1",
        "kind": "ManagedSeedSet",
        "name": set.name_any(),
        "uid": set.metadata.uid,
        "controller": true,
        "blockOwnerDeletion": true,
    }])
}

fn template_metadata(template: Option<&Value>, field: &str) -> Value {
    template
        .and_then(|t| t.pointer(&format!("/metadata/{field}")))
        .cloned()
        .unwrap_or_else(|| json!({}))
}

/// Replaces `replica-name` in the string at `pointer` of `value`, if there is one.
fn replace_at(value: &mut Value, pointer: &str, name: &str) {
    if let Some(Value::String(domain)) = value.pointer_mut(pointer) {
        *domain = domain.replace(REPLICA_NAME, name);
    }
}

/// The Shoot of replica `name`.
pub fn replica_shoot(set: &ManagedSeedSet, name: &str) -> Value {
    let template = set.spec.shoot_template.as_ref();
    let mut spec = template
        .and_then(|t| t.get("spec"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    replace_at(&mut spec, "/dns/domain", name);
    json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": {
            "name": name,
            "namespace": set.namespace(),
            "labels": template_metadata(template, "labels"),
            "annotations": template_metadata(template, "annotations"),
            "ownerReferences": owner(set),
        },
        "spec": spec,
    })
}

/// The ManagedSeed of replica `name`. The gardenlet config's seed ingress domain gets the
/// replica's name too ([QUIRK] upstream replaces it on a decoded copy that is lost when the
/// config arrives as raw JSON; here it is replaced in the written object).
pub fn replica_managed_seed(set: &ManagedSeedSet, name: &str) -> Value {
    let template = set.spec.template.as_ref();
    let mut gardenlet = template
        .and_then(|t| t.pointer("/spec/gardenlet"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    replace_at(
        &mut gardenlet,
        "/config/seedConfig/spec/ingress/domain",
        name,
    );
    json!({
        "apiVersion": "seedmanagement.gardener.cloud/v1alpha1",
        "kind": "ManagedSeed",
        "metadata": {
            "name": name,
            "namespace": set.namespace(),
            "labels": template_metadata(template, "labels"),
            "annotations": template_metadata(template, "annotations"),
            "ownerReferences": owner(set),
        },
        "spec": {"shoot": {"name": name}, "gardenlet": gardenlet},
    })
}

/// Whether `labels` match the set's `selector` (`matchLabels` and `matchExpressions` with `In`,
/// `NotIn`, `Exists`, `DoesNotExist`). An absent selector matches nothing, as upstream refuses
/// such sets.
pub fn selects(selector: Option<&Value>, labels: &BTreeMap<String, String>) -> bool {
    let Some(selector) = selector else {
        return false;
    };
    let match_labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(|wanted| {
            wanted
                .iter()
                .all(|(key, value)| labels.get(key).map(String::as_str) == value.as_str())
        });
    let expressions = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .is_none_or(|expressions| {
            expressions.iter().all(|expression| {
                let key = expression
                    .get("key")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let values: Vec<&str> = expression
                    .get("values")
                    .and_then(Value::as_array)
                    .map(|v| v.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let value = labels.get(key).map(String::as_str);
                match expression.get("operator").and_then(Value::as_str) {
                    Some("In") => value.is_some_and(|v| values.contains(&v)),
                    Some("NotIn") => value.is_none_or(|v| !values.contains(&v)),
                    Some("Exists") => value.is_some(),
                    Some("DoesNotExist") => value.is_none(),
                    _ => false,
                }
            })
        });
    match_labels && expressions
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> ManagedSeedSet {
        serde_json::from_value(json!({
            "metadata": {"name": "set", "namespace": "garden", "uid": "u-1"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "set"}},
                "shootTemplate": {
                    "metadata": {"labels": {"app": "set"}},
                    "spec": {"dns": {"domain": "replica-name.example.com"}, "region": "local"},
                },
                "template": {
                    "metadata": {"labels": {"app": "set"}},
                    "spec": {"gardenlet": {"config": {"seedConfig": {"spec": {"ingress": {"domain": "ingress.replica-name.example.com"}}}}}},
                },
            },
        }))
        .expect("set")
    }

    #[test]
    fn replicas_are_built_from_the_templates_with_their_name() {
        let shoot = replica_shoot(&set(), "set-0");
        assert_eq!(shoot["metadata"]["name"], "set-0");
        assert_eq!(shoot["metadata"]["labels"]["app"], "set");
        assert_eq!(shoot["metadata"]["ownerReferences"][0]["controller"], true);
        assert_eq!(shoot["metadata"]["ownerReferences"][0]["uid"], "u-1");
        assert_eq!(shoot["spec"]["dns"]["domain"], "set-0.example.com");
        let managed_seed = replica_managed_seed(&set(), "set-0");
        assert_eq!(managed_seed["spec"]["shoot"]["name"], "set-0");
        assert_eq!(
            managed_seed["spec"]["gardenlet"]["config"]["seedConfig"]["spec"]["ingress"]["domain"],
            "ingress.set-0.example.com"
        );
    }

    #[test]
    fn selector_matches_labels_and_expressions() {
        let labels: BTreeMap<String, String> =
            [("app".into(), "set".into()), ("tier".into(), "a".into())].into();
        let table = [
            (json!({"matchLabels": {"app": "set"}}), true),
            (json!({"matchLabels": {"app": "other"}}), false),
            (
                json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}),
                true,
            ),
            (
                json!({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["a"]}]}),
                false,
            ),
            (
                json!({"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}),
                true,
            ),
            (
                json!({"matchExpressions": [{"key": "zone", "operator": "Exists"}]}),
                false,
            ),
        ];
        for (selector, expected) in table {
            assert_eq!(selects(Some(&selector), &labels), expected, "{selector}");
        }
        assert!(!selects(None, &labels));
    }
}
