//! End-to-end tests of the garden controller's seed-side controllers against an in-process
//! garden sandbox: the seed secrets mirror (`seed-<name>`, spec §6.3/§6.4) and the backup buckets
//! check (`BackupBucketsReady`, §6.1).

use seedlet_testkit as common;

use std::time::Duration;

use common::{Clusters, SEED, wait_condition_of, wait_for, wait_until};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{BackupBucket, Seed};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_secs(20);

const CONFIG: &str = r#"
apiVersion: seedlet.gardener.cloud/v1alpha1
kind: GardenControllerConfiguration
controllers:
  seedBackupBucketsCheck:
    syncPeriod: 500ms
    conditionThresholds:
    - type: BackupBucketsReady
      duration: 2s
"#;

async fn start_garden(
    clusters: &Clusters,
    stop: CancellationToken,
) -> seedlet_garden::RunningGarden {
    let config = match seedlet_config::parse(CONFIG, "garden.yaml").expect("config") {
        seedlet_config::AnyConfig::GardenController(config) => *config,
        other => panic!("unexpected kind {}", other.kind()),
    };
    let address: std::net::SocketAddr = "127.0.0.1:0".parse().expect("address");
    seedlet_garden::Garden::new(config, clusters.garden.client())
        .expect("garden controller")
        .with_addresses(address, address)
        .with_leader_election(None)
        .start(stop)
        .await
        .expect("garden controller starts")
}

async fn create_seed(garden: &kube::Client, name: &str) {
    let seed: Seed = serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
        "metadata": {"name": name},
        "spec": {"provider": {"type": "local", "region": "local"},
                 "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}}
    }))
    .expect("test setup");
    Api::<Seed>::all(garden.clone())
        .create(&PostParams::default(), &seed)
        .await
        .expect("test setup");
}

async fn role_secret(garden: &kube::Client, name: &str, role: &str) {
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "garden", "labels": {"gardener.cloud/role": role},
                     "annotations": {"note": "n"}},
        "stringData": {"k": "v"},
    }))
    .expect("test setup");
    Api::<Secret>::namespaced(garden.clone(), "garden")
        .create(&PostParams::default(), &secret)
        .await
        .expect("test setup");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_secrets_are_mirrored_pruned_and_foreign_namespaces_refused() {
    let clusters = Clusters::start(false).await;
    let garden = clusters.garden.client();
    let stop = CancellationToken::new();
    let controller = start_garden(&clusters, stop.clone()).await;
    role_secret(&garden, "alerting", "alerting").await;
    role_secret(&garden, "kubeconfig-x", "kubeconfig").await;
    create_seed(&garden, "other").await;

    let namespaces: Api<Namespace> = Api::all(garden.clone());
    let namespace = wait_for("seed-other", TIMEOUT, || async {
        namespaces.get_opt("seed-other").await.unwrap()
    })
    .await;
    assert_eq!(namespace.labels()["gardener.cloud/role"], "seed");
    let owner = &namespace.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("Seed", "other", Some(true))
    );

    let mirrored: Api<Secret> = Api::namespaced(garden.clone(), "seed-other");
    let copy = wait_for("alerting mirrored", TIMEOUT, || async {
        mirrored.get_opt("alerting").await.unwrap()
    })
    .await;
    assert_eq!(copy.annotations()["note"], "n");
    assert_eq!(copy.labels()["gardener.cloud/role"], "alerting");
    assert!(mirrored.get_opt("kubeconfig-x").await.unwrap().is_none());

    // A change of the source is mirrored; its deletion prunes the copy.
    let patch = json!({"stringData": {"k": "w"}});
    Api::<Secret>::namespaced(garden.clone(), "garden")
        .patch("alerting", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    wait_until("change mirrored", TIMEOUT, || async {
        mirrored
            .get("alerting")
            .await
            .ok()
            .and_then(|s| s.data)
            .is_some_and(|d| d["k"].0 == b"w")
    })
    .await;
    Api::<Secret>::namespaced(garden.clone(), "garden")
        .delete("alerting", &DeleteParams::default())
        .await
        .unwrap();
    wait_until("copy pruned", TIMEOUT, || async {
        mirrored.get_opt("alerting").await.unwrap().is_none()
    })
    .await;

    // Every Seed gets the copies: the testkit's pre-made seed-local is adopted by the garden's
    // finalizers controller (label and controller reference), then mirrored into.
    role_secret(&garden, "internal", "internal-domain").await;
    let local: Api<Secret> = Api::namespaced(garden.clone(), "seed-local");
    for api in [&mirrored, &local] {
        wait_for("internal mirrored", TIMEOUT, || async {
            api.get_opt("internal").await.unwrap()
        })
        .await;
    }

    stop.cancel();
    controller.wait().await.unwrap();
    clusters.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_buckets_ready_follows_bucket_errors_with_the_threshold() {
    let clusters = Clusters::start(false).await;
    let garden = clusters.garden.client();
    let stop = CancellationToken::new();
    let controller = start_garden(&clusters, stop.clone()).await;
    let seeds: Api<Seed> = Api::all(garden.clone());
    let ready = ("BackupBucketsReady", "Unknown", "BackupBucketsGone");
    let message = wait_condition_of(&seeds, SEED, ready, Seed::conditions, TIMEOUT).await;
    assert_eq!(message, "Backup Buckets are gone.");

    let buckets: Api<BackupBucket> = Api::all(garden.clone());
    for name in ["a", "b"] {
        let bucket: BackupBucket = serde_json::from_value(json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "BackupBucket",
            "metadata": {"name": name},
            "spec": {"provider": {"type": "local", "region": "local"}, "seedName": SEED},
        }))
        .unwrap();
        buckets
            .create(&PostParams::default(), &bucket)
            .await
            .unwrap();
    }
    let available = ("BackupBucketsReady", "True", "BackupBucketsAvailable");
    wait_condition_of(&seeds, SEED, available, Seed::conditions, TIMEOUT).await;

    for (name, error) in [("a", "denied"), ("b", "quota")] {
        let status = json!({"status": {"lastError": {"description": error}}});
        buckets
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .unwrap();
    }
    let progressing = ("BackupBucketsReady", "Progressing", "BackupBucketsError");
    wait_condition_of(&seeds, SEED, progressing, Seed::conditions, TIMEOUT).await;
    let failed = ("BackupBucketsReady", "False", "BackupBucketsError");
    let message = wait_condition_of(&seeds, SEED, failed, Seed::conditions, TIMEOUT).await;
    assert_eq!(
        message,
        "The following BackupBuckets have issues:\n* Name: a, Error: denied\n* Name: b, Error: quota"
    );
    for name in ["a", "b"] {
        let status = json!({"status": {"lastError": null}});
        buckets
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .unwrap();
    }
    wait_condition_of(&seeds, SEED, available, Seed::conditions, TIMEOUT).await;

    stop.cancel();
    controller.wait().await.unwrap();
    clusters.shutdown().await;
}
