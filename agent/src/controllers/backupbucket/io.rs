//! The reads and writes both flows of the BackupBucket controller share (reconcile and delete): API handles, the credentials, status writes, events, and the error type.

use super::BackupBuckets;
use super::desired::{CREDENTIALS_FINALIZER, LEGACY_CREDENTIALS_FINALIZER};
use crate::extension_sync::seed_secret::{ContextObject, Credentials};
use crate::extension_sync::{credentials, operation};
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use seedlet_api::common::LastError;
use seedlet_api::core::BackupBucket;
use seedlet_api::extensions;
use seedlet_runtime::events::EventType;
use serde_json::{Value, json};

/// Errors of one BackupBucket reconcile; each names the failing step.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing the core BackupBucket failed.
    #[error("{step} of BackupBucket {bucket}")]
    Bucket {
        /// What was done.
        step: &'static str,
        /// Bucket name.
        bucket: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The bucket names no credentials.
    #[error("BackupBucket {bucket} has no spec.credentialsRef")]
    NoCredentials {
        /// Bucket name.
        bucket: String,
    },
    /// Credentials could not be resolved or copied.
    #[error("credentials of BackupBucket {bucket}")]
    Credentials {
        /// Bucket name.
        bucket: String,
        /// Cause.
        #[source]
        source: credentials::Error,
    },
    /// Writing a finalizer on the credentials failed.
    #[error("finalizer on credentials {credentials}")]
    CredentialsFinalizer {
        /// `<Kind> <namespace>/<name>`.
        credentials: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Reading, writing or deleting the extension object failed.
    #[error("{step} extension BackupBucket {bucket}")]
    Extension {
        /// What was done.
        step: &'static str,
        /// Bucket name.
        bucket: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Copying the generated secret to the garden failed.
    #[error("generated secret of BackupBucket {bucket}: {step}")]
    GeneratedSecret {
        /// What was done.
        step: String,
        /// Bucket name.
        bucket: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The extension reports an error while deleting.
    #[error("deleting extension BackupBucket {bucket}: {description}")]
    ExtensionDeletion {
        /// Bucket name.
        bucket: String,
        /// The extension's lastError.
        description: String,
    },
}

/// Resolves the credentials (Secret or WorkloadIdentity) and moves their finalizers to
/// `core.gardener.cloud/backupbucket`.
pub(super) async fn credentials_of(
    bucket: &BackupBucket,
    ctx: &BackupBuckets,
) -> Result<Credentials, Error> {
    let name = bucket.name_any();
    let reference = bucket
        .spec
        .credentials()
        .ok_or_else(|| Error::NoCredentials {
            bucket: name.clone(),
        })?;
    let credentials = credentials::resolve(&ctx.garden, &reference)
        .await
        .map_err(|source| Error::Credentials {
            bucket: name.clone(),
            source,
        })?;
    credentials::set_finalizers(
        &ctx.garden,
        &credentials,
        Some(CREDENTIALS_FINALIZER),
        &[LEGACY_CREDENTIALS_FINALIZER],
    )
    .await
    .map_err(|source| Error::CredentialsFinalizer {
        credentials: format!("{} {}", credentials.kind(), credentials.key()),
        source,
    })?;
    Ok(credentials)
}

/// The bucket as the WorkloadIdentity context object of its seed secret.
pub(super) fn context_of(bucket: &BackupBucket) -> ContextObject {
    ContextObject {
        kind: "BackupBucket",
        name: bucket.name_any(),
        namespace: None,
        uid: bucket.uid().unwrap_or_default(),
    }
}

/// Merge-patches `status` into the core bucket's `/status`.
pub(super) async fn write_status(
    ctx: &BackupBuckets,
    name: &str,
    status: Value,
) -> Result<(), Error> {
    buckets(ctx)
        .patch_status(
            name,
            &PatchParams {
                field_manager: Some(ctx.field_manager.to_owned()),
                ..PatchParams::default()
            },
            &Patch::Merge(&json!({ "status": status })),
        )
        .await
        .map(|_| ())
        .map_err(|source| Error::Bucket {
            step: "writing status",
            bucket: name.to_owned(),
            source,
        })
}

/// Records an Event on the core bucket in the garden (`backupbucket-controller`).
pub(super) async fn event(
    ctx: &BackupBuckets,
    bucket: &BackupBucket,
    kind: EventType,
    reason: &str,
    action: &str,
    note: &str,
) {
    ctx.events
        .named("backupbucket-controller")
        .publish(bucket, kind, reason, action, note)
        .await;
}

/// A `lastError` value for a status write.
pub(super) fn error_of(description: String, codes: Vec<String>) -> LastError {
    operation::last_error(description, codes)
}

pub(super) fn buckets(ctx: &BackupBuckets) -> Api<BackupBucket> {
    Api::all(ctx.garden.clone())
}

pub(super) fn extension_buckets(ctx: &BackupBuckets) -> Api<extensions::BackupBucket> {
    Api::all(ctx.seed.clone())
}
