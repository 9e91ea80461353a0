//! One BackupEntry reconcile: dispatch (spec §2.2) and the reconcile/restore path (§2.3);
//! migration is in [`super::migrate`], deletion in [`super::delete`].

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::common::{LastOperationState, LastOperationType, ObjectReference};
use seedlet_api::core::{BackupBucket, BackupEntry, ShootState};
use seedlet_api::extensions::{self, ExtensionKind};
use seedlet_api::names::{annotations, finalizers};
use serde_json::{Value, json};

use super::desired;
use super::{Ctx, NAME};
use crate::extension_sync::decide::{self, Decision, Rules};
use crate::extension_sync::{credentials, object, operation};
use seedlet_runtime::error_chain;

/// Errors of one BackupEntry reconcile; each names the failing step and object.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing the core BackupEntry failed.
    #[error("{step} of BackupEntry {entry}")]
    Entry {
        /// What was done.
        step: &'static str,
        /// `namespace/name`.
        entry: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The credentials could not be resolved or copied.
    #[error("could not get credentials referred in core BackupBucket: {message}")]
    Credentials {
        /// The cause's text.
        message: String,
    },
    /// Reading, writing or deleting the extension object failed.
    #[error("{step} extension BackupEntry {entry}")]
    Extension {
        /// What was done.
        step: &'static str,
        /// Name.
        entry: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Reading the ShootState for a restore failed.
    #[error("reading ShootState {key} for the restore of BackupEntry {entry}")]
    ShootState {
        /// `namespace/name` of the ShootState.
        key: String,
        /// Entry name.
        entry: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The extension object reports an error that must be retried.
    #[error("extension BackupEntry {entry}: {description}")]
    ExtensionReported {
        /// Name.
        entry: String,
        /// The extension's error.
        description: String,
    },
    /// A pending deletion is overdue.
    #[error("the backupentry should have been deleted by now")]
    Overdue,
}

impl Error {
    /// CamelCase reason for logs.
    pub fn reason(&self) -> &'static str {
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

/// Reconciles one core BackupEntry.
///
/// # Errors
/// See [`Error`]; the queue retries with backoff.
pub async fn reconcile(entry: Arc<BackupEntry>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let started = std::time::Instant::now();
    let result = dispatch(&entry, &ctx).await;
    ctx.agent
        .metrics
        .reconciled(NAME, started.elapsed(), result.is_ok());
    result
}

/// Logs the error once and retries after a short delay.
pub fn error_policy(entry: Arc<BackupEntry>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    if seedlet_runtime::status::conflict_in_chain(error) {
        tracing::debug!(entry = %key(&entry), error = %seedlet_runtime::error_chain(error), "backupentry reconcile lost a write race, retrying");
        return Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE);
    }
    tracing::warn!(
        entry = %key(&entry),
        reason = error.reason(),
        error = %error_chain(error),
        "backupentry reconcile failed"
    );
    Action::requeue(Duration::from_secs(5))
}

async fn dispatch(cached: &BackupEntry, ctx: &Ctx) -> Result<Action, Error> {
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
    if !desired::is_ours(&entry, &ctx.agent.seed_name) {
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

async fn reconcile_entry(entry: &BackupEntry, ctx: &Ctx) -> Result<Action, Error> {
    let name = entry.name_any();
    let now = ctx.agent.clock.now();
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
    let secret = match entry_credentials(&bucket, ctx).await {
        Ok(secret) => secret,
        Err(error) => {
            report_error(ctx, entry, type_, error.to_string(), Vec::new()).await?;
            return Err(error);
        }
    };
    let seed_secret = credentials::write_seed_secret(
        &ctx.agent.seed,
        &desired::seed_secret_name(&name),
        &secret.data.clone().unwrap_or_default(),
        now,
        false,
        ctx.agent.field_manager,
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

/// The entry's bucket when it is healthy; otherwise the problem is written into the entry's
/// status (Error/50 with the bucket's codes) and `None` returned: the bucket watch re-triggers.
pub(super) async fn healthy_bucket(
    entry: &BackupEntry,
    type_: LastOperationType,
    ctx: &Ctx,
) -> Result<Option<BackupBucket>, Error> {
    let bucket_name = &entry.spec.bucket_name;
    let problem = match Api::<BackupBucket>::all(ctx.garden.clone())
        .get(bucket_name)
        .await
    {
        Ok(bucket) => match desired::bucket_problem(&bucket) {
            None => return Ok(Some(bucket)),
            Some(problem) => problem,
        },
        Err(error) => (
            format!(
                "failed getting associated BackupBucket {bucket_name:?}: {}",
                error_chain(&error)
            ),
            Vec::new(),
        ),
    };
    report_error(ctx, entry, type_, problem.0, problem.1).await?;
    Ok(None)
}

/// The bucket's credentials: its generated secret if it has one, else its `credentialsRef`.
pub(super) async fn entry_credentials(bucket: &BackupBucket, ctx: &Ctx) -> Result<Secret, Error> {
    let reference =
        match bucket
            .status
            .as_ref()
            .and_then(|s| s.generated_secret_ref.clone())
        {
            Some(generated) => ObjectReference {
                api_version: Some("v1".to_owned()),
                kind: Some("Secret".to_owned()),
                ..generated
            },
            None => crate::controllers::backupbucket::desired::credentials_ref(bucket).ok_or_else(
                || Error::Credentials {
                    message: format!("BackupBucket {} has no credentialsRef", bucket.name_any()),
                },
            )?,
        };
    credentials::resolve(&ctx.garden, &reference)
        .await
        .map_err(|error| Error::Credentials {
            message: error_chain(&error),
        })
}

/// Deploys `X`: with `reconcile`, or for a restore `wait-for-state`, the ShootState's
/// BackupEntry state copied in when `X` has none, then `restore`.
async fn deploy(
    entry: &BackupEntry,
    existing: Option<&extensions::BackupEntry>,
    spec: &Value,
    type_: LastOperationType,
    ctx: &Ctx,
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
    let stamp = || operation::timestamp(ctx.agent.clock.now());
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
            ctx.agent.field_manager,
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
        ctx.agent.field_manager,
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

/// Writes `{type, Error, 50, description}` and the lastError with `codes`, with a Warning Event
/// `ReconcileError` (action after the operation type).
pub(super) async fn report_error(
    ctx: &Ctx,
    entry: &BackupEntry,
    type_: LastOperationType,
    description: String,
    codes: Vec<String>,
) -> Result<(), Error> {
    report_error_as(ctx, entry, type_, "ReconcileError", description, codes).await
}

/// [`report_error`] with the Event reason `reason`.
pub(super) async fn report_error_as(
    ctx: &Ctx,
    entry: &BackupEntry,
    type_: LastOperationType,
    reason: &str,
    description: String,
    codes: Vec<String>,
) -> Result<(), Error> {
    let action = match type_ {
        LastOperationType::Delete => "Delete",
        LastOperationType::Migrate => "Migrate",
        _ => "Reconcile",
    };
    ctx.agent
        .events
        .named("backupentry-controller")
        .publish(
            entry,
            seedlet_runtime::events::EventType::Warning,
            reason,
            action,
            &description,
        )
        .await;
    let now = ctx.agent.clock.now();
    let failed = operation::last_operation(
        type_,
        LastOperationState::Error,
        50,
        description.clone(),
        now,
    );
    let last = operation::last_error(description, codes);
    write_status(
        ctx,
        entry,
        operation::status_fields(&failed, Some(&last), entry.metadata.generation),
    )
    .await
}

/// Merge-patches `status` into the entry's `/status`.
pub(super) async fn write_status(
    ctx: &Ctx,
    entry: &BackupEntry,
    status: Value,
) -> Result<(), Error> {
    entries(ctx, &entry.namespace().unwrap_or_default())
        .patch_status(
            &entry.name_any(),
            &PatchParams {
                field_manager: Some(ctx.agent.field_manager.to_owned()),
                ..PatchParams::default()
            },
            &Patch::Merge(&json!({ "status": status })),
        )
        .await
        .map(|_| ())
        .map_err(|source| Error::Entry {
            step: "writing status",
            entry: key(entry),
            source,
        })
}

/// `namespace/name`.
pub(super) fn key(entry: &BackupEntry) -> String {
    format!(
        "{}/{}",
        entry.namespace().unwrap_or_default(),
        entry.name_any()
    )
}

pub(super) fn entries(ctx: &Ctx, namespace: &str) -> Api<BackupEntry> {
    Api::namespaced(ctx.garden.clone(), namespace)
}

pub(super) fn extension_entries(ctx: &Ctx) -> Api<extensions::BackupEntry> {
    Api::all(ctx.agent.seed.clone())
}
