//! Field paths and field sets as server-side apply tracks them (`fieldsV1`), and how lists are merged.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Element {
    /// A map field: `f:name`.
    Field(String),
    /// An associative-list item by its keys, as compact JSON: `k:{"name":"x"}`.
    Key(String),
    /// A set-list item by value, as JSON: `v:"x"`.
    Value(String),
    /// A list item by position (only for lists that are neither atomic nor keyed).
    Index(usize),
}

/// A path from the object root.
pub type Path = Vec<Element>;
/// A set of owned paths.
pub type FieldSet = BTreeSet<Path>;

/// How a list is merged and owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListKind {
    /// Replaced and owned as a whole.
    Atomic,
    /// Items are scalars merged by value.
    Set,
    /// Items are objects merged by these key fields.
    Map(Vec<String>),
}

/// Decides the list kind for the list at a path.
pub trait ListRules {
    /// The kind of the list at `path`.
    fn list_kind(&self, path: &[Element]) -> ListKind;
}

/// Merge keys of built-in kinds (their `patchMergeKey` / `listType=map` declarations), by field name.
pub struct BuiltinListRules;

impl ListRules for BuiltinListRules {
    fn list_kind(&self, path: &[Element]) -> ListKind {
        let name = |i: usize| match path.len().checked_sub(i).and_then(|p| path.get(p)) {
            Some(Element::Field(f)) => f.as_str(),
            _ => "",
        };
        let keys = |k: &[&str]| ListKind::Map(k.iter().map(|s| s.to_string()).collect());
        match name(1) {
            "finalizers" if name(2) == "metadata" => ListKind::Set,
            "ownerReferences" => keys(&["uid"]),
            "containers"
            | "initContainers"
            | "ephemeralContainers"
            | "volumes"
            | "env"
            | "imagePullSecrets" => keys(&["name"]),
            "volumeMounts" => keys(&["mountPath"]),
            "volumeDevices" => keys(&["devicePath"]),
            "hostAliases" => keys(&["ip"]),
            "conditions" => keys(&["type"]),
            "ports" if name(3) == "containers" || name(3) == "initContainers" => {
                keys(&["containerPort", "protocol"])
            }
            "ports" if name(2) == "spec" => keys(&["port", "protocol"]),
            "topologySpreadConstraints" => keys(&["topologyKey", "whenUnsatisfiable"]),
            _ => ListKind::Atomic,
        }
    }
}

/// List kinds from a custom resource's structural schema (`x-kubernetes-list-type`).
pub struct SchemaListRules<'a> {
    /// The `openAPIV3Schema`.
    pub schema: &'a Value,
}

impl ListRules for SchemaListRules<'_> {
    fn list_kind(&self, path: &[Element]) -> ListKind {
        let mut node = self.schema;
        for element in path {
            let next = match element {
                Element::Field(f) => node
                    .get("properties")
                    .and_then(|p| p.get(f))
                    .or_else(|| node.get("additionalProperties").filter(|a| a.is_object())),
                _ => node.get("items"),
            };
            match next {
                Some(n) => node = n,
                None => {
                    // Outside the schema (metadata): fall back to the built-in rules.
                    return BuiltinListRules.list_kind(path);
                }
            }
        }
        match node.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("set") => ListKind::Set,
            Some("map") => ListKind::Map(
                node.get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|k| k.as_str().map(str::to_string))
                    .collect(),
            ),
            _ => ListKind::Atomic,
        }
    }
}

/// The key element of an associative-list item, or `None` if the item lacks a key field.
pub fn item_key(item: &Value, keys: &[String]) -> Option<Element> {
    let mut map = Map::new();
    for key in keys {
        match item.get(key) {
            Some(v) => {
                map.insert(key.clone(), v.clone());
            }
            // A missing `protocol` defaults to TCP in kube; other missing keys make the item unkeyed.
            None if key == "protocol" => {}
            None => return None,
        }
    }
    Some(Element::Key(Value::Object(map).to_string()))
}

/// All leaf paths of `value` (scalars, atomic lists, empty maps) plus keyed list items themselves.
pub fn field_set(value: &Value, rules: &dyn ListRules) -> FieldSet {
    let mut out = FieldSet::new();
    collect(value, &mut Vec::new(), rules, &mut out);
    out
}

fn collect(value: &Value, path: &mut Path, rules: &dyn ListRules, out: &mut FieldSet) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                path.push(Element::Field(k.clone()));
                collect(v, path, rules, out);
                path.pop();
            }
        }
        Value::Array(items) => match rules.list_kind(path) {
            ListKind::Set => {
                for item in items {
                    path.push(Element::Value(item.to_string()));
                    out.insert(path.clone());
                    path.pop();
                }
            }
            ListKind::Map(keys) if items.iter().all(|i| item_key(i, &keys).is_some()) => {
                for item in items {
                    let Some(key) = item_key(item, &keys) else {
                        continue;
                    };
                    path.push(key);
                    out.insert(path.clone());
                    collect(item, path, rules, out);
                    path.pop();
                }
            }
            _ => {
                if !path.is_empty() {
                    out.insert(path.clone());
                }
            }
        },
        _ => {
            if !path.is_empty() {
                out.insert(path.clone());
            }
        }
    }
}

/// The value at a path, if present.
pub fn lookup<'a>(value: &'a Value, path: &[Element]) -> Option<&'a Value> {
    let mut current = value;
    for element in path {
        current = match element {
            Element::Field(f) => current.get(f)?,
            Element::Index(i) => current.get(*i)?,
            Element::Value(v) => current
                .as_array()?
                .iter()
                .find(|item| item.to_string() == *v)?,
            Element::Key(k) => {
                let wanted: Map<String, Value> = serde_json::from_str(k).ok()?;
                current
                    .as_array()?
                    .iter()
                    .find(|item| wanted.iter().all(|(wk, wv)| item.get(wk) == Some(wv)))?
            }
        };
    }
    Some(current)
}

/// Removes the value at a path; returns whether something was removed.
pub fn remove(value: &mut Value, path: &[Element]) -> bool {
    let Some((last, parent_path)) = path.split_last() else {
        return false;
    };
    let mut current = value;
    for element in parent_path {
        let next = match element {
            Element::Field(f) => current.get_mut(f),
            Element::Index(i) => current.get_mut(*i),
            Element::Value(_) | Element::Key(_) => {
                let index = lookup_index(current, element);
                match index {
                    Some(i) => current.get_mut(i),
                    None => None,
                }
            }
        };
        match next {
            Some(n) => current = n,
            None => return false,
        }
    }
    match last {
        Element::Field(f) => current.as_object_mut().and_then(|m| m.remove(f)).is_some(),
        _ => match (lookup_index(current, last), current.as_array_mut()) {
            (Some(i), Some(items)) => {
                items.remove(i);
                true
            }
            _ => false,
        },
    }
}

fn lookup_index(list: &Value, element: &Element) -> Option<usize> {
    let items = list.as_array()?;
    match element {
        Element::Index(i) => Some(*i).filter(|i| *i < items.len()),
        Element::Value(v) => {
            let wanted: Value = serde_json::from_str(v).ok()?;
            items.iter().position(|item| *item == wanted)
        }
        Element::Key(k) => {
            let wanted: Map<String, Value> = serde_json::from_str(k).ok()?;
            items
                .iter()
                .position(|item| wanted.iter().all(|(wk, wv)| item.get(wk) == Some(wv)))
        }
        Element::Field(_) => None,
    }
}

/// Renders a path as kube prints it in conflicts: `.data.a`, `.spec.containers[name="x"].image`.
pub fn display(path: &[Element]) -> String {
    let mut out = String::new();
    for element in path {
        match element {
            Element::Field(f) => {
                out.push('.');
                out.push_str(f);
            }
            Element::Key(k) => {
                let map: Map<String, Value> = serde_json::from_str(k).unwrap_or_default();
                let parts: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
                out.push_str(&format!("[{}]", parts.join(",")));
            }
            Element::Value(v) => out.push_str(&format!("[={v}]")),
            Element::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Encodes a field set as `fieldsV1` JSON.
pub fn to_fields_v1(set: &FieldSet) -> Value {
    let mut root = Map::new();
    for path in set {
        let mut node = &mut root;
        for element in path {
            let key = match element {
                Element::Field(f) => format!("f:{f}"),
                Element::Key(k) => format!("k:{k}"),
                Element::Value(v) => format!("v:{v}"),
                Element::Index(i) => format!("i:{i}"),
            };
            let entry = node.entry(key).or_insert_with(|| Value::Object(Map::new()));
            node = match entry.as_object_mut() {
                Some(m) => m,
                None => break,
            };
        }
    }
    // A member that is also a prefix of other members is marked with ".".
    mark_prefixes(&mut root, set, &mut Vec::new());
    Value::Object(root)
}

fn mark_prefixes(node: &mut Map<String, Value>, set: &FieldSet, path: &mut Path) {
    for (key, child) in node.iter_mut() {
        if key == "." {
            continue;
        }
        let Some(element) = parse_element(key) else {
            continue;
        };
        path.push(element);
        if let Some(map) = child.as_object_mut() {
            if !map.is_empty() && set.contains(path.as_slice()) {
                map.insert(".".into(), Value::Object(Map::new()));
            }
            mark_prefixes(map, set, path);
        }
        path.pop();
    }
}

fn parse_element(key: &str) -> Option<Element> {
    let (prefix, rest) = key.split_once(':')?;
    Some(match prefix {
        "f" => Element::Field(rest.to_string()),
        "k" => Element::Key(rest.to_string()),
        "v" => Element::Value(rest.to_string()),
        "i" => Element::Index(rest.parse().ok()?),
        _ => return None,
    })
}

/// Decodes `fieldsV1` JSON into a field set.
pub fn from_fields_v1(fields: &Value) -> FieldSet {
    let mut out = FieldSet::new();
    decode(fields, &mut Vec::new(), &mut out);
    out
}

fn decode(node: &Value, path: &mut Path, out: &mut FieldSet) {
    let Some(map) = node.as_object() else { return };
    if (map.is_empty() || map.contains_key(".")) && !path.is_empty() {
        out.insert(path.clone());
    }
    for (key, child) in map {
        let Some(element) = parse_element(key) else {
            continue;
        };
        path.push(element);
        decode(child, path, out);
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn field_set_covers_leaves_and_keyed_items() {
        let object =
            json!({"data": {"a": "1"}, "spec": {"containers": [{"name": "c", "image": "i"}]}});
        let set = field_set(&object, &BuiltinListRules);
        let shown: Vec<String> = set.iter().map(|p| display(p)).collect();
        assert_eq!(
            shown,
            [
                ".data.a",
                ".spec.containers[name=\"c\"]",
                ".spec.containers[name=\"c\"].image",
                ".spec.containers[name=\"c\"].name"
            ]
        );
    }

    #[test]
    fn fields_v1_round_trips() {
        let object = json!({"metadata": {"labels": {"a": "b"}, "finalizers": ["x"]}, "spec": {"ports": [{"port": 80, "protocol": "TCP"}]}});
        let set = field_set(&object, &BuiltinListRules);
        let encoded = to_fields_v1(&set);
        assert_eq!(encoded["f:metadata"]["f:finalizers"]["v:\"x\""], json!({}));
        assert_eq!(from_fields_v1(&encoded), set);
    }

    #[test]
    fn remove_deletes_keyed_items_and_fields() {
        let mut object =
            json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}, "data": {"x": "1"}});
        assert!(remove(
            &mut object,
            &[
                Element::Field("spec".into()),
                Element::Field("containers".into()),
                Element::Key("{\"name\":\"a\"}".into())
            ]
        ));
        assert!(remove(
            &mut object,
            &[Element::Field("data".into()), Element::Field("x".into())]
        ));
        assert_eq!(
            object,
            json!({"spec": {"containers": [{"name": "b"}]}, "data": {}})
        );
    }

    #[test]
    fn schema_rules_read_list_type_annotations() {
        let schema = json!({"properties": {"spec": {"properties": {"items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"]}}}}});
        let rules = SchemaListRules { schema: &schema };
        let path = vec![
            Element::Field("spec".into()),
            Element::Field("items".into()),
        ];
        assert_eq!(rules.list_kind(&path), ListKind::Map(vec!["id".into()]));
    }
}
