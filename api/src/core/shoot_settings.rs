//! The smaller sections of `Shoot.spec`: addons, DNS, hibernation, networking, maintenance,
//! monitoring, system components, control-plane placement, scheduling (seed selector and
//! tolerations) and access restrictions.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{CrossVersionObjectReference, Extra, schema};

/// `spec.addons` (deprecated; not allowed from Kubernetes 1.35).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Addons {
    /// The Kubernetes dashboard addon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_dashboard: Option<KubernetesDashboard>,
    /// The nginx ingress controller addon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nginx_ingress: Option<NginxIngress>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `addons.kubernetesDashboard`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesDashboard {
    /// Whether the addon is installed.
    pub enabled: bool,
    /// How users log in to the dashboard (`token`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication_mode: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `addons.nginxIngress`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NginxIngress {
    /// Whether the addon is installed.
    pub enabled: bool,
    /// Source CIDRs allowed to reach the ingress load balancer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_balancer_source_ranges: Vec<String>,
    /// Entries of the ingress controller's ConfigMap.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub config: BTreeMap<String, String>,
    /// `externalTrafficPolicy` of the load-balancer Service (`Cluster` by default, or `Local`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_traffic_policy: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.dns`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootDns {
    /// External domain of the cluster, used in the kubeconfigs handed out; immutable. A default
    /// domain of the garden is chosen when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// DNS providers for a domain of the user's own (more than one is deprecated).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<DnsProvider>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.dns.providers[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DnsProvider {
    /// Domains this provider serves or not (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domains: Option<DnsIncludeExclude>,
    /// Whether this provider serves the shoot's own records (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<bool>,
    /// Secret with the provider's credentials (deprecated for `credentialsRef`; not allowed
    /// from Kubernetes 1.35).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_name: Option<String>,
    /// Provider type (`aws-route53`, ...); `unmanaged` means no DNSRecords are written.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Hosted zones this provider uses or not (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<DnsIncludeExclude>,
    /// Secret or WorkloadIdentity with the provider's credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_ref: Option<CrossVersionObjectReference>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Lists of names to include and exclude.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DnsIncludeExclude {
    /// Names included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// Names excluded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.hibernation`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hibernation {
    /// Desired state: true hibernates the shoot, false or unset wakes it up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Cron schedules that hibernate and wake up the shoot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedules: Vec<crate::core::HibernationSchedule>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.networking`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Networking {
    /// Network extension type (`calico`, `cilium`); immutable, unset for workerless shoots.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Network-specific configuration, handed to the Network extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Pod CIDR; immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<String>,
    /// Node CIDR; may be changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    /// Service CIDR; immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<String>,
    /// IP families of the cluster network (`IPv4`, `IPv6`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_families: Vec<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.maintenance`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Maintenance {
    /// Which versions maintenance may raise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_update: Option<MaintenanceAutoUpdate>,
    /// Daily window in which maintenance runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_window: Option<MaintenanceTimeWindow>,
    /// Whether spec changes wait for the maintenance window before they are rolled out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confine_spec_update_rollout: Option<bool>,
    /// Which credentials maintenance rotates, and how often.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_rotation: Option<MaintenanceAutoRotation>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `maintenance.autoUpdate`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceAutoUpdate {
    /// Whether the Kubernetes patch version is raised (default true).
    #[serde(default)]
    pub kubernetes_version: bool,
    /// Whether machine image versions are raised (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_image_version: Option<bool>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `maintenance.timeWindow`, both ends as `HHMMSS±HHMM` (e.g. `220000+0100`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceTimeWindow {
    /// Start of the window.
    pub begin: String,
    /// End of the window.
    pub end: String,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `maintenance.autoRotation`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceAutoRotation {
    /// Credentials rotated automatically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<MaintenanceCredentialsAutoRotation>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `autoRotation.credentials`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceCredentialsAutoRotation {
    /// Credentials of the observability components.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observability: Option<MaintenanceRotationConfig>,
    /// SSH key pair of the worker nodes.
    #[serde(
        rename = "sshKeypair",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub ssh_keypair: Option<MaintenanceRotationConfig>,
    /// Key that encrypts etcd data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etcd_encryption_key: Option<MaintenanceRotationConfig>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Schedule of one automatic rotation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceRotationConfig {
    /// Time from a completed rotation to the next (Go duration, 30m to 90d, default 7d).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation_period: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.monitoring`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Monitoring {
    /// Where alerts go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alerting: Option<Alerting>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `monitoring.alerting`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Alerting {
    /// E-mail addresses that receive the shoot's alerts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub email_receivers: Vec<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.systemComponents`: components Gardener runs in the shoot's data plane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SystemComponents {
    /// CoreDNS settings.
    #[serde(rename = "coreDNS", default, skip_serializing_if = "Option::is_none")]
    pub core_dns: Option<CoreDns>,
    /// Node-local DNS cache settings.
    #[serde(
        rename = "nodeLocalDNS",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_local_dns: Option<NodeLocalDns>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `systemComponents.coreDNS`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CoreDns {
    /// How CoreDNS is scaled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<CoreDnsAutoscaling>,
    /// Rewriting of queries that wrongly got a search-path suffix appended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewriting: Option<CoreDnsRewriting>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `coreDNS.autoscaling`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CoreDnsAutoscaling {
    /// `horizontal` (by load, the default) or `cluster-proportional` (by cluster size).
    pub mode: String,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `coreDNS.rewriting`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CoreDnsRewriting {
    /// Domain suffixes (with at least one dot) whose queries are answered without the search
    /// path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub common_suffixes: Vec<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `systemComponents.nodeLocalDNS`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeLocalDns {
    /// Whether a DNS cache runs on every node.
    pub enabled: bool,
    /// Whether the cache talks TCP to CoreDNS.
    #[serde(
        rename = "forceTCPToClusterDNS",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub force_tcp_to_cluster_dns: Option<bool>,
    /// Whether the cache talks TCP to the upstream (infrastructure) DNS.
    #[serde(
        rename = "forceTCPToUpstreamDNS",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub force_tcp_to_upstream_dns: Option<bool>,
    /// Whether the cache sends non-cluster queries to CoreDNS instead of upstream.
    #[serde(
        rename = "disableForwardToUpstreamDNS",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub disable_forward_to_upstream_dns: Option<bool>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.controlPlane`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlane {
    /// High availability of the control plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_availability: Option<HighAvailability>,
    /// Zones the control plane is pinned to (the cloud profile must allow it); immutable once
    /// set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `controlPlane.highAvailability`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HighAvailability {
    /// The failure the control plane survives.
    pub failure_tolerance: FailureTolerance,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `highAvailability.failureTolerance`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureTolerance {
    /// `node` (replicas on different nodes) or `zone` (replicas in different zones).
    #[serde(rename = "type")]
    pub type_: String,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.seedSelector`: a label selector over Seeds plus their provider types.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootSeedSelector {
    /// Seed labels that must match exactly.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    /// Set-based requirements on seed labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
    /// Provider types a seed may have; `*` for any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_types: Vec<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.tolerations[]`: a Seed taint the shoot accepts.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootToleration {
    /// Taint key.
    pub key: String,
    /// Taint value; any value when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.accessRestrictions[]` (e.g. `eu-access-only`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootAccessRestriction {
    /// Restriction name, offered by the cloud profile's region.
    pub name: String,
    /// Options of the restriction.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}
