//! Which admission webhooks a request goes to: a webhook's rules (operations, groups, versions,
//! resources with subresources, scope) and its namespace and object label selectors, as
//! kube-apiserver's webhook admission matches them.

use serde_json::Value;

use crate::object::string_list;
use crate::selectors::LabelSelector;

/// What the matching looks at.
pub struct Subject<'a> {
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'a str,
    /// API group.
    pub group: &'a str,
    /// API version.
    pub version: &'a str,
    /// Plural resource.
    pub resource: &'a str,
    /// Subresource ("" for none).
    pub subresource: &'a str,
    /// Whether the resource is namespaced.
    pub namespaced: bool,
    /// Labels of the request's namespace (the namespace itself for Namespace objects).
    pub namespace_labels: Option<&'a serde_json::Map<String, Value>>,
    /// The new object's labels (outer `None`: no new object, as for DELETE).
    pub object_labels: Option<Option<&'a serde_json::Map<String, Value>>>,
    /// The old object's labels (outer `None`: no old object, as for CREATE).
    pub old_labels: Option<Option<&'a serde_json::Map<String, Value>>>,
}

/// Whether `webhook` (one entry of a webhook configuration's `webhooks`) applies.
pub fn matches(webhook: &Value, subject: &Subject<'_>) -> bool {
    let rules_match = webhook["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|rule| rule_matches(rule, subject));
    if !rules_match {
        return false;
    }
    let namespace_ok = if subject.namespaced || subject.resource == "namespaces" {
        selector_matches(&webhook["namespaceSelector"], subject.namespace_labels)
    } else {
        true
    };
    // Either the new or the old object may match; an absent one does not count.
    let object_ok = [subject.object_labels, subject.old_labels]
        .into_iter()
        .flatten()
        .any(|labels| selector_matches(&webhook["objectSelector"], labels));
    namespace_ok && object_ok
}

fn listed(values: &Value, wanted: &str) -> bool {
    string_list(Some(values))
        .iter()
        .any(|v| v == "*" || v == wanted)
}

fn rule_matches(rule: &Value, subject: &Subject<'_>) -> bool {
    let scope = rule["scope"].as_str().unwrap_or("*");
    let scope_ok = match scope {
        "Cluster" => !subject.namespaced,
        "Namespaced" => subject.namespaced,
        _ => true,
    };
    scope_ok
        && listed(&rule["operations"], subject.operation)
        && listed(&rule["apiGroups"], subject.group)
        && listed(&rule["apiVersions"], subject.version)
        && string_list(rule.get("resources"))
            .iter()
            .any(|r| resource_matches(r, subject.resource, subject.subresource))
}

/// `pods`, `pods/status`, `pods/*`, `*`, `*/status`, `*/*`.
fn resource_matches(pattern: &str, resource: &str, subresource: &str) -> bool {
    let (want_resource, want_sub) = pattern.split_once('/').unwrap_or((pattern, ""));
    let resource_ok = want_resource == "*" || want_resource == resource;
    let sub_ok = match want_sub {
        "*" => true,
        sub => sub == subresource,
    };
    resource_ok && sub_ok
}

/// A metav1.LabelSelector (matchLabels and matchExpressions) against labels; an absent or empty
/// selector matches everything.
fn selector_matches(selector: &Value, labels: Option<&serde_json::Map<String, Value>>) -> bool {
    let mut terms: Vec<String> = Vec::new();
    for (key, value) in selector["matchLabels"].as_object().into_iter().flatten() {
        terms.push(format!("{key}={}", value.as_str().unwrap_or_default()));
    }
    for expression in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = expression["key"].as_str().unwrap_or_default();
        let values = string_list(expression.get("values")).join(",");
        terms.push(match expression["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({values})"),
            "NotIn" => format!("{key} notin ({values})"),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            _ => return false,
        });
    }
    match LabelSelector::parse(&terms.join(",")) {
        Ok(parsed) => parsed.matches(labels),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn subject<'a>(
        labels: Option<&'a serde_json::Map<String, Value>>,
        resource: &'a str,
        subresource: &'a str,
    ) -> Subject<'a> {
        Subject {
            operation: "CREATE",
            group: "",
            version: "v1",
            resource,
            subresource,
            namespaced: true,
            namespace_labels: labels,
            object_labels: Some(None),
            old_labels: None,
        }
    }

    #[test]
    fn rules_match_operations_resources_and_subresources() {
        let webhook = |resources: Value, operations: Value| json!({"rules": [{"operations": operations, "apiGroups": [""], "apiVersions": ["v1"], "resources": resources}]});
        for (resources, operations, resource, subresource, want) in [
            (
                json!(["configmaps"]),
                json!(["CREATE"]),
                "configmaps",
                "",
                true,
            ),
            (
                json!(["configmaps"]),
                json!(["UPDATE"]),
                "configmaps",
                "",
                false,
            ),
            (json!(["*"]), json!(["*"]), "secrets", "", true),
            (json!(["*"]), json!(["*"]), "pods", "status", false),
            (json!(["pods/*"]), json!(["*"]), "pods", "status", true),
            (json!(["*/status"]), json!(["*"]), "pods", "status", true),
            (json!(["pods/status"]), json!(["*"]), "pods", "", false),
        ] {
            assert_eq!(
                matches(
                    &webhook(resources.clone(), operations),
                    &subject(None, resource, subresource)
                ),
                want,
                "{resources} {resource}/{subresource}"
            );
        }
    }

    #[test]
    fn object_selectors_match_the_new_or_the_old_object_when_present() {
        let webhook = json!({"rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}],
            "objectSelector": {"matchLabels": {"team": "a"}}});
        let a = json!({"team": "a"});
        let b = json!({"team": "b"});
        for (new, old, want) in [
            (Some(a.as_object()), None, true),
            (Some(b.as_object()), None, false),
            (Some(b.as_object()), Some(a.as_object()), true),
            (None, Some(a.as_object()), true),
            (None, Some(None), false),
        ] {
            let mut subject = subject(None, "configmaps", "");
            subject.object_labels = new;
            subject.old_labels = old;
            assert_eq!(matches(&webhook, &subject), want, "{new:?} {old:?}");
        }
    }

    #[test]
    fn namespace_selectors_use_the_namespace_labels() {
        let labels = json!({"env": "prod"});
        let labels = labels.as_object();
        let webhook = |selector: Value| {
            json!({"rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}],
                "namespaceSelector": selector})
        };
        for (selector, want) in [
            (json!({}), true),
            (json!({"matchLabels": {"env": "prod"}}), true),
            (json!({"matchLabels": {"env": "dev"}}), false),
            (
                json!({"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev", "prod"]}]}),
                true,
            ),
            (
                json!({"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]}),
                false,
            ),
            (
                json!({"matchExpressions": [{"key": "team", "operator": "Exists"}]}),
                false,
            ),
        ] {
            assert_eq!(
                matches(
                    &webhook(selector.clone()),
                    &subject(labels, "configmaps", "")
                ),
                want,
                "{selector}"
            );
        }
    }
}
