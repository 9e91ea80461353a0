//! End-to-end tests of the agent's BackupEntry controller against in-process garden and seed
//! sandboxes; the test plays the extension controller (spec `gardenlet-backup-bastion-seed.md`
//! §2.7): waiting for the bucket, generated credentials, provider status changes, the deletion
//! grace period by purpose and force-deletion, and migration to a second seed with restore.

use seedlet_testkit as common;

use std::time::Duration;

use common::{Clusters, SEED, wait_for, wait_until};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{BackupBucket, BackupEntry, ShootState};
use seedlet_api::extensions;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use seedlet_testkit::backup as support;

use support::{
    TIMEOUT, annotation, create_entry, data_of, extension_reports, healthy_bucket, last_op_of,
    last_operation,
};

const NAMESPACE: &str = "garden-p";
const ENTRY: &str = "shoot--p--s--uid1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_entry_waits_for_a_healthy_bucket_and_follows_its_provider_status() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    common::ensure_namespace(&garden, NAMESPACE).await;
    let shutdown = CancellationToken::new();
    let agent = common::start_agent(&clusters, shutdown.clone()).await;
    let bucket_extensions: Api<extensions::BackupBucket> = Api::all(seed.clone());
    let entry_extensions: Api<extensions::BackupEntry> = Api::all(seed.clone());
    let entries: Api<BackupEntry> = Api::namespaced(garden.clone(), NAMESPACE);

    // 1: the bucket fails → the entry reports the bucket's error and codes, no extension object.
    support::put_secret(&garden, "garden", "creds", &[("key", "original")], &[]).await;
    support::create_bucket(&garden, "bkt", SEED, support::secret_ref("creds")).await;
    wait_for("extension bucket", TIMEOUT, || async {
        bucket_extensions.get_opt("bkt").await.unwrap()
    })
    .await;
    extension_reports(
        &bucket_extensions,
        "bkt",
        json!({"lastOperation": last_operation("Create", "Failed"),
               "lastError": {"description": "denied", "codes": ["ERR_INFRA_UNAUTHORIZED"]}}),
    )
    .await;
    let buckets: Api<BackupBucket> = Api::all(garden.clone());
    wait_until("bucket error", TIMEOUT, || async {
        buckets
            .get("bkt")
            .await
            .unwrap()
            .status
            .and_then(|s| s.last_error)
            .is_some()
    })
    .await;
    create_entry(&garden, NAMESPACE, ENTRY, "bkt", SEED, json!({})).await;
    let error = wait_for("entry reports the bucket error", TIMEOUT, || async {
        entries.get(ENTRY).await.unwrap().status?.last_error
    })
    .await;
    assert_eq!(
        error.description,
        "error during reconciliation of associated BackupBucket: error during reconciliation: denied"
    );
    assert_eq!(error.codes, ["ERR_INFRA_UNAUTHORIZED"]);
    let (type_, state, progress, _) = last_op_of(&entries, ENTRY).await.unwrap();
    assert_eq!(
        (type_.as_str(), state.as_str(), progress),
        ("Create", "Error", 50)
    );
    assert!(entry_extensions.get_opt(ENTRY).await.unwrap().is_none());

    // The bucket recovers with a generated secret → the entry deploys with its data (2).
    support::put_secret(
        &seed,
        "garden",
        "generated-by-ext",
        &[("key", "generated")],
        &[],
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    extension_reports(
        &bucket_extensions,
        "bkt",
        json!({"lastOperation": last_operation("Create", "Succeeded"), "lastError": null,
               "providerStatus": {"v": 1},
               "generatedSecretRef": {"name": "generated-by-ext", "namespace": "garden"}}),
    )
    .await;
    let extension = wait_for("extension entry", TIMEOUT, || async {
        entry_extensions.get_opt(ENTRY).await.unwrap()
    })
    .await;
    let spec = serde_json::to_value(&extension.spec).unwrap();
    assert_eq!(
        spec,
        json!({"type": "local", "region": "local", "bucketName": "bkt",
               "backupBucketProviderStatus": {"v": 1},
               "secretRef": {"name": format!("entry-{ENTRY}"), "namespace": "garden"}})
    );
    let seed_secrets: Api<Secret> = Api::namespaced(seed.clone(), "garden");
    let copy = seed_secrets.get(&format!("entry-{ENTRY}")).await.unwrap();
    assert_eq!(data_of(&copy, "key").as_deref(), Some("generated"));

    extension_reports(
        &entry_extensions,
        ENTRY,
        json!({"lastOperation": last_operation("Create", "Succeeded")}),
    )
    .await;
    wait_until("entry Create/Succeeded", TIMEOUT, || async {
        last_op_of(&entries, ENTRY).await
            == Some((
                "Create".into(),
                "Succeeded".into(),
                100,
                "Reconciliation of BackupEntry succeeded.".into(),
            ))
    })
    .await;
    let status = entries.get(ENTRY).await.unwrap().status.unwrap();
    assert_eq!(status.seed_name.as_deref(), Some(SEED));
    assert_eq!(status.last_error, None);

    // 3: a bucket provider status change re-deploys the entry with the new value.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    extension_reports(
        &bucket_extensions,
        "bkt",
        json!({"lastOperation": last_operation("Reconcile", "Succeeded"), "providerStatus": {"v": 2}}),
    )
    .await;
    wait_until("provider status re-deployed", TIMEOUT, || async {
        let object = entry_extensions.get(ENTRY).await.unwrap();
        let spec = serde_json::to_value(&object.spec).unwrap();
        spec["backupBucketProviderStatus"] == json!({"v": 2})
            && annotation(&object, "gardener.cloud/operation").as_deref() == Some("reconcile")
    })
    .await;

    // Deletion without a grace period: extension object, seed secret, finalizer.
    entries
        .delete(ENTRY, &DeleteParams::default())
        .await
        .unwrap();
    wait_until("entry gone", TIMEOUT, || async {
        entries.get_opt(ENTRY).await.unwrap().is_none()
    })
    .await;
    assert!(entry_extensions.get_opt(ENTRY).await.unwrap().is_none());
    assert!(
        seed_secrets
            .get_opt(&format!("entry-{ENTRY}"))
            .await
            .unwrap()
            .is_none()
    );

    shutdown.cancel();
    agent.wait().await.unwrap();
    clusters.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_entry_deletion_grace_applies_by_purpose_until_forced() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    common::ensure_namespace(&garden, NAMESPACE).await;
    let shutdown = CancellationToken::new();
    let agent = common::start_agent_with(&clusters, shutdown.clone(), |config| {
        config.controllers.backup_entry = Some(seedlet_config::gardenlet::BackupEntryController {
            concurrent_syncs: Some(2),
            deletion_grace_period_hours: Some(24),
            deletion_grace_period_shoot_purposes: Some(vec!["production".into()]),
        });
    })
    .await;
    healthy_bucket(&garden, &seed, "bkt", None, json!({})).await;
    let entries: Api<BackupEntry> = Api::namespaced(garden.clone(), NAMESPACE);
    let extensions: Api<extensions::BackupEntry> = Api::all(seed.clone());
    let cases = [
        (
            "prod",
            json!({"shoot.gardener.cloud/purpose": "production"}),
        ),
        (
            "dev",
            json!({"shoot.gardener.cloud/purpose": "development"}),
        ),
        ("none", json!({})),
    ];
    for (name, annotations) in &cases {
        create_entry(&garden, NAMESPACE, name, "bkt", SEED, annotations.clone()).await;
        wait_for("extension entry", TIMEOUT, || async {
            extensions.get_opt(name).await.unwrap()
        })
        .await;
        extension_reports(
            &extensions,
            name,
            json!({"lastOperation": last_operation("Create", "Succeeded")}),
        )
        .await;
        wait_until("entry succeeded", TIMEOUT, || async {
            last_op_of(&entries, name)
                .await
                .is_some_and(|(_, s, _, _)| s == "Succeeded")
        })
        .await;
        entries
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }
    // development is not listed: deleted at once.
    wait_until("dev gone", TIMEOUT, || async {
        entries.get_opt("dev").await.unwrap().is_none()
    })
    .await;
    // production and an entry without purpose wait 24 h.
    for name in ["prod", "none"] {
        let (type_, _, progress, description) = wait_for("pending deletion", TIMEOUT, || async {
            last_op_of(&entries, name)
                .await
                .filter(|(_, s, _, _)| s == "Pending")
        })
        .await;
        assert_eq!((type_.as_str(), progress), ("Delete", 0));
        let deleted = entries
            .get(name)
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .unwrap()
            .0;
        let due = deleted
            .checked_add(jiff::SignedDuration::from_hours(24))
            .unwrap();
        assert_eq!(
            description,
            format!(
                "Deletion of backup entry is scheduled for {}",
                due.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")
            )
        );
        assert!(extensions.get_opt(name).await.unwrap().is_some());
    }
    // 7: force-deletion on a pending entry deletes it at once.
    let force = json!({"metadata": {"annotations": {"backupentry.core.gardener.cloud/force-deletion": "true"}}});
    entries
        .patch("prod", &PatchParams::default(), &Patch::Merge(&force))
        .await
        .unwrap();
    wait_until("prod gone", TIMEOUT, || async {
        entries.get_opt("prod").await.unwrap().is_none()
    })
    .await;
    assert!(entries.get_opt("none").await.unwrap().is_some());

    shutdown.cancel();
    agent.wait().await.unwrap();
    clusters.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn backup_entry_migrates_from_the_source_and_restores_on_the_destination() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    common::ensure_namespace(&garden, NAMESPACE).await;
    let shutdown = CancellationToken::new();
    let source = common::start_agent(&clusters, shutdown.clone()).await;
    healthy_bucket(&garden, &seed, "bkt", None, json!({})).await;
    let entries: Api<BackupEntry> = Api::namespaced(garden.clone(), NAMESPACE);
    let source_objects: Api<extensions::BackupEntry> = Api::all(seed.clone());
    create_entry(&garden, NAMESPACE, ENTRY, "bkt", SEED, json!({})).await;
    wait_for("source extension entry", TIMEOUT, || async {
        source_objects.get_opt(ENTRY).await.unwrap()
    })
    .await;
    extension_reports(
        &source_objects,
        ENTRY,
        json!({"lastOperation": last_operation("Create", "Succeeded")}),
    )
    .await;
    wait_until("entry succeeded", TIMEOUT, || async {
        last_op_of(&entries, ENTRY)
            .await
            .is_some_and(|(_, s, _, _)| s == "Succeeded")
    })
    .await;

    // The destination agent runs on its own seed cluster as seed "other".
    let other = seedlet_sandbox::Sandbox::builder()
        .name("other")
        .start()
        .await
        .unwrap();
    common::prepare_seed(&other.client()).await;
    common::ensure_namespace(&garden, "seed-other").await;
    let mut config = common::agent_config(common::AGENT_CONFIG);
    if let Some(template) = config.seed_config.as_mut() {
        template.metadata.name = Some("other".into());
    }
    let destination = common::start_agent_from(
        config,
        other.client(),
        Some(garden.clone()),
        shutdown.clone(),
        |_| {},
    )
    .await;

    // Migration starts: the source annotates migrate; the extension migrates; the source deletes it.
    let patch = json!({"spec": {"seedName": "other"}});
    entries
        .patch(ENTRY, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    wait_until("migrate annotation", TIMEOUT, || async {
        let object = source_objects.get(ENTRY).await.unwrap();
        annotation(&object, "gardener.cloud/operation").as_deref() == Some("migrate")
    })
    .await;
    extension_reports(
        &source_objects,
        ENTRY,
        json!({"lastOperation": last_operation("Migrate", "Succeeded")}),
    )
    .await;
    wait_until("migration succeeded", TIMEOUT, || async {
        last_op_of(&entries, ENTRY).await
            == Some((
                "Migrate".into(),
                "Succeeded".into(),
                100,
                "Migration of BackupEntry succeeded.".into(),
            ))
    })
    .await;
    assert!(source_objects.get_opt(ENTRY).await.unwrap().is_none());
    let status = entries.get(ENTRY).await.unwrap().status.unwrap();
    assert_eq!(status.seed_name, None);
    // Hidden from both seeds until the shoot flow asks for the restore.
    let destination_objects: Api<extensions::BackupEntry> = Api::all(other.client());
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(destination_objects.get_opt(ENTRY).await.unwrap().is_none());

    let state: ShootState = serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "ShootState",
        "metadata": {"name": "s", "namespace": NAMESPACE},
        "spec": {"extensions": [{"kind": "BackupEntry", "name": ENTRY, "state": {"saved": "state"}}]},
    }))
    .unwrap();
    Api::<ShootState>::namespaced(garden.clone(), NAMESPACE)
        .create(&PostParams::default(), &state)
        .await
        .unwrap();
    let restore = json!({"metadata": {"annotations": {"gardener.cloud/operation": "restore"}}});
    entries
        .patch(ENTRY, &PatchParams::default(), &Patch::Merge(&restore))
        .await
        .unwrap();
    let restored = wait_for("restore annotation on the destination", TIMEOUT, || async {
        destination_objects
            .get_opt(ENTRY)
            .await
            .unwrap()
            .filter(|o| annotation(o, "gardener.cloud/operation").as_deref() == Some("restore"))
    })
    .await;
    assert_eq!(
        restored.status.and_then(|s| s.state),
        Some(json!({"saved": "state"}))
    );
    let (type_, state, _, _) = last_op_of(&entries, ENTRY).await.unwrap();
    assert_eq!((type_.as_str(), state.as_str()), ("Restore", "Processing"));
    extension_reports(
        &destination_objects,
        ENTRY,
        json!({"lastOperation": last_operation("Restore", "Succeeded")}),
    )
    .await;
    wait_until("restore succeeded", TIMEOUT, || async {
        last_op_of(&entries, ENTRY).await
            == Some((
                "Restore".into(),
                "Succeeded".into(),
                100,
                "Restoration of BackupEntry succeeded.".into(),
            ))
    })
    .await;
    let entry = entries.get(ENTRY).await.unwrap();
    assert!(!entry.annotations().contains_key("gardener.cloud/operation"));
    assert_eq!(entry.status.unwrap().seed_name.as_deref(), Some("other"));

    shutdown.cancel();
    source.wait().await.unwrap();
    destination.wait().await.unwrap();
    other.shutdown().await;
    clusters.shutdown().await;
}
