//! Helpers of the backup end-to-end tests: garden/seed objects, playing the extension
//! controller by writing extension statuses, and reading core statuses.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Resource};
use seedlet_api::core::BackupBucket;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

pub const TIMEOUT: Duration = Duration::from_secs(20);

/// Creates or replaces `namespace/name` Secret with `data` (plain strings) and `finalizers`.
pub async fn put_secret(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    data: &[(&str, &str)],
    finalizers: &[&str],
) {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let string_data: serde_json::Map<String, Value> = data
        .iter()
        .map(|(k, v)| ((*k).to_owned(), json!(v)))
        .collect();
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": namespace, "finalizers": finalizers},
        "stringData": string_data,
    }))
    .expect("test setup");
    match api.get_opt(name).await.expect("test setup") {
        None => {
            api.create(&PostParams::default(), &secret)
                .await
                .expect("test setup");
        }
        Some(_) => {
            let patch = json!({"stringData": string_data});
            api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .expect("test setup");
        }
    }
}

/// The string value of `key` in a Secret's data.
pub fn data_of(secret: &Secret, key: &str) -> Option<String> {
    secret
        .data
        .as_ref()?
        .get(key)
        .map(|v| String::from_utf8_lossy(&v.0).into_owned())
}

/// Creates core BackupBucket `name` of seed `seed` with credentials `garden/<credentials>` (or a raw
/// `credentialsRef`).
pub async fn create_bucket(garden: &kube::Client, name: &str, seed: &str, credentials: Value) {
    let bucket: BackupBucket = serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "BackupBucket",
        "metadata": {"name": name},
        "spec": {"provider": {"type": "local", "region": "local"}, "seedName": seed,
                 "credentialsRef": credentials},
    }))
    .expect("test setup");
    Api::<BackupBucket>::all(garden.clone())
        .create(&PostParams::default(), &bucket)
        .await
        .expect("test setup");
}

/// A `credentialsRef` to `garden/<name>`.
pub fn secret_ref(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret", "name": name, "namespace": "garden"})
}

/// Sets the `gardener.cloud/timestamp` annotation on a core object (what the Seed controller's
/// per-sync patch does), which re-triggers the agent.
pub async fn bump<K>(api: &Api<K>, name: &str, stamp: &str)
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let patch = json!({"metadata": {"annotations": {
        "gardener.cloud/operation": "reconcile", "gardener.cloud/timestamp": stamp}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("test setup");
}

/// A `lastOperation` JSON stamped now.
pub fn last_operation(type_: &str, state: &str) -> Value {
    json!({"type": type_, "state": state, "progress": 100, "description": "by test",
           "lastUpdateTime": jiff::Timestamp::now().to_string()})
}

/// Plays the extension: removes the operation annotation and merges `status` into the object.
pub async fn extension_reports<K>(api: &Api<K>, name: &str, status: Value)
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let unannotate = json!({"metadata": {"annotations": {"gardener.cloud/operation": null}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&unannotate))
        .await
        .expect("test setup");
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(&json!({ "status": status })),
    )
    .await
    .expect("test setup");
}

/// `(type, state, progress, description)` of an object's status.lastOperation, as JSON.
pub async fn last_op_of<K>(api: &Api<K>, name: &str) -> Option<(String, String, i64, String)>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug + serde::Serialize,
{
    let object = api.get_opt(name).await.ok()??;
    let value = serde_json::to_value(&object).ok()?;
    let op = value.get("status")?.get("lastOperation")?;
    Some((
        op["type"].as_str()?.to_owned(),
        op["state"].as_str()?.to_owned(),
        op["progress"].as_i64()?,
        op["description"].as_str()?.to_owned(),
    ))
}

/// The annotation `key` of an object.
pub fn annotation<K: Resource>(object: &K, key: &str) -> Option<String> {
    object.meta().annotations.as_ref()?.get(key).cloned()
}

/// Creates credentials and core BackupBucket `name` of seed `local` and plays its extension until
/// the core bucket is Succeeded (with a generated secret when `generated` is given).
pub async fn healthy_bucket(
    garden: &kube::Client,
    seed: &kube::Client,
    name: &str,
    generated: Option<&str>,
    provider_status: Value,
) {
    put_secret(garden, "garden", "creds", &[("key", "original")], &[]).await;
    create_bucket(garden, name, "local", secret_ref("creds")).await;
    let extensions: Api<seedlet_api::extensions::BackupBucket> = Api::all(seed.clone());
    crate::wait_for("extension bucket", TIMEOUT, || async {
        extensions.get_opt(name).await.ok().flatten()
    })
    .await;
    let mut status = json!({"lastOperation": last_operation("Create", "Succeeded"),
                            "providerStatus": provider_status});
    if let Some(data) = generated {
        put_secret(seed, "garden", "generated-by-ext", &[("key", data)], &[]).await;
        status["generatedSecretRef"] = json!({"name": "generated-by-ext", "namespace": "garden"});
    }
    extension_reports(&extensions, name, status).await;
    let buckets: Api<BackupBucket> = Api::all(garden.clone());
    crate::wait_until("core bucket Succeeded", TIMEOUT, || async {
        last_op_of(&buckets, name)
            .await
            .is_some_and(|(_, state, _, _)| state == "Succeeded")
    })
    .await;
}

/// Creates core BackupEntry `namespace/name` in `bucket` on `seed`, owned by Shoot `shoot`, with
/// the extra `annotations`.
pub async fn create_entry(
    garden: &kube::Client,
    namespace: &str,
    name: &str,
    bucket: &str,
    seed: &str,
    annotations: Value,
) {
    // The owning Shoot must exist, or the garden's garbage collector deletes the entry.
    let shoots: Api<seedlet_api::core::Shoot> = Api::namespaced(garden.clone(), namespace);
    let shoot = match shoots.get_opt("s").await.expect("get shoot") {
        Some(shoot) => shoot,
        None => {
            let shoot: seedlet_api::core::Shoot = serde_json::from_value(json!({
                "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
                "metadata": {"name": "s", "namespace": namespace},
                "spec": {"region": "local", "provider": {"type": "local", "workers": []}},
            }))
            .expect("shoot");
            shoots
                .create(&PostParams::default(), &shoot)
                .await
                .expect("create shoot")
        }
    };
    let entry: seedlet_api::core::BackupEntry = serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "BackupEntry",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations,
            "ownerReferences": [{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
                "name": "s", "uid": shoot.metadata.uid, "controller": true,
                "blockOwnerDeletion": false}]},
        "spec": {"bucketName": bucket, "seedName": seed},
    }))
    .expect("entry");
    Api::<seedlet_api::core::BackupEntry>::namespaced(garden.clone(), namespace)
        .create(&PostParams::default(), &entry)
        .await
        .expect("create entry");
}
