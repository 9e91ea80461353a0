//! End-to-end `managedseedset` in a sandbox garden: replicas are created one at a time from the
//! templates and advanced as their Shoot, ManagedSeed and Seed become ready (the test plays the
//! seed agent and gardenlet by writing their status), failed Shoots are retried up to the limit,
//! scale-in removes the not-ready replica first, and protected replicas are never scaled in.

use seedlet_testkit::shoot_lifecycle;

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_api::seedmanagement::{ManagedSeed, ManagedSeedSet};
use seedlet_garden::controllers::entry::run_alone;
use seedlet_garden::controllers::managedseedset;
use shoot_lifecycle::condition;
use tokio_util::sync::CancellationToken;

const NS: &str = "garden";

fn set(replicas: i32) -> ManagedSeedSet {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "seedmanagement.gardener.cloud/v1alpha1", "kind": "ManagedSeedSet",
        "metadata": {"name": "infra", "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"set": "infra"}},
            "shootTemplate": {
                "metadata": {"labels": {"set": "infra"}},
                "spec": {
                    "region": "local",
                    "provider": {"type": "local", "workers": []},
                    "dns": {"domain": "replica-name.example.com"},
                },
            },
            "template": {
                "metadata": {"labels": {"set": "infra"}},
                "spec": {"gardenlet": {"config": {"seedConfig": {"spec": {"ingress": {"domain": "in.replica-name.example.com"}}}}}},
            },
        },
    }))
    .expect("set")
}

async fn pending(sets: &Api<ManagedSeedSet>) -> Option<(String, String, Option<i32>)> {
    let set = sets.get("infra").await.ok()?;
    let pending = set.status?.pending_replica?;
    Some((pending.name, pending.reason, pending.retries))
}

async fn wait_pending(sets: &Api<ManagedSeedSet>, expected: (&str, &str, Option<i32>)) {
    let wanted = Some((expected.0.to_owned(), expected.1.to_owned(), expected.2));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let found = pending(sets).await;
        if found == wanted {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for pending {expected:?}, last {found:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn shoot_status(client: &kube::Client, name: &str, state: &str) {
    let shoots: Api<Shoot> = Api::namespaced(client.clone(), NS);
    let shoot = shoots.get(name).await.expect("shoot");
    shoots
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"status": {
                "observedGeneration": shoot.metadata.generation,
                "lastOperation": shoot_lifecycle::last_operation("Create", state, jiff::Timestamp::now()),
            }})),
        )
        .await
        .expect("shoot status");
}

/// Plays gardenlet for replica `name`: ManagedSeed registered, Seed ready, Shoot healthy.
async fn make_ready(client: &kube::Client, name: &str) {
    let managed_seeds: Api<ManagedSeed> = Api::namespaced(client.clone(), NS);
    let managed_seed = managed_seeds.get(name).await.expect("managed seed");
    managed_seeds
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"status": {
                "observedGeneration": managed_seed.metadata.generation,
                "conditions": [condition("SeedRegistered", "True")],
            }})),
        )
        .await
        .expect("managed seed status");
    shoot_lifecycle::create_seed(
        client,
        name,
        serde_json::json!({"observedGeneration": 1, "conditions": [
            condition("GardenletReady", "True"),
            condition("SeedSystemComponentsHealthy", "True"),
        ]}),
    )
    .await;
    Api::<seedlet_api::core::Seed>::all(client.clone())
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"labels": {"set": "infra"}}})),
        )
        .await
        .expect("label seed");
    Api::<Shoot>::namespaced(client.clone(), NS)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"labels": {"shoot.gardener.cloud/status": "healthy"}}})),
        )
        .await
        .expect("label shoot");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_come_up_one_at_a_time_are_retried_and_scaled_in() {
    seedlet_testkit::init_test_logging();
    let garden = shoot_lifecycle::garden().await;
    let client = garden.client();
    let sets: Api<ManagedSeedSet> = Api::namespaced(client.clone(), NS);
    let shoots: Api<Shoot> = Api::namespaced(client.clone(), NS);
    sets.create(&PostParams::default(), &set(2))
        .await
        .expect("create set");

    let stop = CancellationToken::new();
    let ctx = Arc::new(managedseedset::ManagedSeedSets {
        client: client.clone(),
        max_shoot_retries: 2,
        sync_period: Duration::from_secs(60),
        clock: Arc::new(seedlet_runtime::clock::SystemClock),
        events: seedlet_runtime::events::Recorder::new(client.clone(), "managedseedset-controller"),
        concurrency: 2,
    });
    let controller = tokio::spawn(run_alone(ctx, client.clone(), stop.clone()));

    // The first replica's Shoot, from the template; the second waits for it.
    wait_pending(&sets, ("infra-0", "ShootReconciling", None)).await;
    let first = shoots.get("infra-0").await.expect("infra-0");
    assert_eq!(first.labels().get("set").map(String::as_str), Some("infra"));
    assert_eq!(
        first.spec.dns.as_ref().and_then(|d| d.domain.as_deref()),
        Some("infra-0.example.com")
    );
    assert_eq!(
        first
            .metadata
            .owner_references
            .as_ref()
            .map(|o| o[0].name.as_str()),
        Some("infra")
    );
    assert!(
        sets.get("infra")
            .await
            .expect("set")
            .finalizers()
            .contains(&"gardener".to_owned())
    );

    // A failed creation is retried up to maxShootRetries (2), then given up.
    for retries in 1..=2 {
        shoot_status(&client, "infra-0", "Failed").await;
        wait_pending(&sets, ("infra-0", "ShootReconciling", Some(retries))).await;
        let shoot = shoots.get("infra-0").await.expect("infra-0");
        assert_eq!(shoot.annotations()["gardener.cloud/operation"], "retry");
        // The agent takes the retry: the operation runs again.
        shoots
            .patch("infra-0", &PatchParams::default(), &Patch::Merge(serde_json::json!({"metadata": {"annotations": {"gardener.cloud/operation": null}}})))
            .await
            .expect("remove retry");
        shoot_status(&client, "infra-0", "Processing").await;
    }
    shoot_status(&client, "infra-0", "Failed").await;
    wait_pending(&sets, ("infra-0", "ShootReconcileFailed", Some(2))).await;

    // It succeeds after all: the ManagedSeed comes, then (ready) the second replica.
    shoot_status(&client, "infra-0", "Succeeded").await;
    wait_pending(&sets, ("infra-0", "ManagedSeedPreparing", None)).await;
    let managed_seed = Api::<ManagedSeed>::namespaced(client.clone(), NS)
        .get("infra-0")
        .await
        .expect("managed seed");
    assert_eq!(managed_seed.shoot_name(), Some("infra-0"));
    assert_eq!(
        managed_seed.spec.gardenlet.as_ref().expect("gardenlet")["config"]["seedConfig"]["spec"]["ingress"]
            ["domain"],
        "in.infra-0.example.com"
    );
    assert!(
        shoots.get_opt("infra-1").await.expect("get").is_none(),
        "one pending replica at a time"
    );
    make_ready(&client, "infra-0").await;
    wait_pending(&sets, ("infra-1", "ShootReconciling", None)).await;
    let status = sets
        .get("infra")
        .await
        .expect("set")
        .status
        .expect("status");
    assert_eq!(status.replicas, 2);
    assert_eq!(status.ready_replicas, Some(1));
    assert_eq!(status.next_replica_number, Some(2));

    // Scale in to one: the not-ready infra-1 goes, infra-0 stays.
    sets.patch(
        "infra",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"replicas": 1}})),
    )
    .await
    .expect("scale in");
    seedlet_testkit::wait_until("infra-1 deleted", Duration::from_secs(10), || async {
        matches!(shoots.get_opt("infra-1").await, Ok(None))
    })
    .await;
    assert!(shoots.get_opt("infra-0").await.expect("get").is_some());
    seedlet_testkit::wait_until("nothing pending", Duration::from_secs(10), || async {
        sets.get("infra").await.is_ok_and(|set| {
            set.status.is_some_and(|s| {
                s.pending_replica.is_none() && s.replicas == 1 && s.ready_replicas == Some(1)
            })
        })
    })
    .await;

    stop.cancel();
    controller.await.expect("controller stops");
    garden.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_replicas_are_not_scaled_in() {
    let garden = shoot_lifecycle::garden().await;
    let client = garden.client();
    let sets: Api<ManagedSeedSet> = Api::namespaced(client.clone(), NS);
    let shoots: Api<Shoot> = Api::namespaced(client.clone(), NS);
    sets.create(&PostParams::default(), &set(1))
        .await
        .expect("create set");
    let stop = CancellationToken::new();
    let ctx = Arc::new(managedseedset::ManagedSeedSets {
        client: client.clone(),
        max_shoot_retries: 3,
        sync_period: Duration::from_secs(60),
        clock: Arc::new(seedlet_runtime::clock::SystemClock),
        events: seedlet_runtime::events::Recorder::new(client.clone(), "managedseedset-controller"),
        concurrency: 2,
    });
    let controller = tokio::spawn(run_alone(ctx, client.clone(), stop.clone()));
    wait_pending(&sets, ("infra-0", "ShootReconciling", None)).await;

    shoots
        .patch(
            "infra-0",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"annotations": {
                "seedmanagement.gardener.cloud/protect-from-deletion": "true",
            }}})),
        )
        .await
        .expect("protect");
    sets.patch(
        "infra",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"replicas": 0}})),
    )
    .await
    .expect("scale in");
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(client.clone(), NS);
    let message =
        seedlet_testkit::wait_for("ReconcileError event", Duration::from_secs(10), || {
            let events = events.clone();
            async move {
                events
                    .list(&Default::default())
                    .await
                    .ok()?
                    .items
                    .into_iter()
                    .find(|e| e.reason.as_deref() == Some("ReconcileError"))
                    .and_then(|e| e.message)
            }
        })
        .await;
    assert_eq!(message, "no deletable replicas found");
    assert!(shoots.get_opt("infra-0").await.expect("get").is_some());

    stop.cancel();
    controller.await.expect("controller stops");
    garden.shutdown().await;
}
