//! ControllerDeployment finalizer `core.gardener.cloud/controllerdeployment`: deletion waits until
//! no ControllerRegistration lists the deployment in `spec.deployment.deploymentRefs`.

use std::sync::Arc;

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{ControllerDeployment, ControllerRegistration};
use seedlet_api::names::finalizers;

use super::{Error, Step, ensure_unreferenced, list_all, with_finalizer};
use crate::controllers::finalizers::{Ctx, DEPLOYMENT_NAME, RESYNC_PERIOD};

/// Adds the finalizer and releases the deployment once unreferenced.
///
/// # Errors
/// See [`Error`]; a blocked deletion is [`Error::StillReferenced`].
pub async fn reconcile(
    deployment: Arc<ControllerDeployment>,
    ctx: Arc<Ctx>,
) -> Result<Action, Error> {
    let started = std::time::Instant::now();
    let api: Api<ControllerDeployment> = Api::all(ctx.client.clone());
    let result = with_finalizer(
        &api,
        "ControllerDeployment",
        finalizers::CONTROLLER_DEPLOYMENT,
        deployment,
        |step| async {
            match step {
                Step::Apply(_) => Ok(Action::requeue(RESYNC_PERIOD)),
                Step::Cleanup(deployment) => {
                    let registrations: Vec<ControllerRegistration> =
                        list_all(&ctx.client, "ControllerRegistration").await?;
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
    .await;
    ctx.metrics
        .reconciled(DEPLOYMENT_NAME, started.elapsed(), result.is_ok());
    result
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
