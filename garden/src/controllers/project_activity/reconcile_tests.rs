//! Reconcile tests against an in-process garden sandbox:
//! [`Reconciler::reconcile`](seedlet_runtime::controller::Reconciler::reconcile) is called
//! directly on a real Project and its `status.lastActivityTimestamp` is read back at the fake
//! clock's time.

use std::sync::Arc;

use kube::Api;
use kube::runtime::controller::Action;
use seedlet_api::core::Project;
use seedlet_runtime::controller::Reconciler as _;
use serde_json::json;

use super::{Error, ProjectActivity, RETRY_DELAY};
use crate::testing::{Env, create};

fn ctx(env: &Env) -> Arc<ProjectActivity> {
    Arc::new(ProjectActivity {
        client: env.client.clone(),
        clock: env.clock(),
        concurrency: 1,
    })
}

async fn project(env: &Env) -> Arc<Project> {
    Arc::new(
        create(
            &env.client,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
                   "metadata": {"name": "dev"},
                   "spec": {"namespace": "garden-dev"}}),
        )
        .await,
    )
}

async fn last_activity(env: &Env) -> Option<String> {
    Api::<Project>::all(env.client.clone())
        .get("dev")
        .await
        .unwrap()
        .status
        .and_then(|s| s.last_activity_timestamp)
        .map(|t| t.0.to_string())
}

#[tokio::test]
async fn activity_stamps_the_project_with_the_current_time_on_every_pass() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let created = project(&env).await;
    assert_eq!(last_activity(&env).await, None);

    let action = ctx.clone().reconcile(created.clone()).await.unwrap();
    assert_eq!(action, Action::await_change());
    assert_eq!(
        last_activity(&env).await.as_deref(),
        Some("2025-01-01T00:00:00Z")
    );

    env.clock.advance(jiff::SignedDuration::from_hours(3));
    ctx.reconcile(created).await.unwrap();
    assert_eq!(
        last_activity(&env).await.as_deref(),
        Some("2025-01-01T03:00:00Z")
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_vanished_project_is_no_error() {
    let env = Env::start().await;
    let gone: Project = serde_json::from_value(json!({
        "metadata": {"name": "gone"}, "spec": {"namespace": "garden-gone"}}))
    .unwrap();
    assert_eq!(
        ctx(&env).reconcile(Arc::new(gone)).await.unwrap(),
        Action::await_change()
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_lost_write_race_is_requeued_at_once_and_other_failures_after_the_retry_delay() {
    // The timestamp patch is unguarded (last writer wins), so the garden does not answer it 409;
    // the policy still treats a conflict as routine.
    let env = Env::start().await;
    let created = project(&env).await;
    let failure = |code: u16, reason: &str| Error::Write {
        project: "dev".into(),
        source: kube::Error::Api(
            kube::core::Status::failure("m", reason)
                .with_code(code)
                .boxed(),
        ),
    };
    assert_eq!(
        ctx(&env).error_policy(&created, &failure(409, "Conflict")),
        Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE)
    );
    assert_eq!(
        ctx(&env).error_policy(&created, &failure(500, "InternalError")),
        Action::requeue(RETRY_DELAY)
    );
    env.shutdown().await;
}
