//! Structural-schema handling of custom objects: pruning unknown fields, applying defaults and
//! validating types, enums and required fields with kube-apiserver's field paths and messages.

use serde_json::{Map, Value};

use crate::resources::ResourceType;
use crate::status::{ApiError, Cause};

/// Prunes unknown fields, applies defaults and validates types of a custom object against its schema.
pub fn admit(rt: &ResourceType, object: &mut Value) -> Result<(), ApiError> {
    let Some(schema) = &rt.schema else {
        return Ok(());
    };
    let Some(map) = object.as_object_mut() else {
        return Ok(());
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let preserve = preserves_unknown(schema);
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        if matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        match properties.and_then(|p| p.get(&key)) {
            Some(sub) => {
                if let Some(value) = map.get_mut(&key) {
                    prune(value, sub);
                }
            }
            None if !preserve => {
                map.remove(&key);
            }
            None => {}
        }
    }
    map.retain(|k, v| !v.is_null() || matches!(k.as_str(), "apiVersion" | "kind" | "metadata"));
    apply_defaults_to_children(map, schema);
    let mut causes = Vec::new();
    for (key, sub) in properties.into_iter().flatten() {
        if let Some(value) = map.get(key) {
            validate(value, sub, key, &mut causes);
        }
    }
    for required in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(field) = required.as_str().filter(|f| !map.contains_key(*f)) {
            causes.push(Cause::new(field, "FieldValueRequired", "Required value"));
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    Err(ApiError::invalid(rt, &rt.kind, &name, causes))
}

fn preserves_unknown(schema: &Value) -> bool {
    schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true)
}

/// Removes fields the schema does not know (and nulls for non-nullable fields).
fn prune(value: &mut Value, schema: &Value) {
    if schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
    {
        return;
    }
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            let preserve = preserves_unknown(schema)
                || schema.get("additionalProperties") == Some(&Value::Bool(true));
            if properties.is_none() && additional.is_none() && preserve {
                return;
            }
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                let sub = properties.and_then(|p| p.get(&key)).or(additional);
                match sub {
                    Some(sub) => {
                        let nullable = sub.get("nullable").and_then(Value::as_bool) == Some(true);
                        match map.get_mut(&key) {
                            Some(Value::Null) if !nullable => {
                                map.remove(&key);
                            }
                            Some(child) => prune(child, sub),
                            None => {}
                        }
                    }
                    None if !preserve => {
                        map.remove(&key);
                    }
                    None => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    prune(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

fn apply_defaults_to_children(map: &mut Map<String, Value>, schema: &Value) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, sub) in properties {
        if matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        if !map.contains_key(key)
            && let Some(default) = sub.get("default")
        {
            map.insert(key.clone(), default.clone());
        }
        if let Some(child) = map.get_mut(key) {
            apply_defaults(child, sub);
        }
    }
}

/// Fills `default`s of missing properties, recursively into present objects and list items.
fn apply_defaults(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(map) => {
            apply_defaults_to_children(map, schema);
            if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                for child in map.values_mut() {
                    apply_defaults(child, additional);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    apply_defaults(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Checks types, enums and required fields; causes carry kube's field paths and messages.
fn validate(value: &Value, schema: &Value, path: &str, causes: &mut Vec<Cause>) {
    if value.is_null() && schema.get("nullable").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let int_or_string = schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true);
    if int_or_string {
        if !matches!(type_name(value), "integer" | "string") {
            let actual = type_name(value);
            causes.push(Cause::new(
                path,
                "FieldValueTypeInvalid",
                format!("Invalid value: \"{actual}\": {path} in body must be of type integer,string: \"{actual}\""),
            ));
        }
        return;
    }
    if let Some(expected) = schema.get("type").and_then(Value::as_str) {
        let actual = type_name(value);
        let ok = actual == expected || (expected == "number" && actual == "integer");
        if !ok {
            causes.push(Cause::new(
                path,
                "FieldValueTypeInvalid",
                format!("Invalid value: \"{actual}\": {path} in body must be of type {expected}: \"{actual}\""),
            ));
            return;
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let supported: Vec<String> = allowed.iter().map(Value::to_string).collect();
        causes.push(Cause::new(
            path,
            "FieldValueNotSupported",
            format!(
                "Unsupported value: {value}: supported values: {}",
                supported.join(", ")
            ),
        ));
    }
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            for (key, child) in map {
                let sub = properties
                    .and_then(|p| p.get(key))
                    .or(schema.get("additionalProperties").filter(|a| a.is_object()));
                if let Some(sub) = sub {
                    validate(child, sub, &format!("{path}.{key}"), causes);
                }
            }
            for required in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(field) = required.as_str().filter(|f| !map.contains_key(*f)) {
                    causes.push(Cause::new(
                        format!("{path}.{field}"),
                        "FieldValueRequired",
                        "Required value",
                    ));
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    validate(item, item_schema, &format!("{path}[{i}]"), causes);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::crd::tests::widget_type;
    use serde_json::json;

    #[test]
    fn custom_objects_are_pruned_and_defaulted() {
        let rt = widget_type();
        let mut object = json!({"apiVersion": "kc.example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"color": "red", "unknownField": "x", "providerConfig": {"any": {"n": true}}}, "extra": 1});
        admit(&rt, &mut object).expect("valid object");
        assert_eq!(
            object["spec"],
            json!({"color": "red", "providerConfig": {"any": {"n": true}}, "size": 1})
        );
        assert!(object.get("extra").is_none());
    }

    #[test]
    fn type_errors_name_the_field_like_kube() {
        let rt = widget_type();
        let mut object = json!({"metadata": {"name": "w2"}, "spec": {"size": "big"}});
        let err = admit(&rt, &mut object).expect_err("size must be an integer");
        assert_eq!(
            err.body["message"],
            "Widget.kc.example.com \"w2\" is invalid: spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\""
        );
    }
}
