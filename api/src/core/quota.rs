//! `Quota` (core.gardener.cloud/v1beta1) and the bindings that list quotas: `SecretBinding`
//! (core.gardener.cloud/v1beta1) and `CredentialsBinding` (security.gardener.cloud/v1alpha1).
//! The bindings have no `spec` (their fields sit at the top level), so their `kube::Resource`
//! impls and CRDs are written out here instead of derived.

use std::borrow::Cow;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResource;
use kube::api::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::Extra;

/// Spec of a Quota: limits for the shoots of the bindings that list it.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "core.gardener.cloud",
    version = "v1beta1",
    kind = "Quota",
    namespaced,
    derive = "PartialEq",
    derive = "Default",
    shortname = "squota",
    doc = "A Quota limits the resources and lifetime of the shoots of bindings that list it.",
    printcolumn(
        name = "Lifetime Days",
        type_ = "integer",
        json_path = ".spec.clusterLifetimeDays"
    ),
    printcolumn(name = "Scope", type_ = "string", json_path = ".spec.scope.kind"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct QuotaSpec {
    /// Days a shoot of this quota may live before it is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_lifetime_days: Option<i32>,
    /// Resource limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        with = "Option<std::collections::BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>"
    )]
    pub metrics: Option<serde_json::Value>,
    /// `Project` or `Secret` (apiVersion and kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<k8s_openapi::api::core::v1::ObjectReference>")]
    pub scope: Option<serde_json::Value>,
}

/// A `quotas[]` entry of a binding.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct QuotaReference {
    /// Quota name.
    pub name: String,
    /// Quota namespace (the binding's when empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `core.gardener.cloud/v1beta1` `SecretBinding`: a provider Secret and its quotas.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SecretBinding {
    /// Object metadata.
    pub metadata: ObjectMeta,
    /// Quotas that apply to the shoots using this binding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quotas: Vec<QuotaReference>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `security.gardener.cloud/v1alpha1` `CredentialsBinding`: provider credentials and quotas.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CredentialsBinding {
    /// Object metadata.
    pub metadata: ObjectMeta,
    /// Quotas that apply to the shoots using this binding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quotas: Vec<QuotaReference>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    pub extra: Extra,
}

macro_rules! top_level_resource {
    ($type:ty, $group:literal, $version:literal, $kind:literal, $plural:literal) => {
        impl kube::Resource for $type {
            type DynamicType = ();
            type Scope = NamespaceResourceScope;

            fn kind(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($kind)
            }
            fn group(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($group)
            }
            fn version(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($version)
            }
            fn plural(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($plural)
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

top_level_resource!(
    SecretBinding,
    "core.gardener.cloud",
    "v1beta1",
    "SecretBinding",
    "secretbindings"
);
top_level_resource!(
    CredentialsBinding,
    "security.gardener.cloud",
    "v1alpha1",
    "CredentialsBinding",
    "credentialsbindings"
);

impl SecretBinding {
    /// The binding's CRD (for gardens without gardener-apiserver).
    pub fn crd() -> CustomResourceDefinition {
        binding_crd::<SecretBinding, crate::typed::SecretBinding>(".secretRef.name")
    }
}

impl CredentialsBinding {
    /// The binding's CRD (for gardens without gardener-apiserver).
    pub fn crd() -> CustomResourceDefinition {
        binding_crd::<CredentialsBinding, crate::typed::CredentialsBinding>(".credentialsRef.name")
    }
}

/// A binding CRD: its top-level fields typed by `S`, with gardener's printer columns.
fn binding_crd<K: kube::Resource<DynamicType = ()>, S: JsonSchema>(
    reference_path: &str,
) -> CustomResourceDefinition {
    crate::crds::toplevel_crd::<K, S>(&crate::crds::TopLevel {
        namespaced: true,
        short: &[],
        columns: &[
            ("Provider", "string", ".provider.type"),
            ("Credentials", "string", reference_path),
            ("Age", "date", ".metadata.creationTimestamp"),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_read_top_level_quotas_and_round_trip_other_fields() {
        let binding: SecretBinding = serde_json::from_value(serde_json::json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "SecretBinding",
            "metadata": {"name": "b", "namespace": "garden-dev"},
            "secretRef": {"name": "s"},
            "quotas": [{"name": "q", "namespace": "garden"}, {"name": "local"}],
        }))
        .expect("binding");
        assert_eq!(binding.quotas.len(), 2);
        assert_eq!(binding.quotas[1].namespace, None);
        let back = serde_json::to_value(&binding).expect("serialises");
        assert_eq!(back["secretRef"]["name"], "s");
        assert_eq!(
            <CredentialsBinding as kube::Resource>::url_path(&(), Some("garden-dev")),
            "/apis/security.gardener.cloud/v1alpha1/namespaces/garden-dev/credentialsbindings"
        );
    }

    #[test]
    fn binding_crds_are_structural_and_named_after_their_kind() {
        for crd in [SecretBinding::crd(), CredentialsBinding::crd()] {
            assert!(
                crate::crds::structural_violations(&crd).is_empty(),
                "{crd:?}"
            );
            assert_eq!(crd.spec.versions.len(), 1);
        }
        assert_eq!(
            CredentialsBinding::crd().metadata.name.as_deref(),
            Some("credentialsbindings.security.gardener.cloud")
        );
    }
}
