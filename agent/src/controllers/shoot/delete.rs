//! The delete path of the Shoot controller (spec §5.1, §5.4): for a deleting shoot of this seed
//! with our `gardener` finalizer, wait until the garden's Bastions of the shoot are gone, pass
//! the reconcile decision and seed gate, start a `Delete` operation, run the delete flow of
//! [`super::delete_flow`] with progress and `lastErrors`, then finalize: delete the Cluster,
//! report success, remove the finalizer (the Shoot then goes).
//!
//! A shoot that never started an operation (`status.uid` empty) skips the gate and the
//! operation start; its flow finds no extension objects and finishes within seconds. With
//! `controllers.shoot.enabled: false` the Cluster sync runs its own, shorter deletion instead.
//! The seed-side steps (Bastions, Cluster, namespace, ShootState) are [`crate::shoot_teardown`]'s.

use std::sync::Arc;

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::common::{LastError, LastOperationState, LastOperationType};
use seedlet_api::core::Shoot;
use seedlet_api::names::finalizers;
use seedlet_runtime::events::EventType;
use serde_json::Value;

use super::delete_flow;
use super::reconcile::{self, Error, Gate, Reporting, drive, gate, patch_status, report_failure};
use super::tasks::{FlowCtx, Shared, TaskError};
use super::{Shoots, status};
use crate::cluster_shoot::stored_technical_id;
use crate::shoot_teardown::{self, BASTION_POLL, Clients, has_finalizer};

/// Whether the shoot ever started an operation (`status.uid` set, spec §5.1).
pub fn was_operated(shoot: &Shoot) -> bool {
    shoot
        .status
        .as_ref()
        .and_then(|s| s.uid.as_deref())
        .is_some_and(|uid| !uid.is_empty())
}

/// Whether a previous run already finished the deletion (`Delete` `Succeeded`): only the
/// finalization is left.
pub fn deletion_succeeded(shoot: &Shoot) -> bool {
    shoot.last_operation().is_some_and(|op| {
        op.type_ == LastOperationType::Delete && op.state == LastOperationState::Succeeded
    })
}

fn clients(ctx: &Shoots) -> Clients<'_> {
    Clients {
        seed: &ctx.seed,
        garden: &ctx.garden,
        seed_name: &ctx.seed_name,
        field_manager: ctx.field_manager,
        clock: ctx.clock.as_ref(),
    }
}

fn teardown_error(key: &str, error: &shoot_teardown::Error) -> Error {
    Error::Flow {
        key: key.to_owned(),
        message: seedlet_runtime::error_chain(error),
    }
}

/// Runs the delete path for `shoot` (deleting, of this seed).
///
/// # Errors
/// See [`Error`]; a failed flow is also written into the shoot's status.
pub async fn run(shoot: &Arc<Shoot>, ctx: &Shoots) -> Result<Action, Error> {
    if !has_finalizer(shoot) {
        return Ok(Action::await_change());
    }
    let (Some(namespace), Some(name)) = (shoot.namespace(), shoot.metadata.name.clone()) else {
        return Err(Error::MissingKey);
    };
    let key = format!("{namespace}/{name}");
    let shoots: Api<Shoot> = Api::namespaced(ctx.garden.clone(), &namespace);
    // The garden's bastion controller deletes the shoot's Bastions and this agent's bastion
    // controller their extension objects; nothing is deleted before they are gone.
    let bastions = shoot_teardown::bastions_of(clients(ctx), &namespace, &name)
        .await
        .map_err(|error| teardown_error(&key, &error))?;
    if !bastions.is_empty() {
        tracing::debug!(shoot = %key, ?bastions, "waiting for the shoot's bastions to go");
        return Ok(Action::requeue(BASTION_POLL));
    }
    let technical_id = stored_technical_id(shoot).map(str::to_owned);
    if deletion_succeeded(shoot) {
        return finalize(shoot, ctx, &shoots, &key, technical_id.as_deref()).await;
    }
    let Some(technical_id) = technical_id else {
        // Nothing of the shoot was ever written to the seed.
        return finalize(shoot, ctx, &shoots, &key, None).await;
    };
    let type_ = LastOperationType::Delete;
    let operated = was_operated(shoot);
    let mut previous_errors: Vec<LastError> = Vec::new();
    let seed = if operated {
        let seed = match gate(shoot, ctx, &shoots, &key, type_).await? {
            Gate::Open(seed, _) => *seed,
            Gate::Closed(action) => return Ok(action),
        };
        let now = ctx.clock.now();
        let start = status::start(shoot, type_, &ctx.identity, &technical_id, now);
        patch_status(&shoots, &key, &start).await?;
        previous_errors = status::previous_errors(&start);
        ctx.events
            .publish(
                shoot.as_ref(),
                EventType::Normal,
                "Deleting",
                "Delete",
                "Deleting Shoot cluster",
            )
            .await;
        seed
    } else {
        reconcile::seed(ctx).await?
    };
    let flow_ctx = Arc::new(FlowCtx {
        seed: ctx.seed.clone(),
        garden: ctx.garden.clone(),
        shoot: shoot.clone(),
        seed_object: Arc::new(seed),
        registrations: ctx.registrations.state(),
        namespace: technical_id.clone(),
        field_manager: ctx.field_manager,
        clock: ctx.clock.clone(),
        shared: std::sync::Mutex::new(Shared::default()),
        control_plane_chart: ctx.control_plane_chart.clone(),
    });
    let reporting = Reporting {
        shoots: &shoots,
        key: &key,
        type_,
        event: ("DeleteError", "Delete"),
    };
    // Upstream shows the deletion to the extensions by a Cluster sync before the flow.
    shoot_teardown::show_deletion(clients(ctx), shoot, &technical_id)
        .await
        .map_err(|error| teardown_error(&key, &error))?;
    let facts = match delete_flow::facts(&flow_ctx).await {
        Ok(facts) => facts,
        Err(error) => {
            let failure = pre_flow_failure("Retrieve the facts of the Shoot deletion", error);
            return Err(report_failure(shoot, ctx, &reporting, previous_errors, &failure).await);
        }
    };
    tracing::debug!(shoot = %key, ?facts, "deleting shoot");
    let graph = if super::delete_force::requested(shoot) {
        super::delete_force::flow(&flow_ctx, facts.namespace_alive)
    } else {
        delete_flow::delete(
            &flow_ctx,
            status::flow_name(type_),
            delete_flow::plan(&facts),
        )
    };
    match drive(graph, ctx, &shoots, &key, type_, previous_errors.clone()).await {
        Ok(()) => finalize(shoot, ctx, &shoots, &key, Some(&technical_id)).await,
        Err(error) => Err(report_failure(shoot, ctx, &reporting, previous_errors, &error).await),
    }
}

/// A step before the graph failed: reported like a task of the flow (`taskID` = the step).
fn pre_flow_failure(step: &str, error: TaskError) -> seedlet_runtime::flow::FlowError<TaskError> {
    seedlet_runtime::flow::FlowError {
        flow: status::flow_name(LastOperationType::Delete).to_owned(),
        failures: vec![(
            step.to_owned(),
            seedlet_runtime::flow::TaskFailure::Failed(error),
        )],
        cancelled: false,
    }
}

/// Spec §5.4: delete the Cluster, report `Delete` `Succeeded`, remove the finalizer. The
/// ShootState is deleted once more after the Cluster, so that the ShootState sync (keyed by the
/// Cluster) cannot have written it again in between.
async fn finalize(
    shoot: &Arc<Shoot>,
    ctx: &Shoots,
    shoots: &Api<Shoot>,
    key: &str,
    technical_id: Option<&str>,
) -> Result<Action, Error> {
    let name = shoot.name_any();
    let namespace = shoot.namespace().unwrap_or_default();
    if let Some(technical_id) = technical_id
        && let Err(error) = shoot_teardown::delete_cluster(clients(ctx), technical_id).await
    {
        let description = format!(
            "Could not delete Cluster resource in seed: {}",
            seedlet_runtime::error_chain(&error)
        );
        let errors = shoot
            .status
            .as_ref()
            .map(|s| s.last_errors.clone())
            .unwrap_or_default();
        let patch = status::error(
            shoot,
            &status::Failure {
                type_: LastOperationType::Delete,
                description: &description,
                last_errors: &errors,
                force_retry: false,
            },
            &ctx.identity,
            ctx.retry_duration,
            ctx.clock.now(),
        );
        patch_status(shoots, key, &patch).await?;
        ctx.events
            .publish(
                shoot.as_ref(),
                EventType::Warning,
                "DeleteError",
                "Delete",
                &description,
            )
            .await;
        return Err(teardown_error(key, &error));
    }
    shoot_teardown::delete_shoot_state(clients(ctx), &namespace, &name, key)
        .await
        .map_err(|error| teardown_error(key, &error))?;
    ctx.events
        .publish(
            shoot.as_ref(),
            EventType::Normal,
            "Deleted",
            "Delete",
            "Deleted Shoot cluster",
        )
        .await;
    let success = status::success(
        shoot,
        LastOperationType::Delete,
        shoot.hibernation_enabled(),
        ctx.clock.now(),
    );
    let patch_error = |source| Error::PatchShoot {
        key: key.to_owned(),
        source,
    };
    if !deletion_succeeded(shoot) {
        patch_status(shoots, key, &without_hibernated(success)).await?;
    }
    // The cached shoot is older than the last status write: guard the removal with the latest.
    let Some(fresh) = shoots.get_opt(&name).await.map_err(patch_error)? else {
        return Ok(Action::await_change());
    };
    seedlet_runtime::finalizer::remove(shoots, &fresh, finalizers::GARDENER)
        .await
        .map_err(patch_error)?;
    tracing::info!(shoot = %key, "shoot deleted in the seed, finalizer removed");
    Ok(Action::await_change())
}

fn without_hibernated(mut patch: Value) -> Value {
    if let Some(object) = patch.as_object_mut() {
        object.remove("hibernated");
    }
    patch
}

#[cfg(test)]
#[path = "delete_tests.rs"]
mod tests;
