//! ControllerRegistration finalizer `core.gardener.cloud/controllerregistration`: deletion waits
//! until no ControllerInstallation references the registration.

use kube::ResourceExt;
use seedlet_api::core::{ControllerInstallation, ControllerRegistration};
use seedlet_api::names::finalizers;

use super::{Error, Finalized, list_all};
use crate::controllers::finalizers::REGISTRATION_NAME;

impl Finalized for ControllerRegistration {
    const NAME: &'static str = REGISTRATION_NAME;
    const KIND: &'static str = "ControllerRegistration";
    const FINALIZER: &'static str = finalizers::CONTROLLER_REGISTRATION;
    const REFERRERS: &'static str = "ControllerInstallations";

    async fn referrers(&self, client: &kube::Client) -> Result<Vec<String>, Error> {
        let installations: Vec<ControllerInstallation> =
            list_all(client, "ControllerInstallation").await?;
        Ok(installations_of_registration(
            &installations,
            &self.name_any(),
        ))
    }
}

/// Names of the installations whose `spec.registrationRef.name` is `registration`.
pub fn installations_of_registration(
    installations: &[ControllerInstallation],
    registration: &str,
) -> Vec<String> {
    installations
        .iter()
        .filter(|installation| installation.spec.registration_ref.name == registration)
        .map(ResourceExt::name_any)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn installations_of_registration_match_registration_ref_name() {
        let ci = |name: &str, registration: &str| -> ControllerInstallation {
            serde_json::from_value(json!({"metadata": {"name": name},
                "spec": {"registrationRef": {"name": registration}, "seedRef": {"name": "s"}}}))
            .unwrap()
        };
        let installations = [ci("a", "r1"), ci("b", "r2")];
        assert_eq!(installations_of_registration(&installations, "r2"), ["b"]);
        assert!(installations_of_registration(&installations, "r3").is_empty());
    }
}
