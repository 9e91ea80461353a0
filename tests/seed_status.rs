//! End-to-end tests of the agent's Seed controller (spec `gardenlet-backup-bastion-seed.md` §5.2,
//! edge cases §5.4): status fields and lastOperation, capacity/allocatable, the seed's namespace
//! labels, the core BackupBucket for `spec.backup` (re-stamped each sync and reconciled by the
//! BackupBucket controller), the minimum version and missing `seed-<name>` errors, and deletion.

use seedlet_testkit as common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{Clusters, SEED, wait_for, wait_until};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::DeleteParams;
use kube::{Api, ResourceExt};
use seedlet_api::core::{BackupBucket, Seed};
use seedlet_api::extensions;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_secs(20);

fn last_operation(seed: &Seed) -> Option<(String, String, i32, String)> {
    let op = seed.status.as_ref()?.last_operation.as_ref()?;
    Some((
        format!("{:?}", op.type_),
        format!("{:?}", op.state),
        op.progress,
        op.description.clone(),
    ))
}

fn configure(config: &mut seedlet_config::GardenletConfiguration) {
    config.controllers.seed.sync_period = seedlet_config::Duration::from_secs(1);
    config.resources = Some(seedlet_config::gardenlet::Resources {
        capacity: BTreeMap::from([("shoots".into(), seedlet_config::Quantity::new("250"))]),
        reserved: BTreeMap::from([("shoots".into(), seedlet_config::Quantity::new("10"))]),
    });
    if let Some(template) = config.seed_config.as_mut() {
        template.spec["backup"] = json!({"provider": "local",
            "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": "backup", "namespace": "garden"}});
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_reconcile_reports_status_labels_namespaces_and_keeps_its_backup_bucket() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    let secret: k8s_openapi::api::core::v1::Secret = serde_json::from_value(json!({
        "metadata": {"name": "backup", "namespace": "garden"}, "stringData": {"k": "v"}}))
    .unwrap();
    Api::namespaced(garden.clone(), "garden")
        .create(&Default::default(), &secret)
        .await
        .unwrap();
    let shutdown = CancellationToken::new();
    let agent = common::start_agent_with(&clusters, shutdown.clone(), configure).await;
    let seeds: Api<Seed> = Api::all(garden.clone());

    // 1: Processing → Succeeded with the status fields; the identity is never rewritten.
    let reconciled = wait_for("seed reconciled", TIMEOUT, || async {
        seeds.get(SEED).await.ok().filter(|s| {
            last_operation(s)
                == Some((
                    "Reconcile".into(),
                    "Succeeded".into(),
                    100,
                    "Seed cluster has been successfully reconciled.".into(),
                ))
        })
    })
    .await;
    let status = reconciled.status.clone().unwrap();
    assert_eq!(status.cluster_identity.as_deref(), Some("seed-identity"));
    assert_eq!(status.kubernetes_version.as_deref(), Some("v1.32.13"));
    assert_eq!(status.gardener.as_ref().unwrap().name, "seedlet-agent");
    assert_eq!(status.observed_generation, reconciled.metadata.generation);
    // 6: capacity and allocatable.
    assert_eq!(status.capacity["shoots"].0, "250");
    assert_eq!(status.allocatable["shoots"].0, "240");
    assert!(reconciled.finalizers().iter().any(|f| f == "gardener"));

    let namespaces: Api<Namespace> = Api::all(seed.clone());
    let garden_namespace = namespaces.get("garden").await.unwrap();
    let labels = garden_namespace.labels();
    assert_eq!(labels["role"], "garden");
    assert_eq!(labels["gardener.cloud/role"], "garden");
    assert_eq!(labels["pod-security.kubernetes.io/enforce"], "privileged");
    assert_eq!(
        labels["high-availability-config.resources.gardener.cloud/consider"],
        "true"
    );
    assert_eq!(
        garden_namespace.annotations()["high-availability-config.resources.gardener.cloud/zones"],
        "a,b"
    );
    assert_eq!(
        namespaces.get("kube-system").await.unwrap().labels()["role"],
        "kube-system"
    );

    // 4: the bucket is named after the Seed UID, in the seed's region, and re-stamped each sync.
    let uid = reconciled.uid().unwrap();
    let buckets: Api<BackupBucket> = Api::all(garden.clone());
    let bucket = wait_for("seed bucket", TIMEOUT, || async {
        buckets.get_opt(&uid).await.unwrap()
    })
    .await;
    assert_eq!(bucket.spec.provider.region, "local");
    assert_eq!(bucket.spec.provider.type_, "local");
    assert_eq!(bucket.spec.seed_name.as_deref(), Some(SEED));
    assert_eq!(bucket.owner_references()[0].uid, uid);
    let first = bucket
        .annotations()
        .get("gardener.cloud/timestamp")
        .cloned();
    wait_until("bucket re-stamped", TIMEOUT, || async {
        buckets
            .get(&uid)
            .await
            .unwrap()
            .annotations()
            .get("gardener.cloud/timestamp")
            .cloned()
            != first
    })
    .await;
    // The BackupBucket controller takes it from there.
    let extension_buckets: Api<extensions::BackupBucket> = Api::all(seed.clone());
    wait_for("extension bucket", TIMEOUT, || async {
        extension_buckets.get_opt(&uid).await.unwrap()
    })
    .await;

    // 2: a missing seed-<name> is an error naming it.
    Api::<Namespace>::all(garden.clone())
        .delete("seed-local", &DeleteParams::default())
        .await
        .unwrap();
    let (_, state, _, description) = wait_for("namespace error", TIMEOUT, || async {
        seeds
            .get(SEED)
            .await
            .ok()
            .and_then(|s| last_operation(&s))
            .filter(|(_, state, _, _)| state == "Error")
    })
    .await;
    assert_eq!(state, "Error");
    assert!(
        description.starts_with("failed to get seed namespace in garden cluster: ")
            && description.ends_with(" Operation will be retried."),
        "{description}"
    );
    common::ensure_namespace(&garden, "seed-local").await;

    // 7: deletion: the Seed's bucket goes (the BackupBucket controller runs its deletion), then
    // the finalizer.
    seeds.delete(SEED, &DeleteParams::default()).await.unwrap();
    wait_until("bucket deleted", TIMEOUT, || async {
        buckets.get_opt(&uid).await.unwrap().is_none()
    })
    .await;
    wait_until("seed finalizer removed", TIMEOUT, || async {
        seeds
            .get_opt(SEED)
            .await
            .unwrap()
            .is_none_or(|s| !s.finalizers().iter().any(|f| f == "gardener"))
    })
    .await;

    shutdown.cancel();
    agent.wait().await.unwrap();
    clusters.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_below_the_minimum_kubernetes_version_is_an_error() {
    let clusters = Clusters::start(false).await;
    let garden = clusters.garden.client();
    // A seed cluster reporting Kubernetes 1.31, one minor below Gardener's minimum.
    let old_seed = seedlet_sandbox::Sandbox::builder()
        .name("old-seed")
        .reported_version("v1.31.4")
        .start()
        .await
        .unwrap();
    common::prepare_seed(&old_seed.client()).await;
    let shutdown = CancellationToken::new();
    let agent = common::start_agent_from(
        common::agent_config(common::AGENT_CONFIG),
        old_seed.client(),
        Some(garden.clone()),
        shutdown.clone(),
        |_| {},
    )
    .await;
    let seeds: Api<Seed> = Api::all(garden.clone());
    let (_, _, _, description) = wait_for("version error", TIMEOUT, || async {
        seeds
            .get(SEED)
            .await
            .ok()
            .and_then(|s| last_operation(&s))
            .filter(|(_, state, _, _)| state == "Error")
    })
    .await;
    assert_eq!(
        description,
        "the Kubernetes version of the Seed cluster must be at least 1.32, but is v1.31.4 Operation will be retried."
    );
    let seed = seeds.get(SEED).await.unwrap();
    assert!(seed.finalizers().iter().all(|f| f != "gardener"));

    shutdown.cancel();
    agent.wait().await.unwrap();
    old_seed.shutdown().await;
    clusters.shutdown().await;
}
