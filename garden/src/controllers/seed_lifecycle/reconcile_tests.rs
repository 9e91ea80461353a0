//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on a real Seed with a real Lease while a fake
//! clock moves past the monitor periods.

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use seedlet_api::core::{Seed, Shoot};
use seedlet_runtime::controller::Reconciler as _;
use serde_json::{Value, json};

use super::{SeedLifecycle, Settings};
use crate::testing::{Env, assert_unselectable, create, ensure_namespace, seed};

fn ctx(env: &Env) -> Arc<SeedLifecycle> {
    Arc::new(SeedLifecycle {
        client: env.client.clone(),
        settings: Settings::default(),
        clock: env.clock(),
    })
}

fn condition(type_: &str, status: &str, at: Timestamp) -> Value {
    json!({"type": type_, "status": status, "reason": "R", "message": "m",
           "lastTransitionTime": at.to_string(), "lastUpdateTime": at.to_string()})
}

/// Seed `s1` with `GardenletReady=True`, its Lease renewed at `renewed`, and Shoot
/// `garden-dev/s` on it with a healthy condition and constraint.
async fn landscape(env: &Env, renewed: Timestamp) {
    let _: Seed = seed(&env.client, "s1").await;
    let status = json!({"status": {"conditions": [condition("GardenletReady", "True", renewed)]}});
    Api::<Seed>::all(env.client.clone())
        .patch_status("s1", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    ensure_namespace(&env.client, "gardener-system-seed-lease").await;
    let _: Lease = create(
        &env.client,
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
               "metadata": {"name": "s1", "namespace": "gardener-system-seed-lease"},
               "spec": {"holderIdentity": "s1", "leaseDurationSeconds": 2,
                        "renewTime": renewed.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()}}),
    )
    .await;
    ensure_namespace(&env.client, "garden-dev").await;
    let _: Shoot = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": "s", "namespace": "garden-dev"},
               "spec": {"region": "local", "seedName": "s1",
                        "provider": {"type": "local", "workers": []}}}),
    )
    .await;
    let status = json!({"status": {"seedName": "s1",
        "conditions": [condition("APIServerAvailable", "True", renewed)],
        "constraints": [condition("HibernationPossible", "True", renewed)]}});
    Api::<Shoot>::namespaced(env.client.clone(), "garden-dev")
        .patch_status("s", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

async fn stored(env: &Env) -> Seed {
    Api::<Seed>::all(env.client.clone())
        .get("s1")
        .await
        .unwrap()
}

fn status_of(conditions: &[seedlet_api::Condition], type_: &str) -> Option<(String, String)> {
    seedlet_api::conditions::find(conditions, type_)
        .map(|c| (c.status.to_string(), c.reason.clone()))
}

async fn shoot_statuses(env: &Env) -> (Option<(String, String)>, Option<(String, String)>) {
    let shoot = Api::<Shoot>::namespaced(env.client.clone(), "garden-dev")
        .get("s")
        .await
        .unwrap();
    let status = shoot.status.unwrap_or_default();
    (
        status_of(&status.conditions, "APIServerAvailable"),
        status_of(&status.constraints, "HibernationPossible"),
    )
}

#[tokio::test]
async fn a_stale_lease_turns_gardenlet_ready_unknown_then_the_shoots() {
    stale_lease_turns_gardenlet_ready_unknown_then_the_shoots(Env::start().await).await;
}

/// Kubernetes < 1.31 serves the garden's CRDs without `selectableFields`: the shoots are found
/// by listing all of them.
#[tokio::test]
async fn a_stale_lease_turns_the_shoots_unknown_when_the_garden_cannot_select_them() {
    let env = Env::start_without_selectable_fields().await;
    assert_unselectable::<Shoot>(&env.client, "status.seedName").await;
    stale_lease_turns_gardenlet_ready_unknown_then_the_shoots(env).await;
}

async fn stale_lease_turns_gardenlet_ready_unknown_then_the_shoots(env: Env) {
    let renewed: Timestamp = "2025-01-01T00:00:00Z".parse().unwrap();
    landscape(&env, renewed).await;
    let ctx = ctx(&env);
    let healthy = Some(("True".to_owned(), "R".to_owned()));

    // Fresh: checked again after the sync period (the expiry is 30 s away), nothing written.
    env.clock.set(renewed + SignedDuration::from_secs(10));
    let action = ctx
        .clone()
        .reconcile(Arc::new(stored(&env).await))
        .await
        .unwrap();
    assert_eq!(action, Action::requeue(Duration::from_secs(10)));
    assert_eq!(
        status_of(stored(&env).await.conditions(), "GardenletReady"),
        healthy
    );

    // Not renewed for the monitor period: GardenletReady Unknown, the shoots not yet.
    env.clock.set(renewed + SignedDuration::from_secs(41));
    ctx.clone()
        .reconcile(Arc::new(stored(&env).await))
        .await
        .unwrap();
    assert_eq!(
        status_of(stored(&env).await.conditions(), "GardenletReady"),
        Some(("Unknown".into(), "StatusUnknown".into()))
    );
    assert_eq!(shoot_statuses(&env).await, (healthy.clone(), healthy));

    // Unknown for the shoot monitor period: the shoot's condition and constraint follow.
    env.clock.set(renewed + SignedDuration::from_secs(41 + 200));
    ctx.reconcile(Arc::new(stored(&env).await)).await.unwrap();
    let (condition, constraint) = shoot_statuses(&env).await;
    assert_eq!(condition.map(|c| c.0).as_deref(), Some("Unknown"));
    assert_eq!(constraint.map(|c| c.0).as_deref(), Some("Unknown"));
    env.shutdown().await;
}

#[tokio::test]
async fn a_seed_without_conditions_has_no_agent_to_judge() {
    let env = Env::start().await;
    let seed: Seed = seed(&env.client, "s1").await;
    let version = seed.metadata.resource_version.clone();
    let action = ctx(&env).reconcile(Arc::new(seed)).await.unwrap();
    assert_eq!(action, Action::requeue(Duration::from_secs(10)));
    assert_eq!(
        Api::<Seed>::all(env.client.clone())
            .get("s1")
            .await
            .unwrap()
            .metadata
            .resource_version,
        version
    );
    env.shutdown().await;
}
