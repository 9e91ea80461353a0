//! Go's type names (`%T`, `typeOf`) and kinds (`kindOf`) of template values: numbers by their Go type, the
//! renderer's typed objects (root objects, typed maps and slices) by theirs, everything else as Go's template
//! engine holds it (`[]interface {}`, `map[string]interface {}`).

use minijinja::value::{Value, ValueKind};

use super::gostruct::{GoSlice, GoStruct};
use super::gotime::GoTime;
use super::number::{GoNumber, number_type};
use super::value::map_type;

/// Go's `%T` and `reflect.Kind` of the renderer's own typed objects: root objects and typed maps.
fn object_type(value: &Value) -> Option<(&'static str, &'static str)> {
    value.as_object()?;
    if let Some(go_type) = map_type(value) {
        return Some((go_type.name(), "map"));
    }
    if let Some(object) = value.downcast_object_ref::<GoStruct>() {
        return Some((object.type_name, object.kind));
    }
    if let Some(slice) = value.downcast_object_ref::<GoSlice>() {
        return Some((slice.type_name, "slice"));
    }
    crate::objects::go_type(value)
}

/// Go's `reflect.Kind` name as `kindOf`/`kindIs` report it.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    if let Some((_, kind)) = object_type(value) {
        return kind;
    }
    match value.kind() {
        ValueKind::Plain if value.downcast_object_ref::<GoTime>().is_some() => "struct",
        ValueKind::Plain
            if value
                .downcast_object_ref::<super::semver::GoSemver>()
                .is_some() =>
        {
            "ptr"
        }
        ValueKind::Undefined | ValueKind::None => "invalid",
        ValueKind::Bool => "bool",
        ValueKind::Number => number_name(value),
        ValueKind::String => "string",
        ValueKind::Bytes | ValueKind::Seq | ValueKind::Iterable => "slice",
        ValueKind::Map => "map",
        _ => "struct",
    }
}

/// Go's `%T` as `typeOf` reports it.
pub(crate) fn type_of(value: &Value) -> &'static str {
    if let Some((name, _)) = object_type(value) {
        return name;
    }
    match value.kind() {
        ValueKind::Plain if value.downcast_object_ref::<GoTime>().is_some() => "time.Time",
        ValueKind::Plain
            if value
                .downcast_object_ref::<super::semver::GoSemver>()
                .is_some() =>
        {
            "*semver.Version"
        }
        ValueKind::Undefined | ValueKind::None => "<nil>",
        ValueKind::Bool => "bool",
        ValueKind::Number => number_name(value),
        ValueKind::String => "string",
        ValueKind::Bytes => "[]uint8",
        ValueKind::Seq | ValueKind::Iterable => "[]interface {}",
        ValueKind::Map => "map[string]interface {}",
        _ => "struct",
    }
}

/// The Go type name of a number (its `reflect.Kind` has the same name).
fn number_name(value: &Value) -> &'static str {
    number_type(value).map_or("float64", GoNumber::name)
}
