//! `values.schema.json` validation with Helm's error text: the JSON Schema keywords gojsonschema (Helm v3's
//! validator) checks — drafts 4 to 7 — reported as `- <field>: <description>` per violation in gojsonschema's
//! wording, under `<chart>:` per chart, prefixed by Helm's sentence.
//!
//! Written here rather than taken from a JSON Schema crate because the output must be gojsonschema's text and
//! field paths byte for byte, and because remote `$ref`s must never be fetched while rendering (only
//! references into the same document are followed).

use std::fmt::Write as _;

use serde_json::{Map, Value as Json};

use crate::chart::Chart;
use crate::values;

/// Helm's sentence before the per-chart violations.
pub(crate) const SCHEMA_ERROR_PREFIX: &str =
    "values don't meet the specifications of the schema(s) in the following chart(s):";

/// Validates `values` (the coalesced values of `chart`) against the schemas of the chart and its enabled
/// subcharts; returns Helm's message when some are violated.
pub(crate) fn validate_chart(chart: &Chart, values: &Json) -> Option<String> {
    let mut out = String::new();
    collect(chart, chart.name(), values, &mut out);
    (!out.is_empty()).then(|| format!("{SCHEMA_ERROR_PREFIX}\n{out}"))
}

fn collect(chart: &Chart, name: &str, values: &Json, out: &mut String) {
    if let Some(schema) = &chart.schema {
        let empty = Json::Object(Map::new());
        let instance = if values.is_null() { &empty } else { values };
        let mut errors = Vec::new();
        Validator::new(schema).check(schema, instance, "(root)", &mut errors);
        if !errors.is_empty() {
            let _ = writeln!(out, "{name}:");
            for error in errors {
                let _ = writeln!(out, "- {error}");
            }
        }
    }
    for (sub_name, sub) in values::subcharts(chart) {
        if !values::subchart_enabled(chart, &sub_name, &sub.metadata.name, values) {
            continue;
        }
        let empty = Json::Object(Map::new());
        let sub_values = values.get(&sub_name).unwrap_or(&empty);
        collect(sub, &sub_name, sub_values, out);
    }
}

struct Validator<'a> {
    root: &'a Json,
    /// Compiled `pattern`/`patternProperties` expressions (`None`: invalid, ignored).
    regexes: std::cell::RefCell<std::collections::HashMap<String, Option<regex::Regex>>>,
}

impl<'a> Validator<'a> {
    fn new(root: &'a Json) -> Self {
        Self {
            root,
            regexes: Default::default(),
        }
    }

    /// Whether `pattern` matches `text`; `None` for a pattern that does not compile.
    fn matches(&self, pattern: &str, text: &str) -> Option<bool> {
        let mut regexes = self.regexes.borrow_mut();
        let compiled = regexes
            .entry(pattern.to_string())
            .or_insert_with(|| regex::Regex::new(pattern).ok());
        compiled.as_ref().map(|re| re.is_match(text))
    }
}

/// gojsonschema's `Field()`: the context path without the `(root).` prefix.
fn field(path: &str) -> &str {
    path.strip_prefix("(root).").unwrap_or(path)
}

/// gojsonschema's type name of a JSON value (whole numbers are `integer`).
fn type_name(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(n) => {
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                "integer"
            } else {
                "number"
            }
        }
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn type_matches(wanted: &str, value: &Json) -> bool {
    let actual = type_name(value);
    wanted == actual || (wanted == "number" && actual == "integer")
}

/// A number as gojsonschema prints limits (Go's `%v` of a float64 or integer).
fn number_text(value: &Json) -> String {
    match value {
        Json::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        Json::Number(n) => crate::funcs::value::format_float(n.as_f64().unwrap_or(0.0)),
        other => other.to_string(),
    }
}

fn as_f64(value: &Json) -> Option<f64> {
    value.as_f64()
}

impl Validator<'_> {
    fn resolve<'s>(&'s self, reference: &str) -> Option<&'s Json> {
        let pointer = reference.strip_prefix('#')?;
        let decoded = pointer.replace("%25", "%");
        self.root.pointer(&decoded)
    }

    fn check(&self, schema: &Json, value: &Json, path: &str, errors: &mut Vec<String>) {
        let Json::Object(s) = schema else {
            if schema == &Json::Bool(false) {
                errors.push(format!("{}: False always fails validation", field(path)));
            }
            return;
        };
        if let Some(reference) = s.get("$ref").and_then(Json::as_str) {
            match self.resolve(reference) {
                Some(target) => self.check(target, value, path, errors),
                None => errors.push(format!(
                    "{}: unresolvable reference {reference:?} (only references into the schema itself are followed)",
                    field(path)
                )),
            }
            return;
        }
        self.check_type(s, value, path, errors);
        if let Some(allowed) = s.get("enum").and_then(Json::as_array)
            && !allowed.iter().any(|a| json_equal(a, value))
        {
            let list: Vec<String> = allowed.iter().map(Json::to_string).collect();
            errors.push(format!(
                "{}: {} must be one of the following: {}",
                field(path),
                field(path),
                list.join(", ")
            ));
        }
        if let Some(constant) = s.get("const")
            && !json_equal(constant, value)
        {
            errors.push(format!(
                "{}: {} does not match: {constant}",
                field(path),
                field(path)
            ));
        }
        self.check_combinators(s, value, path, errors);
        match value {
            Json::Object(map) => self.check_object(s, map, path, errors),
            Json::Array(items) => self.check_array(s, items, path, errors),
            Json::String(text) => self.check_string(s, text, path, errors),
            Json::Number(_) => check_number(s, value, path, errors),
            _ => {}
        }
    }

    fn check_type(
        &self,
        s: &Map<String, Json>,
        value: &Json,
        path: &str,
        errors: &mut Vec<String>,
    ) {
        let wanted: Vec<&str> = match s.get("type") {
            Some(Json::String(t)) => vec![t.as_str()],
            Some(Json::Array(list)) => list.iter().filter_map(Json::as_str).collect(),
            _ => return,
        };
        if !wanted.iter().any(|t| type_matches(t, value)) {
            errors.push(format!(
                "{}: Invalid type. Expected: {}, given: {}",
                field(path),
                wanted.join(","),
                type_name(value)
            ));
        }
    }

    fn check_combinators(
        &self,
        s: &Map<String, Json>,
        value: &Json,
        path: &str,
        errors: &mut Vec<String>,
    ) {
        let passes = |schema: &Json| {
            let mut scratch = Vec::new();
            self.check(schema, value, path, &mut scratch);
            scratch.is_empty()
        };
        if let Some(all) = s.get("allOf").and_then(Json::as_array) {
            let mut inner = Vec::new();
            for schema in all {
                self.check(schema, value, path, &mut inner);
            }
            if !inner.is_empty() {
                errors.extend(inner);
                errors.push(format!(
                    "{}: Must validate all the schemas (allOf)",
                    field(path)
                ));
            }
        }
        if let Some(any) = s.get("anyOf").and_then(Json::as_array)
            && !any.iter().any(passes)
        {
            errors.push(format!(
                "{}: Must validate at least one schema (anyOf)",
                field(path)
            ));
        }
        if let Some(one) = s.get("oneOf").and_then(Json::as_array)
            && one.iter().filter(|schema| passes(schema)).count() != 1
        {
            errors.push(format!(
                "{}: Must validate one and only one schema (oneOf)",
                field(path)
            ));
        }
        if let Some(not) = s.get("not")
            && passes(not)
        {
            errors.push(format!(
                "{}: Must not validate the schema (not)",
                field(path)
            ));
        }
        if let Some(condition) = s.get("if") {
            let branch = if passes(condition) {
                s.get("then")
            } else {
                s.get("else")
            };
            if let Some(branch) = branch {
                let mut inner = Vec::new();
                self.check(branch, value, path, &mut inner);
                if !inner.is_empty() {
                    errors.extend(inner);
                    let which = if passes(condition) { "then" } else { "else" };
                    errors.push(format!(
                        "{}: Must validate \"{which}\" as \"if\" was valid",
                        field(path)
                    ));
                }
            }
        }
    }

    fn check_object(
        &self,
        s: &Map<String, Json>,
        map: &Map<String, Json>,
        path: &str,
        errors: &mut Vec<String>,
    ) {
        if let Some(required) = s.get("required").and_then(Json::as_array) {
            for name in required.iter().filter_map(Json::as_str) {
                if !map.contains_key(name) {
                    errors.push(format!("{}: {name} is required", field(path)));
                }
            }
        }
        let properties = s.get("properties").and_then(Json::as_object);
        let patterns = s.get("patternProperties").and_then(Json::as_object);
        // Helm marshals the values through YAML first, so keys come sorted.
        let mut keys: Vec<&String> = map.keys().collect();
        keys.sort();
        for key in keys {
            let item = &map[key];
            let child = format!("{path}.{key}");
            let mut matched = false;
            if let Some(schema) = properties.and_then(|p| p.get(key)) {
                matched = true;
                self.check(schema, item, &child, errors);
            }
            for (pattern, schema) in patterns.into_iter().flatten() {
                if self.matches(pattern, key) == Some(true) {
                    matched = true;
                    self.check(schema, item, &child, errors);
                }
            }
            if !matched {
                match s.get("additionalProperties") {
                    Some(Json::Bool(false)) => errors.push(format!(
                        "{}: Additional property {key} is not allowed",
                        field(path)
                    )),
                    Some(schema @ Json::Object(_)) => self.check(schema, item, &child, errors),
                    _ => {}
                }
            }
            if let Some(names) = s.get("propertyNames") {
                let mut inner = Vec::new();
                self.check(names, &Json::String(key.clone()), &child, &mut inner);
                if !inner.is_empty() {
                    errors.push(format!(
                        "{}: Property \"{key}\" does not match pattern {}",
                        field(path),
                        names
                            .get("pattern")
                            .map(Json::to_string)
                            .unwrap_or_default()
                    ));
                }
            }
        }
        if let Some(dependencies) = s.get("dependencies").and_then(Json::as_object) {
            for (key, dependency) in dependencies {
                if !map.contains_key(key) {
                    continue;
                }
                match dependency {
                    Json::Array(names) => {
                        for name in names.iter().filter_map(Json::as_str) {
                            if !map.contains_key(name) {
                                errors.push(format!("{}: Has a dependency on {name}", field(path)));
                            }
                        }
                    }
                    schema => self.check(schema, &Json::Object(map.clone()), path, errors),
                }
            }
        }
        let count = map.len() as f64;
        if let Some(min) = s.get("minProperties").and_then(as_f64)
            && count < min
        {
            errors.push(format!(
                "{}: Must have at least {} properties",
                field(path),
                number_text(&s["minProperties"])
            ));
        }
        if let Some(max) = s.get("maxProperties").and_then(as_f64)
            && count > max
        {
            errors.push(format!(
                "{}: Must have at most {} properties",
                field(path),
                number_text(&s["maxProperties"])
            ));
        }
    }

    fn check_array(
        &self,
        s: &Map<String, Json>,
        items: &[Json],
        path: &str,
        errors: &mut Vec<String>,
    ) {
        match s.get("items") {
            Some(Json::Array(schemas)) => {
                for (i, item) in items.iter().enumerate() {
                    let child = format!("{path}.{i}");
                    match schemas.get(i) {
                        Some(schema) => self.check(schema, item, &child, errors),
                        None => match s.get("additionalItems") {
                            Some(Json::Bool(false)) => {
                                errors.push(format!(
                                    "{}: No additional items allowed on array",
                                    field(path)
                                ));
                                break;
                            }
                            Some(schema @ Json::Object(_)) => {
                                self.check(schema, item, &child, errors)
                            }
                            _ => {}
                        },
                    }
                }
            }
            Some(schema) => {
                for (i, item) in items.iter().enumerate() {
                    self.check(schema, item, &format!("{path}.{i}"), errors);
                }
            }
            None => {}
        }
        let count = items.len() as f64;
        if let Some(min) = s.get("minItems").and_then(as_f64)
            && count < min
        {
            errors.push(format!(
                "{}: Array must have at least {} items",
                field(path),
                number_text(&s["minItems"])
            ));
        }
        if let Some(max) = s.get("maxItems").and_then(as_f64)
            && count > max
        {
            errors.push(format!(
                "{}: Array must have at most {} items",
                field(path),
                number_text(&s["maxItems"])
            ));
        }
        if s.get("uniqueItems") == Some(&Json::Bool(true)) {
            'outer: for i in 0..items.len() {
                for j in i + 1..items.len() {
                    if json_equal(&items[i], &items[j]) {
                        errors.push(format!(
                            "{}: array items[{i},{j}] must be unique",
                            field(path)
                        ));
                        break 'outer;
                    }
                }
            }
        }
        if let Some(contains) = s.get("contains") {
            let any = items.iter().any(|item| {
                let mut scratch = Vec::new();
                self.check(contains, item, path, &mut scratch);
                scratch.is_empty()
            });
            if !any {
                errors.push(format!(
                    "{}: At least one of the items must match",
                    field(path)
                ));
            }
        }
    }
}

impl Validator<'_> {
    fn check_string(
        &self,
        s: &Map<String, Json>,
        text: &str,
        path: &str,
        errors: &mut Vec<String>,
    ) {
        let length = text.chars().count() as f64;
        if let Some(min) = s.get("minLength").and_then(as_f64)
            && length < min
        {
            errors.push(format!(
                "{}: String length must be greater than or equal to {}",
                field(path),
                number_text(&s["minLength"])
            ));
        }
        if let Some(max) = s.get("maxLength").and_then(as_f64)
            && length > max
        {
            errors.push(format!(
                "{}: String length must be less than or equal to {}",
                field(path),
                number_text(&s["maxLength"])
            ));
        }
        if let Some(pattern) = s.get("pattern").and_then(Json::as_str)
            && self.matches(pattern, text) == Some(false)
        {
            errors.push(format!(
                "{}: Does not match pattern '{pattern}'",
                field(path)
            ));
        }
    }
}

fn check_number(s: &Map<String, Json>, value: &Json, path: &str, errors: &mut Vec<String>) {
    let Some(n) = value.as_f64() else { return };
    let bound = |key: &str| s.get(key).and_then(as_f64);
    // Draft 4 writes exclusive bounds as booleans next to minimum/maximum; later drafts as numbers.
    let exclusive = |key: &str| s.get(key) == Some(&Json::Bool(true));
    if let Some(min) = bound("minimum") {
        if exclusive("exclusiveMinimum") && n <= min {
            errors.push(format!(
                "{}: Must be greater than {}",
                field(path),
                number_text(&s["minimum"])
            ));
        } else if n < min {
            errors.push(format!(
                "{}: Must be greater than or equal to {}",
                field(path),
                number_text(&s["minimum"])
            ));
        }
    }
    if let Some(max) = bound("maximum") {
        if exclusive("exclusiveMaximum") && n >= max {
            errors.push(format!(
                "{}: Must be less than {}",
                field(path),
                number_text(&s["maximum"])
            ));
        } else if n > max {
            errors.push(format!(
                "{}: Must be less than or equal to {}",
                field(path),
                number_text(&s["maximum"])
            ));
        }
    }
    if let Some(min) = bound("exclusiveMinimum")
        && n <= min
    {
        errors.push(format!(
            "{}: Must be greater than {}",
            field(path),
            number_text(&s["exclusiveMinimum"])
        ));
    }
    if let Some(max) = bound("exclusiveMaximum")
        && n >= max
    {
        errors.push(format!(
            "{}: Must be less than {}",
            field(path),
            number_text(&s["exclusiveMaximum"])
        ));
    }
    if let Some(divisor) = bound("multipleOf")
        && divisor > 0.0
        && ((n / divisor) - (n / divisor).round()).abs() > 1e-9
    {
        errors.push(format!(
            "{}: Must be a multiple of {}",
            field(path),
            number_text(&s["multipleOf"])
        ));
    }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
fn json_equal(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(schema: Json, value: Json) -> Vec<String> {
        let mut out = Vec::new();
        Validator::new(&schema).check(&schema, &value, "(root)", &mut out);
        out
    }

    #[test]
    fn violations_read_like_gojsonschema() {
        let schema = serde_json::json!({
            "type": "object",
            "required": ["image"],
            "additionalProperties": false,
            "properties": {
                "replicas": {"type": "integer", "minimum": 1, "maximum": 5},
                "mode": {"enum": ["a", "b"]},
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3},
                "ports": {"type": "array", "items": {"$ref": "#/definitions/port"}, "uniqueItems": true},
                "image": {"type": "string"}
            },
            "definitions": {"port": {"type": "integer", "exclusiveMaximum": 65536}}
        });
        let found = errors(
            schema,
            serde_json::json!({"replicas": "3", "mode": "c", "name": "ABCD", "ports": [80, 70000, 80], "extra": 1}),
        );
        assert_eq!(
            found,
            [
                "(root): image is required",
                "(root): Additional property extra is not allowed",
                "mode: mode must be one of the following: \"a\", \"b\"",
                "name: String length must be less than or equal to 3",
                "name: Does not match pattern '^[a-z]+$'",
                "ports.1: Must be less than 65536",
                "ports: array items[0,2] must be unique",
                "replicas: Invalid type. Expected: integer, given: string",
            ]
        );
        assert!(errors(serde_json::json!({"type": "number"}), serde_json::json!(3)).is_empty());
        assert_eq!(
            errors(
                serde_json::json!({"type": "integer"}),
                serde_json::json!(2.5)
            ),
            ["(root): Invalid type. Expected: integer, given: number"]
        );
        assert_eq!(
            errors(
                serde_json::json!({"$ref": "https://example.com/s.json"}),
                serde_json::json!(1)
            )
            .len(),
            1,
            "remote references are never fetched"
        );
    }
}
