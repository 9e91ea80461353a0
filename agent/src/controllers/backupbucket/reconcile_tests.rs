//! Reconcile tests against in-process garden and seed sandboxes: [`reconcile`] is called directly
//! on real objects, the test plays the extension controller by writing the extension's status.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::BackupBucket;
use seedlet_api::extensions;
use serde_json::json;

use seedlet_runtime::clock::Clock;

use super::BackupBuckets;
use crate::testing::{Env, FIELD_MANAGER, SEED, create, last_operation, put_secret, secret_data};
use seedlet_runtime::controller::{Reason as _, Reconciler as _};

const BUCKET: &str = "bucket-1";

fn ctx(env: &Env) -> Arc<BackupBuckets> {
    Arc::new(BackupBuckets {
        clock: env.clock(),
        events: env.events(),
        field_manager: FIELD_MANAGER,
        concurrency: 1,
        seed: env.seed.clone(),
        seed_name: SEED.to_owned(),
        garden: env.garden.clone(),
    })
}

async fn bucket(env: &Env, seed: &str, credentials: serde_json::Value) -> Arc<BackupBucket> {
    Arc::new(
        create(
            &env.garden,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "BackupBucket",
                   "metadata": {"name": BUCKET},
                   "spec": {"provider": {"type": "local", "region": "eu"}, "seedName": seed,
                            "credentialsRef": credentials}}),
        )
        .await,
    )
}

fn secret_ref(name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Secret", "name": name, "namespace": "garden"})
}

async fn core(env: &Env) -> BackupBucket {
    Api::<BackupBucket>::all(env.garden.clone())
        .get(BUCKET)
        .await
        .unwrap()
}

fn last_op(bucket: &BackupBucket) -> (String, String, i32) {
    let op = bucket
        .status
        .as_ref()
        .and_then(|s| s.last_operation.clone())
        .expect("lastOperation");
    (
        format!("{:?}", op.type_),
        format!("{:?}", op.state),
        op.progress,
    )
}

#[tokio::test]
async fn reconcile_deploys_the_extension_and_reports_its_success_with_the_generated_secret() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    put_secret(
        &env.garden,
        "garden",
        "creds",
        &[("key", "v1")],
        &["gardener.cloud/gardener"],
    )
    .await;
    let core_bucket = bucket(&env, SEED, secret_ref("creds")).await;

    // Pass 1: finalizers, the seed copy of the credentials, the annotated extension object.
    ctx.clone().reconcile(core_bucket.clone()).await.unwrap();
    let written = core(&env).await;
    assert_eq!(written.finalizers(), ["gardener"]);
    assert_eq!(last_op(&written), ("Create".into(), "Processing".into(), 0));
    let credentials = Api::<Secret>::namespaced(env.garden.clone(), "garden")
        .get("creds")
        .await
        .unwrap();
    assert_eq!(
        credentials.finalizers(),
        ["core.gardener.cloud/backupbucket"],
        "the legacy finalizer is replaced"
    );
    let seed_secrets = Api::<Secret>::namespaced(env.seed.clone(), "garden");
    let copy = seed_secrets.get("bucket-bucket-1").await.unwrap();
    assert_eq!(secret_data(&copy, "key").as_deref(), Some("v1"));
    assert_eq!(
        copy.annotations()
            .get("gardener.cloud/timestamp")
            .map(String::as_str),
        Some("2025-01-01T00:00:00Z")
    );
    let extensions_api = Api::<extensions::BackupBucket>::all(env.seed.clone());
    let extension = extensions_api.get(BUCKET).await.unwrap();
    assert_eq!(
        serde_json::to_value(&extension.spec).unwrap(),
        json!({"type": "local", "region": "eu",
               "secretRef": {"name": "bucket-bucket-1", "namespace": "garden"}})
    );
    assert_eq!(
        extension
            .annotations()
            .get("gardener.cloud/operation")
            .map(String::as_str),
        Some("reconcile")
    );

    // The extension succeeds with a provider status and a generated secret.
    put_secret(&env.seed, "garden", "generated", &[("url", "s3://b")], &[]).await;
    let unannotate = json!({"metadata": {"annotations": {"gardener.cloud/operation": null}}});
    extensions_api
        .patch(BUCKET, &PatchParams::default(), &Patch::Merge(&unannotate))
        .await
        .unwrap();
    let status = json!({"status": {
        "lastOperation": last_operation("Create", "Succeeded", env.clock.now()),
        "providerStatus": {"bucketName": "b-123"},
        "generatedSecretRef": {"name": "generated", "namespace": "garden"}}});
    extensions_api
        .patch_status(BUCKET, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();

    // Pass 2: the core status follows, the generated secret is copied to the garden.
    ctx.reconcile(core_bucket).await.unwrap();
    let written = core(&env).await;
    assert_eq!(
        last_op(&written),
        ("Create".into(), "Succeeded".into(), 100)
    );
    let status = written.status.unwrap();
    assert_eq!(status.provider_status, Some(json!({"bucketName": "b-123"})));
    assert_eq!(status.last_error, None);
    assert_eq!(
        status.generated_secret_ref.map(|r| r.name),
        Some("generated-bucket-bucket-1".to_owned())
    );
    let generated = Api::<Secret>::namespaced(env.garden.clone(), "garden")
        .get("generated-bucket-bucket-1")
        .await
        .unwrap();
    assert_eq!(secret_data(&generated, "url").as_deref(), Some("s3://b"));
    assert_eq!(generated.finalizers(), ["core.gardener.cloud/backupbucket"]);
    let owner = &generated.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("BackupBucket", BUCKET, Some(true))
    );
    env.shutdown().await;
}

#[tokio::test]
async fn missing_credentials_fail_with_a_reason_and_an_error_status() {
    let env = Env::start().await;
    let core_bucket = bucket(&env, SEED, secret_ref("absent")).await;

    let error = ctx(&env).reconcile(core_bucket).await.unwrap_err();
    assert_eq!(error.reason(), "CredentialsError");
    let written = core(&env).await;
    assert_eq!(last_op(&written), ("Create".into(), "Error".into(), 50));
    let last_error = written.status.unwrap().last_error.expect("lastError");
    assert!(
        last_error.description.contains("garden/absent"),
        "{}",
        last_error.description
    );
    assert!(
        Api::<extensions::BackupBucket>::all(env.seed.clone())
            .get_opt(BUCKET)
            .await
            .unwrap()
            .is_none(),
        "no extension object without credentials"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn buckets_of_other_seeds_are_left_alone() {
    let env = Env::start().await;
    put_secret(&env.garden, "garden", "creds", &[("key", "v1")], &[]).await;
    let core_bucket = bucket(&env, "other", secret_ref("creds")).await;

    ctx(&env).reconcile(core_bucket).await.unwrap();
    let written = core(&env).await;
    assert!(written.finalizers().is_empty());
    assert!(written.status.is_none());
    assert!(
        Api::<Secret>::namespaced(env.seed.clone(), "garden")
            .get_opt("bucket-bucket-1")
            .await
            .unwrap()
            .is_none()
    );
    env.shutdown().await;
}

#[tokio::test]
async fn deletion_removes_the_extension_the_seed_secret_and_the_finalizers() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    put_secret(&env.garden, "garden", "creds", &[("key", "v1")], &[]).await;
    let core_bucket = bucket(&env, SEED, secret_ref("creds")).await;
    ctx.clone().reconcile(core_bucket.clone()).await.unwrap();
    let buckets = Api::<BackupBucket>::all(env.garden.clone());
    buckets
        .delete(BUCKET, &DeleteParams::default())
        .await
        .unwrap();

    ctx.reconcile(core_bucket).await.unwrap();
    assert!(
        Api::<extensions::BackupBucket>::all(env.seed.clone())
            .get_opt(BUCKET)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        Api::<Secret>::namespaced(env.seed.clone(), "garden")
            .get_opt("bucket-bucket-1")
            .await
            .unwrap()
            .is_none()
    );
    let credentials = Api::<Secret>::namespaced(env.garden.clone(), "garden")
        .get("creds")
        .await
        .unwrap();
    assert!(credentials.finalizers().is_empty());
    assert!(
        buckets.get_opt(BUCKET).await.unwrap().is_none(),
        "the bucket is gone once its finalizer is removed"
    );
    env.shutdown().await;
}
