//! `security.gardener.cloud/v1alpha1`: `WorkloadIdentity`, and the `credentialsRef` of a
//! CredentialsBinding (whose type is [`crate::core::CredentialsBinding`]).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::Extra;

/// `security.gardener.cloud`.
pub const GROUP: &str = "security.gardener.cloud";
/// `security.gardener.cloud/v1alpha1`.
pub const V1ALPHA1: &str = "security.gardener.cloud/v1alpha1";

/// `credentialsRef` of a CredentialsBinding: a Secret, InternalSecret or WorkloadIdentity.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[serde(rename_all = "camelCase")]
pub struct CredentialsReference {
    /// `v1`, `core.gardener.cloud/v1beta1` or `security.gardener.cloud/v1alpha1`.
    #[serde(default)]
    pub api_version: String,
    /// `Secret`, `InternalSecret` or `WorkloadIdentity`.
    #[serde(default)]
    pub kind: String,
    /// Namespace.
    #[serde(default)]
    pub namespace: String,
    /// Name.
    #[serde(default)]
    pub name: String,
}

/// Spec of a WorkloadIdentity (`audiences`, `targetSystem`), kept verbatim; its schema is
/// [`crate::typed::WorkloadIdentitySpec`].
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "security.gardener.cloud",
    version = "v1alpha1",
    kind = "WorkloadIdentity",
    namespaced,
    derive = "PartialEq",
    derive = "Default",
    status = "crate::typed::WorkloadIdentityStatus",
    doc = "A WorkloadIdentity is an identity for workloads of a shoot towards an external system."
)]
pub struct WorkloadIdentitySpec {
    /// All spec fields.
    #[serde(flatten)]
    pub fields: Extra,
}

impl JsonSchema for WorkloadIdentitySpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "WorkloadIdentitySpec".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        crate::typed::WorkloadIdentitySpec::json_schema(generator)
    }
}
