//! ControllerDeployment finalizer `core.gardener.cloud/controllerdeployment`: deletion waits until
//! no ControllerRegistration lists the deployment in `spec.deployment.deploymentRefs`.

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{ControllerDeployment, ControllerRegistration};
use seedlet_api::names::finalizers;
use seedlet_runtime::controller::Reconciler;

use super::{Error, Step, ensure_unreferenced, failure, list_all, with_finalizer};
use crate::controllers::finalizers::{
    CONCURRENCY, DEPLOYMENT_NAME, DeploymentFinalizer, RESYNC_PERIOD, RETRY_DELAY,
};

impl Reconciler for DeploymentFinalizer {
    type Object = ControllerDeployment;
    type Error = Error;
    const NAME: &'static str = DEPLOYMENT_NAME;

    /// Adds the finalizer and releases the deployment once unreferenced.
    async fn reconcile(&self, deployment: Arc<ControllerDeployment>) -> Result<Action, Error> {
        let api: Api<ControllerDeployment> = Api::all(self.client.clone());
        with_finalizer(
            &api,
            "ControllerDeployment",
            finalizers::CONTROLLER_DEPLOYMENT,
            deployment,
            |step| async {
                match step {
                    Step::Apply(_) => Ok(Action::requeue(RESYNC_PERIOD)),
                    Step::Cleanup(deployment) => {
                        let registrations: Vec<ControllerRegistration> =
                            list_all(&self.client, "ControllerRegistration").await?;
                        let deployment_name = deployment.name_any();
                        let names = registrations_of_deployment(&registrations, &deployment_name);
                        ensure_unreferenced(
                            "ControllerDeployment",
                            &deployment_name,
                            "ControllerRegistrations",
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

    fn error_policy(&self, deployment: &ControllerDeployment, error: &Error) -> Action {
        failure(deployment, error)
    }
}

/// Names of the registrations listing `deployment` in `spec.deployment.deploymentRefs`.
pub fn registrations_of_deployment(
    registrations: &[ControllerRegistration],
    deployment: &str,
) -> Vec<String> {
    registrations
        .iter()
        .filter(|registration| {
            registration
                .spec
                .deployment
                .iter()
                .flat_map(|d| &d.deployment_refs)
                .any(|reference| reference.name == deployment)
        })
        .map(ResourceExt::name_any)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn registrations_of_deployment_match_any_deployment_ref() {
        let registration = |name: &str, deployment: &str| -> ControllerRegistration {
            serde_json::from_value(json!({"metadata": {"name": name},
                "spec": {"deployment": {"deploymentRefs": [{"name": deployment}]}}}))
            .unwrap()
        };
        let registrations = [
            registration("a", "d1"),
            registration("b", "d2"),
            ControllerRegistration::default(),
        ];
        assert_eq!(registrations_of_deployment(&registrations, "d1"), ["a"]);
        assert!(registrations_of_deployment(&registrations, "d3").is_empty());
    }
}
