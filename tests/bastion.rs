//! End-to-end tests of Bastions: the agent's Bastion controller (spec §3.3) with the test playing
//! the extension, and the garden controller's expiry (§6.2/§6.4) with an injected clock.

use seedlet_testkit as common;

use std::sync::Arc;
use std::time::Duration;

use common::{Clusters, SEED, wait_condition_of, wait_for, wait_until};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_api::extensions;
use seedlet_api::operations::Bastion;
use seedlet_runtime::clock::FakeClock;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use seedlet_testkit::backup as support;

use support::{annotation, extension_reports, last_operation};

const TIMEOUT: Duration = Duration::from_secs(20);
const NAMESPACE: &str = "garden-p";
const CONTROL_PLANE: &str = "shoot--p--s";

async fn create_shoot(garden: &kube::Client, name: &str, seed: &str) {
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), NAMESPACE);
    let shoot: Shoot = serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"region": "local", "provider": {"type": "local", "workers": []}, "seedName": seed},
    }))
    .expect("test setup");
    shoots
        .create(&PostParams::default(), &shoot)
        .await
        .expect("test setup");
    let status = json!({"status": {"technicalID": format!("shoot--p--{name}"), "seedName": seed}});
    shoots
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("test setup");
}

async fn create_bastion(garden: &kube::Client, name: &str, shoot: &str) {
    let bastion: Bastion = serde_json::from_value(json!({
        "apiVersion": "operations.gardener.cloud/v1alpha1", "kind": "Bastion",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"shootRef": {"name": shoot}, "seedName": SEED, "providerType": "local",
                 "sshPublicKey": "ssh-ed25519 AAAAC3Nza user@host",
                 "ingress": [{"ipBlock": {"cidr": "192.0.2.0/24"}}]},
    }))
    .expect("test setup");
    Api::<Bastion>::namespaced(garden.clone(), NAMESPACE)
        .create(&PostParams::default(), &bastion)
        .await
        .expect("test setup");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bastion_is_deployed_reported_and_deleted_through_the_extension() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    common::ensure_namespace(&garden, NAMESPACE).await;
    common::ensure_namespace(&seed, CONTROL_PLANE).await;
    let shutdown = CancellationToken::new();
    let agent = common::start_agent(&clusters, shutdown.clone()).await;
    create_shoot(&garden, "s", SEED).await;
    create_bastion(&garden, "b", "s").await;
    let bastions: Api<Bastion> = Api::namespaced(garden.clone(), NAMESPACE);
    let extensions: Api<extensions::Bastion> = Api::namespaced(seed.clone(), CONTROL_PLANE);

    // 1: the extension object in the control-plane namespace; Succeeded → BastionReady True.
    let extension = wait_for("extension bastion", TIMEOUT, || async {
        extensions.get_opt("b").await.unwrap()
    })
    .await;
    assert_eq!(
        annotation(&extension, "gardener.cloud/operation").as_deref(),
        Some("reconcile")
    );
    let spec = serde_json::to_value(&extension.spec).unwrap();
    assert_eq!(spec["type"], "local");
    assert_eq!(
        spec["ingress"],
        json!([{"ipBlock": {"cidr": "192.0.2.0/24"}}])
    );
    assert!(
        spec["userData"]
            .as_str()
            .is_some_and(|data| !data.is_empty())
    );
    assert!(
        bastions
            .get("b")
            .await
            .unwrap()
            .finalizers()
            .iter()
            .any(|f| f == "gardener")
    );
    extension_reports(
        &extensions,
        "b",
        json!({"lastOperation": last_operation("Create", "Succeeded"), "ingress": {"ip": "198.51.100.7"}}),
    )
    .await;
    let ready = ("BastionReady", "True", "SuccessfullyReconciled");
    let message = wait_condition_of(&bastions, "b", ready, Bastion::conditions, TIMEOUT).await;
    assert_eq!(message, "The bastion has been reconciled successfully.");
    let status = bastions.get("b").await.unwrap().status.unwrap();
    assert_eq!(status.ingress, Some(json!({"ip": "198.51.100.7"})));
    assert_eq!(
        status.observed_generation,
        bastions.get("b").await.unwrap().metadata.generation
    );

    // 2: an ingress change patches and re-annotates the extension object.
    let patch = json!({"spec": {"ingress": [{"ipBlock": {"cidr": "203.0.113.0/24"}}]}});
    bastions
        .patch("b", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    wait_until("ingress re-deployed", TIMEOUT, || async {
        let object = extensions.get("b").await.unwrap();
        annotation(&object, "gardener.cloud/operation").as_deref() == Some("reconcile")
            && serde_json::to_value(&object.spec).unwrap()["ingress"]
                == json!([{"ipBlock": {"cidr": "203.0.113.0/24"}}])
    })
    .await;

    // 3: an extension error is reported with the prefix.
    extension_reports(
        &extensions,
        "b",
        json!({"lastOperation": last_operation("Reconcile", "Error"), "lastError": {"description": "no capacity"}}),
    )
    .await;
    let failed = ("BastionReady", "False", "FailedReconciling");
    let message = wait_condition_of(&bastions, "b", failed, Bastion::conditions, TIMEOUT).await;
    assert_eq!(
        message,
        "Error while waiting for Bastion garden-p/b to become ready: error during reconciliation: no capacity"
    );

    // 6: deletion: DeletionInProgress, force-deletion copied, finalizer removed once X is gone.
    let hold = json!({"metadata": {"finalizers": ["test.seedlet/hold"]}});
    extensions
        .patch("b", &PatchParams::default(), &Patch::Merge(&hold))
        .await
        .unwrap();
    let force = json!({"metadata": {"annotations": {"confirmation.gardener.cloud/force-deletion": "true"}}});
    bastions
        .patch("b", &PatchParams::default(), &Patch::Merge(&force))
        .await
        .unwrap();
    bastions
        .delete("b", &DeleteParams::default())
        .await
        .unwrap();
    let deleting = ("BastionReady", "False", "DeletionInProgress");
    let message = wait_condition_of(&bastions, "b", deleting, Bastion::conditions, TIMEOUT).await;
    assert_eq!(message, "The bastion is being deleted.");
    wait_until("force deletion copied", TIMEOUT, || async {
        let object = extensions.get("b").await.unwrap();
        annotation(&object, "confirmation.gardener.cloud/force-deletion").as_deref() == Some("true")
    })
    .await;
    let release = json!({"metadata": {"finalizers": null}});
    extensions
        .patch("b", &PatchParams::default(), &Patch::Merge(&release))
        .await
        .unwrap();
    wait_until("bastion gone", TIMEOUT, || async {
        bastions.get_opt("b").await.unwrap().is_none()
    })
    .await;

    shutdown.cancel();
    agent.wait().await.unwrap();
    clusters.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garden_deletes_expired_overaged_and_orphaned_bastions() {
    let clusters = Clusters::start(false).await;
    let garden = clusters.garden.client();
    common::ensure_namespace(&garden, NAMESPACE).await;
    let clock = Arc::new(FakeClock::new(jiff::Timestamp::now()));
    let config = match seedlet_config::parse(common::GARDEN_CONFIG, "garden.yaml").unwrap() {
        seedlet_config::AnyConfig::GardenController(config) => *config,
        other => panic!("unexpected kind {}", other.kind()),
    };
    let address: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    let stop = CancellationToken::new();
    let controller = seedlet_garden::Garden::new(config, garden.clone())
        .unwrap()
        .with_addresses(address, address)
        .with_leader_election(None)
        .with_clock(clock.clone())
        .start(stop.clone())
        .await
        .unwrap();
    create_shoot(&garden, "s", SEED).await;
    create_shoot(&garden, "t", SEED).await;
    for (name, shoot) in [
        ("expired", "s"),
        ("old", "s"),
        ("orphan", "t"),
        ("moved", "s"),
    ] {
        create_bastion(&garden, name, shoot).await;
    }
    let bastions: Api<Bastion> = Api::namespaced(garden.clone(), NAMESPACE);
    let touch = |cidr: &str| json!({"spec": {"ingress": [{"ipBlock": {"cidr": cidr}}]}});
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        bastions
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .len(),
        4
    );

    // Expired (stale keep-alive): deleted at the expiration.
    let past = (jiff::Timestamp::now() - jiff::SignedDuration::from_secs(60)).to_string();
    bastions
        .patch_status(
            "expired",
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": {"expirationTimestamp": past}})),
        )
        .await
        .unwrap();
    bastions
        .patch(
            "expired",
            &PatchParams::default(),
            &Patch::Merge(&touch("10.0.0.0/8")),
        )
        .await
        .unwrap();
    // Shoot deleted: its bastions go.
    Api::<Shoot>::namespaced(garden.clone(), NAMESPACE)
        .delete("t", &DeleteParams::default())
        .await
        .unwrap();
    // Shoot moved to another seed: the bastion goes.
    let other_seed = json!({"spec": {"seedName": "other"}});
    Api::<Shoot>::namespaced(garden.clone(), NAMESPACE)
        .patch("s", &PatchParams::default(), &Patch::Merge(&other_seed))
        .await
        .unwrap();
    for name in ["expired", "orphan", "moved"] {
        wait_until(name, TIMEOUT, || async {
            bastions.get_opt(name).await.unwrap().is_none()
        })
        .await;
    }
    // (The shoot move also took "old"; recreate one to check the maximum lifetime.)
    let back = json!({"spec": {"seedName": SEED}});
    Api::<Shoot>::namespaced(garden.clone(), NAMESPACE)
        .patch("s", &PatchParams::default(), &Patch::Merge(&back))
        .await
        .unwrap();
    wait_until("old deleted with the move", TIMEOUT, || async {
        bastions.get_opt("old").await.unwrap().is_none()
    })
    .await;
    create_bastion(&garden, "aged", "s").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(bastions.get_opt("aged").await.unwrap().is_some());
    // Older than 24 h (fresh keep-alives do not help): deleted.
    clock.advance(jiff::SignedDuration::from_hours(25));
    bastions
        .patch(
            "aged",
            &PatchParams::default(),
            &Patch::Merge(&touch("10.1.0.0/16")),
        )
        .await
        .unwrap();
    wait_until("aged deleted", TIMEOUT, || async {
        bastions.get_opt("aged").await.unwrap().is_none()
    })
    .await;

    stop.cancel();
    controller.wait().await.unwrap();
    clusters.shutdown().await;
}
