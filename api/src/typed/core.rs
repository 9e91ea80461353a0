//! Typed fields of Project, ExposureClass, the bindings and the ManagedSeedSet shoot template (`core.gardener.cloud`).
//! Every field is optional: gardener-apiserver accepts objects without them, and a field that is
//! absent stays absent when seedlet writes an object back.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ObjectReference as K8sObjectReference;
use k8s_openapi::api::core::v1::SecretReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A resource kind whose deletion needs a second person's confirmation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DualApprovalForDeletion {
    /// Resource the rule applies to (only `shoots` today).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Objects the rule applies to; an empty selector matches all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Whether deletions by service accounts need the approval too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_service_accounts: Option<bool>,
}

/// How shoot control planes of this class are exposed and which seeds can do so.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExposureClass {
    /// Name of the exposure handler in the seed that implements this class; immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handler: Option<String>,
    /// Seed selection for shoots of this class; immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<ExposureClassScheduling>,
}

/// Which seeds can host shoots of an exposure class.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExposureClassScheduling {
    /// Seeds a shoot of this class may be scheduled to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_selector: Option<SeedSelector>,
    /// Seed taints shoots of this class tolerate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<Vec<Toleration>>,
}

/// Seed-taint tolerations of a project.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectTolerations {
    /// Tolerations added to every new shoot of the project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<Vec<Toleration>>,
    /// Tolerations shoots of the project are allowed to carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whitelist: Option<Vec<Toleration>>,
}

/// A SecretBinding lets shoots use a provider Secret and the quotas that come with it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretBinding {
    /// The provider Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretReference>,
    /// Quotas that limit the shoots using this binding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quotas: Option<Vec<K8sObjectReference>>,
    /// The provider type(s) the Secret is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<SecretBindingProvider>,
}

/// Provider type(s) of a binding.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretBindingProvider {
    /// Provider type, or several separated by commas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

/// Selects seeds by label and provider type.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSelector {
    /// Labels a seed must carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_labels: Option<BTreeMap<String, String>>,
    /// Label requirements a seed must meet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_expressions: Option<Vec<LabelSelectorRequirement>>,
    /// Provider types of the accepted seeds; `*` accepts all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_types: Option<Vec<String>>,
}

/// A Shoot's metadata and spec, used as a template.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootTemplate {
    /// Metadata of the Shoots created from this template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Spec of the Shoots created from this template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<crate::core::ShootSpec>,
}

/// Tolerates a seed taint by key and optional value.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    /// Key of the tolerated taint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Value of the tolerated taint; any value when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}
