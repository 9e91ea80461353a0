//! End-to-end seed lifecycle: an agent heartbeats into a sandbox garden; when it stops, the
//! garden controller marks `GardenletReady` Unknown after the monitor period and the Seed's
//! Shoots Unknown after the shoot monitor period; when it resumes, the Seed is ready again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use seedlet_agent::RunningAgent;
use seedlet_api::conditions::{Condition, ConditionStatus};
use seedlet_api::core::{Seed, Shoot};
use seedlet_garden::controllers::entry::run_alone;
use seedlet_garden::controllers::seed_lifecycle;
use seedlet_runtime::clock::SystemClock;
use seedlet_sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

/// Starts an agent from the testkit's configuration with a 300 ms heartbeat.
async fn start_agent(
    garden: &Sandbox,
    seed: &Sandbox,
    shutdown: CancellationToken,
) -> RunningAgent {
    seedlet_testkit::start_agent_from(
        seedlet_testkit::agent_config(seedlet_testkit::AGENT_CONFIG),
        seed.client(),
        Some(garden.client()),
        shutdown,
        |settings| settings.heartbeat.period = Duration::from_millis(300),
    )
    .await
}

async fn condition<F>(client: &kube::Client, what: &str, timeout: Duration, read: F) -> Condition
where
    F: Fn(Seed) -> Option<Condition>,
{
    let seeds: Api<Seed> = Api::all(client.clone());
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(found) = seeds.get_opt("local").await.ok().flatten().and_then(&read) {
            return found;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn gardenlet_ready(status: ConditionStatus) -> impl Fn(Seed) -> Option<Condition> {
    move |seed: Seed| {
        seedlet_api::conditions::find(seed.conditions(), "GardenletReady")
            .filter(|c| c.status == status)
            .cloned()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn seed_and_shoots_turn_unknown_when_heartbeats_stop_and_seed_recovers_when_they_resume() {
    let garden = seedlet_testkit::start_sandbox("garden").await;
    let seed = Sandbox::builder().name("seed").start().await.expect("seed");
    let client = garden.client();
    seedlet_testkit::prepare_garden(&client).await;
    seedlet_testkit::ensure_namespace(&client, "garden-dev").await;
    seedlet_testkit::ensure_namespace(&seed.client(), "garden").await;
    let shoots: Api<Shoot> = Api::namespaced(client.clone(), "garden-dev");
    let deadline = Instant::now() + Duration::from_secs(10);
    while shoots.list(&Default::default()).await.is_err() {
        assert!(Instant::now() < deadline, "shoot crd not served");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for (name, seed_name) in [("ours", "local"), ("other", "elsewhere")] {
        let shoot: Shoot = serde_json::from_value(serde_json::json!({
            "apiVersion": "core.gardener.cloud/v1beta1",
            "kind": "Shoot",
            "metadata": {"name": name, "namespace": "garden-dev"},
            "spec": {"region": "local", "provider": {"type": "local", "workers": []}},
        }))
        .expect("shoot");
        shoots
            .create(&PostParams::default(), &shoot)
            .await
            .expect("create shoot");
        let status = serde_json::json!({"status": {"seedName": seed_name}});
        shoots
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .expect("shoot status");
    }

    let agent_stop = CancellationToken::new();
    let agent = start_agent(&garden, &seed, agent_stop.clone()).await;
    condition(
        &client,
        "GardenletReady True",
        Duration::from_secs(10),
        gardenlet_ready(ConditionStatus::True),
    )
    .await;

    let settings = seed_lifecycle::Settings {
        concurrent_syncs: 2,
        sync_period: Duration::from_millis(200),
        monitor_period: Duration::from_millis(1500),
        shoot_monitor_period: Duration::from_secs(2),
    };
    let controller_stop = CancellationToken::new();
    let ctx = Arc::new(seed_lifecycle::SeedLifecycle {
        client: client.clone(),
        settings,
        clock: Arc::new(SystemClock),
    });
    let controller = tokio::spawn(run_alone(
        ctx.clone(),
        client.clone(),
        controller_stop.clone(),
    ));

    // While the agent heartbeats, the controller leaves the Seed alone.
    tokio::time::sleep(settings.monitor_period + Duration::from_millis(500)).await;
    condition(
        &client,
        "GardenletReady still True",
        Duration::from_secs(1),
        gardenlet_ready(ConditionStatus::True),
    )
    .await;

    agent_stop.cancel();
    agent.wait().await.expect("agent stops");
    let stopped = Instant::now();
    let unknown = condition(
        &client,
        "GardenletReady Unknown",
        Duration::from_secs(10),
        gardenlet_ready(ConditionStatus::Unknown),
    )
    .await;
    let unknown_seen = Instant::now();
    assert_eq!(unknown.reason, "StatusUnknown");
    assert_eq!(unknown.message, "Gardenlet stopped posting status updates.");
    // The last renewal happened at most one heartbeat period before the agent stopped.
    let waited = stopped.elapsed();
    assert!(
        waited >= settings.monitor_period - Duration::from_millis(300),
        "marked unknown only {waited:?} after the agent stopped"
    );

    let deadline = Instant::now() + Duration::from_secs(10);
    let ours = loop {
        let shoot = shoots.get("ours").await.expect("shoot");
        let status = shoot.status.clone().unwrap_or_default();
        if status.conditions.len() == 4 && status.constraints.len() == 2 {
            break shoot;
        }
        assert!(
            Instant::now() < deadline,
            "shoot conditions not set: {:?}",
            shoot.status
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let status = ours.status.expect("status");
    // lastTransitionTime is stored with second precision, so the controller may act up to one
    // second before the exact shoot monitor period.
    let shoots_after = unknown_seen.elapsed();
    assert!(
        shoots_after >= settings.shoot_monitor_period - Duration::from_millis(1100),
        "shoots marked {shoots_after:?} after the seed turned unknown"
    );
    for condition in status.conditions.iter().chain(status.constraints.iter()) {
        assert_eq!(condition.status, ConditionStatus::Unknown);
        assert_eq!(condition.reason, "StatusUnknown");
        assert_eq!(condition.message, "Gardenlet stopped sending heartbeats.");
    }
    assert!(
        status
            .conditions
            .iter()
            .all(|c| c.type_ != "EveryNodeReady"),
        "workerless shoot"
    );
    let other = shoots.get("other").await.expect("shoot");
    assert!(
        other
            .status
            .map(|s| s.conditions.is_empty())
            .unwrap_or(true),
        "other seed's shoot untouched"
    );

    let agent_stop = CancellationToken::new();
    let agent = start_agent(&garden, &seed, agent_stop.clone()).await;
    condition(
        &client,
        "GardenletReady True after resume",
        Duration::from_secs(10),
        gardenlet_ready(ConditionStatus::True),
    )
    .await;
    // The controller must not flip it back while heartbeats flow.
    tokio::time::sleep(Duration::from_secs(2)).await;
    condition(
        &client,
        "GardenletReady stays True",
        Duration::from_secs(1),
        gardenlet_ready(ConditionStatus::True),
    )
    .await;

    agent_stop.cancel();
    agent.wait().await.expect("agent stops");
    controller_stop.cancel();
    controller.await.expect("controller stops");
    garden.shutdown().await;
    seed.shutdown().await;
}
