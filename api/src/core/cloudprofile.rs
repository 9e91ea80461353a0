//! `CloudProfile` (cluster-scoped) and `NamespacedCloudProfile` (namespaced): kept as raw JSON;
//! the agent copies them into `Cluster` objects, the garden controller computes their status.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Extra, schema};

/// Spec of a CloudProfile, kept verbatim (`type`, `kubernetes`, `machineImages`, ...).
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

impl JsonSchema for CloudProfileSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CloudProfileSpec".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schema::raw_object(generator)
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

impl JsonSchema for CloudProfileStatus {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CloudProfileStatus".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schema::raw_object(generator)
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

impl JsonSchema for NamespacedCloudProfileSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NamespacedCloudProfileSpec".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schema::raw_object(generator)
    }
}

/// Status of a NamespacedCloudProfile.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamespacedCloudProfileStatus {
    /// The merged CloudProfile spec (what a Cluster embeds for shoots using this profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_object")]
    pub cloud_profile_spec: Option<serde_json::Value>,
    /// Last observed generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Unmodelled fields.
    #[serde(flatten)]
    pub extra: Extra,
}
