//! Fields Gardener forbids from a Kubernetes version on, removed when maintenance moves the
//! control plane across that version (spec §6.2 step 4), each with the text upstream reports.
//! The SecretBinding → CredentialsBinding migration at 1.34 needs API calls and is not done
//! here. Also step 8: the nginx-ingress addon a landscape operator disallows.

use serde_json::Value;

use super::versions::Version;

/// Removes what the move from `old` to `new` (control-plane versions) forbids from `spec`;
/// returns the texts for `lastMaintenance`, in upstream's order.
pub fn version_cleanups(spec: &mut Value, old: &str, new: &str) -> Vec<String> {
    let (Some(old), Some(new)) = (Version::parse(old), Version::parse(new)) else {
        return Vec::new();
    };
    let crosses = |minor: u64| {
        let boundary = Version {
            major: 1,
            minor,
            patch: 0,
            pre: None,
        };
        old < boundary && new >= boundary
    };
    let mut texts = Vec::new();
    if crosses(33) {
        if remove(
            spec,
            "/kubernetes/kubeControllerManager",
            "podEvictionTimeout",
        ) {
            texts.push(".spec.kubernetes.kubeControllerManager.podEvictionTimeout is set to nil. Reason: The field was deprecated in favour of `spec.kubernetes.kubeAPIServer.defaultNotReadyTolerationSeconds` and `spec.kubernetes.kubeAPIServer.defaultUnreachableTolerationSeconds` and can no longer be enabled for Shoot clusters using Kubernetes version 1.33+".to_owned());
        }
        if remove(spec, "/kubernetes/clusterAutoscaler", "maxEmptyBulkDelete") {
            texts.push(".spec.kubernetes.clusterAutoscaler.maxEmptyBulkDelete is set to nil. Reason: The field was deprecated in favour of `.spec.kubernetes.clusterAutoscaler.maxScaleDownParallelism` and can no longer be enabled for Shoot clusters using Kubernetes version 1.33+".to_owned());
        }
    }
    if crosses(35) {
        if remove(
            spec,
            "/kubernetes/kubeAPIServer",
            "enableAnonymousAuthentication",
        ) {
            texts.push(".spec.kubernetes.kubeAPIServer.enableAnonymousAuthentication was removed. Reason: The field is no longer supported for Shoot clusters using Kubernetes version 1.35+".to_owned());
        }
        if remove(spec, "/kubernetes/kubeScheduler", "kubeMaxPDVols") {
            texts.push(".spec.kubernetes.kubeScheduler.kubeMaxPDVols was removed. Reason: kubeMaxPDVols is deprecated and not respected by the kube-scheduler".to_owned());
        }
        if remove(spec, "/kubernetes/kubeAPIServer/watchCacheSizes", "default") {
            texts.push(".spec.kubernetes.kubeAPIServer.watchCacheSizes.default was removed. Reason: the default size configuration is deprecated and not respected by the kube-apiserver".to_owned());
        }
        if remove(spec, "", "addons") {
            texts.push(".spec.addons was removed. Reason: addons are not supported anymore for Kubernetes versions 1.35+".to_owned());
        }
        let providers = spec
            .pointer("/dns/providers")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        for index in 0..providers {
            if remove(spec, &format!("/dns/providers/{index}"), "secretName") {
                texts.push(format!(".spec.dns.providers[{index}].secretName was removed. Reason: The field is no longer supported for Shoot clusters using Kubernetes version 1.35+"));
            }
        }
    }
    texts
}

/// Step 8 under `featureGates.DisableNginxIngressInShoot`: an nginx-ingress addon that is
/// enabled (`enabled: true`) is disabled; returns the text for `lastMaintenance` when it was.
pub fn disable_nginx_ingress(spec: &mut Value) -> Option<String> {
    let enabled = spec.pointer_mut("/addons/nginxIngress/enabled")?;
    if *enabled != Value::Bool(true) {
        return None;
    }
    *enabled = Value::Bool(false);
    Some(".spec.addons.nginxIngress was disabled. Reason: nginx ingress addon disallowed by landscape operator".to_owned())
}

/// Removes `field` from the object at `pointer`; whether it was there.
fn remove(spec: &mut Value, pointer: &str, field: &str) -> bool {
    spec.pointer_mut(pointer)
        .and_then(Value::as_object_mut)
        .and_then(|object| object.remove(field))
        .is_some()
}

/// A JSON merge patch turning `old` into `new`: changed fields, `null` for removed ones; arrays
/// and scalars are replaced whole.
pub fn merge_patch(old: &Value, new: &Value) -> Option<Value> {
    match (old, new) {
        (Value::Object(old), Value::Object(new)) => {
            let mut patch = serde_json::Map::new();
            for (key, value) in new {
                match old.get(key) {
                    Some(previous) => {
                        if let Some(change) = merge_patch(previous, value) {
                            patch.insert(key.clone(), change);
                        }
                    }
                    None => {
                        patch.insert(key.clone(), value.clone());
                    }
                }
            }
            for key in old.keys() {
                if !new.contains_key(key) {
                    patch.insert(key.clone(), Value::Null);
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        (old, new) if old == new => None,
        (_, new) => Some(new.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Value {
        serde_json::json!({
            "addons": {"nginxIngress": {"enabled": false}},
            "dns": {"providers": [{"type": "aws-route53", "secretName": "dns"}, {"type": "x"}]},
            "kubernetes": {
                "version": "1.32.3",
                "kubeControllerManager": {"podEvictionTimeout": "2m", "nodeMonitorGracePeriod": "40s"},
                "clusterAutoscaler": {"maxEmptyBulkDelete": 10},
                "kubeAPIServer": {"enableAnonymousAuthentication": true, "watchCacheSizes": {"default": 100}},
                "kubeScheduler": {"kubeMaxPDVols": "20"},
            },
        })
    }

    #[test]
    fn crossing_1_33_and_1_35_removes_the_forbidden_fields() {
        // (old, new, number of texts, addons kept)
        let table = [
            ("1.32.3", "1.32.4", 0, true),
            ("1.32.3", "1.33.0", 2, true),
            ("1.33.1", "1.34.0", 0, true),
            ("1.34.2", "1.35.0", 5, false),
            ("1.32.3", "1.35.1", 7, false),
        ];
        for (old, new, count, addons) in table {
            let mut spec = spec();
            let texts = version_cleanups(&mut spec, old, new);
            assert_eq!(texts.len(), count, "{old} -> {new}: {texts:?}");
            assert_eq!(spec.get("addons").is_some(), addons, "{old} -> {new}");
        }
        let mut spec = spec();
        let texts = version_cleanups(&mut spec, "1.34.2", "1.35.0");
        assert_eq!(
            texts.last().map(String::as_str),
            Some(
                ".spec.dns.providers[0].secretName was removed. Reason: The field is no longer supported for Shoot clusters using Kubernetes version 1.35+"
            )
        );
        assert_eq!(
            spec["dns"]["providers"][0],
            serde_json::json!({"type": "aws-route53"})
        );
    }

    #[test]
    fn only_an_enabled_nginx_ingress_addon_is_disabled() {
        let table = [
            (
                serde_json::json!({"addons": {"nginxIngress": {"enabled": true, "loadBalancerSourceRanges": ["10.0.0.0/8"]}}}),
                true,
            ),
            (
                serde_json::json!({"addons": {"nginxIngress": {"enabled": false}}}),
                false,
            ),
            (serde_json::json!({"addons": {"nginxIngress": {}}}), false),
            (
                serde_json::json!({"addons": {"kubernetesDashboard": {"enabled": true}}}),
                false,
            ),
            (
                serde_json::json!({"kubernetes": {"version": "1.31.1"}}),
                false,
            ),
        ];
        for (spec, disabled) in table {
            let mut maintained = spec.clone();
            let text = disable_nginx_ingress(&mut maintained);
            assert_eq!(text.is_some(), disabled, "{spec}");
            if disabled {
                assert_eq!(
                    text.as_deref(),
                    Some(
                        ".spec.addons.nginxIngress was disabled. Reason: nginx ingress addon disallowed by landscape operator"
                    )
                );
                assert_eq!(
                    maintained["addons"]["nginxIngress"],
                    serde_json::json!({"enabled": false, "loadBalancerSourceRanges": ["10.0.0.0/8"]})
                );
            } else {
                assert_eq!(maintained, spec, "untouched");
            }
        }
    }

    #[test]
    fn merge_patch_sets_changes_and_nulls_removals() {
        let old = serde_json::json!({"a": 1, "b": {"c": 2, "d": 3}, "e": [1, 2]});
        let new = serde_json::json!({"a": 1, "b": {"c": 5}, "e": [1], "f": true});
        assert_eq!(
            merge_patch(&old, &new),
            Some(serde_json::json!({"b": {"c": 5, "d": null}, "e": [1], "f": true}))
        );
        assert_eq!(merge_patch(&old, &old), None);
    }
}
