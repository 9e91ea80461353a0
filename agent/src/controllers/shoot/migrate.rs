//! The migrate path of the Shoot controller on the source seed (spec §6.1–§6.3): a shoot whose
//! `spec.seedName` names another seed while `status.seedName` still names this one. Gates
//! (the garden's `ReadyForMigration` constraint, the reconcile decision and the seed gate), the
//! operation start (`Migrate`, `status.seedName` kept), a shoot-only sync of the Cluster (so the
//! ShootState sync sees the migration and keeps the state of deleted objects), the flow of
//! [`super::migrate_flow`] with progress and lastErrors, then the hand-over: the Cluster
//! deleted, `shoot.gardener.cloud/tasks` removed, `Migrate Succeeded 100 %` with
//! `status.seedName` set to the destination. No requeue: the shoot is the destination's now.
//!
//! Upstream's apiserver bumps the generation on every status write while lastOperation is
//! `Migrate Succeeded`/`Aborted`, which is what wakes the destination gardenlet despite its
//! generation predicate. Gardens without gardener-apiserver (CRD-served Shoots) do not, so the
//! controller's trigger ([`super::trigger`]) also lets the hand-over through — once, when the
//! shoot enters it, not when the destination's restore leaves it again.

use std::sync::Arc;

use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::common::{LastError, LastOperationState, LastOperationType};
use seedlet_api::conditions::ConditionStatus;
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::extensions::{Cluster, embed};
use seedlet_api::names::{annotations, shoot_lifecycle};
use seedlet_runtime::events::EventType;
use seedlet_runtime::flow::{self, RunOptions, TaskFailure};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::migrate_flow::{self, Facts};
use super::reconcile::{Error, patch_status};
use super::tasks::{FlowCtx, Shared, TaskError};
use super::{Shoots, decide, status};
use crate::shoot_state;

const TYPE: LastOperationType = LastOperationType::Migrate;

/// For a shoot whose last operation is a `Migrate` that succeeded or was aborted: its
/// `status.seedName` (the destination after a migration; `None` after gardenlet ≤ v1.65's forced
/// restore, which cleared it); `None` for any other shoot.
pub fn hand_over(shoot: &Shoot) -> Option<Option<&str>> {
    let last = shoot.last_operation()?;
    let done = last.type_ == LastOperationType::Migrate
        && matches!(
            last.state,
            LastOperationState::Succeeded | LastOperationState::Aborted
        );
    done.then(|| shoot.status.as_ref().and_then(|s| s.seed_name.as_deref()))
}

/// The `ReadyForMigration` gate of §6.1: `Err` with upstream's message unless the garden
/// confirmed that the destination seed can take the shoot.
pub fn ready_for_migration(shoot: &Shoot) -> Result<(), String> {
    let name = shoot.name_any();
    let constraint = shoot.status.as_ref().and_then(|s| {
        s.constraints
            .iter()
            .find(|c| c.type_ == shoot_lifecycle::READY_FOR_MIGRATION)
    });
    match constraint {
        None => Err(format!(
            "waiting for confirmation that destination Seed is available to host the control plane of Shoot {name}"
        )),
        Some(c) if c.status != ConditionStatus::True => Err(format!(
            "destination Seed is not available to host the control plane of Shoot {name}: {}",
            c.message
        )),
        Some(_) => Ok(()),
    }
}

/// Runs the migrate path for a shoot of this (source) seed.
///
/// # Errors
/// See [`Error`]; flow errors are also written into the shoot's status.
pub async fn run(shoot: Arc<Shoot>, ctx: &Shoots, seed: Seed) -> Result<Action, Error> {
    let (Some(namespace), Some(name)) = (shoot.namespace(), shoot.metadata.name.clone()) else {
        return Err(Error::MissingKey);
    };
    let key = format!("{namespace}/{name}");
    // Plain errors: the status stays untouched and the queue backs off (spec §6.1, §9.26).
    ready_for_migration(&shoot).map_err(|message| Error::Flow {
        key: key.clone(),
        message,
    })?;
    let shoots: Api<Shoot> = Api::namespaced(ctx.garden.clone(), &namespace);
    let now = ctx.clock.now();
    let infos = decide::controller_infos(&shoot, Some(&seed), &ctx.settings, now, rand::random());
    if infos.reconcile_now.is_err() {
        return Ok(infos
            .requeue_after
            .map_or_else(Action::await_change, Action::requeue));
    }
    if let Err(message) = decide::seed_gate(&seed, &ctx.identity) {
        let description = format!("Shoot cannot be reconciled on seed: {message}");
        let errors = shoot
            .status
            .as_ref()
            .map(|s| s.last_errors.clone())
            .unwrap_or_default();
        let failure = status::Failure {
            type_: TYPE,
            description: &description,
            last_errors: &errors,
            force_retry: true,
        };
        let patch = status::error(&shoot, &failure, &ctx.identity, ctx.retry_duration, now);
        patch_status(&shoots, &key, &patch).await?;
        return Ok(Action::requeue(super::reconcile::SEED_GATE_REQUEUE));
    }
    let Some(technical_id) = crate::cluster_shoot::stored_technical_id(&shoot).map(str::to_owned)
    else {
        return Err(Error::Flow {
            key,
            message: "a migrating shoot has no status.technicalID".to_owned(),
        });
    };
    let start = status::start(&shoot, TYPE, &ctx.identity, &technical_id, now);
    patch_status(&shoots, &key, &start).await?;
    let started = shoots
        .get(&name)
        .await
        .map_err(|source| Error::PatchShoot {
            key: key.clone(),
            source,
        })?;
    sync_cluster(ctx, &started, &technical_id).await?;
    ctx.events
        .publish(
            shoot.as_ref(),
            EventType::Normal,
            "PrepareMigration",
            "Migrate",
            "Preparing Shoot cluster for migration",
        )
        .await;
    let previous_errors: Vec<LastError> = status::previous_errors(&start);
    let outcome = run_flow(
        &shoot,
        ctx,
        &shoots,
        &key,
        &technical_id,
        seed,
        previous_errors.clone(),
    )
    .await;
    match outcome {
        Ok(()) => hand_over_to_destination(&shoot, ctx, &shoots, &key, &technical_id).await,
        Err(error) => {
            fail(&shoots, &shoot, ctx, &key, &name, previous_errors, &error).await?;
            Err(Error::Flow {
                key,
                message: error.to_string(),
            })
        }
    }
}

/// The success path of §6.3.
async fn hand_over_to_destination(
    shoot: &Shoot,
    ctx: &Shoots,
    shoots: &Api<Shoot>,
    key: &str,
    technical_id: &str,
) -> Result<Action, Error> {
    match Api::<Cluster>::all(ctx.seed.clone())
        .delete(technical_id, &DeleteParams::default())
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.is_not_found() => {}
        Err(source) => {
            let message = format!(
                "Could not delete Cluster resource in seed: {}",
                seedlet_runtime::error_chain(&source)
            );
            ctx.events
                .publish(
                    shoot,
                    EventType::Warning,
                    "DeleteError",
                    "Migrate",
                    &message,
                )
                .await;
            return Err(Error::Flow {
                key: key.to_owned(),
                message,
            });
        }
    }
    let untasked = json!({"metadata": {"annotations": {annotations::SHOOT_TASKS: null}}});
    shoots
        .patch(
            &shoot.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&untasked),
        )
        .await
        .map_err(|source| Error::PatchShoot {
            key: key.to_owned(),
            source,
        })?;
    ctx.events
        .publish(
            shoot,
            EventType::Normal,
            "MigrationPrepared",
            "Migrate",
            "Prepared Shoot cluster for migration",
        )
        .await;
    let patch = status::success(shoot, TYPE, shoot.hibernation_enabled(), ctx.clock.now());
    patch_status(shoots, key, &patch).await?;
    Ok(Action::await_change())
}

/// The error path: lastErrors per failed task (kept entries of other tasks), Error or Failed.
async fn fail(
    shoots: &Api<Shoot>,
    shoot: &Shoot,
    ctx: &Shoots,
    key: &str,
    name: &str,
    previous_errors: Vec<LastError>,
    error: &flow::FlowError<TaskError>,
) -> Result<(), Error> {
    let now = ctx.clock.now();
    let (errors, description) = status::flow_failure(previous_errors, error, now);
    let latest = shoots.get(name).await.map_err(|source| Error::PatchShoot {
        key: key.to_owned(),
        source,
    })?;
    let failure = status::Failure {
        type_: TYPE,
        description: &description,
        last_errors: &errors,
        force_retry: false,
    };
    let patch = status::error(&latest, &failure, &ctx.identity, ctx.retry_duration, now);
    patch_status(shoots, key, &patch).await?;
    ctx.events
        .publish(
            shoot,
            EventType::Warning,
            "MigrationPreparationFailed",
            "Migrate",
            &description,
        )
        .await;
    Ok(())
}

/// Runs the migrate flow, writing progress (at most once per progress report period) and
/// dropping the lastErrors entry of each task that succeeds.
async fn run_flow(
    shoot: &Arc<Shoot>,
    ctx: &Shoots,
    shoots: &Api<Shoot>,
    key: &str,
    technical_id: &str,
    seed: Seed,
    previous_errors: Vec<LastError>,
) -> Result<(), flow::FlowError<TaskError>> {
    let namespace_alive = super::migrate_tasks::namespace_alive(&ctx.seed, technical_id)
        .await
        .map_err(|error| flow::FlowError {
            flow: status::flow_name(TYPE).to_owned(),
            failures: vec![(
                "Retrieve the Shoot namespace in the Seed cluster".to_owned(),
                TaskFailure::Failed(error),
            )],
            cancelled: false,
        })?;
    let flow_ctx = Arc::new(FlowCtx {
        seed: ctx.seed.clone(),
        garden: ctx.garden.clone(),
        shoot: shoot.clone(),
        seed_object: Arc::new(seed),
        registrations: ctx.registrations.state(),
        namespace: technical_id.to_owned(),
        field_manager: ctx.field_manager,
        clock: ctx.clock.clone(),
        shared: std::sync::Mutex::new(Shared::default()),
        control_plane_chart: ctx.control_plane_chart.clone(),
    });
    let state = Arc::new(shoot_state::io::Ctx::new(
        ctx.seed.clone(),
        ctx.garden.clone(),
        ctx.metrics.clone(),
        ctx.clock.clone(),
        ctx.field_manager,
    ));
    let graph = migrate_flow::migrate(
        &flow_ctx,
        status::flow_name(TYPE),
        Facts { namespace_alive },
        state,
    );
    let (sender, mut receiver) = mpsc::unbounded_channel::<flow::Progress>();
    let run_options = RunOptions {
        cancel: ctx.stop.child_token(),
        on_progress: Box::new(move |progress| {
            let _ = sender.send(progress.clone());
        }),
    };
    let writer = async {
        let mut errors = previous_errors;
        let mut last_write: Option<tokio::time::Instant> = None;
        while let Some(progress) = receiver.recv().await {
            let mut patch = serde_json::Map::new();
            if let Some(kept) = status::without_task(&errors, &progress.completed) {
                errors = kept;
                let value = if errors.is_empty() {
                    Value::Null
                } else {
                    json!(errors)
                };
                patch.insert("lastErrors".into(), value);
            }
            let due = match (ctx.progress_report_period, last_write) {
                (Some(period), Some(at)) => at.elapsed() >= period,
                _ => true,
            };
            if due && progress.percent < 100 {
                let report =
                    status::progress(TYPE, progress.percent, &progress.running, ctx.clock.now());
                if let Value::Object(report) = report {
                    patch.extend(report);
                }
                last_write = Some(tokio::time::Instant::now());
            }
            if !patch.is_empty() {
                // Progress is best effort: a failed write is retried with the next report.
                let _ = patch_status(shoots, key, &Value::Object(patch)).await;
            }
        }
    };
    let (result, ()) = tokio::join!(flow::run(graph, run_options), writer);
    result
}

/// A shoot-only Cluster sync (spec §1.4): the embedded shoot carries the `Migrate` operation.
async fn sync_cluster(ctx: &Shoots, shoot: &Shoot, technical_id: &str) -> Result<(), Error> {
    let clusters: Api<Cluster> = Api::all(ctx.seed.clone());
    let flow_error = |message: String| Error::Flow {
        key: technical_id.to_owned(),
        message: format!("Shoot cannot be synced with Seed: {message}"),
    };
    let current = clusters
        .get_opt(technical_id)
        .await
        .map_err(|e| flow_error(seedlet_runtime::error_chain(&e)))?;
    let Some(current) = current else {
        return Ok(());
    };
    let embedded = embed(shoot).map_err(|e| flow_error(e.to_string()))?;
    let Some(diff) = crate::merge_patch::merge_diff(&current.spec.shoot, &embedded) else {
        return Ok(());
    };
    let params = PatchParams {
        field_manager: Some(ctx.field_manager.to_owned()),
        ..PatchParams::default()
    };
    clusters
        .patch(
            technical_id,
            &params,
            &Patch::Merge(&json!({"spec": {"shoot": diff}})),
        )
        .await
        .map(|_| ())
        .map_err(|e| flow_error(seedlet_runtime::error_chain(&e)))
}

#[cfg(test)]
#[path = "migrate_tests.rs"]
mod tests;
