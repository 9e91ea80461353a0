//! Table tests of the five conditions from what the seed shows (spec §7.2, §7.7, §7.9, §9.30–31).

use std::collections::BTreeMap;

use seedlet_api::common::LastOperation;
use serde_json::{Value, json};

use super::*;

fn now() -> Timestamp {
    "2025-01-01T01:00:00Z".parse().unwrap()
}

fn operation(type_: &str, state: &str) -> LastOperation {
    serde_json::from_value(json!({"type": type_, "state": state, "progress": 100,
        "description": "", "lastUpdateTime": "2025-01-01T00:00:00Z"}))
    .unwrap()
}

fn condition(type_: &str, status: &str, reason: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": format!("{type_} {status}"),
           "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z"})
}

fn report(type_: &str, status: &str) -> ExtensionReport {
    ExtensionReport {
        kind: "Worker".into(),
        namespace: "shoot--dev--s".into(),
        name: "s".into(),
        condition: serde_json::from_value(condition(type_, status, "HealthCheck")).unwrap(),
        heartbeat: Some(now()),
    }
}

fn healthy_mr(class: Option<&str>) -> ManagedResource {
    serde_json::from_value(json!({
        "metadata": {"name": "m", "namespace": "shoot--dev--s", "generation": 1},
        "spec": {"class": class, "secretRefs": []},
        "status": {"observedGeneration": 1, "conditions": [
            condition("ResourcesApplied", "True", "ApplySucceeded"),
            condition("ResourcesHealthy", "True", "ResourcesHealthy"),
            condition("ResourcesProgressing", "False", "ResourcesRolledOut")]},
    }))
    .unwrap()
}

fn unhealthy_mr() -> ManagedResource {
    let mut mr = healthy_mr(Some("seed"));
    let status = mr.status.as_mut().unwrap();
    status.conditions[1] = serde_json::from_value(condition(
        "ResourcesHealthy",
        "False",
        "DeploymentUnhealthy",
    ))
    .unwrap();
    mr
}

fn observed() -> Observed {
    Observed {
        extensions: Ok(Vec::new()),
        managed_resources: Ok(vec![healthy_mr(Some("seed")), healthy_mr(None)]),
        control_plane: Ok(Vec::new()),
        monitoring: Ok(Vec::new()),
        api_server: ApiServer::Absent,
    }
}

fn evaluate(
    observed: &Observed,
    hibernated: bool,
    last_operation: Option<&LastOperation>,
    thresholds: &BTreeMap<String, Duration>,
) -> Vec<(String, String, String)> {
    let facts = Facts {
        hibernated,
        workerless: false,
        last_operation,
        has_last_errors: false,
    };
    let settings = Settings {
        stale_after: Some(Duration::from_secs(300)),
        progressing_threshold: None,
    };
    let judge = Judge {
        thresholds,
        last_operation,
        now: now(),
    };
    conditions(&[], &facts, observed, &settings, &judge)
        .into_iter()
        .map(|c| (c.type_, c.status.to_string(), c.reason))
        .collect()
}

fn triples(expected: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    expected
        .iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect()
}

#[test]
fn healthy_seed_side_gives_true_where_seen_and_unknown_where_the_shoot_api_is_needed() {
    let succeeded = operation("Reconcile", "Succeeded");
    assert_eq!(
        evaluate(&observed(), false, Some(&succeeded), &BTreeMap::new()),
        triples(&[
            ("APIServerAvailable", "Unknown", "ConditionCheckError"),
            ("ControlPlaneHealthy", "True", "ControlPlaneRunning"),
            (
                "ObservabilityComponentsHealthy",
                "True",
                "ObservabilityComponentsRunning"
            ),
            ("EveryNodeReady", "Unknown", "ConditionCheckError"),
            ("SystemComponentsHealthy", "Unknown", "ConditionCheckError"),
        ])
    );
}

#[test]
fn failing_reports_and_resources_fail_the_conditions_they_feed() {
    let succeeded = operation("Reconcile", "Succeeded");
    let mut inputs = observed();
    inputs.extensions = Ok(vec![
        report("EveryNodeReady", "False"),
        report("SystemComponentsHealthy", "Progressing"),
    ]);
    inputs.managed_resources = Ok(vec![unhealthy_mr()]);
    let threshold = BTreeMap::from([("ControlPlaneHealthy".to_owned(), Duration::from_secs(60))]);
    assert_eq!(
        evaluate(&inputs, false, Some(&succeeded), &threshold),
        triples(&[
            ("APIServerAvailable", "Unknown", "ConditionCheckError"),
            // Initialised as Unknown, a failure turns False even with a threshold.
            ("ControlPlaneHealthy", "False", "DeploymentUnhealthy"),
            (
                "ObservabilityComponentsHealthy",
                "True",
                "ObservabilityComponentsRunning"
            ),
            ("EveryNodeReady", "False", "WorkerUnhealthyReport"),
            (
                "SystemComponentsHealthy",
                "Progressing",
                "WorkerHealthCheck"
            ),
        ])
    );
    // While the shoot is still being created, failures are pardoned as Progressing.
    let creating = operation("Create", "Processing");
    let pardoned = evaluate(&inputs, false, Some(&creating), &BTreeMap::new());
    assert_eq!(pardoned[1].1, "Progressing");
    assert_eq!(pardoned[3].1, "Progressing");
}

#[test]
fn a_hibernated_shoot_is_not_checked() {
    let mut inputs = observed();
    inputs.managed_resources = Err("down".into());
    let seen = evaluate(
        &inputs,
        true,
        Some(&operation("Reconcile", "Succeeded")),
        &BTreeMap::new(),
    );
    assert_eq!(seen.len(), 5);
    assert!(
        seen.iter()
            .all(|(_, status, reason)| status == "True" && reason == "ConditionNotChecked")
    );
}

#[test]
fn a_managed_resource_listing_failure_fails_every_condition() {
    let mut inputs = observed();
    inputs.managed_resources = Err("listing ManagedResources failed: boom".into());
    let seen = evaluate(
        &inputs,
        false,
        Some(&operation("Reconcile", "Succeeded")),
        &BTreeMap::new(),
    );
    assert!(
        seen.iter().all(
            |(_, status, reason)| status == "False" && reason == "ManagedResourceListingFailed"
        )
    );
}

#[test]
fn a_kube_apiserver_scaled_to_zero_is_down_and_hides_node_and_system_checks() {
    let mut inputs = observed();
    inputs.api_server = ApiServer::NotRunning;
    inputs.extensions = Ok(vec![report("EveryNodeReady", "False")]);
    let seen = evaluate(
        &inputs,
        false,
        Some(&operation("Reconcile", "Succeeded")),
        &BTreeMap::new(),
    );
    assert_eq!(
        seen[0],
        (
            "APIServerAvailable".into(),
            "False".into(),
            "APIServerDown".into()
        )
    );
    assert_eq!(
        seen[3],
        (
            "EveryNodeReady".into(),
            "Unknown".into(),
            "ConditionCheckError".into()
        )
    );
    assert_eq!(seen[4].2, "ConditionCheckError");
}

#[test]
fn a_failed_read_makes_the_conditions_it_feeds_unknown() {
    let mut inputs = observed();
    inputs.extensions = Err("listing Worker objects failed: boom".into());
    inputs.monitoring = Err("listing Deployments failed: boom".into());
    let seen = evaluate(
        &inputs,
        false,
        Some(&operation("Reconcile", "Succeeded")),
        &BTreeMap::new(),
    );
    assert_eq!(
        seen[1],
        (
            "ControlPlaneHealthy".into(),
            "Unknown".into(),
            "ConditionCheckError".into()
        )
    );
    assert_eq!(seen[2].1, "Unknown");
}

#[test]
fn not_running_messages_depend_on_the_last_operation() {
    assert_eq!(
        not_running_message(None),
        "Shoot control plane has not been fully created yet."
    );
    assert_eq!(
        not_running_message(Some(&operation("Delete", "Processing"))),
        "Shoot control plane has already been or is about to be deleted."
    );
    assert_eq!(
        not_running_message(Some(&operation("Reconcile", "Succeeded"))),
        "Shoot control plane is not running at the moment."
    );
}

#[test]
fn the_api_server_state_follows_the_deployment() {
    let deployment = |replicas: Option<i32>, deleting: bool| -> Deployment {
        let mut value = json!({"metadata": {"name": "kube-apiserver"},
            "spec": {"replicas": replicas, "selector": {}, "template": {}}});
        if deleting {
            value["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:00:00Z");
        }
        serde_json::from_value(value).unwrap()
    };
    assert_eq!(ApiServer::of(None), ApiServer::Absent);
    assert_eq!(
        ApiServer::of(Some(&deployment(Some(2), false))),
        ApiServer::Running
    );
    assert_eq!(
        ApiServer::of(Some(&deployment(Some(0), false))),
        ApiServer::NotRunning
    );
    assert_eq!(
        ApiServer::of(Some(&deployment(None, false))),
        ApiServer::NotRunning
    );
    assert_eq!(
        ApiServer::of(Some(&deployment(Some(1), true))),
        ApiServer::NotRunning
    );
}
