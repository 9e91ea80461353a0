//! One seed care pass: list the class-bearing ManagedResources → decide the two conditions
//! ([`super::health`]) → write them when they changed.

use std::sync::Arc;
use std::time::Duration;

use kube::api::ListParams;
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::conditions::{self, ConditionStatus};
use seedlet_api::core::Seed;
use seedlet_api::names::{namespaces, reasons};
use seedlet_api::resources::ManagedResource;

use super::health::{self, EMERGENCY_STOP, SYSTEM_COMPONENTS_HEALTHY};
use super::{NAME, SeedCare};
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::error_chain;

/// Errors of one care pass.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing the Seed failed.
    #[error("{step} seed {seed}")]
    Seed {
        /// What was done.
        step: &'static str,
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        "SeedCareError"
    }
}

impl Reconciler for SeedCare {
    type Object = Seed;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Checks our Seed; always requeues after the sync period.
    async fn reconcile(&self, seed: Arc<Seed>) -> Result<Action, Error> {
        let result = care(&seed.name_any(), self).await;
        result.map(|()| Action::requeue(self.sync_period))
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        self.sync_period.min(Duration::from_secs(5))
    }
}

async fn care(name: &str, ctx: &SeedCare) -> Result<(), Error> {
    let seeds: Api<Seed> = Api::all(ctx.garden.clone());
    let Some(seed) = seeds.get_opt(name).await.map_err(|source| Error::Seed {
        step: "reading",
        seed: name.to_owned(),
        source,
    })?
    else {
        return Ok(());
    };
    let now = ctx.clock.now();
    let existing = seed.conditions();
    let previous = conditions::find_or_init(existing, SYSTEM_COMPONENTS_HEALTHY, now);
    let next = match list_managed_resources(&ctx.seed).await {
        Ok(resources) => health::system_components_healthy(
            &previous,
            health::first_failure(&resources),
            ctx.threshold,
            now,
        ),
        Err(error) => previous.updated(
            ConditionStatus::Unknown,
            reasons::CONDITION_CHECK_ERROR,
            error_chain(&error),
            now,
        ),
    };
    let stopped = seed
        .annotations()
        .get(health::EMERGENCY_STOP_ANNOTATION)
        .is_some_and(|value| value == "true");
    let mut wanted = conditions::merge(existing, [next]);
    if stopped {
        let stop = conditions::find_or_init(existing, EMERGENCY_STOP, now).updated(
            ConditionStatus::True,
            EMERGENCY_STOP,
            health::EMERGENCY_STOP_MESSAGE,
            now,
        );
        wanted = conditions::merge(&wanted, [stop]);
    } else {
        wanted = conditions::remove(&wanted, &[EMERGENCY_STOP]);
    }
    let unchanged = wanted.len() == existing.len()
        && wanted.iter().all(|condition| {
            conditions::find(existing, &condition.type_).is_some_and(|c| c.same_state(condition))
        });
    if unchanged {
        return Ok(());
    }
    seedlet_runtime::status::write_conditions(&seeds, &seed, &wanted, Some(ctx.field_manager))
        .await
        .map_err(|source| Error::Seed {
            step: "writing conditions of",
            seed: name.to_owned(),
            source,
        })
}

/// The ManagedResources of `garden`, then `istio-system` (a missing namespace lists nothing).
async fn list_managed_resources(seed: &kube::Client) -> Result<Vec<ManagedResource>, kube::Error> {
    let mut out = Vec::new();
    for namespace in [namespaces::GARDEN, "istio-system"] {
        let mut items = Api::<ManagedResource>::namespaced(seed.clone(), namespace)
            .list(&ListParams::default())
            .await?
            .items;
        items.sort_by_key(ResourceExt::name_any);
        out.extend(items);
    }
    Ok(out)
}
