//! `core.gardener.cloud/v1beta1` `Seed` (cluster-scoped): the cluster hosting shoot control planes.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Extra, LastOperation, NamedResourceReference, ObjectReference, schema};
use crate::conditions::Condition;
use crate::core::Extension;

/// Spec of a Seed: its provider, networks, DNS, backup, settings and extensions.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "core.gardener.cloud",
    version = "v1beta1",
    kind = "Seed",
    status = "SeedStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "A Seed is a cluster that hosts shoot control planes.",
    printcolumn(
        name = "Status",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"GardenletReady\")].status"
    ),
    printcolumn(name = "Provider", type_ = "string", json_path = ".spec.provider.type"),
    printcolumn(name = "Region", type_ = "string", json_path = ".spec.provider.region"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "Version",
        type_ = "string",
        json_path = ".status.gardener.version"
    ),
    printcolumn(
        name = "K8S Version",
        type_ = "string",
        json_path = ".status.kubernetesVersion"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct SeedSpec {
    /// Backup object store configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup: Option<SeedBackup>,
    /// DNS configuration.
    #[serde(default)]
    pub dns: SeedDns,
    /// Network CIDRs of the seed.
    pub networks: SeedNetworks,
    /// Infrastructure provider of the seed.
    pub provider: SeedProvider,
    /// Feature settings (scheduling, dependency watchdog, VPA, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<SeedSettings>,
    /// Taints; `seed.gardener.cloud/protected` restricts the seed to `garden` shoots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<SeedTaint>,
    /// Volume settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<SeedVolume>,
    /// Ingress domain and controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress: Option<SeedIngress>,
    /// Extensions to deploy into the seed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<Extension>,
    /// Resources referenced from provider configs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<NamedResourceReference>,
    /// Access restrictions this seed fulfils; shoots asking for them may be scheduled here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_restrictions: Option<Vec<crate::typed::AccessRestriction>>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.backup`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedBackup {
    /// Backup provider type.
    pub provider: String,
    /// Provider-specific configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Region of the object store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Credentials for the object store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_ref: Option<ObjectReference>,
    /// Credentials as a Secret reference: the field gardens before Gardener v1.120 use instead
    /// of `credentialsRef`; kept so that seedlet serves and reads both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<k8s_openapi::api::core::v1::SecretReference>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.dns`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedDns {
    /// DNS provider for seed-level records (ingress).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<SeedDnsProvider>,
    /// Internal domain of shoots on this seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal: Option<SeedDnsDomain>,
    /// Default domains of shoots on this seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<Vec<SeedDnsDomain>>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.dns.provider`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedDnsProvider {
    /// DNS provider type (`aws-route53`, ...).
    #[serde(rename = "type")]
    pub type_: String,
    /// Credentials of the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_ref: Option<ObjectReference>,
    /// Credentials as a Secret reference: the field gardens before Gardener v1.120 use instead
    /// of `credentialsRef`; kept so that seedlet serves and reads both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<k8s_openapi::api::core::v1::SecretReference>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.dns.internal` and `spec.dns.defaults[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedDnsDomain {
    /// DNS provider type.
    #[serde(rename = "type")]
    pub type_: String,
    /// Domain name.
    pub domain: String,
    /// Hosted zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Credentials of the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_ref: Option<ObjectReference>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.networks`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedNetworks {
    /// Node CIDR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    /// Pod CIDR.
    pub pods: String,
    /// Service CIDR.
    pub services: String,
    /// Default CIDRs for shoots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shoot_defaults: Option<ShootNetworkDefaults>,
    /// CIDRs blocked for shoot workloads.
    #[serde(rename = "blockCIDRs", default, skip_serializing_if = "Vec::is_empty")]
    pub block_cidrs: Vec<String>,
    /// IP families (`IPv4`, `IPv6`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_families: Vec<String>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.networks.shootDefaults`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootNetworkDefaults {
    /// Default pod CIDR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<String>,
    /// Default service CIDR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<String>,
}

/// `spec.provider`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedProvider {
    /// Provider type (`aws`, `local`, ...).
    #[serde(rename = "type")]
    pub type_: String,
    /// Provider-specific configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Region.
    pub region: String,
    /// Availability zones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<String>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.settings`: switches for the components Gardener runs in the seed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettings {
    /// Scheduling settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<SeedSchedulingSettings>,
    /// Placeholder pods that keep spare node capacity free for control planes scheduled later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excess_capacity_reservation: Option<crate::typed::SeedSettingExcessCapacityReservation>,
    /// Settings for LoadBalancer Services created in the seed (annotations, traffic policy, zones, proxy protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_balancer_services: Option<crate::typed::SeedSettingLoadBalancerServices>,
    /// Whether and how Gardener runs a vertical pod autoscaler in the seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vertical_pod_autoscaler: Option<crate::typed::SeedSettingVerticalPodAutoscaler>,
    /// Switches for the dependency-watchdog components (weeder, prober).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependency_watchdog: Option<crate::typed::SeedSettingDependencyWatchdog>,
    /// Whether Services of shoot control planes prefer endpoints in the caller's zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_aware_routing: Option<crate::typed::SeedSettingTopologyAwareRouting>,
    /// How many zones of the seed a shoot control plane may be placed in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_selection: Option<crate::typed::SeedSettingZoneSelection>,
    /// Whether volumes of control-plane components are grown automatically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim_autoscaler:
        Option<crate::typed::SeedSettingPersistentVolumeClaimAutoscaler>,
    /// Other settings (dependencyWatchdog, verticalPodAutoscaler, ...).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.settings.scheduling`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSchedulingSettings {
    /// Whether the scheduler considers the seed.
    pub visible: bool,
}

/// `spec.taints[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedTaint {
    /// Taint key.
    pub key: String,
    /// Taint value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// `spec.volume`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedVolume {
    /// Minimum volume size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_size: Option<Quantity>,
    /// Volume providers by purpose.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<SeedVolumeProvider>,
}

/// `spec.volume.providers[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedVolumeProvider {
    /// Purpose (`etcd-main`, ...).
    pub purpose: String,
    /// Provider name.
    pub name: String,
}

/// `spec.ingress`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedIngress {
    /// Ingress domain.
    pub domain: String,
    /// Ingress controller.
    pub controller: SeedIngressController,
}

/// `spec.ingress.controller`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedIngressController {
    /// Controller kind (`nginx`).
    pub kind: String,
    /// Controller configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
}

/// Status of a Seed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedStatus {
    /// Gardener component that last wrote the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gardener: Option<GardenerInfo>,
    /// Kubernetes version of the seed cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// Conditions (`GardenletReady`, `ExtensionsReady`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Last observed generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Identity of the seed cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_identity: Option<String>,
    /// Capacity (`shoots`, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capacity: BTreeMap<String, Quantity>,
    /// Allocatable resources.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub allocatable: BTreeMap<String, Quantity>,
    /// NotAfter of the agent's garden client certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_certificate_expiration_timestamp: Option<Time>,
    /// Last operation of the seed reconciler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_operation: Option<LastOperation>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `status.gardener`: identity of the writing component.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GardenerInfo {
    /// Instance ID (pod name or hostname).
    pub id: String,
    /// Component name.
    pub name: String,
    /// Component version.
    pub version: String,
}

impl crate::conditions::WithConditions for Seed {
    fn conditions(&self) -> &[Condition] {
        Seed::conditions(self)
    }
}

impl Seed {
    /// The conditions of the status (empty without status).
    pub fn conditions(&self) -> &[Condition] {
        self.status
            .as_ref()
            .map(|status| status.conditions.as_slice())
            .unwrap_or_default()
    }

    /// Whether the seed carries a taint with `key`.
    pub fn has_taint(&self, key: &str) -> bool {
        self.spec.taints.iter().any(|taint| taint.key == key)
    }
}
