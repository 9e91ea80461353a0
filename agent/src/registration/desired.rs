//! Pure decisions of Seed registration: the registration merge patch and the DNS defaults taken
//! from the garden's default-domain Secrets.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use seedlet_api::names::{annotations, labels};
use serde_json::{Map, Value, json};

use super::Error;

/// The JSON merge patch that makes an existing Seed (or, for `existing = None`, a new one) match
/// `seedConfig` (spec §4.3):
///
/// - annotations: existing ∪ template, the template wins (nothing removed);
/// - labels: replaced by `{gardener.cloud/role: seed}` overlaid with the template's labels; every
///   other existing label is removed (set to `null`);
/// - spec: replaced by the template's spec (fields missing from it set to `null`), except that an
///   existing `spec.dns.defaults` is kept when the template has none.
///
/// No ownerReferences and no status are touched.
pub fn registration_patch(
    existing: Option<&Value>,
    template_labels: &BTreeMap<String, String>,
    template_annotations: &BTreeMap<String, String>,
    template_spec: &Value,
) -> Value {
    let mut desired_labels =
        BTreeMap::from([(labels::ROLE.to_owned(), labels::ROLE_SEED.to_owned())]);
    desired_labels.extend(template_labels.iter().map(|(k, v)| (k.clone(), v.clone())));
    let mut label_patch = Map::new();
    if let Some(Value::Object(existing_labels)) =
        existing.and_then(|s| s.pointer("/metadata/labels"))
    {
        for key in existing_labels.keys() {
            if !desired_labels.contains_key(key) {
                label_patch.insert(key.clone(), Value::Null);
            }
        }
    }
    for (key, value) in desired_labels {
        label_patch.insert(key, Value::String(value));
    }
    let annotation_patch: Map<String, Value> = template_annotations
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();

    let mut spec = template_spec.clone();
    if !spec.is_object() {
        spec = Value::Object(Map::new());
    }
    let existing_spec = existing.and_then(|s| s.get("spec"));
    let old_dns_defaults = existing_spec.and_then(|s| s.pointer("/dns/defaults"));
    if let Some(old) = old_dns_defaults
        && spec.pointer("/dns/defaults").is_none()
        && let Some(object) = spec.as_object_mut()
    {
        let dns = object.entry("dns").or_insert_with(|| json!({}));
        if let Some(dns) = dns.as_object_mut() {
            dns.insert("defaults".to_owned(), old.clone());
        }
    }
    let spec_patch = match existing_spec {
        Some(old) => replace_patch(old, &spec),
        None => spec,
    };
    json!({
        "metadata": {
            "labels": label_patch,
            "annotations": annotation_patch,
        },
        "spec": spec_patch,
    })
}

/// A merge patch turning `old` into exactly `new`: keys only in `old` become `null`, objects
/// present in both are patched recursively, everything else is replaced.
fn replace_patch(old: &Value, new: &Value) -> Value {
    match (old, new) {
        (Value::Object(old), Value::Object(new)) => {
            let mut patch = Map::new();
            for key in old.keys() {
                if !new.contains_key(key) {
                    patch.insert(key.clone(), Value::Null);
                }
            }
            for (key, value) in new {
                let entry = match old.get(key) {
                    Some(previous) => replace_patch(previous, value),
                    None => value.clone(),
                };
                patch.insert(key.clone(), entry);
            }
            Value::Object(patch)
        }
        _ => new.clone(),
    }
}

/// `spec.dns.defaults` entries from the default-domain Secrets in `seed-<name>`, highest
/// `dns.gardener.cloud/domain-default-priority` first (ties keep list order).
///
/// # Errors
/// [`Error::DefaultDomainSecret`] when a Secret lacks the provider or domain annotation.
pub fn dns_defaults(secrets: &[Secret]) -> Result<Vec<Value>, Error> {
    let mut sorted: Vec<&Secret> = secrets.iter().collect();
    sorted.sort_by_key(|secret| std::cmp::Reverse(priority(secret)));
    sorted
        .into_iter()
        .map(|secret| {
            let name = secret.metadata.name.clone().unwrap_or_default();
            let annotation = |key: &str| {
                secret
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(key))
                    .filter(|v| !v.is_empty())
                    .cloned()
            };
            let provider = annotation(annotations::DNS_PROVIDER);
            let domain = annotation(annotations::DNS_DOMAIN);
            let (Some(provider), Some(domain)) = (provider, domain) else {
                return Err(Error::DefaultDomainSecret { name });
            };
            let mut entry = json!({
                "type": provider,
                "domain": domain,
                "credentialsRef": {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "namespace": seedlet_api::names::namespaces::GARDEN,
                    "name": name,
                },
            });
            if let Some(zone) = annotation(annotations::DNS_ZONE) {
                entry["zone"] = Value::String(zone);
            }
            Ok(entry)
        })
        .collect()
}

fn priority(secret: &Secret) -> i64 {
    secret
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::DNS_DOMAIN_DEFAULT_PRIORITY))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn registration_patch_removes_labels_absent_from_config_and_keeps_annotations() {
        let existing = json!({
            "metadata": {"labels": {"foo": "bar", "gardener.cloud/role": "seed"}, "annotations": {"keep": "me"}},
            "spec": {"provider": {"type": "local"}},
        });
        let patch = registration_patch(
            Some(&existing),
            &map(&[("env", "dev")]),
            &map(&[("a", "b")]),
            &json!({"provider": {"type": "local"}}),
        );
        assert_eq!(patch["metadata"]["labels"]["foo"], Value::Null);
        assert_eq!(patch["metadata"]["labels"]["gardener.cloud/role"], "seed");
        assert_eq!(patch["metadata"]["labels"]["env"], "dev");
        assert_eq!(patch["metadata"]["annotations"], json!({"a": "b"}));
    }

    #[test]
    fn registration_patch_lets_config_override_the_role_label() {
        let patch = registration_patch(
            None,
            &map(&[("gardener.cloud/role", "other")]),
            &map(&[]),
            &json!({}),
        );
        assert_eq!(patch["metadata"]["labels"]["gardener.cloud/role"], "other");
    }

    #[test]
    fn registration_patch_replaces_spec_but_keeps_dns_defaults_when_config_has_none() {
        let existing = json!({
            "spec": {"dns": {"defaults": [{"domain": "a.example"}], "provider": {"type": "x"}}, "old": 1},
        });
        let patch = registration_patch(
            Some(&existing),
            &map(&[]),
            &map(&[]),
            &json!({"dns": {}, "new": 2}),
        );
        assert_eq!(patch["spec"]["old"], Value::Null);
        assert_eq!(patch["spec"]["new"], 2);
        assert_eq!(patch["spec"]["dns"]["provider"], Value::Null);
        assert_eq!(
            patch["spec"]["dns"]["defaults"],
            json!([{"domain": "a.example"}])
        );
    }

    #[test]
    fn registration_patch_uses_config_dns_defaults_when_present() {
        let existing = json!({"spec": {"dns": {"defaults": [{"domain": "old"}]}}});
        let patch = registration_patch(
            Some(&existing),
            &map(&[]),
            &map(&[]),
            &json!({"dns": {"defaults": [{"domain": "new"}]}}),
        );
        assert_eq!(patch["spec"]["dns"]["defaults"], json!([{"domain": "new"}]));
    }

    fn secret(name: &str, annotations: &[(&str, &str)]) -> Secret {
        Secret {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                annotations: Some(map(annotations)),
                ..ObjectMeta::default()
            },
            ..Secret::default()
        }
    }

    #[test]
    fn dns_defaults_are_sorted_by_priority_and_carry_zone_only_when_set() {
        let secrets = vec![
            secret(
                "low",
                &[
                    ("dns.gardener.cloud/provider", "p"),
                    ("dns.gardener.cloud/domain", "low.example"),
                ],
            ),
            secret(
                "high",
                &[
                    ("dns.gardener.cloud/provider", "p"),
                    ("dns.gardener.cloud/domain", "high.example"),
                    ("dns.gardener.cloud/zone", "z"),
                    ("dns.gardener.cloud/domain-default-priority", "10"),
                ],
            ),
        ];
        let defaults = dns_defaults(&secrets).unwrap();
        assert_eq!(defaults[0]["domain"], "high.example");
        assert_eq!(defaults[0]["zone"], "z");
        assert_eq!(defaults[0]["credentialsRef"]["namespace"], "garden");
        assert_eq!(defaults[1]["domain"], "low.example");
        assert!(defaults[1].get("zone").is_none());
    }

    #[test]
    fn dns_defaults_fail_when_a_secret_lacks_the_domain() {
        let secrets = vec![secret("bad", &[("dns.gardener.cloud/provider", "p")])];
        assert!(
            matches!(dns_defaults(&secrets), Err(Error::DefaultDomainSecret { name }) if name == "bad")
        );
    }
}
