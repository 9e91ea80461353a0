//! The garden's cluster identity (`kube-system/cluster-identity`, key `cluster-identity`), which
//! agents inject into extension charts as the garden identity. A Gardener garden has it from its
//! control plane; `seedlet garden` creates it when absent, as gardenlet does for a seed: the
//! `kube-system` namespace UID (unique per cluster), immutable, never overwritten.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use seedlet_api::names::{field_managers, namespaces, objects};

/// Ensures the ConfigMap; returns the identity (existing or created).
///
/// # Errors
/// The API error of the read or create, naming nothing secret.
pub async fn ensure(garden: &kube::Client) -> Result<String, kube::Error> {
    let config_maps: Api<ConfigMap> = Api::namespaced(garden.clone(), namespaces::KUBE_SYSTEM);
    let existing = |config_map: &ConfigMap| {
        config_map
            .data
            .as_ref()
            .and_then(|data| data.get(objects::CLUSTER_IDENTITY_KEY))
            .filter(|identity| !identity.is_empty())
            .cloned()
    };
    if let Some(found) = config_maps.get_opt(objects::CLUSTER_IDENTITY).await?
        && let Some(identity) = existing(&found)
    {
        return Ok(identity);
    }
    let uid = Api::<Namespace>::all(garden.clone())
        .get(namespaces::KUBE_SYSTEM)
        .await?
        .metadata
        .uid
        .unwrap_or_default();
    let identity = format!("garden-{uid}");
    let config_map = ConfigMap {
        metadata: ObjectMeta {
            name: Some(objects::CLUSTER_IDENTITY.to_owned()),
            namespace: Some(namespaces::KUBE_SYSTEM.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            objects::CLUSTER_IDENTITY_KEY.to_owned(),
            identity.clone(),
        )])),
        immutable: Some(true),
        ..ConfigMap::default()
    };
    let params = PostParams {
        field_manager: Some(field_managers::GARDEN.to_owned()),
        ..PostParams::default()
    };
    match config_maps.create(&params, &config_map).await {
        Ok(_) => {
            tracing::info!(identity = %identity, "created the garden's cluster identity kube-system/cluster-identity");
            Ok(identity)
        }
        // Created meanwhile (another replica, an operator): theirs wins.
        Err(kube::Error::Api(status)) if status.code == 409 => {
            let found = config_maps.get(objects::CLUSTER_IDENTITY).await?;
            Ok(existing(&found).unwrap_or(identity))
        }
        Err(error) => Err(error),
    }
}
