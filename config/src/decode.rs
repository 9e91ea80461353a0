//! Typed decoding of a parsed document that reports every unknown field and the first type error by field path.
//!
//! Two wrappers do the path bookkeeping: `serde_ignored` sees every key a type does not declare (so all
//! unknown fields are found in one pass, not just the first as `deny_unknown_fields` would), and
//! `serde_path_to_error` names where a value of the wrong type sits. Types decoded here must not use
//! `#[serde(flatten)]`: flattening swallows unknown keys before they can be reported.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::Problem;

/// Decodes `value` into `T`; on success also returns the problems for unknown fields, in document order.
///
/// # Errors
///
/// Returns all unknown-field problems seen so far plus the type error, when a value cannot be decoded.
pub(crate) fn decode<T: DeserializeOwned>(
    value: &Value,
) -> Result<(T, Vec<Problem>), Vec<Problem>> {
    let mut unknown = Vec::new();
    let mut record = |path: serde_ignored::Path<'_>| {
        unknown.push(Problem::new(ignored_path(&path), "unknown field"));
    };
    let result: Result<T, _> =
        serde_path_to_error::deserialize(serde_ignored::Deserializer::new(value, &mut record));
    match result {
        Ok(decoded) => Ok((decoded, unknown)),
        Err(error) => {
            let problem = Problem::new(error_path(error.path()), error.inner().to_string());
            unknown.push(problem);
            Err(unknown)
        }
    }
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
        let (decoded, unknown) = decode::<Outer>(&value).unwrap();
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
        let problems = decode::<Outer>(&value).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].path, "items[1].syncPeriod");
        assert!(
            problems[0].message.contains("unknown unit \"x\""),
            "{}",
            problems[0].message
        );
    }
}
