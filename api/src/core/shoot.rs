//! `core.gardener.cloud/v1beta1` `Shoot` (namespaced): the fields seedlet reads (Cluster sync,
//! required extensions, ShootState backup); everything else round-trips through `extra`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{
    Extra, LastError, LastOperation, LastOperationType, NamedResourceReference, schema,
};
use crate::conditions::Condition;
use crate::core::Extension;
use crate::names::technical_id;

/// Spec of a Shoot.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "core.gardener.cloud",
    version = "v1beta1",
    kind = "Shoot",
    namespaced,
    status = "ShootStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "A Shoot is a Kubernetes cluster whose control plane runs in a seed.",
    printcolumn(
        name = "Cloud Profile",
        type_ = "string",
        json_path = ".spec.cloudProfile.name"
    ),
    printcolumn(name = "Provider", type_ = "string", json_path = ".spec.provider.type"),
    printcolumn(name = "Region", type_ = "string", json_path = ".spec.region"),
    printcolumn(
        name = "K8S Version",
        type_ = "string",
        json_path = ".spec.kubernetes.version"
    ),
    // Gardener's own table prints the Seed from `spec.seedName`, "Hibernation" from the observed
    // `status.hibernated` (with the spec: Hibernated, Hibernating, Waking Up, Awake) and "Last
    // Operation" as `<type> <state> (<progress>%)`; a CRD column holds one field each.
    printcolumn(name = "Seed", type_ = "string", json_path = ".spec.seedName"),
    printcolumn(
        name = "Hibernated",
        type_ = "boolean",
        json_path = ".status.hibernated"
    ),
    printcolumn(
        name = "Last Operation",
        type_ = "string",
        json_path = ".status.lastOperation.type"
    ),
    printcolumn(
        name = "Operation State",
        type_ = "string",
        json_path = ".status.lastOperation.state"
    ),
    printcolumn(
        name = "Status",
        type_ = "string",
        json_path = ".metadata.labels.shoot\\.gardener\\.cloud/status"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ShootSpec {
    /// Deprecated cloud profile name; `cloudProfile` wins when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_profile_name: Option<String>,
    /// Reference to a CloudProfile or NamespacedCloudProfile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_profile: Option<CloudProfileReference>,
    /// DNS settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<ShootDns>,
    /// Extensions of the shoot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<Extension>,
    /// Hibernation settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hibernation: Option<Hibernation>,
    /// Kubernetes settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<ShootKubernetes>,
    /// Networking settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub networking: Option<Networking>,
    /// Purpose (`evaluation`, `testing`, `development`, `production`, `infrastructure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    /// Infrastructure provider and workers.
    pub provider: ShootProvider,
    /// Region.
    pub region: String,
    /// Deprecated SecretBinding name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_binding_name: Option<String>,
    /// CredentialsBinding name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_binding_name: Option<String>,
    /// Seed the shoot is scheduled to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_name: Option<String>,
    /// Resources referenced from provider configs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<NamedResourceReference>,
    /// Unmodelled fields (addons, maintenance, monitoring, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.cloudProfile`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloudProfileReference {
    /// `CloudProfile` (default) or `NamespacedCloudProfile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name of the profile.
    pub name: String,
}

/// Kind of a cloud profile reference without explicit kind.
pub const DEFAULT_CLOUD_PROFILE_KIND: &str = "CloudProfile";

impl CloudProfileReference {
    /// The kind, defaulting to `CloudProfile`.
    pub fn kind_or_default(&self) -> &str {
        self.kind.as_deref().unwrap_or(DEFAULT_CLOUD_PROFILE_KIND)
    }
}

/// `spec.dns`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootDns {
    /// External domain of the shoot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// DNS providers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<DnsProvider>,
    /// Unmodelled fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.dns.providers[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DnsProvider {
    /// Provider type (`unmanaged` means no DNSRecord).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Whether this is the primary provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<bool>,
    /// Unmodelled fields (credentialsRef, domains, zones, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.hibernation`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hibernation {
    /// Whether the shoot is (to be) hibernated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Cron schedules that hibernate and wake up the shoot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedules: Vec<crate::core::HibernationSchedule>,
    /// Unmodelled fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.kubernetes`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootKubernetes {
    /// Kubernetes version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Unmodelled fields (component configs).
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.networking`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Networking {
    /// Network plugin type (`calico`, `cilium`); absent for workerless shoots.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Provider configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Pod CIDR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<String>,
    /// Node CIDR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    /// Service CIDR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<String>,
    /// IP families.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_families: Vec<String>,
    /// Unmodelled fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.provider`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootProvider {
    /// Provider type.
    #[serde(rename = "type")]
    pub type_: String,
    /// Provider-specific infrastructure configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub infrastructure_config: Option<serde_json::Value>,
    /// Provider-specific control-plane configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub control_plane_config: Option<serde_json::Value>,
    /// Worker pools; empty for workerless shoots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers: Vec<Worker>,
    /// Unmodelled fields (workersSettings, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.provider.workers[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Worker {
    /// Pool name.
    pub name: String,
    /// Machine type and image.
    pub machine: Machine,
    /// Minimum pool size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<i32>,
    /// Maximum pool size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<i32>,
    /// Container runtime interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cri: Option<Cri>,
    /// Provider-specific worker configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Unmodelled fields (volume, zones, labels, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// `workers[].machine`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Machine {
    /// Machine type.
    #[serde(rename = "type")]
    pub type_: String,
    /// Machine image; defaulted by the API server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<MachineImage>,
    /// CPU architecture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    /// Unmodelled fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `workers[].machine.image`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineImage {
    /// Image name (the OperatingSystemConfig type).
    pub name: String,
    /// Image version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Unmodelled fields (providerConfig).
    #[serde(flatten)]
    pub extra: Extra,
}

/// `workers[].cri`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cri {
    /// CRI name (`containerd`).
    pub name: String,
    /// Additional container runtimes (ContainerRuntime extension types).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub container_runtimes: Vec<ContainerRuntime>,
}

/// `workers[].cri.containerRuntimes[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRuntime {
    /// Runtime type (`gvisor`, ...).
    #[serde(rename = "type")]
    pub type_: String,
    /// Runtime configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
}

/// Status of a Shoot.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootStatus {
    /// Health conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Constraints (`HibernationPossible`, `MaintenancePreconditionsSatisfied`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<Condition>,
    /// Whether the shoot is hibernated (wire name `hibernated`). Optional here so that a
    /// serialised partial status never resets it by accident.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hibernated: Option<bool>,
    /// Last operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_operation: Option<LastOperation>,
    /// Errors of the last operation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_errors: Vec<LastError>,
    /// Last observed generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Start of the current retry cycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_cycle_start_time: Option<Time>,
    /// Seed currently hosting the control plane (differs from spec during migration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_name: Option<String>,
    /// Technical ID = control-plane namespace; immutable once set.
    #[serde(
        rename = "technicalID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub technical_id: Option<String>,
    /// Unique ID of the shoot (stable across migration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Identity of the shoot cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_identity: Option<String>,
    /// Start of a control-plane migration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_start_time: Option<Time>,
    /// When a hibernation schedule last acted on the shoot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_hibernation_trigger_time: Option<Time>,
    /// Unmodelled fields (gardener, networking, credentials, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

impl Shoot {
    /// The technical ID: the stored `status.technicalID`, else `shoot--<project>--<name>`.
    pub fn technical_id(&self, project_name: &str) -> String {
        let stored = self
            .status
            .as_ref()
            .and_then(|status| status.technical_id.as_deref());
        technical_id::compute(
            stored,
            project_name,
            self.metadata.name.as_deref().unwrap_or(""),
        )
    }

    /// The referenced cloud profile: `spec.cloudProfile` wins over `spec.cloudProfileName`.
    pub fn cloud_profile(&self) -> Option<CloudProfileReference> {
        if let Some(reference) = &self.spec.cloud_profile {
            return Some(reference.clone());
        }
        self.spec
            .cloud_profile_name
            .as_ref()
            .map(|name| CloudProfileReference {
                kind: None,
                name: name.clone(),
            })
    }

    /// The last operation, if any.
    pub fn last_operation(&self) -> Option<&LastOperation> {
        self.status.as_ref()?.last_operation.as_ref()
    }

    /// Whether the last operation is of `type_`.
    pub fn last_operation_is(&self, type_: LastOperationType) -> bool {
        self.last_operation().is_some_and(|op| op.type_ == type_)
    }

    /// Whether the shoot has no worker pools.
    pub fn is_workerless(&self) -> bool {
        self.spec.provider.workers.is_empty()
    }

    /// Whether hibernation is enabled in the spec.
    pub fn hibernation_enabled(&self) -> bool {
        self.spec
            .hibernation
            .as_ref()
            .and_then(|hibernation| hibernation.enabled)
            .unwrap_or(false)
    }
}
