//! One shoot care pass: read the Shoot fresh from the garden → guards (gone, not yet or no longer
//! on this seed, no technical ID yet) → observe the control-plane namespace ([`super::observe`])
//! → decide the conditions ([`super::health`]) and constraints ([`super::constraints`]) → merge
//! them into the stored lists ([`super::merge`]) → write both lists only when they changed.

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_runtime::policy;
use serde_json::json;

use super::constraints::{self, CONSTRAINT_TYPES};
use super::health::{self, CONDITION_TYPES, Facts, Settings};
use super::merge::merged;
use super::observe::observe;
use super::transitions::Judge;
use super::{NAME, ShootCare};
use crate::cluster_shoot::stored_technical_id;
use seedlet_runtime::controller::{Reason, Reconciler};

/// Requeue delay while a Shoot has no `status.seedName` yet (gardenlet's).
pub const WAIT_FOR_SEED_NAME: Duration = Duration::from_secs(30);

/// Errors of one care pass (failed reads of the seed are conditions, not errors).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Shoot object has no name or namespace.
    #[error("shoot without name or namespace")]
    MissingName,
    /// Reading the Shoot from the garden failed.
    #[error("reading shoot {shoot}")]
    ReadShoot {
        /// `namespace/name`.
        shoot: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the Shoot's conditions and constraints failed.
    #[error("writing conditions of shoot {shoot}")]
    WriteStatus {
        /// `namespace/name`.
        shoot: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The pass took longer than the sync period.
    #[error("care of shoot {shoot} timed out")]
    Timeout {
        /// `namespace/name`.
        shoot: String,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::MissingName => "ShootInvalid",
            Error::ReadShoot { .. } => "ShootReadError",
            Error::WriteStatus { .. } => "ShootStatusWriteError",
            Error::Timeout { .. } => "ReconcileTimeout",
        }
    }
}

impl Reconciler for ShootCare {
    type Object = Shoot;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Checks one Shoot, bounded by the sync period; requeues after it.
    async fn reconcile(&self, shoot: Arc<Shoot>) -> Result<Action, Error> {
        match tokio::time::timeout(self.sync_period, care(&shoot, self)).await {
            Ok(result) => result,
            Err(_) => Err(Error::Timeout {
                shoot: policy::object_key(shoot.as_ref()),
            }),
        }
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        self.sync_period.min(Duration::from_secs(5))
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }

    /// Every Shoot is looked at again each `syncPeriod`, by the runtime's resync.
    fn resync_period(&self) -> Option<Duration> {
        Some(self.sync_period)
    }
}

async fn care(cached: &Shoot, ctx: &ShootCare) -> Result<Action, Error> {
    let (Some(namespace), Some(name)) = (cached.namespace(), cached.metadata.name.clone()) else {
        return Err(Error::MissingName);
    };
    let key = format!("{namespace}/{name}");
    let api = Api::<Shoot>::namespaced(ctx.garden.clone(), &namespace);
    let shoot = match api.get_opt(&name).await {
        Ok(Some(shoot)) => shoot,
        Ok(None) => return Ok(Action::await_change()),
        // A garden with the seed authorizer forbids reading a shoot no longer on this seed.
        Err(kube::Error::Api(status)) if status.code == 403 => return Ok(Action::await_change()),
        Err(source) => return Err(Error::ReadShoot { shoot: key, source }),
    };
    let status = shoot.status.clone().unwrap_or_default();
    match status.seed_name.as_deref() {
        None => return Ok(Action::requeue(WAIT_FOR_SEED_NAME)),
        // Its watch event brings the shoot back if it returns to this seed.
        Some(seed) if seed != ctx.seed_name => return Ok(Action::await_change()),
        Some(_) => {}
    }
    // The Cluster sync writes the technical ID before the control-plane namespace exists.
    let Some(control_plane) = stored_technical_id(&shoot).map(str::to_owned) else {
        return Ok(Action::requeue(ctx.sync_period));
    };
    let hibernated = shoot.hibernation_enabled() || status.hibernated.unwrap_or(false);
    let observed = observe(ctx, &shoot, &control_plane, hibernated).await;
    let now = ctx.clock.now();
    let last_operation = status.last_operation.as_ref();
    let has_last_errors = !status.last_errors.is_empty();
    let judge = Judge {
        thresholds: &ctx.thresholds,
        last_operation,
        now,
    };
    let facts = Facts {
        hibernated,
        workerless: shoot.is_workerless(),
        last_operation,
        has_last_errors,
    };
    let settings = Settings {
        stale_after: ctx.stale_after,
        progressing_threshold: ctx.progressing_threshold,
    };
    let next_conditions = merged(
        &status.conditions,
        &CONDITION_TYPES,
        health::conditions(
            &status.conditions,
            &facts,
            &observed.health,
            &settings,
            &judge,
        ),
    );
    let next_constraints = merged(
        &status.constraints,
        &CONSTRAINT_TYPES,
        constraints::constraints(
            &status.constraints,
            &observed.constraints,
            last_operation,
            has_last_errors,
            now,
        ),
    );
    if next_conditions == status.conditions && next_constraints == status.constraints {
        return Ok(Action::requeue(ctx.sync_period));
    }
    let patch = json!({"conditions": next_conditions, "constraints": next_constraints});
    match seedlet_runtime::status::patch_status_guarded(
        &api,
        &shoot,
        patch,
        Some(ctx.field_manager),
    )
    .await
    {
        Ok(()) => Ok(Action::requeue(ctx.sync_period)),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(Action::await_change()),
        Err(source) => Err(Error::WriteStatus { shoot: key, source }),
    }
}
