//! Pure decisions of the seed care controller (spec §5.3): `SeedSystemComponentsHealthy` from the
//! class-bearing ManagedResources, the threshold rule, and `EmergencyStopShootReconciliations`.

use std::time::Duration;

use jiff::Timestamp;
use kube::ResourceExt;
use seedlet_api::conditions::{self, Condition, ConditionStatus};
use seedlet_api::names::condition_types;
use seedlet_api::resources::ManagedResource;

/// The condition this controller owns.
pub const SYSTEM_COMPONENTS_HEALTHY: &str = condition_types::SEED_SYSTEM_COMPONENTS_HEALTHY;
/// The emergency-stop condition type (also its reason).
pub const EMERGENCY_STOP: &str = "EmergencyStopShootReconciliations";
/// The Seed annotation that stops shoot reconciliations.
pub const EMERGENCY_STOP_ANNOTATION: &str = "shoot.gardener.cloud/emergency-stop-reconciliations";
/// Message of the emergency-stop condition.
pub const EMERGENCY_STOP_MESSAGE: &str =
    "Reconciliations of Shoots managed by this Seed cluster are currently disabled by annotation.";

/// A failed check: `(reason, message)`; `None` means healthy.
pub type Failure = Option<(String, String)>;

/// The first failing ManagedResource (in the order given: `garden` then `istio-system`), among
/// those with `spec.class` set.
pub fn first_failure(resources: &[ManagedResource]) -> Failure {
    for mr in resources.iter().filter(|mr| mr.spec.class.is_some()) {
        let key = format!("{}/{}", mr.namespace().unwrap_or_default(), mr.name_any());
        let found = mr.conditions();
        let applied = conditions::find(found, condition_types::RESOURCES_APPLIED);
        let generation = mr.metadata.generation.unwrap_or_default();
        let observed = mr
            .status
            .as_ref()
            .and_then(|s| s.observed_generation)
            .unwrap_or_default();
        if generation != observed {
            if let Some(applied) =
                applied.filter(|c| c.status == ConditionStatus::False && c.reason == "ApplyFailed")
            {
                return Some((applied.reason.clone(), applied.message.clone()));
            }
            return Some((
                "OutdatedStatus".to_owned(),
                format!(
                    "observed generation of managed resource '{key}' outdated ({observed}/{generation})"
                ),
            ));
        }
        let mut missing = Vec::new();
        for (type_, healthy) in [
            (condition_types::RESOURCES_APPLIED, ConditionStatus::True),
            (condition_types::RESOURCES_HEALTHY, ConditionStatus::True),
            (
                condition_types::RESOURCES_PROGRESSING,
                ConditionStatus::False,
            ),
        ] {
            match conditions::find(found, type_) {
                None => missing.push(type_),
                Some(condition) if condition.status != healthy => {
                    return Some((condition.reason.clone(), condition.message.clone()));
                }
                Some(_) => {}
            }
        }
        if !missing.is_empty() {
            return Some((
                "MissingManagedResourceCondition".to_owned(),
                format!(
                    "ManagedResource {} is missing the following condition(s), [{}]",
                    mr.name_any(),
                    missing.join(" ")
                ),
            ));
        }
    }
    None
}

/// The next `SeedSystemComponentsHealthy` from the previous one and the check's result. A
/// failure after True becomes Progressing with a threshold; Progressing stays while within it;
/// otherwise False. (Upstream also turns a False condition Progressing when the reason changes
/// and a threshold exists [QUIRK]; seedlet keeps it False.)
pub fn system_components_healthy(
    previous: &Condition,
    failure: Failure,
    threshold: Option<Duration>,
    now: Timestamp,
) -> Condition {
    match failure {
        None => previous.updated(
            ConditionStatus::True,
            "SystemComponentsRunning",
            "All system components are healthy.",
            now,
        ),
        Some((reason, message)) => {
            conditions::progressing_or_false(previous, threshold, &reason, &message, now)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    fn condition(type_: &str, status: &str, reason: &str) -> Value {
        json!({"type": type_, "status": status, "reason": reason, "message": format!("{type_} {status}"),
               "lastTransitionTime": "2024-01-01T00:00:00Z", "lastUpdateTime": "2024-01-01T00:00:00Z"})
    }

    fn mr(
        name: &str,
        class: Option<&str>,
        generation: i64,
        observed: i64,
        conditions: Vec<Value>,
    ) -> ManagedResource {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "garden", "generation": generation},
            "spec": {"class": class, "secretRefs": []},
            "status": {"observedGeneration": observed, "conditions": conditions},
        }))
        .unwrap()
    }

    fn healthy_conditions() -> Vec<Value> {
        vec![
            condition("ResourcesApplied", "True", "ApplySucceeded"),
            condition("ResourcesHealthy", "True", "ResourcesHealthy"),
            condition("ResourcesProgressing", "False", "ResourcesRolledOut"),
        ]
    }

    #[test]
    fn first_failure_in_the_spec_order() {
        assert_eq!(first_failure(&[]), None);
        assert_eq!(
            first_failure(&[mr("a", Some("seed"), 1, 1, healthy_conditions())]),
            None
        );
        // Unclassed resources are not checked.
        assert_eq!(first_failure(&[mr("a", None, 2, 1, vec![])]), None);
        assert_eq!(
            first_failure(&[mr("a", Some("seed"), 2, 1, healthy_conditions())]),
            Some((
                "OutdatedStatus".into(),
                "observed generation of managed resource 'garden/a' outdated (1/2)".into()
            ))
        );
        let mut unhealthy = healthy_conditions();
        unhealthy[1] = condition("ResourcesHealthy", "False", "DeploymentUnhealthy");
        assert_eq!(
            first_failure(&[mr("a", Some("seed"), 1, 1, unhealthy)])
                .unwrap()
                .0,
            "DeploymentUnhealthy"
        );
        let mut progressing = healthy_conditions();
        progressing[2] = condition("ResourcesProgressing", "True", "DeploymentProgressing");
        assert_eq!(
            first_failure(&[mr("a", Some("seed"), 1, 1, progressing)])
                .unwrap()
                .0,
            "DeploymentProgressing"
        );
        assert_eq!(
            first_failure(&[mr("a", Some("seed"), 1, 1, vec![healthy_conditions()[0].clone()])]),
            Some((
                "MissingManagedResourceCondition".into(),
                "ManagedResource a is missing the following condition(s), [ResourcesHealthy ResourcesProgressing]".into()
            ))
        );
    }

    #[test]
    fn thresholds_make_a_failure_progressing_first() {
        let minute = Some(Duration::from_secs(60));
        let failure = Some(("R".to_owned(), "m".to_owned()));
        let initial = Condition::initialized(SYSTEM_COMPONENTS_HEALTHY, at(0));
        let healthy = system_components_healthy(&initial, None, minute, at(0));
        assert_eq!(healthy.status, ConditionStatus::True);
        assert_eq!(healthy.message, "All system components are healthy.");
        let progressing = system_components_healthy(&healthy, failure.clone(), minute, at(10));
        assert_eq!(progressing.status, ConditionStatus::Progressing);
        let still = system_components_healthy(&progressing, failure.clone(), minute, at(70));
        assert_eq!(still.status, ConditionStatus::Progressing);
        let failed = system_components_healthy(&progressing, failure.clone(), minute, at(71));
        assert_eq!(failed.status, ConditionStatus::False);
        let without = system_components_healthy(&healthy, failure, None, at(10));
        assert_eq!(without.status, ConditionStatus::False);
    }
}
