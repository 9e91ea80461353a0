//! One Shoot reconcile: guards (responsible seed, deletion and migration are not handled
//! here), the reconcile decision and seed gate, operation start, the flow with progress
//! reports, then success or error bookkeeping (spec §1.4, §1.5, §2, §3).

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, ResourceExt};
use seedlet_api::common::{LastError, LastOperationType};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::names::annotations;
use seedlet_runtime::events::EventType;
use seedlet_runtime::flow::{self, RunOptions};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::tasks::{FlowCtx, Shared, TaskError};
use super::{NAME, Shoots, decide, flow as shoot_flow, status};
use seedlet_runtime::controller::{Reason, Reconciler};

/// Requeue after the seed gate refused (spec §1.5).
pub const SEED_GATE_REQUEUE: Duration = Duration::from_secs(15);
/// Requeue while the Cluster sync has not yet given the shoot its technical ID.
pub const WAIT_FOR_CLUSTER_SYNC: Duration = Duration::from_secs(2);
/// Retry delay after a failed reconcile.
pub const RETRY_DELAY: Duration = Duration::from_secs(10);

/// Errors of a Shoot reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The shoot has no namespace or name.
    #[error("shoot without namespace or name")]
    MissingKey,
    /// Reading our Seed failed.
    #[error("reading seed {name}")]
    ReadSeed {
        /// Seed name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Our Seed does not exist.
    #[error("seed {name} not found")]
    SeedNotFound {
        /// Seed name.
        name: String,
    },
    /// Writing the shoot's status or metadata failed.
    #[error("patching shoot {key}")]
    PatchShoot {
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The flow failed; its errors are in the shoot's status.
    #[error("shoot {key}: {message}")]
    Flow {
        /// `namespace/name`.
        key: String,
        /// The flow error.
        message: String,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::MissingKey => "ShootKeyMissing",
            Error::ReadSeed { .. } | Error::SeedNotFound { .. } => "SeedReadError",
            Error::PatchShoot { .. } => "ShootPatchError",
            Error::Flow { .. } => "ReconcileError",
        }
    }
}

impl Reconciler for Shoots {
    type Object = Shoot;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Reconciles one Shoot of this seed.
    async fn reconcile(&self, shoot: Arc<Shoot>) -> Result<Action, Error> {
        run(shoot.clone(), self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        RETRY_DELAY
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }

    /// A shoot reconciled outside a confined maintenance window comes again after
    /// `controllers.shoot.syncPeriod`: the runtime's resync. A shoot's own longer period
    /// (`shoot.gardener.cloud/sync-period`) and the next maintenance window stay its own requeue.
    fn resync_period(&self) -> Option<Duration> {
        Some(self.settings.sync_period)
    }
}

async fn run(shoot: Arc<Shoot>, ctx: &Shoots) -> Result<Action, Error> {
    if decide::responsible_seed(&shoot) != Some(ctx.seed_name.as_str()) {
        return Ok(Action::await_change());
    }
    // A migrating shoot migrates even while it is being deleted (the operation type is Migrate,
    // spec §1.3); the destination deletes it after the restore.
    if crate::shoot_flow_switches::is_migrating(&shoot) {
        let seed = seed(ctx).await?;
        return super::migrate::run(shoot, ctx, seed).await;
    }
    if shoot.metadata.deletion_timestamp.is_some() {
        return super::delete::run(&shoot, ctx).await;
    }
    let (Some(namespace), Some(name)) = (shoot.namespace(), shoot.metadata.name.clone()) else {
        return Err(Error::MissingKey);
    };
    let key = format!("{namespace}/{name}");
    let shoots: Api<Shoot> = Api::namespaced(ctx.garden.clone(), &namespace);
    let type_ = decide::operation_type(&shoot);
    let (seed, infos) = match gate(&shoot, ctx, &shoots, &key, type_).await? {
        Gate::Open(seed, infos) => (*seed, infos),
        Gate::Closed(action) => return Ok(action),
    };
    let now = ctx.clock.now();
    let Some(technical_id) = crate::cluster_shoot::stored_technical_id(&shoot).map(str::to_owned)
    else {
        // The Cluster sync writes the technical ID, the finalizer and the namespace first.
        return Ok(Action::requeue(WAIT_FOR_CLUSTER_SYNC));
    };
    let start = status::start(&shoot, type_, &ctx.identity, &technical_id, now);
    patch_status(&shoots, &key, &start).await?;
    if let Some(request) = decide::operation_request(&shoot) {
        remove_operation_request(&shoots, &shoot, &key, request).await?;
    }
    if shoot
        .status
        .as_ref()
        .and_then(|s| s.uid.as_deref())
        .is_none_or(str::is_empty)
    {
        patch_status(&shoots, &key, &json!({"uid": shoot.metadata.uid})).await?;
    }
    let (reason, message) = if type_ == LastOperationType::Restore {
        ("Restoring", "Restoring Shoot cluster")
    } else {
        ("Reconciling", "Reconciling Shoot cluster")
    };
    ctx.events
        .publish(
            shoot.as_ref(),
            EventType::Normal,
            reason,
            "Reconcile",
            message,
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
        type_,
        previous_errors.clone(),
    )
    .await;
    let now = ctx.clock.now();
    match outcome {
        Ok(()) => {
            let mut patch = status::success(&shoot, type_, shoot.hibernation_enabled(), now);
            if ctx.control_plane_chart.is_none() {
                // The flow skipped the control-plane chart's tasks: say so.
                let description = format!(
                    "{} {}",
                    status::success_description(type_),
                    super::control_plane::NOT_CONFIGURED
                );
                patch["lastOperation"]["description"] = json!(description);
            }
            patch_status(&shoots, &key, &patch).await?;
            remove_tasks(&shoots, &shoot, &key).await?;
            ctx.events
                .publish(
                    shoot.as_ref(),
                    EventType::Normal,
                    "Reconciled",
                    "Reconcile",
                    "Reconciled Shoot cluster",
                )
                .await;
            Ok(infos
                .requeue_after
                .map_or_else(Action::await_change, Action::requeue))
        }
        Err(error) => {
            let reporting = Reporting {
                shoots: &shoots,
                key: &key,
                type_,
                event: ("ReconcileError", "Reconcile"),
            };
            Err(report_failure(&shoot, ctx, &reporting, previous_errors, &error).await)
        }
    }
}

/// The outcome of the reconcile decision and the seed gate.
pub(super) enum Gate {
    /// The flow runs (our Seed, the decision).
    Open(Box<Seed>, decide::Infos),
    /// Not now: what to do instead.
    Closed(Action),
}

/// The reconcile decision (spec §1.4) and seed gate (§1.5) every path goes through: a shoot
/// that is not to be reconciled now is requeued (a never-operated one first gets a pending
/// lastOperation); a seed that is not ready is written into the shoot's status.
pub(super) async fn gate(
    shoot: &Shoot,
    ctx: &Shoots,
    shoots: &Api<Shoot>,
    key: &str,
    type_: LastOperationType,
) -> Result<Gate, Error> {
    let seed = seed(ctx).await?;
    let now = ctx.clock.now();
    let infos = decide::controller_infos(
        shoot,
        Some(&seed),
        &ctx.settings,
        now,
        rand::random::<f64>(),
    );
    if infos.reconcile_now.is_err() {
        if shoot.last_operation().is_none() {
            // Upstream writes `{state: Pending}` with an empty type [QUIRK]; an empty type is not
            // a valid LastOperationType, so the pending operation carries its computed type.
            let pending = json!({"lastOperation": {"type": type_, "state": "Pending", "progress": 0,
                "description": "", "lastUpdateTime": crate::extension_sync::operation::truncate(now).to_string()}});
            patch_status(shoots, key, &pending).await?;
        }
        return Ok(Gate::Closed(
            infos
                .requeue_after
                .map_or_else(Action::await_change, Action::requeue),
        ));
    }
    if let Err(message) = decide::seed_gate(&seed, &ctx.identity) {
        let description = format!("Shoot cannot be reconciled on seed: {message}");
        let stored = shoot.last_operation().map(|op| op.description.as_str());
        // Upstream compares without the retry suffix and so re-patches every time [QUIRK]; the
        // stored text (with suffix) is compared here.
        if stored != Some(format!("{description}{}", status::RETRY_SUFFIX).as_str()) {
            let errors = shoot
                .status
                .as_ref()
                .map(|s| s.last_errors.clone())
                .unwrap_or_default();
            let patch = status::error(
                shoot,
                &status::Failure {
                    type_,
                    description: &description,
                    last_errors: &errors,
                    force_retry: true,
                },
                &ctx.identity,
                ctx.retry_duration,
                now,
            );
            patch_status(shoots, key, &patch).await?;
        }
        return Ok(Gate::Closed(Action::requeue(SEED_GATE_REQUEUE)));
    }
    Ok(Gate::Open(Box::new(seed), infos))
}

/// Where and as what a flow's failure is reported.
pub(super) struct Reporting<'a> {
    /// The shoot's namespace.
    pub shoots: &'a Api<Shoot>,
    /// `namespace/name`.
    pub key: &'a str,
    /// The operation type.
    pub type_: LastOperationType,
    /// Event reason and action (`ReconcileError`/`Reconcile`, `DeleteError`/`Delete`).
    pub event: (&'static str, &'static str),
}

/// Writes a failed flow into the shoot's status (spec §2.4, §2.5): one lastError per failed
/// task with the extension's codes, the previous entries of other tasks kept, the flow error as
/// description; publishes the warning event and returns the reconcile error.
pub(super) async fn report_failure(
    shoot: &Arc<Shoot>,
    ctx: &Shoots,
    reporting: &Reporting<'_>,
    previous_errors: Vec<LastError>,
    error: &flow::FlowError<TaskError>,
) -> Error {
    let Reporting {
        shoots,
        key,
        type_,
        event: (reason, action),
    } = *reporting;
    let now = ctx.clock.now();
    let (errors, description) = status::flow_failure(previous_errors, error, now);
    let latest = match shoots.get(&shoot.name_any()).await {
        Ok(latest) => latest,
        Err(source) => {
            return Error::PatchShoot {
                key: key.to_owned(),
                source,
            };
        }
    };
    let patch = status::error(
        &latest,
        &status::Failure {
            type_,
            description: &description,
            last_errors: &errors,
            force_retry: false,
        },
        &ctx.identity,
        ctx.retry_duration,
        now,
    );
    if let Err(error) = patch_status(shoots, key, &patch).await {
        return error;
    }
    ctx.events
        .publish(
            shoot.as_ref(),
            EventType::Warning,
            reason,
            action,
            &description,
        )
        .await;
    Error::Flow {
        key: key.to_owned(),
        message: error.to_string(),
    }
}

/// Runs the reconcile flow, writing progress (at most once per progress report period) and
/// dropping the lastErrors entry of each task that succeeds.
#[allow(clippy::too_many_arguments)]
async fn run_flow(
    shoot: &Arc<Shoot>,
    ctx: &Shoots,
    shoots: &Api<Shoot>,
    key: &str,
    technical_id: &str,
    seed: Seed,
    type_: LastOperationType,
    previous_errors: Vec<LastError>,
) -> Result<(), flow::FlowError<TaskError>> {
    let registrations = ctx.registrations.state();
    let flow_ctx = Arc::new(FlowCtx {
        seed: ctx.seed.clone(),
        garden: ctx.garden.clone(),
        shoot: shoot.clone(),
        seed_object: Arc::new(seed),
        registrations,
        namespace: technical_id.to_owned(),
        field_manager: ctx.field_manager,
        clock: ctx.clock.clone(),
        shared: std::sync::Mutex::new(Shared {
            restore: (type_ == LastOperationType::Restore).then(Default::default),
            ..Shared::default()
        }),
        control_plane_chart: ctx.control_plane_chart.clone(),
    });
    let skip_readiness = shoot
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(annotations::SHOOT_SKIP_READINESS));
    let options = shoot_flow::Options {
        restore: type_ == LastOperationType::Restore,
        skip_readiness,
    };
    let graph = shoot_flow::reconcile(&flow_ctx, status::flow_name(type_), options);
    drive(graph, ctx, shoots, key, type_, previous_errors).await
}

/// Runs `graph`, writing progress (at most once per progress report period) and dropping the
/// lastErrors entry of each task that succeeds.
pub(super) async fn drive(
    graph: flow::Flow<TaskError>,
    ctx: &Shoots,
    shoots: &Api<Shoot>,
    key: &str,
    type_: LastOperationType,
    previous_errors: Vec<LastError>,
) -> Result<(), flow::FlowError<TaskError>> {
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
            let mut patch = Value::Null;
            if let Some(kept) = status::without_task(&errors, &progress.completed) {
                errors = kept;
                patch = json!({"lastErrors": if errors.is_empty() { Value::Null } else { json!(errors) }});
            }
            let due = match (ctx.progress_report_period, last_write) {
                (Some(period), Some(at)) => at.elapsed() >= period,
                _ => true,
            };
            if due && progress.percent < 100 {
                let report =
                    status::progress(type_, progress.percent, &progress.running, ctx.clock.now());
                merge(&mut patch, report);
                last_write = Some(tokio::time::Instant::now());
            }
            if !patch.is_null() {
                // Progress is best effort: a failed write is retried with the next report.
                let _ = patch_status(shoots, key, &patch).await;
            }
        }
    };
    let (result, ()) = tokio::join!(flow::run(graph, run_options), writer);
    result
}

fn merge(target: &mut Value, source: Value) {
    match (target.as_object_mut(), source) {
        (Some(target), Value::Object(source)) => target.extend(source),
        (None, source) => *target = source,
        _ => {}
    }
}

pub(super) async fn seed(ctx: &Shoots) -> Result<Seed, Error> {
    if let Some(seed) = ctx.seeds.get(&ObjectRef::new(&ctx.seed_name)) {
        return Ok(seed.as_ref().clone());
    }
    let api: Api<Seed> = Api::all(ctx.garden.clone());
    api.get_opt(&ctx.seed_name)
        .await
        .map_err(|source| Error::ReadSeed {
            name: ctx.seed_name.clone(),
            source,
        })?
        .ok_or_else(|| Error::SeedNotFound {
            name: ctx.seed_name.clone(),
        })
}

pub(super) async fn patch_status(
    shoots: &Api<Shoot>,
    key: &str,
    status: &Value,
) -> Result<(), Error> {
    let name = key.rsplit('/').next().unwrap_or(key);
    shoots
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": status})),
        )
        .await
        .map(|_| ())
        .map_err(|source| Error::PatchShoot {
            key: key.to_owned(),
            source,
        })
}

/// Removes the operation request this run answers from `gardener.cloud/operation` (the whole
/// annotation when nothing else is listed), as gardener-apiserver would have when it bumped the
/// generation ([`decide::operation_request`]); status first, annotation second, like gardenlet.
async fn remove_operation_request(
    shoots: &Api<Shoot>,
    shoot: &Shoot,
    key: &str,
    request: &str,
) -> Result<(), Error> {
    let current = shoot
        .annotations()
        .get(annotations::OPERATION)
        .map(String::as_str)
        .unwrap_or_default();
    let rest: Vec<&str> = current
        .split(';')
        .map(str::trim)
        .filter(|operation| !operation.is_empty() && *operation != request)
        .collect();
    let value = if rest.is_empty() {
        Value::Null
    } else {
        json!(rest.join(";"))
    };
    let patch = json!({"metadata": {"annotations": {annotations::OPERATION: value}}});
    shoots
        .patch(
            &shoot.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .map(|_| ())
        .map_err(|source| Error::PatchShoot {
            key: key.to_owned(),
            source,
        })
}

/// Removes `shoot.gardener.cloud/tasks` after a successful run, only if the generation is still
/// the one the flow started with (spec §1.7).
async fn remove_tasks(shoots: &Api<Shoot>, shoot: &Shoot, key: &str) -> Result<(), Error> {
    let has_tasks = shoot
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(annotations::SHOOT_TASKS));
    if !has_tasks {
        return Ok(());
    }
    let name = shoot.name_any();
    let latest = shoots
        .get(&name)
        .await
        .map_err(|source| Error::PatchShoot {
            key: key.to_owned(),
            source,
        })?;
    if latest.metadata.generation != shoot.metadata.generation {
        return Ok(());
    }
    let patch = json!({"metadata": {"annotations": {annotations::SHOOT_TASKS: null}}});
    shoots
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| ())
        .map_err(|source| Error::PatchShoot {
            key: key.to_owned(),
            source,
        })
}
