//! The Shoot CRD's schema is complete and exact: structural, covering every field of the
//! upstream example Shoots (and of a fixture with every optional section switched on), keeping
//! unknown fields only where gardener holds raw extensions, and round-tripping the examples
//! through the Rust types unchanged.

// Test helpers outside #[test] fns: a panic is how they report a broken fixture.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::Deserialize;
use serde_json::Value;

use seedlet_api::core::Shoot;
use seedlet_api::crds::{garden_crds, structural_violations};

/// Example Shoots: gardener's own example and seedlet's fixtures.
const EXAMPLES: [&str; 3] = [
    "upstream/90-shoot.yaml",
    "own/shoot-with-status.yaml",
    "own/shoot-full.yaml",
];

/// The only places where the Shoot schema keeps unknown fields: gardener's raw extensions.
const PRESERVE_UNKNOWN: [&str; 10] = [
    ".spec.extensions[*].providerConfig",
    ".spec.kubernetes.kubeAPIServer.admissionPlugins[*].config",
    ".spec.networking.providerConfig",
    ".spec.provider.controlPlaneConfig",
    ".spec.provider.infrastructureConfig",
    ".spec.provider.workers[*].controlPlane.backup.providerConfig",
    ".spec.provider.workers[*].controlPlane.exposure.extension.providerConfig",
    ".spec.provider.workers[*].cri.containerRuntimes[*].providerConfig",
    ".spec.provider.workers[*].machine.image.providerConfig",
    ".spec.provider.workers[*].providerConfig",
];

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn document(path: &str) -> Value {
    let text = fs::read_to_string(fixtures().join(path)).unwrap();
    let mut documents = serde_yaml::Deserializer::from_str(&text)
        .map(|document| Value::deserialize(document).unwrap())
        .filter(|value| !value.is_null());
    documents.next().unwrap()
}

fn shoot_crd() -> CustomResourceDefinition {
    garden_crds()
        .into_iter()
        .find(|crd| crd.metadata.name.as_deref() == Some("shoots.core.gardener.cloud"))
        .unwrap()
}

fn shoot_schema() -> Value {
    let crd = shoot_crd();
    let version = &crd.spec.versions[0];
    serde_json::to_value(
        version
            .schema
            .as_ref()
            .unwrap()
            .open_api_v3_schema
            .as_ref()
            .unwrap(),
    )
    .unwrap()
}

/// `value` with every `null` member removed (the examples write `kubernetes:` with all children
/// commented out, which YAML reads as null).
fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Fields of `value` the schema does not declare, and values of the wrong type, each as
/// `<path>: <problem>`. Nothing below a node that preserves unknown fields is checked.
fn uncovered(value: &Value, schema: &Value, path: &str, out: &mut Vec<String>) {
    if flag(schema, "x-kubernetes-preserve-unknown-fields") {
        return;
    }
    if flag(schema, "x-kubernetes-int-or-string") {
        if !(value.is_string() || value.is_i64() || value.is_u64()) {
            out.push(format!("{path}: expected int-or-string, got {value}"));
        }
        return;
    }
    let type_ = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let matches = match type_ {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        other => {
            out.push(format!("{path}: schema without a known type ({other:?})"));
            return;
        }
    };
    if !matches {
        out.push(format!("{path}: expected {type_}, got {value}"));
        return;
    }
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            for (key, child) in map {
                let child_path = format!("{path}.{key}");
                if let Some(property) = properties.and_then(|p| p.get(key)) {
                    uncovered(child, property, &child_path, out);
                } else if let Some(additional) = additional.filter(|a| a.is_object()) {
                    uncovered(child, additional, &child_path, out);
                } else if path.is_empty()
                    && ["apiVersion", "kind", "metadata"].contains(&key.as_str())
                {
                    // Declared by the API server for every object.
                } else {
                    out.push(format!("{child_path}: not in the schema"));
                }
            }
        }
        Value::Array(items) => {
            let item_schema = schema.get("items").unwrap_or(&Value::Null);
            for (index, item) in items.iter().enumerate() {
                uncovered(item, item_schema, &format!("{path}[{index}]"), out);
            }
        }
        _ => {}
    }
}

/// Every schema node as `(path, node)`, arrays as `[*]` and map values as `{*}`.
fn nodes<'a>(schema: &'a Value, path: &str, out: &mut Vec<(String, &'a Value)>) {
    out.push((path.to_owned(), schema));
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            nodes(property, &format!("{path}.{name}"), out);
        }
    }
    if let Some(items) = schema.get("items") {
        nodes(items, &format!("{path}[*]"), out);
    }
    if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        nodes(additional, &format!("{path}{{*}}"), out);
    }
}

fn node<'a>(schema: &'a Value, path: &str) -> &'a Value {
    let mut all = Vec::new();
    nodes(schema, "", &mut all);
    all.into_iter()
        .find(|(p, _)| p == path)
        .map(|(_, node)| node)
        .unwrap_or_else(|| panic!("{path} is not in the schema"))
}

#[test]
fn shoot_crd_is_structural() {
    let violations = structural_violations(&shoot_crd());
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn every_field_of_the_example_shoots_is_in_the_schema() {
    let schema = shoot_schema();
    for example in EXAMPLES {
        let mut out = Vec::new();
        uncovered(&without_nulls(&document(example)), &schema, "", &mut out);
        assert!(out.is_empty(), "{example}: {out:#?}");
    }
}

#[test]
fn example_shoots_round_trip_unchanged() {
    for example in EXAMPLES {
        let value = without_nulls(&document(example));
        let shoot: Shoot = serde_json::from_value(value.clone())
            .unwrap_or_else(|err| panic!("parsing {example}: {err}"));
        let back = serde_json::to_value(&shoot).unwrap();
        assert_eq!(back, value, "{example}");
    }
}

#[test]
fn example_shoot_fields_are_typed_not_caught_as_unknown() {
    let shoot: Shoot = serde_json::from_value(document("own/shoot-full.yaml")).unwrap();
    let spec = &shoot.spec;
    assert!(spec.extra.is_empty(), "{:?}", spec.extra);
    assert!(shoot.status.as_ref().unwrap().extra.is_empty());
    let worker = &spec.provider.workers[0];
    assert!(worker.extra.is_empty(), "{:?}", worker.extra);
    let kubelet = worker
        .kubernetes
        .as_ref()
        .unwrap()
        .kubelet
        .as_ref()
        .unwrap();
    assert!(kubelet.extra.is_empty(), "{:?}", kubelet.extra);
    assert_eq!(kubelet.image_gc_high_threshold_percent, Some(50));
    let kubernetes = spec.kubernetes.as_ref().unwrap();
    let vpa = kubernetes.vertical_pod_autoscaler.as_ref().unwrap();
    assert_eq!(vpa.eviction_rate_limit, Some(-1.0));
    assert!(vpa.extra.is_empty(), "{:?}", vpa.extra);
    let api_server = kubernetes.kube_api_server.as_ref().unwrap();
    assert!(api_server.extra.is_empty(), "{:?}", api_server.extra);
    assert_eq!(
        api_server.watch_cache_sizes.as_ref().unwrap().resources[1].cache_size,
        500
    );
}

#[test]
fn fields_a_newer_gardener_adds_survive_a_round_trip() {
    let mut value = without_nulls(&document("own/shoot-full.yaml"));
    value["spec"]["futureField"] = serde_json::json!({"a": 1});
    value["spec"]["provider"]["workers"][0]["machine"]["futureField"] = "x".into();
    value["status"]["futureStatus"] = serde_json::json!([1, 2]);
    let shoot: Shoot = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(shoot.spec.extra["futureField"], serde_json::json!({"a": 1}));
    assert_eq!(serde_json::to_value(&shoot).unwrap(), value);
}

#[test]
fn unknown_fields_are_kept_only_where_gardener_holds_raw_extensions() {
    let schema = shoot_schema();
    let mut all = Vec::new();
    nodes(&schema, "", &mut all);
    let preserving: BTreeSet<String> = all
        .into_iter()
        .filter(|(_, node)| flag(node, "x-kubernetes-preserve-unknown-fields"))
        .map(|(path, _)| path)
        .collect();
    let expected: BTreeSet<String> = PRESERVE_UNKNOWN.iter().map(|p| (*p).to_owned()).collect();
    assert_eq!(preserving, expected);
}

#[test]
fn int_or_string_fields_and_quantities_are_int_or_string() {
    let schema = shoot_schema();
    for path in [
        ".spec.provider.workers[*].maxSurge",
        ".spec.provider.workers[*].maxUnavailable",
        ".spec.provider.workers[*].kubernetes.kubelet.kubeReserved.cpu",
        ".spec.kubernetes.kubelet.containerLogMaxSize",
        ".spec.kubernetes.verticalPodAutoscaler.maxAllowed{*}",
        ".spec.kubernetes.etcd.main.autoscaling.minAllowed{*}",
    ] {
        let node = node(&schema, path);
        assert!(flag(node, "x-kubernetes-int-or-string"), "{path}: {node}");
        assert!(node.get("type").is_none(), "{path}: {node}");
        let quantity = !path.contains("maxSurge") && !path.contains("maxUnavailable");
        assert_eq!(node.get("pattern").is_some(), quantity, "{path}: {node}");
    }
}

#[test]
fn no_description_mentions_the_rust_side_unknown_field_map() {
    let schema = shoot_schema();
    let mut all = Vec::new();
    nodes(&schema, "", &mut all);
    for (path, node) in all {
        let description = node
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        assert!(
            !description.to_lowercase().contains("extra"),
            "{path}: {description}"
        );
    }
}

#[test]
fn every_spec_and_status_field_has_a_description() {
    let schema = shoot_schema();
    let mut all = Vec::new();
    nodes(&schema, "", &mut all);
    let missing: Vec<String> = all
        .into_iter()
        .filter(|(path, _)| path.starts_with(".spec.") || path.starts_with(".status."))
        .filter(|(path, _)| !path.ends_with("[*]") && !path.ends_with("{*}"))
        .filter(|(_, node)| node.get("description").is_none())
        .map(|(path, _)| path)
        .collect();
    assert!(missing.is_empty(), "{missing:#?}");
}
