//! Reconcile tests of the legacy Migration reconciler against an in-process garden sandbox: a
//! Shoot migrating to this seed gets its `migrationStartTime`, is force-restored on the
//! annotation (status aborted, seed cleared, annotation removed) or once the grace period is
//! over, and loses the start time when it no longer migrates.

use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use seedlet_api::core::Shoot;
use seedlet_runtime::clock::Clock;
use serde_json::{Value, json};

use super::ShootMigration;
use super::decide::Settings;
use crate::testing::{Env, SEED, create, ensure_namespace};
use seedlet_runtime::controller::Reconciler;

const MINUTE: Duration = Duration::from_secs(60);

fn ctx(env: &Env) -> Arc<ShootMigration> {
    Arc::new(ShootMigration {
        concurrency: 1,
        seed_name: SEED.to_owned(),
        garden: env.garden.clone(),
        clock: env.clock(),
        settings: Settings {
            sync_period: MINUTE,
            grace_period: 120 * MINUTE,
            last_operation_stale_duration: 10 * MINUTE,
        },
    })
}

/// Shoot `garden-dev/<name>` moving from seed `old` to ours, with `status`.
async fn shoot(env: &Env, name: &str, annotations: Value, status: Value) -> Arc<Shoot> {
    ensure_namespace(&env.garden, "garden-dev").await;
    let _: Shoot = create(
        &env.garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": name, "namespace": "garden-dev", "annotations": annotations},
               "spec": {"region": "r", "seedName": SEED, "provider": {"type": "local"}}}),
    )
    .await;
    let api: Api<Shoot> = Api::namespaced(env.garden.clone(), "garden-dev");
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(&json!({"status": status})),
    )
    .await
    .expect("status");
    Arc::new(api.get(name).await.expect("shoot"))
}

async fn fresh(env: &Env, name: &str) -> Shoot {
    Api::<Shoot>::namespaced(env.garden.clone(), "garden-dev")
        .get(name)
        .await
        .expect("shoot")
}

#[tokio::test]
async fn the_force_restore_annotation_aborts_the_migration_and_is_removed() {
    let env = Env::start().await;
    let migrating = shoot(
        &env,
        "forced",
        json!({"shoot.gardener.cloud/force-restore": "true"}),
        json!({"seedName": "old", "lastErrors": [{"description": "x", "taskID": "t"}]}),
    )
    .await;
    let action = ctx(&env).reconcile(migrating).await.expect("reconcile");
    assert_eq!(action, Action::await_change());
    let shoot = fresh(&env, "forced").await;
    let status = shoot.status.as_ref().expect("status");
    let last = status.last_operation.as_ref().expect("operation");
    assert_eq!(
        (format!("{:?}", last.type_), format!("{:?}", last.state)),
        ("Migrate".to_owned(), "Aborted".to_owned())
    );
    assert_eq!(last.description, super::reconcile::ABORTED_DESCRIPTION);
    assert_eq!(status.seed_name, None, "the destination is responsible now");
    assert!(status.last_errors.is_empty());
    assert_eq!(status.observed_generation, shoot.metadata.generation);
    assert!(
        !shoot
            .metadata
            .annotations
            .unwrap_or_default()
            .contains_key("shoot.gardener.cloud/force-restore")
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_stalled_migration_is_restored_after_the_grace_period_and_a_finished_one_forgotten() {
    let env = Env::start().await;
    let migrating = shoot(&env, "stalled", json!({}), json!({"seedName": "old"})).await;
    let action = ctx(&env).reconcile(migrating).await.expect("first");
    assert_eq!(action, Action::requeue(MINUTE));
    let shoot = fresh(&env, "stalled").await;
    let started = shoot
        .status
        .as_ref()
        .and_then(|s| s.migration_start_time.clone());
    assert_eq!(started.map(|t| t.0), Some(env.clock.now()));

    // Within the grace period nothing else happens.
    env.clock.advance(SignedDuration::from_mins(60));
    let action = ctx(&env).reconcile(Arc::new(shoot)).await.expect("second");
    assert_eq!(action, Action::requeue(MINUTE));
    let shoot = fresh(&env, "stalled").await;
    assert_eq!(
        shoot.status.as_ref().and_then(|s| s.seed_name.as_deref()),
        Some("old")
    );

    // Past it, without a fresh Migrate operation of the source, the restore is forced.
    env.clock.advance(SignedDuration::from_mins(61));
    let action = ctx(&env).reconcile(Arc::new(shoot)).await.expect("third");
    assert_eq!(action, Action::await_change());
    let shoot = fresh(&env, "stalled").await;
    let status = shoot.status.as_ref().expect("status");
    assert_eq!(status.seed_name, None);
    assert!(status.migration_start_time.is_none());

    // A shoot that arrived (status.seedName = ours) loses a leftover start time.
    let arrived = self::shoot(
        &env,
        "arrived",
        json!({}),
        json!({"seedName": SEED, "migrationStartTime": "2025-01-01T00:00:00Z"}),
    )
    .await;
    let action = ctx(&env).reconcile(arrived).await.expect("arrived");
    assert_eq!(action, Action::await_change());
    let arrived = fresh(&env, "arrived").await;
    assert!(
        arrived
            .status
            .and_then(|s| s.migration_start_time)
            .is_none()
    );
    env.shutdown().await;
}
