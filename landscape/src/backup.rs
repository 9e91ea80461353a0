//! The demo's backups: the example Seed has `spec.backup` (provider `local`, credentials Secret
//! `garden/backup-local` naming a `hostPath` in the state directory), the agent's Seed controller
//! creates the core BackupBucket named after the Seed's UID, the agent deploys the extension
//! BackupBucket into the seed, the example extension's backup controller
//! ([`crate::backup_provider`], played by the demo) makes the bucket directory and reports back,
//! and the agent reports the bucket Succeeded in the garden with its generated Secret. For the
//! example Shoot the demo then creates the BackupEntry the shoot flow would create
//! (`<technical ID>--<Shoot UID>` in the project namespace) and follows it the same way.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{ObjectMeta, Patch, PatchParams};
use kube::runtime::wait::await_condition;
use kube::{Api, ResourceExt};
use seedlet_api::common::LastOperation;
use seedlet_api::core::{BackupBucket, BackupEntry, Seed, Shoot};
use seedlet_api::extensions;
use seedlet_api::names::{condition_types, namespaces};
use serde_json::json;

use crate::Error;
use crate::backup_provider::HOST_PATH_KEY;
use crate::progress::Progress;
use crate::shoot;

/// Name of the backup credentials Secret in the garden's `garden` namespace.
pub const CREDENTIALS_SECRET: &str = crate::files::BACKUP_CREDENTIALS_SECRET;
/// Directory of the buckets inside the state directory.
pub const BUCKETS_DIR: &str = "backupbuckets";
/// Field manager of the objects the demo writes.
const FIELD_MANAGER: &str = "seedlet-sandbox";

/// Writes the backup credentials Secret: provider-local's `hostPath`, here `host_path`.
///
/// # Errors
/// [`Error::Prepare`] when the garden refuses it.
pub async fn store_credentials(garden: &kube::Client, host_path: &Path) -> Result<String, Error> {
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(CREDENTIALS_SECRET.to_owned()),
            namespace: Some(namespaces::GARDEN.to_owned()),
            ..ObjectMeta::default()
        },
        string_data: Some(BTreeMap::from([(
            HOST_PATH_KEY.to_owned(),
            host_path.display().to_string(),
        )])),
        ..Secret::default()
    };
    let mut value = serde_json::to_value(secret).unwrap_or_default();
    value["apiVersion"] = json!("v1");
    value["kind"] = json!("Secret");
    Api::<Secret>::namespaced(garden.clone(), namespaces::GARDEN)
        .patch(
            CREDENTIALS_SECRET,
            &PatchParams::apply(FIELD_MANAGER),
            &Patch::Apply(&value),
        )
        .await
        .map_err(|source| Error::Prepare {
            step: format!("store Secret {}/{CREDENTIALS_SECRET}", namespaces::GARDEN),
            source,
        })?;
    Ok(format!(
        "backup credentials {}/{CREDENTIALS_SECRET}",
        namespaces::GARDEN
    ))
}

/// The Seed's UID: the name of its BackupBucket.
///
/// # Errors
/// [`Error::Prepare`] when the Seed cannot be read.
pub async fn bucket_name(garden: &kube::Client, seed_name: &str) -> Result<String, Error> {
    let seed = Api::<Seed>::all(garden.clone())
        .get(seed_name)
        .await
        .map_err(|source| Error::Prepare {
            step: format!("read Seed {seed_name}"),
            source,
        })?;
    Ok(seed.uid().unwrap_or_default())
}

/// The last operation of a status as `Type State`.
fn operation_text(operation: Option<&LastOperation>) -> String {
    operation
        .map(|op| {
            let (type_, state) = (json!(op.type_), json!(op.state));
            format!(
                "{} {}",
                type_.as_str().unwrap_or_default(),
                state.as_str().unwrap_or_default()
            )
        })
        .unwrap_or_else(|| "not reported".to_owned())
}

/// Waits until `name` (in `api`) satisfies `done`; on timeout the error says what `describe`
/// makes of the object as last seen.
pub(crate) async fn until<K>(
    api: Api<K>,
    name: &str,
    what: String,
    timeout: Duration,
    done: impl Fn(&K) -> bool + Send + 'static,
    describe: impl Fn(&K) -> String,
) -> Result<K, Error>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + 'static,
    K: kube::Resource<DynamicType = ()>,
{
    let waited = crate::wait::bounded(
        &what,
        timeout,
        await_condition(api.clone(), name, move |object: Option<&K>| {
            object.is_some_and(&done)
        }),
    )
    .await;
    match waited {
        Ok(Some(object)) => Ok(object),
        Ok(None) => Err(Error::timeout(what, timeout, "gone")),
        Err(error) => {
            let last = match api.get_opt(name).await {
                Ok(Some(object)) => describe(&object),
                Ok(None) => "not created".to_owned(),
                Err(read) => format!("cannot read: {read}"),
            };
            Err(match error {
                Error::Timeout { what, timeout, .. } => Error::timeout(what, timeout, last),
                other => other,
            })
        }
    }
}

/// Waits until the agent's Seed controller created the core BackupBucket `bucket`.
///
/// # Errors
/// [`Error::Timeout`].
pub async fn bucket_created(
    garden: &kube::Client,
    bucket: &str,
    timeout: Duration,
) -> Result<String, Error> {
    let created = until(
        Api::<BackupBucket>::all(garden.clone()),
        bucket,
        format!("BackupBucket {bucket} in the garden"),
        timeout,
        |_| true,
        |_| String::new(),
    )
    .await?;
    Ok(format!(
        "provider {}/{}, credentials {}",
        created.spec.provider.type_,
        created.spec.provider.region,
        created
            .spec
            .credentials_ref
            .as_ref()
            .map(|r| format!("{}/{}", r.namespace.as_deref().unwrap_or_default(), r.name))
            .unwrap_or_default()
    ))
}

/// Waits until the extension object `name` of kind `K` in the seed reports Succeeded; returns its
/// description.
///
/// # Errors
/// [`Error::Timeout`] with its last operation as last seen.
pub async fn extension_succeeded<K>(
    seed: &kube::Client,
    name: &str,
    timeout: Duration,
) -> Result<String, Error>
where
    K: extensions::ExtensionObject,
{
    let last = |object: &K| {
        object
            .extension_status()
            .and_then(|status| status.last_operation.clone())
    };
    let object = until(
        Api::<K>::all(seed.clone()),
        name,
        format!("extension {} {name} Succeeded", K::kind(&())),
        timeout,
        move |object: &K| last(object).is_some_and(|op| op.succeeded()),
        move |object: &K| operation_text(last(object).as_ref()),
    )
    .await?;
    Ok(last(&object).map(|op| op.description).unwrap_or_default())
}

/// Waits until the core BackupBucket `bucket` is Succeeded and its generated Secret is in the
/// garden; returns both.
///
/// # Errors
/// [`Error::Timeout`] with the bucket's last operation as last seen.
pub async fn bucket_succeeded(
    garden: &kube::Client,
    bucket: &str,
    timeout: Duration,
) -> Result<String, Error> {
    let status = |b: &BackupBucket| b.status.clone().unwrap_or_default();
    let core = until(
        Api::<BackupBucket>::all(garden.clone()),
        bucket,
        format!("BackupBucket {bucket} Succeeded with its generated Secret"),
        timeout,
        move |b: &BackupBucket| {
            let status = status(b);
            status.generated_secret_ref.is_some()
                && status
                    .last_operation
                    .as_ref()
                    .is_some_and(LastOperation::succeeded)
        },
        move |b: &BackupBucket| operation_text(status(b).last_operation.as_ref()),
    )
    .await?;
    let reference = core
        .status
        .and_then(|s| s.generated_secret_ref)
        .unwrap_or_default();
    let namespace = reference.namespace.unwrap_or_default();
    let secrets: Api<Secret> = Api::namespaced(garden.clone(), &namespace);
    until(
        secrets,
        &reference.name,
        format!(
            "generated Secret {namespace}/{} in the garden",
            reference.name
        ),
        timeout,
        |_| true,
        |_| String::new(),
    )
    .await?;
    Ok(format!("generated Secret {namespace}/{}", reference.name))
}

/// Name of the example Shoot's BackupEntry: `<technical ID>--<Shoot UID>`, as the shoot flow
/// names it.
pub fn entry_name(shoot_uid: &str) -> String {
    format!("{}--{shoot_uid}", shoot::control_plane_namespace())
}

/// Creates (server-side apply) the example Shoot's BackupEntry in bucket `bucket`, owned by the
/// Shoot, as the shoot flow does; returns its name.
///
/// # Errors
/// [`Error::Prepare`] when the Shoot cannot be read or the entry is refused.
pub async fn create_entry(
    garden: &kube::Client,
    seed_name: &str,
    bucket: &str,
) -> Result<String, Error> {
    let namespace = shoot::project_namespace();
    let example = Api::<Shoot>::namespaced(garden.clone(), &namespace)
        .get(shoot::SHOOT)
        .await
        .map_err(|source| Error::Prepare {
            step: format!("read Shoot {namespace}/{}", shoot::SHOOT),
            source,
        })?;
    let uid = example.uid().unwrap_or_default();
    let name = entry_name(&uid);
    let entry = json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "BackupEntry",
        "metadata": {"name": name, "namespace": namespace,
            "ownerReferences": [{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
                "name": shoot::SHOOT, "uid": uid, "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"bucketName": bucket, "seedName": seed_name},
    });
    // The agent's Shoot flow creates this entry too (task "Deploying BackupEntry for ETCD
    // data"); forcing takes over its ownerReferences so the demo's apply does not conflict.
    Api::<BackupEntry>::namespaced(garden.clone(), &namespace)
        .patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&entry),
        )
        .await
        .map_err(|source| Error::Prepare {
            step: format!("apply BackupEntry {namespace}/{name}"),
            source,
        })?;
    Ok(name)
}

/// Waits until the core BackupEntry `name` in the example project is Succeeded.
///
/// # Errors
/// [`Error::Timeout`] with its last operation as last seen.
pub async fn entry_succeeded(
    garden: &kube::Client,
    name: &str,
    timeout: Duration,
) -> Result<String, Error> {
    let namespace = shoot::project_namespace();
    let last = |e: &BackupEntry| e.status.as_ref().and_then(|s| s.last_operation.clone());
    let entry = until(
        Api::<BackupEntry>::namespaced(garden.clone(), &namespace),
        name,
        format!("BackupEntry {namespace}/{name} Succeeded"),
        timeout,
        move |e: &BackupEntry| last(e).is_some_and(|op| op.succeeded()),
        move |e: &BackupEntry| operation_text(last(e).as_ref()),
    )
    .await?;
    Ok(last(&entry).map(|op| op.description).unwrap_or_default())
}

/// Waits until the Seed's `BackupBucketsReady` (the garden's backup buckets check) is True.
///
/// # Errors
/// [`Error::Timeout`] with the condition as last seen.
pub async fn buckets_ready(
    garden: &kube::Client,
    seed_name: &str,
    timeout: Duration,
) -> Result<String, Error> {
    let condition = |seed: &Seed| {
        seedlet_api::conditions::find(seed.conditions(), condition_types::BACKUP_BUCKETS_READY)
            .cloned()
    };
    let seed = until(
        Api::<Seed>::all(garden.clone()),
        seed_name,
        format!("Seed {seed_name} condition BackupBucketsReady True"),
        timeout,
        move |seed: &Seed| condition(seed).is_some_and(|c| c.is_true()),
        move |seed: &Seed| {
            condition(seed)
                .map(|c| format!("{} {}: {}", c.status, c.reason, c.message))
                .unwrap_or_else(|| "no BackupBucketsReady condition".to_owned())
        },
    )
    .await?;
    Ok(condition(&seed).map(|c| c.reason).unwrap_or_default())
}

/// The bucket stage: the agent creates the Seed's BackupBucket and its extension object, the
/// example extension reconciles it, the agent reports it Succeeded and the garden's check turns
/// `BackupBucketsReady` True. Returns the bucket's name.
///
/// # Errors
/// The first step that fails.
pub(crate) async fn bucket_stage(
    garden: &kube::Client,
    seed: &kube::Client,
    progress: &mut Progress,
    timeout: Duration,
) -> Result<String, Error> {
    let seed_name = crate::SEED_NAME;
    let bucket = bucket_name(garden, seed_name).await?;
    progress
        .step(
            &format!("agent creates BackupBucket {bucket} for the Seed's spec.backup"),
            detail(bucket_created(garden, &bucket, timeout)),
        )
        .await?;
    progress
        .step(
            &format!("example extension reconciles extension BackupBucket {bucket} in the seed"),
            detail(extension_succeeded::<extensions::BackupBucket>(
                seed, &bucket, timeout,
            )),
        )
        .await?;
    progress
        .step(
            &format!("agent reports BackupBucket {bucket} Succeeded in the garden"),
            detail(bucket_succeeded(garden, &bucket, timeout)),
        )
        .await?;
    progress
        .step(
            "Seed condition BackupBucketsReady True",
            detail(buckets_ready(garden, seed_name, timeout)),
        )
        .await?;
    Ok(bucket)
}

/// The entry stage: the demo creates the example Shoot's BackupEntry in `bucket` (the shoot flow's
/// part), the example extension reconciles its extension object, the agent reports it Succeeded.
///
/// # Errors
/// The first step that fails.
pub(crate) async fn entry_stage(
    garden: &kube::Client,
    seed: &kube::Client,
    progress: &mut Progress,
    timeout: Duration,
    bucket: &str,
) -> Result<(), Error> {
    let namespace = shoot::project_namespace();
    let entry = progress
        .step(
            &format!("create the Shoot's BackupEntry in {namespace} (the shoot flow's part)"),
            async {
                let name = create_entry(garden, crate::SEED_NAME, bucket).await?;
                Ok((name.clone(), name))
            },
        )
        .await?;
    progress
        .step(
            "example extension reconciles the extension BackupEntry in the seed",
            detail(extension_succeeded::<extensions::BackupEntry>(
                seed, &entry, timeout,
            )),
        )
        .await?;
    progress
        .step(
            "agent reports the BackupEntry Succeeded in the garden",
            detail(entry_succeeded(garden, &entry, timeout)),
        )
        .await?;
    Ok(())
}

/// A wait that yields only a detail line, as a progress step without a value.
pub(crate) async fn detail(
    wait: impl Future<Output = Result<String, Error>>,
) -> Result<((), String), Error> {
    wait.await.map(|detail| ((), detail))
}

/// The summary lines of the demo's backups: the Seed's bucket and the example Shoot's entry as
/// the garden reports them, or why not.
pub fn summary_lines(
    bucket: Result<Option<&BackupBucket>, String>,
    entries: Result<Vec<&BackupEntry>, String>,
) -> Vec<String> {
    let mut lines = Vec::new();
    match bucket {
        Ok(Some(bucket)) => {
            let status = bucket.status.clone().unwrap_or_default();
            lines.push(format!(
                "BackupBucket {} (garden): {}",
                bucket.name_any(),
                operation_text(status.last_operation.as_ref())
            ));
            if let Some(error) = status.last_error {
                lines.push(format!("  last error: {}", error.description));
            }
            if let Some(generated) = status.generated_secret_ref {
                lines.push(format!(
                    "  generated Secret {}/{} (garden)",
                    generated.namespace.unwrap_or_default(),
                    generated.name
                ));
            }
        }
        Ok(None) => lines.push("no BackupBucket for spec.backup yet".to_owned()),
        Err(error) => lines.push(format!("cannot read the BackupBucket: {error}")),
    }
    match entries {
        Ok(entries) => {
            for entry in entries {
                let status = entry.status.clone().unwrap_or_default();
                lines.push(format!(
                    "BackupEntry {}/{} (garden): {}",
                    entry.namespace().unwrap_or_default(),
                    entry.name_any(),
                    operation_text(status.last_operation.as_ref())
                ));
                if let Some(error) = status.last_error {
                    lines.push(format!("  last error: {}", error.description));
                }
            }
        }
        Err(error) => lines.push(format!("cannot list BackupEntries: {error}")),
    }
    lines
}

/// Reads the Seed's bucket and the entries in it, and returns [`summary_lines`].
pub async fn summary(garden: &kube::Client, seed_name: &str) -> Vec<String> {
    let bucket_name = match bucket_name(garden, seed_name).await {
        Ok(name) => name,
        Err(error) => return vec![format!("cannot read Seed {seed_name}: {error}")],
    };
    let bucket = Api::<BackupBucket>::all(garden.clone())
        .get_opt(&bucket_name)
        .await
        .map_err(|e| e.to_string());
    let entries = Api::<BackupEntry>::all(garden.clone())
        .list(&Default::default())
        .await
        .map_err(|e| e.to_string());
    let entries_in_bucket = entries.as_ref().map(|list| {
        list.items
            .iter()
            .filter(|entry| entry.spec.bucket_name == bucket_name)
            .collect::<Vec<_>>()
    });
    summary_lines(
        bucket.as_ref().map(Option::as_ref).map_err(Clone::clone),
        entries_in_bucket.map_err(Clone::clone),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_names_state_generated_secret_and_errors() {
        let bucket: BackupBucket = serde_json::from_value(json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "BackupBucket",
            "metadata": {"name": "uid-1"},
            "spec": {"provider": {"type": "local", "region": "local"}},
            "status": {
                "lastOperation": {"type": "Create", "state": "Succeeded", "progress": 100,
                    "description": "ok", "lastUpdateTime": "2026-01-01T00:00:00Z"},
                "generatedSecretRef": {"name": "generated-bucket-uid-1", "namespace": "garden"}},
        }))
        .expect("bucket");
        let entry: BackupEntry = serde_json::from_value(json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "BackupEntry",
            "metadata": {"name": "shoot--demo--hello--u", "namespace": "garden-demo"},
            "spec": {"bucketName": "uid-1"},
            "status": {
                "lastOperation": {"type": "Create", "state": "Error", "progress": 50,
                    "description": "x", "lastUpdateTime": "2026-01-01T00:00:00Z"},
                "lastError": {"description": "bucket not ready"}},
        }))
        .expect("entry");
        assert_eq!(
            summary_lines(Ok(Some(&bucket)), Ok(vec![&entry])),
            [
                "BackupBucket uid-1 (garden): Create Succeeded",
                "  generated Secret garden/generated-bucket-uid-1 (garden)",
                "BackupEntry garden-demo/shoot--demo--hello--u (garden): Create Error",
                "  last error: bucket not ready",
            ]
        );
        assert_eq!(
            summary_lines(Ok(None), Err("denied".into())),
            [
                "no BackupBucket for spec.backup yet",
                "cannot list BackupEntries: denied"
            ]
        );
    }
}
