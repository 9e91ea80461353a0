//! Conditions logic: find the Shoot's ManagedSeed and Seed, merge, write when changed.

use std::sync::Arc;
use std::time::Duration;

use kube::api::ListParams;
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::seedmanagement::ManagedSeed;
use seedlet_runtime::controller::{Reason, Reconciler};
use serde_json::json;

use super::merge::merged_conditions;
use super::{NAME, ShootConditions};

/// Errors of one conditions reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Shoot has no namespace.
    #[error("shoot {0} without a namespace")]
    MissingNamespace(String),
    /// Listing ManagedSeeds failed.
    #[error("listing managedseeds in namespace {namespace}")]
    ListManagedSeeds {
        /// The Shoot's namespace.
        namespace: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// More than one ManagedSeed registers the Shoot.
    #[error("found more than one ManagedSeed objects for shoot {shoot}")]
    AmbiguousManagedSeed {
        /// `namespace/name` of the Shoot.
        shoot: String,
    },
    /// Reading the Seed failed.
    #[error("reading seed {seed}")]
    ReadSeed {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the Shoot's conditions failed.
    #[error("patching conditions of shoot {shoot}")]
    PatchConditions {
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
            Error::ListManagedSeeds { .. } => "ManagedSeedListError",
            Error::AmbiguousManagedSeed { .. } => "AmbiguousManagedSeed",
            Error::ReadSeed { .. } => "SeedReadError",
            Error::PatchConditions { .. } => "ShootStatusPatchError",
        }
    }
}

impl Reconciler for ShootConditions {
    type Object = Shoot;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Merges the managed seed's conditions into the Shoot (see the module docs). Idempotent.
    async fn reconcile(&self, shoot: Arc<Shoot>) -> Result<Action, Error> {
        let result = merge(&shoot, self).await;
        result.map(|()| Action::await_change())
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(5)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn merge(shoot: &Shoot, ctx: &ShootConditions) -> Result<(), Error> {
    let name = shoot.name_any();
    let namespace = shoot
        .namespace()
        .ok_or_else(|| Error::MissingNamespace(name.clone()))?;
    let key = format!("{namespace}/{name}");
    let seed = seed_of(ctx, &namespace, &name, &key).await?;
    let stored = shoot
        .status
        .as_ref()
        .map(|status| status.conditions.as_slice())
        .unwrap_or_default();
    let merged = merged_conditions(stored, seed.as_ref().map(Seed::conditions));
    if merged == stored {
        return Ok(());
    }
    let shoots: Api<Shoot> = Api::namespaced(ctx.client.clone(), &namespace);
    match seedlet_runtime::status::patch_status_guarded(
        &shoots,
        shoot,
        json!({"conditions": merged}),
        None,
    )
    .await
    {
        Ok(()) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(Error::PatchConditions { shoot: key, source }),
    }
}

/// The Seed registered from the Shoot through a ManagedSeed in its namespace, if any.
async fn seed_of(
    ctx: &ShootConditions,
    namespace: &str,
    shoot: &str,
    key: &str,
) -> Result<Option<Seed>, Error> {
    let managed_seeds: Api<ManagedSeed> = Api::namespaced(ctx.client.clone(), namespace);
    let list = managed_seeds
        .list(&ListParams::default())
        .await
        .map_err(|source| Error::ListManagedSeeds {
            namespace: namespace.to_owned(),
            source,
        })?;
    let mut registering = list
        .items
        .iter()
        .filter(|managed_seed| managed_seed.shoot_name() == Some(shoot));
    let Some(managed_seed) = registering.next() else {
        return Ok(None);
    };
    if registering.next().is_some() {
        return Err(Error::AmbiguousManagedSeed {
            shoot: key.to_owned(),
        });
    }
    let seed = managed_seed.name_any();
    Api::<Seed>::all(ctx.client.clone())
        .get_opt(&seed)
        .await
        .map_err(|source| Error::ReadSeed { seed, source })
}
