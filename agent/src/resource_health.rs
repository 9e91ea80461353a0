//! Per-kind health and progressing checks of applied objects (spec §5.7) and the resulting
//! `ResourcesHealthy` / `ResourcesProgressing` decisions. Pure: the objects are the live objects
//! the API server returned. The ManagedResource applier judges what it applied with them, shoot
//! care the control plane's objects, so they live beside both controllers.
//!
//! Deviation: gardener's Deployment progressing check lists the pods matching the selector and
//! compares their count with `spec.replicas`. seedlet compares `status.updatedReplicas` and
//! `status.availableReplicas` with `spec.replicas` instead, which a Deployment controller keeps
//! equivalent, and avoids watching every pod of the seed.

use serde_json::Value;

use seedlet_api::names::{managed_resources, reasons};

/// One object of the applied set as observed after the apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    /// API group (empty for core).
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The live object; `None` when it does not exist.
    pub object: Option<Value>,
}

/// A condition decision: status (`True`/`False`), reason, message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Whether the condition is `True`.
    pub status: bool,
    /// CamelCase reason.
    pub reason: String,
    /// Message.
    pub message: String,
}

/// `ResourcesHealthy` over the applied set: the first failure wins.
pub fn healthy(objects: &[Observed]) -> Verdict {
    for observed in objects {
        let Some(object) = &observed.object else {
            return Verdict {
                status: false,
                reason: reasons::kind_missing(&observed.kind),
                message: format!(
                    "Required {} \"{}\" in namespace \"{}\" is missing",
                    observed.kind, observed.name, observed.namespace
                ),
            };
        };
        if skips_checks(object) {
            continue;
        }
        if let Err(why) = check_health(&observed.group, &observed.kind, object) {
            return Verdict {
                status: false,
                reason: reasons::kind_unhealthy(&observed.kind),
                message: format!(
                    "{} \"{}/{}\" is unhealthy: {why}",
                    observed.kind, observed.namespace, observed.name
                ),
            };
        }
    }
    Verdict {
        status: true,
        reason: reasons::RESOURCES_HEALTHY.to_owned(),
        message: reasons::RESOURCES_HEALTHY_MESSAGE.to_owned(),
    }
}

/// `ResourcesProgressing` over the applied set: `True` for the first progressing object.
pub fn progressing(objects: &[Observed]) -> Verdict {
    for observed in objects {
        let Some(object) = &observed.object else {
            continue;
        };
        if skips_checks(object) {
            continue;
        }
        if let Some(why) = check_progressing(&observed.group, &observed.kind, object) {
            return Verdict {
                status: true,
                reason: reasons::kind_progressing(&observed.kind),
                message: format!(
                    "{} \"{}/{}\" is progressing: {why}",
                    observed.kind, observed.namespace, observed.name
                ),
            };
        }
    }
    Verdict {
        status: false,
        reason: reasons::RESOURCES_ROLLED_OUT.to_owned(),
        message: reasons::RESOURCES_ROLLED_OUT_MESSAGE.to_owned(),
    }
}

/// `resources.gardener.cloud/skip-health-check` with the exact value `true`.
fn skips_checks(object: &Value) -> bool {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(managed_resources::SKIP_HEALTH_CHECK))
        .and_then(Value::as_str)
        == Some("true")
}

/// Health of one object; `Err(why)` when unhealthy. Kinds without a check are healthy.
pub fn check_health(group: &str, kind: &str, object: &Value) -> Result<(), String> {
    match (group, kind) {
        ("apps", "Deployment") => {
            observed_generation_current(object)?;
            require_condition(object, "Available", "True", true)?;
            require_condition(object, "Progressing", "True", false)?;
            forbid_condition(object, "ReplicaFailure")
        }
        ("apps", "StatefulSet") => {
            observed_generation_current(object)?;
            let replicas = int(object, "/spec/replicas").unwrap_or(1);
            let ready = int(object, "/status/readyReplicas").unwrap_or(0);
            if ready < replicas {
                return Err(format!("not enough ready replicas ({ready}/{replicas})"));
            }
            Ok(())
        }
        ("apps", "DaemonSet") => daemon_set_health(object),
        ("", "Pod") => match object.pointer("/status/phase").and_then(Value::as_str) {
            Some("Running" | "Succeeded") => Ok(()),
            phase => Err(format!("pod is in phase {:?}", phase.unwrap_or(""))),
        },
        ("batch", "Job") => forbid_condition(object, "Failed"),
        ("apps", "ReplicaSet") | ("", "ReplicationController") => {
            observed_generation_current(object)?;
            if let Some(replicas) = int(object, "/spec/replicas") {
                let ready = int(object, "/status/readyReplicas").unwrap_or(0);
                if ready < replicas {
                    return Err(format!("not enough ready replicas ({ready}/{replicas})"));
                }
            }
            Ok(())
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            require_condition(object, "NamesAccepted", "True", true)?;
            require_condition(object, "Established", "True", true)?;
            forbid_condition(object, "Terminating")
        }
        ("", "Service") => {
            let load_balancer =
                object.pointer("/spec/type").and_then(Value::as_str) == Some("LoadBalancer");
            let ingress = object
                .pointer("/status/loadBalancer/ingress")
                .and_then(Value::as_array)
                .is_some_and(|list| !list.is_empty());
            if load_balancer && !ingress {
                return Err("service is missing ingress status".to_owned());
            }
            Ok(())
        }
        ("autoscaling.k8s.io", "VerticalPodAutoscaler") => {
            forbid_condition(object, "ConfigUnsupported")
        }
        _ => Ok(()),
    }
}

/// Why an object is still rolling out, `None` when rolled out. Only `apps` kinds are checked.
pub fn check_progressing(group: &str, kind: &str, object: &Value) -> Option<String> {
    if group != "apps" {
        return None;
    }
    let outdated = observed_generation_current(object).err();
    match kind {
        "Deployment" => {
            if outdated.is_some() {
                return outdated;
            }
            let condition = condition(object, "Progressing");
            let rolled_out = condition.is_some_and(|c| {
                c.get("status").and_then(Value::as_str) == Some("True")
                    && c.get("reason").and_then(Value::as_str) == Some("NewReplicaSetAvailable")
            });
            if !rolled_out {
                let message = condition
                    .and_then(|c| c.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("condition \"Progressing\" is missing");
                return Some(message.to_owned());
            }
            let replicas = int(object, "/spec/replicas").unwrap_or(1);
            let updated = int(object, "/status/updatedReplicas").unwrap_or(0);
            let available = int(object, "/status/availableReplicas").unwrap_or(0);
            if updated < replicas || available < replicas {
                return Some(format!(
                    "{updated} of {replicas} replicas updated, {available} available"
                ));
            }
            None
        }
        "StatefulSet" => {
            if outdated.is_some() {
                return outdated;
            }
            let replicas = int(object, "/spec/replicas").unwrap_or(1);
            let updated = int(object, "/status/updatedReplicas").unwrap_or(0);
            (updated < replicas).then(|| format!("{updated} of {replicas} replicas updated"))
        }
        "DaemonSet" => {
            if outdated.is_some() {
                return outdated;
            }
            let desired = int(object, "/status/desiredNumberScheduled").unwrap_or(0);
            let updated = int(object, "/status/updatedNumberScheduled").unwrap_or(0);
            (updated < desired).then(|| format!("{updated} of {desired} replicas updated"))
        }
        _ => None,
    }
}

fn daemon_set_health(object: &Value) -> Result<(), String> {
    observed_generation_current(object)?;
    let desired = int(object, "/status/desiredNumberScheduled").unwrap_or(0);
    let current = int(object, "/status/currentNumberScheduled").unwrap_or(0);
    if current < desired {
        return Err(format!("not enough scheduled pods ({current}/{desired})"));
    }
    let misscheduled = int(object, "/status/numberMisscheduled").unwrap_or(0);
    if misscheduled > 0 {
        return Err(format!("misscheduled pods found ({misscheduled})"));
    }
    let unavailable = int(object, "/status/numberUnavailable")
        .unwrap_or_else(|| desired - int(object, "/status/numberAvailable").unwrap_or(0))
        .max(0);
    let updated = int(object, "/status/updatedNumberScheduled").unwrap_or(0);
    let rolling = object
        .pointer("/spec/updateStrategy/type")
        .and_then(Value::as_str)
        .is_none_or(|t| t == "RollingUpdate");
    let allowed = if rolling && updated < desired {
        max_unavailable(
            object.pointer("/spec/updateStrategy/rollingUpdate/maxUnavailable"),
            desired,
        )
    } else {
        0
    };
    if unavailable > allowed {
        return Err(format!(
            "too many unavailable pods found ({unavailable}/{desired}, only max. {allowed} unavailable pods allowed)"
        ));
    }
    Ok(())
}

/// `maxUnavailable` as a count: an integer, or a percentage of `desired` rounded down; default 1.
fn max_unavailable(value: Option<&Value>, desired: i64) -> i64 {
    match value {
        Some(Value::Number(number)) => number.as_i64().unwrap_or(1),
        Some(Value::String(text)) => text
            .strip_suffix('%')
            .and_then(|p| p.trim().parse::<i64>().ok())
            .map(|percent| desired * percent / 100)
            .unwrap_or(1),
        _ => 1,
    }
}

fn observed_generation_current(object: &Value) -> Result<(), String> {
    let generation = int(object, "/metadata/generation").unwrap_or(0);
    let observed = int(object, "/status/observedGeneration").unwrap_or(0);
    if observed < generation {
        return Err(format!(
            "observed generation outdated ({observed}/{generation})"
        ));
    }
    Ok(())
}

fn condition<'a>(object: &'a Value, type_: &str) -> Option<&'a Value> {
    object
        .pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

/// The condition must have `status`; when `required`, it must also be present.
fn require_condition(
    object: &Value,
    type_: &str,
    status: &str,
    required: bool,
) -> Result<(), String> {
    match condition(object, type_) {
        None if required => Err(format!("condition {type_:?} is missing")),
        None => Ok(()),
        Some(c) if c.get("status").and_then(Value::as_str) == Some(status) => Ok(()),
        Some(c) => Err(format!(
            "condition {type_:?} has invalid status {} (expected {status}) due to {}: {}",
            c.get("status").and_then(Value::as_str).unwrap_or(""),
            c.get("reason").and_then(Value::as_str).unwrap_or(""),
            c.get("message").and_then(Value::as_str).unwrap_or("")
        )),
    }
}

/// The condition, if present, must be `False`.
fn forbid_condition(object: &Value, type_: &str) -> Result<(), String> {
    match condition(object, type_) {
        Some(c) if c.get("status").and_then(Value::as_str) != Some("False") => Err(format!(
            "condition {type_:?} has invalid status {} (expected False) due to {}: {}",
            c.get("status").and_then(Value::as_str).unwrap_or(""),
            c.get("reason").and_then(Value::as_str).unwrap_or(""),
            c.get("message").and_then(Value::as_str).unwrap_or("")
        )),
        _ => Ok(()),
    }
}

fn int(object: &Value, pointer: &str) -> Option<i64> {
    object.pointer(pointer).and_then(Value::as_i64)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn deployment(
        generation: i64,
        observed: i64,
        available: &str,
        progressing_reason: &str,
    ) -> Value {
        json!({
            "metadata": {"name": "d", "namespace": "n", "generation": generation},
            "spec": {"replicas": 2},
            "status": {
                "observedGeneration": observed, "updatedReplicas": 2, "availableReplicas": 2,
                "conditions": [
                    {"type": "Available", "status": available, "reason": "R", "message": "m"},
                    {"type": "Progressing", "status": "True", "reason": progressing_reason, "message": "p"}
                ]
            }
        })
    }

    #[test]
    fn deployment_health_follows_conditions_and_generation() {
        let cases = [
            (deployment(1, 1, "True", "NewReplicaSetAvailable"), true),
            (deployment(2, 1, "True", "NewReplicaSetAvailable"), false),
            (deployment(1, 1, "False", "NewReplicaSetAvailable"), false),
            (
                json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1}}),
                false,
            ),
        ];
        for (object, expected) in cases {
            assert_eq!(
                check_health("apps", "Deployment", &object).is_ok(),
                expected,
                "{object}"
            );
        }
    }

    #[test]
    fn deployment_is_progressing_until_new_replica_set_is_available() {
        assert_eq!(
            check_progressing(
                "apps",
                "Deployment",
                &deployment(1, 1, "True", "NewReplicaSetAvailable")
            ),
            None
        );
        assert_eq!(
            check_progressing(
                "apps",
                "Deployment",
                &deployment(1, 1, "True", "ReplicaSetUpdated")
            ),
            Some("p".to_owned())
        );
        let mut scaling = deployment(1, 1, "True", "NewReplicaSetAvailable");
        scaling["status"]["availableReplicas"] = json!(1);
        assert!(check_progressing("apps", "Deployment", &scaling).is_some());
    }

    #[test]
    fn statefulset_daemonset_and_job_checks_match_table() {
        let sts = |ready: i64| json!({"metadata": {"generation": 1}, "spec": {"replicas": 2}, "status": {"observedGeneration": 1, "readyReplicas": ready, "updatedReplicas": 2}});
        assert!(check_health("apps", "StatefulSet", &sts(2)).is_ok());
        assert!(check_health("apps", "StatefulSet", &sts(1)).is_err());
        let ds = |unavailable: i64, updated: i64| json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%"}}}, "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "currentNumberScheduled": 4, "numberMisscheduled": 0, "numberUnavailable": unavailable, "updatedNumberScheduled": updated}});
        assert!(check_health("apps", "DaemonSet", &ds(0, 4)).is_ok());
        assert!(check_health("apps", "DaemonSet", &ds(2, 2)).is_ok());
        assert!(check_health("apps", "DaemonSet", &ds(3, 2)).is_err());
        assert!(check_health("apps", "DaemonSet", &ds(1, 4)).is_err());
        assert!(check_progressing("apps", "DaemonSet", &ds(0, 2)).is_some());
        let job = |status: &str| json!({"status": {"conditions": [{"type": "Failed", "status": status}]}});
        assert!(check_health("batch", "Job", &job("False")).is_ok());
        assert!(check_health("batch", "Job", &job("True")).is_err());
        assert!(check_health("batch", "Job", &json!({})).is_ok());
    }

    #[test]
    fn crd_needs_names_accepted_and_established() {
        let crd = |established: &str| {
            json!({"status": {"conditions": [
            {"type": "NamesAccepted", "status": "True"}, {"type": "Established", "status": established}]}})
        };
        assert!(
            check_health(
                "apiextensions.k8s.io",
                "CustomResourceDefinition",
                &crd("True")
            )
            .is_ok()
        );
        assert!(
            check_health(
                "apiextensions.k8s.io",
                "CustomResourceDefinition",
                &crd("False")
            )
            .is_err()
        );
        assert!(
            check_health(
                "apiextensions.k8s.io",
                "CustomResourceDefinition",
                &json!({})
            )
            .is_err()
        );
    }

    #[test]
    fn kinds_without_check_are_healthy_and_load_balancers_need_ingress() {
        assert!(check_health("", "ConfigMap", &json!({})).is_ok());
        assert!(check_health("", "Service", &json!({"spec": {"type": "ClusterIP"}})).is_ok());
        assert!(check_health("", "Service", &json!({"spec": {"type": "LoadBalancer"}})).is_err());
    }

    #[test]
    fn healthy_reports_first_missing_or_unhealthy_object() {
        let observed = |kind: &str, object: Option<Value>| Observed {
            group: if kind == "Deployment" {
                "apps".into()
            } else {
                String::new()
            },
            kind: kind.into(),
            namespace: "n".into(),
            name: "x".into(),
            object,
        };
        let verdict = healthy(&[
            observed("ConfigMap", Some(json!({}))),
            observed("Secret", None),
        ]);
        assert_eq!(
            verdict,
            Verdict {
                status: false,
                reason: "SecretMissing".into(),
                message: "Required Secret \"x\" in namespace \"n\" is missing".into()
            }
        );
        let verdict = healthy(&[observed("Deployment", Some(deployment(1, 1, "False", "x")))]);
        assert_eq!(verdict.reason, "DeploymentUnhealthy");
        assert!(
            verdict
                .message
                .starts_with("Deployment \"n/x\" is unhealthy: condition \"Available\""),
            "{}",
            verdict.message
        );
        assert!(healthy(&[observed("ConfigMap", Some(json!({})))]).status);
    }

    #[test]
    fn skip_health_check_needs_exact_true() {
        let mut object = deployment(1, 1, "False", "x");
        object["metadata"]["annotations"] =
            json!({"resources.gardener.cloud/skip-health-check": "True"});
        let observed = |object: Value| Observed {
            group: "apps".into(),
            kind: "Deployment".into(),
            namespace: "n".into(),
            name: "x".into(),
            object: Some(object),
        };
        assert!(!healthy(&[observed(object.clone())]).status);
        object["metadata"]["annotations"] =
            json!({"resources.gardener.cloud/skip-health-check": "true"});
        assert!(healthy(&[observed(object.clone())]).status);
        assert!(!progressing(&[observed(object)]).status);
    }
}
