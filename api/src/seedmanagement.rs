//! `seedmanagement.gardener.cloud/v1alpha1`: `ManagedSeed` (a Shoot registered as a Seed),
//! `ManagedSeedSet` (numbered replicas of Shoot + ManagedSeed made from templates) and `Gardenlet`
//! (a seed agent deployed into a cluster that is not a Shoot; seedlet reads it for the seed
//! authorizer and SeedRestriction, it deploys nothing).

// kube's `printcolumn(...)` arguments repeat `type_ = "string"`, which clippy mistakes for
// duplicated attributes.
#![allow(clippy::duplicated_attributes)]

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Extra, schema};
use crate::conditions::Condition;

/// Spec of a ManagedSeed.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "seedmanagement.gardener.cloud",
    version = "v1alpha1",
    kind = "ManagedSeed",
    namespaced,
    status = "ManagedSeedStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "mseed",
    doc = "A ManagedSeed registers a Shoot as a Seed.",
    printcolumn(name = "Shoot", type_ = "string", json_path = ".spec.shoot.name"),
    printcolumn(
        name = "Registered",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"SeedRegistered\")].status"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ManagedSeedSpec {
    /// The Shoot that becomes the Seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shoot: Option<ShootReference>,
    /// How the gardenlet is deployed into the shoot and configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::typed::GardenletConfig>")]
    pub gardenlet: Option<serde_json::Value>,
}

/// `spec.shoot` of a ManagedSeed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ShootReference {
    /// Shoot name (same namespace as the ManagedSeed).
    pub name: String,
}

/// Status of a ManagedSeed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedSeedStatus {
    /// Conditions (`ShootReconciled`, `SeedRegistered`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Last observed generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl ManagedSeed {
    /// The name of the Shoot this ManagedSeed registers.
    pub fn shoot_name(&self) -> Option<&str> {
        self.spec.shoot.as_ref().map(|shoot| shoot.name.as_str())
    }
}

/// Spec of a Gardenlet (`garden/<seed>`): how a self-managed gardenlet is deployed and configured.
/// seedlet reads these objects but does not deploy them.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "seedmanagement.gardener.cloud",
    version = "v1alpha1",
    kind = "Gardenlet",
    namespaced,
    status = "GardenletStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "A Gardenlet deploys a seed agent into a cluster and registers it as a Seed.",
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct GardenletSpec {
    /// How the agent is deployed (`helm.ociRepository`, replicas, resources, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::typed::GardenletSelfDeployment>")]
    pub deployment: Option<serde_json::Value>,
    /// Its `GardenletConfiguration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_object")]
    pub config: Option<serde_json::Value>,
    /// The Secret holding the kubeconfig of the target cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<k8s_openapi::api::core::v1::LocalObjectReference>")]
    pub kubeconfig_secret_ref: Option<serde_json::Value>,
}

/// Status of a Gardenlet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GardenletStatus {
    /// Conditions (`GardenletReconciled`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Last observed generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// Spec of a ManagedSeedSet.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "seedmanagement.gardener.cloud",
    version = "v1alpha1",
    kind = "ManagedSeedSet",
    namespaced,
    status = "ManagedSeedSetStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "mss",
    doc = "A ManagedSeedSet keeps a number of Shoot + ManagedSeed replicas made from templates.",
    printcolumn(name = "Desired", type_ = "integer", json_path = ".spec.replicas"),
    printcolumn(name = "Current", type_ = "integer", json_path = ".status.replicas"),
    printcolumn(name = "Ready", type_ = "integer", json_path = ".status.readyReplicas"),
    printcolumn(
        name = "Pending",
        type_ = "string",
        json_path = ".status.pendingReplica.name"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ManagedSeedSetSpec {
    /// Wanted number of replicas (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Label selector of the replicas' Shoots, ManagedSeeds and Seeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>")]
    pub selector: Option<serde_json::Value>,
    /// ManagedSeed template (`metadata`, `spec.gardenlet`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::typed::ManagedSeedTemplate>")]
    pub template: Option<serde_json::Value>,
    /// Shoot template (`metadata`, `spec`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::typed::ShootTemplate>")]
    pub shoot_template: Option<serde_json::Value>,
    /// How changes to the templates are rolled out to the existing ManagedSeeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<crate::typed::UpdateStrategy>,
    /// How many old revisions of the set are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Status of a ManagedSeedSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedSeedSetStatus {
    /// Last observed generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Number of replicas.
    #[serde(default)]
    pub replicas: i32,
    /// Number of ready replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Ordinal of the next replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_replica_number: Option<i32>,
    /// The replica currently worked on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_replica: Option<PendingReplica>,
    /// Number of replicas created from the current revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_replicas: Option<i32>,
    /// Number of replicas created from the update revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_replicas: Option<i32>,
    /// Revision the current replicas were created from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_revision: Option<String>,
    /// Revision new and updated replicas are created from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_revision: Option<String>,
    /// Counter used to make revision names unique after hash collisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// Observed conditions of the set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<crate::Condition>>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `status.pendingReplica` of a ManagedSeedSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingReplica {
    /// Replica name.
    pub name: String,
    /// Why it is pending (`ShootReconciling`, `SeedNotReady`, ...).
    pub reason: String,
    /// Since when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Time>,
    /// Retries so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<i32>,
}
