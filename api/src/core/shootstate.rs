//! `core.gardener.cloud/v1beta1` `ShootState` (namespaced, name = shoot name): the persisted
//! state of a shoot's control plane (secrets, machine state, extension state), plus the upsert
//! rules of gardener's `shootstate_list.go` helpers.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Extra, NamedResourceReference, schema};

/// Spec of a ShootState. There is no status.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "core.gardener.cloud",
    version = "v1beta1",
    kind = "ShootState",
    namespaced,
    derive = "PartialEq",
    derive = "Default",
    doc = "A ShootState holds the state of a shoot needed to restore its control plane.",
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ShootStateSpec {
    /// Gardener-owned data (`secret`, `machine-state`); key `name`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gardener: Vec<GardenerResourceData>,
    /// Extension states; key (kind, name, purpose).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<ExtensionResourceState>,
    /// Copies of objects referenced by extension `status.resources`; key (apiVersion, kind, name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ResourceData>,
    /// Fields of newer gardens, round-tripped but left out of the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.gardener[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GardenerResourceData {
    /// Name (Secret name or `machine-state`).
    pub name: String,
    /// `secret` or `machine-state`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Payload.
    #[schemars(schema_with = "schema::raw_object")]
    pub data: serde_json::Value,
    /// Labels of the source object.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// `spec.extensions[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionResourceState {
    /// Extension kind.
    pub kind: String,
    /// Object name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Purpose (OperatingSystemConfig only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    /// Copy of `status.state`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_object")]
    pub state: Option<serde_json::Value>,
    /// Copy of `status.resources`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<NamedResourceReference>,
}

/// `spec.resources[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceData {
    /// API version of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Kind of the object.
    pub kind: String,
    /// Name of the object (namespace = control-plane namespace).
    pub name: String,
    /// The object without system metadata.
    #[schemars(schema_with = "schema::raw_object")]
    pub data: serde_json::Value,
}

impl ShootStateSpec {
    /// Upserts a gardener entry by `name`: overwrites type, data and labels in place, else appends.
    /// Returns whether the spec changed.
    pub fn upsert_gardener(&mut self, entry: GardenerResourceData) -> bool {
        match self
            .gardener
            .iter_mut()
            .find(|existing| existing.name == entry.name)
        {
            Some(existing) if *existing == entry => false,
            Some(existing) => {
                *existing = entry;
                true
            }
            None => {
                self.gardener.push(entry);
                true
            }
        }
    }

    /// Upserts an extension entry by (kind, name, purpose) — `None` only matches `None` — and
    /// overwrites only `state` and `resources`. Returns whether the spec changed.
    pub fn upsert_extension(&mut self, entry: ExtensionResourceState) -> bool {
        let found = self.extensions.iter_mut().find(|existing| {
            existing.kind == entry.kind
                && existing.name == entry.name
                && existing.purpose == entry.purpose
        });
        match found {
            Some(existing)
                if existing.state == entry.state && existing.resources == entry.resources =>
            {
                false
            }
            Some(existing) => {
                existing.state = entry.state;
                existing.resources = entry.resources;
                true
            }
            None => {
                self.extensions.push(entry);
                true
            }
        }
    }

    /// Removes the extension entry with (kind, name, purpose). Returns whether one was removed.
    pub fn remove_extension(
        &mut self,
        kind: &str,
        name: Option<&str>,
        purpose: Option<&str>,
    ) -> bool {
        let before = self.extensions.len();
        self.extensions.retain(|existing| {
            !(existing.kind == kind
                && existing.name.as_deref() == name
                && existing.purpose.as_deref() == purpose)
        });
        before != self.extensions.len()
    }

    /// Upserts a resource by the whole (apiVersion, kind, name). Returns whether the spec changed.
    pub fn upsert_resource(&mut self, entry: ResourceData) -> bool {
        let found = self.resources.iter_mut().find(|existing| {
            existing.api_version == entry.api_version
                && existing.kind == entry.kind
                && existing.name == entry.name
        });
        match found {
            Some(existing) if *existing == entry => false,
            Some(existing) => {
                *existing = entry;
                true
            }
            None => {
                self.resources.push(entry);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gardener(name: &str, data: serde_json::Value) -> GardenerResourceData {
        GardenerResourceData {
            name: name.into(),
            type_: "secret".into(),
            data,
            labels: BTreeMap::new(),
        }
    }

    fn extension(kind: &str, purpose: Option<&str>, state: i64) -> ExtensionResourceState {
        ExtensionResourceState {
            kind: kind.into(),
            name: Some("x".into()),
            purpose: purpose.map(Into::into),
            state: Some(serde_json::json!({"v": state})),
            resources: Vec::new(),
        }
    }

    #[test]
    fn upsert_gardener_overwrites_in_place_and_keeps_order() {
        let mut spec = ShootStateSpec::default();
        assert!(spec.upsert_gardener(gardener("a", serde_json::json!({"d": 1}))));
        assert!(spec.upsert_gardener(gardener("b", serde_json::json!({"d": 2}))));
        assert!(spec.upsert_gardener(gardener("a", serde_json::json!({"d": 3}))));
        assert!(!spec.upsert_gardener(gardener("a", serde_json::json!({"d": 3}))));
        let names: Vec<_> = spec
            .gardener
            .iter()
            .map(|entry| entry.name.as_str())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(spec.gardener[0].data, serde_json::json!({"d": 3}));
    }

    #[test]
    fn upsert_extension_distinguishes_purpose_none_from_empty() {
        let mut spec = ShootStateSpec::default();
        assert!(spec.upsert_extension(extension("OperatingSystemConfig", None, 1)));
        assert!(spec.upsert_extension(extension("OperatingSystemConfig", Some(""), 1)));
        assert!(spec.upsert_extension(extension("OperatingSystemConfig", Some("provision"), 1)));
        assert_eq!(spec.extensions.len(), 3);
        assert!(spec.upsert_extension(extension("OperatingSystemConfig", Some("provision"), 2)));
        assert!(!spec.upsert_extension(extension("OperatingSystemConfig", Some("provision"), 2)));
        assert_eq!(spec.extensions[2].state, Some(serde_json::json!({"v": 2})));
        assert!(spec.remove_extension("OperatingSystemConfig", Some("x"), Some("")));
        assert_eq!(spec.extensions.len(), 2);
    }

    #[test]
    fn upsert_resource_matches_whole_key() {
        let mut spec = ShootStateSpec::default();
        let resource = |api: &str, data: i64| ResourceData {
            api_version: Some(api.into()),
            kind: "ConfigMap".into(),
            name: "tf".into(),
            data: serde_json::json!({"n": data}),
        };
        assert!(spec.upsert_resource(resource("v1", 1)));
        assert!(spec.upsert_resource(resource("v2", 1)));
        assert!(spec.upsert_resource(resource("v1", 2)));
        assert_eq!(spec.resources.len(), 2);
        assert_eq!(spec.resources[0].data, serde_json::json!({"n": 2}));
    }
}
