//! The latency from a registration change to a Healthy installation (measured, ignored by default).

use super::*;

/// First time each name was seen by a watch, and when its installation became Installed+Healthy.
#[derive(Default)]
struct Sightings {
    installations: std::collections::HashMap<String, (String, Instant)>,
    managed_resources: std::collections::HashMap<String, Instant>,
    healthy: std::collections::HashMap<String, Instant>,
}

fn percentile(sorted: &[Duration], percent: usize) -> Duration {
    sorted[(sorted.len() * percent).div_ceil(100).max(1) - 1]
}

fn summary(what: &str, mut latencies: Vec<Duration>) -> Duration {
    latencies.sort();
    let p50 = percentile(&latencies, 50);
    let p99 = percentile(&latencies, 99);
    println!(
        "{what} over {} installations: p50 {p50:.1?}, p99 {p99:.1?}, max {:.1?}",
        latencies.len(),
        latencies[latencies.len() - 1]
    );
    p99
}

/// Latency measurement (`cargo test --test e2e garden_extensions:: -- --ignored --nocapture`):
/// registers 50 extensions one after another (policy Always) and reports, from watches on both
/// clusters, ControllerRegistration created → ControllerInstallation created (garden scheduler),
/// ControllerInstallation created → ManagedResource written (agent), and ControllerInstallation
/// created → Installed and Healthy True (agent applier + care, workload simulation on).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "measurement; run with --ignored --nocapture"]
async fn latency_from_registration_to_healthy_installation() {
    use futures::StreamExt;
    use kube::runtime::{WatchStreamExt, watcher};

    const COUNT: usize = 50;
    let clusters = Clusters::start(true).await;
    let shutdown = CancellationToken::new();
    let agent = start_agent(&clusters, shutdown.clone()).await;
    let garden_controller = start_garden(&clusters, shutdown.clone()).await;
    let garden = Garden::new(&clusters.garden.client());
    let seed = SeedCluster::new(&clusters.seed.client());

    let sightings = std::sync::Arc::new(std::sync::Mutex::new(Sightings::default()));
    let watch_installations = {
        let sightings = sightings.clone();
        let mut events = watcher(garden.installations.clone(), watcher::Config::default())
            .applied_objects()
            .boxed();
        tokio::spawn(async move {
            while let Some(Ok(ci)) = events.next().await {
                let now = Instant::now();
                let healthy = ["Installed", "Healthy"].iter().all(|type_| {
                    seedlet_api::conditions::find(ci.conditions(), type_)
                        .is_some_and(seedlet_api::Condition::is_true)
                });
                let mut seen = sightings.lock().expect("sightings");
                seen.installations
                    .entry(ci.spec.registration_ref.name.clone())
                    .or_insert((ci.name_any(), now));
                if healthy {
                    seen.healthy.entry(ci.name_any()).or_insert(now);
                }
            }
        })
    };
    let watch_managed_resources = {
        let sightings = sightings.clone();
        let mut events = watcher(seed.managed_resources.clone(), watcher::Config::default())
            .applied_objects()
            .boxed();
        tokio::spawn(async move {
            while let Some(Ok(mr)) = events.next().await {
                let now = Instant::now();
                sightings
                    .lock()
                    .expect("sightings")
                    .managed_resources
                    .entry(mr.name_any())
                    .or_insert(now);
            }
        })
    };

    // The Seed's own provider type first, so that scheduling does not stop at a missing one.
    garden
        .register(&provider_registration(), CHART, json!({}))
        .await;
    let provider = garden.wait_installation(PROVIDER).await.name_any();
    garden.wait_installed_and_healthy(&provider).await;

    let mut scheduling = Vec::with_capacity(COUNT);
    let mut written = Vec::with_capacity(COUNT);
    let mut healthy = Vec::with_capacity(COUNT);
    for index in 0..COUNT {
        let name = format!("ext-bench-{index:02}");
        let registration = registration(
            &name,
            json!([{"kind": "Extension", "type": name}]),
            json!({"policy": "Always", "deploymentRefs": [{"name": name}]}),
        );
        garden
            .deployments
            .create(&PostParams::default(), &deployment(&name, CHART, json!({})))
            .await
            .expect("create deployment");
        garden
            .registrations
            .create(&PostParams::default(), &registration)
            .await
            .expect("create registration");
        let registered = Instant::now();
        let (created, mr, ready) = wait_for(&format!("{name} healthy"), TIMEOUT, || {
            let seen = sightings.lock().expect("sightings");
            let result = seen.installations.get(&name).and_then(|(ci, created)| {
                Some((
                    *created,
                    *seen.managed_resources.get(ci)?,
                    *seen.healthy.get(ci)?,
                ))
            });
            async move { result }
        })
        .await;
        scheduling.push(created.saturating_duration_since(registered));
        written.push(mr.saturating_duration_since(created));
        healthy.push(ready.saturating_duration_since(created));
    }
    watch_installations.abort();
    watch_managed_resources.abort();

    let scheduled = summary(
        "ControllerRegistration created -> ControllerInstallation created",
        scheduling,
    );
    let written = summary(
        "ControllerInstallation created -> ManagedResource written",
        written,
    );
    let healthy = summary(
        "ControllerInstallation created -> Installed+Healthy",
        healthy,
    );
    // Generous bounds for loaded machines; the goals are reported above.
    for (what, p99) in [
        ("scheduling", scheduled),
        ("managed resource", written),
        ("healthy", healthy),
    ] {
        assert!(p99 < Duration::from_secs(10), "{what} p99 {p99:?}");
    }

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    garden_controller
        .wait()
        .await
        .expect("garden controller stops");
    clusters.shutdown().await;
}
