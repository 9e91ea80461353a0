//! The pure status-label decision: a Shoot's last operation, last errors and conditions → one of
//! `healthy`, `progressing`, `unknown`, `unhealthy` (the worst of its inputs).

use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::conditions::ConditionStatus;
use seedlet_api::core::ShootStatus;

/// The value of `shoot.gardener.cloud/status`, ordered worst first so that `min` is "worst".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Health {
    /// `unhealthy`.
    Unhealthy,
    /// `unknown`.
    Unknown,
    /// `progressing`.
    Progressing,
    /// `healthy`.
    Healthy,
}

impl Health {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Health::Unhealthy => "unhealthy",
            Health::Unknown => "unknown",
            Health::Progressing => "progressing",
            Health::Healthy => "healthy",
        }
    }

    /// Parses a label value.
    pub fn parse(value: &str) -> Option<Health> {
        match value {
            "unhealthy" => Some(Health::Unhealthy),
            "unknown" => Some(Health::Unknown),
            "progressing" => Some(Health::Progressing),
            "healthy" => Some(Health::Healthy),
            _ => None,
        }
    }
}

/// The status label of a Shoot with `status` (constraints are not looked at).
pub fn shoot_health(status: Option<&ShootStatus>) -> Health {
    let Some(status) = status else {
        return Health::Healthy;
    };
    let Some(operation) = &status.last_operation else {
        return Health::Healthy;
    };
    let errors = if status.last_errors.is_empty() {
        Health::Healthy
    } else {
        Health::Unhealthy
    };
    let creating = operation.type_ == LastOperationType::Create
        && operation.state != LastOperationState::Succeeded;
    if creating || operation.type_ == LastOperationType::Delete {
        return errors;
    }
    let conditions = status
        .conditions
        .iter()
        .map(|condition| condition_health(&condition.status))
        .min()
        .unwrap_or(Health::Healthy);
    let operation_health = match operation.state {
        LastOperationState::Processing => errors,
        LastOperationState::Succeeded => Health::Healthy,
        _ => Health::Unhealthy,
    };
    conditions.min(operation_health)
}

/// `True` → healthy, `Progressing` → progressing, `Unknown` → unknown, anything else unhealthy.
fn condition_health(status: &ConditionStatus) -> Health {
    match status {
        ConditionStatus::True => Health::Healthy,
        ConditionStatus::Progressing => Health::Progressing,
        ConditionStatus::Unknown => Health::Unknown,
        _ => Health::Unhealthy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(operation: Option<(&str, &str)>, errors: usize, conditions: &[&str]) -> ShootStatus {
        let mut value = serde_json::json!({
            "lastErrors": (0..errors)
                .map(|i| serde_json::json!({"description": format!("error {i}")}))
                .collect::<Vec<_>>(),
            "conditions": conditions
                .iter()
                .enumerate()
                .map(|(i, status)| serde_json::json!({
                    "type": format!("C{i}"),
                    "status": status,
                    "reason": "R",
                    "message": "",
                    "lastTransitionTime": "2025-01-01T00:00:00Z",
                    "lastUpdateTime": "2025-01-01T00:00:00Z",
                }))
                .collect::<Vec<_>>(),
        });
        if let Some((type_, state)) = operation {
            value["lastOperation"] = serde_json::json!({
                "type": type_,
                "state": state,
                "description": "",
                "progress": 0,
                "lastUpdateTime": "2025-01-01T00:00:00Z",
            });
        }
        serde_json::from_value(value).expect("shoot status")
    }

    #[test]
    fn status_label_follows_the_truth_table() {
        use Health::*;
        // (last operation, number of errors, condition statuses, expected label)
        type Case<'a> = (Option<(&'a str, &'a str)>, usize, &'a [&'a str], Health);
        let table: &[Case] = &[
            (None, 0, &["False"], Healthy),
            (Some(("Create", "Processing")), 0, &["False"], Healthy),
            (Some(("Create", "Error")), 1, &[], Unhealthy),
            (Some(("Delete", "Processing")), 0, &["False"], Healthy),
            (Some(("Delete", "Succeeded")), 1, &["True"], Unhealthy),
            (
                Some(("Create", "Succeeded")),
                0,
                &["True", "Unknown"],
                Unknown,
            ),
            (
                Some(("Reconcile", "Processing")),
                0,
                &["True", "Progressing"],
                Progressing,
            ),
            (Some(("Reconcile", "Processing")), 1, &["True"], Unhealthy),
            (Some(("Reconcile", "Succeeded")), 1, &["True"], Healthy),
            (Some(("Reconcile", "Error")), 0, &["True"], Unhealthy),
            (Some(("Reconcile", "Failed")), 0, &["True"], Unhealthy),
            (Some(("Reconcile", "Pending")), 0, &["True"], Unhealthy),
            (Some(("Reconcile", "Aborted")), 0, &["True"], Unhealthy),
            (Some(("Migrate", "Processing")), 0, &["True"], Healthy),
            (Some(("Reconcile", "Succeeded")), 0, &[], Healthy),
            (
                Some(("Reconcile", "Succeeded")),
                0,
                &["Progressing", "Unknown", "False"],
                Unhealthy,
            ),
        ];
        for (operation, errors, conditions, expected) in table {
            let status = status(*operation, *errors, conditions);
            assert_eq!(
                shoot_health(Some(&status)),
                *expected,
                "{operation:?} errors={errors} conditions={conditions:?}"
            );
        }
    }

    #[test]
    fn constraints_are_not_looked_at() {
        let mut value =
            serde_json::to_value(status(Some(("Reconcile", "Succeeded")), 0, &["True"]))
                .expect("status");
        value["constraints"] = serde_json::json!([{
            "type": "HibernationPossible", "status": "False", "reason": "R", "message": "",
            "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z",
        }]);
        let status: ShootStatus = serde_json::from_value(value).expect("shoot status");
        assert_eq!(shoot_health(Some(&status)), Health::Healthy);
    }

    #[test]
    fn shoot_without_status_is_healthy() {
        assert_eq!(shoot_health(None), Health::Healthy);
    }

    #[test]
    fn label_values_round_trip() {
        for health in [
            Health::Unhealthy,
            Health::Unknown,
            Health::Progressing,
            Health::Healthy,
        ] {
            assert_eq!(Health::parse(health.as_str()), Some(health));
        }
        assert_eq!(Health::parse("fine"), None);
    }
}
