//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on a real Project while a fake clock moves
//! through the minimum lifetime, the grace period and the expiration.

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use kube::Api;
use seedlet_api::core::Project;
use seedlet_runtime::controller::Reconciler as _;
use serde_json::json;

use super::StaleProjects;
use super::decide::{Settings, days};
use crate::testing::{self, Env, create, ensure_namespace};

fn ctx(env: &Env) -> Arc<StaleProjects> {
    Arc::new(StaleProjects {
        client: env.client.clone(),
        clock: env.clock(),
        settings: Settings {
            minimum_lifetime: days(1),
            grace_period: days(2),
            expiration: days(7),
        },
        sync_period: Duration::from_secs(3600),
        concurrency: 1,
    })
}

/// Project `dev` with its namespace `garden-dev`; returns it and its creation time.
async fn project(env: &Env) -> (Arc<Project>, Timestamp) {
    ensure_namespace(&env.client, "garden-dev").await;
    let project: Project = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
               "metadata": {"name": "dev"}, "spec": {"namespace": "garden-dev"}}),
    )
    .await;
    let created = project.metadata.creation_timestamp.clone().unwrap().0;
    (Arc::new(project), created)
}

/// `(staleSinceTimestamp, staleAutoDeleteTimestamp)`, or `None` when the project is gone.
async fn stale(env: &Env) -> Option<(Option<Timestamp>, Option<Timestamp>)> {
    let project = Api::<Project>::all(env.client.clone())
        .get_opt("dev")
        .await
        .unwrap()?;
    let status = project.status.unwrap_or_default();
    Some((
        status.stale_since_timestamp.map(|t| t.0),
        status.stale_auto_delete_timestamp.map(|t| t.0),
    ))
}

#[tokio::test]
async fn an_unused_project_turns_stale_gets_its_auto_delete_time_and_is_deleted_then() {
    let env = Env::start().await;
    let (dev, created) = project(&env).await;
    let ctx = ctx(&env);

    env.clock.set(created + SignedDuration::from_hours(12));
    ctx.clone().reconcile(dev.clone()).await.unwrap();
    assert_eq!(
        stale(&env).await,
        Some((None, None)),
        "within the minimum lifetime"
    );

    let since = created + days(2);
    env.clock.set(since);
    ctx.clone().reconcile(dev.clone()).await.unwrap();
    assert_eq!(
        stale(&env).await,
        Some((Some(since), None)),
        "stale, within the grace period"
    );

    env.clock.set(since + days(3));
    ctx.clone().reconcile(dev.clone()).await.unwrap();
    let auto_delete = since + days(7);
    assert_eq!(stale(&env).await, Some((Some(since), Some(auto_delete))));

    env.clock.set(auto_delete);
    ctx.reconcile(dev).await.unwrap();
    assert_eq!(
        stale(&env).await,
        None,
        "deleted with the deletion confirmation"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_shoot_in_the_namespace_keeps_the_project_from_going_stale() {
    let env = Env::start().await;
    let (dev, created) = project(&env).await;
    testing::shoot(&env.client, "garden-dev", "s").await;
    env.clock.set(created + days(30));
    ctx(&env).reconcile(dev).await.unwrap();
    assert_eq!(stale(&env).await, Some((None, None)));
    env.shutdown().await;
}
