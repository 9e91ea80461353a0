//! Kinds whose only rules are a name rule or selectable fields: events, nodes and the RBAC kinds.

use super::strategy::Strategy;
use crate::registry::validation::NameRule;
use crate::resources::ResourceType;

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
