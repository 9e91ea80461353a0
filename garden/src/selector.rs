//! Kubernetes label selectors given as JSON (`matchLabels`, `matchExpressions`), as they appear
//! in configuration (`controllers.project.quotas[].projectSelector`) and annotations (extension
//! ClusterRoles): matching against labels, and the query string for a list request.

use std::collections::BTreeMap;

use serde_json::Value;

fn strings(value: Option<&Value>) -> Vec<&str> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

fn expressions(selector: &Value) -> impl Iterator<Item = (&str, &str, Vec<&str>)> {
    selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|expression| {
            (
                expression
                    .get("key")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                expression
                    .get("operator")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                strings(expression.get("values")),
            )
        })
}

fn match_labels(selector: &Value) -> impl Iterator<Item = (&String, &str)> {
    selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(key, value)| (key, value.as_str().unwrap_or_default()))
}

/// Whether `selector` (absent or `{}` = everything) matches `labels`; an unknown operator
/// matches nothing.
pub fn matches(selector: Option<&Value>, labels: &BTreeMap<String, String>) -> bool {
    let Some(selector) = selector else {
        return true;
    };
    match_labels(selector).all(|(key, value)| labels.get(key).map(String::as_str) == Some(value))
        && expressions(selector).all(|(key, operator, values)| {
            let value = labels.get(key).map(String::as_str);
            match operator {
                "In" => value.is_some_and(|v| values.contains(&v)),
                "NotIn" => value.is_none_or(|v| !values.contains(&v)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        })
}

/// The `labelSelector` query of `selector` (`k=v,k in (a,b),!k`); `None` for an unknown
/// operator.
pub fn to_query(selector: &Value) -> Option<String> {
    let mut parts: Vec<String> = match_labels(selector)
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    for (key, operator, values) in expressions(selector) {
        parts.push(match operator {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            _ => return None,
        });
    }
    Some(parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn matching_and_queries() {
        let l = labels(&[("stage", "dev"), ("team", "a")]);
        let cases = [
            (json!({}), true, ""),
            (json!({"matchLabels": {"stage": "dev"}}), true, "stage=dev"),
            (
                json!({"matchLabels": {"stage": "prod"}}),
                false,
                "stage=prod",
            ),
            (
                json!({"matchExpressions": [{"key": "team", "operator": "In", "values": ["a", "b"]}]}),
                true,
                "team in (a,b)",
            ),
            (
                json!({"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["a"]}]}),
                false,
                "team notin (a)",
            ),
            (
                json!({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}),
                true,
                "!x",
            ),
            (
                json!({"matchExpressions": [{"key": "x", "operator": "Exists"}]}),
                false,
                "x",
            ),
        ];
        for (selector, expected, query) in cases {
            assert_eq!(matches(Some(&selector), &l), expected, "{selector}");
            assert_eq!(to_query(&selector).as_deref(), Some(query), "{selector}");
        }
        assert!(matches(None, &l));
        let bad = json!({"matchExpressions": [{"key": "x", "operator": "Near"}]});
        assert!(!matches(Some(&bad), &l));
        assert_eq!(to_query(&bad), None);
    }
}
