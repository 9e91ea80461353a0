//! The demo's stand-in for the example extension's backup controllers (provider `local`): the
//! sandboxes run no pods, so the Deployment the example chart renders never starts, and this
//! controller, run by `seedlet sandbox` on a runtime of its own (logging to `DIR/extension.log`),
//! does what provider-local does for the seed's extension `BackupBucket`s and `BackupEntry`s.
//!
//! A bucket is a directory: the credentials Secret the agent copies into the seed
//! (`garden/bucket-<name>`) names a `hostPath`, the bucket is `<hostPath>/<bucket>` and an entry is
//! `<hostPath>/<bucketName>/<entry>` (provider-local's layout). On `gardener.cloud/operation`
//! (`reconcile`, `migrate`, `restore`), a missing `lastOperation` or a new generation, it creates
//! the directory, writes the bucket's generated Secret (`generated-bucket-<name>` in the namespace
//! the agent names in `backupbucket.extensions.gardener.cloud/generated-secret-namespace`, holding
//! `hostPath` and `bucketName` for the entries), removes the operation annotation and reports
//! `lastOperation` Succeeded (or Error with a `lastError` naming the problem). Deletion removes the
//! directory and the generated Secret, then its finalizer. Objects of other provider types are
//! not its business.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::common::LastOperationType;
use seedlet_api::extensions::{self, ExtensionObject};
use seedlet_api::names::{annotations, namespaces};
use seedlet_runtime::watch::{RunWith, Runner};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Controller name (logs).
pub const NAME: &str = "example-backup-local";
/// The provider type served (the example registration's `BackupBucket/local`, `BackupEntry/local`).
pub const PROVIDER_TYPE: &str = "local";
/// Key of the bucket directory's parent in the credentials Secret (provider-local's key).
pub const HOST_PATH_KEY: &str = "hostPath";
/// Key of the bucket name in the generated Secret.
pub const BUCKET_NAME_KEY: &str = "bucketName";
/// Annotation the agent sets on an extension BackupBucket: where the generated Secret goes.
const GENERATED_SECRET_NAMESPACE: &str =
    "backupbucket.extensions.gardener.cloud/generated-secret-namespace";
/// Field manager of the controller's writes.
const FIELD_MANAGER: &str = "seedlet-sandbox-example-extension";
/// Retry pace after a failed step.
const RETRY: Duration = Duration::from_secs(2);

/// What one backup kind adds to the shared reconcile.
pub trait BackupKind: ExtensionObject {
    /// The kind's finalizer.
    const FINALIZER: &'static str;
    /// The object's directory below `host_path`, or why there is none.
    fn directory(&self, host_path: &Path) -> Result<PathBuf, String>;
    /// Whether it writes a generated Secret.
    const GENERATES_SECRET: bool;
}

impl BackupKind for extensions::BackupBucket {
    const FINALIZER: &'static str = "extensions.gardener.cloud/backupbucket";
    const GENERATES_SECRET: bool = true;

    fn directory(&self, host_path: &Path) -> Result<PathBuf, String> {
        Ok(host_path.join(component("metadata.name", &self.name_any())?))
    }
}

impl BackupKind for extensions::BackupEntry {
    const FINALIZER: &'static str = "extensions.gardener.cloud/backupentry";
    const GENERATES_SECRET: bool = false;

    fn directory(&self, host_path: &Path) -> Result<PathBuf, String> {
        let bucket = text(self.spec_extra().get("bucketName"));
        Ok(host_path
            .join(component("spec.bucketName", bucket)?)
            .join(component("metadata.name", &self.name_any())?))
    }
}

/// `value` as one path component: not empty, no `/`, not `.` or `..`.
fn component<'a>(field: &str, value: &'a str) -> Result<&'a str, String> {
    if value.is_empty() || value.contains('/') || value == "." || value == ".." {
        Err(format!("{field} {value:?} cannot name a directory"))
    } else {
        Ok(value)
    }
}

/// Why a reconcile failed; each names the object and the step.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API call failed.
    #[error("{step} for {kind} {name}")]
    Api {
        /// What was done.
        step: String,
        /// Kind of the object.
        kind: String,
        /// Name of the object.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

/// What one reconcile does with an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing: another provider's object, or nothing asked for.
    Ignore,
    /// Deletion: remove the directory (and generated Secret), then the finalizer.
    Delete,
    /// Run the operation and report it with this type.
    Operate(LastOperationType),
}

/// The step for an object: `type` ≠ `local` → ignore; deleting → delete; an operation annotation
/// → that operation (`reconcile` is `Create` until a lastOperation exists); no lastOperation →
/// `Create`; a generation not observed yet → `Reconcile`; else ignore.
pub fn decide<K: ExtensionObject>(object: &K) -> Step {
    if object.default_spec().type_ != PROVIDER_TYPE {
        return Step::Ignore;
    }
    if object.meta().deletion_timestamp.is_some() {
        return Step::Delete;
    }
    let status = object.extension_status();
    let reported = status.and_then(|s| s.last_operation.as_ref()).is_some();
    let fresh = if reported {
        LastOperationType::Reconcile
    } else {
        LastOperationType::Create
    };
    match object
        .annotations()
        .get(annotations::OPERATION)
        .map(String::as_str)
    {
        Some(annotations::OPERATION_MIGRATE) => return Step::Operate(LastOperationType::Migrate),
        Some(annotations::OPERATION_RESTORE) => return Step::Operate(LastOperationType::Restore),
        Some(annotations::OPERATION_RECONCILE) => return Step::Operate(fresh),
        _ => {}
    }
    if !reported {
        return Step::Operate(LastOperationType::Create);
    }
    let observed = status.and_then(|s| s.observed_generation);
    if object.meta().generation.is_some() && observed < object.meta().generation {
        return Step::Operate(LastOperationType::Reconcile);
    }
    Step::Ignore
}

/// Dependencies of the controller.
pub struct Ctx {
    /// Seed client.
    pub seed: kube::Client,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").finish_non_exhaustive()
    }
}

/// Runs the controller for both kinds until `stop` is cancelled.
pub async fn run(seed: kube::Client, stop: CancellationToken) {
    let ctx = Arc::new(Ctx { seed: seed.clone() });
    let buckets = seedlet_runtime::watch::controller(
        Api::<extensions::BackupBucket>::all(seed.clone()),
        kube::runtime::watcher::Config::default(),
    )
    .run_with(
        Runner::new(NAME, stop.clone()),
        reconcile::<extensions::BackupBucket>,
        error_policy::<extensions::BackupBucket>,
        ctx.clone(),
    );
    let entries = seedlet_runtime::watch::controller(
        Api::<extensions::BackupEntry>::all(seed),
        kube::runtime::watcher::Config::default(),
    )
    .run_with(
        Runner::new(NAME, stop),
        reconcile::<extensions::BackupEntry>,
        error_policy::<extensions::BackupEntry>,
        ctx,
    );
    futures::join!(buckets, entries);
}

/// Retries a failed reconcile after [`RETRY`] (a lost write race at once, with a debug line).
pub fn error_policy<K: BackupKind>(object: Arc<K>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    let name = object.name_any();
    if let Some(action) = seedlet_runtime::status::conflict_requeue(&name, error) {
        return action;
    }
    tracing::warn!(controller = NAME, object = %name, error = %seedlet_runtime::error_chain(error), "reconcile failed");
    Action::requeue(RETRY)
}

/// Reconciles one extension object of kind `K`.
///
/// # Errors
/// [`Error::Api`] naming the failing write.
pub async fn reconcile<K: BackupKind>(object: Arc<K>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    match decide(object.as_ref()) {
        Step::Ignore => Ok(Action::await_change()),
        Step::Delete => delete(object.as_ref(), &ctx).await,
        Step::Operate(type_) => operate(object.as_ref(), type_, &ctx).await,
    }
}

/// The operation: finalizer (not for `Migrate`), directory, generated Secret, annotation removed,
/// status reported; a migrated object loses its finalizer (its data stays for the destination).
async fn operate<K: BackupKind>(
    object: &K,
    type_: LastOperationType,
    ctx: &Ctx,
) -> Result<Action, Error> {
    let api: Api<K> = Api::all(ctx.seed.clone());
    let migrate = type_ == LastOperationType::Migrate;
    if !migrate {
        seedlet_runtime::finalizer::ensure(&api, object, K::FINALIZER)
            .await
            .map_err(api_error(object, "add finalizer"))?;
    }
    let outcome = match host_path(object, ctx).await? {
        Ok(host_path) => prepare(object, &host_path, migrate, ctx).await?,
        Err(message) => Err(message),
    };
    let unannotate = json!({"metadata": {"annotations": {annotations::OPERATION: null}}});
    api.patch(
        &object.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&unannotate),
    )
    .await
    .map_err(api_error(object, "remove the operation annotation"))?;
    let problem = outcome.as_ref().err().map(String::as_str);
    let status = status_patch(object, type_, problem, jiff::Timestamp::now());
    api.patch_status(
        &object.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&json!({ "status": status })),
    )
    .await
    .map_err(api_error(object, "report the status"))?;
    if migrate && outcome.is_ok() {
        seedlet_runtime::finalizer::remove(&api, object, K::FINALIZER)
            .await
            .map_err(api_error(object, "remove finalizer"))?;
    }
    Ok(match outcome {
        Ok(_) => Action::await_change(),
        Err(_) => Action::requeue(RETRY),
    })
}

/// The directory (kept as it is on `migrate`) and, for a bucket, the generated Secret; or the
/// problem as the text of a `lastError`.
async fn prepare<K: BackupKind>(
    object: &K,
    host_path: &Path,
    migrate: bool,
    ctx: &Ctx,
) -> Result<Result<(), String>, Error> {
    let directory = match object.directory(host_path) {
        Ok(directory) => directory,
        Err(message) => return Ok(Err(message)),
    };
    if migrate {
        return Ok(Ok(()));
    }
    if let Err(error) = std::fs::create_dir_all(&directory) {
        return Ok(Err(format!(
            "cannot create directory {}: {error}",
            directory.display()
        )));
    }
    if K::GENERATES_SECRET {
        write_generated_secret(object, host_path, ctx).await?;
    }
    Ok(Ok(()))
}

/// The status merge patch after an operation: `lastOperation` Succeeded (and the generated
/// Secret's reference for a bucket) with `lastError` cleared, or `lastOperation` Error with the
/// problem as `lastError`.
pub fn status_patch<K: BackupKind>(
    object: &K,
    type_: LastOperationType,
    problem: Option<&str>,
    now: jiff::Timestamp,
) -> Value {
    let kind = K::kind(&());
    let name = object.name_any();
    let (state, progress, description, last_error) = match problem {
        None => {
            let description = if type_ == LastOperationType::Migrate {
                format!("{kind} {name} migrated by the example extension; its directory stays.")
            } else {
                format!(
                    "{kind} {name} reconciled by the example extension: a directory below its hostPath."
                )
            };
            ("Succeeded", 100, description, Value::Null)
        }
        Some(message) => (
            "Error",
            50,
            message.to_owned(),
            json!({"description": message, "lastUpdateTime": now.to_string()}),
        ),
    };
    let mut status = json!({
        "lastOperation": {"type": type_, "state": state, "progress": progress,
                          "description": description, "lastUpdateTime": now.to_string()},
        "lastError": last_error,
        "observedGeneration": object.meta().generation,
    });
    if K::GENERATES_SECRET && problem.is_none() {
        status["generatedSecretRef"] = json!({
            "name": generated_secret_name(&name),
            "namespace": generated_secret_namespace(object),
        });
    }
    status
}

/// Deletion: the directory and the generated Secret go, then the finalizer.
async fn delete<K: BackupKind>(object: &K, ctx: &Ctx) -> Result<Action, Error> {
    let api: Api<K> = Api::all(ctx.seed.clone());
    if !object.finalizers().iter().any(|f| f == K::FINALIZER) {
        return Ok(Action::await_change());
    }
    let directory = host_path(object, ctx)
        .await?
        .and_then(|host_path| object.directory(&host_path));
    if let Ok(directory) = directory {
        match std::fs::remove_dir_all(&directory) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::warn!(controller = NAME, directory = %directory.display(), error = %error,
                    "cannot remove the backup directory");
                return Ok(Action::requeue(RETRY));
            }
        }
    }
    if K::GENERATES_SECRET {
        let secrets: Api<Secret> =
            Api::namespaced(ctx.seed.clone(), &generated_secret_namespace(object));
        let name = generated_secret_name(&object.name_any());
        match secrets.delete(&name, &Default::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            Err(source) => return Err(api_error(object, "delete the generated Secret")(source)),
        }
    }
    seedlet_runtime::finalizer::remove(&api, object, K::FINALIZER)
        .await
        .map_err(api_error(object, "remove finalizer"))?;
    Ok(Action::await_change())
}

/// The `hostPath` of the object's credentials (`spec.secretRef`), or the problem as the text of
/// a `lastError`; `Err` only for a failed read other than NotFound.
async fn host_path<K: BackupKind>(object: &K, ctx: &Ctx) -> Result<Result<PathBuf, String>, Error> {
    let reference = object.spec_extra().get("secretRef");
    let name = text(reference.and_then(|r| r.get("name")));
    let namespace = text(reference.and_then(|r| r.get("namespace")));
    if name.is_empty() || namespace.is_empty() {
        return Ok(Err("spec.secretRef names no Secret".to_owned()));
    }
    let secret = Api::<Secret>::namespaced(ctx.seed.clone(), namespace)
        .get_opt(name)
        .await
        .map_err(api_error(object, "read the credentials"))?;
    let Some(secret) = secret else {
        return Ok(Err(format!("secret {namespace}/{name} not found")));
    };
    let value = secret
        .data
        .as_ref()
        .and_then(|data| data.get(HOST_PATH_KEY))
        .map(|value| String::from_utf8_lossy(&value.0).into_owned());
    Ok(checked_host_path(value.as_deref(), namespace, name))
}

/// A usable `hostPath`: present and absolute; the object's name is a single path component (API
/// names are DNS names, so it is).
pub fn checked_host_path(
    value: Option<&str>,
    namespace: &str,
    name: &str,
) -> Result<PathBuf, String> {
    match value {
        None => Err(format!("secret {namespace}/{name} has no {HOST_PATH_KEY}")),
        Some(path) if !Path::new(path).is_absolute() => Err(format!(
            "{HOST_PATH_KEY} {path:?} of secret {namespace}/{name} is not an absolute path"
        )),
        Some(path) => Ok(PathBuf::from(path)),
    }
}

/// Writes the bucket's generated Secret: `hostPath` and `bucketName`.
async fn write_generated_secret<K: BackupKind>(
    object: &K,
    host_path: &Path,
    ctx: &Ctx,
) -> Result<(), Error> {
    let namespace = generated_secret_namespace(object);
    let name = generated_secret_name(&object.name_any());
    let data = BTreeMap::from([
        (
            HOST_PATH_KEY.to_owned(),
            ByteString(host_path.display().to_string().into_bytes()),
        ),
        (
            BUCKET_NAME_KEY.to_owned(),
            ByteString(object.name_any().into_bytes()),
        ),
    ]);
    let secrets: Api<Secret> = Api::namespaced(ctx.seed.clone(), &namespace);
    match secrets
        .get_opt(&name)
        .await
        .map_err(api_error(object, "read the generated Secret"))?
    {
        Some(existing) if existing.data.as_ref() == Some(&data) => Ok(()),
        Some(_) => {
            let patch = json!({"data": data});
            secrets
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map(drop)
                .map_err(api_error(object, "update the generated Secret"))
        }
        None => {
            let secret = Secret {
                metadata: kube::api::ObjectMeta {
                    name: Some(name.clone()),
                    namespace: Some(namespace.clone()),
                    ..Default::default()
                },
                data: Some(data),
                ..Secret::default()
            };
            let params = PostParams {
                field_manager: Some(FIELD_MANAGER.to_owned()),
                ..PostParams::default()
            };
            secrets
                .create(&params, &secret)
                .await
                .map(drop)
                .map_err(api_error(object, "create the generated Secret"))
        }
    }
}

/// `generated-bucket-<name>`.
pub fn generated_secret_name(bucket: &str) -> String {
    format!("generated-bucket-{bucket}")
}

/// The namespace the agent asked for, else `garden`.
fn generated_secret_namespace<K: BackupKind>(object: &K) -> String {
    object
        .annotations()
        .get(GENERATED_SECRET_NAMESPACE)
        .cloned()
        .unwrap_or_else(|| namespaces::GARDEN.to_owned())
}

/// A string field, empty when absent.
fn text(value: Option<&Value>) -> &str {
    value.and_then(Value::as_str).unwrap_or_default()
}

/// Maps a kube error of `step` on `object` into [`Error::Api`].
/// The error of a failed write to an extension object, naming step, kind and object.
pub(crate) fn api_error<K: ExtensionObject>(
    object: &K,
    step: &str,
) -> impl FnOnce(kube::Error) -> Error + use<K> {
    let kind = format!("extension {}", K::kind(&()));
    let name = object.name_any();
    let step = step.to_owned();
    move |source| Error::Api {
        step,
        kind,
        name,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(value: Value) -> extensions::BackupBucket {
        let mut object = json!({
            "apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "BackupBucket",
            "metadata": {"name": "b", "generation": 2},
            "spec": {"type": "local", "region": "local",
                     "secretRef": {"name": "bucket-b", "namespace": "garden"}},
        });
        merge(&mut object, value);
        serde_json::from_value(object).expect("bucket")
    }

    fn merge(target: &mut Value, patch: Value) {
        match (target, patch) {
            (Value::Object(target), Value::Object(patch)) => {
                for (key, value) in patch {
                    merge(target.entry(key).or_insert(Value::Null), value);
                }
            }
            (target, patch) => *target = patch,
        }
    }

    fn reported(generation: i64) -> Value {
        json!({"status": {"observedGeneration": generation, "lastOperation": {
            "type": "Create", "state": "Succeeded", "progress": 100, "description": "",
            "lastUpdateTime": "2026-01-01T00:00:00Z"}}})
    }

    #[test]
    fn decide_acts_on_operations_new_objects_and_new_generations_of_its_type_only() {
        use LastOperationType::{Create, Migrate, Reconcile, Restore};
        let annotated =
            |op: &str| json!({"metadata": {"annotations": {"gardener.cloud/operation": op}}});
        let cases = [
            ("new object", json!({}), Step::Operate(Create)),
            (
                "annotated, never reported",
                annotated("reconcile"),
                Step::Operate(Create),
            ),
            ("reported, current", reported(2), Step::Ignore),
            (
                "reported, older generation",
                reported(1),
                Step::Operate(Reconcile),
            ),
            (
                "other provider",
                json!({"spec": {"type": "s3"}}),
                Step::Ignore,
            ),
            (
                "deleting",
                json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}}),
                Step::Delete,
            ),
        ];
        for (name, patch, expected) in cases {
            assert_eq!(decide(&bucket(patch)), expected, "{name}");
        }
        for (op, expected) in [
            ("reconcile", Reconcile),
            ("migrate", Migrate),
            ("restore", Restore),
        ] {
            let mut patch = reported(2);
            merge(&mut patch, annotated(op));
            assert_eq!(decide(&bucket(patch)), Step::Operate(expected), "{op}");
        }
        let mut waiting = reported(2);
        merge(&mut waiting, annotated("wait-for-state"));
        assert_eq!(decide(&bucket(waiting)), Step::Ignore, "wait-for-state");
    }

    #[test]
    fn status_reports_success_with_the_generated_secret_or_the_problem() {
        let now: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().expect("time");
        let object = bucket(json!({"metadata": {"annotations": {
            GENERATED_SECRET_NAMESPACE: "garden"}}}));
        let ok = status_patch(&object, LastOperationType::Create, None, now);
        assert_eq!(ok["lastOperation"]["state"], "Succeeded");
        assert_eq!(ok["lastOperation"]["type"], "Create");
        assert_eq!(
            ok["lastOperation"]["description"],
            "BackupBucket b reconciled by the example extension: a directory below its hostPath."
        );
        assert_eq!(ok["lastError"], Value::Null);
        assert_eq!(ok["observedGeneration"], 2);
        assert_eq!(
            ok["generatedSecretRef"],
            json!({"name": "generated-bucket-b", "namespace": "garden"})
        );
        let problem = "secret garden/bucket-b not found";
        let failed = status_patch(&object, LastOperationType::Reconcile, Some(problem), now);
        assert_eq!(failed["lastOperation"]["state"], "Error");
        assert_eq!(failed["lastError"]["description"], problem);
        assert!(failed.get("generatedSecretRef").is_none());
    }

    #[test]
    fn host_paths_must_be_absolute_and_present() {
        assert_eq!(
            checked_host_path(Some("/var/b"), "garden", "s"),
            Ok(PathBuf::from("/var/b"))
        );
        assert_eq!(
            checked_host_path(None, "garden", "s"),
            Err("secret garden/s has no hostPath".to_owned())
        );
        assert_eq!(
            checked_host_path(Some("rel"), "garden", "s"),
            Err("hostPath \"rel\" of secret garden/s is not an absolute path".to_owned())
        );
    }

    #[test]
    fn entries_live_below_their_bucket() {
        let entry: extensions::BackupEntry = serde_json::from_value(json!({
            "apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "BackupEntry",
            "metadata": {"name": "shoot--p--s--uid"},
            "spec": {"type": "local", "bucketName": "bucket-uid"},
        }))
        .expect("entry");
        assert_eq!(
            entry.directory(Path::new("/data")),
            Ok(PathBuf::from("/data/bucket-uid/shoot--p--s--uid"))
        );
        for bad in ["", "..", "/etc", "a/b"] {
            let mut other = entry.clone();
            other.spec.extra.insert("bucketName".into(), json!(bad));
            assert!(other.directory(Path::new("/data")).is_err(), "{bad:?}");
        }
    }
}
