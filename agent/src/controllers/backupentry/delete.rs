//! BackupEntry deletion (spec §2.5): the grace period (`Delete/Pending` until it is over, unless
//! the force-deletion annotation is set), then the bucket check, the credentials copy, the
//! extension object confirmed and deleted (polled every 5 s), the seed secret, the success
//! status and the finalizer.

use std::time::Duration;

use kube::ResourceExt;
use kube::runtime::controller::Action;
use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::core::BackupEntry;
use seedlet_api::names::finalizers;

use super::BackupEntries;
use super::desired;
use super::io::{
    Error, context_of, entries, entry_credentials, extension_entries, healthy_bucket, key,
    report_error, report_error_as, write_status,
};
use crate::extension_sync::{credentials, object, operation};
use seedlet_runtime::error_chain;

/// Poll period while the extension object is being deleted.
pub const DELETION_POLL: Duration = Duration::from_secs(5);

/// Runs one deletion pass of an entry that still carries the `gardener` finalizer.
///
/// # Errors
/// See [`Error`].
pub async fn run(entry: &BackupEntry, ctx: &BackupEntries) -> Result<Action, Error> {
    const TYPE: LastOperationType = LastOperationType::Delete;
    let name = entry.name_any();
    let now = ctx.clock.now();
    let deleted = entry
        .metadata
        .deletion_timestamp
        .as_ref()
        .map_or(now, |time| time.0);
    let force = seedlet_api::names::parses_as_true(
        entry
            .annotations()
            .get(desired::FORCE_DELETION)
            .map(String::as_str),
    );
    let due = desired::deletion_due(
        deleted,
        ctx.settings.grace_hours,
        &ctx.settings.grace_purposes,
        entry
            .annotations()
            .get(desired::SHOOT_PURPOSE)
            .map(String::as_str),
        force,
    );
    if let Some(due) = due.filter(|due| *due > now) {
        let pending = operation::last_operation(
            TYPE,
            LastOperationState::Pending,
            0,
            format!(
                "Deletion of backup entry is scheduled for {}",
                desired::go_time(due)
            ),
            now,
        );
        let previous_error = entry.status.as_ref().and_then(|s| s.last_error.as_ref());
        write_status(
            ctx,
            entry,
            operation::status_fields(&pending, previous_error, entry.metadata.generation),
        )
        .await?;
        let remaining = due.duration_since(now);
        let remaining = Duration::try_from(remaining).map_err(|_| Error::Overdue)?;
        return Ok(Action::requeue(remaining));
    }

    let start = operation::last_operation(
        TYPE,
        LastOperationState::Processing,
        0,
        desired::started(TYPE),
        now,
    );
    let previous_error = entry.status.as_ref().and_then(|s| s.last_error.as_ref());
    write_status(
        ctx,
        entry,
        operation::status_fields(&start, previous_error, entry.metadata.generation),
    )
    .await?;
    let Some(bucket) = healthy_bucket(entry, TYPE, ctx).await? else {
        return Ok(Action::await_change());
    };
    let credentials = match entry_credentials(&bucket, ctx).await {
        Ok(credentials) => credentials,
        Err(error) => {
            report_error(ctx, entry, TYPE, error.to_string(), Vec::new()).await?;
            return Err(error);
        }
    };
    credentials::write_seed_secret(
        &ctx.seed,
        &desired::seed_secret_name(&name),
        &credentials,
        &context_of(entry),
        now,
        true,
        ctx.field_manager,
    )
    .await
    .map_err(|error| Error::Credentials {
        message: error_chain(&error),
    })?;
    let remaining = object::delete(&extension_entries(ctx), &name, true)
        .await
        .map_err(|source| Error::Extension {
            step: "deleting",
            entry: name.clone(),
            source,
        })?;
    if let Some(remaining) = remaining {
        let Some(error) = remaining.status.and_then(|s| s.last_error) else {
            return Ok(Action::requeue(DELETION_POLL));
        };
        report_error_as(
            ctx,
            entry,
            TYPE,
            "DeleteError",
            error.description.clone(),
            error.codes,
        )
        .await?;
        return Err(Error::ExtensionReported {
            entry: name,
            description: error.description,
        });
    }
    credentials::delete_seed_secret(&ctx.seed, &desired::seed_secret_name(&name))
        .await
        .map_err(|error| Error::Credentials {
            message: error_chain(&error),
        })?;
    let done = operation::last_operation(
        TYPE,
        LastOperationState::Succeeded,
        100,
        desired::succeeded(TYPE),
        now,
    );
    write_status(
        ctx,
        entry,
        operation::status_fields(&done, None, entry.metadata.generation),
    )
    .await?;
    let api = entries(ctx, &entry.namespace().unwrap_or_default());
    if let Some(fresh) = api.get_opt(&name).await.map_err(|source| Error::Entry {
        step: "reading",
        entry: key(entry),
        source,
    })? {
        seedlet_runtime::finalizer::remove(&api, &fresh, finalizers::GARDENER)
            .await
            .map_err(|source| Error::Entry {
                step: "removing finalizer",
                entry: key(entry),
                source,
            })?;
    }
    Ok(Action::await_change())
}
