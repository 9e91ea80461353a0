//! Typed fields of WorkloadIdentity and CredentialsBinding (`security.gardener.cloud`).
//! Every field is optional: gardener-apiserver accepts objects without them, and a field that is
//! absent stays absent when seedlet writes an object back.

use k8s_openapi::api::core::v1::ObjectReference as K8sObjectReference;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A CredentialsBinding lets shoots use provider credentials (a Secret or a WorkloadIdentity) and the quotas that come with them.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CredentialsBinding {
    /// The provider type(s) the credentials are for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<CredentialsBindingProvider>,
    /// The Secret or WorkloadIdentity holding the credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_ref: Option<K8sObjectReference>,
    /// Quotas that limit the shoots using this binding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quotas: Option<Vec<K8sObjectReference>>,
}

/// Provider type(s) of a binding.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CredentialsBindingProvider {
    /// Provider type, or several separated by commas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

/// The external system of a WorkloadIdentity.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetSystem {
    /// Provider type of the system (for example `aws`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Provider-specific settings of the system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
}

/// The audiences and the external system a WorkloadIdentity's tokens are for.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadIdentitySpec {
    /// Audiences put into the issued tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audiences: Option<Vec<String>>,
    /// The external system the tokens are presented to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_system: Option<TargetSystem>,
}

/// What Gardener computed for a WorkloadIdentity.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadIdentityStatus {
    /// The `sub` claim of the issued tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<String>,
}
