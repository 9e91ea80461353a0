//! BackupBucket deletion (spec §1.3): generated secret, credentials re-written into the seed,
//! the extension object confirmed and deleted (polled every 5 s, its lastError reported), then
//! the seed secret, the success status and the finalizers on credentials and bucket.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::core::BackupBucket;
use seedlet_api::names::finalizers;

use super::BackupBuckets;
use super::desired::{self, CREDENTIALS_FINALIZER, LEGACY_CREDENTIALS_FINALIZER};
use super::io::{
    Error, buckets, context_of, credentials_of, error_of, event, extension_buckets, write_status,
};
use crate::extension_sync::{credentials, object, operation};
use seedlet_runtime::events::EventType;

/// Poll period while the extension object is being deleted.
pub const DELETION_POLL: Duration = Duration::from_secs(5);

/// Runs one deletion pass of a bucket that still carries the `gardener` finalizer.
///
/// # Errors
/// See [`Error`].
pub async fn run(bucket: &BackupBucket, ctx: &BackupBuckets) -> Result<Action, Error> {
    let name = bucket.name_any();
    let now = ctx.clock.now();
    let generation = bucket.metadata.generation;
    let started = operation::last_operation(
        LastOperationType::Delete,
        LastOperationState::Processing,
        0,
        desired::DELETE_STARTED,
        now,
    );
    let last_error = bucket.status.as_ref().and_then(|s| s.last_error.as_ref());
    write_status(
        ctx,
        &name,
        operation::status_fields(&started, last_error, generation),
    )
    .await?;

    if let Some(reference) = bucket
        .status
        .as_ref()
        .and_then(|s| s.generated_secret_ref.as_ref())
    {
        delete_generated_secret(ctx, &name, reference).await?;
    }

    let credentials = credentials_of(bucket, ctx).await?;
    credentials::write_seed_secret(
        &ctx.seed,
        &desired::seed_secret_name(&name),
        &credentials,
        &context_of(bucket),
        now,
        true,
        ctx.field_manager,
    )
    .await
    .map_err(|source| Error::Credentials {
        bucket: name.clone(),
        source,
    })?;

    let remaining = object::delete(&extension_buckets(ctx), &name, true)
        .await
        .map_err(|source| Error::Extension {
            step: "deleting",
            bucket: name.clone(),
            source,
        })?;
    if let Some(remaining) = remaining {
        let Some(last_error) = remaining.status.as_ref().and_then(|s| s.last_error.clone()) else {
            return Ok(Action::requeue(DELETION_POLL));
        };
        event(
            ctx,
            bucket,
            EventType::Warning,
            "DeleteError",
            "Delete",
            &last_error.description,
        )
        .await;
        let description = format!("{} Operation will be retried.", last_error.description);
        let failed = operation::last_operation(
            LastOperationType::Delete,
            LastOperationState::Error,
            50,
            description.clone(),
            now,
        );
        let last = error_of(description, last_error.codes.clone());
        write_status(
            ctx,
            &name,
            operation::status_fields(&failed, Some(&last), generation),
        )
        .await?;
        return Err(Error::ExtensionDeletion {
            bucket: name,
            description: last_error.description,
        });
    }

    credentials::delete_seed_secret(&ctx.seed, &desired::seed_secret_name(&name))
        .await
        .map_err(|source| Error::Credentials {
            bucket: name.clone(),
            source,
        })?;
    let done = operation::last_operation(
        LastOperationType::Delete,
        LastOperationState::Succeeded,
        100,
        desired::DELETE_SUCCEEDED,
        now,
    );
    write_status(
        ctx,
        &name,
        operation::status_fields(&done, None, generation),
    )
    .await?;
    credentials::set_finalizers(
        &ctx.garden,
        &credentials,
        None,
        &[LEGACY_CREDENTIALS_FINALIZER, CREDENTIALS_FINALIZER],
    )
    .await
    .map_err(|source| Error::CredentialsFinalizer {
        credentials: format!("{} {}", credentials.kind(), credentials.key()),
        source,
    })?;
    let api = buckets(ctx);
    let fresh = api.get_opt(&name).await.map_err(|source| Error::Bucket {
        step: "reading",
        bucket: name.clone(),
        source,
    })?;
    if let Some(fresh) = fresh {
        seedlet_runtime::finalizer::remove(&api, &fresh, finalizers::GARDENER)
            .await
            .map_err(|source| Error::Bucket {
                step: "removing finalizer",
                bucket: name,
                source,
            })?;
    }
    Ok(Action::await_change())
}

async fn delete_generated_secret(
    ctx: &BackupBuckets,
    bucket: &str,
    reference: &seedlet_api::common::ObjectReference,
) -> Result<(), Error> {
    let namespace = reference.namespace.clone().unwrap_or_default();
    let api: Api<Secret> = Api::namespaced(ctx.garden.clone(), &namespace);
    let step = format!("deleting garden secret {namespace}/{}", reference.name);
    let error = |source| Error::GeneratedSecret {
        step: step.clone(),
        bucket: bucket.to_owned(),
        source,
    };
    if let Some(secret) = api.get_opt(&reference.name).await.map_err(error)? {
        seedlet_runtime::finalizer::remove(&api, &secret, CREDENTIALS_FINALIZER)
            .await
            .map_err(error)?;
        match api.delete(&reference.name, &Default::default()).await {
            Ok(_) => {}
            Err(e) if object::is_gone(&e) => {}
            Err(e) => return Err(error(e)),
        }
    }
    Ok(())
}
