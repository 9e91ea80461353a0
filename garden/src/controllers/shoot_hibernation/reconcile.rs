//! Hibernation logic: parse the schedules, find the activation that fell due, write
//! `spec.hibernation.enabled` and `status.lastHibernationTriggerTime`, requeue to the next one.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::events::EventType;
use serde_json::json;

use super::schedule::{self, Action as ScheduleAction};
use super::{Hibernation, NAME, schedules_of};

/// Errors of one hibernation reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Shoot has no namespace.
    #[error("shoot {0} without a namespace")]
    MissingNamespace(String),
    /// Writing `spec.hibernation.enabled` failed.
    #[error("patching spec.hibernation.enabled of shoot {shoot}")]
    PatchSpec {
        /// `namespace/name` of the Shoot.
        shoot: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing `status.lastHibernationTriggerTime` failed.
    #[error("patching status.lastHibernationTriggerTime of shoot {shoot}")]
    PatchStatus {
        /// `namespace/name` of the Shoot.
        shoot: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::MissingNamespace(_) => "ShootInvalid",
            Error::PatchSpec { .. } => "ShootPatchError",
            Error::PatchStatus { .. } => "ShootStatusPatchError",
        }
    }
}

impl Reconciler for Hibernation {
    type Object = Shoot;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Acts on a due schedule activation and requeues to the next one (see the module docs).
    /// Idempotent: a repeated run finds no activation after the trigger time it wrote.
    async fn reconcile(&self, shoot: Arc<Shoot>) -> Result<Action, Error> {
        hibernate(&shoot, self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(5)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn hibernate(shoot: &Shoot, ctx: &Hibernation) -> Result<Action, Error> {
    let name = shoot.name_any();
    let namespace = shoot
        .namespace()
        .ok_or_else(|| Error::MissingNamespace(name.clone()))?;
    let key = format!("{namespace}/{name}");
    let schedules = schedules_of(shoot);
    if shoot.metadata.deletion_timestamp.is_some() || schedules.is_empty() {
        return Ok(Action::await_change());
    }
    let parsed = match schedule::parse(&schedules) {
        Ok(parsed) => parsed,
        Err(error) => {
            // Bad input: reported once, retried only when the schedules change.
            tracing::warn!(shoot = %key, error = %seedlet_runtime::error_chain(&error), "invalid hibernation schedule");
            return Ok(Action::await_change());
        }
    };
    let now = ctx.clock.now();
    if !failed_and_up_to_date(shoot) {
        let status = shoot.status.as_ref();
        let last_trigger = status
            .and_then(|s| s.last_hibernation_trigger_time.as_ref())
            .map(|t| t.0);
        let created = shoot
            .metadata
            .creation_timestamp
            .as_ref()
            .map_or(now, |t| t.0);
        let earliest = schedule::earliest(last_trigger, created, now, ctx.trigger_deadline);
        if let Some(action) = schedule::due_action(&parsed, earliest, now) {
            apply(ctx, shoot, &namespace, &name, action, now).await?;
        }
    }
    Ok(match schedule::requeue_after(&parsed, now) {
        Some(delay) => Action::requeue(Duration::try_from(delay).unwrap_or(Duration::ZERO)),
        None => Action::await_change(),
    })
}

/// Whether the Shoot's last operation failed for its current generation, reconciled by this
/// version: waking or hibernating it would not be acted upon until a user retries.
fn failed_and_up_to_date(shoot: &Shoot) -> bool {
    let Some(status) = shoot.status.as_ref() else {
        return false;
    };
    let failed = status.last_operation.as_ref().is_some_and(|op| op.failed());
    let observed = shoot.metadata.generation.is_some()
        && status.observed_generation == shoot.metadata.generation;
    let version = status
        .gardener
        .as_ref()
        .map(|gardener| gardener.version.as_str());
    failed && observed && version == Some(env!("CARGO_PKG_VERSION"))
}

async fn apply(
    ctx: &Hibernation,
    shoot: &Shoot,
    namespace: &str,
    name: &str,
    action: ScheduleAction,
    now: jiff::Timestamp,
) -> Result<(), Error> {
    let key = format!("{namespace}/{name}");
    let shoots: Api<Shoot> = Api::namespaced(ctx.client.clone(), namespace);
    let spec = json!({"spec": {"hibernation": {"enabled": action.enabled()}}});
    shoots
        .patch(name, &PatchParams::default(), &Patch::Merge(&spec))
        .await
        .map_err(|source| Error::PatchSpec {
            shoot: key.clone(),
            source,
        })?;
    let (reason, message) = match action {
        ScheduleAction::Hibernate => ("Hibernated", "Hibernating cluster due to schedule"),
        ScheduleAction::WakeUp => ("WokenUp", "Waking up cluster due to schedule"),
    };
    tracing::info!(shoot = %key, reason, "hibernation schedule applied");
    ctx.events
        .publish(shoot, EventType::Normal, reason, "Reconcile", message)
        .await;
    let status = json!({"status": {"lastHibernationTriggerTime": Time(now)}});
    shoots
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .map_err(|source| Error::PatchStatus { shoot: key, source })?;
    Ok(())
}
