//! What the garden's reference protection reads from the binding kinds ([`SecretBinding`],
//! [`CredentialsBinding`]: their references and provider types, kept in `extra` by their types)
//! and `ExposureClass` (cluster-scoped, fields at the top level, so [`kube::Resource`] is
//! implemented by hand through [`top_level_kind!`](crate::top_level_kind)).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::common::Extra;
use crate::core::{CredentialsBinding, SecretBinding};
use crate::security::CredentialsReference;

/// `secretRef` of a SecretBinding.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct SecretReference {
    /// Namespace (the binding's when empty).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Name.
    #[serde(default)]
    pub name: String,
}

fn provider_type(extra: &Extra) -> String {
    extra
        .get("provider")
        .and_then(|p| p.get("type"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl SecretBinding {
    /// `secretRef` (empty when absent).
    pub fn secret_ref(&self) -> SecretReference {
        self.extra
            .get("secretRef")
            .and_then(|r| SecretReference::deserialize(r).ok())
            .unwrap_or_default()
    }

    /// `provider.type`: comma-separated provider types.
    pub fn provider_type(&self) -> String {
        provider_type(&self.extra)
    }
}

impl CredentialsBinding {
    /// `credentialsRef` (empty when absent).
    pub fn credentials_ref(&self) -> CredentialsReference {
        self.extra
            .get("credentialsRef")
            .and_then(|r| CredentialsReference::deserialize(r).ok())
            .unwrap_or_default()
    }

    /// `provider.type`.
    pub fn provider_type(&self) -> String {
        provider_type(&self.extra)
    }
}

/// `core.gardener.cloud/v1beta1` `ExposureClass` (cluster-scoped): how a shoot control plane is
/// exposed (`handler`, `scheduling`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ExposureClass {
    /// `core.gardener.cloud/v1beta1`.
    #[serde(default)]
    pub api_version: String,
    /// `ExposureClass`.
    #[serde(default)]
    pub kind: String,
    /// Object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Name of the exposure handler.
    #[serde(default)]
    pub handler: String,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    pub extra: Extra,
}

crate::top_level_kind!(
    ExposureClass,
    "core.gardener.cloud",
    "v1beta1",
    "ExposureClass",
    "exposureclasses",
    kube::core::ClusterResourceScope
);

/// Implements [`kube::Resource`] for a type whose fields sit at the top level beside
/// `apiVersion`, `kind` and `metadata` (fields `api_version`, `kind`, `metadata`), and gives it
/// `new(name)` filling in the type meta.
#[macro_export]
macro_rules! top_level_kind {
    ($type:ident, $group:literal, $version:literal, $kind:literal, $plural:literal, $scope:ty) => {
        impl kube::Resource for $type {
            type DynamicType = ();
            type Scope = $scope;

            fn kind(_: &()) -> std::borrow::Cow<'_, str> {
                $kind.into()
            }
            fn group(_: &()) -> std::borrow::Cow<'_, str> {
                $group.into()
            }
            fn version(_: &()) -> std::borrow::Cow<'_, str> {
                $version.into()
            }
            fn plural(_: &()) -> std::borrow::Cow<'_, str> {
                $plural.into()
            }
            fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.metadata
            }
            fn meta_mut(
                &mut self,
            ) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &mut self.metadata
            }
        }

        impl $type {
            /// An empty object named `name`, with `apiVersion` and `kind` set.
            pub fn new(name: &str) -> Self {
                Self {
                    api_version: concat!($group, "/", $version).to_owned(),
                    kind: $kind.to_owned(),
                    metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                        name: Some(name.to_owned()),
                        ..Default::default()
                    },
                    ..Default::default()
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::Resource;

    #[test]
    fn binding_references_and_providers_come_from_their_fields() {
        let binding: SecretBinding = serde_json::from_value(serde_json::json!({
            "apiVersion": "core.gardener.cloud/v1beta1",
            "kind": "SecretBinding",
            "metadata": {"name": "b", "namespace": "garden-dev"},
            "secretRef": {"name": "s", "namespace": "garden-dev"},
            "provider": {"type": "aws,gcp"}
        }))
        .expect("decode");
        assert_eq!(
            binding.secret_ref(),
            SecretReference {
                namespace: Some("garden-dev".into()),
                name: "s".into()
            }
        );
        assert_eq!(binding.provider_type(), "aws,gcp");
        let binding: CredentialsBinding = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c", "namespace": "garden-dev"},
            "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "namespace": "garden-dev", "name": "s"},
            "provider": {"type": "aws"}
        }))
        .expect("decode");
        assert_eq!(binding.credentials_ref().kind, "Secret");
        assert_eq!(binding.provider_type(), "aws");
        assert_eq!(ExposureClass::plural(&()), "exposureclasses");
        assert_eq!(
            ExposureClass::new("x").api_version,
            "core.gardener.cloud/v1beta1"
        );
    }
}
