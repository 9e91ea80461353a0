//! Chart values (spec §2.2 steps 7, 8, 13, 15): the deployment values with `{{ .resources.<name>.data.<key> }}`
//! references resolved from the referenced garden Secrets/ConfigMaps, and the injected `gardener.*`
//! values merged on top (gardener side wins).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// Data of the referenced resources by logical name (`resources[].name`).
pub type ResourceData = BTreeMap<String, BTreeMap<String, String>>;

/// The deployment values as a map: absent → `{}`; anything but an object is invalid.
///
/// # Errors
/// A message for `chart values cannot be unmarshalled: <message>`.
pub fn deployment_values(values: Option<&Value>) -> Result<Value, String> {
    match values {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(object @ Value::Object(_)) => Ok(object.clone()),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_type(other)
        )),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) | Value::Null => "object",
    }
}

/// Renders every string (keys and values, recursively) whose only template actions are
/// `{{ .resources.<name>.data.<key> }}` (the only form the API admits, spec §1.2).
///
/// # Errors
/// A missing resource or key (`map has no entry for key`), or another template action.
pub fn render_value_templates(values: &Value, resources: &ResourceData) -> Result<Value, String> {
    match values {
        Value::String(text) => render_string(text, resources).map(Value::String),
        Value::Array(items) => items
            .iter()
            .map(|item| render_value_templates(item, resources))
            .collect::<Result<_, _>>()
            .map(Value::Array),
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                out.insert(
                    render_string(key, resources)?,
                    render_value_templates(value, resources)?,
                );
            }
            Ok(Value::Object(out))
        }
        other => Ok(other.clone()),
    }
}

fn render_string(text: &str, resources: &ResourceData) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("template: {text:?}: unclosed action"))?;
        let action = after[..end].trim();
        out.push_str(&resolve(action, text, resources)?);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

fn resolve(action: &str, text: &str, resources: &ResourceData) -> Result<String, String> {
    let parts: Vec<&str> = action
        .strip_prefix('.')
        .map(|a| a.split('.').collect())
        .unwrap_or_default();
    let valid_name = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric());
    match parts.as_slice() {
        ["resources", name, "data", key] if valid_name(name) && valid_name(key) => {
            let data = resources
                .get(*name)
                .ok_or_else(|| format!("template: {text:?}: map has no entry for key {name:?}"))?;
            data.get(*key)
                .cloned()
                .ok_or_else(|| format!("template: {text:?}: map has no entry for key {key:?}"))
        }
        _ => Err(format!(
            "template: {text:?}: unsupported action {{{{ {action} }}}}"
        )),
    }
}

/// `deep-merge(deployment values, gardener values)`: maps merge recursively, everything else is
/// replaced by the gardener side.
pub fn merged(deployment: &Value, gardener: &Value) -> Value {
    let mut out = deployment.clone();
    merge_into(&mut out, gardener);
    out
}

fn merge_into(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                match base.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge_into(existing, value)
                    }
                    _ => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, overlay) => *base = overlay.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn deployment_values_must_be_an_object() {
        assert_eq!(deployment_values(None), Ok(json!({})));
        assert_eq!(
            deployment_values(Some(&json!({"a": 1}))),
            Ok(json!({"a": 1}))
        );
        assert!(deployment_values(Some(&json!("x"))).is_err());
    }

    #[test]
    fn value_templates_resolve_resource_data_in_keys_and_values() {
        let resources = ResourceData::from([(
            "creds".to_owned(),
            BTreeMap::from([("user".to_owned(), "alice".to_owned())]),
        )]);
        let values = json!({"a": "u={{ .resources.creds.data.user }}", "{{.resources.creds.data.user}}": [1, "{{ .resources.creds.data.user }}"]});
        assert_eq!(
            render_value_templates(&values, &resources),
            Ok(json!({"a": "u=alice", "alice": [1, "alice"]}))
        );
    }

    #[test]
    fn value_templates_fail_on_missing_entries_and_other_actions() {
        let resources = ResourceData::new();
        assert!(
            render_value_templates(&json!("{{ .resources.x.data.y }}"), &resources)
                .unwrap_err()
                .contains("map has no entry for key \"x\"")
        );
        assert!(render_value_templates(&json!("{{ .Values.x }}"), &resources).is_err());
        assert!(render_value_templates(&json!("{{ .resources.x.data.y "), &resources).is_err());
    }

    #[test]
    fn gardener_values_win_and_maps_merge() {
        let deployment = json!({"replicaCount": 3, "gardener": {"seed": {"name": "x", "extra": 1}}, "list": [1]});
        let gardener = json!({"gardener": {"seed": {"name": "local"}}, "list": [2]});
        assert_eq!(
            merged(&deployment, &gardener),
            json!({"replicaCount": 3, "gardener": {"seed": {"name": "local", "extra": 1}}, "list": [2]})
        );
    }
}
