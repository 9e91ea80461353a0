//! `extensions.gardener.cloud/v1alpha1`: the `Cluster` resource and the extension kinds, which
//! share one generic shape ([`DefaultSpec`] + [`ExtensionStatus`]) with kind-specific fields kept
//! as raw JSON.

// kube's `printcolumn(...)` arguments repeat `type_ = "string"`, which clippy mistakes for
// duplicated attributes.
#![allow(clippy::duplicated_attributes)]

mod cluster;
pub mod kind;
mod kinds;
pub mod typed;

use std::fmt::Debug;

use kube::Resource;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use cluster::*;
pub use kind::{ExtensionKind, kind_type};
pub use kinds::*;

use crate::common::{Extra, LastError, LastOperation, NamedResourceReference, schema};
use crate::conditions::Condition;

/// Extension class (`spec.class`): absent means `shoot`.
pub const CLASS_SHOOT: &str = "shoot";
/// Extension class for seed-level extension objects.
pub const CLASS_SEED: &str = "seed";
/// Extension class for garden-level extension objects (ignored by the Required controller).
pub const CLASS_GARDEN: &str = "garden";

/// The fields every extension spec has (`extensionsv1alpha1.DefaultSpec`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DefaultSpec {
    /// Extension type (`aws`, `calico`, ...).
    #[serde(rename = "type")]
    pub type_: String,
    /// Class (`shoot` when absent, `seed`, `garden`); immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Provider-specific configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_object")]
    pub provider_config: Option<serde_json::Value>,
}

impl DefaultSpec {
    /// The class, defaulting to `shoot`.
    pub fn class_or_default(&self) -> &str {
        self.class.as_deref().unwrap_or(CLASS_SHOOT)
    }
}

/// The status fields every extension kind has: conditions, last operation and error, observed
/// generation, provider status, state and the resources that state refers to.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionStatus {
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Last error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<LastError>,
    /// Last operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_operation: Option<LastOperation>,
    /// Last observed generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Provider status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_object")]
    pub provider_status: Option<serde_json::Value>,
    /// State to persist in the ShootState.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_object")]
    pub state: Option<serde_json::Value>,
    /// Objects to persist in the ShootState.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<NamedResourceReference>,
    /// Kind-specific status fields (Bastion `ingress`, Worker `machineDeployments`, ...).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Common access to all extension kinds, for controllers that handle them generically (the
/// supertraits are what `kube::Api<K>` and watchers need).
pub trait ExtensionObject:
    Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The common spec fields.
    fn default_spec(&self) -> &DefaultSpec;
    /// The kind-specific spec fields.
    fn spec_extra(&self) -> &Extra;
    /// The status, if any.
    fn extension_status(&self) -> Option<&ExtensionStatus>;

    /// `spec.purpose` (OperatingSystemConfig; legacy ControlPlane), if set.
    fn purpose(&self) -> Option<&str> {
        self.spec_extra()
            .get("purpose")
            .and_then(serde_json::Value::as_str)
    }
}
