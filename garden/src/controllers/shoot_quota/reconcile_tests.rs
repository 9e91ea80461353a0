//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on a real Shoot whose SecretBinding lists real
//! Quotas, while a fake clock stands before and after the lifetime.

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Quota, SecretBinding, Shoot};
use seedlet_runtime::controller::{Reason as _, Reconciler as _};
use serde_json::{Value, json};

use super::ShootQuota;
use crate::testing::{Env, create, ensure_namespace};

const NS: &str = "garden-dev";
const SYNC: Duration = Duration::from_secs(60);

fn ctx(env: &Env) -> Arc<ShootQuota> {
    Arc::new(ShootQuota {
        client: env.client.clone(),
        sync_period: SYNC,
        clock: env.clock(),
        concurrency: 1,
    })
}

async fn quota(env: &Env, name: &str, days: i32) {
    let _: Quota = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Quota",
               "metadata": {"name": name, "namespace": NS},
               "spec": {"scope": {"apiVersion": "v1", "kind": "Secret"},
                        "clusterLifetimeDays": days}}),
    )
    .await;
}

/// SecretBinding `b` listing `quotas` and Shoot `s` using it; returns the Shoot.
async fn shoot(env: &Env, quotas: Value) -> Shoot {
    ensure_namespace(&env.client, NS).await;
    let _: SecretBinding = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "SecretBinding",
               "metadata": {"name": "b", "namespace": NS},
               "secretRef": {"name": "creds", "namespace": NS},
               "provider": {"type": "local"}, "quotas": quotas}),
    )
    .await;
    create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": "s", "namespace": NS},
               "spec": {"region": "local", "secretBindingName": "b",
                        "provider": {"type": "local", "workers": []}}}),
    )
    .await
}

fn shoots(env: &Env) -> Api<Shoot> {
    Api::namespaced(env.client.clone(), NS)
}

#[tokio::test]
async fn the_smallest_lifetime_is_annotated_and_an_expired_shoot_is_deleted() {
    let env = Env::start().await;
    ensure_namespace(&env.client, NS).await;
    quota(&env, "long", 7).await;
    quota(&env, "short", 3).await;
    let created = shoot(
        &env,
        json!([{"name": "long", "namespace": NS}, {"name": "short", "namespace": NS}]),
    )
    .await;
    let born = created.metadata.creation_timestamp.clone().unwrap().0;
    let expires: Timestamp = born + SignedDuration::from_hours(72);
    let ctx = ctx(&env);

    env.clock.set(born + SignedDuration::from_hours(1));
    let action = ctx.clone().reconcile(Arc::new(created)).await.unwrap();
    assert_eq!(action, Action::requeue(SYNC));
    let annotated = shoots(&env).get("s").await.unwrap();
    assert_eq!(
        annotated
            .annotations()
            .get("shoot.gardener.cloud/expiration-timestamp")
            .map(String::as_str),
        Some(expires.strftime("%Y-%m-%dT%H:%M:%SZ").to_string().as_str())
    );

    env.clock.set(expires + SignedDuration::from_secs(1));
    ctx.reconcile(Arc::new(annotated)).await.unwrap();
    assert!(
        shoots(&env).get_opt("s").await.unwrap().is_none(),
        "deleted with the deletion confirmation"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_missing_quota_fails_with_its_reason_and_writes_nothing() {
    let env = Env::start().await;
    let created = shoot(&env, json!([{"name": "absent", "namespace": NS}])).await;
    let version = created.metadata.resource_version.clone();
    let error = ctx(&env).reconcile(Arc::new(created)).await.unwrap_err();
    assert_eq!(error.reason(), "QuotaReadError");
    assert_eq!(
        shoots(&env)
            .get("s")
            .await
            .unwrap()
            .metadata
            .resource_version,
        version
    );
    env.shutdown().await;
}

/// Edge case §13.19 (quota part): a Quota without `clusterLifetimeDays` sets no lifetime, so a
/// stored expiration annotation is removed and the Shoot is only requeued, never deleted.
#[tokio::test]
async fn a_quota_without_a_lifetime_removes_the_expiration_annotation() {
    let env = Env::start().await;
    ensure_namespace(&env.client, NS).await;
    let _: Quota = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Quota",
               "metadata": {"name": "unlimited", "namespace": NS},
               "spec": {"scope": {"apiVersion": "v1", "kind": "Secret"},
                        "metrics": {"cpu": "200"}}}),
    )
    .await;
    shoot(&env, json!([{"name": "unlimited", "namespace": NS}])).await;
    let expired = shoots(&env)
        .patch(
            "s",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"annotations": {
                "shoot.gardener.cloud/expiration-timestamp": "2020-01-01T00:00:00Z"}}})),
        )
        .await
        .unwrap();
    env.clock.set("2025-06-01T00:00:00Z".parse().unwrap());

    let action = ctx(&env).reconcile(Arc::new(expired)).await.unwrap();
    assert_eq!(action, Action::requeue(SYNC));
    let kept = shoots(&env).get("s").await.unwrap();
    assert!(
        !kept
            .annotations()
            .contains_key("shoot.gardener.cloud/expiration-timestamp")
    );
    env.shutdown().await;
}
