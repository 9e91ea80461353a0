//! The ManagedResource deletion path (spec §5.6) and the release of objects switched to
//! `mode=Ignore`.

use std::time::Duration;

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use serde_json::json;

use seedlet_api::conditions::ConditionStatus;
use seedlet_api::names::{condition_types, managed_resources, reasons};
use seedlet_api::resources::{ManagedResource, ObjectReference};
use seedlet_runtime::finalizer;
use seedlet_runtime::retry::{self, RetryPolicy};

use super::error::Error;
use super::status::StatusWriter;
use super::{Applier, apply, prune};

/// Requeue delay while deletions are pending (spec §5.4 step 7).
pub const DELETION_PENDING_REQUEUE: Duration = Duration::from_secs(5);

/// Removes origin and description from a released object if it still names this MR.
pub async fn release(
    ctx: &Applier,
    reference: &ObjectReference,
    origin: &str,
) -> Result<(), kube::Error> {
    let api_version = reference.api_version.as_deref().unwrap_or_default();
    let kind = reference.kind.as_deref().unwrap_or_default();
    let Some(resolved) = ctx.kinds.resolve(&ctx.client(), api_version, kind).await? else {
        return Ok(());
    };
    let api = apply::dynamic_api(&ctx.client(), &resolved, reference.namespace.as_deref());
    let name = reference.name.as_deref().unwrap_or_default();
    let Some(live) = retry::idempotent(&RetryPolicy::RECONCILE, || api.get_opt(name)).await? else {
        return Ok(());
    };
    if live
        .annotations()
        .get(managed_resources::ORIGIN)
        .map(String::as_str)
        != Some(origin)
    {
        return Ok(());
    }
    let patch = json!({"metadata": {"annotations": {managed_resources::ORIGIN: null, managed_resources::DESCRIPTION: null}}});
    let (params, patch) = (PatchParams::default(), Patch::Merge(&patch));
    retry::idempotent(&RetryPolicy::RECONCILE, || api.patch(name, &params, &patch)).await?;
    Ok(())
}

/// The deletion path (spec §5.6).
pub async fn delete(
    mr: &ManagedResource,
    ctx: &Applier,
    api: &Api<ManagedResource>,
    key: &str,
    mut status: StatusWriter,
    finalizer_name: &str,
) -> Result<Action, Error> {
    status.set(
        condition_types::RESOURCES_HEALTHY,
        ConditionStatus::False,
        reasons::DELETION_PENDING,
        reasons::DELETION_PENDING_MESSAGE,
    );
    status.set(
        condition_types::RESOURCES_PROGRESSING,
        ConditionStatus::True,
        reasons::DELETION_PENDING,
        reasons::DELETION_PENDING_MESSAGE,
    );
    if mr.spec.keep_objects != Some(true) {
        status.set(
            condition_types::RESOURCES_APPLIED,
            ConditionStatus::Progressing,
            reasons::DELETION_PENDING,
            reasons::DELETION_PENDING_MESSAGE,
        );
        let refs = mr
            .status
            .as_ref()
            .map(|s| s.resources.clone())
            .unwrap_or_default();
        let pruned = prune::prune(&ctx.client(), &ctx.kinds, &refs, ctx.clock.now()).await;
        if !pruned.failed.is_empty() {
            let failures = pruned.failed.join(", ");
            status.set(
                condition_types::RESOURCES_APPLIED,
                ConditionStatus::False,
                reasons::DELETION_FAILED,
                &format!("Could not delete all resources: {failures}"),
            );
            status.write(api, key).await?;
            return Err(Error::Prune {
                key: key.to_owned(),
                failures,
            });
        }
        if !pruned.pending.is_empty() {
            status.write(api, key).await?;
            return Ok(Action::requeue(DELETION_PENDING_REQUEUE));
        }
    }
    let wrote = status.write(api, key).await?;
    let finalizer_error = |source| Error::Finalizer {
        key: key.to_owned(),
        source,
    };
    // The status write just moved the resourceVersion `mr` carries: the guarded finalizer patch
    // needs the latest version, or every deletion that writes status here ends in a 409.
    let latest;
    let current = if wrote {
        let name = mr.name_any();
        match retry::idempotent(&RetryPolicy::RECONCILE, || api.get_opt(&name))
            .await
            .map_err(finalizer_error)?
        {
            Some(read) => {
                latest = read;
                &latest
            }
            None => return Ok(Action::await_change()),
        }
    } else {
        mr
    };
    retry::idempotent(&RetryPolicy::RECONCILE, || {
        finalizer::remove(api, current, finalizer_name)
    })
    .await
    .map_err(finalizer_error)?;
    Ok(Action::await_change())
}
