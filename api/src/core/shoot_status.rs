//! `Shoot.status`: what the garden and the seed report about a Shoot — conditions, the last
//! operation and its errors, identities, credential rotations, maintenance, observed networks,
//! pending worker updates and migrations.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Extra, LastError, LastOperation};
use crate::conditions::Condition;
use crate::core::GardenerInfo;

/// Status of a Shoot.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootStatus {
    /// Health conditions of the shoot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Conditions that restrict operations (`HibernationPossible`,
    /// `MaintenancePreconditionsSatisfied`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<Condition>,
    /// The gardenlet (or seedlet agent) that last acted on the shoot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gardener: Option<Box<GardenerInfo>>,
    /// Whether the shoot is hibernated now. Optional here so that a serialised partial status
    /// never resets it by accident.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hibernated: Option<bool>,
    /// The last operation on the shoot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_operation: Option<LastOperation>,
    /// Errors of the last operation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_errors: Vec<LastError>,
    /// Generation of the spec the last operation acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Start of the current retry cycle, which bounds how long failed operations are retried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_cycle_start_time: Option<Time>,
    /// Seed that runs the control plane, written after a successful reconcile; differs from
    /// `spec.seedName` during a migration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_name: Option<String>,
    /// Technical ID: prefix of infrastructure names and, for ordinary shoots, the control-plane
    /// namespace in the seed; immutable once set.
    #[serde(
        rename = "technicalID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub technical_id: Option<String>,
    /// Unique ID of the shoot cluster (stable across migrations); immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Identity of the shoot cluster; immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_identity: Option<String>,
    /// Addresses of the shoot (API server endpoints, service-account issuer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub advertised_addresses: Vec<ShootAdvertisedAddress>,
    /// When the migration to another seed began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_start_time: Option<Time>,
    /// Credential rotations and encryption at rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<Box<ShootCredentials>>,
    /// When a hibernation schedule last changed the shoot's hibernation setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_hibernation_trigger_time: Option<Time>,
    /// Outcome of the last maintenance run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_maintenance: Option<Box<LastMaintenance>>,
    /// Networks in use, as reported by the extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub networking: Option<Box<NetworkingStatus>>,
    /// Worker pools waiting for an in-place update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_updates: Option<Box<InPlaceUpdatesStatus>>,
    /// Progress of a rollout requested with `gardener.cloud/operation=rollout-workers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manual_worker_pool_rollout: Option<Box<ManualWorkerPoolRollout>>,
    /// Progress of a live migration of the control plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_migration: Option<Box<LiveMigration>>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `status.advertisedAddresses[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootAdvertisedAddress {
    /// Address name (`external`, `internal`, `service-account-issuer`, ...).
    pub name: String,
    /// The URL.
    pub url: String,
    /// Application the address belongs to, for user interfaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `status.lastMaintenance`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastMaintenance {
    /// What the maintenance run did.
    #[serde(default)]
    pub description: String,
    /// When the run was triggered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triggered_time: Option<Time>,
    /// `Processing`, `Succeeded` or `Failed`.
    #[serde(default)]
    pub state: String,
    /// Why the run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `status.networking`: the CIDRs in use.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkingStatus {
    /// Pod networks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pods: Vec<String>,
    /// Node networks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// Service networks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<String>,
    /// Source addresses of the shoot's egress traffic, when the infrastructure knows them.
    #[serde(rename = "egressCIDRs", default, skip_serializing_if = "Vec::is_empty")]
    pub egress_cidrs: Vec<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `status.inPlaceUpdates`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdatesStatus {
    /// Pools with an in-place update still to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_worker_updates: Option<PendingWorkerUpdates>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `inPlaceUpdates.pendingWorkerUpdates`: pool names by update strategy.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingWorkerUpdates {
    /// Pools with strategy `AutoInPlaceUpdate`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub auto_in_place_update: Vec<String>,
    /// Pools with strategy `ManualInPlaceUpdate`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manual_in_place_update: Vec<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `status.manualWorkerPoolRollout`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManualWorkerPoolRollout {
    /// Pools not yet rolled out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_workers_rollouts: Vec<PendingWorkersRollout>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `status.liveMigration`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LiveMigration {
    /// One condition per migration step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// A worker pool and when its rollout began.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingWorkersRollout {
    /// Pool name.
    pub name: String,
    /// When the pool's last rollout began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_initiation_time: Option<Time>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `status.credentials`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootCredentials {
    /// State of each credential rotation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation: Option<ShootCredentialsRotation>,
    /// What is encrypted at rest, and how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption_at_rest: Option<EncryptionAtRest>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `credentials.rotation`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShootCredentialsRotation {
    /// Rotation of the certificate authorities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_authorities: Option<PhasedRotation>,
    /// Rotation of the nodes' SSH key pair.
    #[serde(
        rename = "sshKeypair",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub ssh_keypair: Option<SimpleRotation>,
    /// Rotation of the observability credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observability: Option<SimpleRotation>,
    /// Rotation of the service-account signing key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_key: Option<PhasedRotation>,
    /// Rotation of the etcd encryption key.
    #[serde(
        rename = "etcdEncryptionKey",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub etcd_encryption_key: Option<EtcdEncryptionKeyRotation>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// A rotation done in one step (SSH key pair, observability).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SimpleRotation {
    /// When the latest rotation began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_initiation_time: Option<Time>,
    /// When the latest rotation completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_completion_time: Option<Time>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// A rotation in two phases, prepare then complete (certificate authorities, service-account
/// key).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PhasedRotation {
    /// `Preparing`, `Prepared`, `Completing`, `Completed` (or a `...WithoutWorkersRollout`
    /// variant).
    #[serde(default)]
    pub phase: String,
    /// When the latest rotation completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_completion_time: Option<Time>,
    /// When the latest rotation began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_initiation_time: Option<Time>,
    /// When the preparation of the latest rotation finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_initiation_finished_time: Option<Time>,
    /// When completion of the latest rotation was requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_completion_triggered_time: Option<Time>,
    /// Pools whose nodes still have to be replaced for this rotation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_workers_rollouts: Vec<PendingWorkersRollout>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Rotation of the etcd encryption key: a [`PhasedRotation`] that may complete by itself.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdEncryptionKeyRotation {
    /// `Preparing`, `Prepared`, `Completing`, `Completed` (or a `...WithoutWorkersRollout`
    /// variant).
    #[serde(default)]
    pub phase: String,
    /// When the latest rotation completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_completion_time: Option<Time>,
    /// When the latest rotation began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_initiation_time: Option<Time>,
    /// When the preparation of the latest rotation finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_initiation_finished_time: Option<Time>,
    /// When completion of the latest rotation was requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_completion_triggered_time: Option<Time>,
    /// Pools whose nodes still have to be replaced for this rotation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_workers_rollouts: Vec<PendingWorkersRollout>,
    /// Whether the rotation completes by itself once prepared (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_complete_after_prepared: Option<bool>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `credentials.encryptionAtRest`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EncryptionAtRest {
    /// Resources encrypted now besides Secrets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// The encryption provider in use.
    #[serde(default)]
    pub provider: EncryptionProviderStatus,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `encryptionAtRest.provider`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EncryptionProviderStatus {
    /// `aescbc`, `aesgcm` or `secretbox`.
    #[serde(rename = "type", default)]
    pub type_: String,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}
