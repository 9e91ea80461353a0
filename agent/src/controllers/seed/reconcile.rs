//! One Seed reconcile (spec §5.2): determine the seed cluster identity (creating the ConfigMap
//! when missing) and the seed's Kubernetes version, write the status start (`lastOperation`
//! Processing, `gardener`, `kubernetesVersion`, `observedGeneration`, capacity/allocatable,
//! `clusterIdentity`), then run the flow — `seed-<name>` in the garden, the minimum Kubernetes
//! version, the `gardener` finalizer, the labels of the seed's `garden` and `kube-system`
//! namespaces, the core BackupBucket for `spec.backup` — and report Succeeded, or Error with
//! `<error> Operation will be retried.`. Deletion is in [`super::delete`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::core::{BackupBucket, GardenerInfo, Seed};
use seedlet_api::names::{finalizers, namespaces};
use seedlet_runtime::controller::{Reconciler, routine_failure};
use seedlet_runtime::events::EventType;
use seedlet_runtime::repeated::Failure;
use serde_json::{Value, json};

use super::io::{Error, write_status};
use super::{NAME, SeedStatus, another_agent, flow};
use crate::extension_sync::operation;
use seedlet_runtime::error_chain;

/// The status fields the agent owns.
#[derive(Debug, Clone, PartialEq)]
pub struct DesiredStatus {
    /// Seed cluster identity.
    pub cluster_identity: String,
    /// Identity of the running agent.
    pub gardener: GardenerInfo,
    /// Seed API server `gitVersion`.
    pub kubernetes_version: String,
    /// The Seed generation observed.
    pub observed_generation: Option<i64>,
    /// `resources.capacity` of the configuration (empty: not reported).
    pub capacity: BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    /// Capacity minus `resources.reserved`.
    pub allocatable: BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
}

impl Reconciler for SeedStatus {
    type Object = Seed;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Brings the owned status fields up to date; requeues after the sync period. After an
    /// error the next run reads fresh state.
    async fn reconcile(&self, seed: Arc<Seed>) -> Result<Action, Error> {
        update(&seed, self).await
    }

    /// A short delay, capped at the sync period.
    fn retry_after(&self, _: &Error) -> Duration {
        self.sync_period.min(Duration::from_secs(5))
    }

    /// A Seed of another agent is an ERROR once per distinct clash and a look again after a
    /// doubling delay ([`another_agent::delay`]); everything else is a routine failure.
    fn error_policy(&self, seed: &Seed, error: &Error) -> Action {
        clash_policy(self, error).unwrap_or_else(|| routine_failure(self, seed, error))
    }
}

fn clash_policy(ctx: &SeedStatus, error: &Error) -> Option<Action> {
    if let Error::AnotherAgent { seed, clash } = error {
        let message = clash.to_string();
        let (news, delay) = ctx.clashes.met(&message);
        match news {
            Failure::New => tracing::error!(
                seed = %seed,
                their_id = %clash.theirs,
                their_cluster = %clash.their_cluster,
                our_id = %clash.ours,
                our_cluster = %clash.our_cluster,
                retry_in = ?delay,
                reason = another_agent::REASON,
                "another agent registers this seed from another seed cluster; not writing its status"
            ),
            Failure::Repeated => {
                tracing::debug!(seed = %seed, retry_in = ?delay, "seed still claimed by another agent")
            }
        }
        return Some(Action::requeue(delay));
    }
    None
}

async fn update(cached: &Seed, ctx: &SeedStatus) -> Result<Action, Error> {
    let name = cached.name_any();
    let seeds = Api::<Seed>::all(ctx.garden.clone());
    let Some(seed) = seeds
        .get_opt(&name)
        .await
        .map_err(|source| Error::PatchSeed {
            seed: name.clone(),
            source,
        })?
    else {
        return Ok(Action::await_change());
    };
    if seed.metadata.deletion_timestamp.is_some() {
        return super::delete::run(&seed, ctx).await;
    }
    let now = ctx.clock.now();
    let cluster_identity = crate::cluster_identity::ensure(&ctx.seed)
        .await
        .map_err(Error::ClusterIdentity)?;
    if let Some(clash) = another_agent::clash(&seed, &ctx.gardener.id, &cluster_identity) {
        report_clash(&seed, &clash, ctx).await;
        ctx.claim.set_claimed_by_another(true);
        return Err(Error::AnotherAgent { seed: name, clash });
    }
    ctx.claim.set_claimed_by_another(false);
    if let Some(count) = ctx.clashes.over() {
        tracing::info!(seed = %name, clashes = count, "seed no longer claimed by another agent");
    }
    let version = ctx
        .seed
        .apiserver_version()
        .await
        .map_err(Error::KubernetesVersion)?;
    let desired = desired_status(&seed, ctx, cluster_identity, version.git_version.clone());
    let started = operation::last_operation(
        LastOperationType::Reconcile,
        LastOperationState::Processing,
        0,
        flow::RECONCILE_STARTED,
        now,
    );
    let mut start = status_patch(&seed, &desired).unwrap_or_else(|| json!({"status": {}}));
    start["status"]["lastOperation"] = json!(started);
    if start["status"].get("clusterIdentity").is_some() {
        // The first registration: guarded, so of two agents registering at once one gets 409
        // and, reading the other's identity next run, sees the clash instead of overwriting it.
        start["metadata"] = json!({"resourceVersion": seed.metadata.resource_version});
    }
    write_status(ctx, &seed, &start).await?;

    match run_flow(&seed, ctx, &version.git_version).await {
        Ok(()) => {
            let done = operation::last_operation(
                LastOperationType::Reconcile,
                LastOperationState::Succeeded,
                100,
                flow::RECONCILE_SUCCEEDED,
                ctx.clock.now(),
            );
            // Upstream also turns BackupBucketsReady/ExtensionsReady/GardenletReady/
            // SeedSystemComponentsHealthy that are not False into Progressing here [QUIRK];
            // seedlet leaves the conditions to the controllers that own them.
            write_status(ctx, &seed, &json!({"status": {"lastOperation": done}})).await?;
            Ok(Action::requeue(ctx.sync_period))
        }
        Err(error) => {
            let failed = operation::last_operation(
                LastOperationType::Reconcile,
                LastOperationState::Error,
                0,
                format!("{} Operation will be retried.", error_chain(&error)),
                ctx.clock.now(),
            );
            write_status(ctx, &seed, &json!({"status": {"lastOperation": failed}})).await?;
            Err(error)
        }
    }
}

/// A Warning Event on the Seed naming both agents (the recorder aggregates repeats).
async fn report_clash(seed: &Seed, clash: &another_agent::Clash, ctx: &SeedStatus) {
    ctx.events
        .publish(
            seed,
            EventType::Warning,
            another_agent::REASON,
            "Reconcile",
            &format!("Seed {}: {clash}", seed.name_any()),
        )
        .await;
}

fn desired_status(
    seed: &Seed,
    ctx: &SeedStatus,
    cluster_identity: String,
    kubernetes_version: String,
) -> DesiredStatus {
    let resources = ctx.config.resources.clone().unwrap_or_default();
    let (capacity, allocatable) = if resources.capacity.is_empty() {
        (BTreeMap::new(), BTreeMap::new())
    } else {
        (
            flow::capacity(&resources.capacity),
            flow::allocatable(&resources.capacity, &resources.reserved),
        )
    };
    DesiredStatus {
        // The identity is immutable once written.
        cluster_identity: seed
            .status
            .as_ref()
            .and_then(|s| s.cluster_identity.clone())
            .unwrap_or(cluster_identity),
        gardener: ctx.gardener.clone(),
        kubernetes_version,
        observed_generation: seed.metadata.generation,
        capacity,
        allocatable,
    }
}

/// The flow after the status start; the first failure ends it.
async fn run_flow(seed: &Seed, ctx: &SeedStatus, git_version: &str) -> Result<(), Error> {
    let name = seed.name_any();
    Api::<Namespace>::all(ctx.garden.clone())
        .get(&namespaces::seed_namespace(&name))
        .await
        .map_err(Error::SeedNamespace)?;
    if ctx.kubernetes_version_check {
        flow::check_version(git_version).map_err(Error::Version)?;
    }
    let seeds = Api::<Seed>::all(ctx.garden.clone());
    let fresh = seeds.get(&name).await.map_err(|source| Error::PatchSeed {
        seed: name.clone(),
        source,
    })?;
    seedlet_runtime::finalizer::ensure(&seeds, &fresh, finalizers::GARDENER)
        .await
        .map_err(|source| Error::Finalizer {
            step: "adding",
            seed: name.clone(),
            source,
        })?;
    let namespaces_api = Api::<Namespace>::all(ctx.seed.clone());
    let params = PatchParams::default();
    namespaces_api
        .patch(
            namespaces::GARDEN,
            &params,
            &Patch::Merge(&flow::garden_namespace_patch(seed, false)),
        )
        .await
        .map_err(|source| Error::Namespace {
            namespace: namespaces::GARDEN,
            source,
        })?;
    namespaces_api
        .patch(
            namespaces::KUBE_SYSTEM,
            &params,
            &Patch::Merge(&json!({"metadata": {"labels": {"role": "kube-system"}}})),
        )
        .await
        .map_err(|source| Error::Namespace {
            namespace: namespaces::KUBE_SYSTEM,
            source,
        })?;
    let stamp = operation::timestamp(ctx.clock.now());
    if let Some((bucket_name, bucket)) = flow::backup_bucket(seed, &stamp) {
        write_backup_bucket(ctx, &bucket_name, &bucket).await?;
    }
    Ok(())
}

/// Create-or-merge-patch of the Seed's core BackupBucket.
async fn write_backup_bucket(ctx: &SeedStatus, name: &str, bucket: &Value) -> Result<(), Error> {
    let api = Api::<BackupBucket>::all(ctx.garden.clone());
    let error = |step| {
        move |source| Error::BackupBucket {
            step,
            bucket: name.to_owned(),
            source,
        }
    };
    if api.get_opt(name).await.map_err(error("reading"))?.is_none() {
        let object: BackupBucket = serde_json::from_value(bucket.clone())
            .map_err(|e| error("building")(kube::Error::SerdeError(e)))?;
        let params = PostParams {
            field_manager: Some(crate::context::FIELD_MANAGER.to_owned()),
            ..PostParams::default()
        };
        match api.create(&params, &object).await {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(status)) if status.is_already_exists() => {}
            Err(source) => return Err(error("creating")(source)),
        }
    }
    api.patch(name, &PatchParams::default(), &Patch::Merge(bucket))
        .await
        .map(|_| ())
        .map_err(error("patching"))
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
    if !desired.capacity.is_empty() && status.capacity != desired.capacity {
        patch.insert("capacity".into(), json!(desired.capacity));
    }
    if !desired.allocatable.is_empty() && status.allocatable != desired.allocatable {
        patch.insert("allocatable".into(), json!(desired.allocatable));
    }
    (!patch.is_empty()).then(|| json!({"status": patch}))
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
            capacity: BTreeMap::new(),
            allocatable: BTreeMap::new(),
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
}
