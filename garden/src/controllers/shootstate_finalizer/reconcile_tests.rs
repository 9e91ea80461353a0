//! Reconcile tests against an in-process garden sandbox: a ShootState and its Shoot are real
//! objects, the Shoot's last operation is moved through migration and restore, the controller's
//! `reconcile` is called directly and the ShootState's finalizers (or its absence) are read back.

use std::sync::Arc;

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Shoot, ShootState};
use seedlet_api::names::finalizers;
use serde_json::json;

use super::ShootStateFinalizer;
use super::reconcile::RETRY_DELAY;
use crate::testing::{self, Env, create};
use seedlet_runtime::controller::{Reason as _, Reconciler as _};

fn ctx(env: &Env) -> Arc<ShootStateFinalizer> {
    Arc::new(ShootStateFinalizer {
        client: env.client.clone(),
        concurrency: 1,
    })
}

async fn shoot_state(env: &Env) -> Arc<ShootState> {
    Arc::new(
        create(
            &env.client,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ShootState",
                   "metadata": {"name": "foo", "namespace": "garden"}, "spec": {}}),
        )
        .await,
    )
}

async fn last_operation(env: &Env, type_: &str, state: &str) {
    let status = json!({"status": {"lastOperation": {
        "type": type_, "state": state, "progress": 50, "description": "by test",
        "lastUpdateTime": "2025-01-01T00:00:00Z"}}});
    Api::<Shoot>::namespaced(env.client.clone(), "garden")
        .patch_status("foo", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

async fn stored(env: &Env) -> Option<ShootState> {
    Api::<ShootState>::namespaced(env.client.clone(), "garden")
        .get_opt("foo")
        .await
        .unwrap()
}

fn ours(state: &ShootState) -> bool {
    state
        .finalizers()
        .iter()
        .any(|f| f == finalizers::SHOOT_STATE)
}

#[tokio::test]
async fn the_finalizer_protects_the_state_from_migration_until_the_restore_succeeded() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    testing::shoot(&env.client, "garden", "foo").await;
    let state = shoot_state(&env).await;

    // Reconciling: nothing to protect.
    last_operation(&env, "Reconcile", "Succeeded").await;
    assert_eq!(
        ctx.clone().reconcile(state.clone()).await.unwrap(),
        Action::await_change()
    );
    assert!(!ours(&stored(&env).await.unwrap()));

    last_operation(&env, "Migrate", "Processing").await;
    ctx.clone().reconcile(state.clone()).await.unwrap();
    assert!(ours(&stored(&env).await.unwrap()));

    last_operation(&env, "Restore", "Processing").await;
    ctx.clone().reconcile(state.clone()).await.unwrap();
    assert!(ours(&stored(&env).await.unwrap()), "kept while restoring");

    // The stale object handed in does not matter: the reconcile reads the ShootState fresh.
    last_operation(&env, "Restore", "Succeeded").await;
    ctx.reconcile(state).await.unwrap();
    assert!(!ours(&stored(&env).await.unwrap()));
    env.shutdown().await;
}

#[tokio::test]
async fn a_shoot_without_last_operation_leaves_the_state_alone() {
    let env = Env::start().await;
    testing::shoot(&env.client, "garden", "foo").await;
    let state = shoot_state(&env).await;

    ctx(&env).reconcile(state.clone()).await.unwrap();
    let after = stored(&env).await.unwrap();
    assert_eq!(after.resource_version(), state.resource_version());
    env.shutdown().await;
}

#[tokio::test]
async fn the_state_of_a_shoot_that_is_gone_is_released_and_deleted() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    testing::shoot(&env.client, "garden", "foo").await;
    let state = shoot_state(&env).await;
    last_operation(&env, "Migrate", "Processing").await;
    ctx.clone().reconcile(state.clone()).await.unwrap();
    assert!(ours(&stored(&env).await.unwrap()));
    let shoots = Api::<Shoot>::namespaced(env.client.clone(), "garden");
    shoots
        .patch(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"confirmation.gardener.cloud/deletion": "true"}}})),
        )
        .await
        .unwrap();
    shoots.delete("foo", &Default::default()).await.unwrap();
    assert!(shoots.get_opt("foo").await.unwrap().is_none());

    assert_eq!(ctx.reconcile(state).await.unwrap(), Action::await_change());
    assert!(stored(&env).await.is_none(), "released and deleted");
    env.shutdown().await;
}

#[tokio::test]
async fn a_shoot_state_without_namespace_fails_and_one_that_vanished_is_done() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let mut state: ShootState =
        serde_json::from_value(json!({"metadata": {"name": "foo"}, "spec": {}})).unwrap();
    let error = ctx
        .clone()
        .reconcile(Arc::new(state.clone()))
        .await
        .unwrap_err();
    assert_eq!(error.reason(), "ShootStateNamespaceMissing");
    assert_eq!(
        ctx.clone().error_policy(&Arc::new(state.clone()), &error),
        Action::requeue(RETRY_DELAY)
    );

    state.metadata.namespace = Some("garden".into());
    assert_eq!(
        ctx.reconcile(Arc::new(state)).await.unwrap(),
        Action::await_change()
    );
    env.shutdown().await;
}
