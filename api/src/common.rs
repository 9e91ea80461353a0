//! Types shared by several Gardener API groups (operations, errors, references) and the schema
//! helpers that keep raw JSON fields structural in generated CRDs.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Fields a type does not model, kept verbatim so that read-modify-write round-trips them.
pub type Extra = BTreeMap<String, serde_json::Value>;

/// Type of a Gardener operation (`lastOperation.type`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LastOperationType {
    /// `Create`.
    Create,
    /// `Reconcile`.
    Reconcile,
    /// `Delete`.
    Delete,
    /// `Migrate`.
    Migrate,
    /// `Restore`.
    Restore,
    /// `LiveMigrate`: a Shoot moving to another Seed without downtime.
    LiveMigrate,
}

/// State of a Gardener operation (`lastOperation.state`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LastOperationState {
    /// `Processing`.
    Processing,
    /// `Succeeded`.
    Succeeded,
    /// `Error` (retryable).
    Error,
    /// `Failed` (final until a user retries).
    Failed,
    /// `Pending`.
    Pending,
    /// `Aborted`.
    Aborted,
}

/// The last operation performed on a Shoot, Seed or extension object.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastOperation {
    /// Human-readable description.
    #[serde(default)]
    pub description: String,
    /// Last time the operation state changed.
    pub last_update_time: Time,
    /// Progress in percent (0-100).
    #[serde(default)]
    pub progress: i32,
    /// State of the operation.
    #[schemars(with = "String")]
    pub state: LastOperationState,
    /// Type of the operation.
    #[serde(rename = "type")]
    #[schemars(with = "String")]
    pub type_: LastOperationType,
}

impl LastOperation {
    /// Whether this is `state == Succeeded`.
    pub fn succeeded(&self) -> bool {
        self.state == LastOperationState::Succeeded
    }

    /// Whether this is `state == Failed`.
    pub fn failed(&self) -> bool {
        self.state == LastOperationState::Failed
    }
}

/// The last error of an operation.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastError {
    /// Human-readable error message.
    pub description: String,
    /// ID of the flow task that failed.
    #[serde(rename = "taskID", default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Well-defined error codes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub codes: Vec<String>,
    /// Last time the error was reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<Time>,
}

/// A reference to an object (`corev1.ObjectReference` with a mandatory name), as used by
/// ControllerInstallation refs and credential references.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// API version of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Kind of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name of the referent.
    pub name: String,
    /// Namespace of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Resource version of the referent when the reference was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// UID of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Field path inside the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_path: Option<String>,
}

impl ObjectReference {
    /// A reference carrying only a name.
    pub fn named(name: impl Into<String>) -> ObjectReference {
        ObjectReference {
            name: name.into(),
            ..ObjectReference::default()
        }
    }
}

/// A reference by name only (`corev1.LocalObjectReference`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct LocalReference {
    /// Name of the referent.
    pub name: String,
}

/// `autoscalingv1.CrossVersionObjectReference`: kind, name and optional apiVersion.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CrossVersionObjectReference {
    /// API version of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Kind of the referent.
    pub kind: String,
    /// Name of the referent.
    pub name: String,
}

/// A named reference to a resource (`status.resources[]`, `spec.resources[]`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamedResourceReference {
    /// Logical name used by the referrer.
    pub name: String,
    /// The referenced object.
    pub resource_ref: CrossVersionObjectReference,
}

/// Schema helpers for raw JSON (`runtime.RawExtension`) fields.
pub mod schema {
    /// An embedded JSON object of any shape: `type: object` plus
    /// `x-kubernetes-preserve-unknown-fields`, like upstream's `RawExtension` fields in seed CRDs.
    pub fn raw_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
        })
    }

    /// Any JSON value (object, string, number, ...): only `x-kubernetes-preserve-unknown-fields`,
    /// which structural schemas allow without a `type`. Used for garden-side raw fields where
    /// upstream examples put placeholders of other types.
    pub fn raw_any(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "x-kubernetes-preserve-unknown-fields": true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_operation_parses_gardener_json() {
        let json = serde_json::json!({
            "description": "Shoot cluster has been successfully reconciled.",
            "lastUpdateTime": "2024-05-06T07:08:09Z",
            "progress": 100,
            "state": "Succeeded",
            "type": "Reconcile"
        });
        let op: LastOperation = serde_json::from_value(json.clone()).unwrap();
        assert!(op.succeeded());
        assert_eq!(op.type_, LastOperationType::Reconcile);
        assert_eq!(serde_json::to_value(&op).unwrap(), json);
    }

    #[test]
    fn last_error_omits_unset_optional_fields() {
        let err = LastError {
            description: "boom".into(),
            task_id: None,
            codes: Vec::new(),
            last_update_time: None,
        };
        assert_eq!(
            serde_json::to_value(&err).unwrap(),
            serde_json::json!({"description": "boom"})
        );
    }
}
