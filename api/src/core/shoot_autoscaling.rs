//! Autoscaler settings of a Shoot: `spec.kubernetes.clusterAutoscaler` and
//! `spec.kubernetes.verticalPodAutoscaler`. Durations are Go duration strings (`10m`, `1h30m`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::Extra;
use crate::core::ControlPlaneAutoscaling;
use crate::core::shoot::float;
use crate::core::shoot::kube_schema;

/// `kubernetes.clusterAutoscaler`: flags of the cluster-autoscaler.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAutoscaler {
    /// Pause of scale-down evaluation after a scale-up (default 1h).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down_delay_after_add: Option<String>,
    /// Pause of scale-down evaluation after a node deletion (by default the scan interval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down_delay_after_delete: Option<String>,
    /// Pause of scale-down evaluation after a failed scale-down (default 3m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down_delay_after_failure: Option<String>,
    /// How long a node must be unneeded before removal (default 30m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down_unneeded_time: Option<String>,
    /// Utilisation (0 to 1) below which a node may be removed (default 0.5).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "float::option"
    )]
    pub scale_down_utilization_threshold: Option<f64>,
    /// How often the cluster is evaluated (default 10s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_interval: Option<String>,
    /// How a node group is picked on scale-up, comma-separated (`least-waste`, `priority`,
    /// `random`, `most-pods`) (default least-waste).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expander: Option<String>,
    /// How long to wait for a new node to register (default 20m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_node_provision_time: Option<String>,
    /// Seconds granted to pods to terminate when a node is drained (default 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_graceful_termination_seconds: Option<i32>,
    /// Taint keys ignored in node templates (deprecated; treated as startup taints).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_taints: Vec<String>,
    /// How long new pods are ignored before they can trigger a scale-up (default 0s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_pod_scale_up_delay: Option<String>,
    /// Most empty nodes deleted at once (deprecated; not allowed from Kubernetes 1.33).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_empty_bulk_delete: Option<i32>,
    /// Whether DaemonSet pods are left out of utilisation (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_daemonsets_utilization: Option<bool>,
    /// Log verbosity (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verbosity: Option<i32>,
    /// Taint keys that mark a node not ready yet but soon to be.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub startup_taints: Vec<String>,
    /// Taint keys that mark a node ready but unusable for scale-up decisions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub status_taints: Vec<String>,
    /// Most nodes (empty or drained) deleted in parallel (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_scale_down_parallelism: Option<i32>,
    /// Most nodes drained in parallel (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_drain_parallelism: Option<i32>,
    /// First back-off of a node group whose node failed to start (default 5m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_node_group_backoff_duration: Option<String>,
    /// Longest back-off of a node group (default 30m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_node_group_backoff_duration: Option<String>,
    /// Time after the last failed scale-up at which the back-off resets (default 3h).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_group_backoff_reset_timeout: Option<String>,
    /// Whether metrics per node group are emitted (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emit_per_node_group_metrics: Option<bool>,
    /// Time budget for bin-packing in one scale-up (default 5m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_binpacking_time: Option<String>,
    /// Vertical scaling bounds of the cluster-autoscaler itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<ControlPlaneAutoscaling>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubernetes.verticalPodAutoscaler`: the VPA in the shoot and its flags
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerticalPodAutoscaler {
    /// Whether a VPA is deployed into the shoot.
    pub enabled: bool,
    /// A pod OOM-killed sooner than this after its start is evicted to get more memory (default 10m).
    #[serde(
        rename = "evictAfterOOMThreshold",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub evict_after_oom_threshold: Option<String>,
    /// Evictions allowed in a burst (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_rate_burst: Option<i32>,
    /// Evictions per second; 0 or -1 for no limit (default -1).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "float::option"
    )]
    pub eviction_rate_limit: Option<f64>,
    /// Fraction of a workload's replicas that may be evicted at once (default 0.5).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "float::option"
    )]
    pub eviction_tolerance: Option<f64>,
    /// Safety margin added to recommendations, as a fraction of usage (default 0.15).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "float::option"
    )]
    pub recommendation_margin_fraction: Option<f64>,
    /// How often the updater runs (default 1m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updater_interval: Option<String>,
    /// How often the recommender fetches metrics (default 1m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommender_interval: Option<String>,
    /// Usage percentile of the CPU target (default 0.9).
    #[serde(
        rename = "targetCPUPercentile",
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "float::option"
    )]
    pub target_cpu_percentile: Option<f64>,
    /// Usage percentile of the CPU lower bound (default 0.5).
    #[serde(
        rename = "recommendationLowerBoundCPUPercentile",
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "float::option"
    )]
    pub recommendation_lower_bound_cpu_percentile: Option<f64>,
    /// Usage percentile of the CPU upper bound (default 0.95).
    #[serde(
        rename = "recommendationUpperBoundCPUPercentile",
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "float::option"
    )]
    pub recommendation_upper_bound_cpu_percentile: Option<f64>,
    /// Usage percentile of the memory target (default 0.9).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "float::option"
    )]
    pub target_memory_percentile: Option<f64>,
    /// Usage percentile of the memory lower bound (default 0.5).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "float::option"
    )]
    pub recommendation_lower_bound_memory_percentile: Option<f64>,
    /// Usage percentile of the memory upper bound (default 0.95).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "float::option"
    )]
    pub recommendation_upper_bound_memory_percentile: Option<f64>,
    /// Time after which a CPU sample has half its weight (default 24h).
    #[serde(
        rename = "cpuHistogramDecayHalfLife",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu_histogram_decay_half_life: Option<String>,
    /// Time after which a memory sample has half its weight (default 24h).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_histogram_decay_half_life: Option<String>,
    /// Length of one interval over which peak memory is taken (default 24h).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_aggregation_interval: Option<String>,
    /// Number of such intervals making up the memory window (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_aggregation_interval_count: Option<i64>,
    /// Feature gates of the VPA components, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_gates: BTreeMap<String, bool>,
    /// Highest recommendation for any container (resource name to quantity); a
    /// VerticalPodAutoscaler's own maximum wins (none by default).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "kube_schema::resource_list")]
    pub max_allowed: BTreeMap<String, Quantity>,
    /// Workers updating VPA objects in parallel (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommender_update_worker_count: Option<i64>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}
