//! `CloudProfile` (cluster-scoped) and `NamespacedCloudProfile` (namespaced). seedlet keeps their
//! fields as raw JSON (the agent copies them verbatim into `Cluster` objects, the garden controller
//! computes their status), while their schemas come from the typed shapes in [`crate::typed`], so
//! the CRDs describe, validate and prune every field gardener-apiserver knows.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::Extra;

/// Spec of a CloudProfile, kept verbatim (`type`, `kubernetes`, `machineImages`, ...); its
/// schema is [`crate::typed::CloudProfileSpec`].
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "core.gardener.cloud",
    version = "v1beta1",
    kind = "CloudProfile",
    status = "CloudProfileStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "cprofile",
    shortname = "cpfl",
    doc = "A CloudProfile lists what shoots of one provider may use.",
    printcolumn(name = "Type", type_ = "string", json_path = ".spec.type"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct CloudProfileSpec {
    /// All spec fields.
    #[serde(flatten)]
    pub fields: Extra,
}

/// The schema of [`crate::typed::CloudProfileSpec`]: the Rust side keeps the object verbatim.
impl JsonSchema for CloudProfileSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CloudProfileSpec".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        crate::typed::CloudProfileSpec::json_schema(generator)
    }
}

/// Status of a CloudProfile: the current classification of each version
/// (`kubernetes.versions[]`, `machineImages[].versions[]`), kept verbatim.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CloudProfileStatus {
    /// All status fields.
    #[serde(flatten)]
    pub fields: Extra,
}

/// The schema of [`crate::typed::CloudProfileStatus`]: the Rust side keeps the object verbatim.
impl JsonSchema for CloudProfileStatus {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CloudProfileStatus".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        crate::typed::CloudProfileStatus::json_schema(generator)
    }
}

impl CloudProfileSpec {
    /// The provider type (`spec.type`), if present.
    pub fn provider_type(&self) -> Option<&str> {
        self.fields.get("type").and_then(serde_json::Value::as_str)
    }
}

/// Spec of a NamespacedCloudProfile, kept verbatim (`parent`, overrides).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "core.gardener.cloud",
    version = "v1beta1",
    kind = "NamespacedCloudProfile",
    namespaced,
    status = "NamespacedCloudProfileStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "nscpfl",
    doc = "A NamespacedCloudProfile extends a CloudProfile for one project.",
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct NamespacedCloudProfileSpec {
    /// All spec fields.
    #[serde(flatten)]
    pub fields: Extra,
}

/// The schema of [`crate::typed::NamespacedCloudProfileSpec`]: the Rust side keeps the object verbatim.
impl JsonSchema for NamespacedCloudProfileSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NamespacedCloudProfileSpec".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        crate::typed::NamespacedCloudProfileSpec::json_schema(generator)
    }
}

/// Status of a NamespacedCloudProfile.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamespacedCloudProfileStatus {
    /// The merged CloudProfile spec (what a Cluster embeds for shoots using this profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::typed::CloudProfileSpec>")]
    pub cloud_profile_spec: Option<serde_json::Value>,
    /// Last observed generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}
