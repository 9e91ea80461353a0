//! The task bodies of the migrate flow (spec §6.2, §3.2 `Migrate`/`WaitMigrate`/`Destroy`): the
//! extension objects present in the control-plane namespace are annotated
//! `gardener.cloud/operation=migrate` and waited for until they report a succeeded `Migrate`
//! (their extension then keeps the provider resources and drops its finalizer), and afterwards
//! deleted with the deletion confirmation — the "shallow" delete of §5.6: with the finalizer
//! gone, the DELETE removes only the Kubernetes object. The core BackupEntry moves to the
//! destination seed and the namespace goes last. Every body is idempotent.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
};
use kube::{Api, ResourceExt};
use seedlet_api::extensions::{Extension, ExtensionObject};
use seedlet_api::names::annotations;
use serde_json::{Value, json};

use super::tasks::{FlowCtx, TaskError};
use crate::extension_sync::wait::{self, WaitTiming};
use crate::extension_sync::{object, operation};

type Namespaced = k8s_openapi::NamespaceResourceScope;

fn api_error(step: &str, kind: &str, key: &str) -> impl FnOnce(kube::Error) -> TaskError {
    let text = format!("{step} {kind} {key}");
    move |error| TaskError::plain(format!("{text}: {}", seedlet_runtime::error_chain(&error)))
}

fn key(ctx: &FlowCtx, name: &str) -> String {
    format!("{}/{name}", ctx.namespace)
}

/// The names of the objects of kind `K` in the control-plane namespace (class `shoot` only:
/// objects of other classes belong to other flows), sorted.
///
/// # Errors
/// The API error of the list (a kind whose CRD is missing has no objects).
pub async fn names<K>(ctx: &FlowCtx) -> Result<Vec<String>, TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = Namespaced>,
{
    let api: Api<K> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    let kind = K::kind(&());
    let listed = match api.list(&ListParams::default()).await {
        Ok(listed) => listed.items,
        Err(error) if object::is_gone(&error) => Vec::new(),
        Err(error) => return Err(api_error("listing", &kind, &ctx.namespace)(error)),
    };
    let mut names: Vec<String> = listed
        .iter()
        .filter(|o| o.default_spec().class_or_default() == seedlet_api::extensions::CLASS_SHOOT)
        .map(ResourceExt::name_any)
        .collect();
    names.sort();
    Ok(names)
}

/// The Extension objects of the namespace whose migrate lifecycle is `before`
/// (`BeforeKubeAPIServer`, the default) or not.
///
/// # Errors
/// See [`names`].
pub async fn extensions(ctx: &FlowCtx, before: bool) -> Result<Vec<String>, TaskError> {
    let api: Api<Extension> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    let listed = match api.list(&ListParams::default()).await {
        Ok(listed) => listed.items,
        Err(error) if object::is_gone(&error) => Vec::new(),
        Err(error) => return Err(api_error("listing", "Extension", &ctx.namespace)(error)),
    };
    Ok(listed
        .iter()
        .filter(|o| o.default_spec().class_or_default() == seedlet_api::extensions::CLASS_SHOOT)
        .filter(|o| migrates_before_kube_apiserver(ctx, &o.default_spec().type_) == before)
        .map(ResourceExt::name_any)
        .collect())
}

/// Whether Extensions of `type_` migrate before kube-apiserver (`lifecycle.migrate` of their
/// ControllerRegistration resource; `BeforeKubeAPIServer` unless it says `AfterKubeAPIServer`).
pub fn migrates_before_kube_apiserver(ctx: &FlowCtx, type_: &str) -> bool {
    let lifecycle = ctx
        .registrations
        .iter()
        .flat_map(|r| r.spec.resources.iter())
        .find(|r| r.kind == "Extension" && r.type_ == type_)
        .and_then(|r| r.lifecycle.as_ref())
        .and_then(|l| l.migrate.as_deref());
    lifecycle != Some("AfterKubeAPIServer")
}

/// Annotates each of `names` with `operation=migrate` and a fresh timestamp (a missing object is
/// skipped).
///
/// # Errors
/// The API error of a patch.
pub async fn migrate<K>(ctx: &FlowCtx, names: &[String]) -> Result<(), TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = Namespaced>,
{
    let api: Api<K> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    let stamp = operation::timestamp(ctx.clock.now());
    let migrate = object::deploy_annotations(annotations::OPERATION_MIGRATE, &stamp, &[]);
    for name in names {
        object::annotate(&api, name, &migrate)
            .await
            .map_err(api_error("annotating", &K::kind(&()), &key(ctx, name)))?;
    }
    Ok(())
}

/// Waits until each of `names` is gone or reports a succeeded `Migrate`.
///
/// # Errors
/// The first wait that times out.
pub async fn wait_migrated<K>(
    ctx: &FlowCtx,
    names: &[String],
    timing: WaitTiming,
) -> Result<(), TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = Namespaced>,
{
    let api: Api<K> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    for name in names {
        wait::wait_migrated(&api, &key(ctx, name), name, timing).await?;
    }
    Ok(())
}

/// Confirms and deletes each of `names` (missing ones count as deleted).
///
/// # Errors
/// The API error of a patch or delete.
pub async fn destroy<K>(ctx: &FlowCtx, names: &[String]) -> Result<(), TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = Namespaced>,
{
    let api: Api<K> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    let stamp = operation::timestamp(ctx.clock.now());
    let stamped = BTreeMap::from([(annotations::TIMESTAMP.to_owned(), stamp)]);
    for name in names {
        let kind = K::kind(&());
        object::annotate(&api, name, &stamped)
            .await
            .map_err(api_error("annotating", &kind, &key(ctx, name)))?;
        object::delete(&api, name, true).await.map_err(api_error(
            "deleting",
            &kind,
            &key(ctx, name),
        ))?;
    }
    Ok(())
}

/// Waits until each of `names` is gone.
///
/// # Errors
/// The first wait that times out, with the error the extension reported.
pub async fn wait_gone<K>(
    ctx: &FlowCtx,
    names: &[String],
    timing: WaitTiming,
) -> Result<(), TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = Namespaced>,
{
    let api: Api<K> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    for name in names {
        wait::wait_gone(&api, &key(ctx, name), name, timing).await?;
    }
    Ok(())
}

fn backup_entries(ctx: &FlowCtx) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("core.gardener.cloud", "v1beta1", "BackupEntry");
    let namespace = ctx.shoot.namespace().unwrap_or_default();
    Api::namespaced_with(ctx.garden.clone(), &namespace, &ApiResource::from_gvk(&gvk))
}

/// The core BackupEntry of the shoot (`<technical ID>--<status.uid or uid>`).
pub fn backup_entry_name(ctx: &FlowCtx) -> Option<String> {
    let uid = ctx
        .shoot
        .status
        .as_ref()
        .and_then(|s| s.uid.clone())
        .or_else(|| ctx.shoot.metadata.uid.clone())?;
    Some(format!("{}--{uid}", ctx.namespace))
}

/// "Migrating BackupEntry to new seed": merge-patches the core BackupEntry's `spec.seedName` to
/// the destination (its own controller migrates the extension object). Without an entry there
/// is nothing to move.
///
/// # Errors
/// The API error of the patch.
pub async fn migrate_backup_entry(ctx: &FlowCtx) -> Result<(), TaskError> {
    let Some(name) = backup_entry_name(ctx) else {
        return Ok(());
    };
    let patch = json!({"spec": {"seedName": ctx.shoot.spec.seed_name}});
    match backup_entries(ctx)
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(error) if object::is_gone(&error) => Ok(()),
        Err(error) => Err(api_error("patching", "BackupEntry", &name)(error)),
    }
}

/// Whether a core BackupEntry (as JSON) counts as moved: its controller observed the current
/// generation and its last operation succeeded (the source reports `Migrate Succeeded`).
pub fn backup_entry_moved(entry: &Value) -> Result<(), String> {
    let generation = entry
        .pointer("/metadata/generation")
        .and_then(Value::as_i64);
    let observed = entry
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64);
    if let Some(error) = entry
        .pointer("/status/lastError/description")
        .and_then(Value::as_str)
    {
        return Err(format!("error during reconciliation: {error}"));
    }
    if generation.is_some() && observed < generation {
        return Err(format!(
            "observed generation outdated ({}/{})",
            observed.unwrap_or(0),
            generation.unwrap_or(0)
        ));
    }
    match entry
        .pointer("/status/lastOperation/state")
        .and_then(Value::as_str)
    {
        Some("Succeeded") => Ok(()),
        Some(state) => Err(format!("extension state is not succeeded but {state}")),
        None => Err("extension did not record a last operation yet".to_owned()),
    }
}

/// "Waiting for BackupEntry to be migrated to new seed": polls the core BackupEntry (5 s, at
/// most 10 min) until [`backup_entry_moved`]; a missing entry is done.
///
/// # Errors
/// The last reason at the timeout.
pub async fn wait_backup_entry(ctx: &FlowCtx, timing: WaitTiming) -> Result<(), TaskError> {
    let Some(name) = backup_entry_name(ctx) else {
        return Ok(());
    };
    let api = backup_entries(ctx);
    let started = tokio::time::Instant::now();
    loop {
        let last = match api.get_opt(&name).await {
            Ok(None) => return Ok(()),
            Ok(Some(entry)) => {
                match backup_entry_moved(&serde_json::to_value(&entry).unwrap_or_default()) {
                    Ok(()) => return Ok(()),
                    Err(reason) => reason,
                }
            }
            Err(error) => error.to_string(),
        };
        if started.elapsed() + timing.interval > timing.timeout {
            return Err(TaskError::plain(format!(
                "Error while waiting for BackupEntry {name} to become ready: retry timeout exceeded: {last}"
            )));
        }
        tokio::time::sleep(timing.interval).await;
    }
}

/// Whether the control-plane namespace exists and is not terminating (the flow's
/// `nonTerminatingNamespace` fact).
///
/// # Errors
/// The API error of the read.
pub async fn namespace_alive(seed: &kube::Client, name: &str) -> Result<bool, TaskError> {
    let api: Api<Namespace> = Api::all(seed.clone());
    let found = api
        .get_opt(name)
        .await
        .map_err(api_error("reading", "Namespace", name))?;
    Ok(found.is_some_and(|n| n.metadata.deletion_timestamp.is_none()))
}

/// "Deleting shoot namespace in Seed".
///
/// # Errors
/// The API error of the delete.
pub async fn delete_namespace(ctx: &FlowCtx) -> Result<(), TaskError> {
    let api: Api<Namespace> = Api::all(ctx.seed.clone());
    match api.delete(&ctx.namespace, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(error) if object::is_gone(&error) => Ok(()),
        Err(error) => Err(api_error("deleting", "Namespace", &ctx.namespace)(error)),
    }
}

/// "Waiting until shoot namespace in Seed has been deleted".
///
/// # Errors
/// At the timeout.
pub async fn wait_namespace_gone(ctx: &FlowCtx, timing: WaitTiming) -> Result<(), TaskError> {
    let started = tokio::time::Instant::now();
    let mut pause = wait::FIRST_PAUSE;
    while namespace_present(ctx).await? {
        if started.elapsed() + pause > timing.timeout {
            return Err(TaskError::plain(format!(
                "namespace {} is still present (retry timeout exceeded)",
                ctx.namespace
            )));
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(timing.interval);
    }
    Ok(())
}

async fn namespace_present(ctx: &FlowCtx) -> Result<bool, TaskError> {
    let api: Api<Namespace> = Api::all(ctx.seed.clone());
    api.get_opt(&ctx.namespace)
        .await
        .map(|found| found.is_some())
        .map_err(api_error("reading", "Namespace", &ctx.namespace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backup_entry_counts_as_moved_once_its_current_generation_succeeded() {
        let op = |state: &str| json!({"type": "Migrate", "state": state});
        let cases = [
            (
                json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 2, "lastOperation": op("Succeeded")}}),
                Ok(()),
            ),
            (
                json!({"metadata": {"generation": 3}, "status": {"observedGeneration": 2, "lastOperation": op("Succeeded")}}),
                Err("observed generation outdated (2/3)".to_owned()),
            ),
            (
                json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 2, "lastOperation": op("Processing")}}),
                Err("extension state is not succeeded but Processing".to_owned()),
            ),
            (
                json!({"metadata": {"generation": 2}, "status": {"lastError": {"description": "denied"}}}),
                Err("error during reconciliation: denied".to_owned()),
            ),
            (
                json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1}}),
                Err("extension did not record a last operation yet".to_owned()),
            ),
        ];
        for (entry, want) in cases {
            assert_eq!(backup_entry_moved(&entry), want, "{entry}");
        }
    }
}
