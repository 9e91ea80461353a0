//! One Seed status reconcile: determine the seed cluster identity (creating the ConfigMap when
//! missing) and the seed's Kubernetes version, then merge-patch what differs into the Seed status.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{GardenerInfo, Seed};
use seedlet_api::names::{namespaces, objects};
use serde_json::{Value, json};

use super::{Ctx, NAME};
use seedlet_runtime::error_chain;

/// Errors of one Seed status reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or creating the cluster identity ConfigMap in the seed failed.
    #[error(
        "determining seed cluster identity ({}/{})",
        namespaces::KUBE_SYSTEM,
        objects::CLUSTER_IDENTITY
    )]
    ClusterIdentity(#[source] kube::Error),
    /// Reading the seed API server version failed.
    #[error("reading seed kubernetes version")]
    Version(#[source] kube::Error),
    /// Writing the Seed status failed.
    #[error("patching status of seed {seed}")]
    PatchSeed {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Error {
    /// CamelCase reason for logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::ClusterIdentity(_) => "ClusterIdentityError",
            Error::Version(_) => "SeedVersionError",
            Error::PatchSeed { .. } => "SeedPatchError",
        }
    }
}

/// The status fields the agent owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredStatus {
    /// Seed cluster identity.
    pub cluster_identity: String,
    /// Identity of the running agent.
    pub gardener: GardenerInfo,
    /// Seed API server `gitVersion`.
    pub kubernetes_version: String,
    /// The Seed generation observed.
    pub observed_generation: Option<i64>,
}

/// Brings the owned status fields up to date; requeues after the sync period.
///
/// # Errors
/// See [`Error`]; the next run reads fresh state.
pub async fn reconcile(seed: Arc<Seed>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let started = std::time::Instant::now();
    let result = update(&seed, &ctx).await;
    ctx.agent
        .metrics
        .reconciled(NAME, started.elapsed(), result.is_ok());
    result.map(|()| Action::requeue(ctx.sync_period))
}

/// Retries after a short delay, capped at the sync period, and logs the error once.
pub fn error_policy(seed: Arc<Seed>, error: &Error, ctx: Arc<Ctx>) -> Action {
    tracing::warn!(
        seed = %seed.name_any(),
        reason = error.reason(),
        error = %error_chain(error),
        "seed status reconcile failed"
    );
    Action::requeue(ctx.sync_period.min(Duration::from_secs(5)))
}

async fn update(seed: &Seed, ctx: &Ctx) -> Result<(), Error> {
    let cluster_identity = ensure_cluster_identity(&ctx.agent.seed).await?;
    let version = ctx
        .agent
        .seed
        .apiserver_version()
        .await
        .map_err(Error::Version)?;
    let desired = DesiredStatus {
        cluster_identity,
        gardener: ctx.gardener.clone(),
        kubernetes_version: version.git_version,
        observed_generation: seed.metadata.generation,
    };
    let Some(patch) = status_patch(seed, &desired) else {
        return Ok(());
    };
    let name = seed.name_any();
    Api::<Seed>::all(ctx.garden.clone())
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| ())
        .map_err(|source| Error::PatchSeed { seed: name, source })
}

/// The agent's `status.gardener`: id = a unique identity of this process (host name plus random
/// suffix, as for leader election), name `seedlet-agent`, version of this build. Computed once per
/// run so that it stays stable across reconciles.
pub fn gardener_info() -> GardenerInfo {
    GardenerInfo {
        id: seedlet_runtime::leader_election::default_identity(),
        name: crate::context::FIELD_MANAGER.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

/// The merge patch setting the fields of `desired` that differ from the Seed's status, or `None`
/// when all are current.
pub fn status_patch(seed: &Seed, desired: &DesiredStatus) -> Option<Value> {
    let status = seed.status.clone().unwrap_or_default();
    let mut patch = serde_json::Map::new();
    if status.cluster_identity.as_deref() != Some(desired.cluster_identity.as_str()) {
        patch.insert("clusterIdentity".into(), json!(desired.cluster_identity));
    }
    if status.gardener.as_ref() != Some(&desired.gardener) {
        patch.insert("gardener".into(), json!(desired.gardener));
    }
    if status.kubernetes_version.as_deref() != Some(desired.kubernetes_version.as_str()) {
        patch.insert(
            "kubernetesVersion".into(),
            json!(desired.kubernetes_version),
        );
    }
    if desired.observed_generation.is_some()
        && status.observed_generation != desired.observed_generation
    {
        patch.insert(
            "observedGeneration".into(),
            json!(desired.observed_generation),
        );
    }
    (!patch.is_empty()).then(|| json!({"status": patch}))
}

/// The seed cluster identity from `kube-system/cluster-identity`; when the ConfigMap is missing it
/// is created like gardenlet does, with the `kube-system` namespace UID as identity (random per
/// cluster), or a random identity if that namespace has no UID.
async fn ensure_cluster_identity(seed: &kube::Client) -> Result<String, Error> {
    let config_maps: Api<ConfigMap> = Api::namespaced(seed.clone(), namespaces::KUBE_SYSTEM);
    if let Some(identity) = config_maps
        .get_opt(objects::CLUSTER_IDENTITY)
        .await
        .map_err(Error::ClusterIdentity)?
        .as_ref()
        .and_then(identity_of)
    {
        return Ok(identity);
    }
    let kube_system = Api::<Namespace>::all(seed.clone())
        .get_opt(namespaces::KUBE_SYSTEM)
        .await
        .map_err(Error::ClusterIdentity)?;
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
            .map_err(Error::ClusterIdentity)
            .map(|config_map| identity_of(&config_map).unwrap_or(identity)),
        Err(source) => Err(Error::ClusterIdentity(source)),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn desired() -> DesiredStatus {
        DesiredStatus {
            cluster_identity: "id-1".into(),
            gardener: GardenerInfo {
                id: "a".into(),
                name: "seedlet-agent".into(),
                version: "0.1.0".into(),
            },
            kubernetes_version: "v1.33.0".into(),
            observed_generation: Some(3),
        }
    }

    #[test]
    fn status_patch_sets_every_missing_field() {
        let patch = status_patch(&Seed::default(), &desired()).unwrap();
        assert_eq!(patch["status"]["clusterIdentity"], "id-1");
        assert_eq!(patch["status"]["gardener"]["name"], "seedlet-agent");
        assert_eq!(patch["status"]["kubernetesVersion"], "v1.33.0");
        assert_eq!(patch["status"]["observedGeneration"], 3);
    }

    #[test]
    fn status_patch_is_none_when_current_and_partial_when_one_field_differs() {
        let mut seed = Seed::default();
        let wanted = desired();
        seed.status = Some(seedlet_api::core::SeedStatus {
            cluster_identity: Some(wanted.cluster_identity.clone()),
            gardener: Some(wanted.gardener.clone()),
            kubernetes_version: Some(wanted.kubernetes_version.clone()),
            observed_generation: wanted.observed_generation,
            ..Default::default()
        });
        assert_eq!(status_patch(&seed, &wanted), None);
        let mut newer = wanted.clone();
        newer.observed_generation = Some(4);
        assert_eq!(
            status_patch(&seed, &newer),
            Some(json!({"status": {"observedGeneration": 4}}))
        );
    }

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
}
