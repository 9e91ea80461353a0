//! Typed fields of CloudProfile and NamespacedCloudProfile (machine images and types, volume types, regions, versions).
//! Every field is optional: gardener-apiserver accepts objects without them, and a field that is
//! absent stays absent when seedlet writes an object back.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AccessRestriction, SeedSelector};

/// An availability zone of a region.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AvailabilityZone {
    /// Name of the zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Machine types not offered in this zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_machine_types: Option<Vec<String>>,
    /// Volume types not offered in this zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_volume_types: Option<Vec<String>>,
}

/// Machine settings for Bastion hosts of shoots of a profile.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bastion {
    /// Image of the bastion machine; the newest supported version when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_image: Option<BastionMachineImage>,
    /// Type of the bastion machine; the smallest offered one when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_type: Option<BastionMachineType>,
}

/// Image of bastion machines.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BastionMachineImage {
    /// Name of one of the profile's machine images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Version of that image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// Type of bastion machines.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BastionMachineType {
    /// Name of one of the profile's machine types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A container runtime interface implementation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CRI {
    /// Name of the implementation (`containerd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Additional runtimes usable through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_runtimes: Option<Vec<ContainerRuntime>>,
}

/// A capability and the values it may take.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityDefinition {
    /// Name of the capability (for example `architecture`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Allowed values, the first being the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
}

/// Control-plane settings of a profile.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloudProfileControlPlane {
    /// Whether non-HA control planes may be pinned to one zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_zone_pinning: Option<bool>,
}

/// Machine-controller-manager defaults of a machine type.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloudProfileMachineControllerManagerSettings {
    /// How long creating a machine may take before it is replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_creation_timeout: Option<String>,
}

/// Reference to a CloudProfile or NamespacedCloudProfile.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloudProfileReference {
    /// `CloudProfile` or `NamespacedCloudProfile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name of the profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// What shoots of one infrastructure provider may use: versions, images, machine and volume types, regions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloudProfileSpec {
    /// PEM certificates that shoots of this profile trust in addition to the system ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<String>,
    /// Kubernetes versions offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<KubernetesSettings>,
    /// Operating-system images offered for worker nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_images: Option<Vec<MachineImage>>,
    /// Machine types offered for worker nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_types: Option<Vec<MachineType>>,
    /// Provider-specific configuration of the profile, read by the provider extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Regions (and their zones) offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regions: Option<Vec<Region>>,
    /// Which seeds may host shoots of this profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_selector: Option<SeedSelector>,
    /// Infrastructure provider type (`aws`, `gcp`, `local`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Volume types offered for worker nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_types: Option<Vec<VolumeType>>,
    /// Machine image and type used for Bastion hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bastion: Option<Bastion>,
    /// Upper bounds every shoot of this profile must respect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// Capabilities machine types and images declare, with their allowed values; the first value is the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_capabilities: Option<Vec<CapabilityDefinition>>,
    /// Settings for shoot control planes of this profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<CloudProfileControlPlane>,
}

/// Computed classification of the offered versions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloudProfileStatus {
    /// Current classification of each Kubernetes version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<KubernetesStatus>,
    /// Current classification of each machine image version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_images: Option<Vec<MachineImageStatus>>,
}

/// An additional container runtime.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRuntime {
    /// Type of the runtime (for example `gvisor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Runtime-specific configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
}

/// A version that may expire.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExpirableVersion {
    /// The version number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// When the version stops being offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiration_date: Option<Time>,
    /// `preview`, `supported` or `deprecated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classification: Option<String>,
    /// Planned classification changes, each with its start time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Vec<LifecycleStage>>,
}

/// A version and its current classification.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExpirableVersionStatus {
    /// The version number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Classification at the time of the last status update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classification: Option<String>,
}

/// In-place update support of a machine image version.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdates {
    /// Whether nodes can move to this version without being replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supported: Option<bool>,
    /// Oldest version an in-place update to this one may start from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_version_for_update: Option<String>,
}

/// Kubernetes versions of a profile.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesSettings {
    /// The versions, each with its classification and optional expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versions: Option<Vec<ExpirableVersion>>,
}

/// Computed state of the Kubernetes versions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesStatus {
    /// Each version with its classification now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versions: Option<Vec<ExpirableVersionStatus>>,
}

/// A planned classification change.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleStage {
    /// Classification from the start time on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classification: Option<String>,
    /// When the classification takes effect; immediately when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
}

/// Upper bounds for shoots of a profile.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// Largest number of nodes a shoot may have across all pools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nodes_total: Option<i32>,
}

/// An operating-system image and its versions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineImage {
    /// Name of the image (for example `gardenlinux`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Offered versions of the image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versions: Option<Vec<MachineImageVersion>>,
    /// How far automatic updates may move (`patch`, `minor`, `major`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<String>,
}

/// Computed state of one machine image's versions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineImageStatus {
    /// Name of the image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Each version with its classification now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versions: Option<Vec<ExpirableVersionStatus>>,
}

/// One version of a machine image.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineImageVersion {
    /// The version number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// When the version stops being offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiration_date: Option<Time>,
    /// `preview`, `supported` or `deprecated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classification: Option<String>,
    /// Planned classification changes, each with its start time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Vec<LifecycleStage>>,
    /// Container runtimes the version supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cri: Option<Vec<CRI>>,
    /// CPU architectures the version is built for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architectures: Option<Vec<String>>,
    /// Semver constraint the kubelet version must meet on this image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet_version_constraint: Option<String>,
    /// Whether and from where nodes can be updated in place to this version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_updates: Option<InPlaceUpdates>,
    /// Capability combinations the version is available in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability_flavors: Option<Vec<BTreeMap<String, Vec<String>>>>,
}

/// A machine type and its resources.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineType {
    /// Number of CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Quantity>,
    /// Number of GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<Quantity>,
    /// Amount of memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Quantity>,
    /// Name of the type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Root disk of the type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<MachineTypeStorage>,
    /// Whether new worker pools may use the type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usable: Option<bool>,
    /// CPU architecture (`amd64`, `arm64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    /// Capability values of the type, by capability name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<BTreeMap<String, Vec<String>>>,
    /// Machine-controller-manager defaults for machines of this type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_controller_manager: Option<CloudProfileMachineControllerManagerSettings>,
}

/// Root disk of a machine type.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineTypeStorage {
    /// Class of the disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Fixed size of the disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Quantity>,
    /// Type of the disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Smallest size a worker pool may ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_size: Option<Quantity>,
}

/// Additions to and overrides of a parent CloudProfile for one project.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamespacedCloudProfileSpec {
    /// PEM certificates added to those of the parent profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<String>,
    /// Kubernetes versions whose expiration dates are overridden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<KubernetesSettings>,
    /// Machine images added or whose versions are overridden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_images: Option<Vec<MachineImage>>,
    /// Machine types added to the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_types: Option<Vec<MachineType>>,
    /// Volume types added to the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_types: Option<Vec<VolumeType>>,
    /// The CloudProfile this one extends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<CloudProfileReference>,
    /// Provider-specific configuration merged over the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Limits that replace the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
}

/// A region and its zones.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    /// Name of the region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Availability zones of the region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<Vec<AvailabilityZone>>,
    /// Labels of the region, matched by seed and shoot selectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Access restrictions the region can fulfil.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_restrictions: Option<Vec<AccessRestriction>>,
}

/// A volume type offered to worker pools.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VolumeType {
    /// Class of the type (for example `standard`, `premium`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Name of the type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Whether new worker pools may use the type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usable: Option<bool>,
    /// Smallest allowed volume size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_size: Option<Quantity>,
}
