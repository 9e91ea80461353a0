//! Helm's `--set`, `--set-string` and `--set-json` arguments turned into values overlays:
//! `a.b=1,c[0].d=x,e={1,2}` with Helm's typing (`true`/`false` → booleans, `null` → removal,
//! integers without a leading zero → numbers, everything else a string; `--set-string` keeps
//! strings, `--set-json` parses each value as JSON) and `\` escaping `,` `.` `=` `[` `{`.

use serde_json::{Map, Value};

/// How the values of one `--set`-style argument are typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetKind {
    /// `--set`: Helm's typing.
    Typed,
    /// `--set-string`: always strings.
    String,
    /// `--set-json`: JSON values.
    Json,
}

/// An argument that does not parse, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{argument:?}: {reason}")]
pub struct SetError {
    /// The argument as given.
    pub argument: String,
    /// What is wrong.
    pub reason: String,
}

/// Applies one argument (`key=value[,key=value…]`) to `values`.
///
/// # Errors
/// [`SetError`] for a pair without `=`, an empty key, a bad index or invalid JSON.
pub fn apply(values: &mut Value, argument: &str, kind: SetKind) -> Result<(), SetError> {
    let error = |reason: String| SetError {
        argument: argument.to_owned(),
        reason,
    };
    let mut rest = argument;
    while !rest.is_empty() {
        let (key, after_key) = split_unescaped(rest, '=')
            .ok_or_else(|| error(format!("{rest:?} has no '=' (expected key=value)")))?;
        let path = key_path(key).map_err(error)?;
        let (value, after_value) = match kind {
            SetKind::Json => json_value(after_key).map_err(error)?,
            SetKind::Typed | SetKind::String => {
                let (raw, after) = scalar_or_list(after_key);
                (typed(&raw, kind), after)
            }
        };
        assign(values, &path, value).map_err(error)?;
        rest = after_value;
    }
    Ok(())
}

/// One step of a key: a map key or a list index.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// `text` split at the first unescaped `separator`.
fn split_unescaped(text: &str, separator: char) -> Option<(&str, &str)> {
    let mut escaped = false;
    for (index, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            _ if c == separator => return Some((&text[..index], &text[index + 1..])),
            _ => {}
        }
    }
    None
}

/// `a.b\.c[0][1]` → `a`, `b.c`, 0, 1.
fn key_path(key: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let mut current = String::new();
    let mut chars = key.chars();
    let mut pending_key = true;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                current.extend(chars.next());
            }
            '.' => {
                if pending_key {
                    push_key(&mut steps, &mut current, key)?;
                }
                pending_key = true;
            }
            '[' => {
                if pending_key && !current.is_empty() {
                    push_key(&mut steps, &mut current, key)?;
                }
                pending_key = false;
                let index: String = chars.by_ref().take_while(|&c| c != ']').collect();
                let index = index
                    .parse::<usize>()
                    .map_err(|_| format!("{index:?} in {key:?} is not a list index"))?;
                steps.push(Step::Index(index));
            }
            _ => {
                pending_key = true;
                current.push(c);
            }
        }
    }
    if pending_key {
        push_key(&mut steps, &mut current, key)?;
    }
    Ok(steps)
}

fn push_key(steps: &mut Vec<Step>, current: &mut String, key: &str) -> Result<(), String> {
    if current.is_empty() {
        return Err(format!("{key:?} has an empty key"));
    }
    steps.push(Step::Key(std::mem::take(current)));
    Ok(())
}

/// A raw value up to the next unescaped `,` (a `{…}` list whole), unescaped, and the rest.
fn scalar_or_list(text: &str) -> (RawValue, &str) {
    if let Some(inner) = text.strip_prefix('{')
        && let Some((list, after)) = split_unescaped(inner, '}')
    {
        let items = split_all(list).into_iter().map(unescape).collect();
        let after = after.strip_prefix(',').unwrap_or(after);
        return (RawValue::List(items), after);
    }
    match split_unescaped(text, ',') {
        Some((value, after)) => (RawValue::Scalar(unescape(value)), after),
        None => (RawValue::Scalar(unescape(text)), ""),
    }
}

/// A value as written: one scalar or a `{…}` list.
enum RawValue {
    Scalar(String),
    List(Vec<String>),
}

fn split_all(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some((part, after)) = split_unescaped(rest, ',') {
        parts.push(part);
        rest = after;
    }
    parts.push(rest);
    parts
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

fn typed(raw: &RawValue, kind: SetKind) -> Value {
    match raw {
        RawValue::Scalar(text) => typed_scalar(text, kind),
        RawValue::List(items) => {
            Value::Array(items.iter().map(|item| typed_scalar(item, kind)).collect())
        }
    }
}

/// Helm's `typedVal`.
fn typed_scalar(text: &str, kind: SetKind) -> Value {
    if kind == SetKind::String {
        return Value::String(text.to_owned());
    }
    if text.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if text.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if text.eq_ignore_ascii_case("null") {
        return Value::Null;
    }
    if text == "0" {
        return Value::from(0);
    }
    if !text.starts_with('0')
        && let Ok(number) = text.parse::<i64>()
    {
        return Value::from(number);
    }
    Value::String(text.to_owned())
}

/// One JSON value at the start of `text`, and what follows it after a `,`.
fn json_value(text: &str) -> Result<(Value, &str), String> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let value = match stream.next() {
        Some(Ok(value)) => value,
        Some(Err(error)) => return Err(format!("invalid JSON value: {error}")),
        None => return Err("missing JSON value".to_owned()),
    };
    let after = text[stream.byte_offset()..].trim_start();
    match after.strip_prefix(',') {
        Some(rest) => Ok((value, rest)),
        None if after.is_empty() => Ok((value, "")),
        None => Err(format!("unexpected {after:?} after the JSON value")),
    }
}

/// Sets `value` at `path`, creating maps and lists (padded with nulls) on the way.
fn assign(target: &mut Value, path: &[Step], value: Value) -> Result<(), String> {
    let Some((first, rest)) = path.split_first() else {
        *target = value;
        return Ok(());
    };
    let slot = match first {
        Step::Key(key) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            let Value::Object(map) = target else {
                unreachable!("made an object above")
            };
            map.entry(key.clone()).or_insert(Value::Null)
        }
        Step::Index(index) => {
            if !target.is_array() {
                *target = Value::Array(Vec::new());
            }
            let Value::Array(items) = target else {
                unreachable!("made a list above")
            };
            if items.len() <= *index {
                items.resize(*index + 1, Value::Null);
            }
            &mut items[*index]
        }
    };
    assign(slot, rest, value)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn set(arguments: &[(&str, SetKind)]) -> Value {
        let mut values = json!({});
        for (argument, kind) in arguments {
            apply(&mut values, argument, *kind).expect("parses");
        }
        values
    }

    #[test]
    fn set_types_values_like_helm() {
        let cases = [
            ("a=true", json!({"a": true})),
            ("a=FALSE", json!({"a": false})),
            ("a=null", json!({"a": null})),
            ("a=0", json!({"a": 0})),
            ("a=007", json!({"a": "007"})),
            ("a=42", json!({"a": 42})),
            ("a=1.5", json!({"a": "1.5"})),
            ("a=", json!({"a": ""})),
            ("a.b.c=x,d=y", json!({"a": {"b": {"c": "x"}}, "d": "y"})),
            ("a\\.b=x", json!({"a.b": "x"})),
            ("a=x\\,y", json!({"a": "x,y"})),
            ("a={1,two,true}", json!({"a": [1, "two", true]})),
            ("a={x,y},b=1", json!({"a": ["x", "y"], "b": 1})),
            ("a[1].b=x", json!({"a": [null, {"b": "x"}]})),
            ("a[0][1]=x", json!({"a": [[null, "x"]]})),
        ];
        for (argument, expected) in cases {
            assert_eq!(set(&[(argument, SetKind::Typed)]), expected, "{argument}");
        }
    }

    #[test]
    fn set_string_keeps_strings_and_set_json_parses_json() {
        assert_eq!(
            set(&[("a=true,b=42", SetKind::String)]),
            json!({"a": "true", "b": "42"})
        );
        assert_eq!(
            set(&[(r#"a={"x":[1,2]},b="s",c=3"#, SetKind::Json)]),
            json!({"a": {"x": [1, 2]}, "b": "s", "c": 3})
        );
    }

    #[test]
    fn later_arguments_override_earlier_ones() {
        assert_eq!(
            set(&[("a.b=1,a.c=2", SetKind::Typed), ("a.b=x", SetKind::String)]),
            json!({"a": {"b": "x", "c": 2}})
        );
    }

    #[test]
    fn bad_arguments_name_the_problem() {
        let cases = [
            ("novalue", SetKind::Typed, "has no '='"),
            ("=x", SetKind::Typed, "has an empty key"),
            ("a..b=x", SetKind::Typed, "has an empty key"),
            ("a[x]=1", SetKind::Typed, "is not a list index"),
            ("a={oops", SetKind::Json, "invalid JSON value"),
        ];
        for (argument, kind, reason) in cases {
            let error = apply(&mut json!({}), argument, kind).expect_err(argument);
            assert!(error.to_string().contains(reason), "{argument}: {error}");
        }
    }
}
