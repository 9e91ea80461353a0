//! Seed finalizer `core.gardener.cloud/controllerregistration` and the Seed's garden namespace
//! `seed-<name>`: while the Seed lives the namespace is ensured; deletion waits until no
//! ControllerInstallation references the Seed.

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{ControllerInstallation, Seed};
use seedlet_api::names::finalizers;
use seedlet_runtime::controller::Reconciler;

use super::{Error, Step, ensure_unreferenced, failure, list_all, with_finalizer};
use crate::controllers::finalizers::{
    CONCURRENCY, RESYNC_PERIOD, RETRY_DELAY, SEED_NAME, SeedFinalizer,
};

impl Reconciler for SeedFinalizer {
    type Object = Seed;
    type Error = Error;
    const NAME: &'static str = SEED_NAME;

    /// Adds the finalizer, keeps the namespace, and releases the Seed once unreferenced.
    async fn reconcile(&self, seed: Arc<Seed>) -> Result<Action, Error> {
        let api: Api<Seed> = Api::all(self.client.clone());
        with_finalizer(
            &api,
            "Seed",
            finalizers::CONTROLLER_REGISTRATION,
            seed,
            |step| async {
                match step {
                    Step::Apply(seed) => {
                        crate::seed_namespace::ensure(&self.client, &seed).await?;
                        Ok(Action::requeue(RESYNC_PERIOD))
                    }
                    Step::Cleanup(seed) => {
                        let installations: Vec<ControllerInstallation> =
                            list_all(&self.client, "ControllerInstallation").await?;
                        let seed_name = seed.name_any();
                        let names = installations_of_seed(&installations, &seed_name);
                        ensure_unreferenced("Seed", &seed_name, "ControllerInstallations", names)?;
                        Ok(Action::await_change())
                    }
                }
            },
        )
        .await
    }

    fn retry_after(&self, _: &Error) -> Duration {
        RETRY_DELAY
    }

    fn concurrency(&self) -> u16 {
        CONCURRENCY
    }

    fn error_policy(&self, seed: &Seed, error: &Error) -> Action {
        failure(seed, error)
    }
}

/// Names of the installations whose `spec.seedRef.name` is `seed`.
pub fn installations_of_seed(installations: &[ControllerInstallation], seed: &str) -> Vec<String> {
    installations
        .iter()
        .filter(|installation| installation.seed_name() == Some(seed))
        .map(ResourceExt::name_any)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn installations_of_seed_match_seed_ref_name() {
        let ci = |name: &str, seed: &str| -> ControllerInstallation {
            serde_json::from_value(json!({"metadata": {"name": name},
                "spec": {"registrationRef": {"name": "r"}, "seedRef": {"name": seed}}}))
            .unwrap()
        };
        let installations = [ci("a", "s1"), ci("b", "s2"), ci("c", "s1")];
        assert_eq!(installations_of_seed(&installations, "s1"), ["a", "c"]);
    }
}
