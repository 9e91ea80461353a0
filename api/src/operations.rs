//! `operations.gardener.cloud/v1alpha1` `Bastion` (namespaced, in the shoot's project namespace):
//! an SSH jump host into a shoot's worker network, reconciled by the seed's agent through the
//! extension `Bastion` and expired by the garden controller.

// kube's `printcolumn(...)` arguments repeat `type_ = "string"`, which clippy mistakes for
// duplicated attributes.
#![allow(clippy::duplicated_attributes)]

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Extra, LocalReference};
use crate::conditions::Condition;

/// API group of [`Bastion`].
pub const GROUP: &str = "operations.gardener.cloud";

/// Spec of a Bastion.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "operations.gardener.cloud",
    version = "v1alpha1",
    kind = "Bastion",
    namespaced,
    status = "BastionStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "A Bastion is an SSH jump host into the worker network of a shoot.",
    printcolumn(name = "Shoot", type_ = "string", json_path = ".spec.shootRef.name"),
    printcolumn(name = "Seed", type_ = "string", json_path = ".spec.seedName"),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"BastionReady\")].status"
    ),
    printcolumn(name = "IP", type_ = "string", json_path = ".status.ingress.ip"),
    printcolumn(
        name = "Hostname",
        type_ = "string",
        json_path = ".status.ingress.hostname"
    ),
    printcolumn(
        name = "Expires",
        type_ = "date",
        json_path = ".status.expirationTimestamp"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct BastionSpec {
    /// The shoot the bastion gives access to (immutable).
    pub shoot_ref: LocalReference,
    /// Seed of the shoot (set by admission).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_name: Option<String>,
    /// Provider type of the shoot (set by admission).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_type: Option<String>,
    /// The user's SSH public key (immutable).
    #[serde(rename = "sshPublicKey")]
    pub ssh_public_key: String,
    /// Source ranges allowed to connect.
    #[serde(default)]
    pub ingress: Vec<BastionIngressPolicy>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.ingress[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BastionIngressPolicy {
    /// The allowed range.
    pub ip_block: IpBlock,
}

/// An IP range (`networking/v1` IPBlock's `cidr`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct IpBlock {
    /// CIDR.
    pub cidr: String,
}

/// Status of a Bastion.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BastionStatus {
    /// Where to connect (`ip`/`hostname`, a `LoadBalancerIngress`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<k8s_openapi::api::core::v1::LoadBalancerIngress>")]
    pub ingress: Option<serde_json::Value>,
    /// Conditions (`BastionReady`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Last keep-alive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_heartbeat_timestamp: Option<Time>,
    /// When the bastion expires without a further keep-alive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiration_timestamp: Option<Time>,
    /// Last observed generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

impl Bastion {
    /// The conditions of the status (empty without status).
    pub fn conditions(&self) -> &[Condition] {
        self.status
            .as_ref()
            .map(|status| status.conditions.as_slice())
            .unwrap_or_default()
    }
}
