//! Reconcile tests against in-process garden and seed sandboxes: [`reconcile`] is called directly
//! on a real ControllerInstallation with (or without) its ManagedResource in the seed, and the
//! installation's conditions are read back.

use std::sync::Arc;
use std::time::Duration;

use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use seedlet_api::core::ControllerInstallation;
use seedlet_api::resources::ManagedResource;
use seedlet_bootstrap::GardenClient;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Care;
use super::reconcile::MISSING_REQUEUE;
use crate::testing::{Env, SEED, create};
use seedlet_runtime::controller::Reconciler as _;

const NAME: &str = "ext-local";
const SYNC: Duration = Duration::from_secs(30);

fn ctx(env: &Env) -> Arc<Care> {
    Arc::new(Care {
        clock: env.clock(),
        events: env.events(),
        garden: GardenClient::new(env.garden.clone(), None),
        concurrency: 1,
        seed: env.seed.clone(),
        seed_name: SEED.to_owned(),
        stop: CancellationToken::new(),
        sync_period: SYNC,
    })
}

async fn installation(env: &Env) -> Arc<ControllerInstallation> {
    Arc::new(
        create(
            &env.garden,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerInstallation",
                   "metadata": {"name": NAME},
                   "spec": {"registrationRef": {"name": "ext"}, "deploymentRef": {"name": "ext"},
                            "seedRef": {"name": SEED}}}),
        )
        .await,
    )
}

fn condition(type_: &str, status: &str) -> Value {
    json!({"type": type_, "status": status, "reason": "r", "message": format!("{type_} is {status}"),
           "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z"})
}

/// ManagedResource `garden/<NAME>` whose status reports `healthy`.
async fn managed_resource(env: &Env, healthy: &str) {
    let created: ManagedResource = create(
        &env.seed,
        json!({"apiVersion": "resources.gardener.cloud/v1alpha1", "kind": "ManagedResource",
               "metadata": {"name": NAME, "namespace": "garden"},
               "spec": {"secretRefs": []}}),
    )
    .await;
    let status = json!({"status": {"observedGeneration": created.metadata.generation, "conditions": [
        condition("ResourcesApplied", "True"), condition("ResourcesHealthy", healthy),
        condition("ResourcesProgressing", "False")]}});
    Api::<ManagedResource>::namespaced(env.seed.clone(), "garden")
        .patch_status(NAME, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

async fn conditions(env: &Env) -> Vec<(String, String, String)> {
    let stored = Api::<ControllerInstallation>::all(env.garden.clone())
        .get(NAME)
        .await
        .unwrap();
    let mut out: Vec<_> = stored
        .conditions()
        .iter()
        .map(|c| (c.type_.clone(), c.status.to_string(), c.reason.clone()))
        .collect();
    out.sort();
    out
}

fn triple(type_: &str, status: &str, reason: &str) -> (String, String, String) {
    (type_.into(), status.into(), reason.into())
}

#[tokio::test]
async fn a_healthy_managed_resource_makes_the_installation_installed_and_healthy() {
    let env = Env::start().await;
    let ci = installation(&env).await;
    managed_resource(&env, "True").await;

    let action = ctx(&env).reconcile(ci).await.unwrap();
    assert_eq!(action, Action::requeue(SYNC));
    assert_eq!(
        conditions(&env).await,
        [
            triple("Healthy", "True", "ControllerHealthy"),
            triple("Installed", "True", "InstallationSuccessful"),
            triple("Progressing", "False", "ControllerRolledOut"),
        ]
    );
    env.shutdown().await;
}

#[tokio::test]
async fn an_unhealthy_or_missing_managed_resource_is_reported() {
    let env = Env::start().await;
    let ci = installation(&env).await;
    let ctx = ctx(&env);

    let action = ctx.clone().reconcile(ci.clone()).await.unwrap();
    assert_eq!(action, Action::requeue(MISSING_REQUEUE));
    assert_eq!(
        conditions(&env).await,
        [
            triple("Healthy", "Unknown", "SeedReadError"),
            triple("Installed", "Unknown", "SeedReadError"),
            triple("Progressing", "Unknown", "SeedReadError"),
        ]
    );

    managed_resource(&env, "False").await;
    ctx.reconcile(ci).await.unwrap();
    let written = conditions(&env).await;
    assert_eq!(
        written[0],
        triple("Healthy", "False", "ControllerNotHealthy")
    );
    env.shutdown().await;
}
