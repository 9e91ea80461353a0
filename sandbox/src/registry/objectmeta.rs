//! kube-apiserver's `ValidateObjectMeta` (generateName, name, labels, annotations and their
//! 256 KiB budget) and the ConfigMap and Secret data rules (keys, the 1 MiB data budget), with
//! the exact causes a real server answers in its 422.

use serde_json::{Map, Value};

use super::validation::{
    self, NameRule, config_key_messages, invalid, label_value_messages, qualified_name_messages,
    too_long,
};
use crate::resources::ResourceType;
use crate::status::Cause;

/// Total bytes of annotation keys and values (`TotalAnnotationSizeLimitB`).
pub const MAX_ANNOTATIONS_BYTES: usize = 256 * 1024;
/// Total bytes of a ConfigMap's or Secret's data (`MaxSecretSize`, also used for ConfigMaps).
pub const MAX_DATA_BYTES: usize = 1024 * 1024;

/// The causes of a new object's metadata, in kube-apiserver's order: generateName (as a
/// prefix), name, labels, annotations.
pub fn validate_create(object: &Value, rule: NameRule) -> Vec<Cause> {
    let metadata = object.get("metadata").and_then(Value::as_object);
    let text = |key: &str| {
        metadata
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let mut causes = Vec::new();
    let generate_name = text("generateName");
    if !generate_name.is_empty() {
        causes.extend(
            rule.messages(generate_name, true)
                .iter()
                .map(|m| invalid("metadata.generateName", generate_name, m)),
        );
    }
    let name = text("name");
    if name.is_empty() {
        causes.push(validation::name_required());
    } else {
        causes.extend(validation::validate_name(name, rule));
    }
    causes.extend(validate_labels_and_annotations(metadata));
    causes
}

/// The causes of an updated object's metadata (the name cannot change): labels, annotations.
pub fn validate_update(object: &Value) -> Vec<Cause> {
    validate_labels_and_annotations(object.get("metadata").and_then(Value::as_object))
}

/// The causes of a ConfigMap's or Secret's data (other kinds have none).
pub fn validate_data(rt: &ResourceType, object: &Value) -> Vec<Cause> {
    if rt.custom || !rt.group.is_empty() {
        return Vec::new();
    }
    match rt.kind.as_str() {
        "ConfigMap" => config_map_data(object),
        "Secret" => secret_data(object),
        _ => Vec::new(),
    }
}

fn validate_labels_and_annotations(metadata: Option<&Map<String, Value>>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(metadata) = metadata else {
        return causes;
    };
    if let Some(Value::Object(labels)) = metadata.get("labels") {
        for (key, value) in sorted(labels) {
            causes.extend(
                qualified_name_messages(key)
                    .iter()
                    .map(|m| invalid("metadata.labels", key, m)),
            );
            let value = value.as_str().unwrap_or_default();
            causes.extend(
                label_value_messages(value)
                    .iter()
                    .map(|m| invalid("metadata.labels", value, m)),
            );
        }
    }
    if let Some(Value::Object(annotations)) = metadata.get("annotations") {
        let mut total = 0usize;
        for (key, value) in sorted(annotations) {
            // Annotation keys are qualified names in any case.
            causes.extend(
                qualified_name_messages(&key.to_lowercase())
                    .iter()
                    .map(|m| invalid("metadata.annotations", key, m)),
            );
            total = total.saturating_add(key.len() + text_len(value));
        }
        if total > MAX_ANNOTATIONS_BYTES {
            causes.push(too_long("metadata.annotations", MAX_ANNOTATIONS_BYTES));
        }
    }
    causes
}

fn config_map_data(object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let data = object.get("data").and_then(Value::as_object);
    let binary = object.get("binaryData").and_then(Value::as_object);
    let mut total = 0usize;
    for (key, value) in data.map(sorted).unwrap_or_default() {
        let field = format!("data[{key}]");
        causes.extend(
            config_key_messages(key)
                .iter()
                .map(|m| invalid(&field, key, m)),
        );
        if binary.is_some_and(|b| b.contains_key(key)) {
            causes.push(invalid(
                &field,
                key,
                "duplicate of key present in binaryData",
            ));
        }
        total = total.saturating_add(text_len(value));
    }
    for (key, value) in binary.map(sorted).unwrap_or_default() {
        let field = format!("binaryData[{key}]");
        causes.extend(
            config_key_messages(key)
                .iter()
                .map(|m| invalid(&field, key, m)),
        );
        total = total.saturating_add(decoded_len(value));
    }
    if total > MAX_DATA_BYTES {
        // kube-apiserver names the whole object with an empty path, printed as `[]`.
        causes.push(too_long("[]", MAX_DATA_BYTES));
    }
    causes
}

fn secret_data(object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut total = 0usize;
    let data = object.get("data").and_then(Value::as_object);
    for (key, value) in data.map(sorted).unwrap_or_default() {
        let field = format!("data[{key}]");
        causes.extend(
            config_key_messages(key)
                .iter()
                .map(|m| invalid(&field, key, m)),
        );
        total = total.saturating_add(decoded_len(value));
    }
    if total > MAX_DATA_BYTES {
        causes.push(too_long("data", MAX_DATA_BYTES));
    }
    causes
}

/// Entries by key (Go iterates maps in random order; sorted answers are stable).
fn sorted(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

/// Bytes of a string value (other values: their JSON length, which a typed server refuses anyway).
fn text_len(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        other => crate::registry::limits::json_len(other, usize::MAX).unwrap_or(usize::MAX),
    }
}

/// Bytes a base64 value decodes to.
fn decoded_len(value: &Value) -> usize {
    let Value::String(text) = value else {
        return text_len(value);
    };
    let trimmed = text.trim_end_matches('=');
    trimmed.len() / 4 * 3 + (trimmed.len() % 4).saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(causes: &[Cause]) -> Vec<(&str, &str)> {
        causes
            .iter()
            .map(|c| (c.field.as_str(), c.reason.as_str()))
            .collect()
    }

    #[test]
    fn generated_names_are_checked_with_their_prefix() {
        let object = json!({"metadata": {"generateName": "Bad_", "name": "Bad_x7k2p"}});
        assert_eq!(
            messages(&validate_create(&object, NameRule::Subdomain)),
            vec![
                ("metadata.generateName", "FieldValueInvalid"),
                ("metadata.name", "FieldValueInvalid")
            ]
        );
    }

    #[test]
    fn annotations_over_256_kib_are_too_long() {
        let object = json!({"metadata": {"name": "a", "annotations": {"big": "x".repeat(MAX_ANNOTATIONS_BYTES)}}});
        let causes = validate_update(&object);
        assert_eq!(causes.len(), 1);
        assert_eq!(
            causes[0].message,
            "Too long: may not be more than 262144 bytes"
        );
        let fits =
            json!({"metadata": {"annotations": {"big": "x".repeat(MAX_ANNOTATIONS_BYTES - 3)}}});
        assert!(validate_update(&fits).is_empty());
    }

    #[test]
    fn config_map_data_counts_text_and_decoded_binary_bytes() {
        let rt = crate::resources::builtin_types()
            .into_iter()
            .find(|t| t.plural == "configmaps")
            .expect("configmaps are built in");
        let over = json!({"data": {"a": "x".repeat(MAX_DATA_BYTES / 2)}, "binaryData": {"b": "eHh4".repeat(MAX_DATA_BYTES / 6 + 1)}});
        assert_eq!(
            messages(&validate_data(&rt, &over)),
            vec![("[]", "FieldValueTooLong")]
        );
        let duplicate = json!({"data": {"a": "1"}, "binaryData": {"a": "MQ=="}});
        assert_eq!(validate_data(&rt, &duplicate).len(), 1);
    }

    #[test]
    fn decoded_length_ignores_padding() {
        assert_eq!(decoded_len(&json!("MQ==")), 1);
        assert_eq!(decoded_len(&json!("MTI=")), 2);
        assert_eq!(decoded_len(&json!("MTIz")), 3);
    }
}
