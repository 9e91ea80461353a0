//! Typed kind-specific fields of `Worker` (pools, kubelet and machine settings, machine deployments).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::SecretKeySelector;
use k8s_openapi::api::core::v1::SecretReference;
use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Kind-specific spec fields of a `Worker` (beside the generic `type`, `class` and `providerConfig`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerSpecFields {
    /// The provider status of the shoot's Infrastructure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::schema::raw_object")]
    pub infrastructure_provider_status: Option<serde_json::Value>,
    /// The worker pools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pools: Option<Vec<WorkerPool>>,
    /// Region of the shoot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Secret with the provider credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretReference>,
    /// Public SSH key installed on the machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_public_key: Option<String>,
}

/// A worker pool: its machines, image, scaling and node settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPool {
    /// Annotations put on the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// CPU architecture of the machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    /// Autoscaler settings of this pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_autoscaler: Option<WorkerPoolClusterAutoscaler>,
    /// Additional disks of the machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_volumes: Option<Vec<WorkerPoolDataVolume>>,
    /// Kubelet settings of this pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet_config: Option<WorkerPoolKubeletConfig>,
    /// Data volume that holds the kubelet's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet_data_volume_name: Option<String>,
    /// Kubernetes version of the pool's kubelets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// Labels put on the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Machine-controller-manager settings of this pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_controller_manager: Option<WorkerPoolMachineControllerManager>,
    /// Operating-system image of the machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_image: Option<WorkerPoolMachineImage>,
    /// Machine type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_type: Option<String>,
    /// Machines that may be added above the desired count during an update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// Machines that may be unavailable during an update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Largest number of machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<i32>,
    /// Smallest number of machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<i32>,
    /// Name of the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Secret the node agent reads its configuration from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_agent_secret_name: Option<String>,
    /// Resources the autoscaler assumes a new node has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_template: Option<WorkerPoolNodeTemplate>,
    /// Scale-up priority of the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// Provider-specific settings of the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::schema::raw_object")]
    pub provider_config: Option<serde_json::Value>,
    /// Taints put on the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taints: Option<Vec<Taint>>,
    /// `AutoRollingUpdate`, `AutoInPlaceUpdate` or `ManualInPlaceUpdate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<String>,
    /// Secret key with the user data of the machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data_secret_ref: Option<SecretKeySelector>,
    /// Root disk of the machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<WorkerPoolDataVolume>,
    /// Zones the machines are spread over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<Vec<String>>,
}

/// Cluster-autoscaler settings of a worker pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPoolClusterAutoscaler {
    /// How long a node may take to come up before the autoscaler gives up on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_node_provision_time: Option<String>,
    /// GPU utilisation below which a node may be removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down_gpu_utilization_threshold: Option<String>,
    /// How long a node must be unneeded before it is removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down_unneeded_time: Option<String>,
    /// How long an unready node must be unneeded before it is removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down_unready_time: Option<String>,
    /// Utilisation below which a node may be removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down_utilization_threshold: Option<String>,
}

/// An additional disk of the machines.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPoolDataVolume {
    /// Whether the disk is encrypted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<bool>,
    /// Name of the disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Size of the disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    /// Provider volume type of the disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

/// Kubelet settings of a worker pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPoolKubeletConfig {
    /// Most log files kept per container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_log_max_files: Option<i32>,
    /// Size at which a container log is rotated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_log_max_size: Option<Quantity>,
    /// Whether CPU limits are enforced with CFS quota.
    #[serde(
        rename = "cpuCFSQuota",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu_cfs_quota: Option<bool>,
    /// CPU manager policy (`none` or `static`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_manager_policy: Option<String>,
    /// Thresholds that evict pods at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_hard: Option<WorkerPoolKubeletConfigEvictionHard>,
    /// Longest grace period (seconds) for pods evicted on soft thresholds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_max_pod_grace_period: Option<i32>,
    /// Least amount reclaimed once eviction starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_minimum_reclaim: Option<WorkerPoolKubeletConfigEvictionMinimumReclaim>,
    /// How long the kubelet waits before leaving a pressure condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_pressure_transition_period: Option<String>,
    /// Thresholds that evict pods after their grace period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_soft: Option<WorkerPoolKubeletConfigEvictionHard>,
    /// Grace periods of the soft thresholds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_soft_grace_period: Option<WorkerPoolKubeletConfigEvictionHard>,
    /// Whether the kubelet refuses to start with swap on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_swap_on: Option<bool>,
    /// Kubelet feature gates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_gates: Option<BTreeMap<String, bool>>,
    /// Disk usage at which image garbage collection always runs.
    #[serde(
        rename = "imageGCHighThresholdPercent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_gc_high_threshold_percent: Option<i32>,
    /// Disk usage image garbage collection frees down to.
    #[serde(
        rename = "imageGCLowThresholdPercent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_gc_low_threshold_percent: Option<i32>,
    /// Unused images older than this are removed.
    #[serde(
        rename = "imageMaximumGCAge",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_maximum_gc_age: Option<String>,
    /// Unused images younger than this are kept.
    #[serde(
        rename = "imageMinimumGCAge",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_minimum_gc_age: Option<String>,
    /// When pods must prove credentials for images already on the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_credentials_verification_policy: Option<String>,
    /// Resources reserved for Kubernetes components.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_reserved: Option<WorkerPoolKubeletConfigKubeReserved>,
    /// Most image pulls at the same time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parallel_image_pulls: Option<i32>,
    /// Most pods per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pods: Option<i32>,
    /// How pods may use swap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_swap: Option<WorkerPoolKubeletConfigMemorySwap>,
    /// Most processes per pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_pids_limit: Option<i64>,
    /// Images exempt from pull-credential checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preloaded_images_verification_allowlist: Option<Vec<String>>,
    /// Whether the kubelet fails on kernel settings that differ from its defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protect_kernel_defaults: Option<bool>,
    /// Burst of registry pulls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_burst: Option<i32>,
    /// Registry pulls per second.
    #[serde(
        rename = "registryPullQPS",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub registry_pull_qps: Option<i32>,
    /// Whether `RuntimeDefault` is every pod's default seccomp profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seccomp_default: Option<bool>,
    /// Whether images are pulled one at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serialize_image_pulls: Option<bool>,
    /// Whether an out-of-memory kill hits one process rather than the whole container.
    #[serde(
        rename = "singleProcessOOMKill",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub single_process_oom_kill: Option<bool>,
    /// Idle time after which exec, attach and port-forward connections close.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming_connection_idle_timeout: Option<String>,
}

/// Eviction thresholds per signal.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPoolKubeletConfigEvictionHard {
    /// Free space of the image file system.
    #[serde(
        rename = "imageFSAvailable",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_fs_available: Option<String>,
    /// Free inodes of the image file system.
    #[serde(
        rename = "imageFSInodesFree",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_fs_inodes_free: Option<String>,
    /// Free memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_available: Option<String>,
    /// Free space of the node file system.
    #[serde(
        rename = "nodeFSAvailable",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_fs_available: Option<String>,
    /// Free inodes of the node file system.
    #[serde(
        rename = "nodeFSInodesFree",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_fs_inodes_free: Option<String>,
}

/// Least amounts reclaimed per signal once eviction starts.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPoolKubeletConfigEvictionMinimumReclaim {
    /// Image file system space to reclaim.
    #[serde(
        rename = "imageFSAvailable",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_fs_available: Option<Quantity>,
    /// Image file system inodes to reclaim.
    #[serde(
        rename = "imageFSInodesFree",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_fs_inodes_free: Option<Quantity>,
    /// Memory to reclaim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_available: Option<Quantity>,
    /// Node file system space to reclaim.
    #[serde(
        rename = "nodeFSAvailable",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_fs_available: Option<Quantity>,
    /// Node file system inodes to reclaim.
    #[serde(
        rename = "nodeFSInodesFree",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_fs_inodes_free: Option<Quantity>,
}

/// Resources reserved for Kubernetes components.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPoolKubeletConfigKubeReserved {
    /// CPU reserved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Quantity>,
    /// Local storage reserved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_storage: Option<Quantity>,
    /// Memory reserved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Quantity>,
    /// Process IDs reserved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<Quantity>,
}

/// Swap use of pods.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPoolKubeletConfigMemorySwap {
    /// `NoSwap` or `LimitedSwap`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_behavior: Option<String>,
}

/// Machine-controller-manager settings of a worker pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPoolMachineControllerManager {
    /// Most failed machines kept for analysis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_preserve_failed_machine_max: Option<i32>,
    /// Whether unhealthy machines are kept rather than replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_health_timeout: Option<bool>,
    /// How long an in-place update may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update_timeout: Option<String>,
    /// How long creating a machine may take before it is replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_creation_timeout: Option<String>,
    /// How long draining a machine may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_drain_timeout: Option<String>,
    /// How long a machine may be unhealthy before it is replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_health_timeout: Option<String>,
    /// How long a preserved machine is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_preserve_timeout: Option<String>,
    /// Most eviction attempts per pod during a drain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_evict_retries: Option<i32>,
    /// Node conditions that mark a machine unhealthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_conditions: Option<Vec<String>>,
}

/// Operating-system image of a worker pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPoolMachineImage {
    /// Name of the image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Version of the image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// Resources the cluster autoscaler assumes a new node has.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPoolNodeTemplate {
    /// Resources of a node of this pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<BTreeMap<String, Quantity>>,
    /// Extended resources a node offers beyond its hardware.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_capacity: Option<BTreeMap<String, Quantity>>,
}

/// Kind-specific status fields of a `Worker` (beside the common conditions, operations and state).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerStatusFields {
    /// State of in-place updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_updates: Option<WorkerStatusInPlaceUpdates>,
    /// Machine deployments the extension created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_deployments: Option<Vec<WorkerStatusMachineDeployment>>,
    /// When the machine deployments were last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_deployments_last_update_time: Option<Time>,
}

/// State of in-place updates of a Worker.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerStatusInPlaceUpdates {
    /// Hash of each pool's configuration as last applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_pool_to_hash_map: Option<BTreeMap<String, String>>,
}

/// A machine deployment created for a worker pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerStatusMachineDeployment {
    /// Most failed machines kept for analysis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_preserve_failed_machine_max: Option<i32>,
    /// Largest size of the deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<i32>,
    /// Smallest size of the deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<i32>,
    /// Name of the deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Scale-up priority of the deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
}
