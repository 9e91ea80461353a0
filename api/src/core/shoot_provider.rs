//! `Shoot.spec.provider`: the infrastructure provider, its raw configurations and the worker
//! pools (machines, volumes, container runtimes, per-pool Kubernetes and machine-controller
//! settings, self-hosted control-plane pools).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ObjectReference as CoreObjectReference, Taint};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Extra, schema};
use crate::core::KubeletConfig;
use crate::core::shoot::float;
use crate::core::shoot::kube_schema;

/// `spec.provider`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootProvider {
    /// Infrastructure provider type (`aws`, `gcp`, `local`, ...); immutable.
    #[serde(rename = "type")]
    pub type_: String,
    /// Provider-specific control-plane configuration, handed to the ControlPlane extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub control_plane_config: Option<serde_json::Value>,
    /// Provider-specific infrastructure configuration, handed to the Infrastructure extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub infrastructure_config: Option<serde_json::Value>,
    /// Worker pools; empty for a workerless shoot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers: Vec<Worker>,
    /// Settings that apply to every worker pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers_settings: Option<WorkersSettings>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.provider.workersSettings`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkersSettings {
    /// Whether SSH into the nodes is possible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_access: Option<SshAccess>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workersSettings.sshAccess`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SshAccess {
    /// Whether the SSH daemon on the nodes is kept running (default true).
    pub enabled: bool,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.provider.workers[]`: one pool of equally configured machines.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Worker {
    /// Annotations put on every Node of the pool.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// PEM certificates added to the trust store of every machine of the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<String>,
    /// Container runtime interface of the machines; `containerd` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cri: Option<Cri>,
    /// Kubelet settings and version for this pool only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<Box<WorkerKubernetes>>,
    /// Labels put on every Node of the pool.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Pool name, unique within the shoot.
    pub name: String,
    /// Machine type, image and architecture.
    pub machine: Machine,
    /// Largest number of machines, spread evenly over the zones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<i32>,
    /// Smallest number of machines, spread evenly over the zones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<i32>,
    /// Machines created above the desired count during a rolling update (number or percentage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "kube_schema::int_or_string")]
    pub max_surge: Option<IntOrString>,
    /// Machines that may be unavailable during a rolling update (number or percentage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "kube_schema::int_or_string")]
    pub max_unavailable: Option<IntOrString>,
    /// Provider-specific pool configuration, handed to the Worker extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Taints put on every Node of the pool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// Root disk of the machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<Volume>,
    /// Additional disks attached to every machine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_volumes: Vec<DataVolume>,
    /// Name of the data volume that holds the kubelet's state directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet_data_volume_name: Option<String>,
    /// Availability zones the pool is spread over.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<String>,
    /// Whether system components may run on this pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_components: Option<Box<WorkerSystemComponents>>,
    /// Timeouts and limits of the machine-controller-manager for this pool (boxed, like
    /// `cluster_autoscaler`: seldom set, and inline they were 320 of the pool's 1 144 bytes, which
    /// every cache holding a Shoot keeps per pool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_controller_manager: Option<Box<MachineControllerManagerSettings>>,
    /// Kernel parameters (sysctl name to value) set on every machine.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sysctls: BTreeMap<String, String>,
    /// Cluster-autoscaler settings for this pool, overriding the shoot-wide ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_autoscaler: Option<Box<ClusterAutoscalerOptions>>,
    /// Weight of the pool when the cluster-autoscaler's `priority` expander picks one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// How machines get updated: `AutoRollingUpdate` (default), `AutoInPlaceUpdate` or
    /// `ManualInPlaceUpdate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<String>,
    /// Marks the pool that hosts the control plane of a self-hosted shoot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<Box<WorkerControlPlane>>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workers[].machine`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Machine {
    /// Machine type offered by the cloud profile.
    #[serde(rename = "type")]
    pub type_: String,
    /// Operating-system image; the newest matching one of the cloud profile when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ShootMachineImage>,
    /// CPU architecture (`amd64`, `arm64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workers[].machine.image`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootMachineImage {
    /// Image name; also the OperatingSystemConfig type.
    pub name: String,
    /// Image-specific configuration, handed to the OperatingSystemConfig extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Image version; the newest of the cloud profile when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workers[].volume`: the root disk.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    /// Name by which the volume can be referenced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Volume type offered by the cloud profile.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Size, e.g. `20Gi`.
    pub size: String,
    /// Whether the disk is encrypted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<bool>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workers[].dataVolumes[]`: an additional disk.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataVolume {
    /// Name by which the volume is referenced (e.g. by `kubeletDataVolumeName`).
    pub name: String,
    /// Volume type offered by the cloud profile.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Size, e.g. `25Gi`.
    pub size: String,
    /// Whether the disk is encrypted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<bool>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workers[].cri`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cri {
    /// CRI implementation; only `containerd` is supported.
    pub name: String,
    /// Additional runtimes (each a ContainerRuntime extension type, e.g. `gvisor`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub container_runtimes: Vec<ContainerRuntime>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workers[].cri.containerRuntimes[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRuntime {
    /// Runtime type, the ContainerRuntime extension that installs it.
    #[serde(rename = "type")]
    pub type_: String,
    /// Runtime configuration, handed to the ContainerRuntime extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workers[].kubernetes`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerKubernetes {
    /// Kubelet settings of this pool; they replace `spec.kubernetes.kubelet` as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet: Option<Box<KubeletConfig>>,
    /// Kubelet version of this pool; the control-plane version when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workers[].systemComponents`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerSystemComponents {
    /// Whether the pool may host system components (default true).
    pub allow: bool,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workers[].machineControllerManager`: per-pool machine lifecycle timeouts and limits.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineControllerManagerSettings {
    /// How long a drain may take before the machine is deleted anyway (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_drain_timeout: Option<String>,
    /// How long a machine may be unhealthy before it counts as failed (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_health_timeout: Option<String>,
    /// How long creating a machine may take before it counts as failed (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_creation_timeout: Option<String>,
    /// Eviction attempts per pod before a drain gives up and deletes forcefully.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_evict_retries: Option<i32>,
    /// Node condition types that, true for the health timeout, mark a machine failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_conditions: Vec<String>,
    /// How long an in-place update may take before it counts as failed (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update_timeout: Option<String>,
    /// Never mark a machine failed for health reasons (in-place updates only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_health_timeout: Option<bool>,
    /// How long a failed machine is kept for inspection before preservation ends (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_preserve_timeout: Option<String>,
    /// Most failed machines of the pool kept automatically for inspection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_preserve_failed_machine_max: Option<i32>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workers[].clusterAutoscaler`: per-pool overrides of the cluster-autoscaler.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAutoscalerOptions {
    /// Utilisation (0 to 1) below which a node may be removed.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "float::option"
    )]
    pub scale_down_utilization_threshold: Option<f64>,
    /// GPU utilisation (0 to 1) below which a node may be removed.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "float::option"
    )]
    pub scale_down_gpu_utilization_threshold: Option<f64>,
    /// How long a node must be unneeded before removal (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down_unneeded_time: Option<String>,
    /// How long an unready node must be unneeded before removal (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down_unready_time: Option<String>,
    /// How long to wait for a new node to register (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_node_provision_time: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workers[].controlPlane`: the pool runs the control plane of a self-hosted shoot.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerControlPlane {
    /// Object store for etcd backups; no backups when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup: Option<Backup>,
    /// How the API server is exposed: by an extension or by DNS (or neither).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposure: Option<Exposure>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workers[].controlPlane.backup`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Backup {
    /// Backup provider type; immutable.
    pub provider: String,
    /// Provider-specific bucket configuration, handed to the BackupBucket extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Region of the object store; immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Secret or WorkloadIdentity with the object-store credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_ref: Option<CoreObjectReference>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `workers[].controlPlane.exposure`: at most one of `extension` and `dns`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Exposure {
    /// Exposure by a SelfHostedShootExposure extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension: Option<ExtensionExposure>,
    /// Exposure by DNS records pointing at the control-plane nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<DnsExposure>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `exposure.extension`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionExposure {
    /// Extension type; `spec.provider.type` when unset.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Extension-specific configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `exposure.dns`: no settings yet; its presence selects DNS exposure.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DnsExposure {
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}
