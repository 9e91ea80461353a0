//! Go structs and struct pointers among Helm's root objects (`.Chart`, `.Capabilities`, its `HelmVersion`): their
//! Go type and kind, fields that exist or fail like Go's, `%v` printing and `encoding/json` output by field tags;
//! and the typed slices they hold (`[]string`, `[]*chart.Maintainer`).

use std::fmt;
use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Value};

use super::value::{is_empty, to_json, write_go};

/// One field of a [`GoStruct`].
#[derive(Debug)]
pub(crate) struct Field {
    /// The Go field name templates use.
    pub(crate) name: &'static str,
    /// The key `encoding/json` writes (the field's tag, or its name without one).
    pub(crate) json: &'static str,
    /// Whether the tag says `omitempty`.
    pub(crate) omit_empty: bool,
    /// The value.
    pub(crate) value: Value,
    /// Whether the field is an embedded struct, whose fields are promoted (and whose JSON is inlined).
    pub(crate) embedded: bool,
}

impl Field {
    /// A field written as `json` by `encoding/json`, left out when empty.
    pub(crate) fn tagged(name: &'static str, json: &'static str, value: Value) -> Self {
        Self {
            name,
            json,
            omit_empty: true,
            value,
            embedded: false,
        }
    }

    /// An embedded struct (`name` is its type's name).
    pub(crate) fn embedded(name: &'static str, value: Value) -> Self {
        Self {
            name,
            json: name,
            omit_empty: false,
            value,
            embedded: true,
        }
    }

    /// A field without a JSON tag.
    pub(crate) fn plain(name: &'static str, value: Value) -> Self {
        Self {
            name,
            json: name,
            omit_empty: false,
            value,
            embedded: false,
        }
    }
}

/// A Go struct value (or a pointer to one) with fields in declaration order. A field it does not have is
/// minijinja's plain undefined, which fails where it is used (Go: "can't evaluate field").
#[derive(Debug)]
pub(crate) struct GoStruct {
    /// Go's `%T`.
    pub(crate) type_name: &'static str,
    /// Go's `reflect.Kind`: `struct` or `ptr`.
    pub(crate) kind: &'static str,
    /// The fields in declaration order.
    pub(crate) fields: Vec<Field>,
}

impl GoStruct {
    /// The JSON object `encoding/json` writes: tagged names, declaration order, empty `omitempty` fields left out.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let mut out = serde_json::Map::new();
        for field in &self.fields {
            if field.embedded {
                if let Some(serde_json::Value::Object(inner)) = field
                    .value
                    .downcast_object_ref::<GoStruct>()
                    .map(GoStruct::to_json)
                {
                    out.extend(inner);
                }
            } else if !(field.omit_empty && is_empty(&field.value)) {
                out.insert(field.json.to_string(), to_json(&field.value));
            }
        }
        serde_json::Value::Object(out)
    }

    /// The field `name`, its own or promoted from an embedded struct.
    fn field(&self, name: &str) -> Option<Value> {
        if let Some(field) = self.fields.iter().find(|field| field.name == name) {
            return Some(field.value.clone());
        }
        self.fields
            .iter()
            .filter(|field| field.embedded)
            .find_map(|field| field.value.downcast_object_ref::<GoStruct>()?.field(name))
    }
}

impl Object for GoStruct {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.get_value_by_str(key.as_str()?)
    }

    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        self.field(key)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::NonEnumerable
    }

    fn is_true(self: &Arc<Self>) -> bool {
        true
    }

    /// Go's `%v` of a struct: the field values in braces, separated by spaces.
    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::from("{");
        for (i, field) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            write_go(&mut out, &field.value);
        }
        out.push('}');
        f.write_str(&out)
    }
}

/// A slice of a named element type (`.Chart.Keywords` is a `[]string`): a list to every function, with its Go type.
#[derive(Debug)]
pub(crate) struct GoSlice {
    /// Go's `%T`.
    pub(crate) type_name: &'static str,
    /// The elements.
    pub(crate) items: Vec<Value>,
    /// Whether it is the nil slice (`null` in JSON), as an absent Chart.yaml list is.
    pub(crate) nil: bool,
}

impl GoSlice {
    /// The slice as a template value.
    pub(crate) fn value(type_name: &'static str, items: Vec<Value>) -> Value {
        Value::from_object(GoSlice {
            type_name,
            items,
            nil: false,
        })
    }

    /// The nil slice of the type.
    pub(crate) fn nil(type_name: &'static str) -> Value {
        Value::from_object(GoSlice {
            type_name,
            items: Vec::new(),
            nil: true,
        })
    }

    /// `items` as the slice, or the nil slice when there are none (Chart.yaml lists, `regexFindAll`).
    pub(crate) fn nil_if_empty(type_name: &'static str, items: Vec<Value>) -> Value {
        if items.is_empty() {
            Self::nil(type_name)
        } else {
            Self::value(type_name, items)
        }
    }
}

impl Object for GoSlice {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.items.get(key.as_usize()?).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(self.items.len())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.items.len())
    }
}

/// Whether `value` is a `[]string` (which Sprig's string-slice conversion passes through unchanged).
pub(crate) fn is_string_slice(value: &Value) -> bool {
    value
        .downcast_object_ref::<GoSlice>()
        .is_some_and(|slice| slice.type_name == "[]string")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Value {
        Value::from_object(GoStruct {
            type_name: "version.BuildInfo",
            kind: "struct",
            fields: vec![
                Field::tagged("Version", "version", Value::from("v3.11")),
                Field::tagged("GitCommit", "git_commit", Value::from("")),
                Field::plain("IsRoot", Value::from(false)),
            ],
        })
    }

    #[test]
    fn go_struct_prints_and_encodes_like_go() {
        let value = sample();
        assert_eq!(value.to_string(), "{v3.11  false}");
        let object = value.downcast_object_ref::<GoStruct>().unwrap();
        assert_eq!(
            object.to_json().to_string(),
            r#"{"version":"v3.11","IsRoot":false}"#
        );
    }

    #[test]
    fn go_slice_is_a_list_of_its_type() {
        let value = GoSlice::value("[]string", vec![Value::from("a"), Value::from("b")]);
        assert_eq!(super::super::value::list_items(&value).unwrap().len(), 2);
        assert_eq!(super::super::value::type_of(&value), "[]string");
        assert_eq!(super::super::value::kind_of(&value), "slice");
        assert_eq!(to_json(&value), serde_json::json!(["a", "b"]));
        let nil = GoSlice::nil("[]string");
        assert_eq!(to_json(&nil), serde_json::Value::Null);
        assert_eq!(super::super::value::go_string(&nil), "[]");
        let empty = GoSlice::value("[]int", Vec::new());
        assert_eq!(to_json(&empty), serde_json::json!([]));
    }

    #[test]
    fn go_struct_has_only_its_fields() {
        let value = sample();
        assert_eq!(value.get_attr("Version").unwrap().as_str(), Some("v3.11"));
        assert!(value.get_attr("Missing").unwrap().is_undefined());
    }

    #[test]
    fn embedded_struct_fields_are_promoted_and_inlined() {
        let outer = Value::from_object(GoStruct {
            type_name: "struct { version.BuildInfo; IsRoot bool }",
            kind: "struct",
            fields: vec![
                Field::embedded("BuildInfo", sample()),
                Field::plain("IsRoot", Value::from(true)),
            ],
        });
        assert_eq!(outer.to_string(), "{{v3.11  false} true}");
        assert_eq!(outer.get_attr("Version").unwrap().as_str(), Some("v3.11"));
        assert_eq!(
            outer
                .downcast_object_ref::<GoStruct>()
                .unwrap()
                .to_json()
                .to_string(),
            r#"{"version":"v3.11","IsRoot":true}"#
        );
    }
}
