//! Typed decoding of a parsed document that reports every unknown field and every value of the
//! wrong type by field path, in document order.
//!
//! Two wrappers do the path bookkeeping: `serde_ignored` sees every key a type does not declare (so all
//! unknown fields are found in one pass, not just the first as `deny_unknown_fields` would), and
//! `serde_path_to_error` names where a value of the wrong type sits. A bad value is reported, taken
//! out of the document (so that its default applies) and decoding runs again, until it succeeds:
//! one bad value never hides the problems after it. Types decoded here must not use
//! `#[serde(flatten)]`: flattening swallows unknown keys before they can be reported.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::Problem;

/// Decodes `value` into `T`. Returns the decoded value (with the defaults in place of bad values)
/// when there is one, and every problem found, in document order.
pub(crate) fn decode<T: DeserializeOwned>(value: &Value) -> (Option<T>, Vec<Problem>) {
    let order = document_order(value);
    let mut document = value.clone();
    let mut bad_values: Vec<Problem> = Vec::new();
    // Paths taken out so far: an error at one of them, or above one, comes from the removal.
    let mut removed: Vec<String> = Vec::new();
    // Unknown fields of every pass: those inside a value taken out stay reported.
    let mut unknown = Vec::new();
    loop {
        let mut record = |path: serde_ignored::Path<'_>| {
            let problem = Problem::new(ignored_path(&path), "unknown field");
            if !unknown.contains(&problem) {
                unknown.push(problem);
            }
        };
        let result: Result<T, _> = serde_path_to_error::deserialize(
            serde_ignored::Deserializer::new(&document, &mut record),
        );
        let error = match result {
            Ok(decoded) => {
                let problems = in_document_order(unknown, bad_values, &order);
                return (Some(decoded), problems);
            }
            Err(error) => error,
        };
        let path = error_path(error.path());
        let caused_by_removal = removed
            .iter()
            .any(|gone| gone == &path || is_below(gone, &path));
        if !caused_by_removal {
            let problem = humanize(&path, &error.inner().to_string());
            bad_values.push(problem);
        }
        // Take the value out, or the nearest enclosing one that can go.
        let mut target = path.as_str();
        loop {
            if target.is_empty() {
                // Nothing left to take out: report what was found.
                return (None, in_document_order(unknown, bad_values, &order));
            }
            if remove(&mut document, target) {
                break;
            }
            target = parent(target);
        }
        removed.push(target.to_owned());
    }
}

/// `a.b` for `a.b.c` and `a.b[0]`; empty for a top-level field.
fn parent(path: &str) -> &str {
    path.rfind(['.', '[']).map_or("", |cut| &path[..cut])
}

/// Whether `path` lies below `ancestor` (`a.b[0]` below `a` and `a.b`).
fn is_below(path: &str, ancestor: &str) -> bool {
    ancestor.is_empty()
        || path
            .strip_prefix(ancestor)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// Removes the value at `path` (a map entry, or a list item replaced by null); false when there
/// is nothing at `path`.
fn remove(document: &mut Value, path: &str) -> bool {
    let segments = segments(path);
    let Some((last, parents)) = segments.split_last() else {
        return false;
    };
    let mut current = document;
    for segment in parents {
        let next = match segment {
            Segment::Key(key) => current.get_mut(key.as_str()),
            Segment::Index(index) => current.get_mut(*index),
        };
        match next {
            Some(next) => current = next,
            None => return false,
        }
    }
    match (last, current) {
        (Segment::Key(key), Value::Object(map)) => map.shift_remove(key.as_str()).is_some(),
        (Segment::Index(index), Value::Array(items)) if *index < items.len() => {
            if items[*index].is_null() {
                // Null is not accepted either: take the whole list out next time.
                return false;
            }
            items[*index] = Value::Null;
            true
        }
        _ => false,
    }
}

/// One step of a field path.
#[derive(Debug, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// `a.b[2].c` → `a`, `b`, `2`, `c`.
fn segments(path: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let mut rest = part;
        if let Some(open) = rest.find('[') {
            if open > 0 {
                out.push(Segment::Key(rest[..open].to_owned()));
            }
            rest = &rest[open..];
            while let Some(inner) = rest.strip_prefix('[') {
                let Some(close) = inner.find(']') else { break };
                if let Ok(index) = inner[..close].parse() {
                    out.push(Segment::Index(index));
                }
                rest = &inner[close + 1..];
            }
        } else if !rest.is_empty() {
            out.push(Segment::Key(rest.to_owned()));
        }
    }
    out
}

/// Every path of `value` in document order.
fn document_order(value: &Value) -> Vec<String> {
    fn walk(value: &Value, path: String, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    let child_path = join_key(path.clone(), key);
                    out.push(child_path.clone());
                    walk(child, child_path, out);
                }
            }
            Value::Array(items) => {
                for (index, child) in items.iter().enumerate() {
                    let child_path = format!("{path}[{index}]");
                    out.push(child_path.clone());
                    walk(child, child_path, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, String::new(), &mut out);
    out
}

/// Unknown fields and bad values merged and sorted by where they are in the document (a problem
/// at a path the document does not have, such as a missing field, goes where its parent is).
fn in_document_order(
    unknown: Vec<Problem>,
    bad_values: Vec<Problem>,
    order: &[String],
) -> Vec<Problem> {
    let position = |path: &str| {
        let mut probe = path;
        loop {
            if let Some(index) = order.iter().position(|known| known == probe) {
                return index;
            }
            match probe.rfind(['.', '[']) {
                Some(cut) => probe = &probe[..cut],
                None => return usize::MAX,
            }
        }
    };
    let mut problems: Vec<Problem> = unknown.into_iter().chain(bad_values).collect();
    problems.sort_by_key(|problem| position(&problem.path));
    problems.dedup();
    problems
}

/// A serde message in the words of the file rather than of Rust: `expected u16` becomes the
/// range of the number, `missing field `x`` becomes `x: required`, backticks go.
fn humanize(path: &str, message: &str) -> Problem {
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        return Problem::new(join_key(path.to_owned(), field), "required");
    }
    let message = message.replace('`', "");
    let message = message
        .replace("unknown variant ", "unknown value ")
        .replace("invalid type: floating point ", "invalid type: number ")
        .replace("invalid type: integer ", "invalid type: number ");
    let Some((head, expected)) = message.rsplit_once(", expected ") else {
        return Problem::new(path, message);
    };
    let Some(words) = expected_words(expected) else {
        return Problem::new(path, message);
    };
    let out_of_range = head
        .strip_prefix("invalid value: integer ")
        .or_else(|| head.strip_prefix("invalid value: number "));
    let message = match out_of_range {
        Some(number) => format!("{number} is out of range, expected {words}"),
        None => format!("{head}, expected {words}"),
    };
    Problem::new(path, message)
}

/// Words for the Rust type names serde puts after `expected`.
fn expected_words(expected: &str) -> Option<String> {
    let words = match expected {
        "f32" | "f64" => "a number",
        "u8" => "an integer from 0 to 255",
        "u16" => "an integer from 0 to 65535",
        "u32" => "an integer from 0 to 4294967295",
        "u64" | "usize" => "a non-negative integer",
        "i8" => "an integer from -128 to 127",
        "i16" => "an integer from -32768 to 32767",
        "i32" => "an integer from -2147483648 to 2147483647",
        "i64" | "isize" => "an integer",
        "a borrowed string" => "a string",
        _ if expected.starts_with("struct ") => "a mapping of fields",
        _ if expected.starts_with("enum ") => "one of its names",
        _ => return None,
    };
    Some(words.to_owned())
}

fn ignored_path(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", ignored_path(parent)),
        Path::Map { parent, key } => join_key(ignored_path(parent), key),
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => ignored_path(parent),
    }
}

fn error_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    path.iter()
        .fold(String::new(), |out, segment| match segment {
            Segment::Seq { index } => format!("{out}[{index}]"),
            Segment::Map { key } => join_key(out, key),
            Segment::Enum { variant } => join_key(out, variant),
            Segment::Unknown => join_key(out, "?"),
        })
}

fn join_key(parent: String, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;
    use crate::duration::Duration;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Outer {
        inner: Option<Inner>,
        #[serde(default)]
        items: Vec<Inner>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Inner {
        #[serde(default)]
        sync_period: Option<Duration>,
    }

    #[test]
    fn decode_reports_every_unknown_field_with_its_path() {
        let value = json!({
            "inner": {"syncPeriod": "1m", "typo": 1},
            "items": [{}, {"other": true}],
            "extra": {"nested": 1},
        });
        let (decoded, unknown) = decode::<Outer>(&value);
        let decoded = decoded.unwrap();
        assert_eq!(
            decoded.inner.unwrap().sync_period,
            Some(Duration::from_secs(60))
        );
        assert_eq!(decoded.items.len(), 2);
        let paths: Vec<_> = unknown.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            paths,
            [
                "inner.typo: unknown field",
                "items[1].other: unknown field",
                "extra: unknown field"
            ]
        );
    }

    #[test]
    fn decode_names_the_path_of_a_bad_value() {
        let value = json!({"items": [{}, {"syncPeriod": "5x"}]});
        let (decoded, problems) = decode::<Outer>(&value);
        assert!(
            decoded.is_some(),
            "the bad value is replaced by its default"
        );
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].path, "items[1].syncPeriod");
        assert!(
            problems[0].message.contains("unknown unit \"x\""),
            "{}",
            problems[0].message
        );
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)] // decoded for the problems only
    struct Numbers {
        #[serde(default)]
        qps: f32,
        #[serde(default)]
        port: u16,
        #[serde(default)]
        inner: Option<Required>,
        #[serde(default)]
        list: Vec<Required>,
        #[serde(default)]
        level: Option<Level>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)] // decoded for the problems only
    struct Required {
        name: String,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Level {
        Info,
        Error,
    }

    fn messages(value: &Value) -> Vec<String> {
        decode::<Numbers>(value)
            .1
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn every_bad_value_is_reported_in_document_order_with_unknown_fields() {
        let value = json!({
            "qps": "fast",
            "typo": 1,
            "port": 99999,
            "inner": {"name": 5},
            "list": [{"name": "a"}, {"nam": "b"}],
            "level": "warn",
        });
        assert_eq!(
            messages(&value),
            [
                "qps: invalid type: string \"fast\", expected a number",
                "typo: unknown field",
                "port: 99999 is out of range, expected an integer from 0 to 65535",
                "inner.name: invalid type: number 5, expected a string",
                "list[1].name: required",
                "list[1].nam: unknown field",
                "level: unknown value warn, expected info or error",
            ]
        );
    }

    #[test]
    fn segments_split_keys_and_indexes() {
        assert_eq!(
            segments("a.b[2][0].c"),
            [
                Segment::Key("a".into()),
                Segment::Key("b".into()),
                Segment::Index(2),
                Segment::Index(0),
                Segment::Key("c".into()),
            ]
        );
        assert!(segments("").is_empty());
    }
}
