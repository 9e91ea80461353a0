//! Kinds with few rules: events and nodes (selectable fields), the RBAC kinds (a name rule),
//! priority classes (one default).

use serde_json::Value;

use super::strategy::{Context, Strategy};
use crate::registry::validation::NameRule;
use crate::resources::{ResourceType, Subresource};
use crate::status::ApiError;

/// Event rules: the `involvedObject` fields, `reason`, `source`, `type` and friends are selectable.
pub struct Events;

impl Strategy for Events {
    fn selectable_fields<'r>(&self, _rt: &'r ResourceType) -> Vec<&'r str> {
        vec![
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ]
    }
}

/// Node rules.
pub struct Nodes;

impl Strategy for Nodes {
    fn selectable_fields<'r>(&self, _rt: &'r ResourceType) -> Vec<&'r str> {
        vec!["spec.unschedulable"]
    }
}

/// Roles, bindings and their cluster-wide forms: names are any path segment (`system:...`).
pub struct Rbac;

impl Strategy for Rbac {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }
}

/// PriorityClasses: `preemptionPolicy` defaults to `PreemptLowerPriority`, as the scheduling
/// API's defaulting does.
pub struct PriorityClasses;

impl Strategy for PriorityClasses {
    fn prepare_create(&self, _ctx: &Context<'_>, object: &mut Value) -> Result<(), ApiError> {
        default_preemption_policy(object);
        Ok(())
    }

    fn prepare_update(
        &self,
        _ctx: &Context<'_>,
        _old: &Value,
        new: &mut Value,
        _subresource: &Subresource,
    ) -> Result<(), ApiError> {
        default_preemption_policy(new);
        Ok(())
    }
}

fn default_preemption_policy(object: &mut Value) {
    if let Some(map) = object.as_object_mut() {
        map.entry("preemptionPolicy")
            .or_insert_with(|| Value::from("PreemptLowerPriority"));
    }
}
