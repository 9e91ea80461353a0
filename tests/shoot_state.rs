//! End-to-end tests of shoot state on the seed: the Cluster sync (garden Shoot/Seed/CloudProfile
//! → seed Cluster and control-plane namespace) and the ShootState sync (extension state,
//! referenced resources and persisted Secrets → garden ShootState), incl. write batching, drift
//! repair by the snapshot and an agent restart in the middle of a burst. Prints the burst
//! throughput and change → ShootState latency (`--nocapture`).

use seedlet_testkit as common;

use std::time::{Duration, Instant};

use common::{Clusters, SEED, wait_for, wait_until};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{CloudProfile, NamespacedCloudProfile, Seed, Shoot, ShootState};
use seedlet_api::extensions::{Infrastructure, Worker};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use seedlet_testkit::shoot_state as support;

use support::{
    CONTROL_PLANE, PROJECT_NAMESPACE, TIMEOUT, cluster, cluster_where, create, entry_state,
    garden_with_shoot, gardener_entry, infrastructure_n, observe_shoot_state, operation,
    percentile, set_infrastructure_state, shoot_on_seed, start_agent, wait_observed,
};

#[tokio::test]
async fn cluster_follows_shoot_seed_and_cloud_profile_and_goes_after_the_namespace() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    let shutdown = CancellationToken::new();
    let agent = start_agent(&clusters, Duration::from_secs(3600), shutdown.clone()).await;
    garden_with_shoot(&garden, "foo", json!({})).await;

    // The technical ID is written first; the Cluster embeds all three objects in full.
    let created = cluster_where(&seed, CONTROL_PLANE, "cluster created", |_| true).await;
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    let shoot = shoots.get("foo").await.expect("shoot");
    assert_eq!(
        shoot
            .status
            .as_ref()
            .and_then(|s| s.technical_id.as_deref()),
        Some(CONTROL_PLANE)
    );
    assert_eq!(created.spec.shoot["kind"], "Shoot");
    assert_eq!(
        created.spec.shoot["apiVersion"],
        "core.gardener.cloud/v1beta1"
    );
    assert_eq!(created.spec.shoot["status"]["technicalID"], CONTROL_PLANE);
    assert_eq!(created.spec.cloud_profile["kind"], "CloudProfile");
    assert_eq!(created.spec.cloud_profile["spec"]["type"], "local");
    let embedded_seed = created.spec.seed.clone().expect("seed embedded");
    assert_eq!(
        (
            embedded_seed["kind"].as_str(),
            embedded_seed["metadata"]["name"].as_str()
        ),
        (Some("Seed"), Some(SEED))
    );
    assert!(
        created.spec.shoot["metadata"]
            .get("managedFields")
            .is_none()
    );

    // The control-plane namespace carries the labels and annotations of spec §1.6.
    // (The shoot UID arrives with a later status update; the namespace follows it.)
    let namespace: Namespace = wait_for("namespace with shoot uid", TIMEOUT, || async {
        Api::<Namespace>::all(seed.clone())
            .get_opt(CONTROL_PLANE)
            .await
            .expect("get ns")
            .filter(|ns| ns.annotations().contains_key("shoot.gardener.cloud/uid"))
    })
    .await;
    let labels = namespace.metadata.labels.clone().unwrap_or_default();
    for (key, value) in [
        ("gardener.cloud/role", "shoot"),
        ("seed.gardener.cloud/provider", "local"),
        ("shoot.gardener.cloud/provider", "local"),
        ("networking.shoot.gardener.cloud/provider", "calico"),
        ("backup.gardener.cloud/provider", "local"),
        ("pod-security.kubernetes.io/enforce", "privileged"),
        (
            "high-availability-config.resources.gardener.cloud/consider",
            "true",
        ),
    ] {
        assert_eq!(
            labels.get(key).map(String::as_str),
            Some(value),
            "label {key}"
        );
    }
    let annotations = namespace.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        annotations
            .get("shoot.gardener.cloud/uid")
            .map(String::as_str),
        Some("uid-foo")
    );
    assert_eq!(
        annotations
            .get("high-availability-config.resources.gardener.cloud/zones")
            .map(|z| z.split(',').count()),
        Some(1)
    );

    // Hibernation (spec), Seed labels and the CloudProfile reach the Cluster.
    shoots
        .patch(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"hibernation": {"enabled": true}}})),
        )
        .await
        .expect("hibernate");
    cluster_where(&seed, CONTROL_PLANE, "hibernation in cluster", |c| {
        c.spec.shoot["spec"]["hibernation"]["enabled"] == json!(true)
    })
    .await;
    Api::<Seed>::all(garden.clone())
        .patch(
            SEED,
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": {"tier": "one"}}})),
        )
        .await
        .expect("seed labels");
    cluster_where(&seed, CONTROL_PLANE, "seed label in cluster", |c| {
        c.spec
            .seed
            .as_ref()
            .is_some_and(|s| s["metadata"]["labels"]["tier"] == json!("one"))
    })
    .await;
    Api::<CloudProfile>::all(garden.clone())
        .patch(
            "local",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"kubernetes": {"versions": [{"version": "1.34.0"}]}}})),
        )
        .await
        .expect("profile");
    cluster_where(&seed, CONTROL_PLANE, "cloud profile in cluster", |c| {
        c.spec.cloud_profile["spec"]["kubernetes"]["versions"][0]["version"] == json!("1.34.0")
    })
    .await;

    // A Failed (hibernated) shoot keeps its Cluster current, so extensions see Failed.
    shoots
        .patch_status("foo", &PatchParams::default(), &Patch::Merge(&json!({"status": {"lastOperation": operation("Reconcile", "Failed"), "hibernated": true}})))
        .await
        .expect("failed");
    cluster_where(&seed, CONTROL_PLANE, "failed in cluster", |c| {
        c.spec.shoot["status"]["lastOperation"]["state"] == json!("Failed")
            && c.spec.shoot["status"]["hibernated"] == json!(true)
    })
    .await;

    // A legacy technical ID is kept as is; a NamespacedCloudProfile is embedded synthesized.
    create::<NamespacedCloudProfile>(
        Api::namespaced(garden.clone(), PROJECT_NAMESPACE),
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "NamespacedCloudProfile",
            "metadata": {"name": "custom", "namespace": PROJECT_NAMESPACE},
            "spec": {"parent": {"kind": "CloudProfile", "name": "local"}}
        }),
    )
    .await;
    Api::<NamespacedCloudProfile>::namespaced(garden.clone(), PROJECT_NAMESPACE)
        .patch_status(
            "custom",
            &PatchParams::default(),
            &Patch::Merge(
                &json!({"status": {"cloudProfileSpec": {"type": "local", "limits": {"maxNodesTotal": 7}}}}),
            ),
        )
        .await
        .expect("ncp status");
    garden_with_shoot(&garden, "bar", json!({"technicalID": "shoot-dev-bar"})).await;
    shoots
        .patch("bar", &PatchParams::default(), &Patch::Merge(&json!({"spec": {"cloudProfile": {"kind": "NamespacedCloudProfile", "name": "custom"}}})))
        .await
        .expect("ncp ref");
    let legacy = cluster_where(&seed, "shoot-dev-bar", "legacy cluster with ncp", |c| {
        c.spec.cloud_profile["spec"]["limits"]["maxNodesTotal"] == json!(7)
    })
    .await;
    assert_eq!(
        legacy.spec.cloud_profile["metadata"],
        json!({"name": "custom", "namespace": PROJECT_NAMESPACE})
    );
    assert!(cluster(&seed, "shoot--dev--bar").await.is_none());

    // Deletion: the Cluster stays while the namespace terminates and goes once it is gone.
    let namespaces: Api<Namespace> = Api::all(seed.clone());
    namespaces
        .patch(
            CONTROL_PLANE,
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"finalizers": ["test.seedlet/hold"]}})),
        )
        .await
        .expect("hold namespace");
    shoots
        .delete("foo", &DeleteParams::default())
        .await
        .expect("delete shoot");
    wait_until("namespace terminating", TIMEOUT, || async {
        namespaces
            .get_opt(CONTROL_PLANE)
            .await
            .expect("get ns")
            .is_some_and(|ns| ns.metadata.deletion_timestamp.is_some())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        cluster(&seed, CONTROL_PLANE).await.is_some(),
        "cluster must outlive its namespace"
    );
    namespaces
        .patch(
            CONTROL_PLANE,
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("release namespace");
    wait_until("cluster removed", TIMEOUT, || async {
        cluster(&seed, CONTROL_PLANE).await.is_none()
    })
    .await;
    assert!(
        namespaces
            .get_opt(CONTROL_PLANE)
            .await
            .expect("get ns")
            .is_none()
    );
    assert!(
        cluster(&seed, "shoot-dev-bar").await.is_some(),
        "other shoots keep their cluster"
    );

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    clusters.shutdown().await;
}

#[tokio::test]
async fn shoot_state_follows_extension_state_and_persisted_secrets_with_bounded_writes() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    let shutdown = CancellationToken::new();
    let agent = start_agent(&clusters, Duration::from_secs(6 * 3600), shutdown.clone()).await;
    shoot_on_seed(&clusters).await;
    let mut observed = observe_shoot_state(&garden);

    // Infrastructure and Worker state become entries; a referenced ConfigMap is copied.
    create::<Infrastructure>(
        Api::namespaced(seed.clone(), CONTROL_PLANE),
        json!({
            "apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "Infrastructure",
            "metadata": {"name": "foo", "namespace": CONTROL_PLANE}, "spec": {"type": "local"}
        }),
    )
    .await;
    create::<Worker>(
        Api::namespaced(seed.clone(), CONTROL_PLANE),
        json!({
            "apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "Worker",
            "metadata": {"name": "foo", "namespace": CONTROL_PLANE}, "spec": {"type": "local"}
        }),
    )
    .await;
    create::<ConfigMap>(
        Api::namespaced(seed.clone(), CONTROL_PLANE),
        json!({
            "metadata": {"name": "tf", "namespace": CONTROL_PLANE, "labels": {"app": "tf"}},
            "data": {"state": "terraform"}
        }),
    )
    .await;
    set_infrastructure_state(&seed, 0).await;
    Api::<Infrastructure>::namespaced(seed.clone(), CONTROL_PLANE)
        .patch_status("foo", &PatchParams::default(), &Patch::Merge(&json!({"status": {"resources": [
            {"name": "tf", "resourceRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "tf"}}
        ]}})))
        .await
        .expect("resources");
    Api::<Worker>::namespaced(seed.clone(), CONTROL_PLANE)
        .patch_status(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": {"state": {"machines": 3}}})),
        )
        .await
        .expect("worker state");
    let state = wait_observed(&mut observed, "infrastructure, worker and resource", |o| {
        infrastructure_n(o) == Some(0)
            && entry_state(&o.spec, "Worker", "foo") == Some(json!({"machines": 3}))
            && o.spec["resources"].as_array().is_some_and(|r| r.len() == 1)
    })
    .await;
    let resource = &state.spec["resources"][0];
    assert_eq!(
        (resource["kind"].as_str(), resource["name"].as_str()),
        (Some("ConfigMap"), Some("tf"))
    );
    assert_eq!(resource["data"]["data"], json!({"state": "terraform"}));
    assert_eq!(resource["data"]["metadata"]["labels"], json!({"app": "tf"}));
    assert!(resource["data"]["metadata"].get("uid").is_none());
    assert!(
        resource["data"]["metadata"]
            .get("resourceVersion")
            .is_none()
    );

    // Other status changes write nothing.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let writes_before = agent.metrics.shoot_state_writes();
    let seen_before = observed.borrow().writes;
    Api::<Infrastructure>::namespaced(seed.clone(), CONTROL_PLANE)
        .patch_status(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": {
                "lastOperation": operation("Reconcile", "Succeeded"), "observedGeneration": 1,
                "providerStatus": {"vpc": "x"}
            }})),
        )
        .await
        .expect("other status");
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        agent.metrics.shoot_state_writes(),
        writes_before,
        "no write for other status fields"
    );
    assert_eq!(observed.borrow().writes, seen_before);

    // Latency change → ShootState updated: isolated changes (quiet batch window) and
    // back-to-back changes (each one lands in the window of the previous write).
    for (mode, pause) in [
        ("isolated", Duration::from_millis(150)),
        ("back-to-back", Duration::ZERO),
    ] {
        let mut latencies = Vec::new();
        for _ in 0..30 {
            tokio::time::sleep(pause).await;
            let n = infrastructure_n(&observed.borrow()).unwrap_or_default() + 1;
            let started = Instant::now();
            set_infrastructure_state(&seed, n).await;
            wait_observed(&mut observed, "single change", |o| {
                infrastructure_n(o) == Some(n)
            })
            .await;
            latencies.push(started.elapsed());
        }
        latencies.sort();
        let (p50, p99) = (percentile(&latencies, 0.5), percentile(&latencies, 0.99));
        eprintln!(
            "shootstate change->updated latency, {mode}, {} changes: p50 {p50:?}, p99 {p99:?}",
            latencies.len()
        );
        assert!(
            p99 < Duration::from_secs(1),
            "every change within 1s, p99 {p99:?}"
        );
    }

    // A burst of 200 changes (8 in flight) coalesces into few writes and ends in the live state.
    let writes_before = agent.metrics.shoot_state_writes();
    let burst_started = Instant::now();
    futures::stream::iter(1000..1200)
        .for_each_concurrent(8, |n| {
            let seed = seed.clone();
            async move { set_infrastructure_state(&seed, n).await }
        })
        .await;
    let burst_took = burst_started.elapsed();
    let live = Api::<Infrastructure>::namespaced(seed.clone(), CONTROL_PLANE)
        .get("foo")
        .await
        .expect("infrastructure");
    let last = live
        .status
        .and_then(|status| status.state)
        .and_then(|state| state["n"].as_i64())
        .expect("live state");
    wait_observed(&mut observed, "burst final state", |o| {
        infrastructure_n(o) == Some(last)
    })
    .await;
    let settled = burst_started.elapsed();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let burst_writes = agent.metrics.shoot_state_writes() - writes_before;
    eprintln!(
        "shootstate burst: 200 changes in {burst_took:?} ({:.0} changes/s), ShootState final after {settled:?}, {burst_writes} writes",
        200.0 / burst_took.as_secs_f64(),
    );
    let bound = u64::try_from(settled.as_millis() / 100).expect("bound") + 2;
    assert!(
        burst_writes <= bound,
        "{burst_writes} writes > {bound} for {settled:?}"
    );
    assert!(burst_writes < 200);

    // Persisted Secrets: create, update, delete; unlabelled ones are ignored.
    let secrets: Api<Secret> = Api::namespaced(seed.clone(), CONTROL_PLANE);
    create::<Secret>(
        Api::namespaced(seed.clone(), CONTROL_PLANE),
        json!({
            "metadata": {"name": "ca", "namespace": CONTROL_PLANE,
                         "labels": {"persist": "true", "managed-by": "secrets-manager"}},
            "type": "kubernetes.io/tls", "immutable": false,
            "data": {"tls.crt": "Yw==", "tls.key": "aw=="}
        }),
    )
    .await;
    create::<Secret>(
        Api::namespaced(seed.clone(), CONTROL_PLANE),
        json!({
            "metadata": {"name": "plain", "namespace": CONTROL_PLANE}, "data": {"a": "Yg=="}
        }),
    )
    .await;
    let state = wait_observed(&mut observed, "persisted secret", |o| {
        gardener_entry(&o.spec, "ca").is_some()
    })
    .await;
    let entry = gardener_entry(&state.spec, "ca").expect("entry");
    assert_eq!(entry["type"], "secret");
    assert_eq!(entry["labels"]["managed-by"], "secrets-manager");
    assert_eq!(
        entry["data"],
        json!({"data": {"tls.crt": "Yw==", "tls.key": "aw=="}, "immutable": false, "type": "kubernetes.io/tls"})
    );
    assert!(gardener_entry(&state.spec, "plain").is_none());
    secrets
        .patch(
            "ca",
            &PatchParams::default(),
            &Patch::Merge(&json!({"data": {"tls.crt": "ZA=="}})),
        )
        .await
        .expect("update secret");
    wait_observed(&mut observed, "secret update", |o| {
        gardener_entry(&o.spec, "ca").is_some_and(|e| e["data"]["data"]["tls.crt"] == json!("ZA=="))
    })
    .await;
    secrets
        .delete("ca", &DeleteParams::default())
        .await
        .expect("delete secret");
    wait_observed(&mut observed, "secret removed", |o| {
        gardener_entry(&o.spec, "ca").is_none()
    })
    .await;

    // A reference to a missing object holds back only that object's entry, until it exists.
    Api::<Worker>::namespaced(seed.clone(), CONTROL_PLANE)
        .patch_status(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": {"state": {"machines": 4}, "resources": [
                {"name": "machines", "resourceRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "machines"}}
            ]}})),
        )
        .await
        .expect("worker with missing reference");
    tokio::time::sleep(Duration::from_millis(200)).await;
    set_infrastructure_state(&seed, last + 1).await;
    let state = wait_observed(
        &mut observed,
        "infrastructure despite missing reference",
        |o| infrastructure_n(o) == Some(last + 1),
    )
    .await;
    assert_eq!(
        entry_state(&state.spec, "Worker", "foo"),
        Some(json!({"machines": 3}))
    );
    create::<ConfigMap>(
        Api::namespaced(seed.clone(), CONTROL_PLANE),
        json!({"metadata": {"name": "machines", "namespace": CONTROL_PLANE}, "data": {"m": "4"}}),
    )
    .await;
    wait_observed(&mut observed, "worker after its reference exists", |o| {
        entry_state(&o.spec, "Worker", "foo") == Some(json!({"machines": 4}))
            && o.spec["resources"]
                .as_array()
                .is_some_and(|r| r.iter().any(|r| r["name"] == json!("machines")))
    })
    .await;

    // Deleting an extension object removes its entry.
    Api::<Worker>::namespaced(seed.clone(), CONTROL_PLANE)
        .delete("foo", &DeleteParams::default())
        .await
        .expect("delete worker");
    let state = wait_observed(&mut observed, "worker entry removed", |o| {
        entry_state(&o.spec, "Worker", "foo").is_none()
    })
    .await;
    assert_eq!(infrastructure_n(&state), Some(last + 1));
    assert!(gardener_entry(&state.spec, "plain").is_none());

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    clusters.shutdown().await;
}

#[tokio::test]
async fn snapshot_repairs_drift_and_a_restart_mid_burst_loses_nothing() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    let shutdown = CancellationToken::new();
    let first = start_agent(&clusters, Duration::from_secs(2), shutdown.clone()).await;
    shoot_on_seed(&clusters).await;
    let mut observed = observe_shoot_state(&garden);
    create::<Infrastructure>(
        Api::namespaced(seed.clone(), CONTROL_PLANE),
        json!({
            "apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "Infrastructure",
            "metadata": {"name": "foo", "namespace": CONTROL_PLANE}, "spec": {"type": "local"}
        }),
    )
    .await;
    set_infrastructure_state(&seed, 1).await;
    wait_observed(&mut observed, "first state", |o| {
        infrastructure_n(o) == Some(1)
    })
    .await;

    // Hand-edited drift is repaired by the next snapshot, which also stamps its time.
    let states: Api<ShootState> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    states
        .patch(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {
                "extensions": [{"kind": "Infrastructure", "name": "foo", "state": {"n": -1}}],
                "gardener": [{"name": "secret-old", "type": "secret", "data": {"data": {}}}]
            }})),
        )
        .await
        .expect("drift");
    wait_observed(&mut observed, "drift visible", |o| {
        infrastructure_n(o) == Some(-1)
    })
    .await;
    let repaired = wait_observed(&mut observed, "drift repaired", |o| {
        infrastructure_n(o) == Some(1) && gardener_entry(&o.spec, "secret-old").is_none()
    })
    .await;
    assert_eq!(infrastructure_n(&repaired), Some(1));
    let stamped = states.get("foo").await.expect("shootstate");
    assert!(
        stamped
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key("gardener.cloud/timestamp"))
    );

    // Kill the agent in the middle of a burst; changes while it is down are not lost.
    for n in 100..150 {
        set_infrastructure_state(&seed, n).await;
    }
    first.abort();
    for n in 150..200 {
        set_infrastructure_state(&seed, n).await;
    }
    create::<Secret>(
        Api::namespaced(seed.clone(), CONTROL_PLANE),
        json!({
            "metadata": {"name": "late", "namespace": CONTROL_PLANE, "labels": {"persist": "true"}},
            "data": {"k": "dg=="}
        }),
    )
    .await;
    let second = start_agent(&clusters, Duration::from_secs(2), shutdown.clone()).await;
    let state = wait_observed(&mut observed, "state after restart", |o| {
        infrastructure_n(o) == Some(199) && gardener_entry(&o.spec, "late").is_some()
    })
    .await;
    assert_eq!(
        gardener_entry(&state.spec, "late").expect("late")["data"],
        json!({"data": {"k": "dg=="}, "type": "Opaque"})
    );

    shutdown.cancel();
    second.wait().await.expect("agent stops");
    clusters.shutdown().await;
}

#[tokio::test]
async fn shoot_state_finalizer_protects_the_state_during_migration() {
    let clusters = Clusters::start(false).await;
    let garden = clusters.garden.client();
    let shutdown = CancellationToken::new();
    let controller = common::start_garden(&clusters, shutdown.clone()).await;
    garden_with_shoot(&garden, "foo", json!({})).await;
    let states: Api<ShootState> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    create::<ShootState>(
        Api::namespaced(garden.clone(), PROJECT_NAMESPACE),
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "ShootState",
            "metadata": {"name": "foo", "namespace": PROJECT_NAMESPACE}, "spec": {}
        }),
    )
    .await;
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    let has_finalizer = |state: &ShootState| {
        state
            .metadata
            .finalizers
            .as_ref()
            .is_some_and(|f| f.iter().any(|f| f == "core.gardener.cloud/shootstate"))
    };
    let set_operation = |type_: &'static str, state: &'static str| {
        let shoots = shoots.clone();
        async move {
            shoots
                .patch_status(
                    "foo",
                    &PatchParams::default(),
                    &Patch::Merge(&json!({"status": {"lastOperation": operation(type_, state)}})),
                )
                .await
                .expect("operation");
        }
    };
    set_operation("Migrate", "Processing").await;
    wait_until("finalizer added", TIMEOUT, || async {
        has_finalizer(&states.get("foo").await.expect("state"))
    })
    .await;
    set_operation("Restore", "Processing").await;
    set_operation("Restore", "Succeeded").await;
    wait_until("finalizer removed", TIMEOUT, || async {
        !has_finalizer(&states.get("foo").await.expect("state"))
    })
    .await;
    shutdown.cancel();
    controller.wait().await.expect("garden controller stops");
    clusters.shutdown().await;
}

/// `(reconciles, failed reconciles)` of the garden's ShootState finalizer controller so far.
fn finalizer_reconciles(controller: &seedlet_garden::RunningGarden) -> (u64, u64) {
    let text = controller.metrics.encode(jiff::Timestamp::now());
    let value = |name: &str| {
        let prefix = format!("{name}{{controller=\"shootstate-finalizer\"}} ");
        text.lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .map_or(0, |n| n.trim().parse().expect("counter"))
    };
    (
        value("seedlet_reconcile_total"),
        value("seedlet_reconcile_errors_total"),
    )
}

/// Issue #15 items 1 and 2: a shoot without a last operation is a normal state (no failed
/// reconcile), and a ShootState goes with its shoot — also one whose shoot never existed, and
/// one our finalizer protects while the shoot migrates.
#[tokio::test]
async fn shoot_state_goes_with_its_shoot_and_a_shoot_without_operation_is_no_error() {
    let clusters = Clusters::start(false).await;
    let garden = clusters.garden.client();
    let shutdown = CancellationToken::new();
    let controller = common::start_garden(&clusters, shutdown.clone()).await;
    garden_with_shoot(&garden, "foo", json!({})).await;
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    let states: Api<ShootState> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    let state = |name: &str| {
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "ShootState",
            "metadata": {"name": name, "namespace": PROJECT_NAMESPACE}, "spec": {}
        })
    };
    // A shoot that has no operation yet, and its state.
    create::<Shoot>(
        shoots.clone(),
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "fresh", "namespace": PROJECT_NAMESPACE},
            "spec": {"cloudProfile": {"name": "local"}, "provider": {"type": "local"},
                     "region": "local", "networking": {"type": "calico"}}
        }),
    )
    .await;
    create::<ShootState>(states.clone(), state("fresh")).await;
    wait_until("the fresh shoot's state reconciled", TIMEOUT, || async {
        finalizer_reconciles(&controller).0 >= 1
    })
    .await;
    assert_eq!(
        finalizer_reconciles(&controller).1,
        0,
        "no failed reconcile for a shoot without last operation"
    );
    assert!(states.get_opt("fresh").await.expect("get").is_some());

    // A state without any shoot is removed, without an error.
    create::<ShootState>(states.clone(), state("orphan")).await;
    wait_until("orphaned state removed", TIMEOUT, || async {
        states.get_opt("orphan").await.expect("get").is_none()
    })
    .await;

    // A state protected by our finalizer during a migration goes when its shoot is deleted.
    create::<ShootState>(states.clone(), state("foo")).await;
    shoots
        .patch_status(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(
                &json!({"status": {"lastOperation": operation("Migrate", "Processing")}}),
            ),
        )
        .await
        .expect("operation");
    wait_until("finalizer added", TIMEOUT, || async {
        states
            .get("foo")
            .await
            .expect("state")
            .finalizers()
            .iter()
            .any(|f| f == "core.gardener.cloud/shootstate")
    })
    .await;
    shoots
        .delete("foo", &DeleteParams::default())
        .await
        .expect("delete shoot");
    shoots
        .delete("fresh", &DeleteParams::default())
        .await
        .expect("delete shoot");
    wait_until("states of deleted shoots removed", TIMEOUT, || async {
        states.get_opt("foo").await.expect("get").is_none()
            && states.get_opt("fresh").await.expect("get").is_none()
    })
    .await;
    assert_eq!(
        finalizer_reconciles(&controller).1,
        0,
        "no failed reconcile"
    );
    shutdown.cancel();
    controller.wait().await.expect("garden controller stops");
    clusters.shutdown().await;
}
