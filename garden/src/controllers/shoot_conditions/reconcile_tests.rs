//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on a real Shoot registered as a Seed through a
//! real ManagedSeed, and the Shoot's conditions are read back.

use std::sync::Arc;

use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::seedmanagement::ManagedSeed;
use seedlet_runtime::controller::{Reason as _, Reconciler as _};
use serde_json::{Value, json};

use super::ShootConditions;
use crate::testing::{self, Env, create, seed};

fn ctx(env: &Env) -> Arc<ShootConditions> {
    Arc::new(ShootConditions {
        client: env.client.clone(),
        concurrency: 1,
    })
}

fn condition(type_: &str, status: &str) -> Value {
    json!({"type": type_, "status": status, "reason": "r", "message": format!("{type_} is {status}"),
           "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z"})
}

async fn managed_seed(env: &Env, name: &str) {
    let _: ManagedSeed = create(
        &env.client,
        json!({"apiVersion": "seedmanagement.gardener.cloud/v1alpha1", "kind": "ManagedSeed",
               "metadata": {"name": name, "namespace": "garden"},
               "spec": {"shoot": {"name": "s"}}}),
    )
    .await;
}

/// Shoot `garden/s` with its own `APIServerAvailable` condition.
async fn shoot(env: &Env) -> Arc<Shoot> {
    testing::shoot(&env.client, "garden", "s").await;
    let status = json!({"status": {"conditions": [condition("APIServerAvailable", "True")]}});
    Arc::new(
        shoots(env)
            .patch_status("s", &PatchParams::default(), &Patch::Merge(&status))
            .await
            .unwrap(),
    )
}

fn shoots(env: &Env) -> Api<Shoot> {
    Api::namespaced(env.client.clone(), "garden")
}

async fn types(env: &Env) -> Vec<String> {
    shoots(env)
        .get("s")
        .await
        .unwrap()
        .status
        .unwrap_or_default()
        .conditions
        .into_iter()
        .map(|c| format!("{}={}", c.type_, c.status))
        .collect()
}

#[tokio::test]
async fn a_managed_seeds_conditions_are_merged_into_its_shoot_and_dropped_after() {
    let env = Env::start().await;
    let _: Seed = seed(&env.client, "ms").await;
    let status = json!({"status": {"conditions": [
        condition("GardenletReady", "True"), condition("ExtensionsReady", "False")]}});
    Api::<Seed>::all(env.client.clone())
        .patch_status("ms", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    managed_seed(&env, "ms").await;
    let s = shoot(&env).await;
    let ctx = ctx(&env);

    ctx.clone().reconcile(s).await.unwrap();
    assert_eq!(
        types(&env).await,
        [
            "APIServerAvailable=True",
            "GardenletReady=True",
            "ExtensionsReady=False"
        ]
    );

    Api::<ManagedSeed>::namespaced(env.client.clone(), "garden")
        .delete("ms", &DeleteParams::default())
        .await
        .unwrap();
    ctx.reconcile(Arc::new(shoots(&env).get("s").await.unwrap()))
        .await
        .unwrap();
    assert_eq!(types(&env).await, ["APIServerAvailable=True"]);
    env.shutdown().await;
}

#[tokio::test]
async fn two_managed_seeds_of_one_shoot_are_an_error_and_nothing_is_written() {
    let env = Env::start().await;
    managed_seed(&env, "ms1").await;
    managed_seed(&env, "ms2").await;
    let s = shoot(&env).await;
    let version = s.resource_version();

    let error = ctx(&env).reconcile(s).await.unwrap_err();
    assert_eq!(error.reason(), "AmbiguousManagedSeed");
    assert_eq!(
        shoots(&env).get("s").await.unwrap().resource_version(),
        version
    );
    env.shutdown().await;
}
