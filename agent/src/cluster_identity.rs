//! The seed cluster's identity: the `cluster-identity` key of ConfigMap
//! `kube-system/cluster-identity` in the seed, which gardenlet creates when missing and copies
//! into the Seed's `status.clusterIdentity`. The Seed controller owns that status field; the
//! agent also publishes it right after registering a Seed that has none
//! ([`publish_if_unset`]), so ControllerInstallations created as soon as the seed reports ready
//! do not wait for the Seed controller's first reconcile (they need the identity for the chart's
//! `gardener` values).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::Seed;
use seedlet_api::names::{namespaces, objects};
use serde_json::json;

/// The seed cluster identity from `kube-system/cluster-identity`; when the ConfigMap is missing it
/// is created like gardenlet does, with the `kube-system` namespace UID as identity (random per
/// cluster), or a random identity if that namespace has no UID.
pub async fn ensure(seed: &kube::Client) -> Result<String, kube::Error> {
    let config_maps: Api<ConfigMap> = Api::namespaced(seed.clone(), namespaces::KUBE_SYSTEM);
    if let Some(identity) = config_maps
        .get_opt(objects::CLUSTER_IDENTITY)
        .await?
        .as_ref()
        .and_then(identity_of)
    {
        return Ok(identity);
    }
    let kube_system = Api::<Namespace>::all(seed.clone())
        .get_opt(namespaces::KUBE_SYSTEM)
        .await?;
    let identity = kube_system
        .and_then(|namespace| namespace.metadata.uid)
        .filter(|uid| !uid.is_empty())
        .unwrap_or_else(random_identity);
    let config_map = ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some(objects::CLUSTER_IDENTITY.to_owned()),
            namespace: Some(namespaces::KUBE_SYSTEM.to_owned()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(
            objects::CLUSTER_IDENTITY_KEY.to_owned(),
            identity.clone(),
        )])),
        immutable: Some(true),
        ..Default::default()
    };
    let params = PostParams {
        field_manager: Some(crate::context::FIELD_MANAGER.to_owned()),
        ..PostParams::default()
    };
    match config_maps.create(&params, &config_map).await {
        Ok(_) => Ok(identity),
        // Someone else created it meanwhile: theirs wins.
        Err(kube::Error::Api(status)) if status.is_already_exists() => config_maps
            .get(objects::CLUSTER_IDENTITY)
            .await
            .map(|config_map| identity_of(&config_map).unwrap_or(identity)),
        Err(source) => Err(source),
    }
}

/// The non-empty identity stored in the ConfigMap.
pub fn identity_of(config_map: &ConfigMap) -> Option<String> {
    config_map
        .data
        .as_ref()?
        .get(objects::CLUSTER_IDENTITY_KEY)
        .filter(|identity| !identity.is_empty())
        .cloned()
}

fn random_identity() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Writes `identity` into `status.clusterIdentity` of `seed` when the Seed has none yet. The
/// write is guarded by the Seed's resourceVersion, like the Seed controller's first status write:
/// of two agents registering the same Seed at once, one gets a conflict and its Seed controller
/// then reports the clash instead of overwriting the other's identity. Returns whether it wrote.
///
/// # Errors
/// The status patch's error, a conflict excepted (`Ok(false)`).
pub async fn publish_if_unset(
    garden: &kube::Client,
    seed: &Seed,
    identity: &str,
) -> Result<bool, kube::Error> {
    let Some(patch) = publish_patch(seed, identity) else {
        return Ok(false);
    };
    let seeds: Api<Seed> = Api::all(garden.clone());
    match seeds
        .patch_status(
            &seed.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
        Err(source) => Err(source),
    }
}

/// Whether the Seed's `status.clusterIdentity` is set (an empty string is not).
pub fn has_identity(seed: &Seed) -> bool {
    seed.status
        .as_ref()
        .and_then(|s| s.cluster_identity.as_deref())
        .is_some_and(|identity| !identity.is_empty())
}

/// The guarded status patch that publishes `identity`, `None` when the Seed has an identity.
pub fn publish_patch(seed: &Seed, identity: &str) -> Option<serde_json::Value> {
    if has_identity(seed) {
        return None;
    }
    Some(json!({
        "metadata": {"resourceVersion": seed.metadata.resource_version},
        "status": {"clusterIdentity": identity},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_of_ignores_missing_and_empty_values() {
        let mut config_map = ConfigMap::default();
        assert_eq!(identity_of(&config_map), None);
        config_map.data = Some(BTreeMap::from([(
            "cluster-identity".to_owned(),
            String::new(),
        )]));
        assert_eq!(identity_of(&config_map), None);
        config_map.data = Some(BTreeMap::from([(
            "cluster-identity".to_owned(),
            "x".to_owned(),
        )]));
        assert_eq!(identity_of(&config_map).as_deref(), Some("x"));
    }

    #[test]
    fn random_identity_is_32_hex_digits() {
        let identity = random_identity();
        assert_eq!(identity.len(), 32);
        assert!(identity.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(identity, random_identity());
    }

    #[test]
    fn only_a_seed_without_identity_gets_the_guarded_patch() {
        let mut seed = Seed::default();
        seed.metadata.resource_version = Some("7".into());
        assert_eq!(
            publish_patch(&seed, "id-1"),
            Some(
                json!({"metadata": {"resourceVersion": "7"}, "status": {"clusterIdentity": "id-1"}})
            )
        );
        seed.status = Some(seedlet_api::core::SeedStatus {
            cluster_identity: Some(String::new()),
            ..Default::default()
        });
        assert!(
            publish_patch(&seed, "id-1").is_some(),
            "an empty identity is none"
        );
        seed.status.as_mut().unwrap().cluster_identity = Some("other".into());
        assert_eq!(
            publish_patch(&seed, "id-1"),
            None,
            "another identity is left to the Seed controller"
        );
    }

    #[tokio::test]
    async fn the_identity_is_published_once_and_never_over_another() {
        let env = crate::testing::Env::start().await;
        let seed = crate::testing::seed(&env.garden).await;
        let identity = ensure(&env.seed).await.unwrap();
        assert_eq!(ensure(&env.seed).await.unwrap(), identity, "stable");
        // A write raced in since `seed` was read: the guarded patch conflicts and gives way.
        let seeds: Api<Seed> = Api::all(env.garden.clone());
        let name = seed.name_any();
        let other = json!({"status": {"conditions": []}, "metadata": {"labels": {"x": "y"}}});
        seeds
            .patch(&name, &PatchParams::default(), &Patch::Merge(&other))
            .await
            .unwrap();
        assert!(
            !publish_if_unset(&env.garden, &seed, &identity)
                .await
                .unwrap()
        );
        let current = seeds.get(&name).await.unwrap();
        assert!(!has_identity(&current));
        assert!(
            publish_if_unset(&env.garden, &current, &identity)
                .await
                .unwrap()
        );
        let published = seeds.get(&name).await.unwrap();
        assert_eq!(
            published.status.and_then(|s| s.cluster_identity).as_deref(),
            Some(identity.as_str())
        );
        let mut claimed = seeds.get(&name).await.unwrap();
        claimed.status.get_or_insert_default().cluster_identity = Some("another".into());
        assert!(
            !publish_if_unset(&env.garden, &claimed, &identity)
                .await
                .unwrap(),
            "left alone"
        );
        env.shutdown().await;
    }
}
