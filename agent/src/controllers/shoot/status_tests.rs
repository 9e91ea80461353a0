//! Tests of the status bookkeeping.

use std::time::Duration;

use serde_json::json;

use super::*;

const NOW: &str = "2025-01-06T12:00:00.75Z";

fn now() -> Timestamp {
    NOW.parse().unwrap()
}

fn identity() -> GardenerInfo {
    GardenerInfo {
        id: "i".into(),
        name: "seedlet-agent".into(),
        version: "1.0.0".into(),
    }
}

fn shoot(status: serde_json::Value) -> Shoot {
    serde_json::from_value(json!({
        "metadata": {"name": "s", "namespace": "garden-dev", "generation": 2},
        "spec": {"provider": {"type": "local"}, "region": "r", "seedName": "local"},
        "status": status,
    }))
    .unwrap()
}

fn error_entry(task: &str, codes: &[&str]) -> LastError {
    LastError {
        description: format!("task {task:?} failed: x"),
        task_id: Some(task.into()),
        codes: codes.iter().map(|c| (*c).to_owned()).collect(),
        last_update_time: None,
    }
}

#[test]
fn start_opens_a_retry_cycle_only_when_due_and_drops_init_errors() {
    let fresh = start(
        &shoot(json!({})),
        LastOperationType::Create,
        &identity(),
        "shoot--dev--s",
        now(),
    );
    assert_eq!(fresh["lastOperation"]["state"], "Processing");
    assert_eq!(fresh["lastOperation"]["progress"], 0);
    assert_eq!(
        fresh["lastOperation"]["description"],
        "Reconciliation of Shoot cluster initialized."
    );
    assert_eq!(
        fresh["lastOperation"]["lastUpdateTime"],
        "2025-01-06T12:00:00Z"
    );
    assert_eq!(fresh["retryCycleStartTime"], "2025-01-06T12:00:00Z");
    assert_eq!(fresh["technicalID"], "shoot--dev--s");
    assert_eq!(fresh["seedName"], "local");
    assert_eq!(fresh["observedGeneration"], 2);

    let running = shoot(json!({
        "observedGeneration": 2, "technicalID": "shoot--dev--s",
        "retryCycleStartTime": "2025-01-06T10:00:00Z", "gardener": identity(),
        "lastErrors": [error_entry("initializeOperation", &[]), error_entry("Deploying Shoot infrastructure", &[])],
    }));
    let again = start(
        &running,
        LastOperationType::Reconcile,
        &identity(),
        "shoot--dev--s",
        now(),
    );
    assert!(again.get("retryCycleStartTime").is_none());
    assert!(again.get("technicalID").is_none());
    assert_eq!(again["lastErrors"].as_array().unwrap().len(), 1);
    let migrate = start(
        &running,
        LastOperationType::Migrate,
        &identity(),
        "x",
        now(),
    );
    assert!(migrate.get("seedName").is_none());
}

#[test]
fn progress_describes_running_tasks() {
    use LastOperationType as T;
    let cases = [
        (0, vec![], "Starting Shoot cluster reconciliation"),
        (40, vec!["a".to_owned(), "b".to_owned()], "a, b"),
        (100, vec![], "Shoot cluster reconciliation finished"),
    ];
    for (percent, running, want) in cases {
        let patch = progress(T::Reconcile, percent, &running, now());
        assert_eq!(patch["lastOperation"]["description"], want);
        assert_eq!(patch["lastOperation"]["progress"], percent);
    }
}

#[test]
fn success_clears_errors_and_the_retry_cycle() {
    let patch = success(&shoot(json!({})), LastOperationType::Create, false, now());
    assert_eq!(patch["lastOperation"]["state"], "Succeeded");
    assert_eq!(patch["lastOperation"]["progress"], 100);
    assert_eq!(
        patch["lastOperation"]["description"],
        "Shoot cluster has been successfully reconciled."
    );
    assert_eq!(patch["lastErrors"], serde_json::Value::Null);
    assert_eq!(patch["retryCycleStartTime"], serde_json::Value::Null);
    assert_eq!(patch["hibernated"], false);
    let deleted = success(&shoot(json!({})), LastOperationType::Delete, false, now());
    assert!(deleted.get("seedName").is_none());
}

#[test]
fn error_state_depends_on_codes_retry_cycle_and_force() {
    let in_cycle = shoot(json!({"retryCycleStartTime": "2025-01-06T11:00:00Z",
        "lastOperation": {"type": "Create", "state": "Processing", "progress": 40, "description": "", "lastUpdateTime": NOW}}));
    let cycle_over = shoot(json!({"retryCycleStartTime": "2025-01-05T11:00:00Z"}));
    let day = Duration::from_secs(12 * 3600);
    let retryable = [error_entry("t", &["ERR_RETRYABLE_INFRA_DEPENDENCIES"])];
    let rate_limited = [error_entry("t", &["ERR_INFRA_RATE_LIMITS_EXCEEDED"])];
    let cases: [(&Shoot, &[LastError], bool, &str); 5] = [
        (&in_cycle, &retryable, false, "Error"),
        (&in_cycle, &rate_limited, false, "Failed"),
        (&in_cycle, &rate_limited, true, "Error"),
        (&cycle_over, &retryable, false, "Failed"),
        (&shoot(json!({})), &[], false, "Failed"),
    ];
    for (shoot, errors, force, want) in cases {
        let failure = Failure {
            type_: LastOperationType::Create,
            description: "Flow failed",
            last_errors: errors,
            force_retry: force,
        };
        let patch = error(shoot, &failure, &identity(), day, now());
        assert_eq!(
            patch["lastOperation"]["state"], want,
            "{errors:?} force={force}"
        );
        let description = patch["lastOperation"]["description"].as_str().unwrap();
        assert_eq!(description.ends_with(RETRY_SUFFIX), want == "Error");
    }
    let failure = Failure {
        type_: LastOperationType::Create,
        description: "x",
        last_errors: &retryable,
        force_retry: false,
    };
    let kept = error(&in_cycle, &failure, &identity(), day, now());
    assert_eq!(kept["lastOperation"]["progress"], 40);
    assert_eq!(
        kept["lastErrors"][0]["codes"][0],
        "ERR_RETRYABLE_INFRA_DEPENDENCIES"
    );
}

#[test]
fn task_errors_and_their_removal() {
    let errors = task_errors(
        &[(
            "Deploying Shoot infrastructure".into(),
            "boom".into(),
            vec!["ERR_X".into()],
        )],
        now(),
    );
    assert_eq!(
        errors[0].description,
        "task \"Deploying Shoot infrastructure\" failed: boom"
    );
    assert_eq!(
        errors[0].task_id.as_deref(),
        Some("Deploying Shoot infrastructure")
    );
    assert_eq!(without_task(&errors, "other"), None);
    assert_eq!(
        without_task(&errors, "Deploying Shoot infrastructure"),
        Some(vec![])
    );
    assert_eq!(capitalize("flow \"x\" failed"), "Flow \"x\" failed");
}
