//! The API types of the built-in kinds the sandbox serves, as OpenAPI definitions generated from
//! k8s-openapi's schemas (named like kube-apiserver's: `io.k8s.api.core.v1.ConfigMap`).

use k8s_openapi::api::{
    admissionregistration, apps, authorization, autoscaling, batch, certificates, coordination,
    core, discovery, networking, policy, rbac, scheduling, storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
use schemars::{JsonSchema, SchemaGenerator};

fn add<T: JsonSchema>(generator: &mut SchemaGenerator) -> String {
    generator.subschema_for::<T>();
    T::schema_name().into_owned()
}

/// Adds the definition of a built-in kind (and what it references) to `generator`; returns its
/// name, or `None` for a kind without a k8s-openapi type.
pub fn add_kind(generator: &mut SchemaGenerator, group: &str, kind: &str) -> Option<String> {
    use core::v1 as c;
    Some(match (group, kind) {
        ("", "Namespace") => add::<c::Namespace>(generator),
        ("", "Secret") => add::<c::Secret>(generator),
        ("", "ConfigMap") => add::<c::ConfigMap>(generator),
        ("", "ServiceAccount") => add::<c::ServiceAccount>(generator),
        ("", "Event") => add::<c::Event>(generator),
        ("", "Service") => add::<c::Service>(generator),
        ("", "Endpoints") => add::<c::Endpoints>(generator),
        ("", "Pod") => add::<c::Pod>(generator),
        ("", "Node") => add::<c::Node>(generator),
        ("", "PersistentVolumeClaim") => add::<c::PersistentVolumeClaim>(generator),
        ("", "PersistentVolume") => add::<c::PersistentVolume>(generator),
        ("", "ResourceQuota") => add::<c::ResourceQuota>(generator),
        ("", "LimitRange") => add::<c::LimitRange>(generator),
        ("apps", "Deployment") => add::<apps::v1::Deployment>(generator),
        ("apps", "StatefulSet") => add::<apps::v1::StatefulSet>(generator),
        ("apps", "DaemonSet") => add::<apps::v1::DaemonSet>(generator),
        ("apps", "ReplicaSet") => add::<apps::v1::ReplicaSet>(generator),
        ("apps", "ControllerRevision") => add::<apps::v1::ControllerRevision>(generator),
        ("batch", "Job") => add::<batch::v1::Job>(generator),
        ("batch", "CronJob") => add::<batch::v1::CronJob>(generator),
        ("autoscaling", "HorizontalPodAutoscaler") => {
            add::<autoscaling::v2::HorizontalPodAutoscaler>(generator)
        }
        ("coordination.k8s.io", "Lease") => add::<coordination::v1::Lease>(generator),
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            add::<certificates::v1::CertificateSigningRequest>(generator)
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            add::<apiextensions::v1::CustomResourceDefinition>(generator)
        }
        ("rbac.authorization.k8s.io", "Role") => add::<rbac::v1::Role>(generator),
        ("rbac.authorization.k8s.io", "RoleBinding") => add::<rbac::v1::RoleBinding>(generator),
        ("rbac.authorization.k8s.io", "ClusterRole") => add::<rbac::v1::ClusterRole>(generator),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            add::<rbac::v1::ClusterRoleBinding>(generator)
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            add::<admissionregistration::v1::ValidatingWebhookConfiguration>(generator)
        }
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            add::<admissionregistration::v1::MutatingWebhookConfiguration>(generator)
        }
        ("scheduling.k8s.io", "PriorityClass") => add::<scheduling::v1::PriorityClass>(generator),
        ("policy", "PodDisruptionBudget") => add::<policy::v1::PodDisruptionBudget>(generator),
        ("networking.k8s.io", "NetworkPolicy") => add::<networking::v1::NetworkPolicy>(generator),
        ("networking.k8s.io", "Ingress") => add::<networking::v1::Ingress>(generator),
        ("networking.k8s.io", "IngressClass") => add::<networking::v1::IngressClass>(generator),
        ("storage.k8s.io", "StorageClass") => add::<storage::v1::StorageClass>(generator),
        ("discovery.k8s.io", "EndpointSlice") => add::<discovery::v1::EndpointSlice>(generator),
        ("authorization.k8s.io", "SubjectAccessReview") => {
            add::<authorization::v1::SubjectAccessReview>(generator)
        }
        ("authorization.k8s.io", "SelfSubjectAccessReview") => {
            add::<authorization::v1::SelfSubjectAccessReview>(generator)
        }
        ("authorization.k8s.io", "SelfSubjectRulesReview") => {
            add::<authorization::v1::SelfSubjectRulesReview>(generator)
        }
        ("authorization.k8s.io", "LocalSubjectAccessReview") => {
            add::<authorization::v1::LocalSubjectAccessReview>(generator)
        }
        _ => return None,
    })
}

/// The definitions every document has besides the kinds: the metadata types custom resources
/// reference.
pub fn add_common(generator: &mut SchemaGenerator) -> String {
    add::<k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>(generator)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::builtin_types;

    #[test]
    fn every_built_in_kind_has_a_definition() {
        let mut generator = SchemaGenerator::default();
        for rt in builtin_types() {
            let name = add_kind(&mut generator, &rt.group, &rt.kind);
            assert!(name.is_some(), "{} {}", rt.group, rt.kind);
        }
    }
}
