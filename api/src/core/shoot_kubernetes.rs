//! `Shoot.spec.kubernetes`: the Kubernetes version and the settings of the control-plane
//! components (kube-apiserver, kube-controller-manager, kube-scheduler, etcd) and of kube-proxy.
//! The autoscalers' settings are in `shoot_autoscaling.rs`, the kubelet's in `shoot_kubelet.rs`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ObjectReference as CoreObjectReference;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Extra, schema};
use crate::core::shoot::float;
use crate::core::shoot::kube_schema;
use crate::core::{ClusterAutoscaler, KubeletConfig, VerticalPodAutoscaler};

/// `spec.kubernetes`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootKubernetes {
    /// Cluster-autoscaler settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_autoscaler: Option<Box<ClusterAutoscaler>>,
    /// kube-apiserver settings.
    #[serde(
        rename = "kubeAPIServer",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub kube_api_server: Option<Box<KubeAPIServerConfig>>,
    /// kube-controller-manager settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_controller_manager: Option<Box<KubeControllerManagerConfig>>,
    /// kube-scheduler settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_scheduler: Option<Box<KubeSchedulerConfig>>,
    /// kube-proxy settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_proxy: Option<Box<KubeProxyConfig>>,
    /// Settings of every kubelet, unless a pool sets its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet: Option<Box<KubeletConfig>>,
    /// Kubernetes version (`1.32.3`, or `1.32` for the newest patch); the newest version of the
    /// cloud profile when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Vertical pod autoscaler settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vertical_pod_autoscaler: Option<Box<VerticalPodAutoscaler>>,
    /// Settings of the main and events etcd.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etcd: Option<Box<Etcd>>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubernetes.etcd`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Etcd {
    /// The etcd holding the cluster's objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main: Option<EtcdConfig>,
    /// The etcd holding the cluster's events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<EtcdConfig>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Settings of one etcd.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdConfig {
    /// Vertical scaling bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<ControlPlaneAutoscaling>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Vertical scaling bounds of a control-plane component.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneAutoscaling {
    /// Lowest resource requests the vertical pod autoscaler may set (resource name to quantity),
    /// to spare a large cluster slow scale-ups.
    #[schemars(schema_with = "kube_schema::resource_list")]
    pub min_allowed: BTreeMap<String, Quantity>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubernetes.kubeAPIServer`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeAPIServerConfig {
    /// Feature gates of kube-apiserver, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_gates: BTreeMap<String, bool>,
    /// Admission plugins enabled (or disabled) on top of Gardener's set, with their
    /// configuration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub admission_plugins: Vec<AdmissionPlugin>,
    /// Audiences a service-account token must be bound to (default `kubernetes`).
    #[serde(
        rename = "apiAudiences",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub api_audiences: Vec<String>,
    /// Audit logging settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_config: Option<AuditConfig>,
    /// API groups/versions switched on or off (`group/version` to enabled).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub runtime_config: BTreeMap<String, bool>,
    /// Service-account token settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_config: Option<ServiceAccountConfig>,
    /// Watch cache sizes per resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_cache_sizes: Option<WatchCacheSizes>,
    /// Limits on requests in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<APIServerRequests>,
    /// Whether anonymous requests are allowed (deprecated; not allowed from Kubernetes 1.35).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_anonymous_authentication: Option<bool>,
    /// How long events are kept (Go duration, default `1h`).
    #[serde(rename = "eventTTL", default, skip_serializing_if = "Option::is_none")]
    pub event_ttl: Option<String>,
    /// Log verbosity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<APIServerLogging>,
    /// Seconds a pod tolerates a not-ready node by default (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_not_ready_toleration_seconds: Option<i64>,
    /// Seconds a pod tolerates an unreachable node by default (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_unreachable_toleration_seconds: Option<i64>,
    /// Encryption at rest: resources beyond Secrets and the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption_config: Option<EncryptionConfig>,
    /// Authentication configuration from a ConfigMap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_authentication: Option<StructuredAuthentication>,
    /// Authorization configuration from a ConfigMap, with webhook kubeconfigs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_authorization: Option<StructuredAuthorization>,
    /// Vertical scaling bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<ControlPlaneAutoscaling>,
    /// Lowest TLS version accepted (`VersionTLS12`, `VersionTLS13`).
    #[serde(
        rename = "tlsMinVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub tls_min_version: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubeAPIServer.admissionPlugins[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionPlugin {
    /// Plugin name.
    pub name: String,
    /// Plugin configuration, passed through as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub config: Option<serde_json::Value>,
    /// Switches off a plugin Gardener would enable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
    /// Secret (listed in `spec.resources`) with a kubeconfig for the plugin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubeconfig_secret_name: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubeAPIServer.auditConfig`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditConfig {
    /// Where the audit policy comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_policy: Option<AuditPolicy>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `auditConfig.auditPolicy`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditPolicy {
    /// ConfigMap in the shoot's namespace that holds the audit policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_ref: Option<CoreObjectReference>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubeAPIServer.serviceAccountConfig`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccountConfig {
    /// Issuer (`iss` claim) of new tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// Whether projected tokens get a longer lifetime to ease the move from legacy tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extend_token_expiration: Option<bool>,
    /// Longest lifetime of a requested token (Go duration); longer requests are cut to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_token_expiration: Option<String>,
    /// Further issuers whose tokens are accepted (not used for new tokens).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted_issuers: Vec<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubeAPIServer.watchCacheSizes`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WatchCacheSizes {
    /// Default size (deprecated: kube-apiserver sizes its caches itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<i32>,
    /// Sizes for single resources; 0 switches a resource's cache off.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ResourceWatchCacheSize>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `watchCacheSizes.resources[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceWatchCacheSize {
    /// API group; the core group when unset.
    #[serde(rename = "apiGroup", default, skip_serializing_if = "Option::is_none")]
    pub api_group: Option<String>,
    /// Resource, lower-case plural (`secrets`).
    pub resource: String,
    /// Cache size.
    #[serde(rename = "size")]
    pub cache_size: i32,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubeAPIServer.requests`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct APIServerRequests {
    /// Most read requests in flight before further ones are rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_non_mutating_inflight: Option<i32>,
    /// Most write requests in flight before further ones are rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_mutating_inflight: Option<i32>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubeAPIServer.logging`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct APIServerLogging {
    /// Log verbosity (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verbosity: Option<i32>,
    /// Verbosity of the HTTP access log.
    #[serde(
        rename = "httpAccessVerbosity",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub http_access_verbosity: Option<i32>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubeAPIServer.encryptionConfig`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EncryptionConfig {
    /// Resources (`resource` or `resource.group`, plural) encrypted besides Secrets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// The encryption provider.
    #[serde(default)]
    pub provider: EncryptionProvider,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `encryptionConfig.provider`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EncryptionProvider {
    /// `aescbc` (default), `aesgcm` or `secretbox`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubeAPIServer.structuredAuthentication`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StructuredAuthentication {
    /// ConfigMap in the project namespace holding an `AuthenticationConfiguration`.
    pub config_map_name: String,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubeAPIServer.structuredAuthorization`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StructuredAuthorization {
    /// ConfigMap in the project namespace holding an `AuthorizationConfiguration`.
    pub config_map_name: String,
    /// Kubeconfigs of the configuration's webhook authorizers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kubeconfigs: Vec<AuthorizerKubeconfigReference>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `structuredAuthorization.kubeconfigs[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizerKubeconfigReference {
    /// Name of the webhook authorizer in the configuration.
    pub authorizer_name: String,
    /// Secret holding its kubeconfig.
    pub secret_name: String,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubernetes.kubeControllerManager`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeControllerManagerConfig {
    /// Feature gates of kube-controller-manager, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_gates: BTreeMap<String, bool>,
    /// Horizontal pod autoscaler settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizontal_pod_autoscaler: Option<HorizontalPodAutoscalerConfig>,
    /// Prefix length of each node's IPv4 pod range (default 24); immutable.
    #[serde(
        rename = "nodeCIDRMaskSize",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_cidr_mask_size: Option<i32>,
    /// Grace period before pods on a failed node are deleted (deprecated; not allowed from
    /// Kubernetes 1.33).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_eviction_timeout: Option<String>,
    /// How long a node may stay silent before it is marked unhealthy (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_monitor_grace_period: Option<String>,
    /// Prefix length of each node's IPv6 pod range (default 64); immutable.
    #[serde(
        rename = "nodeCIDRMaskSizeIPv6",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_cidr_mask_size_ipv6: Option<i32>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubeControllerManager.horizontalPodAutoscaler` (durations are Go durations).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscalerConfig {
    /// Time after start during which a pod's CPU samples are not trusted.
    #[serde(
        rename = "cpuInitializationPeriod",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu_initialization_period: Option<String>,
    /// Window over which the highest recommendation wins when scaling down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downscale_stabilization: Option<String>,
    /// Time after start during which readiness changes do not count as becoming ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_readiness_delay: Option<String>,
    /// How often the autoscaler recomputes replica counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_period: Option<String>,
    /// Smallest deviation of the metric ratio from 1.0 that triggers scaling.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "float::option"
    )]
    pub tolerance: Option<f64>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubernetes.kubeScheduler`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeSchedulerConfig {
    /// Feature gates of kube-scheduler, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_gates: BTreeMap<String, bool>,
    /// Most volumes per node (deprecated and ignored; CSI drivers set the limit).
    #[serde(
        rename = "kubeMaxPDVols",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub kube_max_pd_vols: Option<String>,
    /// Scheduling profile: `balanced` (default) or `bin-packing`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `kubernetes.kubeProxy`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeProxyConfig {
    /// Feature gates of kube-proxy, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_gates: BTreeMap<String, bool>,
    /// Proxy mode: `IPTables` (default), `IPVS` or `NFTables`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Whether kube-proxy runs at all; some network extensions need it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}
