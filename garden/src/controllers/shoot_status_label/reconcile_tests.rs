//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on real Shoots and the
//! `shoot.gardener.cloud/status` label is read back.

use std::sync::Arc;

use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_runtime::controller::Reconciler as _;
use serde_json::{Value, json};

use super::StatusLabel;
use crate::testing::{self, Env, ensure_namespace};

fn ctx(env: &Env) -> Arc<StatusLabel> {
    Arc::new(StatusLabel {
        client: env.client.clone(),
        concurrency: 1,
    })
}

/// Shoot `garden-dev/s` with `status` as the seed agent would have written it.
async fn shoot(env: &Env, status: Value) -> Arc<Shoot> {
    ensure_namespace(&env.client, "garden-dev").await;
    testing::shoot(&env.client, "garden-dev", "s").await;
    let shoots: Api<Shoot> = Api::namespaced(env.client.clone(), "garden-dev");
    Arc::new(
        shoots
            .patch_status(
                "s",
                &PatchParams::default(),
                &Patch::Merge(&json!({ "status": status })),
            )
            .await
            .unwrap(),
    )
}

async fn label(env: &Env) -> Option<String> {
    Api::<Shoot>::namespaced(env.client.clone(), "garden-dev")
        .get("s")
        .await
        .unwrap()
        .labels()
        .get("shoot.gardener.cloud/status")
        .cloned()
}

fn condition(status: &str) -> Value {
    json!({"type": "APIServerAvailable", "status": status, "reason": "R", "message": "",
           "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z"})
}

fn operation(state: &str) -> Value {
    json!({"type": "Reconcile", "state": state, "progress": 100, "description": "",
           "lastUpdateTime": "2025-01-01T00:00:00Z"})
}

#[tokio::test]
async fn the_label_follows_the_worst_of_conditions_and_last_operation() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let progressing = shoot(
        &env,
        json!({"lastOperation": operation("Succeeded"), "conditions": [condition("True"), condition("Progressing")]}),
    )
    .await;
    ctx.clone().reconcile(progressing).await.unwrap();
    assert_eq!(label(&env).await.as_deref(), Some("progressing"));

    let shoots: Api<Shoot> = Api::namespaced(env.client.clone(), "garden-dev");
    let failed = json!({"status": {"lastOperation": operation("Failed"), "conditions": [condition("True")]}});
    let failed = shoots
        .patch_status("s", &PatchParams::default(), &Patch::Merge(&failed))
        .await
        .unwrap();
    ctx.reconcile(Arc::new(failed)).await.unwrap();
    assert_eq!(label(&env).await.as_deref(), Some("unhealthy"));
    env.shutdown().await;
}

#[tokio::test]
async fn a_stored_label_that_matches_is_not_rewritten() {
    let env = Env::start().await;
    let healthy = shoot(&env, json!({"lastOperation": operation("Succeeded")})).await;
    ctx(&env).reconcile(healthy).await.unwrap();
    let shoots: Api<Shoot> = Api::namespaced(env.client.clone(), "garden-dev");
    let labelled = shoots.get("s").await.unwrap();
    assert_eq!(
        labelled
            .labels()
            .get("shoot.gardener.cloud/status")
            .map(String::as_str),
        Some("healthy")
    );
    ctx(&env)
        .reconcile(Arc::new(labelled.clone()))
        .await
        .unwrap();
    assert_eq!(
        shoots.get("s").await.unwrap().metadata.resource_version,
        labelled.metadata.resource_version
    );
    env.shutdown().await;
}
