//! The NamespacedCloudProfile merge (spec §2.3 "Merge"): the CloudProfile spec a shoot using the
//! namespaced profile sees, computed from the parent's spec and the namespaced profile's spec.
//! Pure JSON in, JSON out; lists are merged by key in the parent's order, NCP entries replace or
//! refine the parent's and unknown keys are appended (Kubernetes versions: dropped).

use serde_json::{Map, Value, json};

const ARCHITECTURE: &str = "architecture";
const DEFAULT_ARCHITECTURE: &str = "amd64";

/// `status.cloudProfileSpec` for a NamespacedCloudProfile with spec `ncp` whose parent has spec
/// `parent`.
pub fn merge(parent: &Value, ncp: &Value) -> Value {
    let mut result = parent.as_object().cloned().unwrap_or_default();
    merge_kubernetes(&mut result, ncp);

    let definitions = parent
        .get("machineCapabilities")
        .and_then(Value::as_array)
        .filter(|defs| !defs.is_empty())
        .cloned();
    let images = normalised(ncp, "machineImages", |image| {
        normalise_image(image, definitions.is_some())
    });
    let types = normalised(ncp, "machineTypes", |machine| {
        normalise_type(machine, definitions.as_deref())
    });
    if let Some(images) = images {
        let merged = merge_by_key(list(&result, "machineImages"), &images, "name", merge_image);
        result.insert("machineImages".into(), Value::Array(merged));
    }
    if let Some(types) = types {
        let merged = merge_by_key(list(&result, "machineTypes"), &types, "name", |_, n| {
            n.clone()
        });
        result.insert("machineTypes".into(), Value::Array(merged));
    }
    if let Some(volumes) = ncp.get("volumeTypes").and_then(Value::as_array) {
        let merged = merge_by_key(list(&result, "volumeTypes"), volumes, "name", |_, n| {
            n.clone()
        });
        result.insert("volumeTypes".into(), Value::Array(merged));
    }
    if let Some(bundle) = ncp.get("caBundle").and_then(Value::as_str) {
        let base = result
            .get("caBundle")
            .and_then(Value::as_str)
            .unwrap_or_default();
        result.insert("caBundle".into(), json!(format!("{base}{bundle}")));
    }
    if let Some(limits) = ncp.get("limits").filter(|l| !l.is_null()) {
        let target = result.entry("limits").or_insert_with(|| json!({}));
        if !target.is_object() {
            *target = json!({});
        }
        if let Some(max) = limits.get("maxNodesTotal").and_then(Value::as_i64)
            && max > 0
            && let Some(target) = target.as_object_mut()
        {
            target.insert("maxNodesTotal".into(), json!(max));
        }
    }
    default_architectures(&mut result, definitions.as_deref());
    Value::Object(result)
}

fn list(object: &Map<String, Value>, key: &str) -> Vec<Value> {
    object
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn normalised(ncp: &Value, key: &str, f: impl Fn(&Value) -> Value) -> Option<Vec<Value>> {
    ncp.get(key)
        .and_then(Value::as_array)
        .map(|items| items.iter().map(f).collect())
}

/// Step 2: only versions the parent has; `expirationDate` from the NCP entry (absent: removed).
fn merge_kubernetes(result: &mut Map<String, Value>, ncp: &Value) {
    let Some(ncp_versions) = ncp.get("kubernetes").filter(|k| !k.is_null()) else {
        return;
    };
    let ncp_versions = ncp_versions
        .get("versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let Some(versions) = result
        .get_mut("kubernetes")
        .and_then(|k| k.get_mut("versions"))
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for version in versions.iter_mut() {
        let key = version.get("version").cloned();
        if let Some(entry) = ncp_versions
            .iter()
            .find(|n| n.get("version") == key.as_ref())
        {
            set_expiration(version, entry);
        }
    }
}

fn set_expiration(target: &mut Value, from: &Value) {
    if let Some(object) = target.as_object_mut() {
        match from.get("expirationDate").filter(|d| !d.is_null()) {
            Some(date) => object.insert("expirationDate".into(), date.clone()),
            None => object.remove("expirationDate"),
        };
    }
}

/// Parent entries in order, each replaced by `f(parent, ncp)` when the NCP has its key; NCP
/// entries with new keys appended.
fn merge_by_key(
    parent: Vec<Value>,
    ncp: &[Value],
    key: &str,
    f: impl Fn(&Value, &Value) -> Value,
) -> Vec<Value> {
    let mut result: Vec<Value> = parent
        .iter()
        .map(|p| match ncp.iter().find(|n| n.get(key) == p.get(key)) {
            Some(n) => f(p, n),
            None => p.clone(),
        })
        .collect();
    for n in ncp {
        if !parent.iter().any(|p| p.get(key) == n.get(key)) {
            result.push(n.clone());
        }
    }
    result
}

fn non_empty(value: &Value, key: &str) -> bool {
    match value.get(key) {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        Some(_) => true,
    }
}

/// Step 4: `updateStrategy` overridden when the NCP sets one; versions merged by `version`.
fn merge_image(parent: &Value, ncp: &Value) -> Value {
    let mut out = parent.clone();
    if non_empty(ncp, "updateStrategy") {
        out["updateStrategy"] = ncp["updateStrategy"].clone();
    }
    let parent_versions = parent
        .get("versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let ncp_versions = ncp
        .get("versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let versions = merge_by_key(parent_versions, &ncp_versions, "version", |p, n| {
        let whole = [
            "architectures",
            "capabilityFlavors",
            "cri",
            "kubeletVersionConstraint",
            "classification",
        ]
        .iter()
        .any(|key| non_empty(n, key));
        if whole {
            n.clone()
        } else {
            let mut version = p.clone();
            set_expiration(&mut version, n);
            version
        }
    });
    out["versions"] = Value::Array(versions);
    out
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// Step 3 for an image: versions converted between `architectures` and `capabilityFlavors`.
fn normalise_image(image: &Value, capability_format: bool) -> Value {
    let mut image = image.clone();
    if let Some(versions) = image.get_mut("versions").and_then(Value::as_array_mut) {
        for version in versions.iter_mut() {
            let Some(object) = version.as_object_mut() else {
                continue;
            };
            if capability_format {
                let architectures = strings(object.get("architectures"));
                if !non_empty(&Value::Object(object.clone()), "capabilityFlavors")
                    && !architectures.is_empty()
                {
                    let flavors: Vec<Value> = architectures
                        .iter()
                        .map(|a| json!({ ARCHITECTURE: [a] }))
                        .collect();
                    object.insert("capabilityFlavors".into(), Value::Array(flavors));
                }
            } else if let Some(flavors) = object.remove("capabilityFlavors")
                && strings(object.get("architectures")).is_empty()
            {
                // The flavors go either way; their architectures fill an empty list.
                let mut architectures: Vec<String> = Vec::new();
                for flavor in flavors.as_array().into_iter().flatten() {
                    for a in strings(flavor.get(ARCHITECTURE)) {
                        if !architectures.contains(&a) {
                            architectures.push(a);
                        }
                    }
                }
                if !architectures.is_empty() {
                    object.insert("architectures".into(), json!(architectures));
                }
            }
        }
    }
    image
}

/// Capabilities with the definitions' defaults for the missing ones (upstream
/// `GetCapabilitiesWithAppliedDefaults`): only defined capabilities are kept.
fn with_defaults(capabilities: Option<&Value>, definitions: &[Value]) -> Map<String, Value> {
    let mut result = Map::new();
    for definition in definitions {
        let Some(name) = definition.get("name").and_then(Value::as_str) else {
            continue;
        };
        let values = capabilities
            .and_then(|c| c.get(name))
            .or_else(|| definition.get("values"))
            .cloned()
            .unwrap_or(Value::Array(Vec::new()));
        result.insert(name.to_owned(), values);
    }
    result
}

/// The single architecture from capabilities with defaults, else `architecture`, else empty.
fn effective_architecture(machine: &Value, definitions: Option<&[Value]>) -> String {
    let from_capabilities = definitions
        .map(|defs| strings(with_defaults(machine.get("capabilities"), defs).get(ARCHITECTURE)))
        .unwrap_or_default();
    if from_capabilities.len() == 1 {
        return from_capabilities[0].clone();
    }
    machine
        .get(ARCHITECTURE)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Step 3 for a machine type: `capabilities` ⇔ `architecture`.
fn normalise_type(machine: &Value, definitions: Option<&[Value]>) -> Value {
    let mut machine = machine.clone();
    let Some(object) = machine.as_object_mut() else {
        return machine;
    };
    match definitions {
        Some(defs) => {
            if !non_empty(&Value::Object(object.clone()), "capabilities") {
                let mut architecture =
                    effective_architecture(&Value::Object(object.clone()), Some(defs));
                if architecture.is_empty() {
                    architecture = DEFAULT_ARCHITECTURE.to_owned();
                }
                object.insert(
                    "capabilities".into(),
                    json!({ ARCHITECTURE: [architecture] }),
                );
            }
        }
        None => {
            if let Some(capabilities) = object.remove("capabilities")
                && object
                    .get(ARCHITECTURE)
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                && let Some(first) = strings(capabilities.get(ARCHITECTURE)).first()
            {
                object.insert(ARCHITECTURE.into(), json!(first));
            }
        }
    }
    machine
}

/// Step 8 on the result.
fn default_architectures(result: &mut Map<String, Value>, definitions: Option<&[Value]>) {
    if let Some(types) = result.get_mut("machineTypes").and_then(Value::as_array_mut) {
        for machine in types.iter_mut() {
            let effective = effective_architecture(machine, definitions);
            let Some(object) = machine.as_object_mut() else {
                continue;
            };
            if effective.is_empty() {
                object.insert(ARCHITECTURE.into(), json!(DEFAULT_ARCHITECTURE));
            } else if object
                .get(ARCHITECTURE)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                object.insert(ARCHITECTURE.into(), json!(effective));
            }
        }
    }
    let Some(images) = result
        .get_mut("machineImages")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for version in images
        .iter_mut()
        .filter_map(|image| image.get_mut("versions").and_then(Value::as_array_mut))
        .flatten()
    {
        if !strings(version.get("architectures")).is_empty() {
            continue;
        }
        let mut architectures: Vec<String> = Vec::new();
        for flavor in version
            .get("capabilityFlavors")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let values = match definitions {
                Some(defs) => strings(with_defaults(Some(flavor), defs).get(ARCHITECTURE)),
                None => strings(flavor.get(ARCHITECTURE)),
            };
            for a in values {
                if !architectures.contains(&a) {
                    architectures.push(a);
                }
            }
        }
        if architectures.is_empty() {
            architectures.push(DEFAULT_ARCHITECTURE.to_owned());
        }
        if let Some(object) = version.as_object_mut() {
            object.insert("architectures".into(), json!(architectures));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn legacy_parent() -> Value {
        json!({
            "type": "local",
            "regions": [{"name": "r"}],
            "kubernetes": {"versions": [
                {"version": "1.31.1", "expirationDate": "2025-03-01T00:00:00Z"},
                {"version": "1.30.5", "expirationDate": "2025-01-01T00:00:00Z"}
            ]},
            "machineImages": [{"name": "gardenlinux", "updateStrategy": "minor", "versions": [
                {"version": "1592.1.0", "cri": [{"name": "containerd"}], "architectures": ["amd64"],
                 "expirationDate": "2025-02-01T00:00:00Z"}
            ]}],
            "machineTypes": [{"name": "m5.large", "cpu": "2", "gpu": "0", "memory": "8Gi"}],
            "caBundle": "A\n"
        })
    }

    /// The worked example of spec §2.3.
    #[test]
    fn worked_example_legacy_parent() {
        let ncp = json!({
            "parent": {"kind": "CloudProfile", "name": "p"},
            "kubernetes": {"versions": [
                {"version": "1.30.5", "expirationDate": "2025-06-01T00:00:00Z"},
                {"version": "1.32.0"}
            ]},
            "machineImages": [
                {"name": "gardenlinux", "versions": [
                    {"version": "1592.1.0", "expirationDate": "2025-05-01T00:00:00Z"},
                    {"version": "1700.0.0", "cri": [{"name": "containerd"}], "architectures": ["arm64"]}
                ]},
                {"name": "custom", "updateStrategy": "patch", "versions": [
                    {"version": "1.0.0", "cri": [{"name": "containerd"}]}
                ]}
            ],
            "machineTypes": [
                {"name": "m5.large", "cpu": "4", "gpu": "0", "memory": "8Gi"},
                {"name": "x1", "cpu": "1", "gpu": "0", "memory": "1Gi"}
            ],
            "caBundle": "B\n",
            "limits": {"maxNodesTotal": 50}
        });
        let result = merge(&legacy_parent(), &ncp);
        assert_eq!(
            result,
            json!({
                "type": "local",
                "regions": [{"name": "r"}],
                "kubernetes": {"versions": [
                    {"version": "1.31.1", "expirationDate": "2025-03-01T00:00:00Z"},
                    {"version": "1.30.5", "expirationDate": "2025-06-01T00:00:00Z"}
                ]},
                "machineImages": [
                    {"name": "gardenlinux", "updateStrategy": "minor", "versions": [
                        {"version": "1592.1.0", "cri": [{"name": "containerd"}], "architectures": ["amd64"],
                         "expirationDate": "2025-05-01T00:00:00Z"},
                        {"version": "1700.0.0", "cri": [{"name": "containerd"}], "architectures": ["arm64"]}
                    ]},
                    {"name": "custom", "updateStrategy": "patch", "versions": [
                        {"version": "1.0.0", "cri": [{"name": "containerd"}], "architectures": ["amd64"]}
                    ]}
                ],
                "machineTypes": [
                    {"name": "m5.large", "cpu": "4", "gpu": "0", "memory": "8Gi", "architecture": "amd64"},
                    {"name": "x1", "cpu": "1", "gpu": "0", "memory": "1Gi", "architecture": "amd64"}
                ],
                "caBundle": "A\nB\n",
                "limits": {"maxNodesTotal": 50}
            })
        );
    }

    #[test]
    fn a_version_with_a_classification_replaces_the_parent_entry_wholly() {
        let ncp = json!({"machineImages": [{"name": "gardenlinux", "versions": [
            {"version": "1592.1.0", "classification": "deprecated"}
        ]}]});
        let result = merge(&legacy_parent(), &ncp);
        assert_eq!(
            result["machineImages"][0]["versions"][0],
            json!({"version": "1592.1.0", "classification": "deprecated", "architectures": ["amd64"]})
        );
    }

    #[test]
    fn edge_cases_of_spec_13_2() {
        // (ncp, pointer into the result, expected)
        let cases = [
            // Unknown kubernetes version dropped; entry without date clears the parent's.
            (
                json!({"kubernetes": {"versions": [{"version": "1.31.1"}, {"version": "9.9.9"}]}}),
                "/kubernetes/versions",
                json!([{"version": "1.31.1"}, {"version": "1.30.5", "expirationDate": "2025-01-01T00:00:00Z"}]),
            ),
            // Image version with only a date keeps the parent's CRI and architectures.
            (
                json!({"machineImages": [{"name": "gardenlinux", "versions": [{"version": "1592.1.0"}]}]}),
                "/machineImages/0/versions/0",
                json!({"version": "1592.1.0", "cri": [{"name": "containerd"}], "architectures": ["amd64"]}),
            ),
            // With `cri` it replaces wholly.
            (
                json!({"machineImages": [{"name": "gardenlinux", "versions": [{"version": "1592.1.0", "cri": [{"name": "docker"}]}]}]}),
                "/machineImages/0/versions/0",
                json!({"version": "1592.1.0", "cri": [{"name": "docker"}], "architectures": ["amd64"]}),
            ),
            // `limits: {}` gives an empty object.
            (json!({"limits": {}}), "/limits", json!({})),
            // No kubernetes block: versions untouched.
            (
                json!({}),
                "/kubernetes/versions/1/expirationDate",
                json!("2025-01-01T00:00:00Z"),
            ),
        ];
        for (ncp, pointer, expected) in cases {
            let result = merge(&legacy_parent(), &ncp);
            assert_eq!(
                result.pointer(pointer),
                Some(&expected),
                "{ncp} at {pointer}"
            );
        }
        let mut no_bundle = legacy_parent();
        no_bundle
            .as_object_mut()
            .expect("object")
            .remove("caBundle");
        assert_eq!(
            merge(&no_bundle, &json!({"caBundle": "B\n"}))["caBundle"],
            "B\n"
        );
        assert_eq!(merge(&no_bundle, &json!({}))["caBundle"], Value::Null);
    }

    #[test]
    fn capability_parent_gets_flavors_and_capabilities_for_legacy_ncp_entries() {
        let parent = json!({
            "machineCapabilities": [{"name": "architecture", "values": ["amd64", "arm64"]}],
            "machineImages": [{"name": "gl", "versions": [
                {"version": "1", "capabilityFlavors": [{"architecture": ["amd64"]}]}
            ]}],
            "machineTypes": [{"name": "m", "capabilities": {"architecture": ["arm64"]}}]
        });
        let ncp = json!({
            "machineImages": [{"name": "gl", "versions": [
                {"version": "2", "cri": [{"name": "containerd"}], "architectures": ["amd64", "arm64"]}
            ]}],
            "machineTypes": [{"name": "n", "architecture": "arm64"}, {"name": "o"}]
        });
        let result = merge(&parent, &ncp);
        assert_eq!(
            result["machineImages"][0]["versions"],
            json!([
                {"version": "1", "capabilityFlavors": [{"architecture": ["amd64"]}], "architectures": ["amd64"]},
                {"version": "2", "cri": [{"name": "containerd"}], "architectures": ["amd64", "arm64"],
                 "capabilityFlavors": [{"architecture": ["amd64"]}, {"architecture": ["arm64"]}]}
            ])
        );
        assert_eq!(
            result["machineTypes"],
            json!([
                {"name": "m", "capabilities": {"architecture": ["arm64"]}, "architecture": "arm64"},
                {"name": "n", "architecture": "arm64", "capabilities": {"architecture": ["arm64"]}},
                {"name": "o", "capabilities": {"architecture": ["amd64"]}, "architecture": "amd64"}
            ])
        );
    }

    #[test]
    fn legacy_parent_turns_ncp_flavors_and_capabilities_into_architectures() {
        let ncp = json!({
            "machineImages": [{"name": "new", "versions": [
                {"version": "1", "cri": [{"name": "containerd"}],
                 "capabilityFlavors": [{"architecture": ["arm64"]}, {"architecture": ["amd64"]}, {"architecture": ["arm64"]}]}
            ]}],
            "machineTypes": [{"name": "c", "capabilities": {"architecture": ["arm64"]}}]
        });
        let result = merge(&legacy_parent(), &ncp);
        assert_eq!(
            result["machineImages"][1]["versions"][0],
            json!({"version": "1", "cri": [{"name": "containerd"}], "architectures": ["arm64", "amd64"]})
        );
        assert_eq!(
            result["machineTypes"][1],
            json!({"name": "c", "architecture": "arm64"})
        );
    }
}
