//! Reconcile tests against an in-process garden sandbox (spec §13.19):
//! [`Reconciler::reconcile`](seedlet_runtime::controller::Reconciler::reconcile) is called
//! directly on real Events while the fake clock passes the TTL.

use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Event;
use kube::Api;
use kube::runtime::controller::Action;
use seedlet_runtime::controller::Reconciler as _;
use serde_json::json;

use super::EventTtl;
use crate::testing::{Env, create, ensure_namespace};

const NS: &str = "garden-dev";

fn ctx(env: &Env) -> Arc<EventTtl> {
    Arc::new(EventTtl {
        client: env.client.clone(),
        clock: env.clock(),
        ttl: SignedDuration::from_hours(1),
        concurrency: 1,
    })
}

/// An Event about `kind` `x`, last seen at `last`.
async fn event(env: &Env, name: &str, kind: &str, last: &str) -> Arc<Event> {
    Arc::new(
        create(
            &env.client,
            json!({"apiVersion": "v1", "kind": "Event",
                   "metadata": {"name": name, "namespace": NS},
                   "involvedObject": {"apiVersion": "core.gardener.cloud/v1beta1",
                                      "kind": kind, "name": "x", "namespace": NS},
                   "reason": "Test", "message": "m", "type": "Normal",
                   "lastTimestamp": last}),
        )
        .await,
    )
}

#[tokio::test]
async fn shoot_events_are_kept_and_project_events_go_after_the_ttl() {
    let env = Env::start().await;
    ensure_namespace(&env.client, NS).await;
    let ctx = ctx(&env);
    let events: Api<Event> = Api::namespaced(env.client.clone(), NS);
    // The clock stands at 2025-01-01T00:00:00Z.
    let shoot = event(&env, "shoot-old", "Shoot", "2024-12-30T00:00:00Z").await;
    let project = event(&env, "project-recent", "Project", "2024-12-31T23:50:00Z").await;

    assert_eq!(
        ctx.clone().reconcile(shoot.clone()).await.unwrap(),
        Action::await_change()
    );
    assert_eq!(
        ctx.clone().reconcile(project.clone()).await.unwrap(),
        Action::requeue(Duration::from_secs(50 * 60)),
        "looks again when the TTL is over"
    );
    assert!(events.get_opt("project-recent").await.unwrap().is_some());

    env.clock.advance(SignedDuration::from_mins(50));
    assert_eq!(
        ctx.clone().reconcile(project).await.unwrap(),
        Action::await_change()
    );
    assert!(events.get_opt("project-recent").await.unwrap().is_none());
    assert_eq!(ctx.reconcile(shoot).await.unwrap(), Action::await_change());
    assert!(events.get_opt("shoot-old").await.unwrap().is_some());
    env.shutdown().await;
}
