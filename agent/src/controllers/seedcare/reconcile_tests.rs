//! Reconcile tests against in-process garden and seed sandboxes: [`reconcile`] is called directly
//! on our Seed with real ManagedResources in the seed, and the written conditions are read back.

use std::sync::Arc;
use std::time::Duration;

use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use seedlet_api::core::Seed;
use seedlet_api::resources::ManagedResource;
use serde_json::{Value, json};

use super::SeedCare;
use crate::testing::{Env, FIELD_MANAGER, SEED, create};
use seedlet_runtime::controller::Reconciler as _;

const SYNC: Duration = Duration::from_secs(60);

fn ctx(env: &Env, threshold: Option<Duration>) -> Arc<SeedCare> {
    Arc::new(SeedCare {
        clock: env.clock(),
        field_manager: FIELD_MANAGER,
        seed: env.seed.clone(),
        seed_name: SEED.to_owned(),
        garden: env.garden.clone(),
        sync_period: SYNC,
        threshold,
    })
}

async fn seed(env: &Env, annotations: Value) -> Arc<Seed> {
    Arc::new(
        create(
            &env.garden,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
                   "metadata": {"name": SEED, "annotations": annotations},
                   "spec": {"provider": {"type": "local", "region": "local"},
                            "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}}}),
        )
        .await,
    )
}

fn condition(type_: &str, status: &str, reason: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": format!("{type_} {status}"),
           "lastTransitionTime": "2024-01-01T00:00:00Z", "lastUpdateTime": "2024-01-01T00:00:00Z"})
}

/// ManagedResource `garden/<name>` of class `seed` whose status reports `healthy`.
async fn managed_resource(env: &Env, name: &str, healthy: &str) {
    let created: ManagedResource = create(
        &env.seed,
        json!({"apiVersion": "resources.gardener.cloud/v1alpha1", "kind": "ManagedResource",
               "metadata": {"name": name, "namespace": "garden"},
               "spec": {"class": "seed", "secretRefs": []}}),
    )
    .await;
    set_health(env, name, created.metadata.generation, healthy).await;
}

async fn set_health(env: &Env, name: &str, generation: Option<i64>, healthy: &str) {
    let status = json!({"status": {"observedGeneration": generation, "conditions": [
        condition("ResourcesApplied", "True", "ApplySucceeded"),
        condition("ResourcesHealthy", healthy, if healthy == "True" { "ResourcesHealthy" } else { "DeploymentUnhealthy" }),
        condition("ResourcesProgressing", "False", "ResourcesRolledOut"),
    ]}});
    Api::<ManagedResource>::namespaced(env.seed.clone(), "garden")
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

async fn conditions(env: &Env) -> (Vec<(String, String, String)>, Option<String>) {
    let seed = Api::<Seed>::all(env.garden.clone())
        .get(SEED)
        .await
        .unwrap();
    let version = seed.metadata.resource_version.clone();
    let mut out: Vec<_> = seed
        .status
        .map(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.type_, c.status.to_string(), c.reason))
        .collect();
    out.sort();
    (out, version)
}

#[tokio::test]
async fn healthy_system_components_and_the_emergency_stop_become_conditions_written_once() {
    let env = Env::start().await;
    managed_resource(&env, "istio", "True").await;
    let seed = seed(
        &env,
        json!({"shoot.gardener.cloud/emergency-stop-reconciliations": "true"}),
    )
    .await;
    let ctx = ctx(&env, None);

    let action = ctx.clone().reconcile(seed.clone()).await.unwrap();
    assert_eq!(action, Action::requeue(SYNC));
    let (written, version) = conditions(&env).await;
    assert_eq!(
        written,
        [
            (
                "EmergencyStopShootReconciliations".into(),
                "True".into(),
                "EmergencyStopShootReconciliations".into()
            ),
            (
                "SeedSystemComponentsHealthy".into(),
                "True".into(),
                "SystemComponentsRunning".into()
            ),
        ]
    );

    // Nothing changed: no write.
    ctx.clone().reconcile(seed.clone()).await.unwrap();
    assert_eq!(conditions(&env).await.1, version);

    // The annotation removed: its condition goes.
    let unannotate = json!({"metadata": {"annotations": {
        "shoot.gardener.cloud/emergency-stop-reconciliations": null}}});
    Api::<Seed>::all(env.garden.clone())
        .patch(SEED, &PatchParams::default(), &Patch::Merge(&unannotate))
        .await
        .unwrap();
    ctx.reconcile(seed).await.unwrap();
    assert_eq!(
        conditions(&env).await.0,
        [(
            "SeedSystemComponentsHealthy".into(),
            "True".into(),
            "SystemComponentsRunning".into()
        )]
    );
    env.shutdown().await;
}

#[tokio::test]
async fn an_unhealthy_managed_resource_turns_the_condition_progressing_then_false() {
    let env = Env::start().await;
    managed_resource(&env, "istio", "True").await;
    let seed = seed(&env, json!({})).await;
    let ctx = ctx(&env, Some(Duration::from_secs(60)));
    ctx.clone().reconcile(seed.clone()).await.unwrap();

    let generation = Api::<ManagedResource>::namespaced(env.seed.clone(), "garden")
        .get("istio")
        .await
        .unwrap()
        .metadata
        .generation;
    set_health(&env, "istio", generation, "False").await;
    ctx.clone().reconcile(seed.clone()).await.unwrap();
    assert_eq!(
        conditions(&env).await.0,
        [(
            "SeedSystemComponentsHealthy".into(),
            "Progressing".into(),
            "DeploymentUnhealthy".into()
        )],
        "within the threshold"
    );

    env.clock.advance(jiff::SignedDuration::from_secs(61));
    ctx.reconcile(seed).await.unwrap();
    assert_eq!(
        conditions(&env).await.0,
        [(
            "SeedSystemComponentsHealthy".into(),
            "False".into(),
            "DeploymentUnhealthy".into()
        )],
        "after the threshold"
    );
    env.shutdown().await;
}
