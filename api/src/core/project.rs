//! `core.gardener.cloud/v1beta1` `Project` (cluster-scoped): only the namespace is modelled,
//! which maps a shoot namespace to its project name (technical IDs).

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
    /// Unmodelled fields (owner, members, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// Status of a Project.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectStatus {
    /// Phase (`Pending`, `Ready`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Unmodelled fields.
    #[serde(flatten)]
    pub extra: Extra,
}
