//! One BackupEntry reconcile: dispatch (spec §2.2) and the reconcile/restore path (§2.3);
//! migration is in [`super::migrate`], deletion in [`super::delete`].

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::core::{BackupEntry, ShootState};
use seedlet_api::extensions::{self, ExtensionKind};
use seedlet_api::names::{annotations, finalizers};
use serde_json::{Value, json};

use super::desired;
use super::io::{
    Error, context_of, entries, entry_credentials, extension_entries, healthy_bucket, key,
    report_error, write_status,
};
use super::{BackupEntries, NAME};
use crate::extension_sync::decide::{self, Decision, Rules};
use crate::extension_sync::{credentials, object, operation};
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::error_chain;

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Entry { .. } => "BackupEntryError",
            Error::Credentials { .. } => "CredentialsError",
            Error::Extension { .. } => "ExtensionError",
            Error::ShootState { .. } => "ShootStateError",
            Error::ExtensionReported { .. } => "ExtensionReportedError",
            Error::Overdue => "DeletionOverdue",
        }
    }
}

impl Reconciler for BackupEntries {
    type Object = BackupEntry;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Reconciles one core BackupEntry.
    async fn reconcile(&self, entry: Arc<BackupEntry>) -> Result<Action, Error> {
        dispatch(&entry, self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(5)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn dispatch(cached: &BackupEntry, ctx: &BackupEntries) -> Result<Action, Error> {
    let api = entries(ctx, &cached.namespace().unwrap_or_default());
    let Some(entry) = api
        .get_opt(&cached.name_any())
        .await
        .map_err(|source| Error::Entry {
            step: "reading",
            entry: key(cached),
            source,
        })?
    else {
        return Ok(Action::await_change());
    };
    if !desired::is_ours(&entry, &ctx.seed_name) {
        return Ok(Action::await_change());
    }
    let has_finalizer = entry.finalizers().iter().any(|f| f == finalizers::GARDENER);
    if entry.metadata.deletion_timestamp.is_some() {
        if !has_finalizer {
            return Ok(Action::await_change());
        }
        return super::delete::run(&entry, ctx).await;
    }
    if desired::migrating(&entry) {
        if !has_finalizer {
            return Ok(Action::await_change());
        }
        return super::migrate::run(&entry, ctx).await;
    }
    seedlet_runtime::finalizer::ensure(&api, &entry, finalizers::GARDENER)
        .await
        .map_err(|source| Error::Entry {
            step: "adding finalizer",
            entry: key(&entry),
            source,
        })?;
    reconcile_entry(&entry, ctx).await
}

/// The OT of the entry (spec §0).
pub fn operation_type(entry: &BackupEntry) -> LastOperationType {
    operation::operation_type(
        entry.annotations(),
        entry.metadata.deletion_timestamp.is_some(),
        entry
            .status
            .as_ref()
            .and_then(|s| s.last_operation.as_ref()),
    )
}

async fn reconcile_entry(entry: &BackupEntry, ctx: &BackupEntries) -> Result<Action, Error> {
    let name = entry.name_any();
    let now = ctx.clock.now();
    let type_ = operation_type(entry);
    let start = operation::last_operation(
        type_,
        LastOperationState::Processing,
        0,
        desired::started(type_),
        now,
    );
    let previous_error = entry.status.as_ref().and_then(|s| s.last_error.as_ref());
    let mut status = operation::status_fields(&start, previous_error, entry.metadata.generation);
    if entry
        .status
        .as_ref()
        .and_then(|s| s.seed_name.as_ref())
        .is_none()
    {
        status["seedName"] = json!(entry.spec.seed_name);
    }
    write_status(ctx, entry, status).await?;

    let Some(bucket) = healthy_bucket(entry, type_, ctx).await? else {
        return Ok(Action::await_change());
    };
    let credentials = match entry_credentials(&bucket, ctx).await {
        Ok(credentials) => credentials,
        Err(error) => {
            report_error(ctx, entry, type_, error.to_string(), Vec::new()).await?;
            return Err(error);
        }
    };
    let seed_secret = credentials::write_seed_secret(
        &ctx.seed,
        &desired::seed_secret_name(&name),
        &credentials,
        &context_of(entry),
        now,
        false,
        ctx.field_manager,
    )
    .await
    .map_err(|error| Error::Credentials {
        message: error_chain(&error),
    })?;

    let spec = desired::extension_spec(entry, &bucket, &name);
    let existing = extension_entries(ctx)
        .get_opt(&name)
        .await
        .map_err(|source| Error::Extension {
            step: "reading",
            entry: name.clone(),
            source,
        })?;
    let rules = Rules {
        credentials: Some(decide::Credentials {
            changed: seed_secret.changed,
            timestamp: seed_secret.timestamp,
        }),
        redeploy_without_annotation: true,
        refresh_after: None,
    };
    let decision = decide::decide(existing.as_ref(), &spec, &rules, now);
    tracing::debug!(entry = %key(entry), operation = ?type_, ?decision, "backupentry extension decision");
    match decision {
        Decision::Deploy => {
            deploy(entry, existing.as_ref(), &spec, type_, ctx).await?;
            Ok(Action::await_change())
        }
        Decision::Error {
            error,
            deploy: redeploy,
        } => {
            report_error(ctx, entry, type_, error.description, error.codes).await?;
            if redeploy {
                deploy(entry, existing.as_ref(), &spec, type_, ctx).await?;
            }
            Ok(Action::await_change())
        }
        Decision::Waiting => Ok(Action::await_change()),
        Decision::Succeeded => {
            let done = operation::last_operation(
                type_,
                LastOperationState::Succeeded,
                100,
                desired::succeeded(type_),
                now,
            );
            write_status(
                ctx,
                entry,
                operation::status_fields(&done, None, entry.metadata.generation),
            )
            .await?;
            if desired::has_operation(entry, annotations::OPERATION_RESTORE) {
                let patch = json!({"metadata": {"annotations": {annotations::OPERATION: null}}});
                entries(ctx, &entry.namespace().unwrap_or_default())
                    .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map_err(|source| Error::Entry {
                        step: "removing the restore annotation",
                        entry: key(entry),
                        source,
                    })?;
            }
            Ok(Action::await_change())
        }
    }
}

/// Deploys `X`: with `reconcile`, or for a restore `wait-for-state`, the ShootState's
/// BackupEntry state copied in when `X` has none, then `restore`.
async fn deploy(
    entry: &BackupEntry,
    existing: Option<&extensions::BackupEntry>,
    spec: &Value,
    type_: LastOperationType,
    ctx: &BackupEntries,
) -> Result<(), Error> {
    let name = entry.name_any();
    let api = extension_entries(ctx);
    let extension_error = |step| {
        let entry = name.clone();
        move |source| Error::Extension {
            step,
            entry,
            source,
        }
    };
    let stamp = || operation::timestamp(ctx.clock.now());
    if type_ != LastOperationType::Restore {
        let annotations =
            object::deploy_annotations(annotations::OPERATION_RECONCILE, &stamp(), &[]);
        return object::deploy(
            &api,
            existing,
            &name,
            None,
            spec,
            &annotations,
            ctx.field_manager,
        )
        .await
        .map_err(extension_error("deploying"));
    }
    let namespace = entry.namespace().unwrap_or_default();
    let shoot = entry
        .owner_references()
        .iter()
        .find(|owner| owner.kind == "Shoot")
        .map(|owner| owner.name.clone())
        .unwrap_or_default();
    let state = Api::<ShootState>::namespaced(ctx.garden.clone(), &namespace)
        .get(&shoot)
        .await
        .map_err(|source| Error::ShootState {
            key: format!("{namespace}/{shoot}"),
            entry: name.clone(),
            source,
        })?;
    let waiting = object::deploy_annotations(annotations::OPERATION_WAIT_FOR_STATE, &stamp(), &[]);
    object::deploy(
        &api,
        existing,
        &name,
        None,
        spec,
        &waiting,
        ctx.field_manager,
    )
    .await
    .map_err(extension_error("deploying for restore"))?;
    let has_state = existing
        .and_then(|x| x.status.as_ref())
        .is_some_and(|s| s.state.is_some());
    if !has_state
        && let Some(saved) = state.spec.extensions.iter().find(|saved| {
            saved.kind == ExtensionKind::BackupEntry.as_str()
                && saved.name.as_deref() == Some(name.as_str())
        })
    {
        let status = json!({"status": {"state": saved.state, "resources": saved.resources}});
        api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .map_err(extension_error("restoring state of"))?;
    }
    let restore = object::deploy_annotations(annotations::OPERATION_RESTORE, &stamp(), &[]);
    object::annotate(&api, &name, &restore)
        .await
        .map_err(extension_error("annotating restore on"))
}
