//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on a real Shoot with hibernation schedules
//! while a fake clock stands at chosen times.

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp, ToSpan};
use k8s_openapi::api::core::v1::Event;
use kube::Api;
use kube::runtime::controller::Action;
use seedlet_api::core::Shoot;
use seedlet_runtime::controller::Reconciler as _;
use serde_json::json;

use super::Hibernation;
use super::schedule::REQUEUE_SLACK;
use crate::testing::{Env, create, ensure_namespace};

fn ctx(env: &Env, trigger_deadline: SignedDuration) -> Arc<Hibernation> {
    Arc::new(Hibernation {
        client: env.client.clone(),
        trigger_deadline,
        clock: env.clock(),
        events: env.events(),
        concurrency: 1,
    })
}

/// Shoot `garden-dev/s` hibernating 22:00–06:00 UTC; returns it and the day after its creation
/// at midnight UTC.
async fn shoot(env: &Env) -> (Shoot, Timestamp) {
    ensure_namespace(&env.client, "garden-dev").await;
    let shoot: Shoot = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": "s", "namespace": "garden-dev"},
               "spec": {"region": "local", "provider": {"type": "local", "workers": []},
                        "hibernation": {"schedules": [
                            {"start": "0 22 * * *", "end": "0 6 * * *", "location": "UTC"}]}}}),
    )
    .await;
    let created = shoot
        .metadata
        .creation_timestamp
        .clone()
        .expect("created")
        .0;
    let next_day = created
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
        .tomorrow()
        .unwrap()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .unwrap()
        .timestamp();
    (shoot, next_day)
}

async fn stored(env: &Env) -> Shoot {
    Api::<Shoot>::namespaced(env.client.clone(), "garden-dev")
        .get("s")
        .await
        .unwrap()
}

fn enabled(shoot: &Shoot) -> Option<bool> {
    shoot.spec.hibernation.as_ref().and_then(|h| h.enabled)
}

fn trigger_time(shoot: &Shoot) -> Option<Timestamp> {
    shoot
        .status
        .as_ref()
        .and_then(|s| s.last_hibernation_trigger_time.as_ref())
        .map(|t| t.0)
}

fn requeue(delay: SignedDuration) -> Action {
    Action::requeue(Duration::try_from(delay + REQUEUE_SLACK).unwrap())
}

#[tokio::test]
async fn a_due_start_hibernates_once_and_the_end_wakes_up() {
    let env = Env::start().await;
    let (created, day) = shoot(&env).await;
    let ctx = ctx(&env, SignedDuration::from_hours(2));

    let evening = day + 22.hours() + 30.minutes();
    env.clock.set(evening);
    let action = ctx.clone().reconcile(Arc::new(created)).await.unwrap();
    assert_eq!(action, requeue(SignedDuration::from_mins(7 * 60 + 30)));
    let hibernated = stored(&env).await;
    assert_eq!(enabled(&hibernated), Some(true));
    assert_eq!(trigger_time(&hibernated), Some(evening));
    let events = Api::<Event>::namespaced(env.client.clone(), "garden-dev")
        .list(&Default::default())
        .await
        .unwrap();
    assert!(
        events
            .items
            .iter()
            .any(|e| e.reason.as_deref() == Some("Hibernated"))
    );

    // Again at the same time: the activation was acted upon, nothing is written.
    let version = hibernated.metadata.resource_version.clone();
    ctx.clone().reconcile(Arc::new(hibernated)).await.unwrap();
    assert_eq!(stored(&env).await.metadata.resource_version, version);

    let morning = day + 30.hours() + 15.minutes();
    env.clock.set(morning);
    ctx.reconcile(Arc::new(stored(&env).await)).await.unwrap();
    let woken = stored(&env).await;
    assert_eq!(enabled(&woken), Some(false));
    assert_eq!(trigger_time(&woken), Some(morning));
    env.shutdown().await;
}

#[tokio::test]
async fn an_activation_older_than_the_trigger_deadline_is_skipped() {
    let env = Env::start().await;
    let (created, day) = shoot(&env).await;
    env.clock.set(day + 22.hours() + 30.minutes());

    let action = ctx(&env, SignedDuration::from_mins(10))
        .reconcile(Arc::new(created))
        .await
        .unwrap();
    assert_eq!(action, requeue(SignedDuration::from_mins(7 * 60 + 30)));
    let unchanged = stored(&env).await;
    assert_eq!(enabled(&unchanged), None);
    assert_eq!(trigger_time(&unchanged), None);
    env.shutdown().await;
}

/// Edge case §13.13: a Shoot whose last operation failed for its current generation under this
/// version is only requeued (its due activation is not acted upon); once it is not up to date any
/// more the activation is applied. An unknown location is not requeued at all.
#[tokio::test]
async fn a_failed_up_to_date_shoot_only_requeues_and_a_bad_location_never_does() {
    let env = Env::start().await;
    let (created, day) = shoot(&env).await;
    let ctx = ctx(&env, SignedDuration::from_hours(2));
    let shoots = Api::<Shoot>::namespaced(env.client.clone(), "garden-dev");
    let status = |generation: Option<i64>| {
        json!({"status": {
            "lastOperation": {"type": "Reconcile", "state": "Failed", "description": "",
                              "progress": 50, "lastUpdateTime": "2025-01-01T00:00:00Z"},
            "observedGeneration": generation,
            "gardener": {"id": "abc", "name": "seedlet", "version": env!("CARGO_PKG_VERSION")}}})
    };
    let failed = shoots
        .patch_status(
            "s",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(status(created.metadata.generation)),
        )
        .await
        .unwrap();
    env.clock.set(day + 22.hours() + 30.minutes());

    let action = ctx.clone().reconcile(Arc::new(failed)).await.unwrap();
    assert_eq!(action, requeue(SignedDuration::from_mins(7 * 60 + 30)));
    assert_eq!(enabled(&stored(&env).await), None, "left to the user");

    let outdated = shoots
        .patch_status(
            "s",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(status(Some(0))),
        )
        .await
        .unwrap();
    ctx.clone().reconcile(Arc::new(outdated)).await.unwrap();
    assert_eq!(enabled(&stored(&env).await), Some(true));

    let on_mars = shoots
        .patch(
            "s",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"hibernation": {"schedules": [
                {"start": "0 8 * * *", "location": "Mars/Olympus"}]}}})),
        )
        .await
        .unwrap();
    let version = on_mars.metadata.resource_version.clone();
    let action = ctx.reconcile(Arc::new(on_mars)).await.unwrap();
    assert_eq!(action, Action::await_change());
    assert_eq!(stored(&env).await.metadata.resource_version, version);
    env.shutdown().await;
}
