//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on a real Seed with real BackupBuckets and
//! `BackupBucketsReady` is read back.

use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use seedlet_api::core::{BackupBucket, Seed};
use serde_json::json;

use super::{BackupBucketsCheck, Settings};
use crate::controllers::seed_check::Check;
use crate::testing::{Env, assert_unselectable, create, seed};
use seedlet_runtime::controller::Reconciler as _;

const SYNC: Duration = Duration::from_secs(30);

fn ctx(env: &Env, threshold: Option<Duration>) -> Arc<BackupBucketsCheck> {
    Arc::new(BackupBucketsCheck::new(Check {
        client: env.client.clone(),
        settings: Settings {
            concurrent_syncs: 1,
            sync_period: SYNC,
            threshold,
        },
        clock: env.clock(),
    }))
}

async fn ready(env: &Env) -> Option<(String, String, String)> {
    let seed = Api::<Seed>::all(env.client.clone())
        .get("s1")
        .await
        .unwrap();
    seedlet_api::conditions::find(seed.conditions(), "BackupBucketsReady")
        .map(|c| (c.status.to_string(), c.reason.clone(), c.message.clone()))
}

async fn bucket(env: &Env, name: &str) {
    let _: BackupBucket = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "BackupBucket",
               "metadata": {"name": name},
               "spec": {"provider": {"type": "local", "region": "local"}, "seedName": "s1"}}),
    )
    .await;
}

#[tokio::test]
async fn buckets_make_the_condition_unknown_true_then_progressing_and_false() {
    buckets_decide_the_condition(Env::start().await).await;
}

/// Kubernetes < 1.31 serves the garden's CRDs without `selectableFields`: the check lists all
/// buckets and keeps the Seed's.
#[tokio::test]
async fn buckets_decide_the_condition_when_the_garden_cannot_select_them() {
    let env = Env::start_without_selectable_fields().await;
    assert_unselectable::<BackupBucket>(&env.client, "spec.seedName").await;
    buckets_decide_the_condition(env).await;
}

async fn buckets_decide_the_condition(env: Env) {
    let s1 = Arc::new(seed(&env.client, "s1").await);
    let ctx = ctx(&env, Some(Duration::from_secs(60)));

    let action = ctx.clone().reconcile(s1.clone()).await.unwrap();
    assert_eq!(action, Action::requeue(SYNC));
    assert_eq!(
        ready(&env).await,
        Some((
            "Unknown".into(),
            "BackupBucketsGone".into(),
            "Backup Buckets are gone.".into()
        ))
    );

    bucket(&env, "b1").await;
    // A Seed is checked at most once a second (`seed_check::MIN_CHECK_SPACING`).
    env.clock.advance(SignedDuration::from_secs(1));
    ctx.clone().reconcile(s1.clone()).await.unwrap();
    assert_eq!(ready(&env).await.map(|c| c.0).as_deref(), Some("True"));

    let failing = json!({"status": {"lastError": {"description": "access denied"}}});
    Api::<BackupBucket>::all(env.client.clone())
        .patch_status("b1", &PatchParams::default(), &Patch::Merge(&failing))
        .await
        .unwrap();
    env.clock.advance(SignedDuration::from_secs(1));
    ctx.clone().reconcile(s1.clone()).await.unwrap();
    let message = "The following BackupBuckets have issues:\n* Name: b1, Error: access denied";
    assert_eq!(
        ready(&env).await,
        Some((
            "Progressing".into(),
            "BackupBucketsError".into(),
            message.into()
        )),
        "within the threshold after True"
    );

    env.clock.advance(SignedDuration::from_secs(61));
    ctx.reconcile(s1).await.unwrap();
    assert_eq!(
        ready(&env).await,
        Some(("False".into(), "BackupBucketsError".into(), message.into()))
    );
    env.shutdown().await;
}
