//! End-to-end test of the agent's seed care controller (spec §5.3/§5.4 8-9):
//! `SeedSystemComponentsHealthy` from class-bearing ManagedResources with a threshold, and the
//! emergency-stop condition following the Seed annotation.

use seedlet_testkit as common;

use std::time::Duration;

use common::{Clusters, SEED, wait_condition_of, wait_until};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use seedlet_api::core::Seed;
use seedlet_api::resources::ManagedResource;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_secs(20);

fn condition(type_: &str, status: &str, reason: &str) -> Value {
    let now = jiff::Timestamp::now().to_string();
    json!({"type": type_, "status": status, "reason": reason, "message": format!("{type_} is {status}"),
           "lastTransitionTime": now, "lastUpdateTime": now})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_system_components_healthy_follows_managed_resources_and_threshold() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    let shutdown = CancellationToken::new();
    let agent = common::start_agent_with(&clusters, shutdown.clone(), |config| {
        config.controllers.seed_care.sync_period = seedlet_config::Duration::from_millis(500);
        config.controllers.seed_care.condition_thresholds =
            vec![seedlet_config::ConditionThreshold {
                condition_type: "SeedSystemComponentsHealthy".into(),
                duration: seedlet_config::Duration::from_secs(2),
            }];
    })
    .await;
    let seeds: Api<Seed> = Api::all(garden.clone());
    let healthy = (
        "SeedSystemComponentsHealthy",
        "True",
        "SystemComponentsRunning",
    );
    let message = wait_condition_of(&seeds, SEED, healthy, Seed::conditions, TIMEOUT).await;
    assert_eq!(message, "All system components are healthy.");

    // A class-bearing, labelled ManagedResource turns unhealthy: Progressing, then False.
    let resources: Api<ManagedResource> = Api::namespaced(seed.clone(), "garden");
    let mr: ManagedResource = serde_json::from_value(json!({
        "apiVersion": "resources.gardener.cloud/v1alpha1", "kind": "ManagedResource",
        "metadata": {"name": "system", "namespace": "garden",
                     "labels": {"gardener.cloud/role": "seed-system-component"}},
        "spec": {"class": "elsewhere", "secretRefs": []},
    }))
    .unwrap();
    let created = resources.create(&PostParams::default(), &mr).await.unwrap();
    let status = |healthy: &str, reason: &str| {
        json!({"status": {"observedGeneration": created.metadata.generation, "conditions": [
            condition("ResourcesApplied", "True", "ApplySucceeded"),
            condition("ResourcesHealthy", healthy, reason),
            condition("ResourcesProgressing", "False", "ResourcesRolledOut"),
        ]}})
    };
    resources
        .patch_status(
            "system",
            &PatchParams::default(),
            &Patch::Merge(&status("False", "DeploymentUnhealthy")),
        )
        .await
        .unwrap();
    let progressing = (
        "SeedSystemComponentsHealthy",
        "Progressing",
        "DeploymentUnhealthy",
    );
    let message = wait_condition_of(&seeds, SEED, progressing, Seed::conditions, TIMEOUT).await;
    assert_eq!(message, "ResourcesHealthy is False");
    let failed = (
        "SeedSystemComponentsHealthy",
        "False",
        "DeploymentUnhealthy",
    );
    wait_condition_of(&seeds, SEED, failed, Seed::conditions, TIMEOUT).await;
    resources
        .patch_status(
            "system",
            &PatchParams::default(),
            &Patch::Merge(&status("True", "ResourcesHealthy")),
        )
        .await
        .unwrap();
    wait_condition_of(&seeds, SEED, healthy, Seed::conditions, TIMEOUT).await;

    // 9: the emergency-stop annotation adds its condition; removing it removes the condition.
    let annotate = |value: Value| {
        json!({"metadata": {"annotations": {
        "shoot.gardener.cloud/emergency-stop-reconciliations": value}}})
    };
    seeds
        .patch(
            SEED,
            &PatchParams::default(),
            &Patch::Merge(&annotate(json!("true"))),
        )
        .await
        .unwrap();
    let stopped = (
        "EmergencyStopShootReconciliations",
        "True",
        "EmergencyStopShootReconciliations",
    );
    let message = wait_condition_of(&seeds, SEED, stopped, Seed::conditions, TIMEOUT).await;
    assert_eq!(
        message,
        "Reconciliations of Shoots managed by this Seed cluster are currently disabled by annotation."
    );
    seeds
        .patch(
            SEED,
            &PatchParams::default(),
            &Patch::Merge(&annotate(Value::Null)),
        )
        .await
        .unwrap();
    wait_until("emergency stop condition removed", TIMEOUT, || async {
        seeds
            .get(SEED)
            .await
            .unwrap()
            .conditions()
            .iter()
            .all(|c| c.type_ != "EmergencyStopShootReconciliations")
    })
    .await;

    shutdown.cancel();
    agent.wait().await.unwrap();
    clusters.shutdown().await;
}
