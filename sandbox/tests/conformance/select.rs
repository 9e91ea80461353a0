//! kconform's `${step.path}` substitution into requests and its tiny `pick` selector for
//! keeping part of an answer.

use super::*;

pub(super) fn lookup(vars: &HashMap<String, Value>, dotted: &str) -> Result<Value> {
    let (name, path) = dotted.split_once('.').unwrap_or((dotted, ""));
    let mut value = vars
        .get(name)
        .ok_or_else(|| format!("no step named {name} for ${{{dotted}}}"))?;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        value = match value {
            Value::Array(items) => items.get(part.parse::<usize>()?),
            other => other.get(part),
        }
        .ok_or_else(|| format!("${{{dotted}}}: no {part}"))?;
    }
    Ok(value.clone())
}

/// Replaces `${step.path}`: a whole-string reference keeps the value's type, embedded ones are
/// formatted like Python's `str()`.
pub(super) fn subst(value: &Value, vars: &HashMap<String, Value>) -> Result<Value> {
    static REFERENCE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let reference = REFERENCE.get_or_init(|| Regex::new(r"\$\{([^}]+)\}").expect("valid regex"));
    Ok(match value {
        Value::String(s) => {
            if let Some(m) = reference.captures(s)
                && m.get(0)
                    .is_some_and(|whole| whole.as_str().len() == s.len())
            {
                return lookup(vars, &m[1]);
            }
            let mut out = String::new();
            let mut last = 0;
            for m in reference.captures_iter(s) {
                let whole = m.get(0).ok_or("regex match")?;
                out.push_str(&s[last..whole.start()]);
                match lookup(vars, &m[1])? {
                    Value::String(text) => out.push_str(&text),
                    other => out.push_str(&other.to_string()),
                }
                last = whole.end();
            }
            out.push_str(&s[last..]);
            Value::String(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| subst(i, vars))
                .collect::<Result<_>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), subst(v, vars)?)))
                .collect::<Result<_>>()?,
        ),
        other => other.clone(),
    })
}

/// kconform's tiny selector: `resources[name=leases]`, `items[].metadata.name`, `status.conditions`.
pub(super) fn pick(body: &Value, spec: &str) -> Value {
    static PART: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    static FILTER: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    static ALL: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let part_re = PART.get_or_init(|| Regex::new(r"(?:[^.\[]|\[[^\]]*\])+").expect("valid regex"));
    let filter_re =
        FILTER.get_or_init(|| Regex::new(r"^(\w+)\[(\w+)=([^\]]+)\]$").expect("valid regex"));
    let all_re = ALL.get_or_init(|| Regex::new(r"^(\w+)\[\]$").expect("valid regex"));
    let mut current = body.clone();
    for part in part_re.find_iter(spec).map(|m| m.as_str()) {
        if let Some(m) = filter_re.captures(part) {
            let items = current[&m[1]].as_array().cloned().unwrap_or_default();
            current = Value::Array(
                items
                    .into_iter()
                    .filter(|item| python_str(&item[&m[2]]) == m[3])
                    .collect(),
            );
            continue;
        }
        if let Some(m) = all_re.captures(part) {
            current = match &current[&m[1]] {
                value if truthy(value) => value.clone(),
                _ => json!([]),
            };
            continue;
        }
        current = match current {
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| item.get(part).cloned().unwrap_or(Value::Null))
                    .collect(),
            ),
            Value::Object(map) => map.get(part).cloned().unwrap_or(Value::Null),
            _ => Value::Null,
        };
    }
    current
}

/// Python's `str()` of a JSON scalar.
pub(super) fn python_str(value: &Value) -> String {
    match value {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_filters_lists_and_maps_fields() {
        let body = json!({"resources": [{"name": "leases", "kind": "Lease"}, {"name": "events"}],
                          "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]});
        assert_eq!(
            pick(&body, "resources[name=leases]"),
            json!([{"name": "leases", "kind": "Lease"}])
        );
        assert_eq!(pick(&body, "items[].metadata.name"), json!(["a", "b"]));
        assert_eq!(pick(&body, "missing.x"), Value::Null);
    }

    #[test]
    fn subst_keeps_types_of_whole_references_and_formats_embedded_ones() {
        let vars = HashMap::from([(
            "csr".to_owned(),
            json!({"spec": {"groups": ["a"], "n": 3}, "metadata": {"name": "x"}}),
        )]);
        assert_eq!(
            subst(&json!("${csr.spec.groups}"), &vars).unwrap(),
            json!(["a"])
        );
        assert_eq!(
            subst(&json!("/p/${csr.metadata.name}/${csr.spec.n}"), &vars).unwrap(),
            json!("/p/x/3")
        );
        assert!(subst(&json!("${nope.x}"), &vars).is_err());
    }
}
