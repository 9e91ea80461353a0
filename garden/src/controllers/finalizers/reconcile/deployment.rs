//! ControllerDeployment finalizer `core.gardener.cloud/controllerdeployment`: deletion waits until
//! no ControllerRegistration lists the deployment in `spec.deployment.deploymentRefs`.

use kube::ResourceExt;
use seedlet_api::core::{ControllerDeployment, ControllerRegistration};
use seedlet_api::names::finalizers;

use super::{Error, Finalized, list_all};
use crate::controllers::finalizers::DEPLOYMENT_NAME;

impl Finalized for ControllerDeployment {
    const NAME: &'static str = DEPLOYMENT_NAME;
    const KIND: &'static str = "ControllerDeployment";
    const FINALIZER: &'static str = finalizers::CONTROLLER_DEPLOYMENT;
    const REFERRERS: &'static str = "ControllerRegistrations";

    async fn referrers(&self, client: &kube::Client) -> Result<Vec<String>, Error> {
        let registrations: Vec<ControllerRegistration> =
            list_all(client, "ControllerRegistration").await?;
        Ok(registrations_of_deployment(
            &registrations,
            &self.name_any(),
        ))
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
