//! The Swagger 2.0 document in the protobuf form clients ask for
//! (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`, answered with the content type
//! kube-openapi's handler gives, whose subtype Go's mime parser accepts): gnostic's
//! `openapi.v2.Document`
//! with info, paths (operations, parameters, responses, vendor extensions) and definitions.

use serde_json::Value;

use crate::endpoints::protobuf::wire::Writer;

/// The content type of the protobuf document.
pub const MEDIA_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// Encodes a v2 document.
pub fn encode_document(document: &Value) -> Vec<u8> {
    let mut w = Writer::default();
    string(&mut w, 1, &document["swagger"]);
    let mut info = Writer::default();
    string(&mut info, 1, &document["info"]["title"]);
    string(&mut info, 2, &document["info"]["version"]);
    w.bytes_field(2, &info.into_bytes());
    let mut paths = Writer::default();
    for (name, item) in document["paths"].as_object().into_iter().flatten() {
        paths.bytes_field(2, &named(name, &path_item(item)));
    }
    w.bytes_field(8, &paths.into_bytes());
    let mut definitions = Writer::default();
    for (name, schema) in document["definitions"].as_object().into_iter().flatten() {
        definitions.bytes_field(1, &named(name, &encode_schema(schema)));
    }
    w.bytes_field(9, &definitions.into_bytes());
    w.into_bytes()
}

fn string(w: &mut Writer, number: u32, value: &Value) {
    if let Some(text) = value.as_str().filter(|t| !t.is_empty()) {
        w.bytes_field(number, text.as_bytes());
    }
}

fn strings(w: &mut Writer, number: u32, value: &Value) {
    for text in value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        w.bytes_field(number, text.as_bytes());
    }
}

fn boolean(w: &mut Writer, number: u32, value: &Value) {
    if value.as_bool() == Some(true) {
        w.varint_field(number, 1);
    }
}

fn int64(w: &mut Writer, number: u32, value: &Value) {
    if let Some(n) = value.as_i64() {
        w.varint_field(number, n as u64);
    }
}

fn double(w: &mut Writer, number: u32, value: &Value) {
    if let Some(n) = value.as_f64() {
        w.double_field(number, n);
    }
}

/// A name/value pair message (NamedSchema, NamedPathItem, ...).
fn named(name: &str, value: &[u8]) -> Vec<u8> {
    let mut w = Writer::default();
    w.bytes_field(1, name.as_bytes());
    w.bytes_field(2, value);
    w.into_bytes()
}

/// `Any` carrying a value as YAML (JSON text is YAML).
fn any(value: &Value) -> Vec<u8> {
    let mut w = Writer::default();
    w.bytes_field(2, format!("{value}\n").as_bytes());
    w.into_bytes()
}

/// The `x-` keys of an object as repeated NamedAny.
fn vendor_extensions(w: &mut Writer, number: u32, object: &Value) {
    for (key, value) in object.as_object().into_iter().flatten() {
        if key.starts_with("x-") {
            w.bytes_field(number, &named(key, &any(value)));
        }
    }
}

/// Encodes a Schema.
pub fn encode_schema(schema: &Value) -> Vec<u8> {
    let mut w = Writer::default();
    string(&mut w, 1, &schema["$ref"]);
    string(&mut w, 2, &schema["format"]);
    string(&mut w, 3, &schema["title"]);
    string(&mut w, 4, &schema["description"]);
    if let Some(default) = schema.get("default") {
        w.bytes_field(5, &any(default));
    }
    double(&mut w, 6, &schema["multipleOf"]);
    double(&mut w, 7, &schema["maximum"]);
    boolean(&mut w, 8, &schema["exclusiveMaximum"]);
    double(&mut w, 9, &schema["minimum"]);
    boolean(&mut w, 10, &schema["exclusiveMinimum"]);
    for (number, key) in [
        (11, "maxLength"),
        (12, "minLength"),
        (14, "maxItems"),
        (15, "minItems"),
        (17, "maxProperties"),
        (18, "minProperties"),
    ] {
        int64(&mut w, number, &schema[key]);
    }
    string(&mut w, 13, &schema["pattern"]);
    boolean(&mut w, 16, &schema["uniqueItems"]);
    strings(&mut w, 19, &schema["required"]);
    for value in schema["enum"].as_array().into_iter().flatten() {
        w.bytes_field(20, &any(value));
    }
    match schema.get("additionalProperties") {
        Some(Value::Bool(allowed)) => {
            let mut item = Writer::default();
            item.varint_field(2, u64::from(*allowed));
            w.bytes_field(21, &item.into_bytes());
        }
        Some(sub @ Value::Object(_)) => {
            let mut item = Writer::default();
            item.bytes_field(1, &encode_schema(sub));
            w.bytes_field(21, &item.into_bytes());
        }
        _ => {}
    }
    let types: Vec<Value> = match &schema["type"] {
        Value::String(t) => vec![Value::String(t.clone())],
        Value::Array(ts) => ts.clone(),
        _ => Vec::new(),
    };
    if !types.is_empty() {
        let mut item = Writer::default();
        strings(&mut item, 1, &Value::Array(types));
        w.bytes_field(22, &item.into_bytes());
    }
    match &schema["items"] {
        sub @ Value::Object(_) => {
            let mut item = Writer::default();
            item.bytes_field(1, &encode_schema(sub));
            w.bytes_field(23, &item.into_bytes());
        }
        Value::Array(subs) => {
            let mut item = Writer::default();
            for sub in subs {
                item.bytes_field(1, &encode_schema(sub));
            }
            w.bytes_field(23, &item.into_bytes());
        }
        _ => {}
    }
    for sub in schema["allOf"].as_array().into_iter().flatten() {
        w.bytes_field(24, &encode_schema(sub));
    }
    if let Some(properties) = schema["properties"].as_object() {
        let mut item = Writer::default();
        for (name, sub) in properties {
            item.bytes_field(1, &named(name, &encode_schema(sub)));
        }
        w.bytes_field(25, &item.into_bytes());
    }
    boolean(&mut w, 27, &schema["readOnly"]);
    vendor_extensions(&mut w, 31, schema);
    w.into_bytes()
}

fn path_item(item: &Value) -> Vec<u8> {
    let mut w = Writer::default();
    for (number, method) in [
        (2, "get"),
        (3, "put"),
        (4, "post"),
        (5, "delete"),
        (6, "options"),
        (7, "head"),
        (8, "patch"),
    ] {
        if let Some(operation) = item.get(method) {
            w.bytes_field(number, &encode_operation(operation));
        }
    }
    for parameter in item["parameters"].as_array().into_iter().flatten() {
        w.bytes_field(9, &parameters_item(parameter));
    }
    vendor_extensions(&mut w, 10, item);
    w.into_bytes()
}

fn encode_operation(operation: &Value) -> Vec<u8> {
    let mut w = Writer::default();
    strings(&mut w, 1, &operation["tags"]);
    string(&mut w, 2, &operation["summary"]);
    string(&mut w, 3, &operation["description"]);
    string(&mut w, 5, &operation["operationId"]);
    strings(&mut w, 6, &operation["produces"]);
    strings(&mut w, 7, &operation["consumes"]);
    for parameter in operation["parameters"].as_array().into_iter().flatten() {
        w.bytes_field(8, &parameters_item(parameter));
    }
    let mut responses = Writer::default();
    for (code, response) in operation["responses"].as_object().into_iter().flatten() {
        let mut body = Writer::default();
        string(&mut body, 1, &response["description"]);
        if let Some(schema) = response.get("schema") {
            let mut item = Writer::default();
            item.bytes_field(1, &encode_schema(schema));
            body.bytes_field(2, &item.into_bytes());
        }
        let mut value = Writer::default();
        value.bytes_field(1, &body.into_bytes());
        responses.bytes_field(1, &named(code, &value.into_bytes()));
    }
    w.bytes_field(9, &responses.into_bytes());
    strings(&mut w, 10, &operation["schemes"]);
    vendor_extensions(&mut w, 13, operation);
    w.into_bytes()
}

/// A ParametersItem holding a body, query or path parameter.
fn parameters_item(parameter: &Value) -> Vec<u8> {
    let mut p = Writer::default();
    let location = parameter["in"].as_str().unwrap_or_default();
    if location == "body" {
        let mut body = Writer::default();
        string(&mut body, 1, &parameter["description"]);
        string(&mut body, 2, &parameter["name"]);
        string(&mut body, 3, &parameter["in"]);
        boolean(&mut body, 4, &parameter["required"]);
        body.bytes_field(5, &encode_schema(&parameter["schema"]));
        p.bytes_field(1, &body.into_bytes());
    } else {
        // Query and path sub-schemas share the first fields; type and uniqueItems differ.
        let (variant, type_field, unique_field) = if location == "path" {
            (4, 5, 19)
        } else {
            (3, 6, 20)
        };
        let mut sub = Writer::default();
        boolean(&mut sub, 1, &parameter["required"]);
        string(&mut sub, 2, &parameter["in"]);
        string(&mut sub, 3, &parameter["description"]);
        string(&mut sub, 4, &parameter["name"]);
        string(&mut sub, type_field, &parameter["type"]);
        boolean(&mut sub, unique_field, &parameter["uniqueItems"]);
        let mut non_body = Writer::default();
        non_body.bytes_field(variant, &sub.into_bytes());
        p.bytes_field(2, &non_body.into_bytes());
    }
    let mut item = Writer::default();
    item.bytes_field(1, &p.into_bytes());
    item.into_bytes()
}
