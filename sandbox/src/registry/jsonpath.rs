//! The JSONPath subset CRD printer columns use (`.spec.replicas`, `.items[0].name`,
//! `.status.conditions[?(@.type=="Ready")].status`, `[*]`), evaluated like client-go's
//! jsonpath with missing keys allowed: the first match, or none.

use serde_json::Value;

/// One step of a path.
#[derive(Clone, Debug, PartialEq)]
enum Step {
    /// `.name` or `['name']`.
    Field(String),
    /// `[n]` (negative counts from the end).
    Index(i64),
    /// `[*]` or `.*`.
    All,
    /// `[?(@.a.b=="x")]` / `!=`: array items whose field (path) compares to the value.
    Filter {
        path: Vec<String>,
        equal: bool,
        value: Value,
    },
}

/// A parsed path.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonPath(Vec<Step>);

impl JsonPath {
    /// Parses `.a.b[0]` (optionally wrapped in `{}`); `None` when it is not in the subset.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let text = text
            .strip_prefix('{')
            .and_then(|t| t.strip_suffix('}'))
            .unwrap_or(text);
        let mut rest = text.strip_prefix('$').unwrap_or(text);
        let mut steps = Vec::new();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('.') {
                let end = field_end(after);
                let name = &after[..end];
                if name.is_empty() {
                    return None;
                }
                steps.push(if name == "*" {
                    Step::All
                } else {
                    // `\.` is a literal dot, as in `.metadata.labels.app\.kubernetes\.io/name`.
                    Step::Field(name.replace("\\.", "."))
                });
                rest = &after[end..];
            } else if let Some(after) = rest.strip_prefix('[') {
                let end = bracket_end(after)?;
                steps.push(bracket_step(&after[..end])?);
                rest = &after[end + 1..];
            } else {
                return None;
            }
        }
        Some(JsonPath(steps))
    }

    /// The first value the path selects in `object`.
    pub fn first<'a>(&self, object: &'a Value) -> Option<&'a Value> {
        let mut current = vec![object];
        for step in &self.0 {
            let mut next = Vec::new();
            for value in current {
                select(step, value, &mut next);
            }
            if next.is_empty() {
                return None;
            }
            current = next;
        }
        current.into_iter().next()
    }
}

/// Where the `]` closing a bracket is (quotes and parentheses skipped).
fn bracket_end(text: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ']') if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// End of a dotted field name: the next `.` or `[` that is not escaped with `\`.
fn field_end(text: &str) -> usize {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '.' | '[' if !escaped => return i,
            _ => escaped = false,
        }
    }
    text.len()
}

fn bracket_step(inner: &str) -> Option<Step> {
    let inner = inner.trim();
    if inner == "*" {
        return Some(Step::All);
    }
    if let Some(quoted) = unquote(inner) {
        return Some(Step::Field(quoted));
    }
    if let Ok(index) = inner.parse::<i64>() {
        return Some(Step::Index(index));
    }
    let filter = inner.strip_prefix("?(")?.strip_suffix(')')?.trim();
    let (left, equal, right) = if let Some((l, r)) = filter.split_once("!=") {
        (l, false, r)
    } else {
        let (l, r) = filter.split_once("==")?;
        (l, true, r)
    };
    let path: Vec<String> = left
        .trim()
        .strip_prefix("@.")?
        .split('.')
        .map(str::to_string)
        .collect();
    let right = right.trim();
    let value = match unquote(right) {
        Some(text) => Value::String(text),
        None => serde_json::from_str(right).ok()?,
    };
    Some(Step::Filter { path, equal, value })
}

fn unquote(text: &str) -> Option<String> {
    let quoted = (text.starts_with('"') && text.ends_with('"'))
        || (text.starts_with('\'') && text.ends_with('\''));
    (quoted && text.len() >= 2).then(|| text[1..text.len() - 1].to_string())
}

fn select<'a>(step: &Step, value: &'a Value, out: &mut Vec<&'a Value>) {
    match (step, value) {
        (Step::Field(name), Value::Object(map)) => out.extend(map.get(name)),
        (Step::Index(index), Value::Array(items)) => {
            let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
            let at = if *index < 0 { len + index } else { *index };
            out.extend(usize::try_from(at).ok().and_then(|i| items.get(i)));
        }
        (Step::All, Value::Array(items)) => out.extend(items),
        (Step::All, Value::Object(map)) => out.extend(map.values()),
        (Step::Filter { path, equal, value }, Value::Array(items)) => {
            out.extend(items.iter().filter(|item| {
                let mut field = Some(*item);
                for part in path {
                    field = field.and_then(|f| f.get(part));
                }
                field.is_some_and(|f| (f == value) == *equal)
            }));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_select_the_first_match_or_none() {
        let object = json!({
            "spec": {"replicas": 3, "names": ["a", "b"]},
            "status": {"conditions": [
                {"type": "Installed", "status": "False"},
                {"type": "Ready", "status": "True", "reason": "Up"}]},
            "metadata": {"labels": {"x.io/role": "seed"}},
        });
        for (path, want) in [
            (".spec.replicas", Some(json!(3))),
            (".spec.names[1]", Some(json!("b"))),
            (".spec.names[-1]", Some(json!("b"))),
            (".spec.names[*]", Some(json!("a"))),
            (
                ".status.conditions[?(@.type==\"Ready\")].status",
                Some(json!("True")),
            ),
            (
                ".status.conditions[?(@.type=='Ready')].reason",
                Some(json!("Up")),
            ),
            (
                ".status.conditions[?(@.type!=\"Ready\")].type",
                Some(json!("Installed")),
            ),
            (".metadata.labels['x.io/role']", Some(json!("seed"))),
            (".metadata.labels.x\\.io/role", Some(json!("seed"))),
            ("{.spec.replicas}", Some(json!(3))),
            (".spec.missing", None),
            (".status.conditions[?(@.type==\"Gone\")].status", None),
            (".spec.names[5]", None),
        ] {
            let parsed = JsonPath::parse(path).unwrap_or_else(|| panic!("{path} parses"));
            assert_eq!(parsed.first(&object).cloned(), want, "{path}");
        }
    }

    #[test]
    fn unsupported_syntax_does_not_parse() {
        for path in ["spec", ".a[", ".a[?(@.b>1)]", ".."] {
            assert!(JsonPath::parse(path).is_none(), "{path}");
        }
    }
}
