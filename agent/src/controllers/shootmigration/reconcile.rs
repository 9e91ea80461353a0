//! One reconcile of the legacy Migration reconciler: decide ([`super::decide::plan`]), then write
//! the Shoot's status in the garden (start time, or the forced abort) and remove the
//! force-restore annotation.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_api::names::shoot_lifecycle;
use seedlet_runtime::controller::{Reason, Reconciler};
use serde_json::{Value, json};

use super::decide::{self, StartTime};
use super::{NAME, ShootMigration};

/// Retry delay after a failed reconcile.
pub const RETRY_DELAY: Duration = Duration::from_secs(10);
/// The description of a forcefully aborted migration.
pub const ABORTED_DESCRIPTION: &str = "Shoot cluster preparation for migration has been aborted.";

/// Errors of a reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The shoot has no namespace.
    #[error("shoot {name} has no namespace")]
    MissingNamespace {
        /// Shoot name.
        name: String,
    },
    /// Writing the shoot failed.
    #[error("patching shoot {key}")]
    PatchShoot {
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::MissingNamespace { .. } => "ShootNamespaceMissing",
            Error::PatchShoot { .. } => "ShootPatchError",
        }
    }
}

impl Reconciler for ShootMigration {
    type Object = Shoot;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Watches one shoot's migration to this seed and forces its restore when due; the next
    /// run after an error reads fresh state.
    async fn reconcile(&self, shoot: Arc<Shoot>) -> Result<Action, Error> {
        run(&shoot, self).await
    }

    /// [`RETRY_DELAY`], at most the sync period.
    fn retry_after(&self, _: &Error) -> Duration {
        RETRY_DELAY.min(self.settings.sync_period)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn run(shoot: &Shoot, ctx: &ShootMigration) -> Result<Action, Error> {
    let name = shoot.name_any();
    let namespace = shoot
        .namespace()
        .ok_or_else(|| Error::MissingNamespace { name: name.clone() })?;
    let key = format!("{namespace}/{name}");
    let shoots: Api<Shoot> = Api::namespaced(ctx.garden.clone(), &namespace);
    let now = ctx.clock.now();
    let plan = decide::plan(shoot, &ctx.seed_name, &ctx.settings, now);
    let time = crate::extension_sync::operation::truncate(now).to_string();
    let patch_error = |source| Error::PatchShoot {
        key: key.clone(),
        source,
    };
    if plan.force_restore {
        tracing::info!(shoot = %key, "forcing the restore of a stalled migration");
        let status = forced_restore(shoot.metadata.generation, &time);
        patch_status(&shoots, &name, &status)
            .await
            .map_err(patch_error)?;
        if plan.remove_annotation {
            let patch =
                json!({"metadata": {"annotations": {shoot_lifecycle::FORCE_RESTORE: null}}});
            shoots
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(patch_error)?;
        }
    } else {
        let start = match plan.start_time {
            StartTime::Keep => None,
            StartTime::Set => Some(json!(time)),
            StartTime::Clear => Some(Value::Null),
        };
        if let Some(start) = start {
            let status = json!({"migrationStartTime": start});
            patch_status(&shoots, &name, &status)
                .await
                .map_err(patch_error)?;
        }
    }
    Ok(plan
        .requeue
        .map_or_else(Action::await_change, Action::requeue))
}

/// The status of a forced restore: the migration `Aborted` (which the destination's Shoot
/// controller turns into a `Restore`), errors and retry cycle cleared, `status.seedName` cleared
/// (so the destination is responsible), the generation observed.
pub fn forced_restore(generation: Option<i64>, time: &str) -> Value {
    json!({
        "lastOperation": {"type": "Migrate", "state": "Aborted", "progress": 0,
                          "description": ABORTED_DESCRIPTION, "lastUpdateTime": time},
        "lastErrors": null,
        "observedGeneration": generation,
        "retryCycleStartTime": null,
        "seedName": null,
        "migrationStartTime": null,
    })
}

async fn patch_status(shoots: &Api<Shoot>, name: &str, status: &Value) -> Result<(), kube::Error> {
    shoots
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": status})),
        )
        .await
        .map(|_| ())
}
