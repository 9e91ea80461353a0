//! Typed fields of ManagedSeed, ManagedSeedSet and Gardenlet (`seedmanagement.gardener.cloud`): the gardenlet deployment and update strategy.
//! Every field is optional: gardener-apiserver accepts objects without them, and a field that is
//! absent stays absent when seedlet writes an object back.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::EnvVar;
use k8s_openapi::api::core::v1::LocalObjectReference;
use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::api::core::v1::Toleration as K8sToleration;
use k8s_openapi::api::core::v1::Volume;
use k8s_openapi::api::core::v1::VolumeMount;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A Helm chart in an OCI registry.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OCIRepository {
    /// Full artifact reference; replaces repository, tag and digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ref_: Option<String>,
    /// Repository of the chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Tag of the chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Digest of the chart; takes precedence over the tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Secret (in the garden namespace) with registry credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_secret_ref: Option<LocalObjectReference>,
    /// Secret (in the garden namespace) with CA certificates of the registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle_secret_ref: Option<LocalObjectReference>,
}

/// How the gardenlet of a managed seed is deployed and configured.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GardenletConfig {
    /// Deployment settings of the gardenlet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<GardenletDeployment>,
    /// The gardenlet's component configuration (a GardenletConfiguration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::schema::raw_any")]
    pub config: Option<serde_json::Value>,
    /// How the gardenlet obtains its first garden credentials (`BootstrapToken`, `ServiceAccount` or `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap: Option<String>,
    /// Whether the configuration is merged over that of the parent gardenlet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_with_parent: Option<bool>,
}

/// Deployment settings of a gardenlet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GardenletDeployment {
    /// Number of gardenlet replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_count: Option<i32>,
    /// Number of old ReplicaSets kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Service account the gardenlet pods run as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// Container image of the gardenlet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
    /// Compute resources of the gardenlet container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// Labels added to the gardenlet pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_labels: Option<BTreeMap<String, String>>,
    /// Annotations added to the gardenlet pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_annotations: Option<BTreeMap<String, String>>,
    /// Additional volumes of the gardenlet pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_volumes: Option<Vec<Volume>>,
    /// Additional volume mounts of the gardenlet container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_volume_mounts: Option<Vec<VolumeMount>>,
    /// Additional environment variables of the gardenlet container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<EnvVar>>,
    /// Tolerations of the gardenlet pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<Vec<K8sToleration>>,
    /// Whether the pods get liveness and readiness probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_health_probes: Option<bool>,
}

/// Source of the gardenlet Helm chart.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GardenletHelm {
    /// OCI repository holding the chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci_repository: Option<OCIRepository>,
}

/// Deployment settings of a self-managed gardenlet, plus the chart it comes from (upstream
/// embeds [`GardenletDeployment`] inline).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GardenletSelfDeployment {
    /// The settings every gardenlet deployment has.
    #[serde(flatten)]
    pub deployment: GardenletDeployment,
    /// Where the gardenlet Helm chart is pulled from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm: Option<GardenletHelm>,
    /// Image vector overrides for the gardenlet's own images (YAML text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_vector_overwrite: Option<String>,
    /// Image vector overrides for components the gardenlet deploys (YAML text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_image_vector_overwrite: Option<String>,
}

/// A container image.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// Image repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Image tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// When the kubelet pulls the image (`Always`, `IfNotPresent`, `Never`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_policy: Option<String>,
    /// Full image reference; replaces repository and tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ref_: Option<String>,
}

/// A managed seed's shoot and gardenlet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedSeedSpec {
    /// The shoot that becomes the seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shoot: Option<crate::seedmanagement::ShootReference>,
    /// The gardenlet deployed into the shoot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gardenlet: Option<GardenletConfig>,
}

/// Metadata and spec of the ManagedSeeds a set creates.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedSeedTemplate {
    /// Metadata of the created ManagedSeeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Spec of the created ManagedSeeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<ManagedSeedSpec>,
}

/// Parameters of a rolling update.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateStrategy {
    /// Only replicas with an ordinal at or above this number are updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
}

/// How a ManagedSeedSet rolls out template changes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStrategy {
    /// `RollingUpdate` (the default) or `OnDelete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Parameters of a rolling update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateStrategy>,
}
