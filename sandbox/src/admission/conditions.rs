//! `matchConditions` of admission webhooks: CEL expressions over `request` (the AdmissionRequest),
//! `object` and `oldObject`, as kube-apiserver evaluates them. Any `false` skips the webhook; all
//! `true` call it; an error (and no `false`) is left to the webhook's failure policy.

use cel_interpreter::{Context, Program, Value as CelValue};
use serde_json::Value;

/// The result of a webhook's match conditions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Call the webhook.
    Call,
    /// Skip it.
    Skip,
    /// A condition failed to compile or evaluate (named, with the cause).
    Error(String),
}

/// Evaluates `webhook["matchConditions"]` for `request` (the review's `request` object).
pub fn evaluate(webhook: &Value, request: &Value) -> Verdict {
    let Some(conditions) = webhook["matchConditions"].as_array() else {
        return Verdict::Call;
    };
    let mut context = Context::default();
    for (name, value) in [
        ("request", request),
        ("object", &request["object"]),
        ("oldObject", &request["oldObject"]),
    ] {
        if let Err(error) = context.add_variable(name, value.clone()) {
            return Verdict::Error(format!("variable {name}: {error}"));
        }
    }
    let mut error = None;
    for condition in conditions {
        let name = condition["name"].as_str().unwrap_or_default();
        let expression = condition["expression"].as_str().unwrap_or_default();
        let result = Program::compile(expression)
            .map_err(|e| e.to_string())
            .and_then(|program| program.execute(&context).map_err(|e| e.to_string()));
        match result {
            Ok(CelValue::Bool(false)) => return Verdict::Skip,
            Ok(CelValue::Bool(true)) => {}
            Ok(other) => {
                error.get_or_insert(format!("matchCondition {name:?}: not a bool: {other:?}"));
            }
            Err(cause) => {
                error.get_or_insert(format!("matchCondition {name:?}: {cause}"));
            }
        }
    }
    error.map_or(Verdict::Call, Verdict::Error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conditions_select_by_user_groups_and_object() {
        let webhook = json!({"matchConditions": [
            {"name": "seeds", "expression": "'gardener.cloud:system:seeds' in request.userInfo.groups || request.userInfo.groups.exists(g, g.startsWith('system:serviceaccounts:seed-'))"},
        ]});
        let request = |groups: Value| json!({"userInfo": {"username": "u", "groups": groups}, "object": {"metadata": {"name": "x"}}, "oldObject": null});
        assert_eq!(
            evaluate(&webhook, &request(json!(["gardener.cloud:system:seeds"]))),
            Verdict::Call
        );
        assert_eq!(
            evaluate(
                &webhook,
                &request(json!([
                    "system:serviceaccounts",
                    "system:serviceaccounts:seed-a"
                ]))
            ),
            Verdict::Call
        );
        assert_eq!(
            evaluate(&webhook, &request(json!(["system:serviceaccounts:garden"]))),
            Verdict::Skip
        );
        assert_eq!(evaluate(&json!({}), &request(json!([]))), Verdict::Call);
        let by_object = json!({"matchConditions": [{"name": "named", "expression": "object.metadata.name == 'x'"}]});
        assert_eq!(evaluate(&by_object, &request(json!([]))), Verdict::Call);
        let broken = json!({"matchConditions": [{"name": "broken", "expression": "request.nope.deeper == 1"}]});
        assert!(matches!(
            evaluate(&broken, &request(json!([]))),
            Verdict::Error(_)
        ));
        let false_wins = json!({"matchConditions": [
            {"name": "broken", "expression": "request.nope.deeper == 1"},
            {"name": "no", "expression": "false"}]});
        assert_eq!(evaluate(&false_wins, &request(json!([]))), Verdict::Skip);
    }
}
