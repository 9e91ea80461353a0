//! Kubelet settings of a Shoot (`spec.kubernetes.kubelet`, and per pool
//! `spec.provider.workers[].kubernetes.kubelet`): eviction thresholds, reservations, image
//! garbage collection and pulling, swap and the other knobs Gardener passes to the kubelet.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::Extra;
use crate::core::shoot::kube_schema;

/// Settings for the kubelets of the shoot or of one pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeletConfig {
    /// Feature gates of the kubelet, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_gates: BTreeMap<String, bool>,
    /// Whether CPU limits are enforced with CFS quota (CPU throttling).
    #[serde(
        rename = "cpuCFSQuota",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu_cfs_quota: Option<bool>,
    /// CPU manager policy (`none` by default, or `static`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_manager_policy: Option<String>,
    /// Thresholds that evict pods as soon as they are crossed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_hard: Option<KubeletConfigEviction>,
    /// Longest grace period (seconds) granted to pods evicted by a soft threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_max_pod_grace_period: Option<i32>,
    /// How much the kubelet frees beyond a crossed threshold when it evicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_minimum_reclaim: Option<KubeletConfigEvictionMinimumReclaim>,
    /// How long a pressure condition is held after the pressure ended (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_pressure_transition_period: Option<String>,
    /// Thresholds that evict pods once crossed for their grace period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_soft: Option<KubeletConfigEviction>,
    /// Grace periods of the soft eviction thresholds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_soft_grace_period: Option<KubeletConfigEvictionSoftGracePeriod>,
    /// Most pods the kubelet runs (default 110).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pods: Option<i32>,
    /// Most process IDs a pod may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_pids_limit: Option<i64>,
    /// Whether the kubelet refuses to start while swap is on (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_swap_on: Option<bool>,
    /// Resources set aside for the kubelet and the container runtime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_reserved: Option<KubeletConfigReserved>,
    /// Disk usage (percent) that starts image garbage collection.
    #[serde(
        rename = "imageGCHighThresholdPercent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_gc_high_threshold_percent: Option<i32>,
    /// Disk usage (percent) image garbage collection frees down to.
    #[serde(
        rename = "imageGCLowThresholdPercent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_gc_low_threshold_percent: Option<i32>,
    /// Whether images are pulled one after another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serialize_image_pulls: Option<bool>,
    /// Image pulls per second; 0 for no limit.
    #[serde(
        rename = "registryPullQPS",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub registry_pull_qps: Option<i32>,
    /// Pulls allowed in a burst above `registryPullQPS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_burst: Option<i32>,
    /// Whether `RuntimeDefault` is every workload's default seccomp profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seccomp_default: Option<bool>,
    /// Size at which a container log file is rotated, e.g. `100Mi`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "kube_schema::quantity")]
    pub container_log_max_size: Option<Quantity>,
    /// Most rotated log files kept per container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_log_max_files: Option<i32>,
    /// Whether the kubelet fails when kernel tunables differ from its defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protect_kernel_defaults: Option<bool>,
    /// Idle time after which a streaming connection (exec, logs) is closed (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming_connection_idle_timeout: Option<String>,
    /// Swap available to workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_swap: Option<MemorySwapConfiguration>,
    /// Most image pulls in parallel (needs `serializeImagePulls: false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parallel_image_pulls: Option<i32>,
    /// Age below which an unused image is kept (Go duration).
    #[serde(
        rename = "imageMinimumGCAge",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_minimum_gc_age: Option<String>,
    /// Age above which an unused image is removed; `0s` for never (Go duration).
    #[serde(
        rename = "imageMaximumGCAge",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_maximum_gc_age: Option<String>,
    /// Whether an OOM kill stops only the offending process instead of the whole container
    /// (cgroup v2).
    #[serde(
        rename = "singleProcessOOMKill",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub single_process_oom_kill: Option<bool>,
    /// When pull credentials are checked again for images already on the node
    /// (`NeverVerify`, `NeverVerifyPreloadedImages`, `NeverVerifyAllowlistedImages`,
    /// `AlwaysVerify`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_credentials_verification_policy: Option<String>,
    /// Images (with `*` wildcards) exempt from credential checks under
    /// `NeverVerifyAllowlistedImages`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preloaded_images_verification_allowlist: Vec<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Eviction thresholds, each a quantity or a percentage (`100Mi`, `5%`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeletConfigEviction {
    /// Free memory of the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_available: Option<String>,
    /// Free space of the image filesystem.
    #[serde(
        rename = "imageFSAvailable",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_fs_available: Option<String>,
    /// Free inodes of the image filesystem.
    #[serde(
        rename = "imageFSInodesFree",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_fs_inodes_free: Option<String>,
    /// Free space of the node's root filesystem.
    #[serde(
        rename = "nodeFSAvailable",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_fs_available: Option<String>,
    /// Free inodes of the node's root filesystem.
    #[serde(
        rename = "nodeFSInodesFree",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_fs_inodes_free: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Amounts reclaimed beyond each eviction threshold.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeletConfigEvictionMinimumReclaim {
    /// Memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "kube_schema::quantity")]
    pub memory_available: Option<Quantity>,
    /// Space of the image filesystem.
    #[serde(
        rename = "imageFSAvailable",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(schema_with = "kube_schema::quantity")]
    pub image_fs_available: Option<Quantity>,
    /// Inodes of the image filesystem.
    #[serde(
        rename = "imageFSInodesFree",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(schema_with = "kube_schema::quantity")]
    pub image_fs_inodes_free: Option<Quantity>,
    /// Space of the node's root filesystem.
    #[serde(
        rename = "nodeFSAvailable",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(schema_with = "kube_schema::quantity")]
    pub node_fs_available: Option<Quantity>,
    /// Inodes of the node's root filesystem.
    #[serde(
        rename = "nodeFSInodesFree",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(schema_with = "kube_schema::quantity")]
    pub node_fs_inodes_free: Option<Quantity>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// How long each soft eviction threshold must be crossed before pods are evicted (Go
/// durations).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeletConfigEvictionSoftGracePeriod {
    /// For free memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_available: Option<String>,
    /// For free space of the image filesystem.
    #[serde(
        rename = "imageFSAvailable",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_fs_available: Option<String>,
    /// For free inodes of the image filesystem.
    #[serde(
        rename = "imageFSInodesFree",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub image_fs_inodes_free: Option<String>,
    /// For free space of the node's root filesystem.
    #[serde(
        rename = "nodeFSAvailable",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_fs_available: Option<String>,
    /// For free inodes of the node's root filesystem.
    #[serde(
        rename = "nodeFSInodesFree",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_fs_inodes_free: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Resources reserved on every node for Kubernetes' own daemons.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeletConfigReserved {
    /// CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "kube_schema::quantity")]
    pub cpu: Option<Quantity>,
    /// Memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "kube_schema::quantity")]
    pub memory: Option<Quantity>,
    /// Ephemeral storage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "kube_schema::quantity")]
    pub ephemeral_storage: Option<Quantity>,
    /// Process IDs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "kube_schema::quantity")]
    pub pid: Option<Quantity>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubelet.memorySwap`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemorySwapConfiguration {
    /// `NoSwap` or `LimitedSwap` (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_behavior: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}
