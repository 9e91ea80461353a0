//! The reads and writes the BackupEntry controller's flows share (reconcile, delete, migrate): API handles, the bucket and its credentials, status and error reports, and the error type.

use super::BackupEntries;
use super::desired;
use crate::extension_sync::seed_secret::{ContextObject, Credentials};
use crate::extension_sync::{credentials, operation};
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use seedlet_api::common::{LastOperationState, LastOperationType, ObjectReference};
use seedlet_api::core::{BackupBucket, BackupEntry};
use seedlet_api::extensions::{self};
use seedlet_runtime::error_chain;
use serde_json::{Value, json};

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

/// The entry's bucket when it is healthy; otherwise the problem is written into the entry's
/// status (Error/50 with the bucket's codes) and `None` returned: the bucket watch re-triggers.
pub(super) async fn healthy_bucket(
    entry: &BackupEntry,
    type_: LastOperationType,
    ctx: &BackupEntries,
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
pub(super) async fn entry_credentials(
    bucket: &BackupBucket,
    ctx: &BackupEntries,
) -> Result<Credentials, Error> {
    let reference = match bucket
        .status
        .as_ref()
        .and_then(|s| s.generated_secret_ref.clone())
    {
        Some(generated) => ObjectReference {
            api_version: Some("v1".to_owned()),
            kind: Some("Secret".to_owned()),
            ..generated
        },
        None => bucket
            .spec
            .credentials()
            .ok_or_else(|| Error::Credentials {
                message: format!("BackupBucket {} has no credentialsRef", bucket.name_any()),
            })?,
    };
    credentials::resolve(&ctx.garden, &reference)
        .await
        .map_err(|error| Error::Credentials {
            message: error_chain(&error),
        })
}

/// The entry as the WorkloadIdentity context object of its seed secret.
pub(super) fn context_of(entry: &BackupEntry) -> ContextObject {
    ContextObject {
        kind: "BackupEntry",
        name: entry.name_any(),
        namespace: entry.namespace(),
        uid: entry.uid().unwrap_or_default(),
    }
}

/// Writes `{type, Error, 50, description}` and the lastError with `codes`, with a Warning Event
/// `ReconcileError` (action after the operation type).
pub(super) async fn report_error(
    ctx: &BackupEntries,
    entry: &BackupEntry,
    type_: LastOperationType,
    description: String,
    codes: Vec<String>,
) -> Result<(), Error> {
    report_error_as(ctx, entry, type_, "ReconcileError", description, codes).await
}

/// [`report_error`] with the Event reason `reason`.
pub(super) async fn report_error_as(
    ctx: &BackupEntries,
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
    ctx.events
        .named("backupentry-controller")
        .publish(
            entry,
            seedlet_runtime::events::EventType::Warning,
            reason,
            action,
            &description,
        )
        .await;
    let now = ctx.clock.now();
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
    ctx: &BackupEntries,
    entry: &BackupEntry,
    status: Value,
) -> Result<(), Error> {
    entries(ctx, &entry.namespace().unwrap_or_default())
        .patch_status(
            &entry.name_any(),
            &PatchParams {
                field_manager: Some(ctx.field_manager.to_owned()),
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

pub(super) fn entries(ctx: &BackupEntries, namespace: &str) -> Api<BackupEntry> {
    Api::namespaced(ctx.garden.clone(), namespace)
}

pub(super) fn extension_entries(ctx: &BackupEntries) -> Api<extensions::BackupEntry> {
    Api::all(ctx.seed.clone())
}
