//! The JSON merge patch (RFC 7396) between two documents, as the agent writes objects it does not
//! own wholesale: the Cluster sync patches a Cluster's spec, the Shoot controller's delete and
//! migrate flows patch the shoot embedded in it.

use serde_json::{Map, Value};

/// The JSON merge patch (RFC 7396) turning `old` into `new`: changed and added keys with their
/// new values, removed keys as `null`; `None` when equal.
pub fn merge_diff(old: &Value, new: &Value) -> Option<Value> {
    if old == new {
        return None;
    }
    let (Value::Object(old), Value::Object(new)) = (old, new) else {
        return Some(new.clone());
    };
    let mut patch = Map::new();
    for (key, value) in new {
        match old.get(key) {
            Some(previous) => {
                if let Some(change) = merge_diff(previous, value) {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_diff_nulls_removed_keys_and_is_none_when_equal() {
        let old = json!({"a": 1, "b": {"c": 2, "d": 3}, "e": [1]});
        let new = json!({"a": 1, "b": {"c": 5}, "e": [1, 2], "f": true});
        assert_eq!(
            merge_diff(&old, &new),
            Some(json!({"b": {"c": 5, "d": null}, "e": [1, 2], "f": true}))
        );
        assert_eq!(merge_diff(&new, &new), None);
    }

    #[test]
    fn merge_diff_replaces_non_objects_whole() {
        let cases = [
            (json!(1), json!(2), Some(json!(2))),
            (json!({"a": 1}), json!([1]), Some(json!([1]))),
            (json!([1]), json!({"a": 1}), Some(json!({"a": 1}))),
            (json!(null), json!(null), None),
        ];
        for (old, new, expected) in cases {
            assert_eq!(merge_diff(&old, &new), expected, "{old} -> {new}");
        }
    }
}
