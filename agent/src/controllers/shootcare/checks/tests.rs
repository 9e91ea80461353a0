//! Table tests of the single checks, from the rules of spec §7.3 and §7.4.

use serde_json::{Value, json};

use super::*;

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(1_750_000_000 + second).unwrap()
}

fn condition(type_: &str, status: &str, reason: &str, transition: i64) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": format!("{type_} {status}"),
           "lastTransitionTime": at(transition).to_string(), "lastUpdateTime": at(transition).to_string()})
}

fn report(kind: &str, status: &str, heartbeat: Option<i64>) -> ExtensionReport {
    let mut reported: Condition =
        serde_json::from_value(condition("EveryNodeReady", status, "HealthCheck", 0)).unwrap();
    reported.codes = vec!["ERR_INFRA_DEPENDENCIES".into()];
    ExtensionReport {
        kind: kind.into(),
        namespace: "shoot--dev--s".into(),
        name: "s".into(),
        condition: reported,
        heartbeat: heartbeat.map(at),
    }
}

/// (reports, staleness check, expected status or failure reason).
type ReportCase = (
    Vec<ExtensionReport>,
    Option<Duration>,
    Option<(&'static str, &'static str)>,
);

#[test]
fn extension_reports_are_judged_by_heartbeat_then_status() {
    let stale = Some(Duration::from_secs(300));
    // (reports, staleness check, expected status or failure reason)
    let cases: Vec<ReportCase> = vec![
        (vec![], stale, None),
        (vec![report("Worker", "True", Some(900))], stale, None),
        (
            vec![report("Worker", "True", Some(600))],
            stale,
            Some(("Unknown", "WorkerOutdatedHealthCheckReport")),
        ),
        (
            vec![report("Worker", "True", None)],
            stale,
            Some(("Unknown", "WorkerOutdatedHealthCheckReport")),
        ),
        // Without the staleness check a missing heartbeat does not matter.
        (vec![report("Worker", "True", None)], None, None),
        (
            vec![report("Worker", "Progressing", Some(900))],
            stale,
            Some(("Progressing", "WorkerHealthCheck")),
        ),
        (
            vec![report("Worker", "False", Some(900))],
            stale,
            Some(("Failed", "WorkerUnhealthyReport")),
        ),
        (
            vec![report("Network", "Unknown", None)],
            None,
            Some(("Failed", "NetworkUnhealthyReport")),
        ),
        // First problem wins, in the order given.
        (
            vec![
                report("Network", "True", Some(900)),
                report("Worker", "False", Some(900)),
                report("Extension", "Progressing", Some(900)),
            ],
            stale,
            Some(("Failed", "WorkerUnhealthyReport")),
        ),
    ];
    for (reports, stale_after, expected) in cases {
        let found = extension_finding(&reports, stale_after, at(1000));
        let seen = found.as_ref().map(|finding| match finding {
            Finding::Failed { reason, .. } => ("Failed".to_owned(), reason.clone()),
            Finding::Reported { status, reason, .. } => (status.to_string(), reason.clone()),
        });
        let expected = expected.map(|(status, reason)| (status.to_owned(), reason.to_owned()));
        assert_eq!(seen, expected, "{reports:?}");
    }
}

#[test]
fn an_unhealthy_extension_report_names_the_object_and_keeps_its_codes() {
    let found = extension_finding(&[report("Worker", "False", Some(0))], None, at(0));
    assert_eq!(
        found,
        Some(Finding::Failed {
            reason: "WorkerUnhealthyReport".into(),
            message: "Worker extension (shoot--dev--s/s) reports failing health check: EveryNodeReady False".into(),
            codes: vec!["ERR_INFRA_DEPENDENCIES".into()],
        })
    );
    let Some(Finding::Reported { message, .. }) = extension_finding(
        &[report("Worker", "True", None)],
        Some(Duration::from_secs(1)),
        at(0),
    ) else {
        panic!("outdated report expected");
    };
    assert_eq!(
        message,
        "Worker extension (shoot--dev--s/s) reports an outdated health status: its controller has no heartbeat Lease."
    );
}

fn mr(
    name: &str,
    class: Option<&str>,
    label: Option<&str>,
    generation: i64,
    observed: i64,
    conditions: Vec<Value>,
) -> ManagedResource {
    let mut labels = serde_json::Map::new();
    if let Some(label) = label {
        labels.insert(CARE_CONDITION_TYPE_LABEL.into(), json!(label));
    }
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "shoot--dev--s", "generation": generation, "labels": labels},
        "spec": {"class": class, "secretRefs": []},
        "status": {"observedGeneration": observed, "conditions": conditions},
    }))
    .unwrap()
}

fn healthy() -> Vec<Value> {
    vec![
        condition("ResourcesApplied", "True", "ApplySucceeded", 0),
        condition("ResourcesHealthy", "True", "ResourcesHealthy", 0),
        condition("ResourcesProgressing", "False", "ResourcesRolledOut", 0),
    ]
}

fn with(mut conditions: Vec<Value>, index: usize, replacement: Value) -> Vec<Value> {
    conditions[index] = replacement;
    conditions
}

#[test]
fn managed_resources_feed_the_conditions_their_class_and_label_say() {
    let cases = [
        (Some("seed"), None, "ControlPlaneHealthy", true),
        (Some("seed"), Some(""), "ControlPlaneHealthy", true),
        (
            Some("seed"),
            Some("ControlPlaneHealthy"),
            "ControlPlaneHealthy",
            true,
        ),
        (None, None, "ControlPlaneHealthy", false),
        (
            Some("seed"),
            Some("ObservabilityComponentsHealthy"),
            "ControlPlaneHealthy",
            false,
        ),
        (
            Some("seed"),
            Some("ObservabilityComponentsHealthy"),
            "ObservabilityComponentsHealthy",
            true,
        ),
        (None, None, "ObservabilityComponentsHealthy", false),
        (None, None, "SystemComponentsHealthy", true),
        (Some("seed"), None, "SystemComponentsHealthy", false),
        (
            Some("seed"),
            Some("SystemComponentsHealthy"),
            "SystemComponentsHealthy",
            true,
        ),
        (None, None, "EveryNodeReady", false),
    ];
    for (class, label, condition_type, expected) in cases {
        let resource = mr("a", class, label, 1, 1, healthy());
        assert_eq!(
            feeds(&resource, condition_type),
            expected,
            "{class:?} {label:?} {condition_type}"
        );
    }
}

#[test]
fn managed_resource_problems_follow_the_order_of_the_spec() {
    let hour = Some(Duration::from_secs(3600));
    let reason = |resource: ManagedResource, threshold: Option<Duration>| {
        managed_resource_finding(&resource, threshold, at(1000)).map(|finding| match finding {
            Finding::Failed {
                reason, message, ..
            }
            | Finding::Reported {
                reason, message, ..
            } => (reason, message),
        })
    };
    assert_eq!(
        reason(mr("a", Some("seed"), None, 1, 1, healthy()), None),
        None
    );
    assert_eq!(
        reason(mr("a", Some("seed"), None, 2, 1, healthy()), None),
        Some((
            "OutdatedStatus".into(),
            "observed generation of managed resource 'shoot--dev--s/a' outdated (1/2)".into()
        ))
    );
    let apply_failed = with(
        healthy(),
        0,
        condition("ResourcesApplied", "False", "ApplyFailed", 0),
    );
    assert_eq!(
        reason(mr("a", Some("seed"), None, 2, 1, apply_failed), None)
            .unwrap()
            .0,
        "ApplyFailed"
    );
    let unhealthy = with(
        healthy(),
        1,
        condition("ResourcesHealthy", "False", "DeploymentUnhealthy", 0),
    );
    assert_eq!(
        reason(mr("a", Some("seed"), None, 1, 1, unhealthy), None)
            .unwrap()
            .0,
        "DeploymentUnhealthy"
    );
    let unknown = with(
        healthy(),
        0,
        condition("ResourcesApplied", "Unknown", "Pending", 0),
    );
    assert_eq!(
        reason(mr("a", Some("seed"), None, 1, 1, unknown), None)
            .unwrap()
            .0,
        "Pending"
    );
    // Progressing without a threshold fails at once, with one only after the threshold.
    let progressing = with(
        healthy(),
        2,
        condition("ResourcesProgressing", "True", "RolloutInProgress", 0),
    );
    assert_eq!(
        reason(mr("a", Some("seed"), None, 1, 1, progressing.clone()), None)
            .unwrap()
            .0,
        "RolloutInProgress"
    );
    assert_eq!(
        reason(mr("a", Some("seed"), None, 1, 1, progressing.clone()), hour),
        None
    );
    let stuck = with(
        healthy(),
        2,
        condition("ResourcesProgressing", "True", "RolloutInProgress", -3000),
    );
    assert_eq!(
        reason(mr("a", Some("seed"), None, 1, 1, stuck), hour),
        Some((
            "ProgressingRolloutStuck".into(),
            "ManagedResource a is progressing for more than 1h0m0s".into()
        ))
    );
    assert_eq!(
        reason(mr("a", Some("seed"), None, 1, 1, vec![healthy()[0].clone()]), None),
        Some((
            "MissingManagedResourceCondition".into(),
            "ManagedResource a is missing the following condition(s), [ResourcesHealthy ResourcesProgressing]".into()
        ))
    );
}

#[test]
fn the_first_failing_managed_resource_that_feeds_the_condition_wins() {
    let unhealthy = with(
        healthy(),
        1,
        condition("ResourcesHealthy", "False", "Broken", 0),
    );
    let resources = [
        mr("system", None, None, 1, 1, unhealthy.clone()),
        mr("ok", Some("seed"), None, 1, 1, healthy()),
        mr(
            "plane",
            Some("seed"),
            None,
            1,
            1,
            with(
                unhealthy,
                1,
                condition("ResourcesHealthy", "False", "PlaneBroken", 0),
            ),
        ),
    ];
    let reason =
        |condition_type| match managed_resources_finding(&resources, condition_type, None, at(0)) {
            Some(Finding::Failed { reason, .. }) => Some(reason),
            _ => None,
        };
    assert_eq!(
        reason("ControlPlaneHealthy").as_deref(),
        Some("PlaneBroken")
    );
    assert_eq!(reason("SystemComponentsHealthy").as_deref(), Some("Broken"));
    assert_eq!(reason("ObservabilityComponentsHealthy"), None);
}

#[test]
fn deployments_are_unhealthy_until_available() {
    let deployment = |name: &str, available: &str| -> Deployment {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "shoot--dev--s", "generation": 1},
            "spec": {"replicas": 1, "selector": {}, "template": {}},
            "status": {"observedGeneration": 1, "availableReplicas": 1, "conditions": [
                {"type": "Available", "status": available},
                {"type": "Progressing", "status": "True"}]},
        }))
        .unwrap()
    };
    assert_eq!(
        deployments_finding(&[deployment("kube-apiserver", "True")]),
        None
    );
    let Some(Finding::Failed {
        reason, message, ..
    }) = deployments_finding(&[
        deployment("kube-apiserver", "True"),
        deployment("etcd-main", "False"),
    ])
    else {
        panic!("unhealthy deployment expected");
    };
    assert_eq!(reason, "DeploymentUnhealthy");
    assert!(
        message.starts_with("Deployment \"etcd-main\" is unhealthy: "),
        "{message}"
    );
}

#[test]
fn only_managed_resources_ignored_with_a_true_value_are_listed() {
    let annotated = |name: &str, value: &str| {
        let mut resource = mr(name, Some("seed"), None, 1, 1, healthy());
        resource
            .annotations_mut()
            .insert(managed_resources::IGNORE.into(), value.into());
        resource
    };
    let resources = [
        annotated("a", "true"),
        annotated("b", "false"),
        annotated("c", "1"),
        mr("d", None, None, 1, 1, healthy()),
    ];
    assert_eq!(ignored_managed_resources(&resources), ["a", "c"]);
}
