//! End-to-end tests of the agent's BackupBucket controller against in-process garden and seed
//! sandboxes; the test plays the extension controller by writing the extension objects' status
//! (spec `gardenlet-backup-bastion-seed.md` §1.7).

use seedlet_testkit as common;

use common::{Clusters, SEED, wait_for, wait_until};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::BackupBucket;
use seedlet_api::extensions;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use seedlet_testkit::backup as support;

use support::{
    TIMEOUT, annotation, bump, create_bucket, data_of, extension_reports, last_op_of,
    last_operation, put_secret, secret_ref,
};

const BUCKET: &str = "bucket-1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_bucket_is_deployed_reported_refreshed_and_deleted_in_order() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    let shutdown = CancellationToken::new();
    // Events about cluster-scoped objects go to `default`, which the garden sandbox lacks.
    common::ensure_namespace(&garden, "default").await;
    let agent = common::start_agent(&clusters, shutdown.clone()).await;
    put_secret(
        &garden,
        "garden",
        "creds",
        &[("key", "v1")],
        &["gardener.cloud/gardener"],
    )
    .await;
    create_bucket(&garden, BUCKET, SEED, secret_ref("creds")).await;

    // 1: finalizers, the seed copy with only the timestamp, the annotated extension object.
    let buckets: Api<BackupBucket> = Api::all(garden.clone());
    let extensions: Api<extensions::BackupBucket> = Api::all(seed.clone());
    let extension = wait_for("extension BackupBucket", TIMEOUT, || async {
        extensions.get_opt(BUCKET).await.unwrap()
    })
    .await;
    assert_eq!(
        annotation(&extension, "gardener.cloud/operation").as_deref(),
        Some("reconcile")
    );
    assert!(annotation(&extension, "gardener.cloud/timestamp").is_some());
    assert_eq!(
        annotation(
            &extension,
            "backupbucket.extensions.gardener.cloud/generated-secret-namespace"
        )
        .as_deref(),
        Some("garden")
    );
    let spec = serde_json::to_value(&extension.spec).unwrap();
    assert_eq!(
        spec,
        json!({"type": "local", "region": "local",
               "secretRef": {"name": "bucket-bucket-1", "namespace": "garden"}})
    );
    let core = buckets.get(BUCKET).await.unwrap();
    assert_eq!(core.finalizers(), ["gardener"]);
    let garden_secrets: Api<Secret> = Api::namespaced(garden.clone(), "garden");
    let credentials = garden_secrets.get("creds").await.unwrap();
    assert_eq!(
        credentials.finalizers(),
        ["core.gardener.cloud/backupbucket"]
    );
    let seed_secrets: Api<Secret> = Api::namespaced(seed.clone(), "garden");
    let copy = seed_secrets.get("bucket-bucket-1").await.unwrap();
    assert_eq!(
        copy.annotations().keys().collect::<Vec<_>>(),
        ["gardener.cloud/timestamp"]
    );
    assert!(copy.labels().is_empty());
    assert_eq!(data_of(&copy, "key").as_deref(), Some("v1"));
    let (type_, state, _, description) = last_op_of(&buckets, BUCKET).await.unwrap();
    assert_eq!(
        (type_.as_str(), state.as_str()),
        ("Create", "Processing"),
        "{description}"
    );

    // The extension succeeds with a generated secret and a provider status.
    put_secret(
        &seed,
        "garden",
        "generated-by-ext",
        &[("url", "s3://b")],
        &[],
    )
    .await;
    extension_reports(
        &extensions,
        BUCKET,
        json!({"lastOperation": last_operation("Create", "Succeeded"),
               "providerStatus": {"bucketName": "b-123"},
               "generatedSecretRef": {"name": "generated-by-ext", "namespace": "garden"}}),
    )
    .await;
    wait_until("core Create/Succeeded/100", TIMEOUT, || async {
        last_op_of(&buckets, BUCKET).await
            == Some((
                "Create".into(),
                "Succeeded".into(),
                100,
                "Backup Bucket has been successfully reconciled.".into(),
            ))
    })
    .await;
    let core = buckets.get(BUCKET).await.unwrap();
    let status = core.status.clone().unwrap();
    assert_eq!(status.provider_status, Some(json!({"bucketName": "b-123"})));
    assert_eq!(
        status
            .generated_secret_ref
            .as_ref()
            .map(|r| r.name.as_str()),
        Some("generated-bucket-bucket-1")
    );
    assert_eq!(status.last_error, None);
    let generated = garden_secrets
        .get("generated-bucket-bucket-1")
        .await
        .unwrap();
    assert_eq!(data_of(&generated, "url").as_deref(), Some("s3://b"));
    assert_eq!(generated.finalizers(), ["core.gardener.cloud/backupbucket"]);
    let owner = &generated.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("BackupBucket", BUCKET, Some(true))
    );
    assert_eq!(owner.uid, core.uid().unwrap());

    // 2: a credentials change re-stamps the copy and re-deploys although the spec is equal.
    let before = extensions.get(BUCKET).await.unwrap();
    let old_stamp = annotation(&before, "gardener.cloud/timestamp");
    put_secret(&garden, "garden", "creds", &[("key", "v2")], &[]).await;
    bump(&buckets, BUCKET, "2030-01-01T00:00:00Z").await;
    wait_until("credentials change re-deploys", TIMEOUT, || async {
        let object = extensions.get(BUCKET).await.unwrap();
        annotation(&object, "gardener.cloud/operation").as_deref() == Some("reconcile")
            && annotation(&object, "gardener.cloud/timestamp") != old_stamp
    })
    .await;
    let copy = seed_secrets.get("bucket-bucket-1").await.unwrap();
    assert_eq!(data_of(&copy, "key").as_deref(), Some("v2"));

    // 4: Failed with codes → Error/50 with the codes, and re-deployed in the same pass.
    let before = extensions.get(BUCKET).await.unwrap();
    let old_stamp = annotation(&before, "gardener.cloud/timestamp");
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    extension_reports(
        &extensions,
        BUCKET,
        json!({"lastOperation": last_operation("Reconcile", "Failed"),
               "lastError": {"description": "access denied", "codes": ["ERR_INFRA_UNAUTHORIZED"]}}),
    )
    .await;
    wait_until("core Error/50 with codes", TIMEOUT, || async {
        let core = buckets.get(BUCKET).await.unwrap();
        let status = core.status.unwrap_or_default();
        status.last_operation.as_ref().is_some_and(|op| {
            op.progress == 50 && op.description == "error during reconciliation: access denied"
        }) && status
            .last_error
            .is_some_and(|e| e.codes == ["ERR_INFRA_UNAUTHORIZED"])
    })
    .await;
    // The error is also a Warning Event on the bucket in the garden.
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::all(garden.clone());
    wait_until("ReconcileError event", TIMEOUT, || async {
        events
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .iter()
            .any(|event| {
                event.involved_object.name.as_deref() == Some(BUCKET)
                    && event.reason.as_deref() == Some("ReconcileError")
                    && event.type_.as_deref() == Some("Warning")
                    && event.message.as_deref()
                        == Some("error during reconciliation: access denied")
            })
    })
    .await;
    wait_until("failed extension re-deployed", TIMEOUT, || async {
        let object = extensions.get(BUCKET).await.unwrap();
        annotation(&object, "gardener.cloud/operation").as_deref() == Some("reconcile")
            && annotation(&object, "gardener.cloud/timestamp") != old_stamp
    })
    .await;

    // 8: deletion with a persistent extension error, then success.
    let hold = json!({"metadata": {"finalizers": ["test.seedlet/hold"]}});
    extensions
        .patch(BUCKET, &PatchParams::default(), &Patch::Merge(&hold))
        .await
        .unwrap();
    extension_reports(
        &extensions,
        BUCKET,
        json!({"lastOperation": last_operation("Delete", "Error"),
               "lastError": {"description": "bucket not empty"}}),
    )
    .await;
    buckets
        .delete(BUCKET, &DeleteParams::default())
        .await
        .unwrap();
    wait_until("deletion error reported", TIMEOUT, || async {
        last_op_of(&buckets, BUCKET)
            .await
            .is_some_and(|(t, s, _, d)| {
                t == "Delete" && s == "Error" && d == "bucket not empty Operation will be retried."
            })
    })
    .await;
    let object = extensions.get(BUCKET).await.unwrap();
    assert_eq!(
        annotation(&object, "confirmation.gardener.cloud/deletion").as_deref(),
        Some("true")
    );
    assert!(
        garden_secrets
            .get_opt("generated-bucket-bucket-1")
            .await
            .unwrap()
            .is_none()
    );
    let release = json!({"metadata": {"finalizers": null}});
    extensions
        .patch(BUCKET, &PatchParams::default(), &Patch::Merge(&release))
        .await
        .unwrap();
    wait_until("core bucket gone", TIMEOUT, || async {
        buckets.get_opt(BUCKET).await.unwrap().is_none()
    })
    .await;
    assert!(
        seed_secrets
            .get_opt("bucket-bucket-1")
            .await
            .unwrap()
            .is_none()
    );
    let credentials = garden_secrets.get("creds").await.unwrap();
    assert!(
        credentials.finalizers().is_empty(),
        "{:?}",
        credentials.finalizers()
    );

    shutdown.cancel();
    agent.wait().await.unwrap();
    clusters.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_bucket_bad_input_is_reported_and_other_seeds_are_left_alone() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    let shutdown = CancellationToken::new();
    let agent = common::start_agent(&clusters, shutdown.clone()).await;
    let buckets: Api<BackupBucket> = Api::all(garden.clone());
    let extensions: Api<extensions::BackupBucket> = Api::all(seed.clone());

    create_bucket(&garden, "missing", SEED, secret_ref("nope")).await;
    create_bucket(
        &garden,
        "workload",
        SEED,
        json!({"apiVersion": "security.gardener.cloud/v1alpha1", "kind": "WorkloadIdentity",
               "name": "wi", "namespace": "garden"}),
    )
    .await;
    create_bucket(
        &garden,
        "configmap",
        SEED,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "namespace": "garden"}),
    )
    .await;
    put_secret(&garden, "garden", "creds", &[("key", "v1")], &[]).await;
    create_bucket(&garden, "foreign", "other-seed", secret_ref("creds")).await;

    let error_of = |name: &'static str| {
        let buckets = buckets.clone();
        async move {
            buckets
                .get(name)
                .await
                .ok()?
                .status?
                .last_error
                .map(|e| e.description)
        }
    };
    let missing = wait_for("missing credentials reported", TIMEOUT, || {
        error_of("missing")
    })
    .await;
    assert!(missing.contains("garden/nope"), "{missing}");
    let workload = wait_for("missing WorkloadIdentity", TIMEOUT, || error_of("workload")).await;
    assert!(
        workload.contains("could not get credentials WorkloadIdentity garden/wi"),
        "{workload}"
    );
    let unsupported = wait_for("unsupported credentials", TIMEOUT, || error_of("configmap")).await;
    assert!(
        unsupported.contains("unsupported credentials reference: garden/cm, v1, Kind=ConfigMap"),
        "{unsupported}"
    );
    assert!(extensions.get_opt("missing").await.unwrap().is_none());

    // Fixing the input recovers on the next trigger.
    put_secret(&garden, "garden", "nope", &[("key", "v1")], &[]).await;
    bump(&buckets, "missing", "2030-01-01T00:00:00Z").await;
    wait_for("recovered bucket deployed", TIMEOUT, || async {
        extensions.get_opt("missing").await.unwrap()
    })
    .await;

    // 7: a generated secret that is missing in the seed: the core reference is written first.
    extension_reports(
        &extensions,
        "missing",
        json!({"lastOperation": last_operation("Create", "Succeeded"),
               "generatedSecretRef": {"name": "not-there", "namespace": "garden"}}),
    )
    .await;
    wait_until("generated reference written first", TIMEOUT, || async {
        buckets
            .get("missing")
            .await
            .unwrap()
            .status
            .and_then(|s| s.generated_secret_ref)
            .is_some_and(|r| r.name == "generated-bucket-missing")
    })
    .await;
    let (_, state, _, _) = last_op_of(&buckets, "missing").await.unwrap();
    assert_eq!(state, "Processing");

    // Another seed's bucket is not touched.
    let foreign = buckets.get("foreign").await.unwrap();
    assert!(foreign.finalizers().is_empty());
    assert!(foreign.status.is_none());
    assert!(extensions.get_opt("foreign").await.unwrap().is_none());

    shutdown.cancel();
    agent.wait().await.unwrap();
    clusters.shutdown().await;
}
