//! `core.gardener.cloud/v1beta1` `Project` (cluster-scoped): the namespace (which maps a shoot
//! namespace to its project name for technical IDs), owner and members (the garden's project
//! RBAC) and the status the garden's project controllers write.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::Extra;

/// Spec of a Project.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "core.gardener.cloud",
    version = "v1beta1",
    kind = "Project",
    status = "ProjectStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "A Project groups shoots of one team in a namespace.",
    printcolumn(name = "Namespace", type_ = "string", json_path = ".spec.namespace"),
    printcolumn(name = "Status", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSpec {
    /// The project namespace (`garden-<name>` by convention).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The owner (full project permissions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<ProjectSubject>,
    /// Members with their roles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<ProjectMember>,
    /// The user or service account that created the project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<k8s_openapi::api::rbac::v1::Subject>,
    /// Free-text description of the project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Free-text purpose of the project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    /// Seed-taint tolerations shoots of this project get by default or may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<crate::typed::ProjectTolerations>,
    /// Resources whose deletion in this project needs the confirmation of a second person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dual_approval_for_deletion: Option<Vec<crate::typed::DualApprovalForDeletion>>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// An RBAC subject (`rbac.authorization.k8s.io/v1` `Subject`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSubject {
    /// API group (`rbac.authorization.k8s.io` for users and groups, empty for service accounts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_group: Option<String>,
    /// `User`, `Group` or `ServiceAccount`.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace (service accounts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `spec.members[]`: a subject and its roles.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectMember {
    /// The subject.
    #[serde(flatten)]
    pub subject: ProjectSubject,
    /// The first role (API default `viewer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Further roles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
}

impl ProjectMember {
    /// `[role] + roles`, `role` defaulting to `viewer`.
    pub fn all_roles(&self) -> Vec<&str> {
        std::iter::once(self.role.as_deref().unwrap_or("viewer"))
            .chain(self.roles.iter().map(String::as_str))
            .collect()
    }
}

/// Status of a Project.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectStatus {
    /// Phase (`Pending`, `Ready`, `Failed`, `Terminating`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Generation the phase was computed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Since when the project is stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_since_timestamp: Option<Time>,
    /// When a stale project is deleted automatically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_auto_delete_timestamp: Option<Time>,
    /// Last activity in the project (shoots, bindings, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_activity_timestamp: Option<Time>,
    /// Observed conditions of the project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<crate::Condition>>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}
