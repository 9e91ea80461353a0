//! End-to-end `shoot-hibernation` in a sandbox garden: the spec's Monday-evening example with a
//! fixed clock, a schedule activation reached by requeue with a running clock, and the shoots the
//! controller must leave alone (failed and up to date, unknown location).

use seedlet_testkit::shoot_lifecycle;

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use seedlet_api::core::Shoot;
use seedlet_garden::controllers::entry::run_alone;
use seedlet_garden::controllers::shoot_hibernation;
use seedlet_runtime::clock::{Clock, FakeClock};
use shoot_lifecycle::{create_shoot, patch_status, shoots, wait_shoot};
use tokio_util::sync::CancellationToken;

fn ctx(client: &kube::Client, clock: Arc<dyn Clock>) -> Arc<shoot_hibernation::Hibernation> {
    Arc::new(shoot_hibernation::Hibernation {
        client: client.clone(),
        trigger_deadline: SignedDuration::from_hours(2),
        clock,
        events: seedlet_runtime::events::Recorder::new(
            client.clone(),
            "shoot-hibernation-controller",
        ),
        concurrency: 1,
    })
}

fn schedules(location: &str) -> serde_json::Value {
    serde_json::json!({"hibernation": {"schedules": [
        {"start": "0 20 * * 1-5", "end": "0 8 * * 1-5", "location": location},
    ]}})
}

fn trigger_time(shoot: &Shoot) -> Option<Timestamp> {
    shoot
        .status
        .as_ref()?
        .last_hibernation_trigger_time
        .as_ref()
        .map(|t| t.0)
}

fn hibernated(shoot: &Shoot) -> Option<Timestamp> {
    shoot
        .hibernation_enabled()
        .then(|| trigger_time(shoot))
        .flatten()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn monday_evening_schedule_hibernates_and_leaves_failed_and_invalid_shoots_alone() {
    let garden = shoot_lifecycle::garden().await;
    let client = garden.client();
    let last_trigger = serde_json::json!({"lastHibernationTriggerTime": "2025-01-06T07:00:05Z"});

    create_shoot(&client, "berlin", schedules("Europe/Berlin")).await;
    patch_status(&client, "berlin", last_trigger.clone()).await;
    // Failed for its current generation, reconciled by this version: left to the user.
    let failed = create_shoot(&client, "failed", schedules("Europe/Berlin")).await;
    let mut status = last_trigger.clone();
    status["lastOperation"] = shoot_lifecycle::last_operation(
        "Reconcile",
        "Failed",
        "2025-01-06T18:00:00Z".parse().expect("time"),
    );
    status["observedGeneration"] = serde_json::json!(failed.metadata.generation);
    status["gardener"] =
        serde_json::json!({"id": "abc", "name": "seedlet", "version": env!("CARGO_PKG_VERSION")});
    patch_status(&client, "failed", status).await;
    create_shoot(&client, "mars", schedules("Mars/Olympus")).await;
    patch_status(&client, "mars", last_trigger).await;

    let clock = Arc::new(FakeClock::new(
        "2025-01-06T19:00:30Z".parse().expect("time"),
    ));
    let stop = CancellationToken::new();
    let controller = tokio::spawn(run_alone(ctx(&client, clock), client.clone(), stop.clone()));

    let triggered = wait_shoot(&client, "berlin", "berlin hibernated", hibernated).await;
    assert_eq!(
        triggered,
        "2025-01-06T19:00:30Z".parse::<Timestamp>().expect("time")
    );

    // The others were seen at start-up too; give the single worker time to pass them.
    tokio::time::sleep(Duration::from_millis(500)).await;
    for name in ["failed", "mars"] {
        let shoot = shoots(&client).get(name).await.expect("shoot");
        assert!(!shoot.hibernation_enabled(), "{name} must not hibernate");
        assert_eq!(
            trigger_time(&shoot),
            Some("2025-01-06T07:00:05Z".parse().expect("time")),
            "{name} keeps its trigger time"
        );
    }

    stop.cancel();
    controller.await.expect("controller stops");
    garden.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requeue_reaches_the_next_activation() {
    let garden = shoot_lifecycle::garden().await;
    let client = garden.client();
    // A Monday 20:00 UTC, 1.5 s ahead of the clock when the controller starts.
    let activation: Timestamp = "2030-01-07T20:00:00Z".parse().expect("time");
    create_shoot(
        &client,
        "utc",
        serde_json::json!({"hibernation": {"schedules": [{"start": "0 20 * * 1-5", "end": "0 8 * * 1-5"}]}}),
    )
    .await;
    let clock = Arc::new(shoot_lifecycle::RunningClock::starting_at(
        activation - SignedDuration::from_millis(1500),
    ));
    let stop = CancellationToken::new();
    let controller = tokio::spawn(run_alone(ctx(&client, clock), client.clone(), stop.clone()));

    // Nothing is due at start-up...
    tokio::time::sleep(Duration::from_millis(700)).await;
    let shoot = shoots(&client).get("utc").await.expect("shoot");
    assert!(!shoot.hibernation_enabled());
    assert_eq!(trigger_time(&shoot), None);
    // ...and the requeue lands just after 20:00.
    let triggered = wait_shoot(&client, "utc", "utc hibernated", hibernated).await;
    assert_eq!(triggered, activation);

    stop.cancel();
    controller.await.expect("controller stops");
    garden.shutdown().await;
}
