//! An index of the stored custom objects by their CRD's `selectableFields` (`spec.seedName=x`), so
//! that a list with an equality field selector reads only the matching objects instead of
//! scanning the resource. A garden controller lists each Seed's ControllerInstallations with
//! `spec.seedRef.name=<seed>`: with hundreds of Seeds and tens of thousands of installations the
//! scans were most of the API server's CPU.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use super::ObjectKey;
use super::labels::ValueIndex;

/// Storage key → indexed field paths, and the objects by field value.
#[derive(Debug, Default)]
pub struct FieldIndex {
    fields: HashMap<String, Vec<String>>,
    index: ValueIndex,
}

impl FieldIndex {
    /// Indexes `resource` by `fields` (dotted paths without the leading dot), rebuilding its index
    /// from `objects` when the set changed; no fields stops indexing it.
    pub fn set_fields<'a>(
        &mut self,
        resource: &str,
        fields: Vec<String>,
        objects: impl Iterator<Item = (&'a ObjectKey, &'a Value)>,
    ) {
        if self
            .fields
            .get(resource)
            .map_or(fields.is_empty(), |f| *f == fields)
        {
            return;
        }
        self.index.drop_resource(resource);
        if fields.is_empty() {
            self.fields.remove(resource);
            return;
        }
        self.fields.insert(resource.to_owned(), fields);
        for (key, object) in objects {
            self.update(resource, key, None, Some(object));
        }
    }

    /// Whether lists of `resource` can use the index for `field`.
    pub fn indexes(&self, resource: &str, field: &str) -> bool {
        self.fields
            .get(resource)
            .is_some_and(|fields| fields.iter().any(|f| f == field))
    }

    /// Records that the object `key` of `resource` changed from `before` to `after` (`None` when it
    /// did not exist or no longer exists).
    pub fn update(
        &mut self,
        resource: &str,
        key: &ObjectKey,
        before: Option<&Value>,
        after: Option<&Value>,
    ) {
        let Some(fields) = self.fields.get(resource) else {
            return;
        };
        for field in fields {
            let old = before.map(|object| field_value(object, field));
            let new = after.map(|object| field_value(object, field));
            if old == new {
                continue;
            }
            if let Some(old) = old {
                self.index.remove(resource, field, &old, key);
            }
            if let Some(new) = new {
                self.index.insert(resource, field, &new, key);
            }
        }
    }

    /// The objects of `resource` whose indexed `field` is `value`, in list order; `None` when no
    /// object has it (or the field is not indexed: ask [`FieldIndex::indexes`] first).
    pub fn objects(
        &self,
        resource: &str,
        field: &str,
        value: &str,
    ) -> Option<&BTreeSet<ObjectKey>> {
        self.index.objects(resource, field, value)
    }

    /// Forgets every object of `resource` (its fields stay configured).
    pub fn drop_resource(&mut self, resource: &str) {
        self.index.drop_resource(resource);
    }
}

/// A field's value as field selectors compare it: a string as is, a missing or null field as "",
/// anything else as JSON.
pub fn field_value(object: &Value, field: &str) -> String {
    let mut current = object;
    for part in field.split('.') {
        match current.get(part) {
            Some(next) => current = next,
            None => return String::new(),
        }
    }
    match current {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    fn installation(name: &str, seed: Option<&str>) -> (ObjectKey, Value) {
        let spec = seed.map_or(json!({}), |seed| json!({"seedRef": {"name": seed}}));
        (
            (String::new(), name.to_owned()),
            json!({"metadata": {"name": name}, "spec": spec}),
        )
    }

    fn names(index: &FieldIndex, value: &str) -> Vec<String> {
        index
            .objects("cis", "spec.seedRef.name", value)
            .map(|keys| keys.iter().map(|(_, name)| name.clone()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn index_follows_values_and_is_rebuilt_when_the_fields_change() {
        let (a, a1) = installation("a", Some("s1"));
        let (b, b1) = installation("b", Some("s1"));
        let (c, c1) = installation("c", None);
        let stored = [(a.clone(), a1.clone()), (b.clone(), b1), (c, c1)];
        let mut index = FieldIndex::default();
        index.update("cis", &a, None, Some(&a1));
        assert!(
            names(&index, "s1").is_empty(),
            "nothing indexed before fields are set"
        );

        index.set_fields(
            "cis",
            vec!["spec.seedRef.name".to_owned()],
            stored.iter().map(|(key, object)| (key, object)),
        );
        assert!(index.indexes("cis", "spec.seedRef.name"));
        assert!(!index.indexes("cis", "spec.other"));
        assert_eq!(names(&index, "s1"), ["a", "b"]);
        assert_eq!(names(&index, ""), ["c"], "a missing field selects as empty");

        let (_, a2) = installation("a", Some("s2"));
        index.update("cis", &a, Some(&a1), Some(&a2));
        assert_eq!(names(&index, "s1"), ["b"]);
        assert_eq!(names(&index, "s2"), ["a"]);
        index.update("cis", &a, Some(&a2), None);
        assert!(names(&index, "s2").is_empty());

        index.set_fields("cis", Vec::new(), std::iter::empty());
        assert!(!index.indexes("cis", "spec.seedRef.name"));
        assert!(names(&index, "s1").is_empty());
    }
}
