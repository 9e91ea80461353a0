//! Workload kinds: the pod status a fresh pod gets, replica and deployment-strategy defaults, and
//! the selectable fields of pods, replica sets and jobs.

use serde_json::{Value, json};

use super::strategy::{Context, Strategy};
use crate::resources::{ResourceType, Subresource};
use crate::status::ApiError;

/// Pod rules.
pub struct Pods;

impl Strategy for Pods {
    fn selectable_fields<'r>(&self, _rt: &'r ResourceType) -> Vec<&'r str> {
        vec![
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ]
    }

    fn prepare_create(&self, _ctx: &Context<'_>, object: &mut Value) -> Result<(), ApiError> {
        object["status"] = json!({"phase": "Pending", "qosClass": "BestEffort"});
        Ok(())
    }
}

/// Deployment rules.
pub struct Deployments;

impl Strategy for Deployments {
    fn prepare_create(&self, _ctx: &Context<'_>, object: &mut Value) -> Result<(), ApiError> {
        deployment_defaults(object);
        Ok(())
    }

    fn prepare_update(
        &self,
        _ctx: &Context<'_>,
        _old: &Value,
        new: &mut Value,
        _subresource: &Subresource,
    ) -> Result<(), ApiError> {
        deployment_defaults(new);
        Ok(())
    }
}

/// StatefulSet and ReplicaSet rules: `spec.replicas` defaults to 1 (and replica sets can be
/// selected by `status.replicas`).
pub struct Replicated {
    /// Whether `status.replicas` is selectable (replica sets).
    pub replicas_selectable: bool,
}

impl Strategy for Replicated {
    fn selectable_fields<'r>(&self, _rt: &'r ResourceType) -> Vec<&'r str> {
        if self.replicas_selectable {
            vec!["status.replicas"]
        } else {
            Vec::new()
        }
    }

    fn prepare_create(&self, _ctx: &Context<'_>, object: &mut Value) -> Result<(), ApiError> {
        replicas_default(object);
        Ok(())
    }

    fn prepare_update(
        &self,
        _ctx: &Context<'_>,
        _old: &Value,
        new: &mut Value,
        _subresource: &Subresource,
    ) -> Result<(), ApiError> {
        replicas_default(new);
        Ok(())
    }
}

/// Job rules.
pub struct Jobs;

impl Strategy for Jobs {
    fn selectable_fields<'r>(&self, _rt: &'r ResourceType) -> Vec<&'r str> {
        vec!["status.successful"]
    }
}

fn deployment_defaults(object: &mut Value) {
    replicas_default(object);
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    spec.entry("strategy").or_insert_with(|| {
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    });
    spec.entry("revisionHistoryLimit").or_insert(json!(10));
    spec.entry("progressDeadlineSeconds").or_insert(json!(600));
}

fn replicas_default(object: &mut Value) {
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
        spec.entry("replicas").or_insert(json!(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_defaults_keep_given_values() {
        let mut object = json!({"spec": {"replicas": 3, "revisionHistoryLimit": 2}});
        deployment_defaults(&mut object);
        assert_eq!(object["spec"]["replicas"], 3);
        assert_eq!(object["spec"]["revisionHistoryLimit"], 2);
        assert_eq!(object["spec"]["progressDeadlineSeconds"], 600);
        assert_eq!(object["spec"]["strategy"]["type"], "RollingUpdate");
    }
}
