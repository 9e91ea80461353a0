//! `resources.gardener.cloud/v1alpha1` `ManagedResource` (namespaced, short name `mr`): a set of
//! manifests in Secrets that a resource manager applies and health-checks.

// kube's `printcolumn(...)` arguments repeat `type_ = "string"`, which clippy mistakes for
// duplicated attributes.
#![allow(clippy::duplicated_attributes)]

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Extra, LocalReference};
use crate::conditions::Condition;
use crate::names::{condition_types, managed_resources};

/// Spec of a ManagedResource.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "resources.gardener.cloud",
    version = "v1alpha1",
    kind = "ManagedResource",
    namespaced,
    status = "ManagedResourceStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "mr",
    doc = "A ManagedResource is a set of manifests applied and health-checked as one unit.",
    printcolumn(name = "Class", type_ = "string", json_path = ".spec.class"),
    printcolumn(
        name = "Applied",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"ResourcesApplied\")].status"
    ),
    printcolumn(
        name = "Healthy",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"ResourcesHealthy\")].status"
    ),
    printcolumn(
        name = "Progressing",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"ResourcesProgressing\")].status"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ManagedResourceSpec {
    /// Responsible resource-manager class; absent = default class `resources`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Secrets (same namespace) holding the manifests.
    pub secret_refs: Vec<LocalReference>,
    /// Labels injected into every object (and pod/PVC templates).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inject_labels: BTreeMap<String, String>,
    /// Replace live labels instead of merging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_overwrite_labels: Option<bool>,
    /// Replace live annotations instead of merging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_overwrite_annotations: Option<bool>,
    /// Leave objects behind on deletion or class change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_objects: Option<bool>,
    /// Additional group/kind equivalences.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub equivalences: Vec<Vec<GroupKind>>,
    /// Delete a StatefulSet's PVCs together with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_persistent_volume_claims: Option<bool>,
}

/// `metav1.GroupKind`.
#[derive(
    Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, JsonSchema,
)]
pub struct GroupKind {
    /// API group (empty for core).
    pub group: String,
    /// Kind.
    pub kind: String,
}

/// Status of a ManagedResource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedResourceStatus {
    /// `ResourcesApplied`, `ResourcesHealthy`, `ResourcesProgressing`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Generation of the last successful apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Objects applied by the last apply, sorted by group/kind/namespace/name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ObjectReference>,
    /// Hex SHA-256 over the manifest data of the last apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets_data_checksum: Option<String>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `status.resources[]`: a reference plus the desired labels and annotations of the last apply.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// API version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace (empty for cluster-scoped objects).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Desired labels of the last apply.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Desired annotations of the last apply.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Unused by resource managers; kept for compatibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// Unused by resource managers; kept for compatibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Unused by resource managers; kept for compatibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_path: Option<String>,
}

impl crate::conditions::WithConditions for ManagedResource {
    fn conditions(&self) -> &[Condition] {
        ManagedResource::conditions(self)
    }
}

impl ManagedResource {
    /// The conditions of the status (empty without status).
    pub fn conditions(&self) -> &[Condition] {
        self.status
            .as_ref()
            .map(|status| status.conditions.as_slice())
            .unwrap_or_default()
    }

    /// The class, defaulting to `resources`.
    pub fn class_or_default(&self) -> &str {
        self.spec
            .class
            .as_deref()
            .unwrap_or(managed_resources::DEFAULT_CLASS)
    }

    /// Whether `observedGeneration == generation` and `ResourcesApplied` and `ResourcesHealthy`
    /// are `True` (and, if `check_progressing`, `ResourcesProgressing` is `False`).
    pub fn is_healthy(&self, check_progressing: bool) -> bool {
        let Some(status) = &self.status else {
            return false;
        };
        if status.observed_generation != self.metadata.generation {
            return false;
        }
        let status_of = |type_: &str| {
            crate::conditions::find(&status.conditions, type_).map(|condition| &condition.status)
        };
        let applied = status_of(condition_types::RESOURCES_APPLIED)
            == Some(&crate::conditions::ConditionStatus::True);
        let healthy = status_of(condition_types::RESOURCES_HEALTHY)
            == Some(&crate::conditions::ConditionStatus::True);
        let rolled_out = !check_progressing
            || status_of(condition_types::RESOURCES_PROGRESSING)
                == Some(&crate::conditions::ConditionStatus::False);
        applied && healthy && rolled_out
    }
}
