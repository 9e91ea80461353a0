//! Typed fields of a Seed's `spec.settings` and `spec.accessRestrictions`.
//! Every field is optional: gardener-apiserver accepts objects without them, and a field that is
//! absent stays absent when seedlet writes an object back.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Toleration as K8sToleration;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One access restriction, named by its key.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessRestriction {
    /// Name of the restriction (for example `eu-access-only`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// PROXY-protocol switch of load balancers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoadBalancerServicesProxyProtocol {
    /// Whether the load balancers may use the PROXY protocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<bool>,
}

/// The dependency-watchdog components of a seed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettingDependencyWatchdog {
    /// Restarts dependants stuck in a crash loop once what they depend on is back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weeder: Option<SeedSettingDependencyWatchdogWeeder>,
    /// Scales controllers down while a shoot API server is unreachable from outside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prober: Option<SeedSettingDependencyWatchdogProber>,
}

/// Prober switch.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettingDependencyWatchdogProber {
    /// Whether the prober runs (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// Weeder switch.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettingDependencyWatchdogWeeder {
    /// Whether the weeder runs (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// Spare capacity kept free by low-priority placeholder pods.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettingExcessCapacityReservation {
    /// Whether placeholder pods are deployed (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Sizes and placement of the placeholder pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configs: Option<Vec<SeedSettingExcessCapacityReservationConfig>>,
}

/// One kind of placeholder pod.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettingExcessCapacityReservationConfig {
    /// Resources each placeholder pod requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<BTreeMap<String, Quantity>>,
    /// Node selector of the placeholder pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<BTreeMap<String, String>>,
    /// Tolerations of the placeholder pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<Vec<K8sToleration>>,
}

/// Settings for LoadBalancer Services in the seed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettingLoadBalancerServices {
    /// Annotations put on every LoadBalancer Service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// `Cluster` or `Local` for the Services' external traffic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_traffic_policy: Option<String>,
    /// Per-zone overrides, for seeds that run one Service per zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<Vec<SeedSettingLoadBalancerServicesZones>>,
    /// Whether the load balancers may speak the PROXY protocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_protocol: Option<LoadBalancerServicesProxyProtocol>,
    /// Whether one ingress gateway per zone is deployed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zonal_ingress: Option<SeedSettingLoadBalancerServicesZonalIngress>,
    /// Load balancer class set on the Services.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
}

/// Per-zone ingress gateways.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettingLoadBalancerServicesZonalIngress {
    /// Whether one gateway per zone is deployed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// Overrides for the LoadBalancer Service of one zone.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettingLoadBalancerServicesZones {
    /// Name of the zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Annotations for this zone's Service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// External traffic policy for this zone's Service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_traffic_policy: Option<String>,
    /// PROXY-protocol setting for this zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_protocol: Option<LoadBalancerServicesProxyProtocol>,
}

/// Automatic growth of control-plane volumes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettingPersistentVolumeClaimAutoscaler {
    /// Whether the autoscaler is deployed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// Zone-aware routing for control-plane Services.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettingTopologyAwareRouting {
    /// Whether routing prefers endpoints in the same zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// The vertical pod autoscaler of a seed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettingVerticalPodAutoscaler {
    /// Whether Gardener deploys the autoscaler (off when the seed brings its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Feature gates of the autoscaler components.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_gates: Option<BTreeMap<String, bool>>,
    /// Upper bound of recommendations, per resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_allowed: Option<BTreeMap<String, Quantity>>,
}

/// Zone placement of shoot control planes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettingZoneSelection {
    /// `Prefer` or `Enforce` a single zone for non-HA control planes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}
