//! `extensions.gardener.cloud/v1alpha1` `Cluster` (cluster-scoped, name = control-plane
//! namespace): embeds the CloudProfile, Seed and Shoot of a shoot for extensions to read.

use kube::{CustomResource, Resource};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::common::schema;
use crate::core::{CloudProfile, NamespacedCloudProfile, Seed, Shoot};
use crate::names::groups;

/// Spec of a Cluster: three embedded objects (unknown fields preserved).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "extensions.gardener.cloud",
    version = "v1alpha1",
    kind = "Cluster",
    derive = "PartialEq",
    derive = "Default",
    doc = "A Cluster describes a shoot, its seed and its cloud profile for extensions.",
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpec {
    /// The CloudProfile (synthesized from the `status.cloudProfileSpec` of a
    /// NamespacedCloudProfile).
    #[schemars(schema_with = "schema::raw_object")]
    pub cloud_profile: serde_json::Value,
    /// The Seed; absent for self-hosted shoots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_object")]
    pub seed: Option<serde_json::Value>,
    /// The Shoot, including its status.
    #[schemars(schema_with = "schema::raw_object")]
    pub shoot: serde_json::Value,
}

impl ClusterSpec {
    /// The embedded Shoot, typed.
    ///
    /// # Errors
    /// When the embedded object is not a valid Shoot.
    pub fn shoot(&self) -> Result<Shoot, serde_json::Error> {
        typed(&self.shoot)
    }

    /// The embedded Seed, typed (`None` for self-hosted shoots).
    ///
    /// # Errors
    /// When the embedded object is not a valid Seed.
    pub fn seed(&self) -> Result<Option<Seed>, serde_json::Error> {
        self.seed.as_ref().map(typed).transpose()
    }

    /// The embedded CloudProfile, typed.
    ///
    /// # Errors
    /// When the embedded object is not a valid CloudProfile.
    pub fn cloud_profile(&self) -> Result<CloudProfile, serde_json::Error> {
        typed(&self.cloud_profile)
    }
}

/// An object as a Cluster embeds it: `apiVersion: core.gardener.cloud/v1beta1`, its kind, and
/// `metadata.managedFields` removed; everything else (status included) kept.
///
/// # Errors
/// When the object cannot be serialised (never for the Gardener types of this crate).
pub fn embed<K>(object: &K) -> Result<serde_json::Value, serde_json::Error>
where
    K: Resource<DynamicType = ()> + Serialize,
{
    let mut value = serde_json::to_value(object)?;
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), groups::CORE_V1BETA1.into());
        map.insert("kind".into(), K::kind(&()).into_owned().into());
        if let Some(metadata) = map
            .get_mut("metadata")
            .and_then(serde_json::Value::as_object_mut)
        {
            metadata.remove("managedFields");
        }
    }
    Ok(value)
}

/// The CloudProfile a Cluster embeds for a shoot using a NamespacedCloudProfile: kind
/// `CloudProfile`, the NCP's name, the shoot's namespace, and `spec` = the NCP's
/// `status.cloudProfileSpec`; no other metadata.
pub fn synthesized_cloud_profile(
    profile: &NamespacedCloudProfile,
    shoot_namespace: &str,
) -> serde_json::Value {
    let spec = profile
        .status
        .as_ref()
        .and_then(|status| status.cloud_profile_spec.clone())
        .unwrap_or_else(|| serde_json::json!({}));
    serde_json::json!({
        "apiVersion": groups::CORE_V1BETA1,
        "kind": "CloudProfile",
        "metadata": {
            "name": profile.metadata.name.clone().unwrap_or_default(),
            "namespace": shoot_namespace,
        },
        "spec": spec,
    })
}

fn typed<T: DeserializeOwned>(value: &serde_json::Value) -> Result<T, serde_json::Error> {
    T::deserialize(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::NamespacedCloudProfileStatus;

    #[test]
    fn embed_sets_type_meta_and_drops_managed_fields() {
        let mut shoot: Shoot = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "foo", "namespace": "garden-dev", "managedFields": [{"manager": "x"}]},
            "spec": {"provider": {"type": "local"}, "region": "local"},
            "status": {"technicalID": "shoot--dev--foo"}
        }))
        .unwrap();
        shoot.metadata.uid = Some("u".into());
        let embedded = embed(&shoot).unwrap();
        assert_eq!(embedded["apiVersion"], "core.gardener.cloud/v1beta1");
        assert_eq!(embedded["kind"], "Shoot");
        assert!(embedded["metadata"].get("managedFields").is_none());
        assert_eq!(embedded["status"]["technicalID"], "shoot--dev--foo");
        let cluster = ClusterSpec {
            shoot: embedded,
            ..ClusterSpec::default()
        };
        assert_eq!(
            cluster.shoot().unwrap().metadata.name.as_deref(),
            Some("foo")
        );
    }

    #[test]
    fn synthesized_cloud_profile_uses_status_spec_and_shoot_namespace() {
        let mut profile = NamespacedCloudProfile::new("custom", Default::default());
        profile.status = Some(NamespacedCloudProfileStatus {
            cloud_profile_spec: Some(serde_json::json!({"type": "local"})),
            ..Default::default()
        });
        let value = synthesized_cloud_profile(&profile, "garden-dev");
        assert_eq!(value["kind"], "CloudProfile");
        assert_eq!(
            value["metadata"],
            serde_json::json!({"name": "custom", "namespace": "garden-dev"})
        );
        assert_eq!(value["spec"], serde_json::json!({"type": "local"}));
    }
}
