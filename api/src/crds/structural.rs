//! Checks a CRD's schemas against Kubernetes' structural-schema rules (what
//! kube-apiserver enforces for `apiextensions.k8s.io/v1`), so generated CRDs are known to apply.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Map, Value};

/// Keywords never allowed in structural schemas.
const FORBIDDEN: [&str; 5] = [
    "$ref",
    "$schema",
    "definitions",
    "additionalItems",
    "dependencies",
];
/// Junctors that may only carry value validations.
const JUNCTORS: [&str; 4] = ["allOf", "anyOf", "oneOf", "not"];
/// Keys a junctor branch must not specify.
const JUNCTOR_FORBIDDEN: [&str; 5] = [
    "type",
    "nullable",
    "default",
    "additionalProperties",
    "description",
];

/// Every structural-schema violation of every version of `crd`, as `<version>: <path>: <problem>`.
/// Empty means the CRD is structural.
pub fn structural_violations(crd: &CustomResourceDefinition) -> Vec<String> {
    let mut out = Vec::new();
    for version in &crd.spec.versions {
        let Some(schema) = version
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
        else {
            out.push(format!("{}: no openAPIV3Schema", version.name));
            continue;
        };
        let value = match serde_json::to_value(schema) {
            Ok(value) => value,
            Err(err) => {
                out.push(format!("{}: schema not serialisable: {err}", version.name));
                continue;
            }
        };
        let mut problems = Vec::new();
        check_node(&value, "", &mut problems);
        check_root_metadata(&value, &mut problems);
        out.extend(
            problems
                .into_iter()
                .map(|problem| format!("{}: {problem}", version.name)),
        );
    }
    out
}

/// Checks one schema node and recurses into properties, items and additionalProperties.
fn check_node(node: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(map) = node.as_object() else {
        problems.push(format!("{}: schema is not an object", display(path)));
        return;
    };
    for key in FORBIDDEN {
        if map.contains_key(key) {
            problems.push(format!("{}: forbidden keyword {key}", display(path)));
        }
    }
    let preserve = flag(map, "x-kubernetes-preserve-unknown-fields");
    let int_or_string = flag(map, "x-kubernetes-int-or-string");
    let type_ = map
        .get("type")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty());
    if type_.is_none() && !preserve && !int_or_string {
        problems.push(format!("{}: missing type", display(path)));
    }
    if map.get("type").is_some_and(|t| !t.is_string()) {
        problems.push(format!("{}: type must be a single string", display(path)));
    }
    if flag(map, "nullable") && type_.is_none() && !int_or_string {
        problems.push(format!("{}: nullable without type", display(path)));
    }
    if flag(map, "uniqueItems") {
        problems.push(format!("{}: uniqueItems must not be true", display(path)));
    }
    if let Some(additional) = map.get("additionalProperties") {
        if map.contains_key("properties") {
            problems.push(format!(
                "{}: additionalProperties together with properties",
                display(path)
            ));
        }
        match additional {
            Value::Bool(false) => {
                problems.push(format!(
                    "{}: additionalProperties false is not allowed",
                    display(path)
                ));
            }
            Value::Bool(true) => {}
            schema => check_node(schema, &format!("{path}.additionalProperties"), problems),
        }
    }
    if let Some(properties) = map.get("properties") {
        match properties.as_object() {
            Some(properties) => {
                if type_.is_some_and(|t| t != "object") {
                    problems.push(format!("{}: properties on a non-object", display(path)));
                }
                for (name, property) in properties {
                    check_node(property, &format!("{path}.{name}"), problems);
                }
            }
            None => problems.push(format!("{}: properties is not a map", display(path))),
        }
    }
    if let Some(items) = map.get("items") {
        if items.is_array() {
            problems.push(format!("{}: items must be a single schema", display(path)));
        } else {
            check_node(items, &format!("{path}[*]"), problems);
        }
    } else if type_ == Some("array") {
        problems.push(format!("{}: array without items", display(path)));
    }
    for junctor in JUNCTORS {
        if int_or_string && is_int_or_string_pattern(junctor, map.get(junctor)) {
            continue;
        }
        if let Some(branches) = map.get(junctor) {
            let branches: Vec<&Value> = match branches {
                Value::Array(list) => list.iter().collect(),
                other => vec![other],
            };
            for branch in branches {
                check_junctor_branch(branch, &format!("{path}.{junctor}"), problems);
            }
        }
    }
}

/// Junctor branches may only hold value validations, no types, defaults or descriptions.
fn check_junctor_branch(branch: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(map) = branch.as_object() else {
        return;
    };
    for key in JUNCTOR_FORBIDDEN {
        if map.contains_key(key) {
            problems.push(format!("{}: {key} inside a logical junctor", display(path)));
        }
    }
    if map.keys().any(|key| key.starts_with("x-kubernetes-")) {
        problems.push(format!(
            "{}: x-kubernetes extension inside a logical junctor",
            display(path)
        ));
    }
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            check_junctor_branch(property, &format!("{path}.{name}"), problems);
        }
    }
}

/// At the root, `metadata` may only restrict `name` and `generateName`.
fn check_root_metadata(root: &Value, problems: &mut Vec<String>) {
    let Some(metadata) = root.get("properties").and_then(|p| p.get("metadata")) else {
        return;
    };
    let Some(map) = metadata.as_object() else {
        return;
    };
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        for name in properties.keys() {
            if name != "name" && name != "generateName" {
                problems.push(format!(
                    ".metadata.{name}: only name and generateName may be specified"
                ));
            }
        }
    }
}

/// The one junctor use allowed to carry types: `x-kubernetes-int-or-string` nodes may say
/// `anyOf: [{type: integer}, {type: string}]` (as controller-gen writes them).
fn is_int_or_string_pattern(junctor: &str, branches: Option<&Value>) -> bool {
    let expected = serde_json::json!([{"type": "integer"}, {"type": "string"}]);
    junctor == "anyOf" && branches == Some(&expected)
}

fn flag(map: &Map<String, Value>, key: &str) -> bool {
    map.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn display(path: &str) -> &str {
    if path.is_empty() { "<root>" } else { path }
}
