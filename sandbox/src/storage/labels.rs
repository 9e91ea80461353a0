//! An index of the stored objects of each resource by label (`key=value`), so that a list with an
//! equality label selector reads only the objects carrying that label instead of scanning the
//! namespace or the whole resource.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use super::ObjectKey;

/// The objects of each resource by label.
#[derive(Debug, Default)]
pub struct LabelIndex {
    values: ValueIndex,
}

/// Storage key → name (a label key, a field path) → value → the objects with that value, in list
/// order: what the label and the field index both keep.
#[derive(Debug, Default)]
pub struct ValueIndex {
    resources: HashMap<String, HashMap<String, HashMap<String, BTreeSet<ObjectKey>>>>,
}

impl LabelIndex {
    /// Records that the object `key` of `resource` changed from `before` to `after` (`None` when it
    /// did not exist or no longer exists). Costs nothing when its labels did not change.
    pub fn update(
        &mut self,
        resource: &str,
        key: &ObjectKey,
        before: Option<&Value>,
        after: Option<&Value>,
    ) {
        let (before, after) = (labels(before), labels(after));
        if before == after {
            return;
        }
        for (label, value) in &before {
            if after.get(label) == Some(value) {
                continue;
            }
            self.values.remove(resource, label, value, key);
        }
        for (label, value) in &after {
            if before.get(label) == Some(value) {
                continue;
            }
            self.values.insert(resource, label, value, key);
        }
    }

    /// Forgets every object of `resource`.
    pub fn drop_resource(&mut self, resource: &str) {
        self.values.drop_resource(resource);
    }

    /// The objects of `resource` labelled `label=value`, in list order (none when no object is).
    pub fn objects(
        &self,
        resource: &str,
        label: &str,
        value: &str,
    ) -> Option<&BTreeSet<ObjectKey>> {
        self.values.objects(resource, label, value)
    }
}

impl ValueIndex {
    /// Records that object `key` of `resource` has `value` for `name`.
    pub fn insert(&mut self, resource: &str, name: &str, value: &str, key: &ObjectKey) {
        self.resources
            .entry(resource.to_string())
            .or_default()
            .entry(name.to_string())
            .or_default()
            .entry(value.to_string())
            .or_default()
            .insert(key.clone());
    }

    /// Forgets that object `key` of `resource` has `value` for `name`, and the emptied sets.
    pub fn remove(&mut self, resource: &str, name: &str, value: &str, key: &ObjectKey) {
        let Some(names) = self.resources.get_mut(resource) else {
            return;
        };
        let Some(values) = names.get_mut(name) else {
            return;
        };
        if let Some(objects) = values.get_mut(value) {
            objects.remove(key);
            if objects.is_empty() {
                values.remove(value);
            }
        }
        if values.is_empty() {
            names.remove(name);
        }
        if names.is_empty() {
            self.resources.remove(resource);
        }
    }

    /// The objects of `resource` with `value` for `name`, in list order (none when no object has).
    pub fn objects(&self, resource: &str, name: &str, value: &str) -> Option<&BTreeSet<ObjectKey>> {
        self.resources.get(resource)?.get(name)?.get(value)
    }

    /// Forgets every object of `resource`.
    pub fn drop_resource(&mut self, resource: &str) {
        self.resources.remove(resource);
    }
}

/// An object's string labels.
fn labels(object: Option<&Value>) -> HashMap<&str, &str> {
    object
        .and_then(|o| o.pointer("/metadata/labels"))
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    fn object(name: &str, labels: Value) -> (ObjectKey, Value) {
        (
            ("ns".to_string(), name.to_string()),
            json!({"metadata": {"name": name, "namespace": "ns", "labels": labels}}),
        )
    }

    fn names(index: &LabelIndex, label: &str, value: &str) -> Vec<String> {
        index
            .objects("configmaps", label, value)
            .map(|keys| keys.iter().map(|(_, name)| name.clone()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn index_follows_labels_added_changed_and_removed() {
        let mut index = LabelIndex::default();
        let (b, b_v1) = object("b", json!({"app": "web", "tier": "front"}));
        let (a, a_v1) = object("a", json!({"app": "web"}));
        index.update("configmaps", &b, None, Some(&b_v1));
        index.update("configmaps", &a, None, Some(&a_v1));
        assert_eq!(names(&index, "app", "web"), ["a", "b"], "in list order");
        assert_eq!(names(&index, "tier", "front"), ["b"]);

        let (_, b_v2) = object("b", json!({"app": "db", "tier": "front"}));
        index.update("configmaps", &b, Some(&b_v1), Some(&b_v2));
        assert_eq!(names(&index, "app", "web"), ["a"]);
        assert_eq!(names(&index, "app", "db"), ["b"]);
        assert_eq!(names(&index, "tier", "front"), ["b"]);

        index.update("configmaps", &b, Some(&b_v2), None);
        index.update("configmaps", &a, Some(&a_v1), None);
        assert!(
            index.values.resources.is_empty(),
            "nothing left behind: {index:?}"
        );
    }

    #[test]
    fn other_resources_and_dropped_resources_are_separate() {
        let mut index = LabelIndex::default();
        let (a, a_v1) = object("a", json!({"app": "web"}));
        index.update("configmaps", &a, None, Some(&a_v1));
        index.update("secrets", &a, None, Some(&a_v1));
        index.drop_resource("secrets");
        assert_eq!(names(&index, "app", "web"), ["a"]);
        assert!(index.objects("secrets", "app", "web").is_none());
    }
}
