//! ControllerRegistration finalizer `core.gardener.cloud/controllerregistration`: deletion waits
//! until no ControllerInstallation references the registration.

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{ControllerInstallation, ControllerRegistration};
use seedlet_api::names::finalizers;
use seedlet_runtime::controller::Reconciler;

use super::{Error, Step, ensure_unreferenced, failure, list_all, with_finalizer};
use crate::controllers::finalizers::{
    CONCURRENCY, REGISTRATION_NAME, RESYNC_PERIOD, RETRY_DELAY, RegistrationFinalizer,
};

impl Reconciler for RegistrationFinalizer {
    type Object = ControllerRegistration;
    type Error = Error;
    const NAME: &'static str = REGISTRATION_NAME;

    /// Adds the finalizer and releases the registration once unreferenced.
    async fn reconcile(&self, registration: Arc<ControllerRegistration>) -> Result<Action, Error> {
        let api: Api<ControllerRegistration> = Api::all(self.client.clone());
        with_finalizer(
            &api,
            "ControllerRegistration",
            finalizers::CONTROLLER_REGISTRATION,
            registration,
            |step| async {
                match step {
                    Step::Apply(_) => Ok(Action::requeue(RESYNC_PERIOD)),
                    Step::Cleanup(registration) => {
                        let installations: Vec<ControllerInstallation> =
                            list_all(&self.client, "ControllerInstallation").await?;
                        let registration_name = registration.name_any();
                        let names =
                            installations_of_registration(&installations, &registration_name);
                        ensure_unreferenced(
                            "ControllerRegistration",
                            &registration_name,
                            "ControllerInstallations",
                            names,
                        )?;
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

    fn error_policy(&self, registration: &ControllerRegistration, error: &Error) -> Action {
        failure(registration, error)
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
