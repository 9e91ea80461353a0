//! Which strategy each kind follows, and how its lists merge and are owned.

use super::basic::{Events, Nodes, PriorityClasses, Rbac};
use super::crd::{CustomObjects, Definitions};
use super::csr::strategy::Requests;
use super::lease::Leases;
use super::namespace::Namespaces;
use super::secret::Secrets;
use super::service::Services;
use super::strategy::{Plain, Strategy};
use super::workloads::{Deployments, Jobs, Pods, Replicated};
use crate::fieldmanager::fieldpath::{BuiltinListRules, ListRules, SchemaListRules};
use crate::resources::ResourceType;

/// The strategy of a resource type.
pub fn strategy_for(rt: &ResourceType) -> &'static dyn Strategy {
    if rt.custom {
        return &CustomObjects;
    }
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Namespace") => &Namespaces,
        ("", "Secret") => &Secrets,
        ("", "Service") => &Services,
        ("", "Pod") => &Pods,
        ("", "Event") => &Events,
        ("", "Node") => &Nodes,
        ("coordination.k8s.io", "Lease") => &Leases,
        ("certificates.k8s.io", _) => &Requests,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => &Definitions,
        ("apps", "Deployment") => &Deployments,
        ("apps", "StatefulSet") => &Replicated {
            replicas_selectable: false,
        },
        ("apps", "ReplicaSet") => &Replicated {
            replicas_selectable: true,
        },
        ("batch", "Job") => &Jobs,
        ("rbac.authorization.k8s.io", _) => &Rbac,
        ("scheduling.k8s.io", "PriorityClass") => &PriorityClasses,
        _ => &Plain,
    }
}

/// How lists of this type merge and are owned.
pub fn list_rules(rt: &ResourceType) -> Box<dyn ListRules + '_> {
    match &rt.schema {
        Some(schema) => Box::new(SchemaListRules { schema }),
        None => Box::new(BuiltinListRules),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::validation::NameRule;
    use crate::resources::builtin_types;

    fn builtin(kind: &str) -> ResourceType {
        builtin_types()
            .into_iter()
            .find(|rt| rt.kind == kind)
            .unwrap_or_else(|| panic!("{kind} is built in"))
    }

    #[test]
    fn name_rules_follow_kube_apiserver() {
        for (kind, rule) in [
            ("Namespace", NameRule::Label),
            ("Service", NameRule::Dns1035),
            ("ClusterRole", NameRule::PathSegment),
            ("CertificateSigningRequest", NameRule::PathSegment),
            ("ConfigMap", NameRule::Subdomain),
        ] {
            assert_eq!(strategy_for(&builtin(kind)).name_rule(), rule, "{kind}");
        }
    }

    #[test]
    fn selectable_fields_are_per_kind() {
        for (kind, field, selectable) in [
            ("Secret", "type", true),
            ("ConfigMap", "type", false),
            ("Pod", "status.phase", true),
            ("Namespace", "status.phase", true),
            ("CertificateSigningRequest", "spec.signerName", true),
            ("ReplicaSet", "status.replicas", true),
            ("StatefulSet", "status.replicas", false),
        ] {
            let rt = builtin(kind);
            let fields = strategy_for(&rt).selectable_fields(&rt);
            assert_eq!(fields.contains(&field), selectable, "{kind} {field}");
        }
    }
}
