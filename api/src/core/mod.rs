//! `core.gardener.cloud` kinds (v1beta1, plus the v1 `ControllerDeployment`) as served by
//! gardener-apiserver, and the small types they share.

// kube's `printcolumn(...)` arguments repeat `type_ = "string"`, which clippy mistakes for
// duplicated attributes.
#![allow(clippy::duplicated_attributes)]

mod backup;
mod cloudprofile;
mod controller;
pub mod maintenance_window;
mod project;
mod quota;
mod references;
mod seed;
mod shoot;
mod shoot_autoscaling;
mod shoot_kubelet;
mod shoot_kubernetes;
mod shoot_lifecycle;
mod shoot_provider;
mod shoot_settings;
mod shoot_status;
mod shootstate;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use backup::*;
pub use cloudprofile::*;
pub use controller::*;
pub use project::*;
pub use quota::*;
pub use references::*;
pub use seed::*;
pub use shoot::*;
pub use shoot_autoscaling::*;
pub use shoot_kubelet::*;
pub use shoot_kubernetes::*;
pub use shoot_lifecycle::*;
pub use shoot_provider::*;
pub use shoot_settings::*;
pub use shoot_status::*;
pub use shootstate::*;

use crate::common::schema;

/// An extension enabled on a Shoot or Seed (`spec.extensions[]`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Extension {
    /// Extension type.
    #[serde(rename = "type")]
    pub type_: String,
    /// Extension configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Disables an auto-enabled extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
}

impl Extension {
    /// Whether the extension is explicitly disabled.
    pub fn is_disabled(&self) -> bool {
        self.disabled == Some(true)
    }
}
