//! Seed finalizer `core.gardener.cloud/controllerregistration` and the Seed's garden namespace
//! `seed-<name>`: while the Seed lives the namespace is ensured; deletion waits until no
//! ControllerInstallation references the Seed.

use kube::ResourceExt;
use kube::runtime::controller::Action;
use seedlet_api::core::{ControllerInstallation, Seed};
use seedlet_api::names::finalizers;

use super::{Error, Finalized, list_all};
use crate::controllers::finalizers::{RESYNC_PERIOD, SEED_NAME};

impl Finalized for Seed {
    const NAME: &'static str = SEED_NAME;
    const KIND: &'static str = "Seed";
    const FINALIZER: &'static str = finalizers::CONTROLLER_REGISTRATION;
    const REFERRERS: &'static str = "ControllerInstallations";

    async fn apply(&self, client: &kube::Client) -> Result<Action, Error> {
        crate::seed_namespace::ensure(client, self).await?;
        Ok(Action::requeue(RESYNC_PERIOD))
    }

    async fn referrers(&self, client: &kube::Client) -> Result<Vec<String>, Error> {
        let installations: Vec<ControllerInstallation> =
            list_all(client, "ControllerInstallation").await?;
        Ok(installations_of_seed(&installations, &self.name_any()))
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
