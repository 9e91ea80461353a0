//! `controllers.networkPolicy.additionalNamespaceSelectors`: label selectors of further namespaces
//! that get every network policy (appended to each policy's built-in namespace selectors, as in
//! gardenlet); decoded and validated here so that the agent gets typed selectors.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::gardenlet::ignored::NetworkPolicyController;
use crate::validate::Checker;

const PATH: &str = "controllers.networkPolicy.additionalNamespaceSelectors";

impl NetworkPolicyController {
    /// The additional namespace selectors that decode as label selectors (all of them in a
    /// validated configuration).
    pub fn namespace_selectors(&self) -> Vec<LabelSelector> {
        self.additional_namespace_selectors
            .iter()
            .flatten()
            .filter_map(|value| serde_json::from_value(value.clone()).ok())
            .collect()
    }
}

/// Validates the selectors: each decodes as a label selector whose expressions use `In`/`NotIn`
/// with values or `Exists`/`DoesNotExist` without.
pub(crate) fn validate_network_policy(
    checker: &mut Checker,
    policy: Option<&NetworkPolicyController>,
) {
    let Some(selectors) = policy.and_then(|p| p.additional_namespace_selectors.as_ref()) else {
        return;
    };
    for (index, value) in selectors.iter().enumerate() {
        let path = format!("{PATH}[{index}]");
        let selector: LabelSelector = match serde_json::from_value(value.clone()) {
            Ok(selector) => selector,
            Err(error) => {
                checker.report(path, format!("not a label selector: {error}"));
                continue;
            }
        };
        for (position, expression) in selector.match_expressions.iter().flatten().enumerate() {
            let values = expression.values.as_deref().unwrap_or_default();
            let problem = match expression.operator.as_str() {
                "In" | "NotIn" if values.is_empty() => Some("values must be non-empty"),
                "Exists" | "DoesNotExist" if !values.is_empty() => Some("values must be empty"),
                "In" | "NotIn" | "Exists" | "DoesNotExist" => None,
                _ => Some("operator must be In, NotIn, Exists or DoesNotExist"),
            };
            if let Some(problem) = problem {
                checker.report(format!("{path}.matchExpressions[{position}]"), problem);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn problems(selectors: serde_json::Value) -> Vec<String> {
        let policy = NetworkPolicyController {
            additional_namespace_selectors: serde_json::from_value(selectors).ok(),
            ..NetworkPolicyController::default()
        };
        let mut checker = Checker::default();
        validate_network_policy(&mut checker, Some(&policy));
        checker
            .into_problems()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn selectors_must_be_label_selectors_with_valid_expressions() {
        assert!(
            problems(json!([{"matchLabels": {"team": "a"}},
                            {"matchExpressions": [{"key": "k", "operator": "Exists"}]}]))
            .is_empty()
        );
        let found = problems(json!([
            {"matchLabels": "nope"},
            {"matchExpressions": [{"key": "k", "operator": "In"},
                                  {"key": "k", "operator": "Exists", "values": ["x"]},
                                  {"key": "k", "operator": "Near", "values": ["x"]}]},
        ]));
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(found[0].contains(&format!("{PATH}[0]")), "{found:?}");
        assert!(
            found[1].contains(&format!("{PATH}[1].matchExpressions[0]")),
            "{found:?}"
        );
        assert!(found[3].contains("operator must be"), "{found:?}");
    }

    #[test]
    fn namespace_selectors_are_typed() {
        let policy = NetworkPolicyController {
            additional_namespace_selectors: Some(vec![json!({"matchLabels": {"team": "a"}})]),
            ..NetworkPolicyController::default()
        };
        let selectors = policy.namespace_selectors();
        assert_eq!(selectors.len(), 1);
        assert_eq!(
            selectors[0]
                .match_labels
                .as_ref()
                .and_then(|l| l.get("team")),
            Some(&"a".to_owned())
        );
    }
}
