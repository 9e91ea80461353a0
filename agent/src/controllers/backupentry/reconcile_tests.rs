//! Reconcile tests against in-process garden and seed sandboxes: [`reconcile`] is called directly
//! on real objects; the test plays the BackupBucket controller and the extension by writing
//! their statuses.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Event, Secret};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{BackupBucket, BackupEntry};
use seedlet_api::extensions;
use seedlet_runtime::clock::Clock;
use serde_json::{Value, json};

use super::{BackupEntries, Settings};
use crate::testing::{Env, FIELD_MANAGER, SEED, create, last_operation, put_secret, secret_data};
use seedlet_runtime::controller::Reconciler as _;

const NAMESPACE: &str = "garden-dev";
const ENTRY: &str = "shoot--dev--s--uid";

fn ctx(env: &Env, settings: Settings) -> Arc<BackupEntries> {
    Arc::new(BackupEntries {
        clock: env.clock(),
        events: env.events(),
        field_manager: FIELD_MANAGER,
        concurrency: 1,
        seed: env.seed.clone(),
        seed_name: SEED.to_owned(),
        garden: env.garden.clone(),
        settings,
    })
}

/// Credentials `garden/creds`, core BackupBucket `bucket-1` of our seed, and (when `healthy`)
/// its status as the BackupBucket controller writes it after the extension succeeded.
async fn bucket(env: &Env, healthy: bool) {
    put_secret(&env.garden, "garden", "creds", &[("key", "v1")], &[]).await;
    let bucket: BackupBucket = create(
        &env.garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "BackupBucket",
               "metadata": {"name": "bucket-1"},
               "spec": {"provider": {"type": "local", "region": "eu"}, "seedName": SEED,
                        "credentialsRef": {"apiVersion": "v1", "kind": "Secret",
                                           "name": "creds", "namespace": "garden"}}}),
    )
    .await;
    if healthy {
        let status = json!({"status": {
            "lastOperation": last_operation("Create", "Succeeded", env.clock.now()),
            "observedGeneration": bucket.metadata.generation,
            "providerStatus": {"bucketName": "b-123"}}});
        Api::<BackupBucket>::all(env.garden.clone())
            .patch_status("bucket-1", &PatchParams::default(), &Patch::Merge(&status))
            .await
            .unwrap();
    }
}

async fn entry(env: &Env, annotations: Value) -> Arc<BackupEntry> {
    crate::testing::ensure_namespace(&env.garden, NAMESPACE).await;
    Arc::new(
        create(
            &env.garden,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "BackupEntry",
                   "metadata": {"name": ENTRY, "namespace": NAMESPACE, "annotations": annotations},
                   "spec": {"bucketName": "bucket-1", "seedName": SEED}}),
        )
        .await,
    )
}

fn entries(env: &Env) -> Api<BackupEntry> {
    Api::namespaced(env.garden.clone(), NAMESPACE)
}

fn last_op(entry: &BackupEntry) -> (String, String, String) {
    let op = entry
        .status
        .as_ref()
        .and_then(|s| s.last_operation.clone())
        .expect("lastOperation");
    (
        format!("{:?}", op.type_),
        format!("{:?}", op.state),
        op.description,
    )
}

#[tokio::test]
async fn an_unobserved_bucket_is_reported_on_the_entry_and_nothing_is_deployed() {
    let env = Env::start().await;
    bucket(&env, false).await;
    let core = entry(&env, json!({})).await;

    ctx(&env, Settings::default())
        .reconcile(core)
        .await
        .unwrap();
    let written = entries(&env).get(ENTRY).await.unwrap();
    assert_eq!(written.finalizers(), ["gardener"]);
    assert_eq!(
        last_op(&written),
        (
            "Create".into(),
            "Error".into(),
            "observed generation outdated (0/1)".into()
        )
    );
    let status = written.status.unwrap();
    assert_eq!(status.seed_name.as_deref(), Some(SEED));
    assert!(status.last_error.is_some());
    assert!(
        Api::<extensions::BackupEntry>::all(env.seed.clone())
            .get_opt(ENTRY)
            .await
            .unwrap()
            .is_none()
    );
    let events = Api::<Event>::namespaced(env.garden.clone(), NAMESPACE)
        .list(&Default::default())
        .await
        .unwrap();
    assert!(
        events
            .items
            .iter()
            .any(|e| e.reason.as_deref() == Some("ReconcileError")
                && e.involved_object.name.as_deref() == Some(ENTRY)),
        "a ReconcileError event on the entry"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_healthy_bucket_gets_the_extension_deployed_and_its_success_reported() {
    let env = Env::start().await;
    let ctx = ctx(&env, Settings::default());
    bucket(&env, true).await;
    let core = entry(&env, json!({})).await;

    ctx.clone().reconcile(core.clone()).await.unwrap();
    let written = entries(&env).get(ENTRY).await.unwrap();
    assert_eq!(
        last_op(&written),
        (
            "Create".into(),
            "Processing".into(),
            "Reconciliation of BackupEntry state initialized.".into()
        )
    );
    let copy = Api::<Secret>::namespaced(env.seed.clone(), "garden")
        .get(&format!("entry-{ENTRY}"))
        .await
        .unwrap();
    assert_eq!(secret_data(&copy, "key").as_deref(), Some("v1"));
    let extensions_api = Api::<extensions::BackupEntry>::all(env.seed.clone());
    let extension = extensions_api.get(ENTRY).await.unwrap();
    assert_eq!(
        serde_json::to_value(&extension.spec).unwrap(),
        json!({"type": "local", "region": "eu", "bucketName": "bucket-1",
               "secretRef": {"name": format!("entry-{ENTRY}"), "namespace": "garden"},
               "backupBucketProviderStatus": {"bucketName": "b-123"}})
    );

    let unannotate = json!({"metadata": {"annotations": {"gardener.cloud/operation": null}}});
    extensions_api
        .patch(ENTRY, &PatchParams::default(), &Patch::Merge(&unannotate))
        .await
        .unwrap();
    let status = json!({"status": {
        "lastOperation": last_operation("Create", "Succeeded", env.clock.now())}});
    extensions_api
        .patch_status(ENTRY, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    ctx.reconcile(core).await.unwrap();
    let written = entries(&env).get(ENTRY).await.unwrap();
    assert_eq!(
        last_op(&written),
        (
            "Create".into(),
            "Succeeded".into(),
            "Reconciliation of BackupEntry succeeded.".into()
        )
    );
    assert_eq!(written.status.unwrap().last_error, None);
    env.shutdown().await;
}

#[tokio::test]
async fn deletion_waits_for_the_grace_period_unless_forced() {
    let env = Env::start().await;
    let grace = Settings {
        grace_hours: 24,
        grace_purposes: Vec::new(),
    };
    let ctx = ctx(&env, grace);
    bucket(&env, true).await;
    let core = entry(&env, json!({})).await;
    ctx.clone().reconcile(core.clone()).await.unwrap();
    entries(&env)
        .delete(ENTRY, &DeleteParams::default())
        .await
        .unwrap();
    let deleted = entries(&env)
        .get(ENTRY)
        .await
        .unwrap()
        .metadata
        .deletion_timestamp
        .expect("deletionTimestamp")
        .0;
    env.clock.set(deleted + jiff::SignedDuration::from_hours(1));

    // Within the grace period: Pending, requeued for the rest of it, the extension kept.
    let action = ctx.clone().reconcile(core.clone()).await.unwrap();
    assert_eq!(action, Action::requeue(Duration::from_secs(23 * 3600)));
    let written = entries(&env).get(ENTRY).await.unwrap();
    let (type_, state, description) = last_op(&written);
    assert_eq!((type_.as_str(), state.as_str()), ("Delete", "Pending"));
    assert!(
        description.starts_with("Deletion of backup entry is scheduled for "),
        "{description}"
    );
    let extensions_api = Api::<extensions::BackupEntry>::all(env.seed.clone());
    assert!(extensions_api.get_opt(ENTRY).await.unwrap().is_some());

    // The force-deletion annotation skips the grace: the extension is deleted.
    let force = json!({"metadata": {"annotations": {
        "backupentry.core.gardener.cloud/force-deletion": "true"}}});
    entries(&env)
        .patch(ENTRY, &PatchParams::default(), &Patch::Merge(&force))
        .await
        .unwrap();
    ctx.reconcile(core).await.unwrap();
    assert!(extensions_api.get_opt(ENTRY).await.unwrap().is_none());
    assert!(
        entries(&env).get_opt(ENTRY).await.unwrap().is_none(),
        "the entry is gone once its finalizer is removed"
    );
    env.shutdown().await;
}
