//! End-to-end: BackupBuckets and BackupEntries whose `credentialsRef` names a
//! `security.gardener.cloud/v1alpha1` WorkloadIdentity (spec `gardenlet-backup-bastion-seed.md`
//! §1.4). The test plays the extension controller and the seed's token requestor (which writes
//! `token` into the seed copy).

use seedlet_testkit as common;

use common::{Clusters, SEED, wait_for, wait_until};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{BackupBucket, BackupEntry};
use seedlet_api::extensions;
use seedlet_api::security::WorkloadIdentity;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use seedlet_testkit::backup as support;

use support::{
    TIMEOUT, annotation, bump, create_bucket, create_entry, data_of, extension_reports, last_op_of,
    last_operation,
};

const BUCKET: &str = "wi-bucket";
const NAMESPACE: &str = "garden-p";
const ENTRY: &str = "shoot--p--s--wi";

/// Creates the WorkloadIdentity `garden/wi` with `providerConfig`.
async fn create_identity(garden: &kube::Client, provider_config: Value) {
    let identity: WorkloadIdentity = serde_json::from_value(json!({
        "apiVersion": "security.gardener.cloud/v1alpha1", "kind": "WorkloadIdentity",
        "metadata": {"name": "wi", "namespace": "garden"},
        "spec": {"audiences": ["gardener"],
                 "targetSystem": {"type": "local", "providerConfig": provider_config}},
    }))
    .expect("test setup");
    Api::<WorkloadIdentity>::namespaced(garden.clone(), "garden")
        .create(&PostParams::default(), &identity)
        .await
        .expect("test setup");
}

fn identity_ref() -> Value {
    json!({"apiVersion": "security.gardener.cloud/v1alpha1", "kind": "WorkloadIdentity",
           "name": "wi", "namespace": "garden"})
}

/// The `context-object` annotation of a seed secret, parsed.
fn context_object(secret: &Secret) -> Value {
    let text = annotation(
        secret,
        "workloadidentity.security.gardener.cloud/context-object",
    )
    .expect("context-object annotation");
    serde_json::from_str(&text).expect("context-object is JSON")
}

/// The seed copy of the bucket's WorkloadIdentity credentials: the token requestor's labels, the
/// identity's name and namespace, the bucket as context object, a timestamp, and only `config`.
fn assert_token_requestor_secret(copy: &Secret, bucket_uid: &str) {
    assert_eq!(copy.type_.as_deref(), Some("Opaque"));
    assert_eq!(
        copy.labels()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>(),
        [
            "security.gardener.cloud/purpose=workload-identity-token-requestor",
            "workloadidentity.security.gardener.cloud/provider=local",
        ]
    );
    assert_eq!(
        annotation(copy, "workloadidentity.security.gardener.cloud/name").as_deref(),
        Some("wi")
    );
    assert_eq!(
        annotation(copy, "workloadidentity.security.gardener.cloud/namespace").as_deref(),
        Some("garden")
    );
    assert_eq!(
        context_object(copy),
        json!({"kind": "BackupBucket", "apiVersion": "core.gardener.cloud/v1beta1",
               "name": BUCKET, "uid": bucket_uid})
    );
    assert!(annotation(copy, "gardener.cloud/timestamp").is_some());
    assert_eq!(
        copy.data
            .as_ref()
            .map(|d| d.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["config".to_owned()])
    );
    assert_eq!(
        data_of(copy, "config").as_deref(),
        Some(r#"{"bucketRegion":"r1"}"#)
    );
}

/// Creates a BackupEntry in the bucket and checks its seed copy: the same identity and config,
/// the entry (with its namespace) as context object.
async fn entry_copy_has_its_own_context(garden: &kube::Client, seed_secrets: &Api<Secret>) {
    create_entry(garden, NAMESPACE, ENTRY, BUCKET, SEED, json!({})).await;
    let entry_copy = wait_for("entry seed secret", TIMEOUT, || async {
        seed_secrets
            .get_opt(&format!("entry-{ENTRY}"))
            .await
            .expect("read entry copy")
    })
    .await;
    let entry_uid = Api::<BackupEntry>::namespaced(garden.clone(), NAMESPACE)
        .get(ENTRY)
        .await
        .expect("read entry")
        .uid()
        .expect("uid");
    assert_eq!(
        context_object(&entry_copy),
        json!({"kind": "BackupEntry", "apiVersion": "core.gardener.cloud/v1beta1",
               "name": ENTRY, "namespace": NAMESPACE, "uid": entry_uid})
    );
    assert_eq!(
        data_of(&entry_copy, "config").as_deref(),
        Some(r#"{"bucketRegion":"r2"}"#)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workload_identity_credentials_reach_the_seed_for_the_token_requestor() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    common::ensure_namespace(&garden, "default").await;
    common::ensure_namespace(&garden, NAMESPACE).await;
    let shutdown = CancellationToken::new();
    let agent = common::start_agent(&clusters, shutdown.clone()).await;
    let buckets: Api<BackupBucket> = Api::all(garden.clone());
    let extensions: Api<extensions::BackupBucket> = Api::all(seed.clone());
    let identities: Api<WorkloadIdentity> = Api::namespaced(garden.clone(), "garden");
    let seed_secrets: Api<Secret> = Api::namespaced(seed.clone(), "garden");

    create_identity(&garden, json!({"bucketRegion": "r1"})).await;
    create_bucket(&garden, BUCKET, SEED, identity_ref()).await;

    // The seed copy is the token requestor's Secret for the identity and this bucket.
    let extension = wait_for("extension BackupBucket", TIMEOUT, || async {
        extensions.get_opt(BUCKET).await.unwrap()
    })
    .await;
    assert_eq!(
        annotation(&extension, "gardener.cloud/operation").as_deref(),
        Some("reconcile")
    );
    let copy = seed_secrets.get("bucket-wi-bucket").await.unwrap();
    let bucket_uid = buckets.get(BUCKET).await.unwrap().uid().unwrap();
    assert_token_requestor_secret(&copy, &bucket_uid);
    let identity = identities.get("wi").await.unwrap();
    assert_eq!(identity.finalizers(), ["core.gardener.cloud/backupbucket"]);

    // The extension succeeds; the token requestor writes the token.
    extension_reports(
        &extensions,
        BUCKET,
        json!({"lastOperation": last_operation("Create", "Succeeded")}),
    )
    .await;
    wait_until("core bucket Create/Succeeded", TIMEOUT, || async {
        last_op_of(&buckets, BUCKET)
            .await
            .is_some_and(|(type_, state, _, _)| type_ == "Create" && state == "Succeeded")
    })
    .await;
    let token = json!({
        "metadata": {"annotations": {
            "workloadidentity.security.gardener.cloud/token-renew-timestamp": "2030-01-01T00:00:00Z"}},
        "stringData": {"token": "jwt-1"},
    });
    seed_secrets
        .patch(
            "bucket-wi-bucket",
            &PatchParams::default(),
            &Patch::Merge(&token),
        )
        .await
        .unwrap();
    let stamped = annotation(
        &seed_secrets.get("bucket-wi-bucket").await.unwrap(),
        "gardener.cloud/timestamp",
    );

    // A reconcile keeps the token and does not count it as a change: no re-deploy.
    bump(&buckets, BUCKET, "2030-01-01T00:00:01Z").await;
    wait_until("core bucket Reconcile/Succeeded", TIMEOUT, || async {
        last_op_of(&buckets, BUCKET)
            .await
            .is_some_and(|(type_, state, _, _)| type_ == "Reconcile" && state == "Succeeded")
    })
    .await;
    let kept = seed_secrets.get("bucket-wi-bucket").await.unwrap();
    assert_eq!(data_of(&kept, "token").as_deref(), Some("jwt-1"));
    assert_eq!(annotation(&kept, "gardener.cloud/timestamp"), stamped);
    assert_eq!(
        annotation(
            &kept,
            "workloadidentity.security.gardener.cloud/token-renew-timestamp"
        )
        .as_deref(),
        Some("2030-01-01T00:00:00Z")
    );
    let extension = extensions.get(BUCKET).await.unwrap();
    assert_eq!(annotation(&extension, "gardener.cloud/operation"), None);

    // A changed provider config is new content: rewritten (token kept) and re-deployed.
    identities
        .patch(
            "wi",
            &PatchParams::default(),
            &Patch::Merge(
                &json!({"spec": {"targetSystem": {"providerConfig": {"bucketRegion": "r2"}}}}),
            ),
        )
        .await
        .unwrap();
    bump(&buckets, BUCKET, "2030-01-01T00:00:02Z").await;
    wait_for("extension re-annotated", TIMEOUT, || async {
        let extension = extensions.get(BUCKET).await.ok()?;
        (annotation(&extension, "gardener.cloud/operation").as_deref() == Some("reconcile"))
            .then_some(())
    })
    .await;
    let rewritten = seed_secrets.get("bucket-wi-bucket").await.unwrap();
    assert_eq!(
        data_of(&rewritten, "config").as_deref(),
        Some(r#"{"bucketRegion":"r2"}"#)
    );
    assert_eq!(data_of(&rewritten, "token").as_deref(), Some("jwt-1"));
    assert_ne!(annotation(&rewritten, "gardener.cloud/timestamp"), stamped);
    extension_reports(
        &extensions,
        BUCKET,
        json!({"lastOperation": last_operation("Reconcile", "Succeeded")}),
    )
    .await;

    // A BackupEntry in the bucket (no generated secret) uses the identity too, in its own context.
    entry_copy_has_its_own_context(&garden, &seed_secrets).await;

    // Deleting the bucket releases the identity.
    buckets
        .delete(BUCKET, &DeleteParams::default())
        .await
        .unwrap();
    wait_until("bucket gone", TIMEOUT, || async {
        buckets.get_opt(BUCKET).await.unwrap().is_none()
    })
    .await;
    let released = identities.get("wi").await.unwrap();
    assert!(
        released.finalizers().is_empty(),
        "{:?}",
        released.finalizers()
    );

    shutdown.cancel();
    agent.wait().await.unwrap();
    clusters.shutdown().await;
}
