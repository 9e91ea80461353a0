//! Reconcile tests against an in-process garden sandbox: a migrating Shoot and its source and
//! destination Seeds are real objects, the controller type's `reconcile` is called directly
//! (through the `Reconciler` trait) and the Shoot's `ReadyForMigration` constraint is read back.

use std::sync::Arc;

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::names::shoot_lifecycle::{
    DESTINATION_SEED_READY, DESTINATION_SEED_UNREADY, READY_FOR_MIGRATION,
};
use seedlet_runtime::controller::{Reason as _, Reconciler as _};
use serde_json::json;

use super::reconcile::UNREADY_RECHECK;
use super::{Error, ShootMigration};
use crate::testing::{self, Env};

fn ctx(env: &Env) -> Arc<ShootMigration> {
    Arc::new(ShootMigration {
        client: env.client.clone(),
        clock: env.clock(),
        concurrency: 1,
    })
}

/// Seed `name` on gardenlet 1.0 with its generation observed and `GardenletReady` as given.
async fn seed(env: &Env, name: &str, gardenlet_ready: &str) {
    let created = testing::seed(&env.client, name).await;
    let condition = |type_: &str, status: &str| {
        json!({"type": type_, "status": status, "reason": "Checked", "message": "checked",
               "lastTransitionTime": "2025-01-01T00:00:00Z",
               "lastUpdateTime": "2025-01-01T00:00:00Z"})
    };
    let status = json!({"status": {
        "observedGeneration": created.metadata.generation,
        "gardener": {"id": "x", "name": "gardenlet", "version": "1.0"},
        "conditions": [condition("GardenletReady", gardenlet_ready),
                       condition("SeedSystemComponentsHealthy", "True")]}});
    Api::<Seed>::all(env.client.clone())
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

/// Shoot `garden/foo` moving from `source` (status) to `destination` (spec).
async fn shoot(env: &Env, source: &str, destination: &str) -> Arc<Shoot> {
    testing::shoot(&env.client, "garden", "foo").await;
    let shoots = Api::<Shoot>::namespaced(env.client.clone(), "garden");
    shoots
        .patch(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"seedName": destination}})),
        )
        .await
        .unwrap();
    Arc::new(
        shoots
            .patch_status(
                "foo",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"seedName": source}})),
            )
            .await
            .unwrap(),
    )
}

async fn stored(env: &Env) -> Shoot {
    Api::<Shoot>::namespaced(env.client.clone(), "garden")
        .get("foo")
        .await
        .unwrap()
}

/// `(status, reason)` of the stored constraint.
async fn constraint(env: &Env) -> Option<(String, String)> {
    let shoot = stored(env).await;
    shoot
        .status?
        .constraints
        .iter()
        .find(|c| c.type_ == READY_FOR_MIGRATION)
        .map(|c| {
            let status = serde_json::to_value(&c.status).unwrap();
            (
                status.as_str().unwrap_or_default().to_owned(),
                c.reason.clone(),
            )
        })
}

fn pair(status: &str, reason: &str) -> Option<(String, String)> {
    Some((status.to_owned(), reason.to_owned()))
}

#[tokio::test]
async fn a_ready_destination_makes_the_shoot_ready_for_migration() {
    let env = Env::start().await;
    seed(&env, "src", "True").await;
    seed(&env, "dest", "True").await;
    let migrating = shoot(&env, "src", "dest").await;

    let action = ctx(&env).reconcile(migrating).await.unwrap();
    assert_eq!(action, Action::await_change());
    assert_eq!(constraint(&env).await, pair("True", DESTINATION_SEED_READY));
    env.shutdown().await;
}

#[tokio::test]
async fn an_unready_destination_is_reported_and_checked_again_soon() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    seed(&env, "src", "True").await;
    seed(&env, "dest", "False").await;
    let migrating = shoot(&env, "src", "dest").await;

    let action = ctx.clone().reconcile(migrating).await.unwrap();
    assert_eq!(action, Action::requeue(UNREADY_RECHECK));
    assert_eq!(
        constraint(&env).await,
        pair("False", DESTINATION_SEED_UNREADY)
    );

    // Nothing changed: the recheck writes nothing.
    let written = stored(&env).await;
    ctx.reconcile(Arc::new(written.clone())).await.unwrap();
    assert_eq!(
        stored(&env).await.resource_version(),
        written.resource_version()
    );
    env.shutdown().await;
}

#[tokio::test]
async fn the_constraint_leaves_once_the_shoot_no_longer_migrates() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    seed(&env, "src", "True").await;
    seed(&env, "dest", "True").await;
    let migrating = shoot(&env, "src", "dest").await;
    ctx.clone().reconcile(migrating).await.unwrap();
    let arrived = Api::<Shoot>::namespaced(env.client.clone(), "garden")
        .patch_status(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"seedName": "dest"}})),
        )
        .await
        .unwrap();

    assert_eq!(
        ctx.reconcile(Arc::new(arrived)).await.unwrap(),
        Action::await_change()
    );
    assert_eq!(constraint(&env).await, None);
    env.shutdown().await;
}

#[tokio::test]
async fn a_missing_destination_seed_fails_with_seed_read_error() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    seed(&env, "src", "True").await;
    let migrating = shoot(&env, "src", "gone").await;

    let error = ctx.clone().reconcile(migrating.clone()).await.unwrap_err();
    assert!(
        matches!(&error, Error::ReadSeed { role: "destination", seed, .. } if seed == "gone"),
        "{error}"
    );
    assert_eq!(error.reason(), "SeedReadError");
    assert_eq!(
        ctx.error_policy(&migrating, &error),
        Action::requeue(UNREADY_RECHECK)
    );
    assert_eq!(constraint(&env).await, None);
    env.shutdown().await;
}

#[tokio::test]
async fn a_stale_copy_loses_the_constraint_write_with_a_conflict_and_is_requeued_at_once() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    seed(&env, "src", "True").await;
    seed(&env, "dest", "True").await;
    let stale = shoot(&env, "src", "dest").await;
    Api::<Shoot>::namespaced(env.client.clone(), "garden")
        .patch(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
        )
        .await
        .unwrap();

    let error = ctx.clone().reconcile(stale.clone()).await.unwrap_err();
    assert!(matches!(error, Error::PatchConstraints { .. }), "{error}");
    assert_eq!(
        ctx.clone().error_policy(&stale, &error),
        Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE)
    );
    assert_eq!(constraint(&env).await, None);

    ctx.reconcile(Arc::new(stored(&env).await)).await.unwrap();
    assert_eq!(constraint(&env).await, pair("True", DESTINATION_SEED_READY));
    env.shutdown().await;
}

#[tokio::test]
async fn a_shoot_without_namespace_is_invalid() {
    let env = Env::start().await;
    let mut shoot: Shoot = serde_json::from_value(json!({
        "metadata": {"name": "foo"},
        "spec": {"region": "local", "provider": {"type": "local", "workers": []}}}))
    .unwrap();
    shoot.metadata.namespace = None;
    let error = ctx(&env).reconcile(Arc::new(shoot)).await.unwrap_err();
    assert_eq!(error.reason(), "ShootInvalid");
    env.shutdown().await;
}
