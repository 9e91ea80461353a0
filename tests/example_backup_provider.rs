//! End-to-end: the demo's stand-in for the example extension's backup controller
//! (`seedlet_landscape::backup_provider`) with the real agent — a bucket and an entry become
//! directories below the credentials' `hostPath`, the bucket's generated Secret reaches the garden,
//! and deleting entry and bucket removes the directories and lets the agent finish its deletions.

use seedlet_testkit as common;

use common::{Clusters, SEED, wait_for, wait_until};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::DeleteParams;
use seedlet_api::core::{BackupBucket, BackupEntry};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use seedlet_testkit::backup as support;

use support::{TIMEOUT, create_bucket, create_entry, data_of, last_op_of, put_secret, secret_ref};

const NAMESPACE: &str = "garden-p";
const ENTRY: &str = "shoot--p--s--uid9";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_backup_controller_keeps_buckets_and_entries_as_directories() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    common::ensure_namespace(&garden, "default").await;
    common::ensure_namespace(&garden, NAMESPACE).await;
    let shutdown = CancellationToken::new();
    let agent = common::start_agent(&clusters, shutdown.clone()).await;
    let provider = tokio::spawn(seedlet_landscape::backup_provider::run(
        seed.clone(),
        shutdown.clone(),
    ));
    let host = tempfile::tempdir().expect("temp dir");
    let host_path = host.path().display().to_string();
    put_secret(&garden, "garden", "local", &[("hostPath", &host_path)], &[]).await;
    create_bucket(&garden, "b1", SEED, secret_ref("local")).await;

    let buckets: Api<BackupBucket> = Api::all(garden.clone());
    wait_until("bucket Succeeded", TIMEOUT, || async {
        last_op_of(&buckets, "b1")
            .await
            .is_some_and(|(_, state, _, _)| state == "Succeeded")
    })
    .await;
    assert!(host.path().join("b1").is_dir());
    let generated = wait_for("generated secret in the garden", TIMEOUT, || async {
        Api::<Secret>::namespaced(garden.clone(), "garden")
            .get_opt("generated-bucket-b1")
            .await
            .unwrap()
    })
    .await;
    assert_eq!(data_of(&generated, "bucketName").as_deref(), Some("b1"));
    assert_eq!(data_of(&generated, "hostPath"), Some(host_path.clone()));

    // The entry gets the generated credentials and its directory below the bucket.
    create_entry(&garden, NAMESPACE, ENTRY, "b1", SEED, json!({})).await;
    let entries: Api<BackupEntry> = Api::namespaced(garden.clone(), NAMESPACE);
    wait_until("entry Succeeded", TIMEOUT, || async {
        last_op_of(&entries, ENTRY)
            .await
            .is_some_and(|(_, state, _, _)| state == "Succeeded")
    })
    .await;
    let entry_dir = host.path().join("b1").join(ENTRY);
    assert!(entry_dir.is_dir());

    // Deletion: the controller removes the directories and its finalizers, the agent finishes.
    entries
        .delete(ENTRY, &DeleteParams::default())
        .await
        .unwrap();
    wait_until("entry gone", TIMEOUT, || async {
        entries.get_opt(ENTRY).await.unwrap().is_none()
    })
    .await;
    assert!(!entry_dir.exists());
    buckets
        .delete("b1", &DeleteParams::default())
        .await
        .unwrap();
    wait_until("bucket gone", TIMEOUT, || async {
        buckets.get_opt("b1").await.unwrap().is_none()
    })
    .await;
    assert!(!host.path().join("b1").exists());
    let seed_generated = Api::<Secret>::namespaced(seed.clone(), "garden")
        .get_opt("generated-bucket-b1")
        .await
        .unwrap();
    assert!(
        seed_generated.is_none(),
        "the seed's generated Secret is removed"
    );

    shutdown.cancel();
    agent.wait().await.unwrap();
    provider.await.unwrap();
    clusters.shutdown().await;
}
