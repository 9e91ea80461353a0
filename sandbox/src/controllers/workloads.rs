//! Workload status simulation (like kwok): Deployments, StatefulSets, DaemonSets, ReplicaSets and Jobs
//! report a ready status for their current generation, so health checks go green without nodes.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::object_ref::ObjectRef;
use crate::registry::generic::{self, Ownership, Writer};
use crate::resources::Subresource;
use crate::storage::State;

/// Storage keys of the simulated workload kinds.
pub const KINDS: &[&str] = &[
    "deployments.apps",
    "statefulsets.apps",
    "daemonsets.apps",
    "replicasets.apps",
    "jobs.batch",
];

/// Simulates the status of the queued workloads; returns whether anything was written.
pub fn pass(state: &mut State, queued: &BTreeSet<ObjectRef>, writer: &Writer<'_>) -> bool {
    let registry = state.registry();
    let mut changed = false;
    for target in queued {
        let Some(rt) = registry.by_storage_key(&target.key) else {
            continue;
        };
        let Some(object) = target.fetch(state) else {
            continue;
        };
        if object.pointer("/metadata/deletionTimestamp").is_some() {
            continue;
        }
        let Some(status) = desired_status(&rt.kind, &object, &crate::object::now_rfc3339()) else {
            continue;
        };
        if status_matches(object.get("status"), &status) {
            continue;
        }
        let mut updated = (*object).clone();
        updated["status"] = status;
        changed |= generic::update(
            state,
            &rt,
            &target.namespace,
            &target.name,
            &Subresource::Status,
            updated,
            writer,
            Ownership::Record,
        )
        .is_ok();
    }
    changed
}

/// Whether the current status already says what the desired one says (times aside).
fn status_matches(current: Option<&Value>, desired: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(conditions) = v.get_mut("conditions").and_then(Value::as_array_mut) {
            for c in conditions.iter_mut().filter_map(Value::as_object_mut) {
                c.remove("lastTransitionTime");
                c.remove("lastUpdateTime");
                c.remove("lastProbeTime");
            }
        }
        for key in ["startTime", "completionTime"] {
            v.as_object_mut().map(|m| m.remove(key));
        }
        v
    };
    current.is_some_and(|c| strip(c) == strip(desired))
}

/// The ready status a controller would report for this object's current generation.
pub fn desired_status(kind: &str, object: &Value, now: &str) -> Option<Value> {
    let generation = object
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let replicas = object
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let condition = |ty: &str, reason: &str, message: String| json!({"type": ty, "status": "True", "lastUpdateTime": now, "lastTransitionTime": now, "reason": reason, "message": message});
    Some(match kind {
        "Deployment" => json!({
            "observedGeneration": generation,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
            "conditions": [
                condition("Available", "MinimumReplicasAvailable", "Deployment has minimum availability.".into()),
                condition("Progressing", "NewReplicaSetAvailable", format!("ReplicaSet \"{name}\" has successfully progressed.")),
            ],
        }),
        "StatefulSet" => json!({
            "observedGeneration": generation,
            "replicas": replicas,
            "readyReplicas": replicas,
            "currentReplicas": replicas,
            "updatedReplicas": replicas,
            "availableReplicas": replicas,
            "currentRevision": format!("{name}-{generation}"),
            "updateRevision": format!("{name}-{generation}"),
            "collisionCount": 0,
        }),
        "ReplicaSet" => json!({
            "observedGeneration": generation,
            "replicas": replicas,
            "fullyLabeledReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
        }),
        "DaemonSet" => json!({
            "observedGeneration": generation,
            "currentNumberScheduled": 1,
            "desiredNumberScheduled": 1,
            "numberMisscheduled": 0,
            "numberReady": 1,
            "numberAvailable": 1,
            "updatedNumberScheduled": 1,
        }),
        "Job" => {
            let completions = object
                .pointer("/spec/completions")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            let start = object
                .pointer("/status/startTime")
                .and_then(Value::as_str)
                .unwrap_or(now)
                .to_string();
            json!({
                "startTime": start,
                "completionTime": now,
                "succeeded": completions,
                "ready": 0,
                "conditions": [{"type": "Complete", "status": "True", "lastProbeTime": now, "lastTransitionTime": now}],
            })
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_becomes_available_for_its_generation() {
        let deployment =
            json!({"metadata": {"name": "web", "generation": 3}, "spec": {"replicas": 2}});
        let status =
            desired_status("Deployment", &deployment, "t").expect("deployments are simulated");
        assert_eq!(status["observedGeneration"], 3);
        assert_eq!(status["readyReplicas"], 2);
        assert_eq!(status["conditions"][0]["type"], "Available");
    }

    #[test]
    fn unchanged_status_is_not_rewritten() {
        let deployment = json!({"metadata": {"name": "web", "generation": 1}, "spec": {}});
        let first = desired_status("Deployment", &deployment, "t1").expect("simulated");
        let second = desired_status("Deployment", &deployment, "t2").expect("simulated");
        assert!(status_matches(Some(&first), &second));
        assert!(desired_status("ConfigMap", &deployment, "t").is_none());
    }
}
