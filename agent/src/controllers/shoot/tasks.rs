//! The task bodies of the Shoot flows: deploying one extension object (create or merge-patch
//! with `gardener.cloud/operation=reconcile` and a fresh timestamp), waiting for it, the
//! `cloudprovider` Secret and the core BackupEntry. Every body is idempotent; errors carry the
//! extension's codes.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::{Api, ResourceExt};
use seedlet_api::core::{ControllerRegistration, Seed, Shoot};
use seedlet_api::extensions::ExtensionObject;
use seedlet_api::names::annotations;
use serde_json::{Value, json};

use crate::extension_sync::wait::{self, WaitTiming};
use crate::extension_sync::{object, operation};

/// A task's failure: the message and the error codes found on the way.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TaskError {
    /// What failed.
    pub message: String,
    /// Codes reported by extensions (`status.lastError.codes`).
    pub codes: Vec<String>,
}

impl TaskError {
    /// An error without codes.
    pub fn plain(message: impl Into<String>) -> TaskError {
        TaskError {
            message: message.into(),
            codes: Vec::new(),
        }
    }
}

impl From<wait::WaitError> for TaskError {
    fn from(error: wait::WaitError) -> TaskError {
        TaskError {
            message: error.message,
            codes: error.codes,
        }
    }
}

fn api_error(step: &str, kind: &str, key: &str) -> impl FnOnce(kube::Error) -> TaskError {
    let text = format!("{step} {kind} {key}");
    move |error| TaskError::plain(format!("{text}: {}", seedlet_runtime::error_chain(&error)))
}

/// What the tasks of one flow run share.
pub struct FlowCtx {
    /// Seed client.
    pub seed: kube::Client,
    /// Garden client.
    pub garden: kube::Client,
    /// The Shoot as the run started.
    pub shoot: Arc<Shoot>,
    /// Our Seed.
    pub seed_object: Arc<Seed>,
    /// ControllerRegistrations (Extension kinds, lifecycles).
    pub registrations: Vec<Arc<ControllerRegistration>>,
    /// The control-plane namespace.
    pub namespace: String,
    /// Field manager.
    pub field_manager: &'static str,
    /// Time source.
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
    /// Values one task hands to later ones.
    pub shared: Mutex<Shared>,
    /// The control-plane chart, if configured.
    pub control_plane_chart: Option<Arc<super::control_plane::ChartSource>>,
}

impl std::fmt::Debug for FlowCtx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowCtx")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

/// Values handed between tasks.
#[derive(Debug, Default, Clone)]
pub struct Shared {
    /// Infrastructure `status.providerStatus`.
    pub infrastructure_status: Option<Value>,
    /// Pool → the cloud-config Secret of its init OSC.
    pub user_data: BTreeMap<String, String>,
    /// Restore phase: the ShootState, read on first use (`None`: not restoring).
    pub restore: Option<super::restore::RestoreState>,
}

impl FlowCtx {
    fn shared(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The Infrastructure provider status recorded by its wait.
    pub fn infrastructure_status(&self) -> Option<Value> {
        self.shared().infrastructure_status.clone()
    }

    /// The init OSC cloud-config Secrets recorded by the OSC wait.
    pub fn user_data(&self) -> BTreeMap<String, String> {
        self.shared().user_data.clone()
    }

    fn key(&self, name: &str) -> String {
        format!("{}/{name}", self.namespace)
    }

    fn timestamp(&self) -> String {
        operation::timestamp(self.clock.now())
    }
}

/// Whether the shoot's `shoot.gardener.cloud/tasks` lists `task`.
pub fn has_task(shoot: &Shoot, task: &str) -> bool {
    shoot
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::SHOOT_TASKS))
        .is_some_and(|tasks| tasks.split(',').any(|t| t.trim() == task))
}

/// Deploys extension object `name` with `spec`; `trigger` adds the operation annotation and a
/// fresh timestamp (otherwise only the spec is patched); `labels` are merged in.
///
/// # Errors
/// The API error of the read or write.
pub async fn deploy<K>(
    ctx: &FlowCtx,
    name: &str,
    spec: &Value,
    trigger: bool,
    labels: &BTreeMap<String, String>,
) -> Result<(), TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
{
    let restoring = ctx.shared().restore.clone();
    if let Some(state) = restoring {
        return super::restore::deploy::<K>(ctx, &state, name, spec, labels).await;
    }
    let api: Api<K> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    let kind = K::kind(&());
    let key = ctx.key(name);
    let existing = api
        .get_opt(name)
        .await
        .map_err(api_error("reading", &kind, &key))?;
    let object_annotations = if trigger || existing.is_none() {
        object::deploy_annotations(annotations::OPERATION_RECONCILE, &ctx.timestamp(), &[])
    } else {
        BTreeMap::new()
    };
    write_object(
        ctx,
        &api,
        existing.as_ref(),
        name,
        spec,
        &object_annotations,
        labels,
    )
    .await
}

/// Creates or merge-patches extension object `name` (`existing` as just read) with `spec` and
/// `object_annotations`, then merges `labels` in; shared by the reconcile and restore paths.
///
/// # Errors
/// The API error of a write, naming the object.
pub(super) async fn write_object<K>(
    ctx: &FlowCtx,
    api: &Api<K>,
    existing: Option<&K>,
    name: &str,
    spec: &Value,
    object_annotations: &BTreeMap<String, String>,
    labels: &BTreeMap<String, String>,
) -> Result<(), TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
{
    let (kind, key) = (K::kind(&()), ctx.key(name));
    object::deploy(
        api,
        existing,
        name,
        Some(&ctx.namespace),
        spec,
        object_annotations,
        ctx.field_manager,
    )
    .await
    .map_err(api_error("deploying", &kind, &key))?;
    if !labels.is_empty() {
        let patch = json!({"metadata": {"labels": labels}});
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(api_error("labelling", &kind, &key))?;
    }
    Ok(())
}

/// Waits until extension object `name` is ready.
///
/// # Errors
/// The wait's error with the extension's codes.
pub async fn wait_ready<K>(ctx: &FlowCtx, name: &str, timing: WaitTiming) -> Result<K, TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
{
    let api: Api<K> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    Ok(wait::wait_ready(&api, &ctx.key(name), name, None, timing).await?)
}

/// Whether the Infrastructure needs the operation annotation (spec §3.3 step 6): the
/// `deployInfrastructure` task, a restore, or an object that is new or did not succeed last.
pub async fn infrastructure_trigger(ctx: &FlowCtx, restore: bool) -> Result<bool, TaskError> {
    if restore || has_task(&ctx.shoot, "deployInfrastructure") {
        return Ok(true);
    }
    let api: Api<seedlet_api::extensions::Infrastructure> =
        Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    let name = super::desired::shoot_name(&ctx.shoot);
    let existing =
        api.get_opt(name)
            .await
            .map_err(api_error("reading", "Infrastructure", &ctx.key(name)))?;
    Ok(existing
        .as_ref()
        .and_then(|i| i.extension_status())
        .and_then(|s| s.last_operation.as_ref())
        .is_none_or(|op| !op.succeeded()))
}

/// Records what later tasks read from a ready Infrastructure.
pub fn record_infrastructure(ctx: &FlowCtx, infrastructure: &impl ExtensionObject) {
    ctx.shared().infrastructure_status = infrastructure
        .extension_status()
        .and_then(|s| s.provider_status.clone());
}

/// Records the cloud-config Secret of a ready init OSC; a ready init OSC without
/// `status.cloudConfig.secretRef` is an error.
pub fn record_cloud_config(
    ctx: &FlowCtx,
    pool: &str,
    osc: &impl ExtensionObject,
) -> Result<(), TaskError> {
    let secret = osc
        .extension_status()
        .and_then(|s| s.extra.get("cloudConfig"))
        .and_then(|c| c.pointer("/secretRef/name"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            TaskError::plain(format!(
                "OperatingSystemConfig {} has no status.cloudConfig.secretRef",
                ctx.key(&osc.name_any())
            ))
        })?;
    ctx.shared()
        .user_data
        .insert(pool.to_owned(), secret.to_owned());
    Ok(())
}

/// Checks that the control-plane namespace exists (the Cluster sync creates and labels it).
pub async fn namespace_present(ctx: &FlowCtx) -> Result<(), TaskError> {
    let api: Api<Namespace> = Api::all(ctx.seed.clone());
    match api.get_opt(&ctx.namespace).await {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(TaskError::plain(format!(
            "control plane namespace {} does not exist yet",
            ctx.namespace
        ))),
        Err(error) => Err(api_error("reading", "Namespace", &ctx.namespace)(error)),
    }
}

/// Copies the shoot's infrastructure credentials (SecretBinding or CredentialsBinding to a
/// Secret) into the `cloudprovider` Secret of the control-plane namespace.
pub async fn deploy_cloudprovider_secret(ctx: &FlowCtx) -> Result<(), TaskError> {
    let shoot_namespace = ctx.shoot.namespace().unwrap_or_default();
    let (secret_namespace, secret_name) = credentials_secret(ctx, &shoot_namespace).await?;
    let secrets: Api<Secret> = Api::namespaced(ctx.garden.clone(), &secret_namespace);
    let key = format!("{secret_namespace}/{secret_name}");
    let source = secrets
        .get(&secret_name)
        .await
        .map_err(api_error("reading", "Secret", &key))?;
    let copy = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": super::desired::CLOUDPROVIDER_SECRET, "namespace": ctx.namespace,
                     "labels": {super::desired::PURPOSE_LABEL: super::desired::PURPOSE_CLOUDPROVIDER},
                     "annotations": {}},
        "type": "Opaque",
        "data": source.data,
    });
    let seed_secrets: Api<Secret> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    let params = PatchParams::apply(ctx.field_manager).force();
    // Server-side apply of a Secret this controller owns alone; `force` takes over fields a
    // previous agent run may have written under another manager name.
    seed_secrets
        .patch(
            super::desired::CLOUDPROVIDER_SECRET,
            &params,
            &Patch::Apply(&copy),
        )
        .await
        .map_err(api_error(
            "applying",
            "Secret",
            &ctx.key(super::desired::CLOUDPROVIDER_SECRET),
        ))?;
    Ok(())
}

async fn credentials_secret(
    ctx: &FlowCtx,
    shoot_namespace: &str,
) -> Result<(String, String), TaskError> {
    let (resource, name, pointer) = if let Some(name) = &ctx.shoot.spec.credentials_binding_name {
        let gvk =
            GroupVersionKind::gvk("security.gardener.cloud", "v1alpha1", "CredentialsBinding");
        (ApiResource::from_gvk(&gvk), name.clone(), "/credentialsRef")
    } else if let Some(name) = &ctx.shoot.spec.secret_binding_name {
        let gvk = GroupVersionKind::gvk("core.gardener.cloud", "v1beta1", "SecretBinding");
        (ApiResource::from_gvk(&gvk), name.clone(), "/secretRef")
    } else {
        return Err(TaskError::plain("shoot references no credentials"));
    };
    let api: Api<DynamicObject> =
        Api::namespaced_with(ctx.garden.clone(), shoot_namespace, &resource);
    let binding = api.get(&name).await.map_err(api_error(
        "reading",
        &resource.kind,
        &format!("{shoot_namespace}/{name}"),
    ))?;
    let reference = binding
        .data
        .pointer(pointer)
        .cloned()
        .unwrap_or(Value::Null);
    let kind = reference
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("Secret");
    if kind != "Secret" {
        return Err(TaskError::plain(format!(
            "{} {shoot_namespace}/{name} references a {kind}; seedlet copies Secret credentials only",
            resource.kind
        )));
    }
    let secret_name = reference
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let secret_namespace = reference
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or(shoot_namespace);
    Ok((secret_namespace.to_owned(), secret_name.to_owned()))
}

/// Creates the core BackupEntry in the garden, or merge-patches its annotations and spec.
pub async fn deploy_backup_entry(ctx: &FlowCtx, entry: Value) -> Result<(), TaskError> {
    let gvk = GroupVersionKind::gvk("core.gardener.cloud", "v1beta1", "BackupEntry");
    let resource = ApiResource::from_gvk(&gvk);
    let namespace = ctx.shoot.namespace().unwrap_or_default();
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.garden.clone(), &namespace, &resource);
    let name = entry
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let key = format!("{namespace}/{name}");
    let object: DynamicObject = serde_json::from_value(entry.clone())
        .map_err(|error| TaskError::plain(format!("encoding BackupEntry {key}: {error}")))?;
    match api.create(&PostParams::default(), &object).await {
        Ok(_) => return Ok(()),
        Err(kube::Error::Api(status)) if status.is_already_exists() => {}
        Err(error) => return Err(api_error("creating", "BackupEntry", &key)(error)),
    }
    let patch = json!({
        "metadata": {"annotations": entry.pointer("/metadata/annotations")},
        "spec": entry.get("spec"),
    });
    api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(api_error("patching", "BackupEntry", &key))?;
    Ok(())
}
