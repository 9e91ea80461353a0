//! The default ResourceQuota of a project namespace (spec §3.3): the first configured quota
//! whose project selector matches the Project's labels, merged into the existing `gardener`
//! ResourceQuota (existing limits of configured keys are kept, unconfigured keys dropped).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ResourceQuota, ResourceQuotaSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use seedlet_api::core::Project;
use seedlet_config::garden_projects::ProjectQuota;
use serde_json::Value;

use super::namespace::owner_reference;

/// Name of the default ResourceQuota.
pub const NAME: &str = "gardener";

/// The configured quota for `project`, if any.
pub fn select<'a>(quotas: &'a [ProjectQuota], project: &Project) -> Option<&'a ProjectQuota> {
    quotas
        .iter()
        .find(|quota| crate::selector::matches(quota.project_selector.as_ref(), project.labels()))
}

fn string_map(value: Option<&Value>) -> BTreeMap<String, String> {
    value
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), v)
        })
        .collect()
}

/// The `gardener` ResourceQuota in `namespace` after applying `config` to `existing`.
pub fn desired(
    config: &Value,
    existing: Option<&ResourceQuota>,
    project: &Project,
    namespace: &str,
) -> ResourceQuota {
    let mut quota = existing.cloned().unwrap_or_else(|| ResourceQuota {
        metadata: ObjectMeta {
            name: Some(NAME.to_owned()),
            namespace: Some(namespace.to_owned()),
            ..Default::default()
        },
        ..Default::default()
    });
    let uid = project.uid().unwrap_or_default();
    let references = quota.metadata.owner_references.get_or_insert_with(Vec::new);
    if !references.iter().any(|r| r.uid == uid) {
        references.push(owner_reference(project, true));
    }
    let metadata = config.get("metadata");
    for (target, key) in [
        (&mut quota.metadata.labels, "labels"),
        (&mut quota.metadata.annotations, "annotations"),
    ] {
        let wanted = string_map(metadata.and_then(|m| m.get(key)));
        if !wanted.is_empty() {
            target.get_or_insert_with(BTreeMap::new).extend(wanted);
        }
    }
    let current = quota
        .spec
        .as_ref()
        .and_then(|s| s.hard.clone())
        .unwrap_or_default();
    let hard: BTreeMap<String, Quantity> = string_map(config.pointer("/spec/hard"))
        .into_iter()
        .map(|(key, value)| {
            let value = current.get(&key).cloned().unwrap_or(Quantity(value));
            (key, value)
        })
        .collect();
    quota
        .spec
        .get_or_insert_with(ResourceQuotaSpec::default)
        .hard = Some(hard);
    quota
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn existing_limits_of_configured_keys_stay_and_others_go() {
        let mut project = Project::new("dev", Default::default());
        project.metadata.uid = Some("u".into());
        let config = json!({
            "apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"labels": {"a": "config"}},
            "spec": {"hard": {"count/shoots.core.gardener.cloud": "100", "count/secrets": "400"}}
        });
        let fresh = desired(&config, None, &project, "garden-dev");
        assert_eq!(fresh.name_any(), "gardener");
        assert_eq!(
            serde_json::to_value(&fresh.spec).expect("json"),
            json!({"hard": {"count/shoots.core.gardener.cloud": "100", "count/secrets": "400"}})
        );
        let mut existing = fresh.clone();
        existing.metadata.labels = Some(labels(&[("a", "mine"), ("b", "mine")]));
        existing.spec = Some(ResourceQuotaSpec {
            hard: Some(BTreeMap::from([
                ("count/secrets".to_owned(), Quantity("40".into())),
                ("cpu".to_owned(), Quantity("1".into())),
            ])),
            ..Default::default()
        });
        let merged = desired(&config, Some(&existing), &project, "garden-dev");
        assert_eq!(
            serde_json::to_value(&merged.spec).expect("json"),
            json!({"hard": {"count/shoots.core.gardener.cloud": "100", "count/secrets": "40"}})
        );
        assert_eq!(merged.labels(), &labels(&[("a", "config"), ("b", "mine")]));
        assert_eq!(merged.owner_references().len(), 1);
    }
}
