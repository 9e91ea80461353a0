//! Migration readiness logic: read both Seeds, compute the constraint, write it when it changed.

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::conditions::{self, ConditionStatus};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::names::shoot_lifecycle;
use seedlet_runtime::controller::{Reason, Reconciler};
use serde_json::json;

use super::readiness::{self, constraints};
use super::{NAME, ShootMigration};

/// Recheck delay while the destination seed is not ready.
pub const UNREADY_RECHECK: Duration = Duration::from_secs(5);

/// Errors of one migration reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Shoot has no namespace.
    #[error("shoot {0} without a namespace")]
    MissingNamespace(String),
    /// Reading the source or destination Seed failed.
    #[error("failed reading {role} seed {seed}")]
    ReadSeed {
        /// `source` or `destination`.
        role: &'static str,
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the constraints failed.
    #[error("patching constraints of shoot {shoot}")]
    PatchConstraints {
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
            Error::ReadSeed { .. } => "SeedReadError",
            Error::PatchConstraints { .. } => "ShootStatusPatchError",
        }
    }
}

impl Reconciler for ShootMigration {
    type Object = Shoot;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Keeps `ReadyForMigration` current (see the module docs). Idempotent: writes only changes.
    async fn reconcile(&self, shoot: Arc<Shoot>) -> Result<Action, Error> {
        readiness_of(&shoot, self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        UNREADY_RECHECK
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn readiness_of(shoot: &Shoot, ctx: &ShootMigration) -> Result<Action, Error> {
    let name = shoot.name_any();
    let namespace = shoot
        .namespace()
        .ok_or_else(|| Error::MissingNamespace(name.clone()))?;
    let key = format!("{namespace}/{name}");
    let stored = constraints(shoot);
    let Some((source, destination)) = readiness::migration(shoot) else {
        if conditions::find(stored, shoot_lifecycle::READY_FOR_MIGRATION).is_some() {
            let kept = conditions::remove(stored, &[shoot_lifecycle::READY_FOR_MIGRATION]);
            write(ctx, shoot, &namespace, &key, kept).await?;
        }
        return Ok(Action::await_change());
    };
    let seeds: Api<Seed> = Api::all(ctx.client.clone());
    let read = |role: &'static str, seed: String| {
        let seeds = seeds.clone();
        async move {
            seeds
                .get(&seed)
                .await
                .map_err(|source| Error::ReadSeed { role, seed, source })
        }
    };
    let source = read("source", source).await?;
    let destination = read("destination", destination).await?;
    let next = readiness::constraint(stored, &source, &destination, ctx.clock.now());
    let ready = next.status == ConditionStatus::True;
    let unready = next.reason == shoot_lifecycle::DESTINATION_SEED_UNREADY;
    let merged = conditions::merge(stored, [next]);
    if merged != stored {
        write(ctx, shoot, &namespace, &key, merged).await?;
    }
    Ok(if !ready && unready {
        Action::requeue(UNREADY_RECHECK)
    } else {
        Action::await_change()
    })
}

/// Writes the whole constraints list, guarded by the Shoot's `resourceVersion`.
async fn write(
    ctx: &ShootMigration,
    shoot: &Shoot,
    namespace: &str,
    key: &str,
    constraints: Vec<conditions::Condition>,
) -> Result<(), Error> {
    let shoots: Api<Shoot> = Api::namespaced(ctx.client.clone(), namespace);
    match seedlet_runtime::status::patch_status_guarded(
        &shoots,
        shoot,
        json!({"constraints": constraints}),
        None,
    )
    .await
    {
        Ok(()) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(Error::PatchConstraints {
            shoot: key.to_owned(),
            source,
        }),
    }
}
