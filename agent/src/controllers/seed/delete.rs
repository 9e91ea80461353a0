//! Seed deletion (spec §5.2): while Shoots or BackupBuckets still reference the Seed it waits
//! (1 m for Shoots, 5 s for buckets, after deleting the Seed's own bucket), then removes the
//! `gardener` finalizer. No success status is written, as upstream.

use std::time::Duration;

use kube::api::{DeleteParams, ListParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::core::{BackupBucket, Seed, Shoot};
use seedlet_api::names::finalizers;
use serde_json::json;

use super::SeedStatus;
use super::flow;
use super::io::{Error, write_status};
use crate::extension_sync::operation;

/// Requeue while Shoots reference the Seed.
pub const SHOOTS_REQUEUE: Duration = Duration::from_secs(60);
/// Requeue while BackupBuckets reference the Seed.
pub const BUCKETS_REQUEUE: Duration = Duration::from_secs(5);

/// `Can't delete Seed, because the following objects are still referencing it: <kind>=[…]`.
pub fn still_referenced(kind: &str, names: &[String]) -> String {
    format!(
        "Can't delete Seed, because the following objects are still referencing it: {kind}=[{}]",
        names.join(" ")
    )
}

/// A Normal Event `ResourceReferenced`/`Delete` on the Seed.
async fn referenced(ctx: &SeedStatus, seed: &Seed, message: &str) {
    ctx.events
        .named("seed-controller")
        .publish(
            seed,
            seedlet_runtime::events::EventType::Normal,
            "ResourceReferenced",
            "Delete",
            message,
        )
        .await;
}

/// Runs one deletion pass.
///
/// # Errors
/// See [`Error`].
pub async fn run(seed: &Seed, ctx: &SeedStatus) -> Result<Action, Error> {
    let name = seed.name_any();
    if !seed.finalizers().iter().any(|f| f == finalizers::GARDENER) {
        return Ok(Action::await_change());
    }
    let started = operation::last_operation(
        LastOperationType::Delete,
        LastOperationState::Processing,
        0,
        flow::DELETE_STARTED,
        ctx.clock.now(),
    );
    write_status(ctx, seed, &json!({"status": {"lastOperation": started}})).await?;

    let shoots: Vec<String> = Api::<Shoot>::all(ctx.garden.clone())
        .list(&ListParams::default())
        .await
        .map_err(|source| Error::References {
            kind: "Shoots",
            seed: name.clone(),
            source,
        })?
        .items
        .iter()
        .filter(|shoot| shoot.spec.seed_name.as_deref() == Some(name.as_str()))
        .map(|shoot| {
            format!(
                "{}/{}",
                shoot.namespace().unwrap_or_default(),
                shoot.name_any()
            )
        })
        .collect();
    if !shoots.is_empty() {
        referenced(ctx, seed, &still_referenced("Shoots", &shoots)).await;
        return Ok(Action::requeue(SHOOTS_REQUEUE));
    }
    let buckets_api = Api::<BackupBucket>::all(ctx.garden.clone());
    if seed.spec.backup.is_some()
        && let Some(uid) = seed.uid()
    {
        match buckets_api.delete(&uid, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            Err(source) => {
                return Err(Error::BackupBucket {
                    step: "deleting",
                    bucket: uid,
                    source,
                });
            }
        }
    }
    let buckets: Vec<String> = buckets_api
        .list(&ListParams::default())
        .await
        .map_err(|source| Error::References {
            kind: "BackupBuckets",
            seed: name.clone(),
            source,
        })?
        .items
        .iter()
        .filter(|bucket| bucket.spec.seed_name.as_deref() == Some(name.as_str()))
        .map(ResourceExt::name_any)
        .collect();
    if !buckets.is_empty() {
        referenced(ctx, seed, &still_referenced("BackupBuckets", &buckets)).await;
        return Ok(Action::requeue(BUCKETS_REQUEUE));
    }
    let seeds = Api::<Seed>::all(ctx.garden.clone());
    let Some(fresh) = seeds
        .get_opt(&name)
        .await
        .map_err(|source| Error::Finalizer {
            step: "reading before removing",
            seed: name.clone(),
            source,
        })?
    else {
        return Ok(Action::await_change());
    };
    seedlet_runtime::finalizer::remove(&seeds, &fresh, finalizers::GARDENER)
        .await
        .map_err(|source| Error::Finalizer {
            step: "removing",
            seed: name,
            source,
        })?;
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn still_referenced_lists_the_objects() {
        assert_eq!(
            still_referenced("Shoots", &["garden-a/x".into(), "garden-b/y".into()]),
            "Can't delete Seed, because the following objects are still referencing it: Shoots=[garden-a/x garden-b/y]"
        );
    }
}
