//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on a real Shoot that failed with a rate limit
//! while a fake clock stands before and after the retry period.

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_runtime::controller::Reconciler as _;
use serde_json::json;

use super::ShootRetry;
use crate::testing::{self, Env, ensure_namespace};

const FAILED_AT: &str = "2025-01-01T00:00:00Z";

fn ctx(env: &Env) -> Arc<ShootRetry> {
    Arc::new(ShootRetry {
        client: env.client.clone(),
        retry_period: SignedDuration::from_mins(10),
        // No jitter: the requeue is exact.
        retry_jitter_period: SignedDuration::ZERO,
        clock: env.clock(),
        concurrency: 1,
    })
}

/// Shoot `garden-dev/s` whose last operation failed at [`FAILED_AT`] with `code`.
async fn failed_shoot(env: &Env, code: &str) -> Arc<Shoot> {
    ensure_namespace(&env.client, "garden-dev").await;
    let shoot: Shoot = testing::shoot(&env.client, "garden-dev", "s").await;
    let status = json!({"status": {
        "observedGeneration": shoot.metadata.generation,
        "lastOperation": {"type": "Reconcile", "state": "Failed", "progress": 50,
                          "description": "rate limited", "lastUpdateTime": FAILED_AT},
        "lastErrors": [{"description": "too many requests", "codes": [code]}]}});
    Arc::new(
        Api::<Shoot>::namespaced(env.client.clone(), "garden-dev")
            .patch_status("s", &PatchParams::default(), &Patch::Merge(&status))
            .await
            .unwrap(),
    )
}

async fn operation(env: &Env) -> Option<String> {
    Api::<Shoot>::namespaced(env.client.clone(), "garden-dev")
        .get("s")
        .await
        .unwrap()
        .annotations()
        .get("gardener.cloud/operation")
        .cloned()
}

#[tokio::test]
async fn a_rate_limited_failure_is_retried_once_the_period_passed() {
    let env = Env::start().await;
    let shoot = failed_shoot(&env, "ERR_INFRA_RATE_LIMITS_EXCEEDED").await;
    let ctx = ctx(&env);
    let failed_at: Timestamp = FAILED_AT.parse().unwrap();

    env.clock.set(failed_at + SignedDuration::from_mins(4));
    let action = ctx.clone().reconcile(shoot.clone()).await.unwrap();
    assert_eq!(action, Action::requeue(Duration::from_secs(6 * 60)));
    assert_eq!(operation(&env).await, None);

    env.clock.set(failed_at + SignedDuration::from_mins(11));
    ctx.reconcile(shoot).await.unwrap();
    assert_eq!(operation(&env).await.as_deref(), Some("retry"));
    env.shutdown().await;
}

#[tokio::test]
async fn other_failures_are_not_retried() {
    let env = Env::start().await;
    let shoot = failed_shoot(&env, "ERR_INFRA_UNAUTHORIZED").await;
    env.clock
        .set(FAILED_AT.parse::<Timestamp>().unwrap() + SignedDuration::from_hours(1));
    let action = ctx(&env).reconcile(shoot).await.unwrap();
    assert_eq!(action, Action::await_change());
    assert_eq!(operation(&env).await, None);
    env.shutdown().await;
}
