//! The SubjectAccessReview wire format (spec §1.3): parsing `authorization.k8s.io/v1` and
//! `v1beta1` requests (both selector forms) and writing the answer kube-apiserver expects.

use serde_json::{Value, json};

/// A selector requirement's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// `=` / `==`.
    Equals,
    /// `!=`.
    NotEquals,
    /// `in (…)`.
    In,
    /// `notin (…)`.
    NotIn,
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
}

/// One field or label selector requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// Field path or label key.
    pub key: String,
    /// Operator.
    pub operator: Operator,
    /// Values (one for `=`/`!=`, none for existence).
    pub values: Vec<String>,
}

/// `spec.resourceAttributes` of a review.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceAttributes {
    pub namespace: String,
    pub verb: String,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    /// Field selector requirements (empty when none was sent).
    pub fields: Vec<Requirement>,
    /// Label selector requirements (empty when none was sent).
    pub labels: Vec<Requirement>,
}

/// A parsed SubjectAccessReview request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    /// `apiVersion` to answer with.
    pub api_version: String,
    /// `kind` to answer with.
    pub kind: String,
    /// `spec.user`.
    pub user: String,
    /// `spec.groups` (`spec.group` in v1beta1).
    pub groups: Vec<String>,
    /// `spec.resourceAttributes`; `None` for non-resource requests.
    pub resource: Option<ResourceAttributes>,
}

/// The webhook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// `{"allowed": true}`.
    Allow,
    /// `{"allowed": false, "reason": …}`: the next authorizer decides.
    NoOpinion(String),
    /// `{"evaluationError": "<code> <message>"}` (also no opinion for kube-apiserver).
    Error(u16, String),
}

/// Parses a review body.
///
/// # Errors
/// `(400, message)` for a body that is not a SubjectAccessReview.
pub fn parse(body: &Value) -> Result<Review, (u16, String)> {
    let api_version = body["apiVersion"]
        .as_str()
        .unwrap_or("authorization.k8s.io/v1");
    let api_version = if api_version == "authorization.k8s.io/v1beta1" {
        api_version
    } else {
        "authorization.k8s.io/v1"
    };
    let spec = body
        .get("spec")
        .filter(|spec| spec.is_object())
        .ok_or((400, "spec is missing".to_owned()))?;
    let groups_key = if api_version.ends_with("v1beta1") {
        "group"
    } else {
        "groups"
    };
    let strings = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let text = |value: &Value, key: &str| value[key].as_str().unwrap_or_default().to_owned();
    let resource = spec
        .get("resourceAttributes")
        .filter(|r| r.is_object())
        .map(|r| ResourceAttributes {
            namespace: text(r, "namespace"),
            verb: text(r, "verb"),
            group: text(r, "group"),
            version: text(r, "version"),
            resource: text(r, "resource"),
            subresource: text(r, "subresource"),
            name: text(r, "name"),
            fields: selector(&r["fieldSelector"], false),
            labels: selector(&r["labelSelector"], true),
        });
    Ok(Review {
        api_version: api_version.to_owned(),
        kind: "SubjectAccessReview".to_owned(),
        user: text(spec, "user"),
        groups: strings(&spec[groups_key]),
        resource,
    })
}

/// The response body for `verdict` to a review of `api_version`.
pub fn response(api_version: &str, verdict: &Verdict) -> Value {
    let status = match verdict {
        Verdict::Allow => json!({"allowed": true}),
        Verdict::NoOpinion(reason) if reason.is_empty() => json!({"allowed": false}),
        Verdict::NoOpinion(reason) => json!({"allowed": false, "reason": reason}),
        Verdict::Error(code, message) => {
            json!({"allowed": false, "evaluationError": format!("{code} {message}")})
        }
    };
    json!({"apiVersion": api_version, "kind": "SubjectAccessReview", "status": status})
}

/// The requirements of a `fieldSelector`/`labelSelector` block: `rawSelector` parsed with the
/// selector syntax, else the structured `requirements` (field: `In`/`NotIn` with exactly one
/// value become `=`/`!=`, others dropped; label: `In`, `NotIn`, `Exists`, `DoesNotExist`).
fn selector(block: &Value, label: bool) -> Vec<Requirement> {
    if let Some(raw) = block["rawSelector"].as_str() {
        return parse_raw(raw).unwrap_or_default();
    }
    let Some(requirements) = block["requirements"].as_array() else {
        return Vec::new();
    };
    requirements
        .iter()
        .filter_map(|r| {
            let key = r["key"].as_str().filter(|k| !k.is_empty())?.to_owned();
            let values: Vec<String> = r["values"]
                .as_array()
                .map(|v| {
                    v.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            let operator = match (r["operator"].as_str()?, label, values.len()) {
                ("In", false, 1) => Operator::Equals,
                ("NotIn", false, 1) => Operator::NotEquals,
                ("In", true, n) if n > 0 => Operator::In,
                ("NotIn", true, n) if n > 0 => Operator::NotIn,
                ("Exists", true, 0) => Operator::Exists,
                ("DoesNotExist", true, 0) => Operator::DoesNotExist,
                _ => return None,
            };
            Some(Requirement {
                key,
                operator,
                values,
            })
        })
        .collect()
}

/// Parses the selector syntax (`a=b,c!=d,e in (x,y),!f,g`); `None` when it does not parse.
pub fn parse_raw(raw: &str) -> Option<Vec<Requirement>> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    for (i, c) in raw.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.checked_sub(1)?,
            ',' if depth == 0 => {
                parts.push(&raw[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&raw[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(parse_requirement)
        .collect()
}

fn parse_requirement(part: &str) -> Option<Requirement> {
    let requirement = |key: &str, operator, values: Vec<String>| {
        let key = key.trim();
        (!key.is_empty() && !key.contains(char::is_whitespace)).then(|| Requirement {
            key: key.to_owned(),
            operator,
            values,
        })
    };
    for (token, operator) in [(" notin ", Operator::NotIn), (" in ", Operator::In)] {
        if let Some((key, rest)) = part.split_once(token) {
            let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
            let values = inner
                .split(',')
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .collect();
            return requirement(key, operator, values);
        }
    }
    for (token, operator) in [
        ("!=", Operator::NotEquals),
        ("==", Operator::Equals),
        ("=", Operator::Equals),
    ] {
        if let Some((key, value)) = part.split_once(token) {
            return requirement(key, operator, vec![value.trim().to_owned()]);
        }
    }
    match part.strip_prefix('!') {
        Some(key) => requirement(key, Operator::DoesNotExist, Vec::new()),
        None => requirement(part, Operator::Exists, Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_reviews_parse_with_structured_selectors() {
        let body = json!({"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{
            "user":"gardener.cloud:system:seed:aws-eu1","groups":["gardener.cloud:system:seeds","system:authenticated"],
            "resourceAttributes":{"namespace":"garden-dev","verb":"list","group":"core.gardener.cloud","version":"v1beta1","resource":"shoots",
              "labelSelector":{"requirements":[{"key":"name.seed.gardener.cloud/aws-eu1","operator":"In","values":["true"]},
                                               {"key":"broken","operator":"In","values":[]}]},
              "fieldSelector":{"requirements":[{"key":"spec.seedName","operator":"In","values":["aws-eu1"]},
                                               {"key":"x","operator":"In","values":["a","b"]},
                                               {"key":"y","operator":"Exists"}]}}}});
        let review = parse(&body).expect("parses");
        assert_eq!(review.user, "gardener.cloud:system:seed:aws-eu1");
        assert_eq!(review.groups.len(), 2);
        let resource = review.resource.expect("resource");
        assert_eq!(resource.resource, "shoots");
        assert_eq!(
            resource.labels,
            vec![Requirement {
                key: "name.seed.gardener.cloud/aws-eu1".into(),
                operator: Operator::In,
                values: vec!["true".into()]
            }]
        );
        assert_eq!(
            resource.fields,
            vec![Requirement {
                key: "spec.seedName".into(),
                operator: Operator::Equals,
                values: vec!["aws-eu1".into()]
            }]
        );
    }

    #[test]
    fn v1beta1_uses_the_group_key_and_is_answered_in_kind() {
        let body = json!({"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview","spec":{
            "user":"u","group":["g"],"nonResourceAttributes":{"path":"/healthz","verb":"get"}}});
        let review = parse(&body).expect("parses");
        assert_eq!(review.groups, vec!["g".to_owned()]);
        assert!(review.resource.is_none());
        assert_eq!(
            response(&review.api_version, &Verdict::Allow),
            json!({"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview","status":{"allowed":true}})
        );
        assert!(parse(&json!({"kind": "SubjectAccessReview"})).is_err());
    }

    #[test]
    fn raw_selectors_parse_every_operator() {
        let parsed = parse_raw("a=b, c==d,e!=f,g in (x, y),h notin (z),!i,j").expect("parses");
        let ops: Vec<(&str, Operator, usize)> = parsed
            .iter()
            .map(|r| (r.key.as_str(), r.operator, r.values.len()))
            .collect();
        assert_eq!(
            ops,
            vec![
                ("a", Operator::Equals, 1),
                ("c", Operator::Equals, 1),
                ("e", Operator::NotEquals, 1),
                ("g", Operator::In, 2),
                ("h", Operator::NotIn, 1),
                ("i", Operator::DoesNotExist, 0),
                ("j", Operator::Exists, 0),
            ]
        );
        assert_eq!(parse_raw("a in (b"), None);
        assert_eq!(parse_raw(""), Some(vec![]));
    }

    #[test]
    fn answers_have_the_spec_shapes() {
        let v1 = "authorization.k8s.io/v1";
        assert_eq!(
            response(v1, &Verdict::NoOpinion(String::new()))["status"],
            json!({"allowed": false})
        );
        assert_eq!(
            response(v1, &Verdict::NoOpinion("no relationship found".into()))["status"],
            json!({"allowed": false, "reason": "no relationship found"})
        );
        assert_eq!(
            response(v1, &Verdict::Error(422, "request body is empty".into()))["status"]["evaluationError"],
            "422 request body is empty"
        );
    }
}
